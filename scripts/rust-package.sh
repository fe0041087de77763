#!/bin/sh
# SPDX-License-Identifier: MIT
#
# scripts/rust-package.sh [CARGO [FLAGS...]] - package the Rust crates as a registry takes them:
# copy libxcall's C sources (src/, include/, LICENSE) into xcall-sys/csrc/, which the crate's
# build script reads where the repository's own are absent (ignored by git, carried by the
# package's `include`), then `cargo package --workspace`, which builds each packaged crate
# alone, outside the repository, as a user's build would. FLAGS go to cargo (--allow-dirty,
# --no-verify). The .crate files land in bindings/rust/target/package/.
set -eu
cd "$(dirname "$0")/.."
cargo=${1:-cargo}
[ $# -gt 0 ] && shift
crate=bindings/rust/xcall-sys
rm -rf "$crate/csrc"
mkdir -p "$crate/csrc"
cp -R src include LICENSE "$crate/csrc/"
echo "rust-package: libxcall's C sources copied into $crate/csrc ($(find "$crate/csrc" -name '*.[ch]' | wc -l) files)"
cd bindings/rust
exec "$cargo" package --workspace "$@"
