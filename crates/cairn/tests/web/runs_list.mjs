// The runs list and the run page for real use, in Chromium against a running `cairn serve`.
//
// Environment: CAIRN_BASE, ALL_RUNS (every global run's id, newest first: at least 30), SHIP_RUNS (how many of them
// run the workflow `ship`), ECHO_RUN (a run of `echo`: a script printing "green hello" in colour, then a human step,
// started with an input), and PLAYWRIGHT_DIR, CHROMIUM, ARTIFACTS as for browser.mjs.
//
// The first page shows 25 runs with their duration, cost and who started them; "Older runs" shows the rest, with
// no run twice and none left out, and "Newest runs" leads back; a search by workflow name narrows the list. The
// echo run's page shows the script's stdout in a <pre> without escape codes; a decision with a comment shows the
// comment on the timeline; "Run again" starts a new run (its id is printed as `RUN_AGAIN <id>`). No page reports a
// Content-Security-Policy violation.

import path from 'node:path';

import { check, finish, launch, recordingContext } from './harness.mjs';

const base = process.env.CAIRN_BASE;
const all = process.env.ALL_RUNS.split(',');
const shipRuns = Number(process.env.SHIP_RUNS);
const echo = process.env.ECHO_RUN;
const PAGE = 25;

const violations = [];
const browser = await launch();
try {
  const context = await recordingContext(browser, violations);
  const page = await context.newPage();
  const shown = () => page.locator('#runs tbody tr').evaluateAll((rows) => rows.map((r) => r.dataset.run));

  await page.goto(`${base}/runs?project=global`);
  const first = await shown();
  check(all.length >= 30 && first.length === PAGE, `the first page shows ${PAGE} of ${all.length} runs (${first.length})`);
  check(JSON.stringify(first) === JSON.stringify(all.slice(0, PAGE)), 'the newest first');
  const headers = await page.locator('#runs thead th').allTextContents();
  check(['Duration', 'Cost', 'Started by'].every((h) => headers.includes(h)), `with duration, cost and started-by columns: ${headers}`);
  const row = page.locator(`#runs tr[data-run="${first[0]}"]`);
  check(/\d/.test(await row.locator('td.duration').textContent()), 'a run shows how long it took or has taken');
  check(/^\$\d+\.\d\d$/.test(await row.locator('td.cost').textContent()), 'its cost, in dollars and cents');
  check((await row.locator('td.started-by').textContent()).trim() !== '', 'and who started it');
  check(await page.locator('#newest').count() === 0, 'the newest page offers no "Newest runs" link');

  await page.locator('#older').click();
  await page.waitForURL((url) => url.searchParams.has('after'));
  const second = await shown();
  check(second.length === all.length - PAGE, `"Older runs" shows the other ${all.length - PAGE}`);
  check(!second.some((id) => first.includes(id)), 'no run is on both pages');
  check(JSON.stringify([...first, ...second]) === JSON.stringify(all), 'and none is left out, in order');
  check(await page.locator('#older').count() === 0, 'the last page offers no older one');
  await page.locator('#newest').click();
  await page.waitForURL((url) => !url.searchParams.has('after'));
  check(JSON.stringify(await shown()) === JSON.stringify(first), '"Newest runs" leads back to the first page');

  await page.fill('#run-filter input[name="q"]', 'SHIP');
  await page.click('#run-filter button[type="submit"]');
  await page.waitForURL((url) => url.searchParams.get('q') === 'SHIP');
  const found = await shown();
  const names = await page.locator('#runs tbody tr td:nth-child(2)').allTextContents();
  check(found.length === shipRuns && names.every((n) => n.startsWith('ship')),
    `a search by workflow name, case-insensitive, keeps its ${shipRuns} runs (${found.length})`);
  check(await page.locator('#run-filter input[name="q"]').inputValue() === 'SHIP', 'and the box keeps the text');
  await page.screenshot({ path: path.join(process.env.ARTIFACTS, 'runs-list.png'), fullPage: true });

  await page.goto(`${base}/runs/${echo}?project=global`);
  const stdout = page.locator('#timeline tr[data-node="say"] .log pre.stdout');
  check(await stdout.count() === 1, "the script node's log is a <pre>");
  const printed = await stdout.textContent();
  check(printed === 'green hello\n', `its stdout without escape codes: ${JSON.stringify(printed)}`);
  check(!/\u001b|\\u001b|"stdout"/.test(await page.locator('#timeline tr[data-node="say"]').textContent()),
    'no escape codes and no JSON of the output');
  const font = await stdout.evaluate((e) => getComputedStyle(e).fontFamily);
  check(/mono/i.test(font), `in a monospace font (${font})`);
  check((await page.locator('#timeline tr[data-node="say"] .log summary').textContent()).includes('exit 0'), 'with how it ended');

  await page.evaluate(() => { window.notReloaded = true; });
  await page.fill('#decision input[name="comment"]', 'Looks right <to me>');
  await page.locator('#decision button[value="ship"]').click();
  await page.locator('#run-status[data-status="completed"]').waitFor();
  const comment = page.locator('#timeline tr[data-node="ask"] blockquote.comment');
  check((await comment.textContent()) === 'Looks right <to me>', 'the decision\'s comment is on the timeline, as text');

  await page.locator('#run-again button').click();
  await page.waitForURL((url) => url.pathname.startsWith('/runs/') && url.pathname !== `/runs/${echo}`);
  const again = new URL(page.url()).pathname.split('/')[2];
  check(JSON.parse(await page.locator('#run-input').textContent()).greeting === 'hi <there>', '"Run again" starts a run with the same input');
  await page.locator('#timeline tr[data-node="say"] .log pre.stdout').waitFor();
  check(true, 'which ran the script again');
  console.log(`RUN_AGAIN ${again}`);
  check(violations.length === 0, `no Content-Security-Policy violation ${violations.join('; ')}`);
} finally {
  await browser.close();
}
finish('runs_list');
