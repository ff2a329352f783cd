"""Bad input through the CLI (issue 13): each case ends with the documented
exit code and a message naming what is wrong, never a traceback or a
crash, and with --json exactly one strict JSON document on stdout."""
from __future__ import annotations

import os
import pathlib
import subprocess
import sys

import numpy as np
import pytest

from cli_run import strict_json
from tflite_gpu import cli, models, resources
from tflite_gpu.check import FP16_RTOL_L2
from tflite_gpu.model_builder import ModelBuilder

ROOT = pathlib.Path(__file__).resolve().parent.parent


def _cli(*args, env=None, timeout=300):
    full = dict(os.environ, **(env or {}))
    p = subprocess.run([sys.executable, "-m", "tflite_gpu", *map(os.fsdecode, args)], capture_output=True,
                       env=full, timeout=timeout)
    p.out, p.err = p.stdout.decode("utf-8", "replace"), p.stderr.decode("utf-8", "replace")
    assert "Traceback" not in p.err, p.err
    return p


def _error(p, code, kind=None):
    """The --json error document of a run that exited with `code`."""
    assert p.returncode == code, (p.returncode, p.out, p.err[-2000:])
    doc = strict_json(p.out)
    assert set(doc) == {"error"}, doc
    err = doc["error"]
    assert err["exit_code"] == code and err["message"] and "\n" not in err["message"]
    if kind:
        assert err["kind"] == kind, err
    return err["message"]


def _main(capsys, *args):
    """cli.main in this process (fast): (exit code, the --json document, stderr)."""
    rc = cli.main([os.fsdecode(a) for a in args])
    cap = capsys.readouterr()
    assert "Traceback" not in cap.err, cap.err
    doc = strict_json(cap.out)
    if isinstance(doc, dict) and "error" in doc:
        assert doc["error"]["exit_code"] == rc and "\n" not in doc["error"]["message"]
    return rc, doc, cap.err


def _unary(op, shape, dtype=np.float32):
    mb = ModelBuilder()
    x = mb.add_input(shape, dtype)
    y = mb.add_tensor(shape, dtype)
    mb.add_op(op, [x], [y])
    mb.mark_output(y)
    return mb.build()


def _add(shape, dtype=np.float32):
    mb = ModelBuilder()
    x, y = mb.add_input(shape, dtype), mb.add_input(shape, dtype)
    z = mb.add_tensor(shape, dtype)
    mb.add_op("ADD", [x, y], [z], dict(fused_activation="NONE"))
    mb.mark_output(z)
    return mb.build()


