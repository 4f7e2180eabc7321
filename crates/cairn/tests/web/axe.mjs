// Every page of the UI in a real browser, at 1280 and at 700 px wide: axe-core (npm, installed under target/ by
// .ci/web-tools.sh) reports no serious or critical accessibility violation; at 700 px no page is wider than the
// window (wide tables and the board scroll inside their own boxes); and pressing Tab reaches every visible link,
// button and field of the page.
//
// The pages are found by following every same-server link from `/` (at most MAX_PAGES, docs pages included).
// Environment: CAIRN_BASE, PLAYWRIGHT_DIR, CHROMIUM, ARTIFACTS as for browser.mjs (harness.mjs). Every check prints
// one line; the last line is "N passed, 0 failed".

import fs from 'node:fs';
import path from 'node:path';

import { check, finish, launch } from './harness.mjs';

const base = process.env.CAIRN_BASE;
const axeSource = fs.readFileSync(path.join(process.env.PLAYWRIGHT_DIR, 'node_modules', 'axe-core', 'axe.min.js'), 'utf8');
const MAX_PAGES = 120;

const browser = await launch();
try {
  // axe is injected by the test, so this context lets it past the pages' Content-Security-Policy.
  const context = await browser.newContext({ bypassCSP: true, viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  const seen = new Set(['/']);
  const queue = ['/'];
  const pages = [];
  while (queue.length > 0 && pages.length < MAX_PAGES) {
    const next = queue.shift();
    const response = await page.goto(base + next);
    if (!(response.headers()['content-type'] ?? '').startsWith('text/html')) continue;
    pages.push(next);
    const links = await page.locator('a[href]').evaluateAll((as) => as.map((a) => new URL(a.getAttribute('href'), document.baseURI).href));
    for (const link of links) {
      const url = new URL(link);
      const key = url.pathname + url.search;
      if (url.origin === base && !seen.has(key) && !url.pathname.startsWith('/assets/')) {
        seen.add(key);
        queue.push(key);
      }
    }
  }
  check(pages.length > 30, `found ${pages.length} pages`);
  // Every finding, so one run shows them all.
  const problems = [];
  const expect = (ok, what) => { if (!ok) problems.push(what); };
  for (const width of [1280, 700]) {
    await page.setViewportSize({ width, height: 900 });
    for (const where of pages) {
      await page.goto(base + where);
      await page.evaluate(axeSource);
      const result = await page.evaluate(() => window.axe.run(document, { resultTypes: ['violations'] }));
      const bad = result.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
      const said = bad.map((v) => `${v.id}: ${v.nodes.slice(0, 3).map((n) => n.target.join(' ')).join(', ')}`).join('; ');
      expect(bad.length === 0, `${where} at ${width} px: axe ${said}`);
      if (width === 700) {
        const wide = await page.evaluate(() => document.documentElement.scrollWidth);
        expect(wide <= 700, `${where} is ${wide} px wide at 700 px`);
        continue;
      }
      // Tab through the page: every visible link, button and field takes the focus.
      const wanted = await page.evaluate(() => {
        const all = [...document.querySelectorAll('a[href], button, input:not([type=hidden]), select, textarea')];
        const visible = all.filter((el) => el.getClientRects().length > 0 && getComputedStyle(el).visibility !== 'hidden');
        visible.forEach((el, i) => { el.dataset.tabCheck = String(i); });
        return visible.length;
      });
      const reached = new Set();
      await page.evaluate(() => document.activeElement?.blur());
      for (let i = 0; i < wanted + 40 && reached.size < wanted; i += 1) {
        await page.keyboard.press('Tab');
        const at = await page.evaluate(() => document.activeElement?.dataset?.tabCheck ?? null);
        if (at !== null) reached.add(at);
      }
      expect(reached.size === wanted, `${where}: Tab reaches ${reached.size} of ${wanted} links, buttons and fields`);
    }
    check(true, `every page checked at ${width} px`);
  }
  check(problems.length === 0, `no serious or critical axe violation, no page wider than 700 px, every control reached by Tab:\n${problems.join('\n')}`);
} finally {
  await browser.close();
}
finish('axe');
