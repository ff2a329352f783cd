#!/usr/bin/env bash
# The whole run on a machine with a real GPU but no internet (the lent
# NVIDIA machine: NVIDIA's driver, python3 = Python 3.12 with numpy 2,
# pytest and flatbuffers, perhaps no OpenCL ICD loader), in two steps:
#
#   tools/gpu_run.sh prepare [BUNDLE]      HERE, with internet: fills BUNDLE (default .gpu-bundle,
#                                          git-ignored, < 64 MiB) with Debian's ocl-icd-libopencl1
#                                          .deb, cp312 manylinux wheels (ai-edge-litert, cffi,
#                                          pycparser, tflite, flatbuffers, ...), libgpu_delegate.so
#                                          built from this tree, and the 14 MediaPipe models
#   tools/gpu_run.sh run OUTDIR [BUNDLE]   THERE: unpacks the loader into a private directory, writes
#                                          an .icd naming libnvidia-opencl.so.1, installs the wheels
#                                          with pip --no-index --target, then: `tflite-gpu devices`,
#                                          tests/test_ops.py with each kernel set, `check` on the 14
#                                          models with each kernel set in FP32 and FP16 (fp16_guard=on),
#                                          `bench` against XNNPACK on 2 threads with each kernel set,
#                                          tools/bench_tuning.py with the GPU set; logs,
#                                          JSON and summary.md (tools/gpu_summary.py) in OUTDIR
#
# With the device tool (README, "Running on an NVIDIA GPU machine"):
#   run(command="GPU_RUN_PACK=1 tools/gpu_run.sh run $OUT", carry=[".gpu-bundle"])
# GPU_RUN_PACK=1 leaves only summary.md and gpu-run.tar.gz (everything) in OUTDIR,
# since the tool brings back at most 8 files.
#
# Environment (run):
#   GPU_RUN_STEPS       steps, default "devices ops models bench tune" (split a run across calls)
#   GPU_RUN_ICD_LIBRARY the OpenCL driver library the .icd names (default: libnvidia-opencl.so.1,
#                       searched under /usr/local/nvidia, /usr/lib*, and ldconfig's cache);
#                       e.g. PoCL's libpocl.so.2 to rehearse the run on a machine without a GPU
#   GPU_RUN_JOBS        pytest-xdist workers for the op tests when xdist is installed (default 8)
#   GPU_RUN_MODELS      models instead of the 14 (space-separated)
#   GPU_RUN_OPS_K       a pytest -k expression for the op tests (rehearsals)
#   GPU_RUN_BENCH_ITERATIONS  timed invokes per configuration (default 30)
#   GPU_RUN_DEADLINE_S  stop starting work this many seconds after the start and give each
#                       command only what is left (default 0: none; 540 under the device tool's
#                       10-minute limit), so the results so far are still summarised and packed
#   GPU_RUN_ALLOW_STALE=1  run although the bundle's library was built from other sources
#   PYTHON              the Python 3 to use (default python3; its version must match the wheels)
# Environment (prepare):
#   GPU_BUNDLE_PYTHON_VERSION  the wheels' Python version (default 3.12; 3.11 to rehearse here)
#   GPU_BUNDLE_NUMPY=1  also bring a numpy wheel (16 MB; the NVIDIA image has numpy 2, which
#                       ai-edge-litert accepts, and the bundle must stay under 64 MiB)
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
cd "$ROOT"

usage() {
  sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//' >&2
  exit 2
}

# A checksum of the sources the library is built from, so that `run` can
# tell a bundle built from other sources.
sources_sum() {
  (cd "$ROOT" && find delegate_c opencl_kernels -type f \( -name '*.c' -o -name '*.h' -o -name '*.cl' \
     -o -name Makefile -o -name '*.py' \) ! -name kernels_embedded.h -print0 | sort -z | xargs -0 sha256sum) |
    sha256sum | cut -c1-16
}

