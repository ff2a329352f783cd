#!/usr/bin/env bash
# One-time set-up on a fresh Debian machine: OpenCL (PoCL) system packages,
# a virtualenv in .venv, and `pip install .` (which builds libgpu_delegate.so).
# Idempotent: installed packages and an existing venv are reused.
set -euo pipefail
cd "$(dirname "$0")/.."

# valgrind and clang (libFuzzer): the robustness tests (tests/test_sanitizers.py, tests/test_fuzz.py).
PACKAGES="ocl-icd-opencl-dev opencl-headers pocl-opencl-icd make gcc valgrind clang"
missing=""
for p in $PACKAGES; do
  dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"
done
if [ -n "$missing" ]; then
  echo "installing system packages:$missing"
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq $missing >/dev/null
fi

PYTHON="${PYTHON:-python3}"
if ! "$PYTHON" -c 'import sys; sys.exit(0 if (3, 9) <= sys.version_info[:2] <= (3, 11) else 1)'; then
  echo "tflite-runtime 2.14 needs Python 3.9-3.11; set PYTHON=/path/to/python3.11" >&2
  exit 2
fi
[ -x .venv/bin/python ] || "$PYTHON" -m venv .venv
.venv/bin/python -m pip install -q --upgrade pip
.venv/bin/python -m pip install -q ".[test]"
echo "set-up done: .venv has tflite_gpu $(.venv/bin/python -c 'import tflite_gpu; print(tflite_gpu.__version__)')"
