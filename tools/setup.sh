#!/usr/bin/env bash
# One-time set-up on a fresh Debian machine: OpenCL (PoCL), compiler, CMake
# and pkg-config system packages, then two virtualenvs with the package
# installed (`pip install .` builds libgpu_delegate.so):
#   .venv         tflite_runtime 2.14 (numpy < 2; Python 3.9-3.11)
#   .venv-litert  ai_edge_litert 2.x (LiteRT, numpy >= 2)
# Idempotent: installed packages and existing venvs are reused.
# TFLITE_GPU_SKIP_LITERT=1 skips the LiteRT venv.
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
if ! "$PYTHON" -c 'import sys; sys.exit(0 if (3, 9) <= sys.version_info[:2] <= (3, 11) else 1)'; then
  echo "tflite-runtime 2.14 needs Python 3.9-3.11; set PYTHON=/path/to/python3.11" >&2
  exit 2
fi

# make_venv DIR EXTRAS: a venv with this package and the given extras.
make_venv() {
  [ -x "$1/bin/python" ] || "$PYTHON" -m venv "$1"
  "$1/bin/python" -m pip install -q --upgrade pip
  "$1/bin/python" -m pip install -q ".[$2]"
}

make_venv .venv tflite-runtime,test
echo "set-up done: .venv has tflite_gpu $(.venv/bin/python -c 'import tflite_gpu; print(tflite_gpu.__version__)')" \
     "on $(.venv/bin/python -c 'import tflite_gpu; print(tflite_gpu.runtime().__name__)')"
if [ "${TFLITE_GPU_SKIP_LITERT:-0}" != 1 ]; then
  make_venv .venv-litert litert,test
  echo "set-up done: .venv-litert has tflite_gpu on" \
       "$(TFLITE_GPU_RUNTIME=ai_edge_litert .venv-litert/bin/python -c 'import tflite_gpu; print(tflite_gpu.runtime().__name__)')"
fi
if [ "${TFLITE_GPU_SETUP_MATRIX:-0}" = 1 ]; then
  tools/opencl_impls.sh
fi
