"""The benchmark report as Markdown (to_markdown), and the report's files:
JSON, Markdown and the PNG chart (write_outputs)."""
from __future__ import annotations

import math
import pathlib
import sys

from ._output import display
from .bench_chart import write_png
from .bench_setup import CPU_CONFIGS, DELEGATE_CONFIGS, LABELS


def _launches(cr) -> str:
    """Launches per invoke as the last timed invoke ran, with the mode where it is not kernels."""
    n = cr.get("launches", cr.get("dispatches", "–"))
    mode = cr.get("execution")
    out = f"{n}" + (f" ({mode})" if mode and mode != "kernels" else "")
    return out + (" fallback" if cr.get("fallbacks") else "")


def _f(v, fmt="{:.2f}", none="–"):
    if v is None or (isinstance(v, float) and not math.isfinite(v)):
        return none
    return fmt.format(v)


def _mib(b):
    return None if b is None else b / 2**20


def to_markdown(report: dict) -> str:
    m, dev, s = report["machine"], report.get("device") or {}, report["settings"]
    configs = s["configs"]
    geo, n_geo = report.get("geomean_fp32_over_xnnpack"), report.get("geomean_models", 0)
    lines = [
        "# tflite-gpu benchmark",
        "",
        f"- **Machine**: {m['cpu']}, {m['cores']} cores ({m['os']}, Python {m['python']})",
        f"- **OpenCL device**: {dev.get('name', 'unknown')}"
        + (f" ({dev.get('platform')}, {dev.get('version')})" if dev.get("platform") else ""),
        f"- **Date**: {report['date']}",
        f"- **Software**: tflite-gpu {report['tflite_gpu']} (library {report['library'].get('version') or '?'}), "
        f"{report['runtime']}",
        f"- **Settings**: {s['warmup']} warm-up + {s['iterations']} timed invokes per configuration, interleaved; "
        f"CPU threads = {s['threads']}"
        + (f"; delegate options {s['delegate_options']}" if s["delegate_options"] else ""),
        "- **Geometric mean of delegate FP32 / XNNPACK median latency**: "
        + (f"**{geo:.2f}x** over {n_geo} model(s) ({'slower' if geo > 1 else 'faster'} than XNNPACK)"
           if geo else "n/a (no model ran in both)"),
        "",
        "## Summary (median invoke latency, ms; ratio to XNNPACK in parentheses, lower is better)",
        "",
        "| model | GFLOP | " + " | ".join(LABELS[c] for c in configs) + " |",
        "|---|---:|" + "---:|" * len(configs),
    ]
    for r in report["models"]:
        cells = []
        for c in configs:
            cr = r["configs"].get(c, {})
            if cr.get("median_ms") is None:
                no_cpu = c in CPU_CONFIGS and r.get("cpu_reference", True) is False
                cells.append("n/a" if no_cpu else ("failed" if cr.get("status") == "error" else "–"))
            elif c != "xnnpack" and cr.get("ratio_to_xnnpack"):
                cells.append(f"{cr['median_ms']:.2f} ({cr['ratio_to_xnnpack']:.2f}x)")
            else:
                cells.append(f"{cr['median_ms']:.2f}")
        mark = " †" if r.get("cpu_reference", True) is False else ""
        lines.append(f"| {r['model']}{mark} | {_f(_gflop(r), '{:.3f}')} | " + " | ".join(cells) + " |")
    if any(r.get("cpu_reference", True) is False for r in report["models"]):
        lines += ["", "† no CPU reference: the CPU interpreter cannot run the model (custom ops); "
                      "only the delegate columns can be reported."]
    for r in report["models"]:  # inputs other than random floats: said, as check says them
        special = [p for p in r.get("inputs", []) if p["how"] != "uniform"]
        if special:
            lines += ["", f"Inputs of {r['model']}: " + "; ".join(
                f"{p['name']} {'given' if p['how'] == 'user' else 'generated'} ({p['how']}): {p['detail']}"
                for p in special) + "."]

    lines += [
        "",
        "## Details",
        "",
        "| model | configuration | first result cold (s) | warm (s) | median (ms) | p90 (ms) | x XNNPACK | "
        "GFLOP/s | launches / invoke | arena (MiB) | lower bound (MiB) | arena / bound | nodes GPU / CPU |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in report["models"]:
        for c in configs:
            cr = r["configs"].get(c, {})
            if cr.get("status") == "error" and cr.get("median_ms") is None:
                err = cr.get("error", "").replace("|", "/")
                lines.append(f"| {r['model']} | {LABELS[c]} | {_f(cr.get('first_result_cold_s'), '{:.3f}')} | "
                             f"{_f(cr.get('first_result_warm_s'), '{:.3f}')} | failed: {err} |  |  |  |  |  |  |  |  |")
                continue
            is_del = c in DELEGATE_CONFIGS
            lines.append(
                f"| {r['model']} | {LABELS[c]} | {_f(cr.get('first_result_cold_s'), '{:.3f}')} | "
                f"{_f(cr.get('first_result_warm_s'), '{:.3f}')} | {_f(cr.get('median_ms'))} | "
                f"{_f(cr.get('p90_ms'))} | {_f(cr.get('ratio_to_xnnpack'))} | {_f(cr.get('gflops_per_s'))} | "
                + (f"{_launches(cr)} | {_f(_mib(cr.get('arena_bytes')))} | "
                   f"{_f(_mib(cr.get('live_peak_bytes')))} | {_f(cr.get('arena_over_lower_bound'))} | "
                   f"{cr.get('delegated_nodes', '–')} / {cr.get('cpu_nodes', '–')} |"
                   if is_del else "– | – | – | – | – |"))

    cached = [(r, c) for r in report["models"] for c in configs
              if r["configs"].get(c, {}).get("first_result_cached_s") is not None]
    if cached:
        lines += ["", "## Time to first result with the kernel cache (--cache-dir, POCL_KERNEL_CACHE=0)", "",
                  "| model | configuration | cold, no cache (s) | first run, writing (s) | our cache (s) "
                  "| cached / cold | hit |", "|---|---|---:|---:|---:|---:|---|"]
        for r, c in cached:
            cr = r["configs"][c]
            cold, warm = cr.get("first_result_cold_s"), cr["first_result_cached_s"]
            lines.append(f"| {r['model']} | {LABELS[c]} | {_f(cold, '{:.3f}')} | "
                         f"{_f(cr.get('first_result_cache_write_s'), '{:.3f}')} | {warm:.3f} | "
                         f"{_f(warm / cold if cold else None, '{:.1%}')} | "
                         f"{'yes' if cr.get('first_result_cache_hit') else 'NO'} |")

    profiled = [(r, c) for r in report["models"] for c in configs if r["configs"].get(c, {}).get("profile")]
    profile_errors = [(r, c) for r in report["models"] for c in configs
                      if r["configs"].get(c, {}).get("profile_error")]
    if profiled or profile_errors:
        lines += ["", "## Top kernels by OpenCL event time (TFLITE_GPU_PROFILE=1, separate process)", ""]
        for r, c in profiled:
            p = r["configs"][c]["profile"]
            lines += [f"**{r['model']}, {LABELS[c]}**: {p['kernel_ms_per_invoke']:.2f} ms of kernel time per invoke "
                      f"(profiled median latency {_f(p.get('profiled_median_ms'))} ms, {p['invokes']} invokes)", "",
                      "| kernel | launches / invoke | ms / invoke | share |", "|---|---:|---:|---:|"]
            for k in p["top"]:
                lines.append(f"| `{k['kernel']}` | {k['calls_per_invoke']:.1f} | {k['ms_per_invoke']:.3f} | "
                             f"{100 * k['share']:.1f}% |")
            lines.append("")
        for r, c in profile_errors:
            lines.append(f"- {r['model']}, {LABELS[c]}: no profile ({r['configs'][c]['profile_error']})")

    notes = [f"- {r['model']}: {r['note']}" for r in report["models"] if r.get("note")]
    lines += ["", "## Conventions", ""]
    for k, v in report["conventions"].items():
        lines.append(f"- **{k}**: {v}")
    if notes:
        lines += ["", "## Notes", ""] + notes
    return "\n".join(lines) + "\n"


def _gflop(r):
    t = (r.get("flops") or {}).get("total")
    return None if t is None else t / 1e9


def write_outputs(report: dict, json_path=None, markdown_path=None, png_path=None, warn=None) -> list:
    """Writes the requested files; returns the paths written. A chart that
    cannot be drawn is not written; warn(reason) (default: stderr) says why."""
    from ._output import dumps

    written = []
    if json_path:
        p = pathlib.Path(json_path)
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(dumps(report) + "\n")
        written.append(p)
    if markdown_path:
        p = pathlib.Path(markdown_path)
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(to_markdown(report), errors="backslashreplace")
        written.append(p)
    if png_path:
        why = write_png(report, png_path)
        if why is None:
            written.append(pathlib.Path(png_path))
        else:
            (warn or (lambda m: print(m, file=sys.stderr)))(f"no chart written to {display(png_path)}: {why}")
    return written
