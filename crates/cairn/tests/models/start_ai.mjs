// The web UI's "Start a run" on an AI workflow, in a real browser (Debian chromium driven by playwright-core), on a
// server whose Anthropic provider is a stand-in: the run page follows the server's own model calls live (SSE) to
// the end and shows what they cost.
//
// Environment: CAIRN_BASE (the server's base URL), PLAYWRIGHT_DIR, CHROMIUM, ARTIFACTS as for the web tests
// (../web/harness.mjs). The global workflow `think` (an ai_agent, then a 3-agent consensus) must exist. Every check
// prints one line; the last line is "N passed, 0 failed".

import path from 'node:path';

import { check, finish, launch, recordingContext } from '../web/harness.mjs';

const base = process.env.CAIRN_BASE;
const artifacts = process.env.ARTIFACTS;

const violations = [];
const browser = await launch();
try {
  const page = await (await recordingContext(browser, violations)).newPage();
  await page.goto(`${base}/workflows/think?project=global&source=global`);
  await page.click('button:has-text("Start a run")');
  await page.waitForURL((url) => url.pathname.startsWith('/runs/'));
  check(true, 'starting the workflow opens its run page');
  await page.locator('#run-status[data-status="completed"]').waitFor({ timeout: 60000 });
  check(true, 'the page follows the server-run AI steps to the end');
  const cost = await page.locator('#run-cost').textContent();
  check(cost.includes('metered') && cost.includes('$0.00'), `the page shows the run's model spend: ${cost}`);
  const vote = await page.locator('#timeline tr[data-node="vote"] .calls').textContent();
  check(vote.includes('claude-sonnet-4-5 · 4 call(s)'), `the consensus row shows its three agents' and its aggregate's calls: ${vote.trim()}`);
  await page.screenshot({ path: path.join(artifacts, 'run-server-executed.png'), fullPage: true });
} finally {
  await browser.close();
}
check(violations.length === 0, `no Content-Security-Policy violation ${violations.join('; ')}`);
finish('start_ai');
