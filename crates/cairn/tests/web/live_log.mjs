// A running script's log in Chromium against a running `cairn serve`: the run page shows what the script has
// printed so far while it runs and follows it (htmx fetches the log fragment again every second, under the page's
// Content-Security-Policy), then shows the script's whole stored log once it ended, and stops fetching.
//
// Environment: CAIRN_BASE, LIVE_RUN (a global run of `live`, whose script prints "first", waits until the file GATE
// exists, then prints "second"), GATE, and PLAYWRIGHT_DIR, CHROMIUM, ARTIFACTS as for browser.mjs.

import fs from 'node:fs';
import path from 'node:path';

import { check, finish, launch, recordingContext } from './harness.mjs';

const base = process.env.CAIRN_BASE;
const run = process.env.LIVE_RUN;
const MINUTE = 60000;

const violations = [];
const browser = await launch();
try {
  const context = await recordingContext(browser, violations);
  const page = await context.newPage();
  await page.goto(`${base}/runs/${run}?project=global`);
  await page.waitForFunction(
    () => document.querySelector('#timeline .log.running pre.stdout')?.textContent.includes('first'),
    null, { timeout: MINUTE });
  const live = await page.locator('#timeline .log.running').textContent();
  check(live.includes('first') && !live.includes('second'), 'while the script runs, its log shows what it printed so far');
  await page.screenshot({ path: path.join(process.env.ARTIFACTS, 'live-log.png'), fullPage: true });

  fs.writeFileSync(process.env.GATE, '');
  await page.waitForFunction(
    () => document.querySelector('#timeline details.log pre.stdout')?.textContent.includes('second'),
    null, { timeout: MINUTE });
  check(await page.locator('#timeline .log.running').count() === 0, 'once it ended, the stored log replaces the live one');
  const stored = await page.locator('#timeline details.log pre.stdout').textContent();
  check(stored === 'first\nsecond\n', `with both lines (${JSON.stringify(stored)})`);
  check(violations.length === 0, `no Content-Security-Policy violation ${violations.join('; ')}`);
} finally {
  await browser.close();
}
finish('live_log');
