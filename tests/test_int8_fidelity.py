"""Issue 14: whole full-integer int8 models drift from the CPU's integer
kernels by more than single ops do (docs/int8-fidelity.md).

The models are MTCNN-like P-Net and R-Net (tests/int8_models.py) quantized
as TF 2.14's converter does. What holds:

- tests/int8_emulate.py's "cpu" emulation reproduces the CPU interpreter bit
  for bit on every tensor; its "float" emulation (exact real value, rounded
  once per op) is what the delegate computed before the integer path: the
  drift was a difference of rounding rules, not a bug in a kernel;
- each op alone, on the CPU's own int8 input values, is within 1 step, and
  over all ops >= 99.5% identical (now: all identical);
- through the whole model those rare 1-step differences of the float view
  (each op's exact value rounded once) spread, and the outputs miss the
  target (>= 99% within 1 step, all within 2); in emulation, doing
  CONV_2D, PRELU and FULLY_CONNECTED the CPU's integer way (MAX_POOL_2D,
  RESHAPE and SOFTMAX unchanged) removes the drift;
- the delegate now does exactly that (delegate_c/ops/int8_exact.c): every
  tensor of these nets is identical to the CPU's, and the whole-model
  target holds;
- but only bit for bit: TFLite's own reference kernels (BUILTIN_REF, whose
  last rounding shift breaks ties away from zero where the wheel's
  optimized CONV_2D / FULLY_CONNECTED break them upward) miss the same
  target against its optimized kernels on these models.
"""
from __future__ import annotations

import numpy as np
import pytest

import int8_emulate as E
import tflite_gpu
from conftest import _run, run_cpu, run_delegate
from int8_models import pnet, rnet, summary

# Seeds whose float view misses the target today (tests/int8_drift.py --emulate).
NETS = {"pnet_seed3": (pnet, 3), "rnet_seed0": (rnet, 0), "rnet_seed4": (rnet, 4)}
BATCH = 16


def run_cpu_reference(model, inputs):
    """The CPU's reference kernels (OpResolverType.BUILTIN_REF)."""
    mod = tflite_gpu.runtime()
    it = mod.Interpreter(model_content=model, experimental_op_resolver_type=mod.OpResolverType.BUILTIN_REF)
    it.allocate_tensors()
    return _run(it, inputs)


@pytest.fixture(scope="module")
def nets():
    out = {}
    for key, (make, seed) in NETS.items():
        net = make(seed, BATCH).calibrate(run_cpu, count=4)
        x = net.test_inputs(1)[0]
        names = net.tensors()[1:]
        model = net.int8_model(outputs=names)
        cpu = dict(zip(names, run_cpu(model, [x])))
        gpu, report = run_delegate(model, [x])
        assert report.cpu_nodes == 0 and report.delegated_nodes == len(net.nodes)
        out[key] = (net, x, cpu, dict(zip(names, gpu)))
    return out


@pytest.fixture(scope="module")
def plain_runs(nets):
    """The models as shipped (only their own outputs, so the delegate fuses
    as it would): (net, cpu outputs, delegate outputs)."""
    out = {}
    for key, (net, x, _, _) in nets.items():
        model = net.int8_model()
        out[key] = (net, run_cpu(model, [x]), run_delegate(model, [x])[0])
    return out


@pytest.mark.parametrize("key", list(NETS))
def test_cpu_emulation_is_bit_exact(nets, key):
    net, x, cpu, _ = nets[key]
    emu = E.forward(net, x, exact={nd["output"] for nd in net.nodes})
    for k, v in cpu.items():
        np.testing.assert_array_equal(emu[k], v, err_msg=k)


@pytest.mark.parametrize("key", list(NETS))
def test_delegate_is_bit_exact(nets, key):
    """CONV_2D, FULLY_CONNECTED and PRELU run TFLite's integer
    requantization (delegate_c/ops/int8_exact.c); the other ops are exact in the
    float view: every tensor equals the CPU's."""
    net, x, cpu, gpu = nets[key]
    for k, v in gpu.items():
        np.testing.assert_array_equal(v, cpu[k], err_msg=k)


