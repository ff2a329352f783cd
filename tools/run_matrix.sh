#!/usr/bin/env bash
# The portability matrix: the op tests, the single-kernel tests and the 14
# MediaPipe models on PoCL, Intel's OpenCL CPU runtime and Oclgrind, with
# each kernel set (cpu, gpu), FP32 and FP16; one summary table at the end
# (also in build/matrix/summary.txt; logs beside it). What is sampled: the
# README's "Portability matrix", and tools/matrix.py's docstring.
#
# Needs .venv or, where tools/setup.sh made only that (Python 3.12+),
# .venv-litert; TFLITE_GPU_MATRIX_PYTHON=path/bin/python picks one
# (tools/run_tests.sh sets it). Registers the implementations itself
# (tools/opencl_impls.sh, idempotent). Runs the library installed in that
# venv unless TFLITE_GPU_LIBRARY is set.
#
#   tools/run_matrix.sh                       # sampled, about 20 minutes on 2 cores
#   TFLITE_GPU_MATRIX_FULL=1 tools/run_matrix.sh   # every op test everywhere (hours)
#   tools/run_matrix.sh --impls intel --kernel-sets gpu --models hand_recrop   # a corner
#   tools/run_matrix.sh --list                # the pieces, without running them
#
# Arguments go to tools/matrix.py (--help lists them, with their
# TFLITE_GPU_MATRIX_* variables). Exit status: 0 if every piece passed.
set -euo pipefail
cd "$(dirname "$0")/.."
PY="${TFLITE_GPU_MATRIX_PYTHON:-}"
if [ -z "$PY" ]; then
  PY=.venv/bin/python
  [ -x "$PY" ] || PY=.venv-litert/bin/python
fi
if [ ! -x "$PY" ]; then
  echo "run_matrix: no $PY; run tools/setup.sh first" >&2
  exit 2
fi
case "$PY" in /*) ;; *) PY="$PWD/$PY" ;; esac  # the pieces run in other directories too
for a in "$@"; do
  case "$a" in --help|-h|--list) exec "$PY" tools/matrix.py --python "$PY" "$@" ;; esac
done
impls="${TFLITE_GPU_MATRIX_IMPLS:-pocl,intel,oclgrind}"
prev=""
for a in "$@"; do  # --impls X / --impls=X: register only those
  case "$prev" in --impls) impls="$a" ;; esac
  case "$a" in --impls=*) impls="${a#--impls=}" ;; esac
  prev="$a"
done
# PoCL records the kernels each op test launches, for every sample.
tools/opencl_impls.sh $(echo "pocl,$impls" | tr ',' '\n' | sort -u | tr '\n' ' ')
# The models are fetched once here, not by several pieces at once.
mkdir -p build
if ! "$PY" -m tflite_gpu models >build/matrix-models.log 2>&1; then
  cat build/matrix-models.log >&2
  exit 1
fi
exec "$PY" tools/matrix.py --python "$PY" "$@"
