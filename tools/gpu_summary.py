#!/usr/bin/env python3
"""Markdown summary of a tools/gpu_run.sh run directory, for
docs/benchmarks/. Prints to stdout; exit 1 if a step failed or was cut, an
op test or a model check failed or gave an error, or a result file is
unreadable; 2 bad usage. Never a traceback: whatever a step left (nothing,
half a file, an error object) is summarised as such.

    gpu_summary.py DIR

Reads what is there of: machine.txt, steps.tsv (step, state, seconds,
models, exit), devices.json, models-KS-PREC/NAME.json (+ times.tsv) or
models-KS-PREC.json (`check --json`: a list of rows, a row either a result
or {"model", "error": {"exit_code", "kind", "message"}}, or one
{"error": ...} object), bench-gpu/, bench-xnnpack-all/, bench-cpu/
(`bench --json` per model) or bench-KS.json, profile.json
(tools/gpu_profile.py), launch.json (tools/cl_launch_cost.py),
barrier.json (tools/cl_grid_barrier.py), ops-KS.xml (junit).

Targets (issue 12): the GPU kernel set at least 10x faster than XNNPACK on
2 threads on the five largest MediaPipe models (by FLOPs), and faster than
the CPU kernel set on the same GPU on every model; both checked for FP32
and for FP16 storage.
"""
from __future__ import annotations

import json
import math
import pathlib
import sys
import xml.etree.ElementTree as ET

KSETS = ("cpu", "gpu")
PRECS = ("fp32", "fp16")
EMPTY, BAD = "empty", "unreadable"  # what _load says instead of a document


class _Problems:
    def __init__(self):
        self.items = []

    def add(self, text):
        self.items.append(text)


def _load(path):
    """(document, None), or (None, EMPTY / BAD / None when missing)."""
    try:
        text = path.read_text(errors="replace")
    except FileNotFoundError:
        return None, None
    except OSError:
        return None, BAD
    if not text.strip():
        return None, EMPTY
    try:
        return json.loads(text), None
    except ValueError:
        return None, BAD


def _cell(text, limit=300) -> str:
    s = " ".join(str(text).split()).replace("|", "\\|")
    return s if len(s) <= limit else s[:limit - 3] + "..."


def _num(x):
    """A finite float, or None."""
    try:
        v = float(x)
    except (TypeError, ValueError):
        return None
    return v if math.isfinite(v) else None


def _stem(model) -> str:
    name = pathlib.PurePath(str(model)).name
    return name[:-7] if name.endswith(".tflite") else name


def _ms(x):
    x = _num(x)
    return "–" if x is None else f"{x:.3f}" if x < 1 else f"{x:.2f}"


def _x(a, b):
    """b / a as a speed-up, or None."""
    a, b = _num(a), _num(b)
    return b / a if a and b else None


def _fx(s, digits=1):
    return "–" if s is None else f"{s:.{digits}f}x"


def _tsv(path):
    try:
        return [line.split("\t") for line in path.read_text(errors="replace").splitlines() if line.strip()]
    except OSError:
        return []


def _log_tail(path, n=1) -> str:
    try:
        lines = [ln for ln in path.read_text(errors="replace").splitlines()
                 if ln.strip() and not ln.startswith(("INFO:", "WARNING: All log messages"))]
    except OSError:
        return ""
    return " / ".join(lines[-n:])


def _junit(path):
    try:
        root = ET.parse(path).getroot()
    except (OSError, ET.ParseError):
        return None
    suites = [root] if root.tag == "testsuite" else list(root.iter("testsuite"))
    n = failed = skipped = 0
    seconds = 0.0
    for s in suites:
        n += int(_num(s.get("tests")) or 0)
        failed += int(_num(s.get("failures")) or 0) + int(_num(s.get("errors")) or 0)
        skipped += int(_num(s.get("skipped")) or 0)
        seconds += _num(s.get("time")) or 0.0
    bad = [f"{c.get('classname', '')}::{c.get('name', '')}" for c in root.iter("testcase")
           if c.find("failure") is not None or c.find("error") is not None]
    return n - failed - skipped, failed, skipped, seconds, bad


