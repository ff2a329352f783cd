#!/usr/bin/env bash
# Set-up, then the main job: fetch a real MediaPipe model, run it on the
# CPU interpreter and through the delegate, and print the comparison.
# On Python 3.9-3.11 it runs in .venv (tflite_runtime 2.14); on 3.12+, which
# tflite-runtime 2.14 has no wheels for, in .venv-litert (LiteRT).
# PYTHON=/path/to/python3.X picks the Python (tools/setup.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
tools/setup.sh
if "${PYTHON:-python3}" -c 'import sys; sys.exit(sys.version_info[:2] > (3, 11))'; then
  py=.venv/bin/python
else
  py=.venv-litert/bin/python
  export TFLITE_GPU_RUNTIME=ai_edge_litert
fi
"$py" -m tflite_gpu devices
"$py" -m tflite_gpu check "${@:-face_detection_short_range}"