# ------------------------------------------------------------------ prepare
prepare() {
  local bundle="${1:-$ROOT/.gpu-bundle}"
  local pyver="${GPU_BUNDLE_PYTHON_VERSION:-3.12}"
  local cp="cp${pyver/./}"
  mkdir -p "$bundle"
  bundle="$(cd "$bundle" && pwd)"
  rm -rf "$bundle/debs" "$bundle/wheels" "$bundle/lib"
  mkdir -p "$bundle/debs" "$bundle/wheels" "$bundle/lib" "$bundle/models"

  echo "gpu_run prepare: Debian's ocl-icd-libopencl1 (the OpenCL ICD loader)"
  if ! (cd "$bundle/debs" && apt-get download ocl-icd-libopencl1 >/dev/null 2>&1); then
    local sudo=""
    [ "$(id -u)" -eq 0 ] || sudo="sudo"
    $sudo apt-get update -qq
    (cd "$bundle/debs" && apt-get download ocl-icd-libopencl1 >/dev/null)
  fi

  echo "gpu_run prepare: $cp manylinux wheels"
  # What the package and the op tests import, less what the NVIDIA image
  # already has (numpy 2, pytest, protobuf, ml_dtypes, typing_extensions):
  # ai-edge-litert declares those too, but --no-deps installs none.
  local wheels=(ai-edge-litert cffi pycparser tflite flatbuffers tqdm backports.strenum)
  [ "${GPU_BUNDLE_NUMPY:-0}" = 1 ] && wheels+=("numpy>=2")
  python3 -m pip download -q --disable-pip-version-check --no-deps --only-binary=:all: \
    --python-version "$pyver" --implementation cp \
    --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 --platform manylinux_2_27_x86_64 \
    --platform manylinux_2_28_x86_64 -d "$bundle/wheels" "${wheels[@]}" 2>&1 | grep -v '^WARNING: Location' || true
  local w
  for w in ai_edge_litert cffi pycparser tflite flatbuffers; do
    ls "$bundle/wheels/$w"-*.whl >/dev/null 2>&1 || { echo "gpu_run prepare: no $w wheel" >&2; exit 1; }
  done

  echo "gpu_run prepare: libgpu_delegate.so (x86-64; opens libOpenCL.so.1 at run time)"
  make -s -C delegate_c BUILD="$bundle/build" PYTHON=python3 -j2 >/dev/null
  cp "$bundle/build/libgpu_delegate.so" "$bundle/lib/"
  rm -rf "$bundle/build"

  echo "gpu_run prepare: the 14 MediaPipe models"
  local py=python3
  [ -x .venv/bin/python ] && py=.venv/bin/python
  if ! TFLITE_GPU_MODEL_DIR="$bundle/models" PYTHONPATH="$ROOT/python" "$py" -m tflite_gpu models \
       >"$bundle/models.log" 2>&1; then
    cat "$bundle/models.log" >&2
    exit 1
  fi
  rm -f "$bundle/models.log"

  {
    echo "commit $(git -C "$ROOT" describe --always --dirty 2>/dev/null || echo unknown)"
    echo "sources $(sources_sum)"
    echo "python $pyver"
    echo "prepared $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(uname -m)"
  } >"$bundle/MANIFEST"
  local mib
  mib=$(du -sm "$bundle" | cut -f1)
  echo "gpu_run prepare: $bundle ($mib MiB):"
  (cd "$bundle" && ls debs wheels lib && ls models | wc -l | sed 's/$/ models/')
  if [ "$mib" -ge 60 ]; then
    echo "gpu_run prepare: warning: $mib MiB; the device tool carries at most 64 MiB with the repo" >&2
  fi
}

# ------------------------------------------------------------------ run
find_icd_library() {
  if [ -n "${GPU_RUN_ICD_LIBRARY:-}" ]; then
    echo "$GPU_RUN_ICD_LIBRARY"
    return 0
  fi
  local d f
  for d in /usr/local/nvidia/lib64 /usr/local/nvidia/lib /usr/lib/x86_64-linux-gnu /usr/lib64 /usr/lib \
           /usr/local/cuda/compat /usr/local/cuda/lib64; do
    for f in "$d/libnvidia-opencl.so.1" "$d"/libnvidia-opencl.so.[0-9]*; do
      [ -e "$f" ] && { echo "$f"; return 0; }
    done
  done
  f=$(ldconfig -p 2>/dev/null | awk '/libnvidia-opencl\.so\.1 / {print $NF; exit}')
  [ -n "$f" ] && { echo "$f"; return 0; }
  f=$(find /usr/local/nvidia /usr/lib /usr/lib64 /usr/local/cuda* -name 'libnvidia-opencl.so*' 2>/dev/null | head -n1)
  [ -n "$f" ] && { echo "$f"; return 0; }
  return 1
}

