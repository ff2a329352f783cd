"""Smoke test of the benchmark (python -m tflite_gpu bench): one tiny
single-op model, a couple of iterations, the report's structure and sanity
of its numbers.  Timings themselves are not judged."""

import json

import numpy as np
import pytest

from tflite_gpu import _capi, bench, cli
from tflite_gpu.model_builder import ModelBuilder

# 1x8x8x4 -> 3x3 conv -> 1x8x8x8: 2 * 8*8*8 * 3*3*4 FLOPs (bias not counted).
CONV_FLOPS = 2 * 8 * 8 * 8 * 3 * 3 * 4
FIRST_RESULT = ("xnnpack", "fp16")


def _conv_model():
    rng = np.random.default_rng(0)
    mb = ModelBuilder()
    x = mb.add_input([1, 8, 8, 4])
    w = mb.add_tensor([8, 3, 3, 4], data=rng.standard_normal((8, 3, 3, 4)).astype(np.float32))
    b = mb.add_tensor([8], data=rng.standard_normal(8).astype(np.float32))
    y = mb.add_tensor([1, 8, 8, 8])
    mb.add_op("CONV_2D", [x, w, b], [y], dict(padding="SAME"))
    mb.mark_output(y)
    return mb.build()


def _custom_op_model():
    """A model neither the CPU interpreter nor the delegate can run."""
    mb = ModelBuilder()
    x = mb.add_input([1, 4, 4, 4])
    y = mb.add_tensor([1, 4, 4, 4])
    mb.add_op("CUSTOM:NoSuchOp", [x], [y])
    mb.mark_output(y)
    return mb.build()


@pytest.fixture(scope="module")
def conv_path(tmp_path_factory):
    p = tmp_path_factory.mktemp("bench") / "conv.tflite"
    p.write_bytes(_conv_model())
    return p


@pytest.fixture(scope="module")
def report(conv_path):
    # A cold first result compiles every OpenCL program (~1 s): one CPU and
    # one delegate configuration keep the test fast.
    return bench.run_bench([conv_path], warmup=1, iterations=3, progress=False, first_result=FIRST_RESULT,
                           profile=hasattr(_capi, "delegate_profile"))


def test_flops_convention():
    flops = bench.count_flops(_conv_model())
    assert flops["total"] == CONV_FLOPS
    assert flops["by_op"] == {"CONV_2D": CONV_FLOPS}


def test_report_numbers(report):
    report = json.loads(json.dumps(report))  # what --json writes
    assert report["machine"]["cores"] >= 1 and report["machine"]["cpu"]
    assert report["device"]["name"]
    assert report["settings"]["iterations"] == 3
    (m,) = report["models"]
    assert m["model"] == "conv" and m["cpu_reference"] is True
    assert m["flops"]["total"] == CONV_FLOPS
    assert set(m["configs"]) == set(bench.CONFIGS)
    for name, c in m["configs"].items():
        assert c["status"] == "ok", (name, c.get("error"))
        assert c["iterations"] == 3
        assert 0 < c["min_ms"] <= c["median_ms"] <= c["p90_ms"]
        assert c["ratio_to_xnnpack"] > 0 and c["gflops_per_s"] > 0
        if name in FIRST_RESULT:
            assert c["first_result_cold_s"] > 0
            if name in bench.DELEGATE_CONFIGS:
                assert c["first_result_warm_s"] > 0
        else:
            assert "first_result_cold_s" not in c
    assert m["configs"]["xnnpack"]["ratio_to_xnnpack"] == pytest.approx(1.0)
    for name in bench.DELEGATE_CONFIGS:
        c = m["configs"][name]
        assert c["delegated_nodes"] == 1 and c["cpu_nodes"] == 0
        assert c["dispatches"] > 0
        assert c["execution"] == "kernels" and c["launches"] == c["dispatches"] and c["fallbacks"] == []
        assert c["arena_bytes"] >= c["live_peak_bytes"] > 0
        if report["settings"]["profile"]:
            assert c["profile"]["top"], c.get("profile_error")
            assert all(k["ms_per_invoke"] >= 0 and k["calls_per_invoke"] > 0 for k in c["profile"]["top"])
    geo = report["geomean_fp32_over_xnnpack"]
    assert geo == pytest.approx(m["configs"]["fp32"]["ratio_to_xnnpack"]) and report["geomean_models"] == 1


def test_reports_how_the_last_invoke_ran(conv_path):
    """execution=persistent: one launch per invoke, reported as it ran, in the JSON and the table."""
    r = bench.run_bench([conv_path], configs=("xnnpack", "fp32"), warmup=1, iterations=2, progress=False,
                        first_result=False, extra_options={"execution": "persistent"}, isolated=False)
    c = r["models"][0]["configs"]["fp32"]
    assert c["status"] == "ok" and (c["execution"], c["launches"], c["fallbacks"]) == ("persistent", 1, [])
    assert "| 1 (persistent) |" in bench.to_markdown(r)


def test_markdown(report):
    md = bench.to_markdown(report)
    for needle in ("**Machine**", "cores", "**OpenCL device**", report["device"]["name"], "**Date**",
                   "Geometric mean of delegate FP32 / XNNPACK"):
        assert needle in md
    rows = [line for line in md.splitlines() if line.startswith("| conv |")]
    assert len(rows) == 1 + len(bench.CONFIGS)  # summary row + one detail row per configuration
    for label in bench.LABELS.values():
        assert any(f"| {label} |" in r for r in rows)


def test_png(report, tmp_path):
    pytest.importorskip("matplotlib")
    out = tmp_path / "chart.png"
    bench.write_png(report, out)
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_unrunnable_model_is_reported(tmp_path):
    p = tmp_path / "custom.tflite"
    p.write_bytes(_custom_op_model())
    r = bench.run_bench([p], warmup=0, iterations=1, first_result=False, progress=False)
    (m,) = r["models"]
    assert m["cpu_reference"] is False and "NoSuchOp" in m["note"]
    assert all(c["status"] == "error" and "median_ms" not in c for c in m["configs"].values())
    assert r["geomean_fp32_over_xnnpack"] is None
    assert "n/a" in bench.to_markdown(r)


def test_cli(conv_path, tmp_path, capsys):
    js, md = tmp_path / "o.json", tmp_path / "o.md"
    rc = cli.main(["bench", str(conv_path), "--warmup", "1", "--iterations", "2", "--no-first-result",
                   "--configs", "xnnpack,fp16", "--no-progress", "--json", str(js), "--markdown", str(md)])
    assert rc == 0
    data = json.loads(js.read_text())
    assert set(data["models"][0]["configs"]) == {"xnnpack", "fp16"}
    assert data["models"][0]["configs"]["fp16"]["median_ms"] > 0
    assert "| conv |" in md.read_text() and "| conv |" in capsys.readouterr().out


def test_coldstart_tool_child(conv_path):
    """tools/bench_coldstart.py times each start in a child process whose
    errors come back as data; a child that no longer imports (it once called
    a function the package had moved) would leave its table all "error"."""
    import importlib.util
    import pathlib

    import tflite_gpu

    tool = pathlib.Path(__file__).resolve().parent.parent / "tools" / "bench_coldstart.py"
    spec = importlib.util.spec_from_file_location("bench_coldstart", tool)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    out = mod.run(tflite_gpu.library_path(), conv_path, {})
    assert "error" not in out, out
    assert 0 < out["interpreter"] <= out["first"] <= out["until_freed"]