@pytest.mark.parametrize("key", ["rnet_seed0"])
def test_single_ops_within_one_step(nets, key):
    """Each op alone, fed the CPU's own int8 input: within 1 step, and over
    all ops >= 99.5% identical (an op's few outputs may hold one 1-step
    difference: FC 4 is 98.4% identical on this seed)."""
    net, x, cpu, _ = nets[key]
    values = dict(cpu, input=x)
    same = total = 0
    for i, nd in enumerate(net.nodes):
        inp = values[nd["inputs"][0]]
        expected = run_cpu(net.single_op_model(i), [inp])[0]
        np.testing.assert_array_equal(expected, cpu[nd["output"]])
        s = summary(run_delegate(net.single_op_model(i), [inp])[0][0], expected)
        assert s["max"] <= 1, (nd["output"], nd["op"], s)
        same += s["exact"] * expected.size
        total += expected.size
    assert same / total >= 0.995


@pytest.mark.parametrize("key", list(NETS))
def test_integer_conv_prelu_fc_remove_the_drift(nets, key):
    """The fix's design, in emulation: CONV_2D, PRELU and FULLY_CONNECTED
    the CPU's integer way, the other ops as today's float view."""
    net, x, cpu, _ = nets[key]
    exact = {nd["output"] for nd in net.nodes if nd["op"] in ("CONV_2D", "PRELU", "FULLY_CONNECTED")}
    emu = E.forward(net, x, exact=exact)
    for k in net.outputs:
        np.testing.assert_array_equal(emu[k], cpu[k], err_msg=k)
    today = E.forward(net, x)
    assert any(summary(today[k], cpu[k])["within1"] < 0.99 or summary(today[k], cpu[k])["max"] > 2
               for k in net.outputs)


@pytest.mark.parametrize("key", list(NETS))
def test_whole_model_within_steps(plain_runs, key):
    """The target: every output >= 99% within 1 step and all within 2."""
    net, cpu, gpu = plain_runs[key]
    for k, g, c in zip(net.outputs, gpu, cpu):
        s = summary(g, c)
        assert s["within1"] >= 0.99 and s["max"] <= 2, (k, s)


@pytest.mark.parametrize("key", ["rnet_seed0", "rnet_seed4"])
def test_reference_kernels_miss_the_target_too(nets, key):
    """TFLite's reference int8 kernels against its optimized ones: the
    tie rule of one rounding shift is enough to spread like the float view
    does. The emulation's REFERENCE rounding reproduces them (SOFTMAX aside:
    the reference kernel's exp is fixed point, the optimized one a float table;
    LiteRT 2.3's reference FULLY_CONNECTED also differs from it on a few elements)."""
    net, x, cpu, _ = nets[key]
    names = net.tensors()[1:]
    ref = dict(zip(names, run_cpu_reference(net.int8_model(outputs=names), [x])))
    values = dict(ref, input=x)
    for nd in net.nodes:  # each op on the reference kernels' own input
        emu = E.run_node(net, nd, values[nd["inputs"][0]], "cpu", E.REFERENCE)
        if nd["op"] not in ("SOFTMAX", "FULLY_CONNECTED"):
            np.testing.assert_array_equal(emu, ref[nd["output"]], err_msg=nd["output"])
        elif nd["op"] == "FULLY_CONNECTED":  # exact with tflite_runtime 2.14; LiteRT 2.3 differs on a few
            assert summary(emu, ref[nd["output"]])["max"] <= 1
    assert any(summary(ref[k], cpu[k])["within1"] < 0.99 or summary(ref[k], cpu[k])["max"] > 2
               for k in net.outputs)


def test_rounding_probe_finds_one_rule_per_op():
    """Each int8 op of the CPU runtime in use matches one of the emulated
    tie rules bit for bit (tests/int8_rounding_probe.py): what `check`
    would need to tell the delegate. CONV_2D, FULLY_CONNECTED and PRELU
    match the OPTIMIZED preset in tflite_runtime 2.14 and LiteRT 2.3;
    DEPTHWISE_CONV_2D rounds ties away in the one and up in the other."""
    from int8_rounding_probe import probe
    found = probe()
    for op, res in found.items():
        assert max(res[r] for r in ("up", "away", "single")) == 1.0, (op, res)
    for op in ("CONV_2D", "FULLY_CONNECTED", "PRELU"):
        assert found[op][E.OPTIMIZED[op]] == 1.0, (op, found[op])
