#!/usr/bin/env bash
# The whole run on a machine with a GPU but no internet: NVIDIA's driver (or another OpenCL driver,
# GPU_RUN_ICD_LIBRARY), Python 3.12 with numpy 2, pytest and pytest-xdist; no OpenCL ICD loader needed.
#
#   tools/gpu_run.sh prepare [BUNDLE]      where there is internet: fills BUNDLE (default .gpu-bundle,
#                                          git-ignored, about 51 MiB) with Debian's ocl-icd-libopencl1
#                                          .deb, cp312 manylinux wheels (ai-edge-litert, cffi, ...),
#                                          libgpu_delegate.so built from this tree, the 14 models
#   tools/gpu_run.sh run OUTDIR [BUNDLE]   on the GPU machine, in a copy of this tree with its bundle:
#                                          private ICD loader + an .icd naming libnvidia-opencl.so.1,
#                                          the wheels (pip --no-index --target), then the steps of
#                                          GPU_RUN_STEPS (default "devices models bench", about 3.5 min
#                                          on an H100 or H200 with 16 cores); OUTDIR/summary.md
#                                          (tools/gpu_summary.py) is rewritten as every step starts
#                                          and ends, and every 30 s
#   tools/gpu_run.sh sum                   the sources checksum `run` compares with the bundle's
#
# For example, after prepare:
#   rsync -a --exclude .git --exclude 'build*/' ./ gpu-host:tflite-gpu/    (the bundle goes along)
#   ssh gpu-host 'cd tflite-gpu && tools/gpu_run.sh run ~/gpu-out'
#   ssh gpu-host 'cd tflite-gpu && GPU_RUN_STEPS="launch barrier profile ab ops" tools/gpu_run.sh run ~/gpu-out'
#   rsync -a gpu-host:gpu-out/ gpu-results/
#
# Steps (times on an H100 or H200 with 16 cores):
#        devices   `tflite-gpu devices` (text and JSON); seconds
#        models    `check` on every model with each kernel set (cpu, gpu) in FP32 and FP16
#                  (fp16_guard=on): the 4 configurations as parallel processes, a model at a time;
#                  about 140 s for the 14 models
#        bench     `bench`, GPU kernel set, FP32 and FP16 against XNNPACK on 2 threads, then XNNPACK
#                  on all cores; no first result (see profile), a model at a time; about 60 s
#        benchcpu  `bench` with the CPU kernel set (FP32, FP16), 2 threads (gpu vs cpu set)
#        profile   tools/gpu_profile.py: launches per invoke, GPU event time per kernel, host time
#                  per invoke, cold first result (fresh process, no kernel cache, CUDA_CACHE_DISABLE=1);
#                  about 25 s a model, mostly the cold first result
#        phases    tools/gpu_profile.py with execution=persistent (the VM): as profile, and each VM phase's
#                  time from the GPU's timer (phases one at a time between grid barriers, NVIDIA), its
#                  kernel, TFLite node and work-items, in phases/; about 25 s a model
#        ops       tests/test_ops.py, GPU kernel set, every 3rd test (TFLITE_GPU_OP_TEST_EVERY=3:1),
#                  pytest-xdist on all cores; 2-3 min
#        tune      tools/bench_policy.py: `tflite-gpu tune` on the models (cold, budget
#                  GPU_RUN_TUNE_BUDGET s a partition, default 60), then each model with its
#                  remembered policy against the fixed ones (kernels with the GPU set,
#                  persistent, persistent with tiles) and XNNPACK on all cores, interleaved,
#                  two runs of GPU_RUN_TUNE_ROUNDS (default 7); tune.json and tune.md;
#                  about 30 s a model
#        launch    tools/cl_launch_cost.py: a bare launch's cost on the device, without the delegate
#                  (queued, flushed, synced); seconds
#        barrier   tools/cl_grid_barrier.py: the persistent kernel's grid barrier (opencl_kernels/grid_sync.cl)
#                  per phase against an empty launch, 1 to 2 x compute-units work-groups, with each
#                  launch's QUEUED/SUBMIT/START/END, and a cross-group message-passing litmus test;
#                  a few seconds
#        execution tools/bench_execution.py: execution=kernels (both kernel sets), stepped and persistent
#                  interleaved on each model, each checked against the CPU interpreter
#                  (GPU_RUN_EXECUTION_ROUNDS, default 30); about 14 s a model
#        vmcache   tools/bench_vm_cache.py: execution=persistent's first result in fresh processes (no
#                  kernel cache, CUDA_CACHE_DISABLE=1) without a cache and with the shared VM program
#                  file, against the CPU interpreter's, on GPU_RUN_VMCACHE_MODELS (default: the four of
#                  docs/benchmarks/vm-cache-pocl-2026-11-27.md), and the GPU_RUN_VMCACHE_AB A/B;
#                  about 8 s a model on an H200 without the A/B, which adds about as much again
#        ab        tools/bench_ab.py, GPU set FP32, the library against itself with one pass off
#                  (policy fuse_pw_dw=0, fuse_dw_1x1=0, then
#                  pinned_staging=0, through TFLITE_GPU_POLICY), interleaved, GPU_RUN_AB_ROUNDS=2: the passes that
#                  have not yet been measured on a GPU (GPU_RUN_AB_MODELS); 2-2.5 min
# README, "Running on an NVIDIA GPU machine", has each step's files.
#
# Environment (run):
#   GPU_RUN_STEPS       steps, default "devices models bench" (see above)
#   GPU_RUN_ICD_LIBRARY the OpenCL driver library the .icd names (default: libnvidia-opencl.so.1,
#                       searched under /usr/local/nvidia, /usr/lib*, and ldconfig's cache);
#                       e.g. PoCL's libpocl.so.2 to rehearse the run on a machine without a GPU
#   GPU_RUN_MODELS      models instead of the 14 (space-separated names or paths)
#   GPU_RUN_CHECK_PARALLEL  0: the 4 check configurations one after another (default 1: at once)
#   GPU_RUN_BENCH_ITERATIONS  timed invokes per bench configuration (default 10; 3 warm-up)
#   GPU_RUN_BENCH_THREADS     XNNPACK's threads beside the delegate (default 2); the second
#                       XNNPACK run uses all cores (nproc)
#   GPU_RUN_EXECUTION_MODES  the execution step's modes instead of its four: space-separated
#                       tools/bench_execution.py --mode specs (LABEL:KEY=VALUE,...)
#   GPU_RUN_PROFILE_ARGS  extra tools/gpu_profile.py arguments (e.g. "--precision fp16")
#   GPU_RUN_PHASES_ARGS   the same for the phases step (e.g. "--opt fp16=true")
#   GPU_RUN_OPS_EVERY   TFLITE_GPU_OP_TEST_EVERY for the ops step (default 3:1; 1 = every test)
#   GPU_RUN_OPS_KSETS   kernel sets of the ops step (default gpu)
#   GPU_RUN_OPS_K       a pytest -k expression for the op tests
#   GPU_RUN_VMCACHE_AB  NAME=VALUE ...: the vmcache step also times the kernel set and persistent
#                       with no cache in processes with each set, interleaved (default
#                       "TFLITE_GPU_POLICY=inline_rare=1 TFLITE_GPU_POLICY=build_threads=8": NVIDIA's rare paths
#                       and conv stores inlined again; programs compiled on 8 threads; "" for none)
#   GPU_RUN_AB_ROUNDS   rounds of the ab step's A/Bs (default 2)
#   GPU_RUN_TUNE_BUDGET the tune step's budget, seconds a partition (default 60)
#   GPU_RUN_TUNE_ROUNDS rounds of each of the tune step's two runs (default 7)
#   GPU_RUN_AB_MODELS   the ab step's models (default: six whose fused pairs changed last, and a control)
#   GPU_RUN_JOBS        pytest-xdist workers (default: the cores), when xdist is installed
#   GPU_RUN_DEADLINE_S  stop starting work this many seconds after the start and give each
#                       command only what is left (default 0: none), so that a run with a time
#                       limit still ends with its summary; a step it cut is marked "cut" there
#   GPU_RUN_PACK=1      keep the logs and JSON outside OUTDIR and leave only summary.md and
#                       gpu-run.tar.gz (everything so far) there, both rewritten at every refresh:
#                       one file to copy back, complete up to the last refresh
#   GPU_RUN_REFRESH_S   rewrite summary.md (and the pack) this often during a step (default 30; 0: never)
#   GPU_RUN_ALLOW_STALE=1  run although the bundle's library was built from other sources
#   PYTHON              the Python 3 to use (default python3; its version must match the wheels)
# Environment (prepare):
#   GPU_BUNDLE_PYTHON_VERSION  the wheels' Python version (default 3.12; 3.11 to rehearse here)
#   GPU_BUNDLE_NUMPY=1  also bring a numpy wheel (16 MB), for a machine whose Python lacks numpy 2
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
cd "$ROOT"

