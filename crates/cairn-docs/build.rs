//! Rebuilds the crate when the embedded documentation corpus (`docs/roscoe/` at the workspace root) changes.

fn main() {
    println!("cargo:rerun-if-changed=../../docs/roscoe");
}
