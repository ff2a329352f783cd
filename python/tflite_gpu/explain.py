"""`tflite-gpu explain`: the delegate's decision for every node (GPU or CPU
and why) and the partitions it built, read back from the library after the
interpreter applied it. The CLI runs explain() in a child process
(isolated_explain), so a crash while the model is parsed or delegated is
reported with the stage it happened in."""
from __future__ import annotations

import pathlib

from . import _capi, interpreters, isolate, resources, verify
from .check import apply_delegate, as_cli_errors, load, model_source


def explain(model, options: dict | None = None) -> dict:
    """{"model", "device", "nodes", "partitions", "candidates", "passes_table",
    "phases"} (candidates: partition_policy=measured's timed partitions, else [];
    phases: the VM phases of partitions built with execution=stepped or
    persistent, _capi.delegate_phases with the "op" of each phase's
    "tflite_node", else [];
    passes_table: the library's fusion passes, _capi.fusion_passes; each
    partition's "passes" says what they did there); the same errors as
    check.check_model. "device" holds the precision and the kernel set the
    library resolved (kernel_set=auto picks by device type)."""
    options = dict(options or {})
    options.setdefault("log_level", "silent")
    path = pathlib.Path(model)
    info = verify.verify_file(path)
    resources.check_fits(path, info, "explain", interpreters=1, delegate_options=options)
    source = model_source(path)
    isolate.phase("delegate:create")
    delegate = load(options)
    isolate.phase("cpu:parse")
    interpreters.make(source, allocate=False)  # the runtime's own parse first: its crash is not the delegate's
    isolate.phase("delegate")
    # Delegation happens while the interpreter is built; the report holds
    # the decision for every node and the partitions that were built.
    it = apply_delegate(source, delegate, allocate=False)
    ptr = delegate._get_native_delegate_pointer()
    nodes, parts = _capi.delegate_nodes(ptr), _capi.delegate_partitions(ptr)
    candidates = _capi.delegate_candidates(ptr)
    device = _capi.delegate_device(ptr)
    phases = _capi.delegate_phases(ptr)
    ops = {n["node"]: n["op"] for n in nodes}
    for ph in phases:  # the op of each phase's TFLite node
        ph["op"] = ops.get(ph["tflite_node"], "(conversion)" if ph["node"] < 0 else "")
    del it
    return {"model": str(path), "device": device, "nodes": nodes, "partitions": parts, "candidates": candidates,
            "passes_table": _capi.fusion_passes(), "phases": phases}


def isolated_explain(path, options):
    return as_cli_errors(path, lambda: explain(path, options))


def format_explain(report: dict) -> str:
    nodes, parts = report["nodes"], report["partitions"]
    d = report["device"]
    lines = [f"device: {d['name']} ({d['platform']}), {d['precision'].upper()}, {d['kernel_set']} kernel set\n"]
    lines += [f"{n['node']:>5}  {n['op']:<34} v{n['version']:<2} {n['where'].upper():<4} {n['reason']}" for n in nodes]
    gpu = sum(n["where"] == "gpu" for n in nodes)
    lines.append(f"\n{gpu} of {len(nodes)} nodes on the GPU in {len(parts)} partition(s)")
    for i, p in enumerate(parts):
        nodes_text = ",".join(map(str, p["nodes"][:12])) + (",..." if len(p["nodes"]) > 12 else "")
        # A persistent launch's grid (SUSTAINED_SPEED may have sized it), as its phases were built.
        grid = next(((ph["groups"], ph["group_size"]) for ph in report.get("phases") or [] if ph["partition"] == i),
                    None) if p.get("execution") == "persistent" else None
        how = (f"{p['dispatches']} kernel launches per invoke"
               + (f" (not the VM: {p['declined']})" if p.get("declined") else "")
               if p.get("execution", "kernels") == "kernels" else
               f"{p['dispatches']} dispatches run {p['execution']}: {p['launches']} launch(es) per invoke"
               + (f", {p['barriers']} grid barrier(s)" if p.get("barriers") else "")
               + (f" on a grid of {grid[0]} groups of {grid[1]}" if grid else ""))
        lines.append(f"  partition {i}: {len(p['nodes'])} nodes ({nodes_text}), {how}")
        if p.get("policy"):
            lines.append("    " + format_policy(p["policy"]))
    if report.get("show_passes"):
        lines += ["", format_passes(report)]
    if report.get("show_phases"):
        lines += ["", format_phases(report)]
    if report.get("candidates"):
        lines.append("\npartition_policy=measured: device time measured (inputs in, kernels, outputs out), "
                     "CPU time estimated")
        for c in report["candidates"]:
            first = ",".join(map(str, c["nodes"][:8])) + (",..." if len(c["nodes"]) > 8 else "")
            dev = "did not build" if c["device_us"] is None else f"{c['device_us']:.0f} us"
            lines.append(f"  {len(c['nodes']):>4} nodes ({first}): device {dev}, CPU {c['cpu_us']:.0f} us "
                         f"-> {c['where'].upper()}")
    return "\n".join(lines)


