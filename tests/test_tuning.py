"""The tuner (delegate/tuner.c): with inference_preference=SUSTAINED_SPEED
and nothing remembered, or tune=force, each partition's candidate policies
(kernels, persistent, the VM's bodies and grids) are built, checked against
the first on seeded inputs, timed interleaved, and the fastest by 5% is
remembered in the cache directory (delegate/policy_store.c), which every
later start reads whatever the options ask. Then, with kernels chosen, the
work-group sizes are timed too (tune.c).

These tests hold the slow candidates out where they are not the point (the
override vm_tiles=0 fixes that field, so the tiles candidate cannot be):
PoCL compiles the GPU set's bodies slowly. Results must never change beyond
the reduction order: against the CPU interpreter, 1e-4 of the output's scale."""
from __future__ import annotations

import pathlib

import numpy as np
import pytest

import tflite_gpu
from conftest import _interpreter, _run, assert_close, run_cpu, set_policy, test_options
from tflite_gpu import _capi, explain
from tflite_gpu.model_builder import ModelBuilder


def tuned_model(seed=0):
    """CONV_2D (3x3, 17 channels) -> DEPTHWISE -> ADD -> MEAN over H, W ->
    SOFTMAX: conv, depthwise, elementwise, reduction and softmax kernels,
    each with its own group size; the sum an output too."""
    rng = np.random.default_rng(seed)
    mb = ModelBuilder()
    x = mb.add_input([2, 13, 11, 5])
    w = mb.add_tensor([17, 3, 3, 5], data=(rng.standard_normal((17, 3, 3, 5)) / 5).astype(np.float32))
    b = mb.add_tensor([17], data=rng.standard_normal(17).astype(np.float32))
    c = mb.add_tensor([2, 13, 11, 17])
    mb.add_op("CONV_2D", [x, w, b], [c], dict(padding="SAME", fused_activation="RELU"))
    dw = mb.add_tensor([1, 3, 3, 17], data=(rng.standard_normal((1, 3, 3, 17)) / 3).astype(np.float32))
    db = mb.add_tensor([17], data=rng.standard_normal(17).astype(np.float32))
    d = mb.add_tensor([2, 13, 11, 17])
    mb.add_op("DEPTHWISE_CONV_2D", [c, dw, db], [d], dict(padding="SAME", depth_multiplier=1))
    s = mb.add_tensor([2, 13, 11, 17])
    mb.add_op("ADD", [c, d], [s], dict(fused_activation="NONE"))
    axes = mb.add_tensor([2], np.int32, data=np.asarray([1, 2], np.int32))
    m = mb.add_tensor([2, 17])
    mb.add_op("MEAN", [s, axes], [m], dict(keep_dims=False))
    out = mb.add_tensor([2, 17])
    mb.add_op("SOFTMAX", [m], [out], dict(beta=1.0))
    mb.mark_output(out)
    mb.mark_output(s)
    return mb.build(), [rng.uniform(-1, 1, (2, 13, 11, 5)).astype(np.float32)]


@pytest.fixture
def cache_dir(tmp_path, monkeypatch):
    """The remembered policies' directory (the library's default one), and
    no slow tiles candidate."""
    d = tmp_path / "cache"
    d.mkdir(mode=0o700)
    monkeypatch.setenv("TFLITE_GPU_CACHE_DIR", str(d))
    set_policy(monkeypatch, vm_tiles=0)
    return d


def _start(model, inputs, **options):
    """One start: (outputs, the partition's report, the tuner's rows)."""
    d = tflite_gpu.load_delegate(**test_options(**options))
    it = _interpreter(model, [d])
    out = _run(it, inputs)
    ptr = d._get_native_delegate_pointer()
    (part,) = _capi.delegate_partitions(ptr)
    tuning = _capi.delegate_tuning(ptr)
    del it
    return out, part, tuning


def _policy_files(cache_dir):
    return sorted(pathlib.Path(cache_dir).glob("*policy*"))


def _sources(part):
    return {k: v["source"] for k, v in part["policy"].items()}


