#!/usr/bin/env bash
# Set-up (idempotent), then the whole test suite against the installed package.
set -euo pipefail
cd "$(dirname "$0")/.."
tools/setup.sh
# Tests must exercise the installed library, not a stray build.
unset TFLITE_GPU_LIBRARY
exec .venv/bin/python -m pytest -q "$@"
