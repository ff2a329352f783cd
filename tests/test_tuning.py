"""inference_preference=SUSTAINED_SPEED tunes the work-group sizes: the
partition is built once per candidate group scale (x1, 1/2, 1/4, 2), every
dispatch is timed alone, each keeps its fastest scale, and the choice is
written beside the kernel-cache file (tune.c), so the next start reads it
instead of timing. The choice must never change results beyond the
reduction order (a smaller reduction group sums in another order)."""
from __future__ import annotations

import pathlib
import re

import numpy as np
import pytest

import tflite_gpu
from conftest import _interpreter, _run, assert_close, run_cpu, test_options
from tflite_gpu.model_builder import ModelBuilder


def tuned_model(seed=0):
    """CONV_2D (3x3, 17 channels) -> DEPTHWISE -> ADD -> MEAN over H, W ->
    SOFTMAX: conv, depthwise, elementwise, reduction and softmax kernels,
    each with its own group size."""
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


def _run_with(model, inputs, cache_dir, **options):
    opts = dict(serialization_dir=str(cache_dir), model_token="tuning-test", **options)
    d = tflite_gpu.load_delegate(**test_options(**opts))
    it = _interpreter(model, [d])
    out = _run(it, inputs)
    del it
    return out


def _tune_files(cache_dir):
    return sorted(pathlib.Path(cache_dir).glob("*.tune"))


@pytest.fixture
def cache_dir(tmp_path):
    d = tmp_path / "cache"
    d.mkdir(mode=0o700)
    return d


def test_tuned_results_match_the_cpu_and_the_choice_is_remembered(cache_dir, capfd):
    model, x = tuned_model()
    expected = run_cpu(model, x)
    out = _run_with(model, x, cache_dir, inference_preference="SUSTAINED_SPEED", log_level="info")
    log = capfd.readouterr().err
    for a, e in zip(out, expected):
        assert_close(a, e)
    assert "SUSTAINED_SPEED:" in log and "dispatches take another work-group size" in log, log
    (tune,) = _tune_files(cache_dir)
    lines = tune.read_text().split("\n")
    header, scales = lines[0].split(), [int(v) for v in lines[1:] if v]
    assert header[:3] == ["tflite-gpu", "tune", "1"] and int(header[3]) == len(scales) > 0
    assert set(scales) <= {0, -1, -2, 1}

    # The next start reads the file and times nothing.
    again = _run_with(model, x, cache_dir, inference_preference="SUSTAINED_SPEED", log_level="info")
    log = capfd.readouterr().err
    assert "work-groups from" in log and "take another work-group size" not in log, log
    for a, b in zip(again, out):
        np.testing.assert_array_equal(a, b)


def test_every_scale_gives_correct_results(cache_dir):
    """Whatever a device's timings pick: each candidate scale for every
    dispatch at once (the file says so), against the CPU."""
    model, x = tuned_model(1)
    expected = run_cpu(model, x)
    _run_with(model, x, cache_dir, inference_preference="SUSTAINED_SPEED")
    (tune,) = _tune_files(cache_dir)
    n = int(tune.read_text().split()[3])
    for scale in (0, -1, -2, 1):
        tune.write_text(f"tflite-gpu tune 1 {n}\n" + "".join(f"{scale}\n" for _ in range(n)))
        out = _run_with(model, x, cache_dir, inference_preference="SUSTAINED_SPEED")
        for a, e in zip(out, expected):
            assert_close(a, e)


# Empty, not ours, too few values, a scale that is not a candidate, an
# absurd count, too many values: each is ignored and the start times again.
@pytest.mark.parametrize("content", ["", "garbage\n", "tflite-gpu tune 1 3\n0\n0\n", "tflite-gpu tune 1 2\n0\n7\n",
                                     "tflite-gpu tune 1 99999999\n", "tflite-gpu tune 1 1\n0\n0\n0\n"])
