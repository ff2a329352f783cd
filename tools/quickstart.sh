#!/usr/bin/env bash
# Set-up, then the main job: fetch a real MediaPipe model, run it on the
# CPU interpreter and through the delegate, and print the comparison.
set -euo pipefail
cd "$(dirname "$0")/.."
tools/setup.sh
.venv/bin/python -m tflite_gpu devices
.venv/bin/python -m tflite_gpu check "${@:-face_detection_short_range}"