# ----------------------------------------------------------------------------- sections


def _header(d, out):
    machine = []
    try:
        machine = (d / "machine.txt").read_text(errors="replace").splitlines()
    except OSError:
        pass
    info = dict(line.split(": ", 1) for line in machine if ": " in line)
    devices, _ = _load(d / "devices.json")
    dev = devices[0] if isinstance(devices, list) and devices and isinstance(devices[0], dict) else {}
    title = info.get("gpu", "").split(",")[0].strip() or dev.get("name") or "unknown device"
    out += [f"# tflite-gpu on {title}", ""]
    local = dev.get("local_mem_bytes")
    local = f"{int(local) // 1024} KiB" if _num(local) is not None else "?"
    out += [f"- **Date**: {info.get('date', '?')}",
            f"- **GPU**: {info.get('gpu', '?')} (nvidia-smi: name, driver, memory)",
            f"- **OpenCL device**: {dev.get('name', '?')} ({dev.get('platform', '?')}, {dev.get('version', '?')}, "
            f"driver {dev.get('driver', '?')}); {dev.get('compute_units', '?')} compute units, work-groups up to "
            f"{dev.get('max_work_group_size', '?')}, local memory {local}, "
            f"fp16 {'yes' if dev.get('fp16') else 'no'}, subgroups {'yes' if dev.get('subgroups') else 'no'}",
            f"- **Host**: {info.get('cpu', '?')}; {info.get('host', '?')}",
            f"- **ICD**: {info.get('icd', '?')}",
            f"- **Bundle**: {info.get('bundle', '?')}", ""]


def _steps(d, out, problems):
    rows = _tsv(d / "steps.tsv")
    if not rows:
        return
    last = {}
    for r in rows:
        if r and r[0]:
            last[r[0]] = r + [""] * (5 - len(r))
    out += ["## Steps", "", "| step | state | seconds | models | seconds per model | exit |",
            "|---|---|---:|---:|---:|---:|"]
    for name, (_, state, secs, models, code, *_) in last.items():
        s, n = _num(secs), _num(models)
        ended = state != "running"
        per = f"{s / n:.1f}" if ended and s is not None and n else "–"
        if not ended:
            state = "**running, or cut off by the caller's time limit**"
            problems.add(f"step {name} did not end")
        elif state in ("failed", "cut"):
            problems.add(f"step {name} {state}")
            state = f"**{state}**"
        shown = secs if ended and s is not None else "–"
        out.append(f"| {name} | {_cell(state, 60)} | {shown} | {models or '–'} | {per} | {code or '–'} |")
    out.append("")


def _ops(d, out, problems):
    results = {ks: _junit(d / f"ops-{ks}.xml") for ks in KSETS}
    logs = [ks for ks in KSETS if (d / f"ops-{ks}.log").exists()]
    if not any(results.values()) and not logs:
        out += ["## Op tests (tests/test_ops.py)", "", "not run (step `ops`)", ""]
        return
    out += ["## Op tests (tests/test_ops.py)", "", "| kernel set | passed | failed | skipped | time (s) |",
            "|---|---:|---:|---:|---:|"]
    failing = []
    for ks in KSETS:
        r = results[ks]
        if r is None:
            if ks in logs:
                out.append(f"| {ks} | no junit report: {_cell(_log_tail(d / f'ops-{ks}.log'), 200)} | | | |")
                problems.add(f"op tests {ks}: no report")
            continue
        if r[1]:
            problems.add(f"op tests {ks}: {r[1]} failed")
            failing += [f"- {ks}: `{_cell(t, 200)}`" for t in r[4][:20]]
            if len(r[4]) > 20:
                failing.append(f"- {ks}: and {len(r[4]) - 20} more")
        out.append(f"| {ks} | {r[0]} | {r[1]} | {r[2]} | {r[3]:.0f} |")
    if failing:
        out += ["", "Failed:", *failing]
    out.append("")


