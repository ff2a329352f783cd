#!/usr/bin/env bash
# One-time set-up on a fresh Debian machine: OpenCL (PoCL), compiler, CMake
# and pkg-config system packages, then two virtualenvs with the package
# installed (`pip install .` builds libgpu_delegate.so):
#   .venv         tflite_runtime 2.14 (numpy < 2); Python 3.9-3.11 only (its
#                 wheels stop there), so on Python 3.12+ it is not made
#   .venv-litert  ai_edge_litert 2.x (LiteRT, numpy >= 2); every Python 3.9+
# PYTHON=/path/to/python3.X picks the Python (default python3). Idempotent:
# installed packages and existing venvs are reused; a venv made with another
# Python version than $PYTHON's is made again. tools/run_tests.sh and
# tools/quickstart.sh decide from $PYTHON's version the same way which
# venvs there are.
# TFLITE_GPU_SKIP_LITERT=1 skips the LiteRT venv (Python 3.9-3.11).
# TFLITE_GPU_SETUP_MATRIX=1 (tools/run_tests.sh sets it unless
# TFLITE_GPU_SKIP_MATRIX=1) also installs and registers the portability
# matrix's OpenCL implementations: Oclgrind (apt) and Intel's OpenCL CPU
# runtime (.venv-intel-ocl, about 850 MB), see tools/opencl_impls.sh.
set -euo pipefail
cd "$(dirname "$0")/.."

# valgrind and clang (libFuzzer): the robustness tests (tests/test_sanitizers.py, tests/test_fuzz.py).
PACKAGES="ocl-icd-opencl-dev opencl-headers pocl-opencl-icd make gcc g++ binutils cmake pkg-config python3-venv valgrind clang"
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
pyver() { "$1" -c 'import sys; print("%d.%d" % sys.version_info[:2])' 2>/dev/null; }
version=$(pyver "$PYTHON") || { echo "setup: cannot run PYTHON=$PYTHON; set PYTHON=/path/to/python3" >&2; exit 2; }
if ! "$PYTHON" -c 'import sys; sys.exit(sys.version_info[:2] < (3, 9))'; then
  echo "setup: tflite-gpu needs Python 3.9 or newer, $PYTHON is $version; set PYTHON=/path/to/python3" >&2
  exit 2
fi
tflite_runtime=1
if ! "$PYTHON" -c 'import sys; sys.exit(sys.version_info[:2] > (3, 11))'; then
  tflite_runtime=0
  if [ "${TFLITE_GPU_SKIP_LITERT:-0}" = 1 ]; then
    echo "setup: TFLITE_GPU_SKIP_LITERT=1 leaves nothing to set up on Python $version" \
         "(tflite-runtime 2.14 needs 3.9-3.11; set PYTHON=/path/to/python3.11)" >&2
    exit 2
  fi
fi

# make_venv DIR EXTRAS: a venv of $PYTHON's version with this package and the given extras.
make_venv() {
  local have
  if have=$(pyver "$1/bin/python") && [ "$have" != "$version" ]; then
    echo "setup: $1 has Python $have, PYTHON=$PYTHON is $version: making it again"
    "$PYTHON" -m venv --clear "$1"
  fi
  [ -x "$1/bin/python" ] || "$PYTHON" -m venv "$1"
  "$1/bin/python" -m pip install -q --upgrade pip
  "$1/bin/python" -m pip install -q ".[$2]"
}

if [ "$tflite_runtime" = 1 ]; then
  make_venv .venv tflite-runtime,test
  echo "set-up done: .venv has tflite_gpu $(.venv/bin/python -c 'import tflite_gpu; print(tflite_gpu.__version__)')" \
       "on $(.venv/bin/python -c 'import tflite_gpu; print(tflite_gpu.runtime().__name__)')"
else
  echo "setup: skipping .venv (tflite_runtime 2.14): its wheels are for Python 3.9-3.11 and" \
       "PYTHON=$PYTHON is $version; setting up .venv-litert (LiteRT) only"
fi
if [ "${TFLITE_GPU_SKIP_LITERT:-0}" != 1 ]; then
  make_venv .venv-litert litert,test
  echo "set-up done: .venv-litert has tflite_gpu on" \
       "$(TFLITE_GPU_RUNTIME=ai_edge_litert .venv-litert/bin/python -c 'import tflite_gpu; print(tflite_gpu.runtime().__name__)')"
fi
if [ "${TFLITE_GPU_SETUP_MATRIX:-0}" = 1 ]; then
  tools/opencl_impls.sh
fi