def _conv():
    rng = np.random.default_rng(1)
    mb = ModelBuilder()
    x = mb.add_input([1, 6, 5, 3])
    w = mb.add_tensor([4, 3, 3, 3], data=rng.standard_normal((4, 3, 3, 3)).astype(np.float32))
    b = mb.add_tensor([4], data=rng.standard_normal(4).astype(np.float32))
    y = mb.add_tensor([1, 6, 5, 4])
    mb.add_op("CONV_2D", [x, w, b], [y], dict(padding="SAME"))
    mb.mark_output(y)
    return mb.build()


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("bad")
    iris = models.fetch_models(["iris_landmark"], progress=False)["iris_landmark"].read_bytes()
    flipped = bytearray(iris)
    for pos in (40, 44, 123, 999):
        flipped[pos] ^= 0xA5
    content = {
        "empty.tflite": b"", "text.tflite": b"hello, I am not a model\n", "trunc1k.tflite": iris[:1024],
        "trunc4k.tflite": iris[:4096], "trunchalf.tflite": iris[:len(iris) // 2], "flipped.tflite": bytes(flipped),
        "conv.tflite": _conv(), "huge.tflite": _add([1, 100000, 100000, 3]), "big.tflite": _add([1, 20000, 20000, 3]),
        "int8_add.tflite": _add([1, 4, 4, 3], np.int8),  # no quantization parameters: the CPU kernel aborts
        "log.tflite": _unary("LOG", [1, 3, 4, 5]),  # NaN for the negative inputs, delegated
        "log_rank5.tflite": _unary("LOG", [1, 2, 3, 4, 5]),  # NaN, and rank 5: nothing delegated
    }
    for name, data in content.items():
        (d / name).write_bytes(data)
    (d / "dir.tflite").mkdir()
    (d / os.fsdecode(b"caf\xe9\xff.tflite")).write_bytes(_conv())
    return d


@pytest.mark.parametrize("name,words", [
    ("empty.tflite", "empty file"), ("text.tflite", "no TFLite file identifier"), ("dir.tflite", "is a directory"),
    ("trunc1k.tflite", "past the end"), ("trunc4k.tflite", "past the end"), ("trunchalf.tflite", "past the end"),
    ("flipped.tflite", "not a valid TFLite model"), ("absent.tflite", "no such file"),
])
@pytest.mark.parametrize("command", ["check", "explain", "bench"])
def test_not_a_model_exits_4_naming_the_file(files, name, words, command, capsys):
    args = [command, files / name] + (["--json", "-", "--no-progress"] if command == "bench" else ["--json"])
    rc, doc, err = _main(capsys, *args)
    msg = doc["error"]["message"]
    assert rc == 4 and doc["error"]["kind"] == "model" and name in msg and words in msg, msg
    assert msg in err  # the same line on stderr


@pytest.mark.parametrize("name", ["empty.tflite", "trunc4k.tflite", "dir.tflite"])
def test_not_a_model_in_a_subprocess(files, name):
    """The same through the installed entry point, in text mode: one line, exit 4."""
    p = _cli("check", files / name)
    assert p.returncode == 4 and p.out == ""
    assert [ln for ln in p.err.splitlines() if ln.startswith("tflite-gpu check:")] == [p.err.strip()], p.err


def test_unknown_name_check_4_models_2():
    assert "no such file, and not a MediaPipe model name" in _error(_cli("check", "nosuch", "--json"), 4, "model")
    assert "unknown model name" in _error(_cli("models", "nosuch", "--json"), 2, "usage")


def test_huge_shapes_refused_with_the_numbers(files):
    msg = _error(_cli("check", files / "huge.tflite", "--json"), 4, "model")
    assert "too large" in msg and "[1, 100000, 100000, 3]" in msg and "111.76 GiB" in msg and "available" in msg


def test_big_shapes_refused_before_allocating(files, capsys, monkeypatch):
    monkeypatch.setattr(resources, "machine_available", lambda: (16 * 2**30, "a 16 GiB test machine"))
    assert cli.main(["check", str(files / "big.tflite"), "--json"]) == 4
    msg = strict_json(capsys.readouterr().out)["error"]["message"]
    assert "[1, 20000, 20000, 3] float32 (4.47 GiB)" in msg and "16.00 GiB available" in msg


def test_cpu_interpreter_crash_is_reported(files):
    msg = _error(_cli("check", files / "int8_add.tflite", "--json"), 4, "cpu-crashed")
    assert "the CPU interpreter crashed on this model: SIG" in msg and "int8_add.tflite" in msg


def test_nan_reference_with_nothing_delegated_is_not_a_failure(files):
    p = _cli("check", files / "log_rank5.tflite", "--json")
    assert p.returncode == 0, p.err
    (r,) = strict_json(p.out)
    assert r["delegated_nodes"] == 0 and r["verdict"] == "NOT DELEGATED" and r["passed"]
    assert r["outputs"][0]["nonfinite"] > 0
    text = _cli("check", files / "log_rank5.tflite")
    assert "nothing delegated" in text.out and "FAIL" not in text.out


def test_nan_in_the_same_places_passes(files):
    p = _cli("check", files / "log.tflite", "--json")
    assert p.returncode == 0, p.err
    (r,) = strict_json(p.out)
    (o,) = r["outputs"]
    assert r["delegated_nodes"] == 1 and r["verdict"] == "PASS"
    assert o["nonfinite"] > 0 and o["nonfinite_mismatch"] == 0 and o["passed_by"] == "relative L2"


def test_min_latency_is_judged_at_fp16(files):
    p = _cli("check", files / "conv.tflite", "--json", "--opt", "inference_priority1=MIN_LATENCY")
    assert p.returncode == 0, p.err
    (r,) = strict_json(p.out)
    assert r["device"]["precision"] == "fp16"
    assert r["outputs"][0]["tolerance"] == FP16_RTOL_L2 and r["outputs"][0]["tolerance_from"] == "FP16"


def test_non_utf8_file_name(files):
    path = files / os.fsdecode(b"caf\xe9\xff.tflite")
    p = _cli("check", path, "--json")
    assert p.returncode == 0, p.err
    (r,) = strict_json(p.out)
    assert r["model"].endswith("caf\\xe9\\xff.tflite") and r["passed"]
    text = _cli("explain", path)
    assert text.returncode == 0 and "CONV_2D" in text.out
    missing = _cli("check", files / os.fsdecode(b"nowhere\xff.tflite"), "--json")
    assert "nowhere\\xff.tflite" in _error(missing, 4, "model")


def test_closed_pipe_is_not_an_error(files):
    """`explain MODEL | head -1`: the command stops printing, exits with its own code, no traceback."""
    p = subprocess.Popen([sys.executable, "-m", "tflite_gpu", "explain", "iris_landmark"], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE)
    first = p.stdout.readline()
    p.stdout.close()
    err = p.stderr.read().decode()
    assert p.wait(timeout=300) == 0 and first.strip(), err
    assert "Traceback" not in err and "BrokenPipe" not in err, err


def test_unwritable_output_paths_before_the_run(files, tmp_path):
    # The model does not even exist: the path is refused before anything runs (2, not 4).
    blocker = tmp_path / "a_file"
    blocker.write_text("x")
    for flag, value in (("--markdown", blocker / "report.md"), ("--json", blocker / "r.json"),
                        ("--png", blocker / "c.png"), ("--markdown", tmp_path)):
        p = _cli("bench", "nosuch", flag, value, "--no-progress")
        assert p.returncode == 2, (flag, p.err)
        assert flag in p.err and ("not a directory" in p.err or "is a directory" in p.err), p.err


@pytest.mark.parametrize("args,words", [
    (["--threads", "-3"], "--threads: must be >= 1"), (["--iterations", "0"], "--iterations: must be >= 1"),
    (["--warmup", "x"], "--warmup: expected an integer"), (["--configs", "fp64"], "unknown configuration"),
    (["--seed", "-1"], "--seed: must be >= 0"),
])
def test_bench_bad_arguments_are_usage_errors(files, args, words):
    assert words in _error(_cli("bench", files / "conv.tflite", "--json", "-", *args), 2, "usage")


def test_check_bad_tolerance_is_a_usage_error(files):
    assert "--tolerance" in _error(_cli("check", files / "conv.tflite", "--json", "--tolerance", "nan"), 2, "usage")


def test_bench_without_opencl_exits_3(files, tmp_path):
    env = {"OCL_ICD_VENDORS": str(tmp_path)}  # an empty vendor directory: no platform
    msg = _error(_cli("bench", files / "conv.tflite", "--json", "-", "--no-progress", env=env), 3, "no-opencl")
    assert "no OpenCL" in msg and "--configs xnnpack,builtin" in msg
    p = _cli("bench", files / "conv.tflite", "--configs", "xnnpack", "--iterations", "1", "--warmup", "0",
             "--no-first-result", "--no-progress", env=env)
    assert p.returncode == 0, p.err  # the CPU alone needs no OpenCL


def test_png_needs_matplotlib_up_front(files, tmp_path):
    fake = tmp_path / "nompl" / "matplotlib"
    fake.mkdir(parents=True)
    (fake / "__init__.py").write_text("raise ImportError('matplotlib is not installed (test)')\n")
    env = {"PYTHONPATH": os.pathsep.join([str(fake.parent), os.environ.get("PYTHONPATH", "")])}
    p = _cli("bench", files / "conv.tflite", "--png", tmp_path / "c.png", "--no-progress", env=env)
    assert p.returncode == 2 and "--png needs matplotlib" in p.err, p.err
    assert not (tmp_path / "c.png").exists()


def test_png_needs_xnnpack_to_compare_with(files, tmp_path):
    p = _cli("bench", files / "conv.tflite", "--png", tmp_path / "c.png", "--configs", "fp32", "--no-progress")
    assert p.returncode == 2 and "add xnnpack to --configs" in p.err, p.err


def test_opencl_library_override_is_not_silently_replaced():
    msg = _error(_cli("devices", "--json", env={"TFLITE_GPU_OPENCL_LIBRARY": "/nonexistent/libOpenCL.so"}), 3,
                 "no-opencl")
    assert "/nonexistent/libOpenCL.so" in msg


@pytest.mark.parametrize("args,code,kind,env", [
    (["check", "nosuch", "--json"], 4, "model", None),
    (["check", "--json"], 2, "usage", None),
    (["explain", "nosuch", "--json"], 4, "model", None),
    (["bench", "nosuch", "--json", "-"], 4, "model", None),
    (["models", "nosuch", "--json"], 2, "usage", None),
    (["devices", "--json"], 3, "no-opencl", "no-platform"),
    (["ops", "--json"], 3, "no-library", "no-library"),
    (["no-such-command", "--json"], 2, "usage", None),
])
def test_json_errors_on_every_command(args, code, kind, env, tmp_path):
    extra = {"no-platform": {"OCL_ICD_VENDORS": str(tmp_path)},
             "no-library": {"TFLITE_GPU_LIBRARY": str(tmp_path / "nope.so")}}.get(env)
    _error(_cli(*args, env=extra), code, kind)


def test_bench_json_path_gets_the_error_document(tmp_path):
    out = tmp_path / "r.json"
    p = _cli("bench", "nosuch", "--json", out, "--no-progress")
    assert p.returncode == 4 and p.out == ""
    assert strict_json(out.read_text())["error"]["kind"] == "model"


def test_unrunnable_model_prints_a_json_error(tmp_path, capsys):
    mb = ModelBuilder()
    x = mb.add_input([1, 4, 4, 4])
    y = mb.add_tensor([1, 4, 4, 4])
    mb.add_op("CUSTOM:NoSuchOp", [x], [y])
    mb.mark_output(y)
    (tmp_path / "custom.tflite").write_bytes(mb.build())
    rc, doc, _ = _main(capsys, "check", tmp_path / "custom.tflite", "--json")
    assert rc == 4 and doc["error"]["kind"] == "model"
    assert "NoSuchOp" in doc["error"]["message"] and "custom.tflite" in doc["error"]["message"]


def test_download_failure_exits_4(capsys, monkeypatch):
    def offline(names=None, progress=True):
        raise OSError("network is unreachable")

    monkeypatch.setattr(models, "fetch_models", offline)
    rc, doc, _ = _main(capsys, "models", "iris_landmark", "--json")
    assert rc == 4 and "network is unreachable" in doc["error"]["message"]


def _result(*outputs, reference="cpu", delegated=3):
    from tflite_gpu import check, check_text
    device = {"name": "dev", "platform": "pl", "precision": "fp32", "kernel_set": "cpu"}
    return check.CheckResult("m.tflite", device, delegated, 0, 1,
                             list(outputs), reference=reference, cpu_error=None if reference == "cpu" else "custom op",
                             deterministic=None if reference == "cpu" else True)


def test_pass_says_which_rule_passed_it():
    from tflite_gpu import check, check_text
    o = check.OutputResult("mask", (1, 4), rel_l2=0.05, max_abs=3e-4, tolerance=1e-2, cpu_noise=0.0,
                           abs_floor=check.FP16_ABS_FLOOR, tolerance_from="FP16")
    assert o.passed and o.passed_by == "max abs floor"
    text = check_text.format_result(_result(o, reference="delegate-fp16"))
    assert "PASS mask [1, 4]: passed by the max abs rule: max abs 0.0003 <= 0.000977, although relative L2 0.05 " \
           "> tolerance 0.01 (FP16 tolerance)" in text
    noisy = check.OutputResult("y", (3,), rel_l2=3e-4, max_abs=1e-3, tolerance=check.NOISE_FACTOR * 2e-4,
                               cpu_noise=2e-4, tolerance_from="CPU noise")
    text = check_text.format_result(_result(noisy))
    assert f"<= tolerance {check.NOISE_FACTOR * 2e-4:.3g} ({check.NOISE_FACTOR:g} x the CPU's own XNNPACK-vs-builtin " \
           "difference)" in text


def test_nonfinite_values_must_be_in_the_same_places():
    from tflite_gpu import check, check_text
    det = {"name": "y", "dtype": np.float32, "index": 5, "quantization": (0.0, 0)}
    ref = np.array([1.0, np.nan, np.inf, 2.0], np.float32)
    same = check._compare(det, ref.copy(), ref, 1e-4, 0.0, {})
    assert same.passed and same.nonfinite == 2 and same.nonfinite_mismatch == 0 and same.rel_l2 == 0
    moved = check._compare(det, np.array([np.nan, 1.0, np.inf, 2.0], np.float32), ref, 1e-4, 0.0, {})
    assert not moved.passed and moved.nonfinite_mismatch == 2
    assert "2 element(s) non-finite on one side only" in check_text.format_result(_result(moved))
    sign = check._compare(det, np.array([1.0, np.nan, -np.inf, 2.0], np.float32), ref, 1e-4, 0.0, {})
    assert not sign.passed and sign.nonfinite_mismatch == 1