def _check_rows(d, ks, prec, problems):
    """{model stem: row}; a row is a result dict or {"model", "error": {...}}."""
    rows = {}

    def add(doc, fallback, log=None, times=None):
        if isinstance(doc, list):
            for r in doc:
                add(r, fallback, log, times)
            return
        if not isinstance(doc, dict):
            rows[fallback] = {"error": {"kind": "unreadable", "message": f"not a check result: {_cell(doc, 80)}"}}
            return
        name = _stem(doc["model"]) if isinstance(doc.get("model"), str) else fallback
        if "error" in doc and not isinstance(doc.get("error"), dict):
            doc = dict(doc, error={"kind": "error", "message": str(doc["error"])})
        elif "error" not in doc and "passed" not in doc:
            doc = {"error": {"kind": "unreadable", "message": f"not a check result: {_cell(doc, 80)}"}}
        rows[name] = doc

    single, why = _load(d / f"models-{ks}-{prec}.json")
    if single is not None:
        add(single, "(all models)")
    elif why:
        rows["(all models)"] = {"error": {"kind": why, "message": f"models-{ks}-{prec}.json is {why}"}}
    sub = d / f"models-{ks}-{prec}"
    if sub.is_dir():
        codes = {r[0]: r[2] for r in _tsv(sub / "times.tsv") if len(r) >= 3}
        for p in sorted(sub.glob("*.json")):
            doc, why = _load(p)
            if doc is not None:
                add(doc, p.stem)
                continue
            code = codes.get(p.stem)
            kind = ("deadline" if code in ("124", "137") else "running" if code is None else why or "missing")
            tail = _log_tail(p.with_suffix(".log"))
            message = f"no JSON result ({why or 'missing'})" + (f"; {tail}" if tail else "")
            rows[p.stem] = {"error": {"exit_code": code, "kind": kind, "message": message}}
    return rows


def _models(d, out, problems):
    out += ["## MediaPipe models (`tflite-gpu check`: PASS, worst relative L2)", ""]
    cols = [(ks, p) for ks in KSETS for p in PRECS]
    checks = {c: _check_rows(d, *c, problems) for c in cols}
    names = sorted({n for rows in checks.values() for n in rows})
    if not names:
        out += ["not run (step `models`)", ""]
        return
    out += ["| model | " + " | ".join(f"{ks} {p.upper()}" for ks, p in cols) + " |", "|---|" + "---|" * len(cols)]
    errors = []
    for name in names:
        cells = []
        for c in cols:
            r = checks[c].get(name)
            if r is None:
                cells.append("–")
                continue
            if "error" in r:
                e = r["error"] if isinstance(r["error"], dict) else {}
                kind = e.get("kind", "error")
                if kind == "running":  # its check had not ended when the summary was made
                    cells.append("(running)")
                    problems.add(f"check {name} {c[0]} {c[1]}: not finished")
                    continue
                cells.append(f"**ERROR** ({_cell(kind, 40)})")
                code = f", exit {e['exit_code']}" if e.get("exit_code") not in (None, "") else ""
                errors.append(f"- {name}, {c[0]} {c[1].upper()}: **{_cell(kind, 40)}**{code}: "
                              f"{_cell(e.get('message', ''), 400)}")
                problems.add(f"check {name} {c[0]} {c[1]}: {kind}")
                continue
            outs = r.get("outputs") if isinstance(r.get("outputs"), list) else []
            worst = max((_num(o.get("rel_l2")) or 0 for o in outs if isinstance(o, dict)), default=0)
            verdict = r.get("verdict") or ("PASS" if r.get("passed") else "FAIL")
            if not r.get("passed"):
                verdict = f"**{verdict}**"
                problems.add(f"check {name} {c[0]} {c[1]}: failed")
            cells.append(f"{_cell(verdict, 20)} {worst:.1e}")
        out.append(f"| {_cell(name, 80)} | " + " | ".join(cells) + " |")
    timing = []
    for ks, p in cols:
        last = {r[0]: _num(r[1]) for r in _tsv(d / f"models-{ks}-{p}" / "times.tsv") if len(r) >= 2}  # a rerun wins
        t = [(n, s) for n, s in last.items() if s is not None]
        if t:
            slow = max(t, key=lambda x: x[1])
            total = sum(s for _, s in t)
            timing.append(f"{ks} {p.upper()} {total:.0f} s for {len(t)} ({total / len(t):.1f} s a model, "
                          f"slowest {slow[0]} {slow[1]:.0f} s)")
    if timing:
        out += ["", "Wall time per configuration (the four ran at once unless GPU_RUN_CHECK_PARALLEL=0): "
                    + "; ".join(timing) + "."]
    if errors:
        out += ["", "Errors:", *errors]
    out.append("")


