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


if __name__ == "__main__":
    main()
