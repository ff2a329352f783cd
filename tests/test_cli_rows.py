"""Issue 27, items 3 and 4: `check A B` and `bench A B` keep a row per model
(a model that fails is a row with its error, the others still run, the exit
code is the worst of the models' codes), and a kernel the device's OpenCL
compiler rejects is reported as a failure of tflite-gpu on that device
(kind "kernel-build", exit 5), never as a bad model."""
from __future__ import annotations

import pathlib

import pytest

from cli_run import run_cli as _cli, strict_json as _strict, tiny_conv_model
from library_builds import hooks_library
from tflite_gpu import check, cli, errors, isolate, models

FAST_BENCH = ["--iterations", "2", "--warmup", "1", "--no-first-result", "--no-progress"]


@pytest.fixture(scope="module")
def small():
    """{name: path}: two small MediaPipe models, and hand_recrop cut at 5000 bytes."""
    paths = models.fetch_models(["hand_recrop", "face_detection_short_range"], progress=False)
    return paths


@pytest.fixture
def truncated(small, tmp_path):
    p = tmp_path / "truncated.tflite"
    p.write_bytes(small["hand_recrop"].read_bytes()[:5000])
    return p


def _conv(tmp_path, name="conv.tflite"):
    return tiny_conv_model(tmp_path / name)


def _row_error(row, kind):
    assert set(row) == {"model", "error"}, row
    err = row["error"]
    assert set(err) == {"exit_code", "kind", "message"} and err["kind"] == kind, err
    assert err["exit_code"] == errors.KINDS[kind] and err["message"] and "\n" not in err["message"]
    return err["message"]


# --------------------------------------------------------------------------
# check: one row per model


def test_check_json_keeps_every_model(small, truncated):
    p = _cli("check", small["hand_recrop"], truncated, "nosuch", "--json", "--no-cache")
    assert p.returncode == 4, p.stderr[-2000:]
    rows = _strict(p.stdout)
    assert isinstance(rows, list) and len(rows) == 3, rows
    assert rows[0]["verdict"] == "PASS" and rows[0]["model"] == str(small["hand_recrop"])
    msg = _row_error(rows[1], "model")
    assert rows[1]["model"] == str(truncated) and "truncated.tflite" in msg and "past the end" in msg
    assert rows[2]["model"] == "nosuch" and "no such file" in _row_error(rows[2], "model")
    assert msg in p.stderr  # each model's error is also its line on stderr


def test_check_text_shows_every_model(small, truncated):
    p = _cli("check", truncated, small["hand_recrop"], "--no-cache")  # the bad one first: the next still runs
    assert p.returncode == 4, p.stderr[-2000:]
    assert f"model: {small['hand_recrop']}" in p.stdout and "\nPASS\n" in p.stdout
    assert f"tflite-gpu check: {truncated}: not a valid TFLite model" in p.stderr
    summary = p.stdout[p.stdout.index("summary: 2 models"):].splitlines()
    assert "ERROR (model, exit 4)" in summary[1] and summary[1].endswith(str(truncated)), summary
    assert "PASS" in summary[2] and summary[2].endswith(str(small["hand_recrop"])), summary


def test_check_exit_code_is_the_worst(tmp_path, capsys, monkeypatch):
    """1 (outside the tolerance) < 4 (a model problem) < 5 (a failure of tflite-gpu)."""
    def fake(job, args, on_message=None):
        name = pathlib.Path(args["path"]).name
        if name == "crash.tflite":
            raise isolate.Crashed("delegate", -11)
        d = check.isolated_check(**args)
        if name == "fail.tflite":
            for o in d["outputs"]:
                o["rel_l2"], o["max_abs"] = 1e-2, 1.0
        return d

    monkeypatch.setattr(isolate, "run", fake)
    good, fail, crash = (str(_conv(tmp_path, n)) for n in ("good.tflite", "fail.tflite", "crash.tflite"))
    bad = tmp_path / "empty.tflite"
    bad.write_bytes(b"")
    for argv, code, shape in (([good, fail], 1, ["PASS", "FAIL"]), ([fail, str(bad)], 4, ["FAIL", "model"]),
                              ([str(bad), crash, fail], 5, ["model", "delegate-crashed", "FAIL"])):
        assert cli.main(["check", *argv, "--json", "--no-cache"]) == code, argv
        rows = _strict(capsys.readouterr().out)
        assert [r.get("verdict") or r["error"]["kind"] for r in rows] == shape, rows
        assert [r["model"] for r in rows] == argv


def test_errors_of_the_whole_run_stay_one_error(tmp_path, truncated, capsys):
    """A bad delegate option ends the run with the single error object, even after a model's row."""
    assert cli.main(["check", str(truncated), str(_conv(tmp_path)), "--opt", "no_such_key=1", "--json"]) == 2
    doc = _strict(capsys.readouterr().out)
    assert set(doc) == {"error"} and doc["error"]["kind"] == "usage", doc


