"""Measure where the delegate's float view of a full-integer model drifts
from the CPU's integer kernels (issue 14). Run from the repository root:

    TFLITE_GPU_LIBRARY=build/libgpu_delegate.so PYTHONPATH=python \\
        python tests/int8_drift.py [--inputs N] [--batch B] [--seed S]

For each MTCNN-like net (tests/int8_models.py) it prints, per tensor:
- whole: the model's tensor as the delegate computes it through the whole
  graph (every tensor marked as an output) against the CPU's;
- alone: the op that writes it, run alone on the CPU's own int8 input
  values (same scales), against the CPU's op: the op's own rounding.
Columns: % within 1 step, % identical, max steps, mean signed difference.
"""
from __future__ import annotations

import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from conftest import run_cpu, run_delegate  # noqa: E402
from int8_models import pnet, rnet, summary  # noqa: E402


def measure(net, inputs):
    """Per-tensor rows: (tensor, op, whole summary, alone summary)."""
    names = net.tensors()[1:]
    model = net.int8_model(outputs=names)
    cpu = {k: [] for k in names}
    gpu = {k: [] for k in names}
    for x in inputs:
        for k, v in zip(names, run_cpu(model, [x])):
            cpu[k].append(v)
        out, report = run_delegate(model, [x])
        assert report.cpu_nodes == 0, report
        for k, v in zip(names, out):
            gpu[k].append(v)
    cpu_in = {"input": inputs}
    cpu_in.update(cpu)
    rows = []
    for i, nd in enumerate(net.nodes):
        k = nd["output"]
        single = net.single_op_model(i)
        alone_cpu, alone_gpu = [], []
        for x in cpu_in[nd["inputs"][0]]:
            alone_cpu.append(run_cpu(single, [x])[0])
            alone_gpu.append(run_delegate(single, [x])[0][0])
        rows.append((k, nd["op"], summary(np.stack(gpu[k]), np.stack(cpu[k])),
                     summary(np.stack(alone_gpu), np.stack(alone_cpu))))
    return rows


def _fmt(s):
    return f"{100 * s['within1']:6.2f}% {100 * s['exact']:6.2f}% {s['max']:3d} {s['mean_signed']:+.3f}"


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--inputs", type=int, default=4)
    ap.add_argument("--batch", type=int, default=4)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--pnet-size", type=int, default=12)
    args = ap.parse_args(argv)
    for net in (pnet(args.seed, args.batch, args.pnet_size), rnet(args.seed, args.batch)):
        net.calibrate(run_cpu)
        print(f"== {net.name} (seed {args.seed}, batch {args.batch}, {args.inputs} inputs); "
              f"input scale {net.qparams['input'][0]:.5f}")
        print(f"{'tensor':12} {'op':16} {'shape':18} {'scale':>8} | whole: <=1    same  max  mean  "
              f"| alone: <=1    same  max  mean")
        for k, op, whole, alone in measure(net, net.test_inputs(args.inputs)):
            print(f"{k:12} {op:16} {str(net.shapes[k]):18} {net.qparams[k][0]:8.5f} | "
                  f"{_fmt(whole)} | {_fmt(alone)}{'   <- output' if k in net.outputs else ''}")



# -- which ops' rounding makes the drift: numpy counterfactuals ---------------

SCENARIOS = {  # op types done the CPU's integer way; the rest the float-view way
    "float view (today)": (),
    "CONV_2D exact": ("CONV_2D",),
    "PRELU exact": ("PRELU",),
    "FULLY_CONNECTED exact": ("FULLY_CONNECTED",),
    "CONV_2D + PRELU exact": ("CONV_2D", "PRELU"),
    "CONV_2D + FC exact": ("CONV_2D", "FULLY_CONNECTED"),
    "CONV_2D + PRELU + FC exact": ("CONV_2D", "PRELU", "FULLY_CONNECTED"),
    "all integer, reference ties": "REFERENCE",  # integer, but RoundingDivideByPOT's ties away everywhere
}


def counterfactuals(net, inputs):
    """{scenario: {output: summary}} against the CPU's integer arithmetic
    (the 'cpu' emulation, which tests/test_int8_fidelity.py checks is bit
    exact), over all inputs."""
    import int8_emulate as E  # noqa: E402
    every = {nd["output"] for nd in net.nodes}
    ref = [E.forward(net, x, exact=every) for x in inputs]
    out = {}
    for name, ops in SCENARIOS.items():
        if ops == "REFERENCE":
            got = [E.forward(net, x, exact=every, rounding=E.REFERENCE) for x in inputs]
        else:
            exact = {nd["output"] for nd in net.nodes if nd["op"] in ops}
            got = [E.forward(net, x, exact=exact) for x in inputs]
        out[name] = {k: summary(np.stack([g[k] for g in got]), np.stack([r[k] for r in ref]))
                     for k in net.outputs}
    return out


def main_emulate(seeds, inputs, batch, pnet_size):
    for make, kw in ((pnet, dict(size=pnet_size)), (rnet, {})):
        print(f"== {make.__name__}: {len(seeds)} seeds x {inputs} inputs x batch {batch} "
              f"(numpy emulation; per output: % within 1 step / max steps)")
        rows = {}
        for seed in seeds:
            net = make(seed, batch, **kw).calibrate(run_cpu)
            for name, res in counterfactuals(net, net.test_inputs(inputs)).items():
                for i, k in enumerate(net.outputs):
                    rows.setdefault((name, i), []).append(res[k])
        for name in SCENARIOS:
            cells = []
            for i, label in enumerate(("prob", "box")):
                r = rows[(name, i)]
                cells.append(f"{label}: {100 * min(s['within1'] for s in r):6.2f}% min, "
                             f"{100 * np.mean([s['within1'] for s in r]):6.2f}% mean, "
                             f"max {max(s['max'] for s in r)}")
            print(f"  {name:28} " + " | ".join(cells))


if __name__ == "__main__":
    if "--emulate" in sys.argv:  # --emulate [SEEDS [INPUTS [BATCH [PNET_SIZE]]]]
        a = [int(v) for v in sys.argv[sys.argv.index("--emulate") + 1:]] + [8, 4, 8, 12][len(sys.argv) - sys.argv.index("--emulate") - 1:]
        main_emulate(list(range(a[0])), a[1], a[2], a[3])
    else:
        main()
