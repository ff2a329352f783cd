"""The CLI's smaller messages (issue: a CLI that says what ran): the note
before a long build (the GPU kernel set on a CPU OpenCL device), `ops` in
a stable, aligned order, the "no such file" error, a truncated file, and a
refused delegate option named without the runtime's "Failed to load
delegate from" line."""
from __future__ import annotations

import json

import pytest

from cli_run import tiny_conv_model
from tflite_gpu import _capi, cli, cli_notes, errors, isolate, models, resolved

NOTE = "note: kernel_set=gpu on a CPU device"


def _picked_is_cpu() -> bool:
    return cli_notes.chosen_device("", _capi.devices())["type"] == "CPU"


def _main(capsys, *args):
    """cli.main in this process: (exit code, stdout, stderr)."""
    rc = cli.main([str(a) for a in args])
    cap = capsys.readouterr()
    return rc, cap.out, cap.err


# --------------------------------------------------------------------------
# The note before a long build


def test_chosen_device_follows_the_library():
    devs = [{"index": 0, "type": "CPU", "platform": "Portable Computing Language", "name": "pthread-x"},
            {"index": 1, "type": "GPU", "platform": "NVIDIA CUDA", "name": "H200"}]
    assert cli_notes.chosen_device("", devs)["index"] == 1  # the first GPU
    assert cli_notes.chosen_device("0", devs)["index"] == 0
    assert cli_notes.chosen_device("portable", devs)["index"] == 0  # platform and name, any case
    assert cli_notes.chosen_device("9", devs) is None
    assert cli_notes.chosen_device("", devs[:1])["index"] == 0  # no GPU: the first device


def test_no_note_on_a_gpu_or_without_the_gpu_set(monkeypatch):
    gpu = [{"index": 0, "type": "GPU", "platform": "p", "name": "g", "vendor_id": "nvidia"}]
    cpu = [{"index": 0, "type": "CPU", "platform": "Portable Computing Language", "name": "c", "vendor_id": "pocl"}]
    monkeypatch.setattr(_capi, "devices", lambda: gpu)
    assert cli_notes.slow_build_note({"kernel_set": "gpu"}) is None
    monkeypatch.setattr(_capi, "devices", lambda: cpu)
    assert cli_notes.slow_build_note({"kernel_set": "gpu"}).startswith(NOTE + " (PoCL)")
    assert cli_notes.slow_build_note({"kernel_set": "cpu"}) is None
    assert cli_notes.slow_build_note({}) is None  # auto picks the CPU set here
    # The VM modes build the CPU set whatever kernel_set says.
    assert cli_notes.slow_build_note({"kernel_set": "gpu", "execution": "persistent"}) is None
    assert cli_notes.slow_build_note({"kernel_set": "nonsense"}) is None  # refused: reported elsewhere
    assert cli_notes.slow_build_note({"policy": "kernel_set=gpu"}).startswith(NOTE)


def test_explain_says_it_once_before_the_run(tmp_path, capsys):
    if not _picked_is_cpu():
        pytest.skip("the device the delegate picks here is not a CPU")
    path = tiny_conv_model(tmp_path / "conv.tflite")
    rc, out, err = _main(capsys, "explain", path, "--opt", "kernel_set=gpu")
    assert rc == 0 and err.count(NOTE) == 1 and "gpu kernel set" in out, err
    rc, _, err = _main(capsys, "explain", path, "--opt", "kernel_set=cpu")
    assert rc == 0 and NOTE not in err, err


