#!/usr/bin/env bash
# Supply-chain checks of the dependency tree with cargo-deny and deny.toml (docs/security.md, "Supply chain").
#
# Licences, banned crates and sources are checked offline, always, and any finding fails. RustSec advisories need
# the advisory database, a git repository on GitHub: when it can be fetched, any advisory (or yanked crate) fails;
# when it cannot (CI machines reach package registries only), the output says plainly that advisories were NOT
# checked, and the script goes on.
#
# cargo-deny is built from crates.io (--locked) into target/tools the first time; a cargo-deny of the same version
# already on PATH is used as it is.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

version=0.20.2
export PATH="$PWD/target/tools/bin:$PATH"
if [[ $(cargo-deny --version 2>/dev/null) != "cargo-deny $version" ]]; then
  echo "building cargo-deny $version from crates.io into target/tools (once; a few minutes)"
  log=target/tools/install.log
  mkdir -p target/tools
  if ! cargo install "cargo-deny@$version" --locked --root target/tools --target-dir target/tools/build > "$log" 2>&1; then
    tail -n 40 "$log"
    exit 1
  fi
fi
cargo-deny --version

cargo deny --locked --offline check bans licenses sources

if cargo deny --locked fetch db; then
  cargo deny --locked --offline check advisories
else
  echo "advisories: NOT CHECKED: the RustSec advisory database (a git repository on GitHub) cannot be fetched from" \
    "this machine; see docs/security.md, \"Supply chain\", for when the tree was last checked"
fi
