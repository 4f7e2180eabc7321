// The web UI in a real browser (Debian chromium driven by playwright-core), against a running `cairn serve`.
//
// Environment: CAIRN_BASE (the server's base URL), CAIRN_TOKEN (a work token of the local account, for /mcp),
// PLAYWRIGHT_DIR (where `npm install playwright-core` put node_modules), CHROMIUM (the browser binary),
// ARTIFACTS (a folder for screenshots). The workflow `ship` (ai_agent `draft` → human `ask`) must exist globally.
//
// It starts the workflow through /roscoe/mcp, opens the run's `url`, advances the agent step through MCP while the
// page is open and waits for the page to show the human decision without a reload (SSE), clicks the decision,
// sees the run complete, then opens the work board and sees a claim and evidence made through /mcp appear, signs in
// with the token and claims from the board as its principal, and signs out. First it tours the other pages. Every
// page is served with a Content-Security-Policy; Content-Security-Policy violations (the `securitypolicyviolation`
// events of every page, and the console's reports of them) are recorded from the first page on, and any one fails
// the test (an inline script injected on purpose shows the recording works). Every check prints one line; the last
// line is "N passed, 0 failed".

import path from 'node:path';

import { check, finish, launch, recordingContext } from './harness.mjs';

const base = process.env.CAIRN_BASE;
const token = process.env.CAIRN_TOKEN;
const artifacts = process.env.ARTIFACTS;

// Content-Security-Policy violations the pages reported since the last check.
const violations = [];
function noViolations(where) {
  check(violations.length === 0, `no Content-Security-Policy violation on ${where} ${violations.join('; ')}`);
}

// A minimal MCP client over Streamable HTTP: initialize, then tools/call, reading JSON-RPC from the SSE answers.
async function mcp(endpoint, headers = {}) {
  let session = null;
  let id = 0;
  async function post(message) {
    const h = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers };
    if (session) h['mcp-session-id'] = session;
    const response = await fetch(base + endpoint, { method: 'POST', headers: h, body: JSON.stringify(message) });
    if (!response.ok && response.status !== 202) throw new Error(`${endpoint}: HTTP ${response.status} ${await response.text()}`);
    session = response.headers.get('mcp-session-id') ?? session;
    const text = await response.text();
    if (!('id' in message)) return null;
    const lines = (response.headers.get('content-type') ?? '').includes('event-stream')
      ? text.split('\n').filter((l) => l.startsWith('data:')).map((l) => l.slice(5).trim()).filter(Boolean)
      : [text];
    for (const line of lines) {
      const parsed = JSON.parse(line);
      if (parsed.id === message.id) return parsed;
    }
    throw new Error(`${endpoint}: no answer to ${message.method}: ${text}`);
  }
  await post({ jsonrpc: '2.0', id: ++id, method: 'initialize',
    params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'browser-test', version: '1' } } });
  await post({ jsonrpc: '2.0', method: 'notifications/initialized' });
  return async (name, args) => {
    const answer = await post({ jsonrpc: '2.0', id: ++id, method: 'tools/call', params: { name, arguments: args } });
    const result = answer.result;
    if (result.structuredContent) return result.structuredContent;
    return JSON.parse(result.content.map((c) => c.text).join(''));
  };
}