def test_the_choice_is_right_remembered_and_read_with_no_timing(cache_dir):
    model, x = tuned_model(1)
    expected = run_cpu(model, x)
    out, part, tuning = _start(model, x, inference_preference="SUSTAINED_SPEED")
    for a, e in zip(out, expected):
        assert_close(a, e)
    names = [r["candidate"] for r in tuning]
    assert names[:3] == ["as resolved", "persistent", "persistent, fine bodies"], tuning
    assert sum(r["chosen"] for r in tuning) == 1 and all(r["us"] for r in tuning if r["chosen"]), tuning
    assert _sources(part)["execution"] == "measured" and _sources(part)["vm_tiles"] == "override", part["policy"]
    (file,) = _policy_files(cache_dir)
    # The next start reads it whatever the preference: nothing timed.
    for preference in ("SUSTAINED_SPEED", "FAST_SINGLE_ANSWER"):
        again, part2, tuning2 = _start(model, x, inference_preference=preference)
        assert tuning2 == [] and part2["policy"] == part["policy"], (tuning2, part2["policy"])
        for a, b in zip(again, out):
            assert_close(a, b)
    assert _policy_files(cache_dir) == [file]


def test_a_slower_candidate_loses_and_a_wrong_one_is_refused(cache_dir, monkeypatch):
    """The test hooks: the first candidate slowed loses to a faster one; a
    candidate whose outputs read back wrong is refused whatever its time."""
    model, x = tuned_model(2)
    monkeypatch.setenv("TFLITE_GPU_TEST_TUNE_SLOW", "as resolved")
    monkeypatch.setenv("TFLITE_GPU_TEST_TUNE_WRONG", "persistent")
    out, part, tuning = _start(model, x, tune="force")
    rows = {r["candidate"]: r for r in tuning}
    assert not rows["as resolved"]["chosen"], tuning
    assert rows["persistent"]["us"] is None and "relative L2 from the first" in rows["persistent"]["why"], tuning
    assert not rows["persistent"]["chosen"]
    for a, e in zip(out, run_cpu(model, x)):
        assert_close(a, e)