run() {
  [ $# -ge 1 ] || usage
  local out="$1" bundle="${2:-$ROOT/.gpu-bundle}"
  mkdir -p "$out"
  out="$(cd "$out" && pwd)"
  bundle="$(cd "$bundle" && pwd)"
  local files="$out"
  [ "${GPU_RUN_PACK:-0}" = 1 ] && files="$out/gpu-run" && mkdir -p "$files"
  local work="${TMPDIR:-/tmp}/tflite-gpu-run.$$"
  mkdir -p "$work"
  local log="$files/run.log"
  exec > >(tee -a "$log") 2>&1
  local t0=$SECONDS
  local deadline="${GPU_RUN_DEADLINE_S:-0}"
  say() { echo "gpu_run [$((SECONDS - t0))s] $*"; }
  # limited CMD...: CMD with what is left before the deadline (status 124 when cut short)
  limited() {
    if [ "$deadline" -le 0 ]; then "$@"; return; fi
    local left=$((deadline - (SECONDS - t0)))
    [ "$left" -gt 15 ] || { echo "gpu_run: deadline reached, skipped: $*" >&2; return 124; }
    timeout -k 5 "$left" "$@"
  }

  [ -f "$bundle/MANIFEST" ] || { echo "gpu_run: no bundle at $bundle (run tools/gpu_run.sh prepare here first)" >&2; exit 2; }
  local built now
  built=$(awk '/^sources / {print $2}' "$bundle/MANIFEST")
  now=$(sources_sum)
  if [ "$built" != "$now" ]; then
    echo "gpu_run: the bundle's library was built from other sources ($built, this tree $now): run prepare again" >&2
    [ "${GPU_RUN_ALLOW_STALE:-0}" = 1 ] || exit 2
  fi

  local python="${PYTHON:-python3}"
  local want have
  want=$(awk '/^python / {print $2}' "$bundle/MANIFEST")
  have=$("$python" -c 'import sys; print("%d.%d" % sys.version_info[:2])')
  if [ "$want" != "$have" ]; then
    echo "gpu_run: the bundle's wheels are for Python $want, $python is $have" >&2
    exit 2
  fi

  say "OpenCL ICD loader: Debian's, unpacked into $work/loader"
  local deb
  deb=$(ls "$bundle"/debs/ocl-icd-libopencl1_*.deb)
  if command -v dpkg >/dev/null; then
    dpkg -x "$deb" "$work/loader"
  else  # no dpkg: a .deb is an ar archive holding data.tar.*
    "$python" - "$deb" "$work/loader" <<'EOF'
import io, sys, tarfile
data = open(sys.argv[1], "rb").read()
assert data[:8] == b"!<arch>\n", "not an ar archive"
pos = 8
while pos < len(data):
    name, size = data[pos:pos + 16].decode().strip().rstrip("/"), int(data[pos + 48:pos + 58])
    if name.startswith("data.tar"):
        tarfile.open(fileobj=io.BytesIO(data[pos + 60:pos + 60 + size])).extractall(sys.argv[2])
        break
    pos += 60 + size + (size & 1)
EOF
  fi
  local loader
  loader=$(find "$work/loader" -name 'libOpenCL.so.1*' -type f | head -n1)
  [ -n "$loader" ] || { echo "gpu_run: no libOpenCL.so.1 in the .deb" >&2; exit 1; }
  local icdlib
  icdlib=$(find_icd_library) || { echo "gpu_run: libnvidia-opencl.so.1 not found (set GPU_RUN_ICD_LIBRARY)" >&2; exit 3; }
  mkdir -p "$work/icd"
  echo "$icdlib" >"$work/icd/gpu.icd"
  say "ICD: $icdlib"
  export OCL_ICD_VENDORS="$work/icd"
  export LD_LIBRARY_PATH="$(dirname "$loader")${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  export TFLITE_GPU_OPENCL_LIBRARY="$loader"

  say "wheels -> $work/site"
  "$python" -m pip install -q --disable-pip-version-check --no-index --no-deps --no-compile --target "$work/site" \
    "$bundle"/wheels/*.whl
  export PYTHONPATH="$ROOT/python:$work/site${PYTHONPATH:+:$PYTHONPATH}"
  export TFLITE_GPU_LIBRARY="$bundle/lib/libgpu_delegate.so"
  export TFLITE_GPU_RUNTIME=ai_edge_litert
  export TFLITE_GPU_MODEL_DIR="$bundle/models"
  export PYTHONUNBUFFERED=1
  unset TFLITE_GPU_TEST_KERNEL_SET
  "$python" -c 'import numpy, cffi, tflite, flatbuffers, ai_edge_litert.interpreter, tflite_gpu
print("python", __import__("sys").version.split()[0], "numpy", numpy.__version__, "runtime", tflite_gpu.runtime().__name__)'

  local models="${GPU_RUN_MODELS:-}"
  [ -n "$models" ] || models=$("$python" -c 'from tflite_gpu.models import MODELS; print(" ".join(sorted(MODELS)))')
  local steps="${GPU_RUN_STEPS:-devices ops models bench tune}"
  local status=0 ks prec

  {
    echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
    echo "host: $(uname -srm)"
    echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //'), $(nproc) cores"
    echo "icd: $icdlib"
    echo "bundle: $(tr '\n' ';' <"$bundle/MANIFEST")"
    command -v nvidia-smi >/dev/null &&
      nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | sed 's/^/gpu: /'
  } >"$files/machine.txt" 2>&1 || true

  if [[ " $steps " == *" devices "* ]]; then
    say "devices"
    "$python" -m tflite_gpu devices | tee "$files/devices.txt" || status=1
    "$python" -m tflite_gpu devices --json >"$files/devices.json" || status=1
  fi

  if [[ " $steps " == *" ops "* ]]; then
    local xdist=()
    if "$python" -c 'import xdist' 2>/dev/null && [ "${GPU_RUN_JOBS:-8}" -gt 1 ]; then
      xdist=(-n "${GPU_RUN_JOBS:-8}")
    fi
    local kexpr=()
    [ -n "${GPU_RUN_OPS_K:-}" ] && kexpr=(-k "$GPU_RUN_OPS_K")
    for ks in cpu gpu; do
      say "op tests, kernel set $ks ${xdist[*]}"
      TFLITE_GPU_TEST_KERNEL_SET=$ks limited "$python" -m pytest -q -p no:cacheprovider "${xdist[@]}" "${kexpr[@]}" \
        --junitxml="$files/ops-$ks.xml" tests/test_ops.py >"$files/ops-$ks.log" 2>&1 || status=1
      tail -n 3 "$files/ops-$ks.log"
    done
  fi

  if [[ " $steps " == *" models "* ]]; then
    for ks in cpu gpu; do
      for prec in fp32 fp16; do
        local opts=(--opt "kernel_set=$ks")
        [ "$prec" = fp16 ] && opts+=(--opt is_precision_loss_allowed=1 --opt fp16_guard=on)
        say "check, kernel set $ks, $prec"
        # shellcheck disable=SC2086
        limited "$python" -m tflite_gpu check $models "${opts[@]}" --json >"$files/models-$ks-$prec.json" \
          2>"$files/models-$ks-$prec.log" || status=1
        "$python" - "$files/models-$ks-$prec.json" <<'EOF' || true
import json, pathlib, sys
try:
    rs = json.loads(pathlib.Path(sys.argv[1]).read_text())
except ValueError:
    sys.exit(print("  no results (see the .log)"))
bad = [pathlib.Path(r["model"]).stem for r in rs if not r.get("passed")]
print(f"  {len(rs) - len(bad)} of {len(rs)} passed" + (f"; failed: {', '.join(bad)}" if bad else ""))
EOF
      done
    done
  fi

  if [[ " $steps " == *" bench "* ]]; then
    for ks in gpu cpu; do
      say "bench, kernel set $ks, against XNNPACK on 2 threads"
      # CUDA_CACHE_DISABLE: NVIDIA's compute cache would make the "cold" first result warm.
      # shellcheck disable=SC2086
      CUDA_CACHE_DISABLE=1 limited "$python" -m tflite_gpu bench $models --threads 2 --configs xnnpack,fp32,fp16 --opt "kernel_set=$ks" \
        --iterations "${GPU_RUN_BENCH_ITERATIONS:-30}" --no-warm --no-progress \
        --json "$files/bench-$ks.json" --markdown "$files/bench-$ks.md" >"$files/bench-$ks.log" 2>&1 || status=1
      tail -n 2 "$files/bench-$ks.log"
    done
  fi

  if [[ " $steps " == *" tune "* ]]; then
    say "work-group tuning (SUSTAINED_SPEED) against the selector's groups, GPU set"
    limited "$python" "$ROOT/tools/bench_tuning.py" --kernel-sets gpu $models >"$files/tune-gpu.log" 2>&1 || status=1
    cat "$files/tune-gpu.log"
  fi

  say "summary"
  "$python" "$ROOT/tools/gpu_summary.py" "$files" >"$out/summary.md" || status=1
  cat "$out/summary.md"
  if [ "${GPU_RUN_PACK:-0}" = 1 ]; then
    tar -czf "$out/gpu-run.tar.gz" -C "$out" gpu-run
    rm -rf "$files"
  fi
  rm -rf "$work"
  say "done (exit $status)"
  return $status
}

case "${1:-}" in
  prepare) shift; prepare "$@" ;;
  run) shift; run "$@" ;;
  *) usage ;;
esac
