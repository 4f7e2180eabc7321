// A person decides a run in a real browser on a server that needs a sign-in (Debian chromium driven by
// playwright-core), and the decision is recorded as theirs.
//
// Environment: CAIRN_BASE (the server's base URL), RUN_PATH (the run page's path and query, the run waiting at its
// human step), PERSON_TOKEN (a person's token holding roscoe:run), PERSON (how the server names that person),
// PLAYWRIGHT_DIR, CHROMIUM, ARTIFACTS as for browser.mjs (harness.mjs). Every check prints one line; the last line is
// "N passed, 0 failed".

import path from 'node:path';

import { check, finish, launch, recordingContext } from './harness.mjs';

const base = process.env.CAIRN_BASE;
const runPath = process.env.RUN_PATH;
const person = process.env.PERSON;
const artifacts = process.env.ARTIFACTS;

const violations = [];
const browser = await launch();
try {
  const page = await (await recordingContext(browser, violations)).newPage();
  await page.goto(base + runPath);
  check(new URL(page.url()).pathname === '/signin', 'the run page asks for a sign-in first');
  await page.fill('#token', process.env.PERSON_TOKEN);
  await page.click('#signin button[type="submit"]');
  await page.waitForURL((url) => url.pathname + url.search === runPath);
  check(true, 'after signing in, the browser is back on the run page');
  check((await page.locator('#signed-in-as').textContent()) === person, `the header names ${person}`);
  const ship = page.locator('#decision button[value="ship"]');
  await ship.waitFor();
  await ship.click();
  await page.locator('#run-status[data-status="completed"]').waitFor();
  check(true, 'the decision completes the run');
  const decided = await page.locator('#timeline tr[data-node="ask"] .decided-by').textContent();
  check(decided.includes(person), `the timeline says who decided: ${decided.trim()}`);
  const row = page.locator('#actions tr[data-action="decide"]');
  check((await row.textContent()).includes(person), 'who did what lists the decision with its person');
  await page.screenshot({ path: path.join(artifacts, 'run-decided-signed-in.png'), fullPage: true });
} finally {
  await browser.close();
}
check(violations.length === 0, `no Content-Security-Policy violation ${violations.join('; ')}`);
finish('decide');
