"""tools/gpu_run.sh and tools/gpu_summary.py without a GPU: the sources
checksum is the same in every locale, the run refuses bad steps and a
missing bundle at once, and the summary never crashes on what a step may
leave (error rows, the old error object, half a file, nothing)."""
from __future__ import annotations

import json
import os
import pathlib
import re
import shutil
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
GPU_RUN = ROOT / "tools" / "gpu_run.sh"
SUMMARY = ROOT / "tools" / "gpu_summary.py"
sys.path.insert(0, str(ROOT / "tools"))

import gpu_profile  # noqa: E402

# The checksum as it was before LC_ALL=C: `sort -z` in the caller's locale.
OLD_SUM = (r"""(find delegate_c opencl_kernels -type f \( -name '*.c' -o -name '*.h' -o -name '*.cl' """
           r"""-o -name Makefile -o -name '*.py' \) ! -name kernels_embedded.h -print0 | sort -z | """
           r"""xargs -0 sha256sum) | sha256sum | cut -c1-16""")


@pytest.fixture(scope="module")
def locale_env(tmp_path_factory):
    """An environment whose LC_ALL sorts unlike C (en_US.UTF-8: "_" is
    ignored at the first level), compiled with localedef when the system
    has not got it."""
    if shutil.which("sort") is None:
        pytest.skip("no sort")
    env = dict(os.environ, LC_ALL="en_US.UTF-8")
    probe = subprocess.run(["locale", "-a"], capture_output=True, text=True).stdout.lower().split()
    if "en_us.utf8" not in probe:
        if shutil.which("localedef") is None:
            pytest.skip("no en_US.UTF-8 locale and no localedef")
        locpath = tmp_path_factory.mktemp("locale")
        r = subprocess.run(["localedef", "-i", "en_US", "-f", "UTF-8", str(locpath / "en_US.UTF-8")],
                           capture_output=True, text=True)
        if not (locpath / "en_US.UTF-8").is_dir():
            pytest.skip(f"localedef could not make en_US.UTF-8: {r.stderr[-200:]}")
        env["LOCPATH"] = str(locpath)
    words = "a_b\nab\nA_c\n"
    c = subprocess.run(["sort"], input=words, capture_output=True, text=True, env=dict(env, LC_ALL="C")).stdout
    loc = subprocess.run(["sort"], input=words, capture_output=True, text=True, env=env).stdout
    if c == loc:
        pytest.skip("en_US.UTF-8 sorts like C here")
    return env


def _sum(env, root=ROOT, cwd=None):
    r = subprocess.run(["bash", str(root / "tools" / "gpu_run.sh"), "sum"], capture_output=True, text=True,
                       env=env, cwd=cwd or "/", timeout=60)
    assert r.returncode == 0, r.stderr
    value = r.stdout.strip()
    assert len(value) == 16 and all(ch in "0123456789abcdef" for ch in value), value
    return value


def test_sources_sum_ignores_the_locale(locale_env, tmp_path):
    """A tree whose file names sort differently in C and en_US: the old
    checksum differs between the two locales, sources_sum does not."""
    tree = tmp_path / "tree"
    (tree / "tools").mkdir(parents=True)
    shutil.copy(GPU_RUN, tree / "tools" / "gpu_run.sh")
    for name in ("a_b.c", "ab.c", "A_c.h", "aa.cl"):
        (tree / "delegate_c").mkdir(exist_ok=True)
        (tree / "delegate_c" / name).write_text(f"/* {name} */\n")
    (tree / "opencl_kernels").mkdir()
    (tree / "opencl_kernels" / "x_y.cl").write_text("kernel void k(void) {}\n")
    c_env = dict(locale_env, LC_ALL="C")

    def old(env):
        return subprocess.run(["bash", "-c", OLD_SUM], cwd=tree, env=env, capture_output=True, text=True).stdout

    assert old(c_env) != old(locale_env), "the test tree should expose the locale-dependent order"
    assert _sum(c_env, tree) == _sum(locale_env, tree)
    # The same from any working directory: the paths summed are relative to the root.
    assert _sum(c_env, tree, cwd=tmp_path) == _sum(c_env, tree, cwd=tree / "delegate_c")


def test_sources_sum_of_this_tree_ignores_the_locale(locale_env):
    assert _sum(dict(locale_env, LC_ALL="C")) == _sum(locale_env) == _sum(dict(locale_env, LC_ALL="C.UTF-8"))


