#!/usr/bin/env bash
# The whole test suite, on a fresh machine: installs what it needs, then
# checks formatting and lints and runs every test (all features).
set -euo pipefail
cd "$(dirname "$0")/.."

need_apt=()
command -v dot >/dev/null || need_apt+=(graphviz)
# The blas: tests load OpenBLAS, BLIS and the reference BLAS at run time;
# the dylib: tests compile C.
for pkg in libopenblas0 libblis4 libblas3; do
  dpkg -s "$pkg" >/dev/null 2>&1 || need_apt+=("$pkg")
done
command -v cc >/dev/null || need_apt+=(gcc)
# The survey page is opened in a real headless browser.
command -v chromium >/dev/null || need_apt+=(chromium)
# MPI: Open MPI for the mpi feature and its tests; rsmpi's bindgen needs libclang.
command -v mpirun >/dev/null || need_apt+=(openmpi-bin)
dpkg -s libopenmpi-dev >/dev/null 2>&1 || need_apt+=(libopenmpi-dev)
# MPICH, the second MPI: its tests run an fprev built against it (below).
dpkg -s libmpich-dev >/dev/null 2>&1 || need_apt+=(mpich libmpich-dev)
dpkg -s libclang1-14 >/dev/null 2>&1 || need_apt+=(libclang1-14)
dpkg -s libclang-common-14-dev >/dev/null 2>&1 || need_apt+=(libclang-common-14-dev)
# The completion scripts are checked by their shells (zsh -n, fish -n), the
# manual pages rendered by groff (crates/fprev-cli/tests/describe.rs).
for shell in zsh fish; do
  command -v "$shell" >/dev/null || need_apt+=("$shell")
done
command -v groff >/dev/null || need_apt+=(groff-base)
if [ ${#need_apt[@]} -gt 0 ]; then
  echo "installing: ${need_apt[*]}"
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need_apt[@]}" >/dev/null
fi

# The Python bridge's tests use real NumPy (ml_dtypes for bf16/fp8), JAX,
# Polars and DuckDB, and Intel MKL; the tensor-core tests use MMA-Sim, the
# bit-accurate simulator of GPU matrix instructions, which brings PyTorch
# (about 5 GB and 2 minutes here), so PyTorch's CPU probes are tested too.
# maturin builds the Python package; pytest runs its suite.
need_pip=()
for pkg in numpy ml_dtypes jax polars duckdb mmasim maturin pytest ipykernel nbclient nbformat; do
  python3 -c "import $pkg" 2>/dev/null || need_pip+=("$pkg")
done
# Intel MKL (a BLAS, no Python module) from the package index: blas:OP@mkl
# finds it in the lib folder of the python3 that installed it.
python3 -m pip show -q mkl >/dev/null 2>&1 || need_pip+=(mkl)
if [ ${#need_pip[@]} -gt 0 ]; then
  echo "installing: ${need_pip[*]}"
  python3 -m pip install -q --disable-pip-version-check "${need_pip[@]}"
fi

# Installing MPICH may register its mpicc and mpirun as Debian's defaults;
# the Open MPI build and its tests need Open MPI's.
if [ -x /usr/bin/mpicc.openmpi ] && [ -x /usr/bin/mpirun.openmpi ]; then
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO update-alternatives --set mpi /usr/bin/mpicc.openmpi >/dev/null
  $SUDO update-alternatives --set mpirun /usr/bin/mpirun.openmpi >/dev/null
fi

# rustfmt and clippy come with the machine's toolchain; they cannot be
# fetched here, so a missing one is reported and skipped, not fatal.
if cargo fmt --version >/dev/null 2>&1; then
  cargo fmt --all -- --check
else
  echo "SKIPPED: cargo fmt is not installed with this toolchain"
fi
if cargo clippy --version >/dev/null 2>&1; then
  cargo clippy --all-targets --all-features -- -D warnings
  cargo clippy -p fprev-python --all-targets -- -D warnings
else
  echo "SKIPPED: cargo clippy is not installed with this toolchain"
fi
# The README's first command, as a user runs it: the default build, which
# crates/fprev-cli/tests/linkage.rs checks links only what a bare machine has.
cargo build --release
./target/release/fprev reveal >/dev/null
# An fprev linked against MPICH (a binary links one MPI), for
# crates/fprev-cli/tests/mpich.rs.
MPICC=mpicc.mpich CARGO_TARGET_DIR=target/mpich cargo build --release --features mpi -p fprev-cli
FPREV_MPICH_BIN="$PWD/target/mpich/release/fprev" cargo test --all-features

# The Python package (python/), installed the way users install it, into a
# virtualenv that also sees this machine's NumPy and JAX; its suite builds
# the wheel again and installs it into a clean virtualenv.
venv=target/python-venv
[ -x "$venv/bin/python" ] || python3 -m venv --system-site-packages "$venv"
"$venv/bin/python" -m pip install -q --disable-pip-version-check ./python
# A cache of formulas of the suite's own: no run reads what an earlier kept.
cache="$(mktemp -d)"
trap 'rm -rf "$cache"' EXIT
FPREV_CACHE_DIR="$cache" PATH="$PWD/$venv/bin:$PATH" "$venv/bin/python" -m pytest -q python/tests
