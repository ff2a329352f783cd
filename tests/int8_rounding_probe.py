"""Which rounding does the CPU runtime in use apply, per int8 op? (issue 14)

Bit-exactness with the CPU depends on the tie rule of the last rounding
shift of MultiplyByQuantizedMultiplier, which differs between kernels and
runtimes. This runs one seeded single-op model per op type on the CPU
interpreter and reports which of the emulated rules (tests/int8_emulate.py)
reproduces it bit for bit: "up", "away", "single", or none ("float" is the
delegate's float view, for comparison). Prototype of the probe that `check`
could run. From the repository root:

    PYTHONPATH=python python tests/int8_rounding_probe.py
"""
from __future__ import annotations

import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import int8_emulate as E  # noqa: E402
from conftest import run_cpu  # noqa: E402
from int8_models import Net  # noqa: E402

RULES = ("up", "away", "single")


def probe_nets(seed=0):
    """One small net per op type; the op under test is the last node."""
    nets = {}
    net = Net("conv", [4, 16, 16, 8], seed)
    net.outputs = [net.conv("input", 32, 3)]
    nets["CONV_2D"] = net
    net = Net("depthwise", [4, 20, 20, 32], seed)
    net.outputs = [net.depthwise("input", 3)]
    nets["DEPTHWISE_CONV_2D"] = net
    net = Net("fc", [512, 576], seed)
    net.outputs = [net.fc("input", 128)]
    nets["FULLY_CONNECTED"] = net
    net = Net("prelu", [4, 16, 16, 8], seed)
    net.outputs = [net.prelu(net.conv("input", 32, 3))]
    nets["PRELU"] = net
    return nets


def probe(seed=0):
    """{op: {rule: fraction of elements identical to the CPU}}."""
    out = {}
    for op, net in probe_nets(seed).items():
        if op == "FULLY_CONNECTED":  # Net's calibration images are 4-D; feed seeded normal rows
            rng = np.random.default_rng(seed)
            calib = [rng.normal(0, 1, net.shapes["input"]).astype(np.float32) for _ in range(2)]
            net.calibration_inputs = lambda count, seed=1, _c=calib: _c[:count]
        net.calibrate(run_cpu, count=2)
        x = net.test_inputs(1)[0]
        names = net.tensors()[1:]
        cpu = dict(zip(names, run_cpu(net.int8_model(outputs=names), [x])), input=x)
        nd = net.nodes[-1]
        src = cpu[nd["inputs"][0]]
        res = {}
        for rule in RULES:
            got = E.run_node(net, nd, src, "cpu", {op: rule})
            res[rule] = float((got == cpu[nd["output"]]).mean())
        res["float"] = float((E.run_node(net, nd, src, "float") == cpu[nd["output"]]).mean())
        out[op] = res
    return out


if __name__ == "__main__":
    import tflite_gpu
    print("runtime:", tflite_gpu.runtime().__name__)
    for op, res in probe().items():
        exact = [r for r in RULES if res[r] == 1.0]
        print(f"{op:18} {'/'.join(exact) or 'none':12} "
              + "  ".join(f"{k} {100 * v:7.3f}%" for k, v in res.items()))