def _bench_reports(d, name):
    """[(report or None, file, why)] from bench-NAME.json and bench-NAME/*.json."""
    found = []
    sub = d / f"bench-{name}"
    # per model: NAME.json, or only NAME.log when the bench never wrote its report
    names = sorted({p.stem for p in sub.glob("*.json")} | {p.stem for p in sub.glob("*.log")}) if sub.is_dir() else []
    for p in [d / f"bench-{name}.json"] + [sub / f"{n}.json" for n in names]:
        doc, why = _load(p)
        if doc is not None or why or p.with_suffix(".log").exists():
            found.append((doc, p, why or "missing"))
    return found


def _bench(d, out, problems):
    rows, errors, threads = {}, [], {}

    def row(model):
        return rows.setdefault(model, {})

    for src in ("gpu", "cpu", "xnnpack-all"):
        for doc, p, why in _bench_reports(d, src):
            if not isinstance(doc, dict):
                tail = _log_tail(p.with_suffix(".log"))
                errors.append(f"- {p.stem} ({src}): no result ({why or 'not a report'})"
                              + (f": {_cell(tail)}" if tail else ""))
                continue
            if "error" in doc and "models" not in doc:
                e = doc["error"] if isinstance(doc["error"], dict) else {"message": str(doc["error"])}
                errors.append(f"- {p.stem} ({src}): **{_cell(e.get('kind', 'error'), 40)}**: "
                              f"{_cell(e.get('message', ''))}")
                continue
            settings = doc.get("settings") if isinstance(doc.get("settings"), dict) else {}
            if settings.get("threads"):
                threads[src] = settings["threads"]
            for m in doc.get("models") or []:
                if not isinstance(m, dict):
                    continue
                r = row(_stem(m.get("model", p.stem)))
                flops = m.get("flops") if isinstance(m.get("flops"), dict) else {}
                if _num(flops.get("total")):
                    r["gflop"] = _num(flops.get("total")) / 1e9
                cfgs = m.get("configs") if isinstance(m.get("configs"), dict) else {}
                for c, cr in cfgs.items():
                    if not isinstance(cr, dict):
                        continue
                    ks = "gpu" if src == "xnnpack-all" else src
                    key = ("xnnpack-all" if src == "xnnpack-all" else "xnnpack") if c == "xnnpack" else (ks, c)
                    if _num(cr.get("median_ms")) is not None:
                        r.setdefault(key, _num(cr.get("median_ms")))
                        if c == "fp32" and ks == "gpu" and cr.get("dispatches") is not None:
                            r["launches"] = cr.get("dispatches")
                    elif cr.get("status") == "error" and m.get("cpu_reference") is not False:
                        errors.append(f"- {_cell(m.get('model', p.stem), 80)} ({src} {c}): "
                                      f"{_cell(cr.get('error', ''))}")
    if not rows and not errors:
        out += ["## Latency (`tflite-gpu bench`)", "", "not run (step `bench`)", ""]
        return
    t2, tn = threads.get("gpu", threads.get("cpu", 2)), threads.get("xnnpack-all", "all")
    has_cpu = any(("cpu", p) in r for r in rows.values() for p in PRECS)
    out += [f"## Latency (`tflite-gpu bench`, median ms; XNNPACK on {t2} threads and on {tn})", ""]
    if not rows:
        out.append("no latency recorded")
    else:
        head = ["model", "GFLOP", "launches", f"XNNPACK {t2} thr", f"XNNPACK {tn} thr", "gpu FP32", "gpu FP16"]
        if has_cpu:
            head += ["cpu set FP32", "cpu set FP16"]
        head += [f"gpu FP32 / FP16 vs XNNPACK {t2} thr", f"best gpu vs XNNPACK {tn} thr"]
        if has_cpu:
            head += ["gpu vs cpu set (FP32 / FP16)"]
        out += ["| " + " | ".join(head) + " |", "|---|" + "---:|" * (len(head) - 1)]
        for name, r in sorted(rows.items(), key=lambda kv: -(kv[1].get("gflop") or 0)):
            best = min((v for v in (r.get(("gpu", p)) for p in PRECS) if v), default=None)
            cells = [_cell(name, 80), f"{r['gflop']:.3f}" if r.get("gflop") else "–", str(r.get("launches", "–")),
                     _ms(r.get("xnnpack")), _ms(r.get("xnnpack-all"))] + [_ms(r.get(("gpu", p))) for p in PRECS]
            if has_cpu:
                cells += [_ms(r.get(("cpu", p))) for p in PRECS]
            cells += [" / ".join(_fx(_x(r.get(("gpu", p)), r.get("xnnpack"))) for p in PRECS),
                      _fx(_x(best, r.get("xnnpack-all")))]
            if has_cpu:
                cells += [" / ".join(_fx(_x(r.get(("gpu", p)), r.get(("cpu", p))), 2) for p in PRECS)]
            out.append("| " + " | ".join(cells) + " |")
        largest = sorted(rows, key=lambda n: -(rows[n].get("gflop") or 0))[:5]
        out += ["", "### Targets", ""]
        for p in PRECS:
            sx = {n: _x(rows[n].get(("gpu", p)), rows[n].get("xnnpack")) for n in largest}
            met = bool(sx) and all(s is not None and s >= 10 for s in sx.values())
            out.append(f"- gpu set {p.upper()} >= 10x XNNPACK ({t2} threads) on the five largest "
                       f"({', '.join(largest)}): **{'met' if met else 'not met'}** "
                       f"(" + ", ".join(_fx(s) for s in sx.values()) + ")")
            if has_cpu:
                slower = [n for n in rows if not (_x(rows[n].get(("gpu", p)), rows[n].get(("cpu", p))) or 0) > 1]
                out.append(f"- gpu set {p.upper()} faster than the cpu set on every model: "
                           f"**{'met' if not slower else 'not met'}**"
                           + (f" (not on {', '.join(sorted(slower))})" if slower else ""))
    if errors:
        out += ["", "Errors:", *errors]
    out.append("")


