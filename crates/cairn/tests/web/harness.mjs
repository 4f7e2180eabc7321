// What the browser scripts share: checks that print one line each, Debian's chromium launched the way this machine
// needs, a browser context that records every Content-Security-Policy violation its pages report, and the summary
// line the Rust side reads ("N passed, 0 failed", plus `<name>.ok` in the artifacts folder).

import path from 'node:path';
import fs from 'node:fs';

const { chromium } = await import(path.join(process.env.PLAYWRIGHT_DIR, 'node_modules', 'playwright-core', 'index.mjs'));

let passed = 0;

/** Fails the script with `what` unless `condition` holds; prints one line either way. */
export function check(condition, what) {
  if (!condition) {
    console.log(`FAIL ${what}`);
    throw new Error(what);
  }
  passed += 1;
  console.log(`ok ${what}`);
}

/** Chromium (CHROMIUM) with the flags a machine without a network and a sandbox needs. */
export async function launch() {
  return chromium.launch({
    executablePath: process.env.CHROMIUM,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
      '--disable-component-update', '--disable-sync'],
  });
}

/**
 * A browser context whose pages push every Content-Security-Policy violation they report (as an event or on the
 * console) onto `violations`.
 */
export async function recordingContext(browser, violations) {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  await context.exposeBinding('reportCspViolation', (_source, violation) => { violations.push(violation); });
  await context.addInitScript(() => {
    document.addEventListener('securitypolicyviolation', (e) => {
      window.reportCspViolation(`${e.effectiveDirective} blocked ${e.blockedURI || 'inline code'} (${e.sourceFile}:${e.lineNumber})`);
    });
  });
  context.on('page', (page) => page.on('console', (message) => {
    if (/Content Security Policy/i.test(message.text())) violations.push(`console: ${message.text()}`);
  }));
  return context;
}

/** Writes `<name>.ok` into ARTIFACTS and prints the summary line. */
export function finish(name) {
  fs.writeFileSync(path.join(process.env.ARTIFACTS, `${name}.ok`), `${passed}\n`);
  console.log(`${passed} passed, 0 failed`);
}
