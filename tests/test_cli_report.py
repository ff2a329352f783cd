"""What `check` and `explain` say ran (issue: a CLI that says what ran):
check's run report per partition (execution, launches, fallback and why),
read from the library after the last invoke rather than echoed from the
options; the device line naming the kernel set or the VM mode that
applied; explain --phases pointing at the option that shows the phases."""
from __future__ import annotations

import dataclasses

from cli_run import run_cli, strict_json, tiny_conv_model
from tflite_gpu import check, check_text, explain

# One group: a persistent grid that never falls back on its own (test_execution_modes.py).
ONE_GROUP = {"TFLITE_GPU_VM_GROUPS": "1"}


def _check(*args, env=None):
    """(exit code, the one row of check --json, stderr)."""
    p = run_cli("check", *args, "--json", env=env)
    (row,) = strict_json(p.stdout)
    return p.returncode, row, p.stderr


def test_check_json_names_the_execution_that_ran():
    rc, row, err = _check("hand_recrop", "--opt", "execution=persistent", "--invokes", "1", env=ONE_GROUP)
    assert rc == 0, err
    (run,) = row["runs"]
    assert (run["partition"], run["execution"], run["fallback"]) == (0, "persistent", ""), run
    assert run["launches"] >= 1


def test_check_reports_the_fallback_and_its_reason():
    """The barrier-timeout hook: asked persistent, the last invoke ran
    stepped; check says so in JSON and text, with the library's reason."""
    env = dict(ONE_GROUP, TFLITE_GPU_TEST_VM_TIMEOUT="1")
    args = ("hand_recrop", "--opt", "execution=persistent", "--invokes", "1")
    rc, row, err = _check(*args, env=env)
    assert rc == 0, err
    (run,) = row["runs"]
    assert run["execution"] == "stepped" and "timed out" in run["fallback"], run
    assert run["launches"] > 1  # stepped: one launch per phase
    text = run_cli("check", *args, env=env).stdout
    assert (f"partition 0: ran stepped on the last invoke, {run['launches']} launch(es); fallback to stepped: "
            f"{run['fallback']}") in text, text
    device = next(ln for ln in text.splitlines() if ln.startswith("device: "))
    assert "execution stepped" in device and "kernel set's bodies" in device, device


def test_device_line_names_the_kernel_set_when_kernels_ran(tmp_path):
    path = tiny_conv_model(tmp_path / "conv.tflite")
    rc, row, err = _check(path, "--opt", "kernel_set=cpu", "--invokes", "1")
    assert rc == 0 and [r["execution"] for r in row["runs"]] == ["kernels"], (row["runs"], err)
    text = run_cli("check", path, "--opt", "kernel_set=cpu", "--invokes", "1").stdout
    device = next(ln for ln in text.splitlines() if ln.startswith("device: "))
    assert device.endswith(", FP32, cpu kernel set"), device
    assert f"partition 0: ran kernels on the last invoke, {row['runs'][0]['launches']} launch(es)\n" in text, text


def _result(runs, kernel_set="gpu"):
    device = {"name": "d", "platform": "p", "precision": "fp32", "kernel_set": kernel_set}
    return check.CheckResult("m.tflite", device, 3, 0, len(runs), [], runs=runs)


def test_device_line_for_mixed_and_vm_runs():
    run = lambda i, mode: {"partition": i, "execution": mode, "launches": 1, "fallback": ""}  # noqa: E731
    assert check_text._applies(_result([run(0, "kernels")])) == "gpu kernel set"
    vm = check_text._applies(_result([run(0, "persistent")]))
    assert vm.startswith("execution persistent (the VM") and "gpu kernel set" not in vm, vm
    mixed = check_text._applies(_result([run(0, "kernels"), run(1, "stepped")]))
    assert mixed.startswith("gpu kernel set and execution stepped"), mixed
    # The runs round-trip through the child's dict.
    r = _result([run(0, "stepped")])
    assert check.CheckResult.from_dict(dataclasses.asdict(r)).runs == r.runs


def test_explain_phases_without_a_vm_mode_names_the_option(tmp_path):
    path = tiny_conv_model(tmp_path / "conv.tflite")
    p = run_cli("explain", path, "--phases")
    assert p.returncode == 0, p.stderr
    assert "VM phases: none (kernels ran; --opt execution=persistent or stepped shows the VM's phases)" in p.stdout
    # Asked for the VM and declined: the reason, not the option again.
    declined = {"partitions": [{"execution": "kernels", "declined": "no VM body for OP"}], "phases": []}
    assert explain.format_phases(declined) == "VM phases: none (kernels ran, not the VM: no VM body for OP)"