def _profile(d, out, problems, name="profile.json", title="GPU profile (tools/gpu_profile.py)", step="profile"):
    doc, why = _load(d / name)
    if doc is None and not why:
        return
    out += [f"## {title}", ""]
    if doc is None:
        out += [f"{name} is {why}", ""]
        problems.add(f"{name} {why}")
        return
    try:
        sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
        import gpu_profile

        out += [gpu_profile.to_markdown(doc), ""]
    except Exception as e:  # noqa: BLE001 - the summary goes on without the table
        out += [f"(the table could not be made: {type(e).__name__}: {_cell(e)})", ""]
    models = doc.get("models") if isinstance(doc, dict) else None
    if any(isinstance(r, dict) and "error" in r for r in models or []):
        problems.add(f"{step}: a model failed")


def _phases(d, out, problems):
    """The phases step: gpu_profile.py's report of execution=persistent."""
    _profile(d, out, problems, "phases/profile.json", "VM phases, execution=persistent (tools/gpu_profile.py)",
             "phases")


def _tool_section(d, out, problems, name, title, module):
    """NAME.json, written by the tool `module` names, as that tool's own markdown."""
    doc, why = _load(d / f"{name}.json")
    if doc is None and not why:
        return None
    if doc is None:
        out += [f"## {title} (tools/{module}.py)", "", f"{name}.json is {why}", ""]
        problems.add(f"{name}.json {why}")
        return None
    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
    out += ["#" + __import__(module).markdown(doc), ""]
    return doc