def format_policy(policy: dict) -> str:
    """A partition's policy on one line: each field's value, with its source
    where it is not the device's rule (measured, option, override)."""
    fields = [f"{k}={v['value']}" + (f" [{v['source']}]" if v["source"] != "rule" else "") for k, v in policy.items()]
    return "policy (the device's rule unless marked): " + ", ".join(fields)


def pass_totals(report: dict) -> dict:
    """{pass name: rewrites over the model's partitions}, for the passes that
    ran on at least one partition."""
    totals: dict = {}
    for p in report["partitions"]:
        for name, n in p.get("passes", {}).items():
            totals[name] = totals.get(name, 0) + n
    return totals


def format_passes(report: dict) -> str:
    """The fusion passes in the order they run, with what each did on this
    model (summed over its partitions), or why it did not run."""
    totals = pass_totals(report)
    ks = report["device"]["kernel_set"]
    lines = [f"fusion passes, in order (what each did on this model; {ks} kernel set):"]
    for p in report["passes_table"]:
        if p["name"] in totals:
            did = f"{totals[p['name']]:>4}"
        elif ks not in p["kernel_sets"]:
            did = " off (not this kernel set)"
        elif not report["partitions"]:
            did = "   - (no partition)"
        else:
            did = " off (hook or device limit)"
        hook = (f"  [{p['hook']}=0 switches it off]" if p["hook"] else
                f"  [policy {p['policy_field']}=0 switches it off]" if p.get("policy_field") else "")
        lines.append(f"  {p['name']:<17}{did}  {p['matches']}{hook}")
    return "\n".join(lines)


def busy_groups(phase: dict) -> int:
    """The groups of its launch's grid that get work-items of this phase
    (vm_run spreads a phase's work-items over the grid's, a group's worth
    per group)."""
    size = max(phase["group_size"], 1)
    return min(phase["groups"], -(-phase["work_items"] // size))


def format_phases(report: dict) -> str:
    """Per VM phase: its launch (segment), level, kernel body, work-items
    and how many of the grid's groups it gives work to; then how many
    phases leave most of the grid idle. In a persistent launch a level's
    phases run side by side between two grid barriers."""
    phases = report.get("phases") or []
    if not phases:
        parts = report.get("partitions") or []
        if any(p.get("execution") in ("stepped", "persistent") for p in parts):
            return "VM phases: none (no kernel with a VM body)"
        declined = next((p["declined"] for p in parts if p.get("declined")), None)
        if declined:  # the VM was asked for and not taken
            return f"VM phases: none (kernels ran, not the VM: {declined})"
        return "VM phases: none (kernels ran; --opt execution=persistent or stepped shows the VM's phases)"
    lines = []
    for part in sorted({p["partition"] for p in phases}):
        rows = [p for p in phases if p["partition"] == part]
        grid, size = rows[0]["groups"], rows[0]["group_size"]
        lines.append(f"VM phases of partition {part} (grid {grid} groups x {size} work-items):")
        lines.append(f"  {'launch':>6} {'level':>5}  {'kernel':<36} {'work-items':>10}  {'groups with work':<18}"
                     "  TFLite node")
        for p in rows:
            busy = busy_groups(p)
            where = f"{p['tflite_node']} {p.get('op', '')}" if p.get("tflite_node", -1) >= 0 else p.get("op", "")
            lines.append(f"  {p['segment']:>6} {p['level']:>5}  {p['kernel']:<36} {p['work_items']:>10}  "
                         f"{f'{busy:>4} of {grid} ({100 * busy / max(grid, 1):.0f}%)':<18}  {where}".rstrip())
        few = [p for p in rows if 4 * busy_groups(p) < grid]
        kinds: dict = {}
        for p in few:
            kinds[p["kernel"]] = kinds.get(p["kernel"], 0) + 1
        listing = ", ".join(f"{k} x{n}" for k, n in sorted(kinds.items(), key=lambda kv: -kv[1]))
        levels = len({(p["segment"], p["level"]) for p in rows})
        lines.append(f"  {len(rows)} phases in {levels} levels; {len(few)} give work to under a quarter of the "
                     f"grid's groups" + (f": {listing}" if listing else ""))
    return "\n".join(lines)