@pytest.mark.parametrize("command", ["check", "tune", "bench"])
def test_every_command_taking_options_says_it(command, tmp_path, capsys, monkeypatch):
    """The note comes before the run: the run itself is stubbed out here."""
    if not _picked_is_cpu():
        pytest.skip("the device the delegate picks here is not a CPU")
    from tflite_gpu import bench

    def refuse_job(*args, **kwargs):
        raise isolate.JobError("model", "stub: not run")

    def refuse_bench(*args, **kwargs):
        raise ValueError("stub: not run")

    monkeypatch.setattr(isolate, "run", refuse_job)
    monkeypatch.setattr(bench, "run_bench", refuse_bench)
    path = tiny_conv_model(tmp_path / "conv.tflite")
    extra = ["--configs", "fp32", "--no-progress"] if command == "bench" else []
    rc, _, err = _main(capsys, command, path, "--opt", "kernel_set=gpu", *extra)
    assert rc != 0 and "stub: not run" in err and err.count(NOTE) == 1, err
    assert err.index(NOTE) < err.index("stub: not run")


# --------------------------------------------------------------------------
# ops, missing and truncated files, refused options


def test_ops_are_sorted_and_aligned(capsys):
    rc, out, _ = _main(capsys, "ops")
    lines = out.splitlines()
    assert rc == 0 and lines[0].split() == ["op", "versions", "constraints"]
    column = lines[0].index("versions")
    names = [ln[:column].rstrip() for ln in lines[1:]]  # a name may hold a space (CUSTOM ...)
    assert names == sorted(names) and len(names) == len(_capi.ops())
    assert all(ln[column] == "v" and ln[column - 2:column] == "  " for ln in lines[1:]), lines[:5]
    rc, out, _ = _main(capsys, "ops", "--json")
    assert [o["op"] for o in json.loads(out)] == names


def test_no_such_file_lists_the_model_names_only_for_a_bare_name(tmp_path, capsys):
    for arg in (tmp_path / "absent.tflite", "absent.tflite", tmp_path / "absent"):
        rc, _, err = _main(capsys, "check", arg)
        assert rc == 4 and "no such file" in err and "hand_recrop" not in err, err
    rc, _, err = _main(capsys, "check", "absent")
    assert rc == 4 and "not a MediaPipe model name" in err and "hand_recrop" in err, err


def test_a_truncated_file_is_said_to_look_truncated(tmp_path, capsys):
    data = models.fetch_models(["hand_recrop"], progress=False)["hand_recrop"].read_bytes()
    path = tmp_path / "cut.tflite"
    path.write_bytes(data[:5000])
    rc, out, _ = _main(capsys, "check", path, "--json")
    msg = json.loads(out)["error"]["message"]
    assert rc == 4 and "looks truncated" in msg and "5000 bytes" in msg and "past the end" in msg, msg
    # A file of the right length with garbage in it is not called truncated.
    path.write_bytes(b"\x10\x00\x00\x00TFL3" + bytes(len(data)))
    rc, out, _ = _main(capsys, "check", path, "--json")
    assert rc == 4 and "looks truncated" not in json.loads(out)["error"]["message"]


@pytest.mark.parametrize("command", ["check", "explain", "tune", "bench"])
def test_a_refused_option_is_named_without_the_runtime_line(command, tmp_path, capsys):
    path = tiny_conv_model(tmp_path / "conv.tflite")
    rc, out, _ = _main(capsys, command, path, "--opt", "no_such_key=1", "--json", *(["-"] if command == "bench"
                                                                                       else []))
    err = json.loads(out)["error"]
    assert rc == 2 and err["kind"] == "usage", err
    assert err["message"].startswith("bad delegate option: unknown option 'no_such_key'"), err
    assert "Failed to load delegate" not in err["message"]


def test_reason_drops_the_runtime_line_however_it_is_worded():
    lib = "/x/site-packages/tflite_gpu/libgpu_delegate.so"
    for text in (f"Failed to load delegate from {lib}\nunknown option 'k'", f"Failed to load delegate from {lib}: "
                 "unknown option 'k'"):
        assert errors.reason(ValueError(text)) == "unknown option 'k'"
    with pytest.raises(ValueError):
        resolved.options({"no_such_key": "1"})  # the library itself refuses it: what the CLI reports
