"""The portability matrix's own tools (tools/run_matrix.sh and helpers,
tools/gpu_run.sh): the Oclgrind report scanner on the formats Oclgrind
prints (and, where Oclgrind is registered, on a report it really makes), the
op-test sampler, the pytest plugin, and the GPU-run summary."""
from __future__ import annotations

import json
import os
import pathlib
import re
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
TOOLS = ROOT / "tools"
sys.path.insert(0, str(TOOLS))

import matrix_sample  # noqa: E402
import oclgrind_scan  # noqa: E402

# Reports as Oclgrind 21.10 prints them (captured from provoked kernels).
OCLGRIND_LOG = """\
== matrix test: tests/test_a.py::test_oob

Oclgrind - OpenCL runtime error detected
\tFunction: clGetDeviceInfo
\tError:    CL_INVALID_VALUE
\tFor argument 'param_name'


Invalid write of size 4 at global memory address 0x1000000000100
\tKernel: oob
\tEntity: Global(60,0,0) Local(12,0,0) Group(3,0,0)
\t  store float %add, float addrspace(1)* %arrayidx3, align 4, !dbg !56, !tbaa !49
\tAt line 2 (column 82) of input.cl:
\t  __kernel void oob(__global float* a, int n) { int i = get_global_id(0); a[i + n] = a[i] + 1.0f; }
\t

== matrix result: tests/test_a.py::test_oob passed

== matrix done: tests/test_a.py::test_oob

== matrix test: tests/test_a.py::test_race

Write-write data race at global memory address 0x1000000000002
\tKernel: race
\t
\tFirst entity:  Global(1,0,0) Local(1,0,0) Group(0,0,0)
\t  store float %conv, float addrspace(1)* %a, align 4
\tAt line 3 (column 46) of input.cl:
\t  __kernel void race(__global float* a) { a[0] = (float)get_global_id(0); }
\t

Work-group divergence detected (barrier)
\tKernel:     div
\tWork-group: (0,0,0)
\tOnly 3 out of 16 work-items executed barrier

Oclgrind - OpenCL runtime error detected
\tFunction: clEnqueueNDRangeKernel
\tError:    CL_INVALID_WORK_GROUP_SIZE
\tlocal_work_size[0]=16 does not divide global_work_size[0]=60

== matrix done: tests/test_a.py::test_race

== matrix test: tests/test_a.py::test_crash

OCLGRIND FATAL ERROR (./src/plugins/Uninitialized.cpp:1805)
Unsupported instruction: freeze
\tKernel: bhwc_to_phwc4
Fatal Python error: Segmentation fault
"""


def test_scan_finds_each_kind_and_names_the_test():
    reports, ignored, crashes = oclgrind_scan.scan(OCLGRIND_LOG.splitlines(keepends=True))
    kinds = [(r["kind"], r["test"].split("::")[-1], r["kernel"]) for r in reports]
    assert kinds == [("invalid access", "test_oob", "oob"), ("data race", "test_race", "race"),
                     ("divergence", "test_race", "div"), ("api", "test_race", "clEnqueueNDRangeKernel"),
                     ("fatal", "test_crash", ""), ("unsupported", "test_crash", "bhwc_to_phwc4")]
    assert ignored == 1  # pyopencl's query of a parameter an OpenCL 1.2 device lacks
    assert [c["test"].split("::")[-1] for c in crashes] == ["test_crash"]
    assert reports[0]["location"].startswith("At line 2")


def test_scan_exit_status_and_tolerated_tests(tmp_path):
    log = tmp_path / "log"
    log.write_text(OCLGRIND_LOG)
    assert oclgrind_scan.main([str(log), "--json", str(tmp_path / "s.json"), "--examples", "0"]) == 1
    assert json.loads((tmp_path / "s.json").read_text())["reports"] == 6
    tolerate = [f"--tolerate=tests/test_a.py::{t}" for t in ("test_oob", "test_race", "test_crash")]
    assert oclgrind_scan.main([str(log), "--examples", "0", *tolerate]) == 0
    clean = tmp_path / "clean"
    clean.write_text("== matrix test: t\n.\n== matrix done: t\n")
    assert oclgrind_scan.main([str(clean)]) == 0


def _oclgrind_dir():
    d = ROOT / "build" / "icd" / "oclgrind"
    return d if (d / "oclgrind.icd").is_file() else None