const browser = await launch();
try {
  const context = await recordingContext(browser, violations);
  const page = await context.newPage();
  // The CSP holds on every page, and a violation would be seen.
  const visit = async (url) => {
    const response = await page.goto(url);
    check((response.headers()['content-security-policy'] ?? '').includes("script-src 'self'"), `${url} is served with the CSP`);
  };
  await visit(`${base}/docs`);
  await page.evaluate(() => {
    const inline = document.createElement('script');
    inline.textContent = 'window.inlineRan = true';
    document.head.append(inline);
  });
  for (let i = 0; i < 50 && violations.length === 0; i += 1) await page.waitForTimeout(100);
  check(violations.length > 0 && !(await page.evaluate(() => window.inlineRan)), 'an inline script is refused and the violation recorded');
  violations.length = 0;
  check(await page.evaluate(() => window.htmx.config.includeIndicatorCSS === false), 'htmx injects no stylesheet of its own');
  const slug = await page.locator('main ul a').first().getAttribute('href');
  for (const path of ['/', '/workflows', '/workflows/ship?project=global', '/runs?project=global', slug, '/work',
    '/work/documents', '/signin', '/docs/no-such-page']) {
    await visit(`${base}${path}`);
    noViolations(path);
  }

  const roscoe = await mcp('/roscoe/mcp');

  // Start through MCP; the result's url is the deep link to the run page.
  const started = await roscoe('start_workflow', { global: true, id: 'ship' });
  check(started.status === 'paused' && started.pendingStep?.nodeId === 'draft', 'the run waits at the agent step');
  check(started.url.startsWith(`${base}/open/runs/${started.runId}?project=global`), `the run url names this server: ${started.url}`);
  await page.goto(started.url);
  check(new URL(page.url()).pathname === `/runs/${started.runId}`, '/open/runs/… redirects to the run page');
  await page.locator('#pending').filter({ hasText: 'draft' }).waitFor();
  check(await page.locator('#decision').count() === 0, 'no decision buttons while an agent holds the step');
  const graphNode = (id) => page.locator(`#graph g.gnode[data-node="${id}"]`);
  check(await graphNode('draft').getAttribute('data-status') === 'paused', 'the graph colours the waiting node');
  check((await graphNode('draft').getAttribute('class')).includes('current'), 'and marks it as the current step');
  check(await graphNode('ask').getAttribute('data-status') === 'none', 'a node not run yet has no status');
  check(await page.locator('#graph .terminal-end').count() === 1 && await page.locator('#graph .terminal-fail').count() === 1,
    'the graph shows the terminal targets');
  check(await page.locator('#graph .edge-label', { hasText: 'success' }).count() === 1, 'edges carry their events');
  const fill = await page.locator('#graph g.gnode[data-node="draft"] rect').evaluate((r) => getComputedStyle(r).fill);
  check(fill === 'rgb(255, 243, 205)', `the waiting node is drawn in the paused colour (${fill})`);
  await page.evaluate(() => { window.notReloaded = true; });

  // Advance through MCP while the page is open: it must show the human step by itself.
  const advanced = await roscoe('advance_run', { global: true, run_id: started.runId, node_id: 'draft', response: 'A haiku about cairns' });
  check(advanced.pendingStep?.nodeType === 'human', 'MCP advanced the run to the human step');
  const ship = page.locator('#decision button[value="ship"]');
  await ship.waitFor({ timeout: 20000 });
  check(await page.evaluate(() => window.notReloaded === true), 'the run page updated live, without a reload');
  check(await graphNode('draft').getAttribute('data-status') === 'completed', 'live: the agent step turned completed');
  check(await page.locator('#graph path.edge.taken[data-from="draft"][data-to="ask"]').count() === 1
    && await page.locator('#graph path.edge.taken').count() === 1, 'live: the transition the run took is marked, only it');
  check(await graphNode('ask').getAttribute('data-status') === 'paused'
    && (await graphNode('ask').getAttribute('class')).includes('current'), 'live: the human step is now the current one');
  noViolations('the live run page');
  const buttons = await page.locator('#decision button').evaluateAll((bs) => bs.map((b) => `${b.value}=${b.textContent}`));
  check(JSON.stringify(buttons) === JSON.stringify(['ship=Ship it', 'stop=Stop here']), `one button per transition, labelled: ${buttons}`);
  check(await page.locator('#timeline tr[data-node="draft"]').count() === 1, 'the timeline lists the agent step');
  check(/ago|just now/.test(await page.locator('#timeline tr[data-node="draft"] time').textContent()), 'times read as "… ago"');
  check(/^\d{4}-\d\d-\d\dT/.test(await page.locator('#timeline tr[data-node="draft"] time').getAttribute('title')), 'with the exact time on hover');
  const draftRow = page.locator('#timeline tr[data-node="draft"]');
  check(/^\$\d+\.\d\d/.test(await draftRow.locator('td.cost').textContent()) && /\d+ in · \d+ out/.test(await draftRow.textContent()),
    'the agent step shows its cost and tokens');
  check(/ms|s/.test(await draftRow.locator('td').nth(4).textContent()) && (await draftRow.textContent()).includes('claude-sonnet-4-5'),
    'its duration and model');
  check(/^\$\d+\.\d\d/.test(await page.locator('#total-cost').textContent()), 'and the run its total cost');
  await page.locator('#graph a[href="#node-draft"]').click();
  check(new URL(page.url()).hash === '#node-draft', 'clicking a node leads to its details');
  await page.locator('#node-draft details[open]').first().waitFor();
  check((await page.locator('#node-draft').textContent()).includes('A haiku about cairns'), 'which show its output');
  await page.screenshot({ path: path.join(artifacts, 'run-page.png'), fullPage: true });

  // The person decides in the browser.
  await ship.click();
  await page.locator('#run-status[data-status="completed"]').waitFor();
  check(true, 'clicking the decision completes the run');
  const status = await roscoe('get_run_status', { global: true, run_id: started.runId });
  check(status.status === 'completed', 'MCP sees the run completed');
  check((await page.locator('#node-ask .decided-by').textContent()).includes('decided by'), 'the page says who decided, and when');
  await page.screenshot({ path: path.join(artifacts, 'run-completed.png'), fullPage: true });
  noViolations('the run page after the decision');

  // The work board shows a claim made through /mcp, and item text stays text.
  const work = await mcp('/mcp', { authorization: `Bearer ${token}` });
  const space = await work('decisions_create_space', { name: 'Web UI' });
  const spaceId = space.space?.id ?? space.id;
  const created = await work('work_create', { space_id: spaceId, title: 'Render the <b>board</b>', notes: 'Columns by state.' });
  const itemId = created.item?.id ?? created.id;
  const second = await work('work_create', { space_id: spaceId, title: 'Write the README screenshots' });
  const secondId = second.item?.id ?? second.id;
  await page.goto(`${base}/work`);
  const card = page.locator(`.card[data-item="${itemId}"]`);
  await card.waitFor();
  check(await page.locator(`[data-state="open"] .card[data-item="${itemId}"]`).count() === 1, 'the new item is open');
  check((await card.locator('.title').textContent()).includes('<b>board</b>'), 'item text is escaped, not markup');
  await page.evaluate(() => { window.notReloaded = true; });
  await work('work_claim', { item_id: itemId, claimant: 'claude-worker' });
  await page.locator(`[data-state="claimed"] .card[data-item="${itemId}"]`).waitFor({ timeout: 20000 });
  check((await card.locator('.claimant').textContent()).includes('claude-worker'), 'the board shows who claimed it');
  check(await page.evaluate(() => window.notReloaded === true), 'the board updated without a reload');
  noViolations('the live work board');

  // Evidence recorded through /mcp for a pull request the item links to shows on its card.
  await work('work_update', { item_id: itemId, links: ['https://github.com/acme/web/pull/7'] });
  const commit = 'abc1234def5678abc1234def5678abc1234def56';
  await work('work_record_evidence', { kind: 'merged', repository: 'acme/web', commit, pull_requests: [7] });
  await work('work_record_evidence', { kind: 'rolled', repository: 'acme/web', commit, pull_requests: [7], service: 'production' });
  await card.locator('.evidence li[data-kind="rolled"]').waitFor({ timeout: 20000 });
  check((await card.locator('.evidence li[data-kind="merged"]').textContent()).includes('abc1234def56'), 'the card shows the merge commit');
  check((await card.locator('.evidence .service').textContent()) === 'production', 'and the service it rolled to');
  // Signed in with the token, the board acts as its principal: a claim from the board is theirs.
  await page.goto(`${base}/signin?next=/work`);
  await page.fill('#token', token);
  await page.click('#signin button[type="submit"]');
  await page.waitForURL(`${base}/work`);
  check((await page.locator('#acting').textContent()) === 'claude-worker (agent)', 'signed in, the board acts as the token\'s principal');
  check((await page.locator('#signed-in-as').textContent()) === 'claude-worker (agent)', 'the header names who is signed in');
  const cookie = (await page.context().cookies()).find((c) => c.name === 'cairn_session');
  check(cookie?.httpOnly === true && cookie?.sameSite === 'Strict', 'the sign-in cookie is HttpOnly and SameSite=Strict');
  // The secret is everything after `cairn_<id>_`; it is base64url, so it may itself hold '_'.
  check(!cookie.value.includes(token.split('_').slice(2).join('_')), 'the sign-in cookie does not hold the token');
  await page.locator(`.card[data-item="${secondId}"] form.claim button`).click();
  const claimed = page.locator(`[data-state="claimed"] .card[data-item="${secondId}"]`);
  await claimed.waitFor({ timeout: 20000 });
  check((await claimed.locator('.claimant').textContent()).includes('claude-worker'), 'the claim button claims as the signed-in principal');

  // Block, hand off and finish from the board and the item's page, as the signed-in principal.
  await claimed.locator('button[value="blocked"]').click();
  await page.locator(`[data-state="blocked"] .card[data-item="${secondId}"]`).waitFor({ timeout: 20000 });
  check(true, 'Block moves the card to the blocked column');
  await page.locator(`.card[data-item="${secondId}"] a.handoff`).click();
  await page.waitForURL((url) => url.pathname === `/work/items/${secondId}`);
  const kinds = await page.locator('#history tbody tr').evaluateAll((rows) => rows.map((r) => r.dataset.kind));
  check(JSON.stringify(kinds) === JSON.stringify(['created', 'claimed', 'state_changed']), `the item page shows its history: ${kinds}`);
  check(/ago|just now/.test(await page.locator('#history time').first().textContent()), 'with humanised times');
  await page.fill('#handoff-note', 'Screenshots taken; the README text is left');
  await page.fill('#handoff-to', 'ada');
  await page.click('#handoff button[type="submit"]');
  await page.locator('#item-state[data-state="open"]').waitFor();
  const handedOff = page.locator('#history tr[data-kind="handed_off"]');
  check((await handedOff.locator('.what').textContent()) === 'handed it off to ada'
    && (await handedOff.locator('.note').textContent()).startsWith('Screenshots taken'),
    'a hand-off from the item page reopens it and is in its history, with its note');
  await page.goto(`${base}/work`);
  await card.locator('button[value="done"]').click();
  await page.locator(`[data-state="done"] .card[data-item="${itemId}"]`).waitFor({ timeout: 20000 });
  check(true, 'Finish on the card moves it to done');
  const listed = await work('work_list', { state: 'done' });
  check((listed.items ?? []).some((i) => i.id === itemId && i.done_by), 'the work tools see it done');
  await page.goto(`${base}/work?q=readme`);
  check(await page.locator('.card').count() === 1 && await page.locator(`.card[data-item="${secondId}"]`).count() === 1,
    'the text filter keeps only the matching card');
  const widths = await page.locator('.column').evaluateAll((cs) => cs.map((c) => Math.round(c.getBoundingClientRect().width)));
  check(new Set(widths).size === 1, `the board's columns are even: ${widths}`);
  await page.goto(`${base}/work`);
  await page.screenshot({ path: path.join(artifacts, 'work-board.png'), fullPage: true });

  await page.click('header form.signout button');
  await page.waitForURL(`${base}/signin`);
  check(!(await page.context().cookies()).some((c) => c.name === 'cairn_session'), 'signing out clears the cookie');
} finally {
  await browser.close();
}
noViolations('sign-in, the signed-in board and sign-out');
finish('browser');
