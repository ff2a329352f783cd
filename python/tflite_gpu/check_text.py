"""`tflite-gpu check`'s text: each output's verdict and the rule that
decided it, each invoke's, and check --bisect's answer (check.py and
check_bisect.py make the results)."""
from __future__ import annotations

import numpy as np

from ._output import display
from .check import NOISE_FACTOR, STEP_MAX, STEP_WITHIN_1, CheckResult, OutputResult
from .explain import format_policy


def _rule(o: OutputResult) -> str:
    """Why an output passed or failed, in words, with the numbers."""
    src = _tolerance_source(o)
    if o.nonfinite_mismatch:
        return (f"{o.nonfinite_mismatch} element(s) non-finite on one side only (or a different NaN/infinity); "
                f"on the others relative L2 {o.rel_l2:.3g}, max abs {o.max_abs:.3g}")
    by = o.passed_by
    if by == "relative L2":
        return f"relative L2 {o.rel_l2:.3g} <= tolerance {o.tolerance:.3g} ({src}), max abs {o.max_abs:.3g}"
    if by == "max abs floor":
        return (f"passed by the max abs rule: max abs {o.max_abs:.3g} <= {o.abs_floor:.3g}, although relative L2 "
                f"{o.rel_l2:.3g} > tolerance {o.tolerance:.3g} ({src})")
    return (f"relative L2 {o.rel_l2:.3g} > tolerance {o.tolerance:.3g} ({src}) and max abs "
            f"{o.max_abs:.3g} > {o.abs_floor:.3g}")


def _tolerance_source(o: OutputResult) -> str:
    return {"FP32": "FP32 tolerance", "FP16": "FP16 tolerance",
            "CPU noise": f"{NOISE_FACTOR:g} x the CPU's own XNNPACK-vs-builtin difference",
            "quantized model": "quantized-model tolerance", "--tolerance": "--tolerance"}.get(o.tolerance_from,
                                                                                          o.tolerance_from)


def format_result(r: CheckResult) -> str:
    lines = [
        f"model: {display(r.model)}",
        f"device: {r.device['name']} ({r.device['platform']}), {r.device['precision'].upper()}, {_applies(r)}",
        f"nodes: {r.delegated_nodes} delegated, {r.cpu_nodes} on the CPU, {r.partitions} partition(s)",
    ]
    lines += [format_run(x) for x in r.runs]
    lines += [f"partition {i}: {format_policy(p)}" for i, p in enumerate(r.policies) if p]
    if r.nothing_delegated:
        lines.append("nothing delegated: every node ran on the CPU, so the outputs below compare the CPU with itself "
                     "and say nothing about the delegate (`tflite-gpu explain` says why each node stayed)")
    if r.reference != "cpu":
        other = r.reference.split("-")[1].upper()
        lines.append(f"reference: no CPU reference (the CPU interpreter cannot run this model: {r.cpu_error}); "
                     f"compared with the delegate in {other} instead, within the FP16 tolerance")
        lines.append(f"deterministic (the first input again gives the same outputs): {'yes' if r.deterministic else 'NO'}")
    if r.kernel_cache is not None:
        c = r.kernel_cache
        lines.append(f"kernel cache: {c['hits']} partition(s) loaded, {c['misses']} compiled, {c['writes']} file(s) "
                     f"written, {c['rejected']} rejected")
    lines += _input_lines(r.inputs)
    for o in r.outputs:
        verdict = "PASS" if o.passed else "FAIL"
        against = "CPU XNNPACK vs builtin " + format(o.cpu_noise, ".2g") if r.reference == "cpu" else \
            "vs delegate " + r.reference.split("-")[1].upper()
        nonfinite = (f"; {o.nonfinite} non-finite value(s) in the reference"
                     + (", in the same places in the delegate's output" if not o.nonfinite_mismatch else "")
                     if o.nonfinite and o.nonfinite_matched != "xnnpack" else "")
        if o.nonfinite and o.nonfinite_matched == "xnnpack":
            nonfinite = (f"; {o.nonfinite} non-finite value(s) equal to CPU XNNPACK's in every place (the builtin "
                         "kernels, the reference, differ there; compared on the elements finite in both)")
        if o.step > 0:
            lines.append(f"  {verdict} {o.name} {list(o.shape)}: quantized (step {o.step:.3g}): "
                         f"{o.within_1_step:.2%} within 1 step (>= {STEP_WITHIN_1:.0%}), max {o.max_steps:g} "
                         f"step(s) (<= {STEP_MAX}), {against}{nonfinite}")
            if not o.passed and np.isfinite(o.max_steps):
                lines.append("    (each op agrees within 1 step; through many quantized ops these differences "
                             "can grow, see docs/quantized.md)")
            continue
        lines.append(f"  {verdict} {o.name} {list(o.shape)}: {_rule(o)}, {against}{nonfinite}")
    lines += _invoke_lines(r)
    if r.bisect is not None:
        lines += format_bisect(r.bisect)
    lines.append(r.verdict if not r.nothing_delegated else "PASS (nothing delegated)")
    return "\n".join(lines)


