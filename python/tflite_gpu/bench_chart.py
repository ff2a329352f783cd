"""The benchmark chart (PNG, matplotlib): each configuration's median latency
relative to CPU XNNPACK, per model."""
from __future__ import annotations

import pathlib

from .bench_setup import LABELS


def chart_problem(configs) -> str | None:
    """Why --png cannot draw a chart for these configurations (None: it can)."""
    try:
        import matplotlib  # noqa: F401
    except ImportError as e:
        return f"--png needs matplotlib ({e}; pip install matplotlib)"
    if "xnnpack" not in configs:
        return "--png draws each configuration's latency relative to CPU XNNPACK: add xnnpack to --configs"
    if not [c for c in configs if c != "xnnpack"]:
        return "--png compares configurations with CPU XNNPACK: add at least one other to --configs"
    return None


def _why_missing(r: dict, c: str) -> str:
    cr = r["configs"].get(c, {})
    if r.get("crash"):
        return "crashed"
    if cr.get("status") == "error":
        return f"{LABELS[c]} failed"
    if c == "xnnpack" and r.get("cpu_reference", True) is False:
        return "the CPU interpreter cannot run it"
    return f"no {LABELS[c]} result"


def chart_rows(report: dict) -> tuple:
    """(the models drawn: those with an XNNPACK latency, the footnote's
    entries: every model or bar left out, with the reason)."""
    others = [c for c in report["settings"]["configs"] if c != "xnnpack"]
    rows = [r for r in report["models"] if r["configs"].get("xnnpack", {}).get("median_ms")]
    missing = [f"{r['model']} ({_why_missing(r, 'xnnpack')})" for r in report["models"] if r not in rows]
    missing += [f"{r['model']} {LABELS[c]} ({_why_missing(r, c)})" for r in rows for c in others
                if not r["configs"].get(c, {}).get("ratio_to_xnnpack")]
    return rows, missing


def write_png(report: dict, path):
    """Bar chart: median latency ratio to XNNPACK per model (log scale).
    Returns None when drawn, else why there is nothing to draw (and writes nothing)."""
    configs = report["settings"]["configs"]
    problem = chart_problem(configs)
    if problem:
        return problem
    others = [c for c in configs if c != "xnnpack"]
    rows, missing = chart_rows(report)
    if not rows:
        return "no model has a CPU XNNPACK latency to compare with (" + "; ".join(
            f"{r['model']}: {_why_missing(r, 'xnnpack')}" for r in report["models"]) + ")"
    if not any(r["configs"].get(c, {}).get("ratio_to_xnnpack") for r in rows for c in others):
        return "no configuration other than CPU XNNPACK has a latency to draw"
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import matplotlib.ticker

    fig, ax = plt.subplots(figsize=(max(7.0, 0.8 * len(rows) + 3), 5.5))
    width = 0.8 / max(len(others), 1)
    colors = {"builtin": "#9e9e9e", "fp32": "#1f77b4", "fp16": "#ff7f0e"}
    lowest = highest = 1.0
    for j, c in enumerate(others):
        xs, ys = [], []
        for i, r in enumerate(rows):
            v = r["configs"].get(c, {}).get("ratio_to_xnnpack")
            if v:
                xs.append(i + (j - (len(others) - 1) / 2) * width)
                ys.append(v)
        lowest, highest = min([lowest, *ys]), max([highest, *ys])
        bars = ax.bar(xs, ys, width=width, label=LABELS[c], color=colors.get(c))
        ax.bar_label(bars, labels=[f"{v:.2g}" for v in ys], fontsize=6, padding=1)
    ax.axhline(1.0, color="black", linewidth=1, linestyle="--", label="CPU XNNPACK = 1")
    ax.set_yscale("log")
    ax.set_ylim(bottom=min(0.5, lowest / 1.5), top=highest * 4)  # room for the legend
    ax.yaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda v, _: f"{v:g}x"))
    ax.set_xticks(range(len(rows)))
    ax.set_xticklabels([r["model"] for r in rows], rotation=40, ha="right", fontsize=8)
    ax.set_ylabel("median latency / XNNPACK median (log, lower is better)")
    geo = report.get("geomean_fp32_over_xnnpack")
    dev = (report.get("device") or {}).get("name", "unknown device")
    ax.set_title(f"tflite-gpu on {dev} vs CPU ({report['machine']['cpu']}, {report['machine']['cores']} cores)"
                 + (f"\ngeomean delegate FP32 / XNNPACK = {geo:.2f}x" if geo else ""), fontsize=9)
    ax.legend(fontsize=8, ncol=4, loc="upper center")
    ax.grid(axis="y", which="both", alpha=0.3)
    if missing:
        fig.text(0.01, 0.01, "not shown: " + ", ".join(missing), fontsize=7, wrap=True)
    fig.tight_layout(rect=(0, 0.04 if missing else 0, 1, 1))
    pathlib.Path(path).parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return None
