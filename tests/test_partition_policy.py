"""partition_policy (largest | all | measured) on a split model whose
largest partition is the wrong one to delegate: many tiny elementwise ops
after a reduction (launches and boundary copies cost more than the CPU's
work), against two convolutions (the model's FLOPs) in a smaller one."""
from __future__ import annotations

import numpy as np
import pytest

import tflite_gpu
from conftest import _interpreter, _run, assert_close, run_cpu, test_options
from tflite_gpu import _capi
from tflite_gpu.model_builder import ModelBuilder

TINY_OPS = 11


def split_model(seed=0, size=40, channels=17):
    """x -> CONV_2D -> CONV_2D -> CEIL (CPU only) -> MEAN -> 11 elementwise ops.
    Partitions: the two convolutions (2 nodes) and the reduction with the
    tiny chain (12 nodes), the largest by node count."""
    rng = np.random.default_rng(seed)
    mb = ModelBuilder()
    x = mb.add_input([1, size, size, 5])
    cur, cin = x, 5
    for cout in (channels, channels):
        w = mb.add_tensor([cout, 3, 3, cin], data=(rng.standard_normal((cout, 3, 3, cin)) / 6).astype(np.float32))
        b = mb.add_tensor([cout], data=rng.standard_normal(cout).astype(np.float32))
        y = mb.add_tensor([1, size, size, cout])
        mb.add_op("CONV_2D", [cur, w, b], [y], dict(padding="SAME", fused_activation="RELU"))
        cur, cin = y, cout
    ceil = mb.add_tensor([1, size, size, channels])
    mb.add_op("CEIL", [cur], [ceil])
    axes = mb.add_tensor([2], np.int32, data=np.asarray([1, 2], np.int32))
    cur = mb.add_tensor([1, channels])
    mb.add_op("MEAN", [ceil, axes], [cur], dict(keep_dims=False))
    for i in range(TINY_OPS):
        k = mb.add_tensor([channels], data=rng.uniform(0.5, 1.5, channels).astype(np.float32))
        nxt = mb.add_tensor([1, channels])
        mb.add_op("MUL" if i % 2 else "ADD", [cur, k], [nxt], dict(fused_activation="NONE"))
        cur = nxt
    mb.mark_output(cur)
    return mb.build(), [rng.standard_normal((1, size, size, 5)).astype(np.float32)]


def _delegate(model, inputs, **options):
    d = tflite_gpu.load_delegate(**test_options(**options))
    it = _interpreter(model, [d])
    ptr = d._get_native_delegate_pointer()
    report = {"stats": _capi.delegate_stats(ptr), "nodes": _capi.delegate_nodes(ptr),
              "candidates": _capi.delegate_candidates(ptr)}
    outputs = _run(it, inputs)
    del it
    return outputs, report


def test_largest_takes_the_cheap_chain():
    model, inputs = split_model()
    _, rep = _delegate(model, inputs)
    gpu = [n["op"] for n in rep["nodes"] if n["where"] == "gpu"]
    assert gpu.count("CONV_2D") == 0 and len(gpu) == 1 + TINY_OPS, gpu
    assert rep["candidates"] == []  # only the measured policy times partitions


def test_measured_times_every_partition_and_skips_the_cheap_chain():
    model, inputs = split_model()
    expected = run_cpu(model, inputs)
    actual, rep = _delegate(model, inputs, partition_policy="measured")
    cands = rep["candidates"]
    assert len(cands) == 2, cands
    chain = max(cands, key=lambda c: len(c["nodes"]))
    convs = min(cands, key=lambda c: len(c["nodes"]))
    assert len(chain["nodes"]) == 1 + TINY_OPS and len(convs["nodes"]) == 2
    assert all(c["device_us"] and c["device_us"] > 0 and c["cpu_us"] > 0 for c in cands), cands
    # 12 launches and the round trip of a 108 KB input cost more on any device
    # than 12 CPU nodes that mostly read that input once.
    assert chain["device_us"] > chain["cpu_us"] and chain["where"] == "cpu", cands
    # The choice follows the numbers: a partition goes to the device when it
    # is faster there.
    assert convs["where"] == ("gpu" if convs["device_us"] < convs["cpu_us"] else "cpu"), cands
    where = {n["node"]: n["where"] for n in rep["nodes"]}
    assert all(where[i] == convs["where"] for i in convs["nodes"])
    assert all(where[i] == "cpu" for i in chain["nodes"])
    assert rep["stats"]["partitions"] == (convs["where"] == "gpu")
    reasons = [n["reason"] for n in rep["nodes"] if n["node"] in chain["nodes"]]
    assert all("partition_policy=measured" in r for r in reasons), reasons
    assert_close(actual[0], expected[0], rtol_l2=1e-4, atol=1e-4)


def test_all_delegates_every_partition():
    model, inputs = split_model(seed=1, size=9, channels=3)
    expected = run_cpu(model, inputs)
    actual, rep = _delegate(model, inputs, partition_policy="all")
    assert rep["stats"]["partitions"] == 2 and rep["stats"]["cpu_nodes"] == 1, rep["stats"]
    assert_close(actual[0], expected[0], rtol_l2=1e-4, atol=1e-4)


def test_measured_on_a_whole_model_decides_it_too():
    """One partition (no CEIL): measured times it and keeps it only if the
    device wins; either way the outputs agree with the CPU."""
    rng = np.random.default_rng(3)
    mb = ModelBuilder()
    x = mb.add_input([1, 3, 5, 17])
    cur = x
    for i in range(TINY_OPS):
        k = mb.add_tensor([17], data=rng.uniform(0.5, 1.5, 17).astype(np.float32))
        nxt = mb.add_tensor([1, 3, 5, 17])
        mb.add_op("ADD", [cur, k], [nxt], dict(fused_activation="NONE"))
        cur = nxt
    mb.mark_output(cur)
    model, inputs = mb.build(), [rng.standard_normal((1, 3, 5, 17)).astype(np.float32)]
    actual, rep = _delegate(model, inputs, partition_policy="measured")
    (c,) = rep["candidates"]
    assert len(c["nodes"]) == TINY_OPS
    assert c["where"] == ("gpu" if c["device_us"] < c["cpu_us"] else "cpu")
    assert rep["stats"]["delegated_nodes"] == (TINY_OPS if c["where"] == "gpu" else 0)
    assert_close(actual[0], run_cpu(model, inputs)[0], rtol_l2=1e-5, atol=1e-5)


@pytest.mark.parametrize("bad", ["fastest", "", "3", "largest,all"])
def test_bad_policy_is_refused_by_name(bad):
    with pytest.raises(ValueError, match="partition_policy"):
        tflite_gpu.load_delegate(**test_options(partition_policy=bad))


def test_explain_shows_each_candidate_and_the_choice(tmp_path):
    from tflite_gpu.explain import explain, format_explain
    model, _ = split_model(size=12, channels=5)
    path = tmp_path / "split.tflite"
    path.write_bytes(model)
    report = explain(path, test_options(partition_policy="measured"))
    assert len(report["candidates"]) == 2
    text = format_explain(report)
    assert "partition_policy=measured" in text
    for c in report["candidates"]:
        assert f"{len(c['nodes'])} nodes" in text and f"CPU {c['cpu_us']:.0f} us -> {c['where'].upper()}" in text