def _launch(d, out, problems):
    _tool_section(d, out, problems, "launch", "Launch cost", "cl_launch_cost")


def _barrier(d, out, problems):
    doc = _tool_section(d, out, problems, "barrier", "Grid barrier", "cl_grid_barrier")
    if doc and any(x.get("stale") and x.get("variant") == doc.get("variant") for x in doc.get("litmus", [])):
        problems.add("grid barrier: the litmus test read stale values")


def _execution(d, out, problems):
    """tools/bench_execution.py's table (execution.json): each mode's median and launches, and its error."""
    doc, why = _load(d / "execution.json")
    if doc is None and not why:
        return
    out += ["## Execution modes (tools/bench_execution.py: median ms, dispatches in brackets)", ""]
    if doc is None or not isinstance(doc, list):
        out += [f"execution.json is {why or 'not a list'}", ""]
        problems.add(f"execution.json {why or 'not a list'}")
        return
    modes = list((doc[0].get("modes") or {}) if doc and isinstance(doc[0], dict) else {})
    out += ["| model | " + " | ".join(modes) + " | worst rel L2 |", "|---|" + "---:|" * len(modes) + "---:|"]
    for r in doc:
        m = r.get("modes") or {}
        errs = [x.get("rel_l2") for x in m.values() if isinstance(x, dict) and x.get("rel_l2") is not None]
        cells = [f"{_num(m[k].get('median_ms')) or float('nan'):.3f} ({m[k].get('dispatches', '?')}"
                 f"{', fallback' if m[k].get('fallback') else ''})" if isinstance(m.get(k), dict) else "–" for k in modes]
        for k in modes:
            if isinstance(m.get(k), dict) and m[k].get("fallback"):
                problems.add(f"execution: {r.get('model')} {k} fell back: {m[k]['fallback']}")
        worst = max(errs) if errs else None
        out.append(f"| {_cell(r.get('model', '?'))} | " + " | ".join(cells) + f" | {'–' if worst is None else f'{worst:.2e}'} |")
        if worst is not None and worst > 1e-4:
            problems.add(f"execution: {r.get('model')} has an output off by {worst:.2e}")
    out.append("")
    # Each mode's set-up (load_delegate to the first result: its programs compiled, no kernel cache).
    setups = [(r, r.get("modes") or {}) for r in doc if isinstance(r, dict)]
    if any(isinstance(x, dict) and _num(x.get("setup_s")) is not None for _, m in setups for x in m.values()):
        out += ["Set-up per mode (s: load_delegate to the first result, the mode's programs compiled):", ""]
        out += ["| model | " + " | ".join(modes) + " |", "|---|" + "---:|" * len(modes)]
        for r, m in setups:
            cells = [f"{_num(m[k].get('setup_s')):.2f}" if isinstance(m.get(k), dict) and _num(m[k].get("setup_s"))
                     is not None else "–" for k in modes]
            out.append(f"| {_cell(r.get('model', '?'))} | " + " | ".join(cells) + " |")
        out.append("")
    # The VM modes' grids (work-groups per launch), where SUSTAINED_SPEED or a switch changed them.
    def grid(m, k):
        x = m.get(k) if isinstance(m, dict) else None
        return _num(x.get("grid")) if isinstance(x, dict) else None

    if len({grid(m, k) for _, m in setups for k in modes} - {None}) > 1:
        out += ["Grid per mode (work-groups of a VM launch):", ""]
        out += ["| model | " + " | ".join(modes) + " |", "|---|" + "---:|" * len(modes)]
        for r, m in setups:
            cells = ["–" if grid(m, k) is None else f"{grid(m, k):g}" for k in modes]
            out.append(f"| {_cell(r.get('model', '?'))} | " + " | ".join(cells) + " |")
        out.append("")


