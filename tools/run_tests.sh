#!/usr/bin/env bash
# Set-up (idempotent), then three steps side by side, each against the
# installed package:
#   1. .venv (tflite_runtime 2.14): every test. The single-op tests
#      (tests/test_ops.py) run in step 3 when it runs: the matrix runs every
#      one of them on PoCL with each kernel set (recording the kernels it
#      samples from), a superset of what they would do here.
#   2. .venv-litert (ai_edge_litert 2.x): the same suite less the tests that
#      do not touch a runtime (C units, the CMake install, pyopencl single
#      kernels, the C fuzz harnesses, the matrix tools, the source layout,
#      valgrind) and the robustness runs that the first pass makes (the
#      model-mutation fuzz run, the soak; its regressions replay here) -
#      real MediaPipe models,
#      fusion, the API, the CLI and ASan run under LiteRT too. Of the
#      single-op tests it runs every sixth, spread over every op family: they
#      differ from run 1's only in LiteRT's CPU reference kernels, and
#      running all of them costs minutes of CI (TFLITE_GPU_OP_TEST_EVERY=1
#      runs them all); of every other parametrized test, the first case and
#      every fifth after it (TFLITE_GPU_CASE_EVERY, 1 for all: tests/
#      conftest.py); the lifetime test's create/destroy cycles are 100, not
#      1,000 (TFLITE_GPU_LIFETIME_CYCLES), and ASan's child runs every 30th
#      op test beside its model, lifetime and bad-model suites
#      (TFLITE_GPU_ASAN_OP_TEST_EVERY).
#   3. the portability matrix (tools/run_matrix.sh: PoCL, Intel's OpenCL CPU
#      runtime and Oclgrind, each kernel set, sampled);
#      TFLITE_GPU_SKIP_MATRIX=1 skips it (and its set-up). It does not run
#      when arguments choose a subset of the suite.
# Each step's output is printed whole when it ends, with its time (logs in
# build/ci/).
# On Python 3.12+ (PYTHON=..., see tools/setup.sh) tflite-runtime 2.14 has no
# wheels and there is no .venv: run 1 is skipped and run 2 is the whole
# suite (every test, every op test unless TFLITE_GPU_OP_TEST_EVERY says
# otherwise); the matrix runs in .venv-litert.
# Extra arguments go to both pytest runs. Exit status: non-zero if any
# run failed (all always run).
set -euo pipefail
cd "$(dirname "$0")/.."
run_matrix=1
[ "${TFLITE_GPU_SKIP_MATRIX:-0}" != 1 ] && [ $# -eq 0 ] || run_matrix=0
TFLITE_GPU_SETUP_MATRIX=$run_matrix tools/setup.sh
echo "== set-up: $SECONDS s"
# Tests must exercise the installed library, not a stray build.
unset TFLITE_GPU_LIBRARY

PYTHON="${PYTHON:-python3}"
tflite_runtime=1  # as tools/setup.sh decides: .venv on Python 3.9-3.11 only
"$PYTHON" -c 'import sys; sys.exit(sys.version_info[:2] > (3, 11))' || tflite_runtime=0
venv=.venv
[ "$tflite_runtime" = 1 ] || venv=.venv-litert
# The models, fetched once here rather than by the steps at once.
$venv/bin/python -m tflite_gpu models >/dev/null

# The steps run side by side (one pytest process leaves the second core idle
# half the time; the matrix builds nothing and writes only under
# build/matrix/; the test builds both passes make wait on a lock, see
# tests/library_builds.py). Each writes build/ci/STEP.log, printed whole
# when the step ends, with its time and exit status.
mkdir -p build/ci
pids=() names=()
step() {  # step LOG TITLE CMD...: CMD in the background, its output into build/ci/LOG.log
  local log=build/ci/$1.log title=$2
  shift 2
  (
    t0=$SECONDS rc=0
    "$@" >"$log" 2>&1 || rc=$?
    exec 9>build/ci/.print.lock
    flock 9
    echo "== $title"
    cat "$log"
    echo "== $title: exit $rc, $((SECONDS - t0)) s (all steps: $SECONDS s so far)"
    exit $rc
  ) &
  pids+=($!)
  names+=("$title")
}
pytest_q=(-m pytest -q -p no:cacheprovider --durations=25)  # the slowest 25: where CI time goes
# Beside the matrix, which builds every program its op tests and models run
# as users build them, the pytest steps build theirs with -cl-opt-disable
# (TFLITE_GPU_TEST_OPT_DISABLE=1): the same kernels, without PoCL's
# optimizer, which took most of their time on the GPU set's work-group
# kernels (a conv's first launch 13 s -> 0.2 s). Without the matrix they
# build as users do.
opt=()
[ "$run_matrix" = 1 ] && opt=(TFLITE_GPU_TEST_OPT_DISABLE=1)
if [ "$tflite_runtime" = 1 ]; then
  ops=()
  [ "$run_matrix" = 1 ] && ops=(--ignore=tests/test_ops.py)
  step venv "tflite_runtime 2.14 (.venv)" env "${opt[@]}" TFLITE_GPU_RUNTIME=tflite_runtime .venv/bin/python "${pytest_q[@]}" \
    "${ops[@]}" "$@"
else
  echo "== tflite_runtime 2.14 (.venv): skipped, its wheels are for Python 3.9-3.11 and PYTHON=$PYTHON is" \
       "$("$PYTHON" -c 'import sys; print("%d.%d" % sys.version_info[:2])')"
fi
if [ "$tflite_runtime" = 0 ]; then
  step litert "ai_edge_litert (.venv-litert): every test, the runtime-independent ones included" \
    env "${opt[@]}" TFLITE_GPU_RUNTIME=ai_edge_litert .venv-litert/bin/python "${pytest_q[@]}" "$@"
elif [ "${TFLITE_GPU_SKIP_LITERT:-0}" != 1 ]; then
  # Tests that never load a runtime ran in the first pass: C units, the CMake
  # install, the strict-compiler gate (its coverage check's builds do not
  # depend on the runtime), single kernels through pyopencl, the C libFuzzer
  # harnesses, the matrix tools, the source layout. Exit status 5: nothing
  # collected (the arguments chose only runtime-independent tests).
  litert() {
    local rc=0
    TFLITE_GPU_OP_TEST_EVERY="${TFLITE_GPU_OP_TEST_EVERY:-6:1}" \
    TFLITE_GPU_CASE_EVERY="${TFLITE_GPU_CASE_EVERY:-5}" \
    TFLITE_GPU_LIFETIME_CYCLES="${TFLITE_GPU_LIFETIME_CYCLES:-100}" \
    TFLITE_GPU_ASAN_OP_TEST_EVERY="${TFLITE_GPU_ASAN_OP_TEST_EVERY:-30}" \
    env "${opt[@]}" TFLITE_GPU_RUNTIME=ai_edge_litert .venv-litert/bin/python "${pytest_q[@]}" \
      --ignore=tests/test_c_units.py --ignore=tests/test_install.py --ignore=tests/test_cl_kernels.py \
      --ignore=tests/test_source_layout.py --ignore=tests/test_cl_strict.py \
      --ignore=tests/test_cl_conv_gpu.py --ignore=tests/test_cl_reduce_gpu.py \
      --ignore=tests/test_fuzz_kernel_cache.py --ignore=tests/test_matrix_tools.py \
      --deselect=tests/test_fuzz.py::test_option_parser_libfuzzer_short_run \
      --deselect=tests/test_fuzz.py::test_graph_check_mutation_fuzz_short_run \
      --deselect=tests/test_fuzz_models.py::test_model_fuzz_run --ignore=tests/test_soak.py \
      --deselect=tests/test_sanitizers.py::test_valgrind_create_run_destroy_loses_nothing_of_ours "$@" || rc=$?
    [ "$rc" -eq 0 ] || [ "$rc" -eq 5 ]
  }
  step litert "ai_edge_litert (.venv-litert)" litert "$@"
fi
if [ "$run_matrix" = 1 ]; then
  step matrix "portability matrix (tools/run_matrix.sh)" env TFLITE_GPU_MATRIX_PYTHON=$venv/bin/python tools/run_matrix.sh
fi
status=0
for i in "${!pids[@]}"; do
  wait "${pids[$i]}" || { status=1; echo "== FAILED: ${names[$i]}"; }
done
echo "== all steps: $SECONDS s"
exit $status