def test_run_refuses_unknown_steps_and_a_missing_bundle(tmp_path):
    env = dict(os.environ, GPU_RUN_STEPS="devices nonsense")
    r = subprocess.run(["bash", str(GPU_RUN), "run", str(tmp_path / "out"), str(tmp_path / "nothing")],
                       capture_output=True, text=True, env=env, timeout=60)
    assert r.returncode == 2 and "unknown step nonsense" in r.stderr
    env["GPU_RUN_STEPS"] = "profile"
    r = subprocess.run(["bash", str(GPU_RUN), "run", str(tmp_path / "out"), str(tmp_path / "nothing")],
                       capture_output=True, text=True, env=env, timeout=60)
    assert r.returncode == 2 and "no bundle" in r.stderr


def test_readme_gives_every_step_as_a_command():
    """docs/development.md's GPU section: prepare, then each step of the script a
    plain `GPU_RUN_STEPS=step tools/gpu_run.sh run OUTDIR` command."""
    steps = re.search(r'^ALL_STEPS="([^"]+)"', GPU_RUN.read_text(), flags=re.M).group(1).split()
    readme = (ROOT / "docs" / "development.md").read_text()
    section = readme.split("## Running on an NVIDIA GPU machine", 1)[1].split("\n## ", 1)[0]
    assert "tools/gpu_run.sh prepare" in section and "rsync" in section
    missing = [s for s in steps if not re.search(rf"^\s*GPU_RUN_STEPS={s} +tools/gpu_run.sh run OUTDIR", section,
                                                 flags=re.M)]
    assert not missing, f"steps without a command in docs/development.md: {missing}"


# ----------------------------------------------------------------------------- gpu_summary.py


def _summary(d):
    r = subprocess.run([sys.executable, str(SUMMARY), str(d)], capture_output=True, text=True, timeout=60)
    assert "Traceback" not in r.stderr + r.stdout, r.stderr
    assert r.returncode in (0, 1), (r.returncode, r.stderr)
    assert r.stdout.startswith("# tflite-gpu on ")
    return r.returncode, r.stdout


def _row(model, passed=True, rel=1e-5):
    return {"model": f"/bundle/models/{model}.tflite", "passed": passed, "verdict": "PASS" if passed else "FAIL",
            "delegated_nodes": 10, "cpu_nodes": 0, "partitions": 1,
            "outputs": [{"name": "out", "rel_l2": rel, "passed": passed}]}


def _bench_report(model, threads, configs):
    return {"settings": {"threads": threads, "configs": list(configs)},
            "models": [{"model": model, "flops": {"total": 2e8}, "cpu_reference": True,
                        "configs": {c: {"status": "ok", "median_ms": ms, "dispatches": 50}
                                    for c, ms in configs.items()}}]}


def _write(d, name, text):
    p = d / name
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(text if isinstance(text, str) else json.dumps(text))


def _machine(d):
    _write(d, "machine.txt",
           "date: 2026-11-27T00:00:00Z\ngpu: NVIDIA H200, 580.159.04, 143771 MiB\ncpu: Xeon, 16 cores\n")
    _write(d, "devices.json", [{"name": "NVIDIA H200", "platform": "NVIDIA CUDA", "local_mem_bytes": 49152,
                                "compute_units": 132}])


def test_summary_of_a_clean_run(tmp_path):
    _machine(tmp_path)
    _write(tmp_path, "steps.tsv", "devices\trunning\t0\t2\t\ndevices\tdone\t3\t2\t0\n"
                                  "models\trunning\t0\t2\t\nmodels\tdone\t40\t2\t0\n")
    for ks in ("cpu", "gpu"):
        for p in ("fp32", "fp16"):
            for m in ("face_landmark", "hand_recrop"):
                _write(tmp_path, f"models-{ks}-{p}/{m}.json", [_row(m)])
            _write(tmp_path, f"models-{ks}-{p}/times.tsv", "face_landmark\t9\t0\nhand_recrop\t7\t0\n")
    _write(tmp_path, "bench-gpu/face_landmark.json",
           _bench_report("face_landmark", 2, {"xnnpack": 0.8, "fp32": 0.5, "fp16": 0.4}))
    _write(tmp_path, "bench-xnnpack-all/face_landmark.json", _bench_report("face_landmark", 16, {"xnnpack": 0.3}))
    rc, text = _summary(tmp_path)
    assert rc == 0, text
    assert "NVIDIA H200" in text and "| face_landmark | PASS 1.0e-05 |" in text
    assert "XNNPACK 16 thr" in text and "1.6x / 2.0x" in text
    assert "| models | done | 40 | 2 | 20.0 | 0 |" in text