def test_a_bad_tuning_file_is_timed_again(cache_dir, content, capfd):
    model, x = tuned_model(2)
    expected = run_cpu(model, x)
    _run_with(model, x, cache_dir, inference_preference="SUSTAINED_SPEED")
    (tune,) = _tune_files(cache_dir)
    tune.write_text(content)
    out = _run_with(model, x, cache_dir, inference_preference="SUSTAINED_SPEED", log_level="info")
    log = capfd.readouterr().err
    for a, e in zip(out, expected):
        assert_close(a, e)
    assert "take another work-group size" in log, log


def test_other_preferences_do_not_tune(cache_dir, capfd):
    model, x = tuned_model(3)
    _run_with(model, x, cache_dir, inference_preference="FAST_SINGLE_ANSWER", log_level="info")
    assert "SUSTAINED_SPEED" not in capfd.readouterr().err
    assert not _tune_files(cache_dir)


def test_tuning_without_a_cache_still_tunes(capfd):
    model, x = tuned_model(4)
    d = tflite_gpu.load_delegate(**test_options(inference_preference="SUSTAINED_SPEED", log_level="info"))
    it = _interpreter(model, [d])
    out = _run(it, x)
    del it
    assert "take another work-group size" in capfd.readouterr().err
    for a, e in zip(out, run_cpu(model, x)):
        assert_close(a, e)


def test_a_resize_keeps_working(cache_dir):
    model, _ = tuned_model(5)
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


def test_persistent_times_its_grid_and_remembers_it(cache_dir, capfd):
    """execution=persistent: no work-groups to tune (one program, one
    group size), but the grid's groups per compute unit (vm_tune.c): each
    candidate grid runs its self-test, then whole invokes. On a CPU device
    the larger grids are not all resident, so their self-tests fail: that
    must drop the candidate, not send the partition to its stepped
    fallback."""
    from tflite_gpu import _capi, explain

    model, x = tuned_model(7)
    expected = run_cpu(model, x)
    for start in ("first", "cached"):
        d = tflite_gpu.load_delegate(**test_options(
            serialization_dir=str(cache_dir), model_token="tuning-test", execution="persistent",
            inference_preference="SUSTAINED_SPEED", log_level="info"))
        it = _interpreter(model, [d])
        out = _run(it, x)
        (run,) = _capi.delegate_runs(d._get_native_delegate_pointer())
        del it
        log = capfd.readouterr().err
        assert run["execution"] == "persistent" and run["launches"] == 1 and run["fallback"] == "", (run, log)
        for a, e in zip(out, expected):
            assert_close(a, e)
        (grid,) = pathlib.Path(cache_dir).glob("*.grid")
        magic, per_unit = grid.read_text().rsplit(maxsplit=1)
        assert magic == "tflite-gpu vm grid 1" and per_unit in ("1", "2", "4"), grid.read_text()
        if start == "first":
            assert f"persistent grid of {per_unit} group(s) per compute unit (" in log and "1 per unit: " in log, log
        else:
            assert f"persistent grid of {per_unit} group(s) per compute unit, from " in log, log
        assert "runs stepped" not in log and not _tune_files(cache_dir), log
        if start == "first":
            units = int(re.search(r"per compute unit \((\d+) groups\)", log).group(1)) // int(per_unit)
    # A remembered choice is the grid the partition is built with (explain
    # builds without invoking: a grid a CPU device cannot keep resident
    # never runs here).
    path = pathlib.Path(cache_dir) / "m.tflite"
    path.write_bytes(model)
    grid.write_text("tflite-gpu vm grid 1 2\n")
    report = explain.explain(path, dict(serialization_dir=str(cache_dir), model_token="tuning-test",
                                        execution="persistent", inference_preference="SUSTAINED_SPEED"))
    assert {p["groups"] for p in report["phases"]} == {2 * units}, report["phases"][:1]
    assert f"on a grid of {2 * units} groups of 64" in explain.format_explain(report)