def _vmcache(d, out, problems):
    """tools/bench_vm_cache.py's tables (vmcache.log), as printed: the first
    result, then where it goes (a line before that table says what it holds)."""
    log = d / "vmcache.log"
    if not log.is_file():
        return
    lines = log.read_text(errors="replace").splitlines()
    rows = [ln.rstrip() for ln in lines if ln.startswith("|")]
    out += ["## First result with the shared VM program (tools/bench_vm_cache.py: seconds, fresh processes)", ""]
    if not rows:
        out.append("(no table: cut short or failed)")
    previous = "|"
    for ln in (ln.rstrip() for ln in lines if ln.startswith(("|", "Where the first result goes"))):
        if ln[:1] != previous[:1]:
            out.append("")  # tables and the line between them apart
        out.append(ln)
        previous = ln
    out.append("")
    if len(rows) < 3 or any("failed" in r for r in rows):
        problems.add("vmcache: no complete table")


def _ab(d, out, problems):
    """The ab step's logs (tools/bench_ab.py, A = the pass off, B = on): each
    model's line and the geomean, as printed."""
    logs = sorted(d.glob("ab-*.log"))
    if not logs:
        return
    out += ["## Passes A/B (tools/bench_ab.py: A with the pass off, B as shipped; B/A < 1 is a gain)", ""]
    for log in logs:
        lines = [ln.rstrip() for ln in log.read_text(errors="replace").splitlines()]
        rows = [ln for ln in lines if " ms  A " in ln or ln.startswith("geomean")]
        out += [f"{log.stem[3:]}:", "", "```", *(rows or lines[-5:] or ["(empty)"]), "```", ""]
        if not any(ln.startswith("geomean") for ln in lines):
            problems.add(f"{log.name}: no geomean (cut short or failed)")


def summarize(d: pathlib.Path):
    """(markdown, ok)."""
    out, problems = [], _Problems()
    for section in (_header, _steps, _ops, _models, _bench, _profile, _phases, _launch, _barrier, _execution, _vmcache, _ab):
        try:
            if section is _header:
                section(d, out)
            else:
                section(d, out, problems)
        except Exception as e:  # noqa: BLE001 - one odd file must not cost the rest of the summary
            out += [f"({section.__name__.strip('_')}: could not be summarised: {type(e).__name__}: {_cell(e)})", ""]
            problems.add(f"{section.__name__.strip('_')} unreadable")
    if problems.items:
        out += ["## Not clean", "", *(f"- {_cell(p, 200)}" for p in problems.items[:40])]
        if len(problems.items) > 40:
            out.append(f"- and {len(problems.items) - 40} more")
    return "\n".join(out).rstrip() + "\n", not problems.items


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 1 or argv[0].startswith("-"):
        print(__doc__, file=sys.stderr)
        return 2
    d = pathlib.Path(argv[0])
    if not d.is_dir():
        print(f"gpu_summary.py: {d}: not a directory", file=sys.stderr)
        return 2
    try:
        text, ok = summarize(d)
    except Exception as e:  # noqa: BLE001 - never a traceback
        print(f"# tflite-gpu run in {d}\n\n(the summary failed: {type(e).__name__}: {_cell(e)})")
        return 1
    sys.stdout.write(text)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
