#!/usr/bin/env bash
# The whole test suite, on a fresh machine: installs what it needs, then
# checks formatting and lints and runs every test (all features).
set -euo pipefail
cd "$(dirname "$0")/.."

need_apt=()
command -v dot >/dev/null || need_apt+=(graphviz)
if [ ${#need_apt[@]} -gt 0 ]; then
  echo "installing: ${need_apt[*]}"
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need_apt[@]}" >/dev/null
fi

rustup component list --installed 2>/dev/null | grep -q rustfmt || rustup component add rustfmt clippy
cargo fmt --all -- --check
cargo clippy --all-targets --all-features -- -D warnings
cargo test --all-features
