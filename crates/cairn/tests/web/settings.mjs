// The settings page in a real browser, on a server that needs a sign-in: an account owner signs in, sees the
// effective roscoe.yaml and the server's endpoints, creates a token (its secret shown once) and revokes another.
//
// Environment: CAIRN_BASE, OWNER_TOKEN (a person's token; the person owns the local account), VICTIM_ID (the id of
// another token of that account, to revoke), PLAYWRIGHT_DIR, CHROMIUM, ARTIFACTS as for browser.mjs (harness.mjs).
// Every check prints one line; the last line is "N passed, 0 failed".

import path from 'node:path';

import { check, finish, launch, recordingContext } from './harness.mjs';

const base = process.env.CAIRN_BASE;
const victim = process.env.VICTIM_ID;

const violations = [];
const browser = await launch();
try {
  const page = await (await recordingContext(browser, violations)).newPage();
  await page.goto(`${base}/signin?next=/settings`);
  await page.fill('#token', process.env.OWNER_TOKEN);
  await page.click('#signin button[type="submit"]');
  await page.waitForURL((url) => url.pathname === '/settings');
  check((await page.locator('#default-model').textContent()) === 'claude-haiku-4-5', 'the default model of roscoe.yaml');
  check((await page.locator('#models-from').textContent()).endsWith('roscoe.yaml'), 'and the file it comes from');
  check((await page.locator('#prices').textContent()).includes('$3.00'), 'the prices in force');
  check((await page.locator('#prices').textContent()).includes('claude-sonnet-4-5'), 'with the built-in prices runs are charged by');
  check((await page.locator('#pricing-from').textContent()).startsWith('the built-in prices, then '), 'and where the prices come from');
  check((await page.locator('#endpoints').textContent()).includes(`${base}/roscoe/mcp`), 'the server\'s endpoints');
  const row = page.locator(`tr[data-token="${victim}"]`);
  check(await row.count() === 1, 'the owner sees the account\'s tokens');
  await page.fill('.new-token input[name="principal"]', 'nightly-bot');
  await page.click('.new-token button[type="submit"]');
  const secret = (await page.locator('#new-token-value').textContent()).trim();
  check(/^cairn_[0-9a-z]{26}_/i.test(secret), 'a new token is shown once');
  process.stdout.write(`NEW_TOKEN ${secret}\n`);
  await page.goto(`${base}/settings`);
  check(await page.locator('#new-token-value').count() === 0, 'and not again');
  await page.locator(`tr[data-token="${victim}"] button`).click();
  await page.locator(`tr[data-token="${victim}"].revoked`).waitFor();
  check(true, 'Revoke marks the token revoked');
  await page.screenshot({ path: path.join(process.env.ARTIFACTS, 'settings.png'), fullPage: true });
} finally {
  await browser.close();
}
check(violations.length === 0, `no Content-Security-Policy violation ${violations.join('; ')}`);
finish('settings');