def test_summary_of_error_rows_old_error_objects_and_truncated_files(tmp_path):
    _machine(tmp_path)
    # check, new style: one row per model, an error row among them
    _write(tmp_path, "models-gpu-fp32.json",
           [_row("face_landmark"),
            {"model": "/bundle/models/pose_detection.tflite",
             "error": {"exit_code": 4, "kind": "model", "message": "cannot run this model: build log: | x"}}])
    # check, old style: one error object for the whole call
    _write(tmp_path, "models-cpu-fp32.json",
           {"error": {"exit_code": 4, "kind": "model", "message": "variadic macros not supported"}})
    # per model files: truncated, empty (the deadline), a failed check
    _write(tmp_path, "models-gpu-fp16/face_landmark.json", '[{"model": "face_landmark", "pass')
    _write(tmp_path, "models-gpu-fp16/hand_recrop.json", "")
    _write(tmp_path, "models-gpu-fp16/hand_recrop.log", "INFO: x\ngpu_run: deadline reached\n")
    _write(tmp_path, "models-gpu-fp16/times.tsv", "face_landmark\t3\t5\nhand_recrop\t0\t124\n")
    _write(tmp_path, "models-cpu-fp16/iris_landmark.json", [_row("iris_landmark", passed=False, rel=0.3)])
    _write(tmp_path, "models-cpu-fp16/odd.json", [17, None, {"no": "model"}])
    # bench: an error object, a truncated report, a configuration error
    _write(tmp_path, "bench-gpu/pose_detection.json",
           {"error": {"exit_code": 3, "kind": "no-opencl", "message": "none"}})
    _write(tmp_path, "bench-gpu/face_landmark.json", '{"models": [{"model": "face_l')
    _write(tmp_path, "bench-gpu/face_landmark.log", "bench: killed\n")
    rep = _bench_report("hand_recrop", 2, {"xnnpack": 1.0})
    rep["models"][0]["configs"]["fp32"] = {"status": "error", "error": "clEnqueueNDRangeKernel failed"}
    _write(tmp_path, "bench-gpu/hand_recrop.json", rep)
    # profile: an error row; steps: one still running (the call was cut)
    _write(tmp_path, "profile.json", {"settings": {"kernel_set": "gpu"}, "models": [
        {"model": "face_landmark", "error": {"kind": "crash", "message": "the process died of SIGSEGV"}},
        {"model": "hand_recrop", "dispatches": 49, "host_ms": {"median": 1.0},
         "gpu": {"ms_per_invoke": 0.4, "us_per_launch": 8.0, "kernels": [{"kernel": "conv", "ms_per_invoke": 0.2,
                                                                           "calls_per_invoke": 8}]},
         "first_result_s": 1.5, "interpreter_s": 1.0, "first_invoke_s": 0.5}]})
    _write(tmp_path, "steps.tsv", "models\trunning\t0\t14\t\n")
    _write(tmp_path, "ops-gpu.xml", "<testsuites><testsuite tests='3' failures='1' errors='0' skipped='0' time='2'>"
                                     "<testcase classname='tests.test_ops' name='test_add[1]'><failure/></testcase>"
                                     "</testsuite></testsuites>")
    rc, text = _summary(tmp_path)
    assert rc == 1
    assert "pose_detection, gpu FP32: **model**, exit 4: cannot run this model: build log: \\| x" in text
    assert "variadic macros not supported" in text
    assert "**ERROR** (deadline)" in text and "gpu_run: deadline reached" in text
    assert "**ERROR** (unreadable)" in text
    assert "**FAIL** 3.0e-01" in text
    assert "no-opencl" in text and "clEnqueueNDRangeKernel failed" in text
    assert "the process died of SIGSEGV" in text and "| hand_recrop | 49 | 1.000 | 0.400 |" in text
    assert "running, or cut off" in text and "test_add[1]" in text


