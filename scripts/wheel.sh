#!/usr/bin/env bash
# Builds the Python wheel: one abi3 wheel for every CPython from 3.9 on
# (Linux x86-64, manylinux tag) holding the extension and the `fprev`
# command, which runs inside the interpreter it is installed into. pip
# installs it with no Rust toolchain.
#
#   bash scripts/wheel.sh [OUT_DIR]      (default: target/wheels)
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-target/wheels}
command -v maturin >/dev/null || python3 -m pip install -q --disable-pip-version-check maturin
maturin build --release --quiet -m python/Cargo.toml -o "$out"
ls "$out"/fprev-*-cp39-abi3-*.whl
