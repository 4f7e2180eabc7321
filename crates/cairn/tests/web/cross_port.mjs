// A page served from another port of the same loopback host attacks a browser signed in to cairn (Debian chromium
// driven by playwright-core): it cancels a run with `fetch(…, {mode: 'no-cors'})`, and, with the cookie and form
// token a process of the host read from /signin (the cookie planted from the page: cookies ignore ports), posts the
// decision of a human step. Both are refused; a decision made on cairn's own page by the same browser goes through.
//
// Environment: CAIRN_BASE, RUN_CANCEL (a paused run the page tries to cancel), RUN_DECIDE (one whose step it tries to
// approve), RUN_CONTROL (one the person decides on cairn's page), PERSON_TOKEN (a person's token holding roscoe:run),
// PERSON (how the server names that person), PLAYWRIGHT_DIR, CHROMIUM, ARTIFACTS as for browser.mjs (harness.mjs).
// Every check prints one line; the last line is "N passed, 0 failed".

import http from 'node:http';

import { check, finish, launch } from './harness.mjs';

const base = process.env.CAIRN_BASE;
const cancelUrl = `${base}/api/runs/${process.env.RUN_CANCEL}/cancel?project=global`;
const decideUrl = `${base}/runs/${process.env.RUN_DECIDE}/resume?project=global`;

// What any process of the host can read from the sign-in page: the cookies it sets and its form token.
const signin = await fetch(`${base}/signin`);
const planted = signin.headers.getSetCookie().map((c) => c.split(';')[0]);
const token = /name="csrf" value="([0-9a-f]{64})"/.exec(await signin.text())[1];

const attack = `<!doctype html><title>loading</title>
<form id="decide" method="POST" action="${decideUrl}">
  <input name="csrf" value="${token}"><input name="transition" value="ship"><input name="node_id" value="ask">
  <button id="go" type="submit">go</button>
</form>
<script>
  for (const cookie of ${JSON.stringify(planted)}) document.cookie = cookie + '; path=/runs';
  fetch(${JSON.stringify(cancelUrl)}, { method: 'POST', mode: 'no-cors', credentials: 'include' })
    .finally(() => { document.title = 'sent'; });
</script>`;
const evil = http.createServer((_request, response) => {
  response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
  response.end(attack);
});
await new Promise((resolve) => evil.listen(0, '127.0.0.1', resolve));
const evilBase = `http://127.0.0.1:${evil.address().port}`;
check(evilBase !== new URL(base).origin, `the page is served from another port (${evilBase})`);

const browser = await launch();
try {
  const context = await browser.newContext();
  const page = await context.newPage();
  await page.goto(`${base}/signin`);
  await page.fill('#token', process.env.PERSON_TOKEN);
  await page.click('#signin button[type="submit"]');
  await page.waitForURL((url) => url.pathname === '/');
  check((await page.locator('#signed-in-as').textContent()) === process.env.PERSON, 'the browser is signed in');

  const other = await context.newPage();
  // The answer to a no-cors request is opaque to the page (and blocked outright by Cross-Origin-Resource-Policy):
  // the Rust side asks the REST API whether the run was cancelled.
  const cancelSent = new Promise((resolve) => {
    const ended = (request) => { if (request.url() === cancelUrl) resolve(request.method()); };
    other.on('requestfinished', ended);
    other.on('requestfailed', ended);
  });
  await other.goto(`${evilBase}/`);
  check((await cancelSent) === 'POST', 'the other port\'s page sent its no-cors cancel');
  await other.waitForFunction(() => document.title === 'sent');
  const decided = other.waitForResponse((r) => r.url() === decideUrl);
  await other.click('#go');
  const decision = await decided;
  check(decision.status() === 403, `the planted form token's decision is refused (${decision.status()})`);

  // The same browser on cairn's own page.
  await page.goto(`${base}/runs/${process.env.RUN_CONTROL}?project=global`);
  await page.locator('#decision button[value="ship"]').click();
  await page.locator('#run-status[data-status="completed"]').waitFor();
  check(true, 'a decision on cairn\'s own page goes through');
} finally {
  await browser.close();
  evil.close();
}
finish('cross-port');