@pytest.mark.parametrize("files", [
    {},  # nothing: a run cut before its first step
    {"machine.txt": "gar\x00bage", "devices.json": "{", "steps.tsv": "\t\t\n", "profile.json": "[1, 2"},
    {"devices.json": '"text"', "profile.json": '{"models": [{"model": 3, "gpu": 7, "host_ms": "x"}]}',
     "models-gpu-fp32.json": '"just a string"', "bench-gpu.json": "[]", "ops-cpu.xml": "<testsuite",
     "ops-gpu.log": "collected 0 items\n"},
    {"bench-cpu.json": '{"models": [{"model": "m", "configs": {"fp32": {"median_ms": "NaN"}}, "flops": 3}]}',
     "models-gpu-fp16.json": '[{"model": null, "passed": true, "outputs": [{"rel_l2": "inf"}, 5]}]',
     "steps.tsv": "bench\tdone\tx\t0\t1\n"},
    {"execution.json": '[{"model": "m", "modes": {"a": {"median_ms": 1, "setup_s": "x", "grid": [1]}, "b": 7}}, 3]'},
    {"execution.json": '[{"model": "m", "modes": {"a": {"setup_s": 1, "grid": 2}, "b": {"grid": "3"}}}]'},
])
def test_summary_never_crashes(tmp_path, files):
    for name, text in files.items():
        _write(tmp_path, name, text)
    _summary(tmp_path)


def test_summary_usage(tmp_path):
    r = subprocess.run([sys.executable, str(SUMMARY)], capture_output=True, text=True)
    assert r.returncode == 2
    r = subprocess.run([sys.executable, str(SUMMARY), str(tmp_path / "missing")], capture_output=True, text=True)
    assert r.returncode == 2 and "Traceback" not in r.stderr


def test_profile_markdown_of_partial_reports():
    for report in (None, {}, {"models": None}, {"models": [None, {"model": "m"}, {"model": "e", "error": "x"}]},
                   {"settings": [], "models": [{"model": "m", "dispatches": 3, "host_ms": {"median": None},
                                                "gpu": {"kernels": [{"kernel": "k"}]}}]}):
        text = gpu_profile.to_markdown(report)
        assert "| model |" in text


def test_profile_markdown_lists_the_slowest_vm_phases():
    """Timed VM phases (persistent on a GPU with a timer): their sum and the
    slowest, with their kernel, TFLite node and work-items; untimed phases
    (stepped, no timer) add no line."""
    phases = [{"kernel": f"k{i}", "tflite_node": i, "work_items": 64 * i, "us_per_invoke": float(i)}
              for i in range(1, 8)]
    gpu = {"kernels": [], "phases": phases}
    report = {"models": [{"model": "m", "dispatches": 7, "gpu": gpu},
                         {"model": "untimed", "dispatches": 7, "gpu": {"phases": [{"kernel": "k", "work_items": 1}]}}]}
    text = gpu_profile.to_markdown(report)
    assert "- m: 7 phases, 0.028 ms; k7 n7 448: 7.0; k6 n6 384: 6.0; k5 n5 320: 5.0; k4 n4 256: 4.0; " \
           "k3 n3 192: 3.0\n" in text + "\n", text
    assert "untimed" not in text.split("VM phases", 1)[1], text
    assert "VM phases" not in gpu_profile.to_markdown({"models": report["models"][1:]})


def test_summary_of_the_phases_step(tmp_path):
    """The phases step's report (phases/profile.json) is a section of its
    own, its slowest phases listed; a failed model is a problem."""
    _machine(tmp_path)
    phases = [{"kernel": "conv2d_x4", "tflite_node": 4, "work_items": 288, "us_per_invoke": 31.5}]
    _write(tmp_path, "phases/profile.json", {"settings": {"kernel_set": "cpu"}, "models": [
        {"model": "pose_landmark_full", "dispatches": 84, "gpu": {"kernels": [], "phases": phases}}]})
    rc, text = _summary(tmp_path)
    section = text.split("## VM phases, execution=persistent", 1)[1]
    assert "- pose_landmark_full: 1 phases, 0.032 ms; conv2d_x4 n4 288: 31.5" in section, text
    _write(tmp_path, "phases/profile.json", {"models": [{"model": "m", "error": {"kind": "crash", "message": "x"}}]})
    rc, text = _summary(tmp_path)
    assert rc == 1 and "phases: a model failed" in text, text


def test_summary_of_the_ab_step(tmp_path):
    """The ab step's bench_ab logs: each model's line and the geomean; a log
    cut before its geomean is listed as not clean."""
    _machine(tmp_path)
    line = ("palm_detection_lite                  xnnpack    7.51 ms  A    2.10 ms  B    1.90 ms  "
            "A/xnn  0.28  B/xnn  0.25  B/A  0.90")
    _write(tmp_path, "ab-dw-1x1.log", f"{line}\ngeomean over 1 models: A/xnnpack 0.280  B/xnnpack 0.253  B/A 0.905\n")
    _write(tmp_path, "ab-pinned-staging.log", "gpu_run: deadline reached, stopped: tools/bench_ab.py\n")
    rc, text = _summary(tmp_path)
    assert "## Passes A/B" in text and line in text and "B/A 0.905" in text, text
    assert "pinned-staging:" in text and "ab-pinned-staging.log: no geomean" in text, text
    assert rc != 0