@pytest.mark.skipif(_oclgrind_dir() is None, reason="Oclgrind not registered (tools/opencl_impls.sh oclgrind)")
def test_scan_reads_a_real_oclgrind_report(tmp_path):
    """An out-of-bounds write under the real Oclgrind, through pyopencl."""
    pytest.importorskip("pyopencl")
    script = tmp_path / "oob.py"
    script.write_text(
        "import numpy as np, pyopencl as cl\n"
        "ctx = cl.create_some_context(interactive=False); q = cl.CommandQueue(ctx)\n"
        "src = '__kernel void oob(__global float* a, int n) { a[get_global_id(0) + n] = 1.0f; }'\n"
        "prg = cl.Program(ctx, src).build()\n"
        "a = cl.Buffer(ctx, cl.mem_flags.READ_WRITE | cl.mem_flags.COPY_HOST_PTR, hostbuf=np.zeros(16, np.float32))\n"
        "prg.oob(q, (16,), (8,), a, np.int32(2)); q.finish()\n")
    env = dict(os.environ, OCL_ICD_VENDORS=str(_oclgrind_dir()), OCLGRIND_CHECK_API="1", PYOPENCL_NO_CACHE="1")
    r = subprocess.run([sys.executable, str(script)], env=env, capture_output=True, text=True, timeout=120)
    log = tmp_path / "log"
    log.write_text(r.stdout + r.stderr)
    reports, _, _ = oclgrind_scan.scan(log.read_text().splitlines(keepends=True))
    assert any(x["kind"] == "invalid access" and x["kernel"] == "oob" for x in reports), r.stderr[-2000:]


def _records(path, rows):
    path.write_text("".join(json.dumps({"nodeid": n, "kernels": dict.fromkeys(k, 1), "seconds": s,
                                        "outcome": o}) + "\n" for n, k, s, o in rows))
    return path


def test_sample_covers_every_kernel_cheapest_first(tmp_path):
    rec = _records(tmp_path / "r.jsonl", [
        ("t::big", ["a", "b", "c"], 5.0, "passed"),
        ("t::a", ["a"], 0.1, "passed"),
        ("t::bc", ["b", "c"], 0.2, "passed"),
        ("t::d_failed", ["d"], 0.1, "failed"),     # a failing test is not a sample
        ("t::none", [], 0.0, "passed"),
    ])
    ids, universe = matrix_sample.cover(matrix_sample.load(rec))
    assert ids == ["t::a", "t::bc"] and universe == {"a", "b", "c"}
    ids, _ = matrix_sample.cover(matrix_sample.load(rec), extra_every=4)
    assert ids == ["t::big", "t::a", "t::bc", "t::none"]
    ran = _records(tmp_path / "s.jsonl", [("t::a", ["a"], 0.1, "passed")])
    assert matrix_sample.main(["check", str(rec), str(ran)]) == 1
    ran = _records(tmp_path / "s.jsonl", [("t::a", ["a"], 0.1, "passed"), ("t::bc", ["b", "c"], 1, "passed")])
    assert matrix_sample.main(["check", str(rec), str(ran)]) == 0


def _pytest(tmp_path, *args):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(TOOLS), os.environ.get("PYTHONPATH")])))
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "matrix_plugin",
                           "--rootdir", str(tmp_path), *args], cwd=tmp_path, env=env, capture_output=True,
                          text=True, timeout=300)


def test_plugin_selects_and_marks(tmp_path):
    (tmp_path / "test_x.py").write_text("import pytest\n@pytest.mark.parametrize('i', range(6))\n"
                                        "def test_x(i):\n    assert i != 4\n")
    sel = tmp_path / "sel.txt"
    sel.write_text("# a comment\ntest_x.py::test_x[1]\ntest_x.py::test_x[4]\n")
    r = _pytest(tmp_path, "-s", "--matrix-markers", f"--matrix-select={sel}", "test_x.py")
    assert "1 failed, 1 passed" in r.stdout, r.stdout
    assert "== matrix test: test_x.py::test_x[1]" in r.stderr
    assert "== matrix result: test_x.py::test_x[4] failed" in r.stderr
    r = _pytest(tmp_path, "--matrix-every=2", "test_x.py")  # 0, 2, 4
    assert "1 failed, 2 passed, 3 deselected" in r.stdout, r.stdout
    r = _pytest(tmp_path, "--matrix-every=2:1", "test_x.py")  # 1, 3, 5
    assert "3 passed, 3 deselected" in r.stdout, r.stdout
    sel.write_text("test_x.py::test_x[9]\n")
    r = _pytest(tmp_path, f"--matrix-select={sel}", "test_x.py")
    assert r.returncode != 0 and "not collected" in r.stderr


