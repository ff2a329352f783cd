"""The command line: --help and --json on every command, the device report,
and the documented exit codes (0 ok, 1 check failed, 2 usage, 3 no OpenCL,
4 model problem, 5 a bug in tflite-gpu; test_cli_exit_codes.py runs each row
of the README's table, test_cli_bad_input.py the bad-input cases)."""
import json
import os
import pathlib
import subprocess
import sys

import numpy as np
import pytest

from tflite_gpu import check, cli
from tflite_gpu.model_builder import ModelBuilder

COMMANDS = ["check", "explain", "bench", "models", "devices", "ops"]


def _conv_model(tmp_path):
    rng = np.random.default_rng(3)
    mb = ModelBuilder()
    x = mb.add_input([1, 7, 5, 3])
    w = mb.add_tensor([5, 3, 3, 3], data=rng.standard_normal((5, 3, 3, 3)).astype(np.float32))
    b = mb.add_tensor([5], data=rng.standard_normal(5).astype(np.float32))
    y = mb.add_tensor([1, 7, 5, 5])
    mb.add_op("CONV_2D", [x, w, b], [y], dict(padding="SAME"))
    mb.mark_output(y)
    p = tmp_path / "conv.tflite"
    p.write_bytes(mb.build())
    return p


def _custom_op_model(tmp_path):
    mb = ModelBuilder()
    x = mb.add_input([1, 4, 4, 4])
    y = mb.add_tensor([1, 4, 4, 4])
    mb.add_op("CUSTOM:NoSuchOp", [x], [y])
    mb.mark_output(y)
    p = tmp_path / "custom.tflite"
    p.write_bytes(mb.build())
    return p


def _cli(*args, env_extra=None):
    env = dict(os.environ, **(env_extra or {}))
    return subprocess.run([sys.executable, "-m", "tflite_gpu", *map(str, args)], capture_output=True, text=True,
                          env=env, timeout=300)


def _main_json(capsys, *args):
    rc = cli.main([str(a) for a in args])
    return rc, json.loads(capsys.readouterr().out)


@pytest.mark.parametrize("command", COMMANDS)
def test_help_on_every_command(command):
    r = _cli(command, "--help")
    assert r.returncode == 0, r.stderr
    assert f"usage: tflite-gpu {command}" in r.stdout
    assert "--json" in r.stdout


def test_top_level_help_lists_commands_and_exit_codes():
    r = _cli("--help")
    assert r.returncode == 0
    for command in COMMANDS:
        assert command in r.stdout
    assert "exit codes" in r.stdout