ALL_STEPS="devices models bench benchcpu profile phases ops tune launch barrier execution vmcache ab"
AB_MODELS="palm_detection_full palm_detection_lite pose_detection pose_landmark_full hand_landmark_full
  face_detection_full_range_sparse face_detection_short_range"
RUN_WORK="" RUN_TICKER=""

usage() {
  sed -n '2,/^set -euo/p' "$0" | grep '^#' | sed 's/^# \{0,1\}//' >&2
  exit 2
}

# A checksum of the sources the library is built from, so that `run` can
# tell a bundle built from other sources. The same on every machine: paths
# relative to the root, sorted bytewise (LC_ALL=C; a locale's collation
# orders "_" and "." differently), file contents and names only.
sources_sum() {
  (cd "$ROOT" && find delegate_c opencl_kernels -type f \( -name '*.c' -o -name '*.h' -o -name '*.cl' \
     -o -name Makefile -o -name '*.py' \) ! -name kernels_embedded.h -print0 | LC_ALL=C sort -z |
     LC_ALL=C xargs -0 sha256sum) | sha256sum | cut -c1-16
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
    echo "gpu_run prepare: warning: $mib MiB, more than the usual 51 (GPU_BUNDLE_NUMPY=1 adds 16)" >&2
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

# The file name a model's results get: its name without .tflite.
model_stem() {
  local m="${1##*/}"
  echo "${m%.tflite}"
}

run() {
  [ $# -ge 1 ] || usage
  local out="$1" bundle="${2:-$ROOT/.gpu-bundle}"
  local steps="${GPU_RUN_STEPS:-devices models bench}" s
  for s in $steps; do
    [[ " $ALL_STEPS " == *" $s "* ]] || { echo "gpu_run: unknown step $s (steps: $ALL_STEPS)" >&2; exit 2; }
  done
  [ -f "$bundle/MANIFEST" ] || { echo "gpu_run: no bundle at $bundle (run tools/gpu_run.sh prepare here first)" >&2; exit 2; }
  mkdir -p "$out"
  out="$(cd "$out" && pwd)"
  bundle="$(cd "$bundle" && pwd)"
  local pack="${GPU_RUN_PACK:-0}"
  local work="${TMPDIR:-/tmp}/tflite-gpu-run.$$"
  rm -rf "$work"
  mkdir -p "$work"
  # On any exit (an error included): no refresher left behind, no work directory.
  RUN_WORK="$work"
  trap 'if [ -n "$RUN_TICKER" ]; then kill "$RUN_TICKER" 2>/dev/null || true; fi; rm -rf "$RUN_WORK"' EXIT
  # With GPU_RUN_PACK=1 the files live outside OUTDIR, so that OUTDIR only ever
  # holds summary.md and gpu-run.tar.gz, even when the run is cut short.
  local files="$out"
  if [ "$pack" = 1 ]; then
    files="$work/gpu-run"
    mkdir -p "$files"
    rm -f "$out/summary.md" "$out/gpu-run.tar.gz"
  fi
  local log="$files/run.log"
  exec > >(tee -a "$log") 2>&1
  local t0=$SECONDS
  local deadline="${GPU_RUN_DEADLINE_S:-0}"
  local python="${PYTHON:-python3}"
  say() { echo "gpu_run [$((SECONDS - t0))s] $*"; }
  # limited CMD...: CMD with what is left before the deadline (status 124 when cut short)
  # (and a line in $work/cut, so that the step is reported as cut)
  limited() {
    if [ "$deadline" -le 0 ]; then "$@"; return; fi
    local left=$((deadline - (SECONDS - t0))) r=0
    if [ "$left" -le 15 ]; then
      echo "gpu_run: deadline reached, skipped: ${*:2:4}" | tee -a "$work/cut" >&2
      return 124
    fi
    timeout -k 5 "$left" "$@" || r=$?
    if [ "$r" -eq 124 ] || [ "$r" -eq 137 ]; then
      echo "gpu_run: deadline reached, stopped: ${*:2:4}" | tee -a "$work/cut" >&2
    fi
    return "$r"
  }
  # refresh: summary.md (and with GPU_RUN_PACK=1 gpu-run.tar.gz) from what is there now;
  # written beside and renamed, so a run cut short never leaves half a file.
  refresh() {
    local tag="$BASHPID"
    "$python" "$ROOT/tools/gpu_summary.py" "$files" >"$out/.summary.md.$tag" 2>>"$files/summary.err" || true
    mv -f "$out/.summary.md.$tag" "$out/summary.md"
    if [ "$pack" = 1 ]; then
      tar -czf "$out/.gpu-run.tar.gz.$tag" -C "$(dirname "$files")" "$(basename "$files")" 2>/dev/null || true
      mv -f "$out/.gpu-run.tar.gz.$tag" "$out/gpu-run.tar.gz"
    fi
  }
  # step_begin NAME / step_end NAME STATUS: steps.tsv (name, state, seconds, models, exit) and a refresh;
  # while the step runs, a refresh every GPU_RUN_REFRESH_S seconds.
  local step_t0=0 cut_before=0
  cut_count() { if [ -f "$work/cut" ]; then wc -l <"$work/cut"; else echo 0; fi; }
  step_begin() {
    step_t0=$SECONDS
    cut_before=$(cut_count)
    printf '%s\trunning\t0\t%s\t\n' "$1" "$nmodels" >>"$files/steps.tsv"
    say "step $1"
    refresh
    local every="${GPU_RUN_REFRESH_S:-30}"
    if [ "$every" -gt 0 ]; then
      # (sleep in the background and wait: a TERM then ends the wait at once)
      ( trap 'kill "$sp" 2>/dev/null; exit 0' TERM; trap - EXIT; sp=""
        while :; do sleep "$every" & sp=$!; wait "$sp"; refresh; done ) &
      RUN_TICKER=$!
    fi
  }
  step_end() {
    local name="$1" rc="$2" state=done
    if [ -n "$RUN_TICKER" ]; then
      kill "$RUN_TICKER" 2>/dev/null || true
      wait "$RUN_TICKER" 2>/dev/null || true
      RUN_TICKER=""
    fi
    [ "$rc" -eq 0 ] || state=failed
    if [ "$rc" -eq 124 ] || [ "$(cut_count)" -gt "$cut_before" ]; then state=cut; fi
    printf '%s\t%s\t%s\t%s\t%s\n' "$name" "$state" "$((SECONDS - step_t0))" "$nmodels" "$rc" >>"$files/steps.tsv"
    say "step $name: $state ($((SECONDS - step_t0)) s)"
    refresh
  }

  local built now
  built=$(awk '/^sources / {print $2}' "$bundle/MANIFEST")
  now=$(sources_sum)
  if [ "$built" != "$now" ]; then
    echo "gpu_run: the bundle's library was built from other sources ($built, this tree $now): run prepare again" >&2
    [ "${GPU_RUN_ALLOW_STALE:-0}" = 1 ] || exit 2
  fi

  local want have
  want=$(awk '/^python / {print $2}' "$bundle/MANIFEST")
  have=$("$python" -c 'import sys; print("%d.%d" % sys.version_info[:2])')
  if [ "$want" != "$have" ]; then
    echo "gpu_run: the bundle's wheels are for Python $want, $python is $have" >&2
    exit 2
  fi

  # The loader and the wheels go to a directory named after the bundle, kept
  # between runs (a later run skips them).
  local stash
  stash="${TMPDIR:-/tmp}/tflite-gpu-run-$(cat "$bundle/MANIFEST" "$bundle"/debs/*.deb "$bundle"/wheels/*.whl 2>/dev/null |
    sha256sum | cut -c1-12)"
  if [ ! -f "$stash/complete" ]; then
    rm -rf "$stash"
    mkdir -p "$stash"
    say "OpenCL ICD loader: Debian's, unpacked into $stash/loader"
    local deb
    deb=$(ls "$bundle"/debs/ocl-icd-libopencl1_*.deb)
    if command -v dpkg >/dev/null; then
      dpkg -x "$deb" "$stash/loader"
    else  # no dpkg: a .deb is an ar archive holding data.tar.*
      "$python" - "$deb" "$stash/loader" <<'EOF'
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
    say "wheels -> $stash/site"
    "$python" -m pip install -q --disable-pip-version-check --no-index --no-deps --no-compile \
      --target "$stash/site" "$bundle"/wheels/*.whl
    touch "$stash/complete"
  else
    say "loader and wheels: already in $stash"
  fi
  local loader
  loader=$(find "$stash/loader" -name 'libOpenCL.so.1*' -type f | head -n1)
  [ -n "$loader" ] || { echo "gpu_run: no libOpenCL.so.1 in the .deb" >&2; exit 1; }
  local icdlib
  icdlib=$(find_icd_library) || { echo "gpu_run: libnvidia-opencl.so.1 not found (set GPU_RUN_ICD_LIBRARY)" >&2; exit 3; }
  mkdir -p "$work/icd"
  echo "$icdlib" >"$work/icd/gpu.icd"
  say "ICD: $icdlib"
  export OCL_ICD_VENDORS="$work/icd"
  export LD_LIBRARY_PATH="$(dirname "$loader")${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  export TFLITE_GPU_OPENCL_LIBRARY="$loader"
  export PYTHONPATH="$ROOT/python:$stash/site${PYTHONPATH:+:$PYTHONPATH}"
  export TFLITE_GPU_LIBRARY="$bundle/lib/libgpu_delegate.so"
  export TFLITE_GPU_RUNTIME=ai_edge_litert
  export TFLITE_GPU_MODEL_DIR="$bundle/models"
  export TFLITE_GPU_CACHE_DIR="$work/kernel-cache"
  export PYTHONUNBUFFERED=1
  unset TFLITE_GPU_TEST_KERNEL_SET TFLITE_GPU_PROFILE TFLITE_GPU_OP_TEST_EVERY
  "$python" -c 'import numpy, cffi, tflite, flatbuffers, ai_edge_litert.interpreter, tflite_gpu
print("python", __import__("sys").version.split()[0], "numpy", numpy.__version__, "runtime", tflite_gpu.runtime().__name__)'

  local models="${GPU_RUN_MODELS:-}"
  [ -n "$models" ] || models=$("$python" -c 'from tflite_gpu.models import MODELS; print(" ".join(sorted(MODELS)))')
  local nmodels
  nmodels=$(wc -w <<<"$models")
  local ncores
  ncores=$(nproc)
  local status=0 ks prec m rc

  {
    echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
    echo "host: $(uname -srm)"
    echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //'), $ncores cores"
    echo "icd: $icdlib"
    echo "bundle: $(tr '\n' ';' <"$bundle/MANIFEST")"
    echo "steps: $steps"
    echo "models: $models"
    command -v nvidia-smi >/dev/null &&
      nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | sed 's/^/gpu: /'
  } >"$files/machine.txt" 2>&1 || true

  # check_config KS PREC: `check` on each model, one process per model (a model that fails or
  # crashes, or the deadline, costs only its own row); models-KS-PREC/NAME.json, .log, times.tsv
  check_config() {
    local ks="$1" prec="$2" dir="$files/models-$1-$2" rc=0 r t name
    local opts=(--opt "kernel_set=$ks")
    [ "$prec" = fp16 ] && opts+=(--opt is_precision_loss_allowed=1 --opt fp16_guard=on)
    mkdir -p "$dir"
    for m in $models; do
      name=$(model_stem "$m")
      t=$SECONDS
      r=0
      limited "$python" -m tflite_gpu check "$m" "${opts[@]}" --no-cache --json >"$dir/$name.json" \
        2>"$dir/$name.log" || r=$?
      printf '%s\t%s\t%s\n' "$name" "$((SECONDS - t))" "$r" >>"$dir/times.tsv"
      [ "$r" -eq 0 ] || rc=1
    done
    "$python" - "$dir" "$ks" "$prec" <<'EOF' || true
import json, pathlib, sys
rows = []
for p in sorted(pathlib.Path(sys.argv[1]).glob("*.json")):
    try:
        doc = json.loads(p.read_text())
    except ValueError:
        doc = None
    for r in doc if isinstance(doc, list) else [doc]:
        rows.append((p.stem, r if isinstance(r, dict) else {}))
bad = [f"{n} ({(r.get('error') or {}).get('kind', 'error')})" if "error" in r or not r else n
       for n, r in rows if not r.get("passed")]
print(f"  check {sys.argv[2]} {sys.argv[3]}: {len(rows) - len(bad)} of {len(rows)} passed"
      + (f"; not passed: {', '.join(bad)}" if bad else ""))
EOF
    return $rc
  }

  # bench_models DIR ARGS...: `bench` on each model, NAME.json and NAME.log in DIR
  bench_models() {
    local dir="$1" rc=0 r name
    shift
    mkdir -p "$dir"
    for m in $models; do
      name=$(model_stem "$m")
      r=0
      limited "$python" -m tflite_gpu bench "$m" "$@" --no-first-result --no-progress \
        --json "$dir/$name.json" >"$dir/$name.log" 2>&1 || r=$?
      # XNNPACK alone on a model the CPU interpreter cannot run (MediaPipe's custom ops): not a failure
      if [ "$r" -eq 4 ] && "$python" -c 'import json, sys
d = json.load(open(sys.argv[1]))
sys.exit(0 if d.get("models") and all(m.get("cpu_reference") is False for m in d["models"]) else 1)' \
          "$dir/$name.json" 2>/dev/null; then
        r=0
        echo "  $(basename "$dir"): $name: no CPU reference (custom ops)"
      fi
      echo "  $(basename "$dir"): exit $r $(grep -m1 "^| $name |" "$dir/$name.log" || true)"
      [ "$r" -eq 0 ] || rc=1
    done
    return $rc
  }

  refresh
  for s in $steps; do
    rc=0
    step_begin "$s"
    case "$s" in
      devices)
        "$python" -m tflite_gpu devices | tee "$files/devices.txt" || rc=1
        "$python" -m tflite_gpu devices --json >"$files/devices.json" || rc=1
        ;;
      models)
        # Correctness checks: the 4 configurations share the GPU and the cores.
        local pids=() p
        for ks in cpu gpu; do
          for prec in fp32 fp16; do
            if [ "${GPU_RUN_CHECK_PARALLEL:-1}" = 1 ]; then
              check_config "$ks" "$prec" &
              pids+=($!)
            else
              check_config "$ks" "$prec" || rc=1
            fi
          done
        done
        for p in "${pids[@]}"; do wait "$p" || rc=1; done
        ;;
      bench)
        # Timing: alone on the machine. No first result here (the profile step measures it,
        # cold); NVIDIA's compute cache may serve the programs the models step compiled.
        local it="${GPU_RUN_BENCH_ITERATIONS:-10}" thr="${GPU_RUN_BENCH_THREADS:-2}"
        say "bench: GPU kernel set, FP32 and FP16 (fp16_guard=on), XNNPACK on $thr threads, $it invokes"
        bench_models "$files/bench-gpu" --threads "$thr" --configs xnnpack,fp32,fp16 --opt kernel_set=gpu \
          --opt fp16_guard=on --warmup 3 --iterations "$it" || rc=1
        say "bench: XNNPACK on all $ncores cores"
        bench_models "$files/bench-xnnpack-all" --threads "$ncores" --configs xnnpack --warmup 3 \
          --iterations "$it" || rc=1
        ;;
      benchcpu)
        bench_models "$files/bench-cpu" --threads "${GPU_RUN_BENCH_THREADS:-2}" --configs fp32,fp16 \
          --opt kernel_set=cpu --opt fp16_guard=on --warmup 3 --iterations "${GPU_RUN_BENCH_ITERATIONS:-10}" || rc=1
        ;;
      profile)
        local left=0
        [ "$deadline" -gt 0 ] && left=$((deadline - (SECONDS - t0) - 10))
        # shellcheck disable=SC2086
        limited "$python" "$ROOT/tools/gpu_profile.py" --out "$files" --kernel-set gpu --deadline-s "$left" \
          ${GPU_RUN_PROFILE_ARGS:-} $models || rc=$?
        ;;
      phases)
        local left=0
        [ "$deadline" -gt 0 ] && left=$((deadline - (SECONDS - t0) - 10))
        mkdir -p "$files/phases"
        # The VM ignores kernel_set (it runs its own program): cpu is what it reports.
        # shellcheck disable=SC2086
        limited "$python" "$ROOT/tools/gpu_profile.py" --out "$files/phases" --kernel-set cpu \
          --opt execution=persistent --deadline-s "$left" ${GPU_RUN_PHASES_ARGS:-} $models || rc=$?
        ;;
      ops)
        local xdist=() kexpr=() jobs="${GPU_RUN_JOBS:-$ncores}"
        if "$python" -c 'import xdist' 2>/dev/null && [ "$jobs" -gt 1 ]; then
          xdist=(-n "$jobs")
        fi
        [ -n "${GPU_RUN_OPS_K:-}" ] && kexpr=(-k "$GPU_RUN_OPS_K")
        for ks in ${GPU_RUN_OPS_KSETS:-gpu}; do
          say "op tests, kernel set $ks, TFLITE_GPU_OP_TEST_EVERY=${GPU_RUN_OPS_EVERY:-3:1} ${xdist[*]}"
          TFLITE_GPU_TEST_KERNEL_SET=$ks TFLITE_GPU_OP_TEST_EVERY="${GPU_RUN_OPS_EVERY:-3:1}" \
            limited "$python" -m pytest -q -p no:cacheprovider "${xdist[@]}" "${kexpr[@]}" \
            --junitxml="$files/ops-$ks.xml" tests/test_ops.py >"$files/ops-$ks.log" 2>&1 || rc=1
          tail -n 3 "$files/ops-$ks.log"
        done
        ;;
      launch)
        limited "$python" "$ROOT/tools/cl_launch_cost.py" --out "$files" || rc=1
        ;;
      barrier)
        limited "$python" "$ROOT/tools/cl_grid_barrier.py" --out "$files" || rc=1
        ;;
      execution)
        local modes=() spec
        for spec in ${GPU_RUN_EXECUTION_MODES:-}; do modes+=(--mode "$spec"); done
        # shellcheck disable=SC2086
        limited "$python" "$ROOT/tools/bench_execution.py" --rounds "${GPU_RUN_EXECUTION_ROUNDS:-30}" \
          --json "$files/execution.json" "${modes[@]}" $models 2>&1 | tee "$files/execution.log" || rc=1
        ;;
      vmcache)
        # shellcheck disable=SC2086
        local vmcache_ab=()
        for spec in ${GPU_RUN_VMCACHE_AB-TFLITE_GPU_POLICY=inline_rare=1 TFLITE_GPU_POLICY=build_threads=8}; do
          vmcache_ab+=(--ab-env "$spec")
        done
        limited "$python" "$ROOT/tools/bench_vm_cache.py" "${vmcache_ab[@]}" \
          ${GPU_RUN_VMCACHE_MODELS:-face_detection_short_range hand_recrop iris_landmark palm_detection_lite} \
          >"$files/vmcache.log" 2>&1 || rc=1
        cat "$files/vmcache.log"
        ;;
      ab)
        # Only the models XNNPACK can run (bench_ab times it as the yardstick); by default the
        # six whose fused pairs changed with the rows rule (dc21150), among them the four with
        # 1x1 + depthwise pairs (fuse_pw_dw.c), and, as a control, face_detection_short_range,
        # which has neither change. The newest pass first: the deadline cuts the last.
        local abm="" n pair
        for m in ${GPU_RUN_AB_MODELS:-$AB_MODELS}; do
          n=$(model_stem "$m")
          case "$n" in face_landmark_with_attention | selfie_segmentation | selfie_segmentation_landscape) ;; *) abm+=" $n" ;; esac
        done
        for pair in TFLITE_GPU_POLICY=fuse_pw_dw=0:pw-dw TFLITE_GPU_POLICY=fuse_dw_1x1=0:dw-1x1 \
          TFLITE_GPU_POLICY=pinned_staging=0:pinned-staging; do
          say "A/B ${pair##*:}: A with ${pair%%:*}, B as shipped; GPU set, FP32"
          # shellcheck disable=SC2086
          limited "$python" "$ROOT/tools/bench_ab.py" --a "$TFLITE_GPU_LIBRARY" --b "$TFLITE_GPU_LIBRARY" \
            --env-a "${pair%%:*}" --opt-a kernel_set=gpu --opt-b kernel_set=gpu \
            --rounds "${GPU_RUN_AB_ROUNDS:-2}" $abm >"$files/ab-${pair##*:}.log" 2>&1 || rc=1
          tail -n 2 "$files/ab-${pair##*:}.log"
        done
        ;;
      tune)
        say "tflite-gpu tune, then the remembered policy against the fixed ones and XNNPACK"
        # shellcheck disable=SC2086
        limited "$python" "$ROOT/tools/bench_policy.py" --budget "${GPU_RUN_TUNE_BUDGET:-60}" \
          --rounds "${GPU_RUN_TUNE_ROUNDS:-7}" --threads "$(nproc)" --cache-dir "$work/tune-cache" \
          --json "$files/tune.json" --markdown "$files/tune.md" $models >"$files/tune.log" 2>&1 || rc=1
        cat "$files/tune.log"
        ;;
    esac
    [ "$rc" -eq 0 ] || status=1
    step_end "$s" "$rc"
  done

  cat "$out/summary.md"
  say "done (exit $status)"
  return $status
}

case "${1:-}" in
  prepare) shift; prepare "$@" ;;
  run) shift; run "$@" ;;
  sum) sources_sum ;;
  *) usage ;;
esac