def test_plugin_records_the_kernels_a_test_launches(tmp_path):
    """One op test through the delegate: its conv and layout kernels."""
    rec = tmp_path / "k.jsonl"
    case = "tests/test_ops.py::test_op_matches_cpu[conv-1x7x9x1-k1x1-s1-SAME-d1-NONE-o5]"
    r = _pytest(ROOT, f"--matrix-kernels={rec}", case)
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
    (row,) = matrix_sample.load(rec)
    assert row["nodeid"] == case and row["outcome"] == "passed"
    assert any(k.startswith("conv2d") for k in row["kernels"]), row


def test_gpu_summary_reads_a_run(tmp_path):
    (tmp_path / "machine.txt").write_text("date: 2026-01-01\ngpu: NVIDIA H100, 580.1, 80 GiB\n")
    (tmp_path / "devices.json").write_text(json.dumps([{"name": "NVIDIA H100", "platform": "NVIDIA CUDA"}]))
    (tmp_path / "ops-gpu.xml").write_text('<testsuites><testsuite tests="3" failures="1" errors="0" skipped="0" '
                                          'time="2"/></testsuites>')
    (tmp_path / "models-gpu-fp32.json").write_text(json.dumps([
        {"model": "/m/a.tflite", "passed": True, "outputs": [{"rel_l2": 1e-6}]}]))
    bench = {"models": [{"model": "a", "flops": {"total": 2e9},
                         "configs": {"xnnpack": {"median_ms": 10.0}, "fp32": {"median_ms": 0.5}}}]}
    (tmp_path / "bench-gpu.json").write_text(json.dumps(bench))
    bench["models"][0]["configs"]["fp32"]["median_ms"] = 2.0
    (tmp_path / "bench-cpu.json").write_text(json.dumps(bench))
    r = subprocess.run([sys.executable, str(TOOLS / "gpu_summary.py"), str(tmp_path)], capture_output=True, text=True)
    assert r.returncode == 1  # an op test failed
    assert "# tflite-gpu on NVIDIA H100" in r.stdout
    assert "| gpu | 2 | 1 | 0 | 2 |" in r.stdout
    assert "| a | – | – | PASS 1.0e-06 | – |" in r.stdout
    assert "gpu set FP32 >= 10x XNNPACK (2 threads) on the five largest (a): **met** (20.0x)" in r.stdout
    assert "gpu set FP32 faster than the cpu set on every model: **met**" in r.stdout


@pytest.mark.parametrize("script", ["run_matrix.sh", "opencl_impls.sh", "gpu_run.sh", "run_tests.sh", "setup.sh"])
def test_shell_scripts_parse(script):
    subprocess.run(["bash", "-n", str(TOOLS / script)], check=True)


def test_matrix_lists_its_pieces():
    r = subprocess.run([sys.executable, str(TOOLS / "matrix.py"), "--list", "--python", sys.executable],
                       cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    for ks in ("cpu", "gpu"):
        assert any(f"pocl/{ks}/FP32+FP16/op tests (all; kernel record)" in line for line in lines)
        assert any(f"oclgrind/{ks}/FP32+FP16/op tests (sample; races)" in line for line in lines)
    for prec in ("FP32", "FP16"):
        assert any(f"pocl/cpu/{prec}/14 models" in line for line in lines)
    # Halves of the 14: the GPU set on PoCL and Intel (each (model, precision)
    # once, halves swapped between the two), the CPU set on Intel.
    halves = {}
    for line in lines:
        m = re.search(r"(pocl|intel)/(cpu|gpu)/(FP32|FP16)/7 of 14 models \((1st|2nd)", line)
        if m:
            halves[m.group(1), m.group(2), m.group(3)] = m.group(4)
    assert len(halves) == 6, lines
    assert halves["pocl", "gpu", "FP32"] != halves["pocl", "gpu", "FP16"] != halves["intel", "gpu", "FP16"]
    assert halves["intel", "cpu", "FP32"] != halves["intel", "cpu", "FP16"]
    # The uninit pass on the CPU set gates nothing: only with --full.
    assert not any("oclgrind/cpu" in line and "uninit" in line for line in lines)