def test_a_single_model_keeps_its_error_object(truncated):
    doc = _strict(_cli("check", truncated, "--json").stdout)
    assert set(doc) == {"error"} and doc["error"]["kind"] == "model", doc


def test_worst():
    assert errors.worst([]) == 0 and errors.worst([0, 1]) == 1 and errors.worst([1, 4, 0]) == 4
    assert errors.worst([4, 5, 1]) == 5
    assert not set(errors.RUN_KINDS) - set(errors.KINDS)


# --------------------------------------------------------------------------
# bench: every model's row stays


def test_bench_keeps_every_model(small, truncated):
    p = _cli("bench", small["hand_recrop"], truncated, "nosuch", "--configs", "xnnpack,fp32", "--json", "-",
             *FAST_BENCH)
    assert p.returncode == 4, p.stderr[-2000:]
    rows = _strict(p.stdout)["models"]
    assert [r["model"] for r in rows] == ["hand_recrop", "truncated", "nosuch"]
    assert "error" not in rows[0] and all(c["status"] == "ok" and c["median_ms"] for c in rows[0]["configs"].values())
    for r, words in zip(rows[1:], ("past the end", "no such file")):
        assert r["error"]["kind"] == "model" and r["error"]["exit_code"] == 4 and words in r["error"]["message"]
        assert {c["status"] for c in r["configs"].values()} == {"error"}
        assert {c["kind"] for c in r["configs"].values()} == {"model"}
    assert "no configuration could run 2 model(s)" in p.stderr


def test_bench_exit_code_is_the_worst(tmp_path, capsys, monkeypatch):
    """A crashed delegate (5) outranks an unreadable model (4)."""
    def crash(job, args, on_message=None):
        raise isolate.Crashed("delegate:fp32 invoke", -11)

    monkeypatch.setattr(isolate, "run", crash)
    bad = tmp_path / "empty.tflite"
    bad.write_bytes(b"")
    rc = cli.main(["bench", str(bad), str(_conv(tmp_path)), "--json", "-", "--no-progress"])
    rows = _strict(capsys.readouterr().out)["models"]
    assert rc == 5 and [r["error"]["kind"] for r in rows] == ["model", "delegate-crashed"], rows


# --------------------------------------------------------------------------
# kernel-build: the device's compiler rejects a kernel


@pytest.fixture(scope="module")
def fault_env():
    # make FAULT_INJECTION=1: TFLITE_GPU_FAULT_INJECT=build=1 fails the first program build of a process
    # with a real compiler error (an unknown type, "injected_fault_unknown_type").
    return {"TFLITE_GPU_LIBRARY": str(hooks_library()), "TFLITE_GPU_FAULT_INJECT": "build=1"}


def _kernel_build(msg):
    assert "injected_fault_unknown_type" in msg, msg  # the compiler's own error
    assert "tflite-gpu could not build its kernels on this device" in msg and "not of the model" in msg, msg
    assert "driver" in msg and "face_detection_short_range" in msg, msg


def test_check_kernel_build_failure_exits_5(small, fault_env):
    p = _cli("check", "face_detection_short_range", "--no-cache", "--json", env=fault_env)
    assert p.returncode == 5, p.stderr[-3000:]
    err = _strict(p.stdout)["error"]
    assert err["kind"] == "kernel-build" and err["exit_code"] == 5, err
    _kernel_build(err["message"])
    assert "cannot run this model" not in err["message"]


def test_check_kernel_build_failure_is_a_row(small, fault_env):
    p = _cli("check", small["face_detection_short_range"], small["face_detection_short_range"], "--no-cache",
             "--json", env=fault_env)
    assert p.returncode == 5, p.stderr[-3000:]
    for row in _strict(p.stdout):  # each model runs in its own process: each fails its first build
        _kernel_build(_row_error(row, "kernel-build"))


def test_explain_kernel_build_failure_exits_5(small, fault_env):
    p = _cli("explain", "face_detection_short_range", "--json", env=fault_env)
    assert p.returncode == 5, p.stderr[-3000:]
    err = _strict(p.stdout)["error"]
    assert err["kind"] == "kernel-build", err
    _kernel_build(err["message"])


def test_bench_kernel_build_failure_is_reported(small, fault_env):
    p = _cli("bench", "face_detection_short_range", "--configs", "xnnpack,fp32,fp16", "--json", "-",
             *FAST_BENCH, env=fault_env)
    assert p.returncode == 5, p.stderr[-3000:]
    (row,) = _strict(p.stdout)["models"]
    cfg = row["configs"]
    # The first build of the benchmark's process fails (FP32's); FP16's, the second, builds.
    assert cfg["xnnpack"]["status"] == "ok" and cfg["fp16"]["status"] == "ok", cfg
    assert cfg["fp32"]["status"] == "error" and cfg["fp32"]["kind"] == "kernel-build", cfg["fp32"]
    assert "injected_fault_unknown_type" in cfg["fp32"]["error"]
    assert row["error"]["kind"] == "kernel-build" and row["error"]["exit_code"] == 5, row["error"]
    _kernel_build(row["error"]["message"])
