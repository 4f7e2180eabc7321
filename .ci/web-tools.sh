#!/usr/bin/env bash
# Installs what the web UI's browser test (crates/cairn/tests/web/browser.rs) needs: Debian's chromium and the npm
# packages playwright-core and axe-core (the accessibility checker, used by tests only) under target/web-test (never a
# browser download of playwright's own).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

if [[ ! -x /usr/bin/chromium ]]; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends chromium > /dev/null
fi
/usr/bin/chromium --version

dir=target/web-test
if [[ ! -d $dir/node_modules/playwright-core ]]; then
  mkdir -p "$dir"
  npm install --prefix "$dir" --no-audit --no-fund --silent playwright-core@1.65.1
fi
if [[ ! -d $dir/node_modules/axe-core ]]; then
  npm install --prefix "$dir" --no-audit --no-fund --silent axe-core@4.14.1
fi
echo "playwright-core $(node -p "require('./$dir/node_modules/playwright-core/package.json').version")"
echo "axe-core $(node -p "require('./$dir/node_modules/axe-core/package.json').version")"