@pytest.mark.parametrize("damage", ["garbage", "truncated", "another partition"])
def test_a_bad_remembered_file_is_ignored_and_tuned_again(cache_dir, damage, capfd):
    model, x = tuned_model(3)
    _start(model, x, inference_preference="SUSTAINED_SPEED")
    (file,) = _policy_files(cache_dir)
    data = file.read_bytes()
    if damage == "garbage":
        file.write_bytes(b"not a policy file at all")
    elif damage == "truncated":
        file.write_bytes(data[: len(data) // 2])
    else:  # the file of another model's partition, under this one's name
        other, ox = tuned_model(4)
        file.unlink()
        _start(other, ox, inference_preference="SUSTAINED_SPEED")
        (made,) = _policy_files(cache_dir)
        made.rename(file)
    capfd.readouterr()
    out, part, tuning = _start(model, x, inference_preference="SUSTAINED_SPEED", log_level="warning")
    err = capfd.readouterr().err
    assert "remembered policy ignored" in err, err
    assert tuning and _sources(part)["execution"] == "measured", tuning
    for a, e in zip(out, run_cpu(model, x)):
        assert_close(a, e)


def test_an_option_beats_the_remembered_choice_and_an_override_beats_both(cache_dir, monkeypatch, tmp_path):
    model, x = tuned_model(5)
    monkeypatch.setenv("TFLITE_GPU_TEST_TUNE_SLOW", "as resolved")  # kernels lose: persistent is remembered
    _start(model, x, tune="force")
    monkeypatch.delenv("TFLITE_GPU_TEST_TUNE_SLOW")
    path = tmp_path / "m.tflite"
    path.write_bytes(model)
    remembered = explain.explain(path, {})["partitions"][0]["policy"]
    assert remembered["execution"] == {"value": "persistent", "source": "measured"}, remembered
    option = explain.explain(path, {"execution": "kernels"})["partitions"][0]["policy"]
    assert option["execution"] == {"value": "kernels", "source": "option"}, option
    over = explain.explain(path, {"execution": "kernels", "policy": "execution=stepped"})["partitions"][0]["policy"]
    assert over["execution"] == {"value": "stepped", "source": "override"}, over
    set_policy(monkeypatch, vm_tiles=None)
    rule = explain.explain(path, {"tune": "clear"})["partitions"][0]["policy"]  # forgets it, then the rule's
    assert rule["execution"] == {"value": "kernels", "source": "rule"} and not _policy_files(cache_dir), rule


def test_budget_zero_times_nothing_and_other_preferences_do_not_tune(cache_dir):
    model, x = tuned_model(6)
    _, part, tuning = _start(model, x, inference_preference="SUSTAINED_SPEED", tune_budget=0)
    assert all(r["us"] is None and "budget" in r["why"] for r in tuning) and not _policy_files(cache_dir), tuning
    _, part, tuning = _start(model, x, inference_preference="FAST_SINGLE_ANSWER")
    assert tuning == [] and not _policy_files(cache_dir) and _sources(part)["execution"] == "rule"


def test_a_bad_override_is_refused_when_the_delegate_is_made():
    with pytest.raises(ValueError, match=r"vm_groups_per_unit=9: accepted 1-4"):
        tflite_gpu.load_delegate(**test_options(policy="vm_groups_per_unit=9"))
    with pytest.raises(ValueError, match=r"'no_such_field' is not name=value of a policy field"):
        tflite_gpu.load_delegate(**test_options(policy="no_such_field=1"))


def test_a_resize_keeps_the_tuned_policy(cache_dir):
    model, _ = tuned_model(7)
    d = tflite_gpu.load_delegate(**test_options(inference_preference="SUSTAINED_SPEED"))
    it = _interpreter(model, [d])
    it.resize_tensor_input(it.get_input_details()[0]["index"], [1, 7, 9, 5])
    it.allocate_tensors()
    x = [np.random.default_rng(6).uniform(-1, 1, (1, 7, 9, 5)).astype(np.float32)]
    out = _run(it, x)
    del it
    ref = _interpreter(model)
    ref.resize_tensor_input(ref.get_input_details()[0]["index"], [1, 7, 9, 5])
    ref.allocate_tensors()
    for a, e in zip(out, _run(ref, x)):
        assert_close(a, e)


def test_tflite_gpu_tune_remembers_in_its_cache_dir_and_clear_forgets(tmp_path, monkeypatch):
    """`tflite-gpu tune MODEL --cache-dir DIR` makes DIR (0700), times the
    candidates and leaves the choice there; an application's start with
    that directory then times nothing; `--clear` forgets."""
    import json
    import os
    import stat
    import subprocess
    import sys

    model, x = tuned_model(8)
    path = tmp_path / "m.tflite"
    path.write_bytes(model)
    cache = tmp_path / "new" / "cache"  # not there yet
    env = dict(os.environ, TFLITE_GPU_POLICY="vm_tiles=0")
    env.pop("TFLITE_GPU_CACHE_DIR", None)
    cmd = [sys.executable, "-m", "tflite_gpu", "tune", str(path), "--cache-dir", str(cache), "--budget", "20"]
    r = subprocess.run(cmd + ["--json"], env=env, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    (row,) = json.loads(r.stdout)
    assert row["remembered_in"] == str(cache) and any(t["chosen"] for t in row["tuning"]), row
    assert stat.S_IMODE(cache.stat().st_mode) == 0o700
    (file,) = _policy_files(cache)
    monkeypatch.setenv("TFLITE_GPU_CACHE_DIR", str(tmp_path / "elsewhere"))  # only the options say where
    out, part, tuning = _start(model, x, **tflite_gpu.cache_options(str(cache), str(path)))
    assert tuning == [] and _sources(part)["execution"] == "measured", part["policy"]
    for a, e in zip(out, run_cpu(model, x)):
        assert_close(a, e)
    r = subprocess.run(cmd + ["--clear"], env=env, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0 and "forgotten" in r.stdout, (r.stdout, r.stderr)
    assert not file.exists()


@pytest.mark.parametrize("groups", [0, 1])
def test_the_work_group_step_runs_as_the_policy_says(cache_dir, monkeypatch, capfd, groups):
    """With kernels kept, the tuner times each dispatch's work-group size
    only under tune_groups=1 (the GPU rows; the CPU row says 0): the step
    logs what it moved, and the outputs stay right either way."""
    model, x = tuned_model(9)
    set_policy(monkeypatch, vm_tiles=0, tune_groups=groups)
    out, part, tuning = _start(model, x, tune="force", execution="kernels", log_level="info")
    err = capfd.readouterr().err
    assert ("dispatches take another work-group size" in err) == bool(groups), err[-2000:]
    assert [r["candidate"] for r in tuning] == ["as resolved"] and part["execution"] == "kernels", tuning
    for a, e in zip(out, run_cpu(model, x)):
        assert_close(a, e)
