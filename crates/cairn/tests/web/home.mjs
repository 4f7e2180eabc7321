// The home page's inbox in a real browser: runs waiting for a person in two workspaces (Global and a project) are
// both listed with their prompt and labelled choices; answering one from the inbox decides that run and brings the
// person back to the inbox, where it is gone and the other still waits.
//
// Environment: CAIRN_BASE, GLOBAL_RUN and PROJECT_RUN (the two waiting runs), PLAYWRIGHT_DIR, CHROMIUM, ARTIFACTS as for
// browser.mjs (harness.mjs). Every check prints one line; the last line is "N passed, 0 failed".

import path from 'node:path';

import { check, finish, launch, recordingContext } from './harness.mjs';

const base = process.env.CAIRN_BASE;
const globalRun = process.env.GLOBAL_RUN;
const projectRun = process.env.PROJECT_RUN;

const violations = [];
const browser = await launch();
try {
  const context = await recordingContext(browser, violations);
  const page = await context.newPage();
  await page.goto(`${base}/`);
  const row = (id) => page.locator(`#inbox [data-run="${id}"]`);
  check(await row(globalRun).count() === 1, 'the inbox lists the Global run waiting for a person');
  check(await row(projectRun).count() === 1, 'and the project run, though the server started in Global');
  check((await row(projectRun).textContent()).includes('Go?'), 'with the step\'s prompt');
  const labels = await row(projectRun).locator('button').evaluateAll((bs) => bs.map((b) => `${b.value}=${b.textContent}`));
  check(JSON.stringify(labels) === JSON.stringify(['ship=Ship it', 'stop=stop']), `and its choices, labelled: ${labels}`);
  check(await row(projectRun).locator(`a[href^="/runs/${projectRun}?project="]`).count() === 1, 'the row links to the run page');
  await page.screenshot({ path: path.join(process.env.ARTIFACTS, 'home-inbox.png'), fullPage: true });
  await row(projectRun).locator('button[value="ship"]').click();
  await page.waitForURL((url) => url.pathname === '/');
  check(await row(projectRun).count() === 0, 'answered from the inbox, the run leaves it');
  check(await row(globalRun).count() === 1, 'the other run still waits');
  check(violations.length === 0, `no Content-Security-Policy violation ${violations.join('; ')}`);
} finally {
  await browser.close();
}
finish('home');
