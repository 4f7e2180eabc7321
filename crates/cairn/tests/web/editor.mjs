// The workflow editor in a real browser: CodeMirror with line numbers over the workflow's YAML; an edit that names an
// unknown model is marked on its own line as you type (a lint warning from the server's lint), an unknown target as
// an error on its line, the graph preview follows the text, saving writes the file through update_workflow, a save
// over a file changed since the page read it is refused, and a new workflow is created from the template.
//
// Environment: CAIRN_BASE, PLAYWRIGHT_DIR, CHROMIUM, ARTIFACTS as for browser.mjs (harness.mjs); the global workflow
// `ship` exists. Every check prints one line; the last line is "N passed, 0 failed".

import path from 'node:path';

import { check, finish, launch, recordingContext } from './harness.mjs';

const base = process.env.CAIRN_BASE;

const violations = [];
const browser = await launch();
try {
  const page = await (await recordingContext(browser, violations)).newPage();
  await page.goto(`${base}/workflows/ship?project=global`);
  await page.click('#edit');
  await page.locator('.CodeMirror').waitFor();
  check(await page.locator('.CodeMirror-linenumber').count() > 5, 'the YAML is in CodeMirror with line numbers');
  check(await page.locator('.cm-atom, .cm-string, .cm-meta, .cm-keyword').count() > 0, 'highlighted as YAML');
  check(await page.locator('#findings .finding.error').count() === 0, 'the saved workflow has no error');

  // Replace a line the way typing does, through CodeMirror's document.
  const edit = (from, to) => page.evaluate(([a, b]) => {
    const cm = window.workflowEditor;
    const text = cm.getValue();
    const at = text.indexOf(a);
    cm.replaceRange(b, cm.posFromIndex(at), cm.posFromIndex(at + a.length));
    return text.slice(0, at).split('\n').length;
  }, [from, to]);
  const modelLine = await edit('prompt: Write a haiku', 'prompt: Write a haiku, model: gpt-nowhere');
  const warning = page.locator(`.finding-marker.warning[data-line="${modelLine}"]`);
  await warning.waitFor({ timeout: 20000 });
  check(true, `the unknown model is marked on line ${modelLine}, where it is`);
  check((await page.locator(`#findings [data-code="unknown_model"]`).getAttribute('data-line')) === String(modelLine),
    'and listed with that line');
  const markerRow = await warning.evaluate((m) => m.closest('.CodeMirror-gutter-wrapper').parentElement.querySelector('.CodeMirror-linenumber').textContent);
  check(markerRow === String(modelLine), `the marker sits in the gutter of line ${markerRow}`);
  const targetLine = await edit('ship: $end', 'ship: nowhere');
  await page.locator(`.finding-marker.error[data-line="${targetLine}"]`).waitFor({ timeout: 20000 });
  check(true, `an unknown target is an error on line ${targetLine}`);
  await page.screenshot({ path: path.join(process.env.ARTIFACTS, 'editor.png'), fullPage: true });
  await edit('ship: nowhere', 'ship: $end');
  await edit('model: gpt-nowhere', 'model: claude-haiku-4-5');
  await page.locator('#findings .finding').first().waitFor({ state: 'detached', timeout: 20000 });
  check(await page.locator('#graph g.gnode[data-node="draft"]').count() === 1, 'the graph preview is drawn beside it');
  await Promise.all([page.waitForNavigation(), page.click('#editor button[type="submit"]')]);
  check(new URL(page.url()).pathname === '/workflows/ship', `Save leads back to the workflow: ${page.url()}`);
  check((await page.locator('pre').last().textContent()).includes('model: claude-haiku-4-5'), 'Save writes the file');

  // A save over a file changed since the page read it is refused and changes nothing.
  await page.click('#edit');
  await page.locator('.CodeMirror').waitFor();
  const current = await (await fetch(`${base}/api/workflows/ship?project=global`)).json();
  const changed = await fetch(`${base}/api/workflows/ship?project=global`, {
    method: 'PUT', headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ yaml: current.yaml.replace('Write a haiku', 'Write a sonnet') }),
  });
  check(changed.ok, `someone else saves meanwhile (${changed.status})`);
  await edit('label: Draft', 'label: Drafting');
  await page.click('#editor button[type="submit"]');
  check((await page.locator('main').textContent()).includes('changed since it was opened'), 'the stale save is refused');
  const after = await (await fetch(`${base}/api/workflows/ship?project=global`)).json();
  check(after.yaml.includes('Write a sonnet') && !after.yaml.includes('Drafting'), 'and the other save stands');

  // New workflow from the template.
  await page.goto(`${base}/workflows/new?project=global`);
  await page.locator('.CodeMirror').waitFor();
  await edit('name: my-workflow', 'name: from-template');
  await Promise.all([page.waitForNavigation(), page.click('#editor button[type="submit"]')]);
  check(new URL(page.url()).pathname === '/workflows/from-template', `Create leads to the new workflow: ${page.url()} ${(await page.locator('body').innerText()).slice(0, 800)}`);
  check(await page.locator('#graph g.gnode[data-node="review"]').count() === 1, 'a new workflow is created from the template');
} finally {
  await browser.close();
}
check(violations.length === 0, `no Content-Security-Policy violation ${violations.join('; ')}`);
finish('editor');
