"""bench's outputs (issue 13): the chart is drawn correctly or not at all
(with the reason), its footnote names what is left out and why, and the
report's JSON is strict."""
from __future__ import annotations

import json

import pytest

from cli_run import tiny_conv_model
from tflite_gpu import bench


def _report(configs=("xnnpack", "fp32"), custom_op_model=True):
    ok = {"status": "ok", "median_ms": 2.0}
    models = [{"model": "conv", "cpu_reference": True,
               "configs": {"xnnpack": dict(ok, median_ms=1.0), "fp32": dict(ok, ratio_to_xnnpack=2.0)}}]
    if custom_op_model:
        models.append({"model": "selfie", "cpu_reference": False,
                       "configs": {"xnnpack": {"status": "error", "error": "unresolved custom op"},
                                   "fp32": dict(ok, median_ms=3.0)}})
    return {"settings": {"configs": list(configs)}, "models": models, "machine": {"cpu": "test", "cores": 2},
            "device": {"name": "test device"}, "geomean_fp32_over_xnnpack": float("nan")}


def test_footnote_says_what_is_left_out_and_why():
    rows, missing = bench.chart_rows(_report())
    assert [r["model"] for r in rows] == ["conv"]
    assert missing == ["selfie (CPU XNNPACK failed)"]
    r = _report(configs=("xnnpack", "fp32", "fp16"))
    r["models"][0]["configs"]["fp16"] = {"status": "error", "error": "x"}
    assert "conv delegate FP16 (delegate FP16 failed)" in bench.chart_rows(r)[1]


def test_no_chart_without_anything_to_draw(tmp_path):
    r = _report()
    r["models"] = r["models"][1:]  # only the model the CPU cannot run
    out = tmp_path / "c.png"
    why = bench.write_png(r, out)
    assert "no model has a CPU XNNPACK latency" in why and "selfie" in why and not out.exists()
    assert "add xnnpack to --configs" in bench.write_png(_report(configs=("fp32",)), out)


def test_chart_is_drawn(tmp_path):
    pytest.importorskip("matplotlib")
    out = tmp_path / "c.png"
    assert bench.write_png(_report(), out) is None
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_write_outputs_skips_the_chart_with_a_reason(tmp_path):
    r = _report(configs=("fp32",))
    notes = []
    written = bench.write_outputs(r, tmp_path / "r.json", None, tmp_path / "c.png", warn=notes.append)
    assert written == [tmp_path / "r.json"] and not (tmp_path / "c.png").exists()
    assert "no chart written" in notes[0]
    doc = json.loads((tmp_path / "r.json").read_text(), parse_constant=lambda c: pytest.fail(f"{c} in JSON"))
    assert doc["geomean_fp32_over_xnnpack"] is None  # NaN became null


@pytest.mark.parametrize("phase,code,who", [("cpu:xnnpack setup", 4, "the CPU interpreter crashed"),
                                            ("delegate:fp32 invoke", 5, "the delegate crashed")])
def test_a_crashing_model_is_a_result(phase, code, who, tmp_path, capsys, monkeypatch):
    from tflite_gpu import cli, isolate

    def crash(job, args, on_message=None):
        raise isolate.Crashed(phase, -11)

    monkeypatch.setattr(isolate, "run", crash)
    md = tmp_path / "r.md"
    rc = cli.main(["bench", str(tiny_conv_model(tmp_path / "conv.tflite")), "--json", "-", "--markdown", str(md), "--no-progress"])
    cap = capsys.readouterr()
    assert rc == code, cap.err
    (m,) = json.loads(cap.out)["models"]  # the report, not an error: the run finished
    assert m["crash"]["phase"] == phase and who in m["note"] and "SIGSEGV" in m["note"]
    assert who in cap.err and "no configuration could run 1 model(s)" in cap.err
    text = md.read_text()
    assert "failed: " in text and who in text and "†" not in text  # not mistaken for a custom-op model