def _applies(r: CheckResult) -> str:
    """What built the partitions that ran: the kernel set when they ran
    their kernels; the VM mode when one ran (the VM builds the CPU set's
    bodies whatever kernel_set says)."""
    vm = sorted({x["execution"] for x in r.runs} - {"kernels"})
    kernels = f"{r.device['kernel_set']} kernel set"
    if not vm:
        return kernels
    modes = "+".join(vm)
    vm_text = f"execution {modes} (the VM, built from the CPU kernel set's bodies whatever kernel_set says)"
    return vm_text if all(x["execution"] != "kernels" for x in r.runs) else f"{kernels} and {vm_text}"


def format_run(run: dict) -> str:
    """How one partition ran on the last invoke (the library's run report)."""
    line = f"partition {run['partition']}: ran {run['execution']} on the last invoke, {run['launches']} launch(es)"
    return line + (f"; fallback to {run['execution']}: {run['fallback']}" if run["fallback"] else "")


def _input_lines(inputs: list) -> list:
    """Each input and how it was filled (the user's file or generated how)."""
    if not inputs:
        return []
    width = max(len(p["name"]) for p in inputs)
    return ["inputs:"] + [f"  {p['name']:<{width}}  {p['dtype']}{p['shape']}  "
                          f"{'given' if p['how'] == 'user' else 'generated'} ({p['how']}): {p['detail']}"
                          for p in inputs]


def _invoke_lines(r: CheckResult) -> list:
    """One line for all invokes when they agree, else one per invoke."""
    if not r.invokes:
        return []
    n = sum(i["repeat_of"] is None for i in r.invokes)
    seeds = ", ".join(str(i["seed"]) for i in r.invokes if i["repeat_of"] is None)
    head = f"invokes: {n} on inputs of seeds {seeds}, then the first input again"
    if all(i["passed"] for i in r.invokes):
        return [head + ": all agree with the reference"]
    lines = [head + ":"]
    for i in r.invokes:
        what = f"invoke {i['invoke']} (seed {i['seed']}" + (", the first input again)" if i["repeat_of"] else ")")
        if i["passed"]:
            lines.append(f"  {what}: agrees")
            continue
        line = f"  {what}: DIFFERS in {', '.join(i['failed'])}"
        if i["matches_invoke"]:
            line += (f"; its outputs are those of invoke {i['matches_invoke']}'s input: the delegate computed on "
                     "another invoke's data (a stale buffer, or state carried between invokes)")
        elif i["repeat_of"] and any(j["passed"] for j in r.invokes if j["invoke"] == i["repeat_of"]):
            line += (f"; the same input agreed at invoke {i['repeat_of']}: the result depends on the invokes "
                     "before it")
        lines.append(line)
    return lines


def format_bisect(b: dict) -> list:
    """check --bisect's answer (check_bisect.py), in words."""
    if b.get("nothing_to_find"):
        return [f"bisect: nothing to find ({b['nothing_to_find']})"]
    lines = ["bisect (one invoke, every tensor the delegate writes read back, the CPU interpreter's kept):"]
    if b.get("error"):
        return lines + [f"  not possible: {b['error']}"]
    first = b.get("first")
    if not first:
        lines.append(f"  no node differs on a fresh invoke of this input ({b['compared']} tensors compared, "
                     f"{b['hidden']} hidden by fusion): the difference needs the invokes before it (see above)")
        return lines
    lines.append(f"  first node that differs: node {first['node']} {first['op']}, tensor {first['tensor']} "
                 f"'{first['tensor_name']}' {first['shape']}: relative L2 {first['rel_l2']:.3g} > "
                 f"{first['tolerance']:.3g}, max abs {first['max_abs']:.3g}")
    g = first.get("group")
    if first["where"] == "cpu":
        lines.append("  that node ran on the CPU: the inputs the delegate handed it differ (see the nodes before)")
    elif g:
        kernels = ", ".join(g["kernels"]) or "none"
        lines.append(f"  computed by partition {g['partition']}, the launch of node {g['tflite_node']} ({kernels}), "
                     f"which computes nodes {', '.join(map(str, sorted(g['members'])))}")
        if first.get("hidden"):
            lines.append(f"  fusion hid the output of node(s) {', '.join(map(str, first['hidden']))} in that launch: "
                         "the wrong op is one of the launch's nodes")
    skipped = (f", {b['skipped']} not comparable (a CPU node's, or one the CPU interpreter overwrote in place)"
               if b["skipped"] else "")
    lines.append(f"  the {b['compared']} tensors before it agree ({b['hidden']} hidden by fusion{skipped})")
    return lines