def test_summary_of_the_vmcache_step(tmp_path):
    """bench_vm_cache's two tables (the first result, then where it goes)
    stay two tables, the line between them kept; a failed cell is a problem."""
    _machine(tmp_path)
    first = ("| model | CPU (s) | kernels (s) | x CPU |\n|---|---:|---:|---:|\n"
             "| hand_recrop (writes the VM file) | 0.01 | 3.20 | 320 |\n")
    where = ("Where the first result goes with no cache (s, median of the rounds): load_delegate, Interpreter + "
             "inputs, first invoke\n\n| model | kernels: load_delegate |\n|---|---:|\n| hand_recrop | 0.61 |\n")
    _write(tmp_path, "vmcache.log", "fetching\n" + first + "\n" + where)
    rc, text = _summary(tmp_path)
    section = text.split("## First result with the shared VM program", 1)[1]
    assert "| 320 |\n\nWhere the first result goes" in section, section
    assert "first invoke\n\n| model | kernels: load_delegate |" in section and "| hand_recrop | 0.61 |" in section
    assert "vmcache: no complete table" not in text, text
    _write(tmp_path, "vmcache.log", first.replace("3.20", "failed"))
    rc, text = _summary(tmp_path)
    assert "vmcache: no complete table" in text, text


def test_summary_of_the_execution_step(tmp_path):
    """bench_execution's JSON: the medians, then each mode's set-up seconds
    where the rows have them (a row without is a dash); a fallback is a problem."""
    _machine(tmp_path)
    modes = {"persistent": {"median_ms": 0.611, "dispatches": 33, "rel_l2": 1e-7, "setup_s": 3.25, "grid": 132},
             "tiles": {"median_ms": 0.5, "dispatches": 33, "rel_l2": 2e-7, "fallback": "a barrier timed out",
                       "grid": 264}}
    _write(tmp_path, "execution.json", [{"model": "face_detection_short_range", "modes": modes}])
    rc, text = _summary(tmp_path)
    assert "| face_detection_short_range | 0.611 (33) | 0.500 (33, fallback) | 2.00e-07 |" in text, text
    assert "Set-up per mode" in text and "| face_detection_short_range | 3.25 | – |" in text, text
    assert rc == 1 and "tiles fell back: a barrier timed out" in text, text
    # Grids that differ between modes (SUSTAINED_SPEED, or a switch) get a table; the same grid, none.
    assert "Grid per mode" in text and "| face_detection_short_range | 132 | 264 |" in text, text
    modes["tiles"]["grid"] = 132
    _write(tmp_path, "execution.json", [{"model": "face_detection_short_range", "modes": modes}])
    assert "Grid per mode" not in _summary(tmp_path)[1]


def test_bench_execution_keeps_the_models_it_finished(tmp_path):
    """tools/bench_execution.py (the execution step) writes its JSON after
    each model, so a run cut short keeps the rows it finished: here the
    second model is not a file. Each mode's outputs match the CPU
    interpreter's (the tool's own 1e-4 check)."""
    import bench_execution
    from op_cases.conv import _conv_case

    model, _, _ = _conv_case(1, 7, 9, 5, 17, 3, 3, 1, "SAME", 1, "RELU").make()
    path = tmp_path / "conv.tflite"
    path.write_bytes(model)
    out = tmp_path / "execution.json"
    with pytest.raises(Exception):
        bench_execution.main([str(path), str(tmp_path / "missing.tflite"), "--rounds", "2", "--json", str(out),
                              "--mode", "cpu:kernel_set=cpu", "--mode", "persistent:execution=persistent"])
    (row,) = json.loads(out.read_text())
    assert row["model"] == "conv" and set(row["modes"]) == {"cpu", "persistent"}, row
    assert all(m["rel_l2"] < 1e-4 for m in row["modes"].values()), row
    assert row["modes"]["persistent"]["launches"] == 1 and all(m["setup_s"] > 0 for m in row["modes"].values()), row
    assert row["modes"]["persistent"]["grid"] >= 1 and row["modes"]["cpu"]["grid"] is None, row