def test_console_script_is_installed():
    script = pathlib.Path(sys.executable).parent / "tflite-gpu"
    if not script.exists():
        pytest.skip("package not pip-installed in this environment (tools/setup.sh installs it)")
    r = subprocess.run([str(script), "ops", "--json"], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert any(o["op"] == "CONV_2D" for o in json.loads(r.stdout))


def test_usage_errors_exit_2(capsys):
    assert _cli("no-such-command").returncode == 2
    assert _cli("check").returncode == 2  # a model is required
    assert cli.main(["models", "no_such_model"]) == 2
    assert "no_such_model" in capsys.readouterr().err


def test_devices_json(capsys):
    rc, devs = _main_json(capsys, "devices", "--json")
    assert rc == 0 and devs
    for d in devs:
        assert d["platform"] and d["name"] and d["version"].startswith("OpenCL")
        assert d["global_mem_bytes"] > 0 and d["max_alloc_bytes"] > 0
        assert isinstance(d["extensions"], list) and d["extensions"]
        assert d["fp16"] == ("cl_khr_fp16" in d["extensions"])
        # The capability struct the kernel selectors read (device_caps.h).
        assert d["compute_units"] >= 1 and d["max_work_group_size"] >= 1
        assert len(d["max_work_item_sizes"]) == 3 and min(d["max_work_item_sizes"]) >= 1
        assert d["type"] in ("CPU", "GPU", "OTHER") and d["vendor_id"]
        assert d["kernel_set_auto"] == ("gpu" if d["type"] == "GPU" else "cpu")


def test_devices_text(capsys):
    assert cli.main(["devices"]) == 0
    out = capsys.readouterr().out
    for word in ("platform", "version", "memory", "fp16", "extensions"):
        assert word in out


def test_no_opencl_exits_3(tmp_path):
    # An empty vendor directory: the ICD loader finds no platform.
    env = {"OCL_ICD_VENDORS": str(tmp_path)}
    r = _cli("devices", env_extra=env)
    assert r.returncode == 3, r.stdout + r.stderr
    assert "no OpenCL" in r.stderr
    r = _cli("check", _conv_model(tmp_path), env_extra=env)
    assert r.returncode == 3, r.stdout + r.stderr


def test_check_json_passes(tmp_path, capsys):
    rc, results = _main_json(capsys, "check", _conv_model(tmp_path), "--json", "--opt", "log_level=silent")
    assert rc == 0
    (r,) = results
    assert r["passed"] and r["cpu_nodes"] == 0 and r["delegated_nodes"] == 1
    assert r["outputs"][0]["rel_l2"] <= check.FP32_RTOL_L2


def test_check_failure_exits_1(tmp_path, capsys, monkeypatch):
    # A delegate that is wrong: the check runs (in this process instead of
    # a child), then every output is compared as if off by 1%.
    from tflite_gpu import isolate

    def wrong(job, args, on_message=None):
        d = check.isolated_check(**args)
        for o in d["outputs"]:
            o["rel_l2"], o["max_abs"] = 1e-2, 1.0
        return d

    monkeypatch.setattr(isolate, "run", wrong)
    rc, results = _main_json(capsys, "check", _conv_model(tmp_path), "--json", "--opt", "log_level=silent")
    assert rc == 1 and results[0]["passed"] is False and results[0]["verdict"] == "FAIL"
    assert results[0]["outputs"][0]["passed_by"] is None


def test_bad_option_exits_2(tmp_path, capsys):
    assert cli.main(["check", str(_conv_model(tmp_path)), "--opt", "no_such_key=1"]) == 2
    assert "no_such_key" in capsys.readouterr().err
    assert cli.main(["check", str(_conv_model(tmp_path)), "--opt", "missing-equals"]) == 2


def test_model_problems_exit_4(tmp_path, capsys):
    assert cli.main(["check", str(tmp_path / "absent.tflite")]) == 4
    assert "absent.tflite" in capsys.readouterr().err
    # The CPU interpreter cannot run an unknown custom op.
    assert cli.main(["check", str(_custom_op_model(tmp_path)), "--opt", "log_level=silent"]) == 4
    assert cli.main(["explain", str(tmp_path / "absent.tflite")]) == 4


def test_explain_json(tmp_path, capsys):
    rc, out = _main_json(capsys, "explain", _conv_model(tmp_path), "--json")
    assert rc == 0
    assert [n["where"] for n in out["nodes"]] == ["gpu"] and out["nodes"][0]["op"] == "CONV_2D"
    assert len(out["partitions"]) == 1 and out["partitions"][0]["nodes"] == [0]
    assert out["device"]["kernel_set"] in ("cpu", "gpu") and out["device"]["precision"] == "fp32"


def test_explain_names_the_forced_kernel_set(tmp_path, capsys):
    rc, out = _main_json(capsys, "explain", _conv_model(tmp_path), "--json", "--opt", "kernel_set=gpu")
    assert rc == 0 and out["device"]["kernel_set"] == "gpu"
    assert cli.main(["explain", str(_conv_model(tmp_path)), "--opt", "kernel_set=cpu"]) == 0
    assert "cpu kernel set" in capsys.readouterr().out


def test_ops_json(capsys):
    rc, ops = _main_json(capsys, "ops", "--json")
    assert rc == 0
    names = [o["op"] for o in ops]
    assert "CONV_2D" in names and len(names) == len(set(names))
    assert all(o["constraints"] and o["code"] >= 0 for o in ops)


def test_bench_json_to_stdout(tmp_path, capsys):
    rc, report = _main_json(capsys, "bench", _conv_model(tmp_path), "--configs", "fp32", "--warmup", "0",
                            "--iterations", "2", "--no-first-result", "--no-progress", "--json", "-")
    assert rc == 0
    assert report["models"][0]["configs"]["fp32"]["median_ms"] > 0


def test_models_json_from_cache(capsys):
    from tflite_gpu import models
    models.fetch_models(["iris_landmark"], progress=False)
    rc, paths = _main_json(capsys, "models", "iris_landmark", "--json")
    assert rc == 0 and pathlib.Path(paths["iris_landmark"]).is_file()
