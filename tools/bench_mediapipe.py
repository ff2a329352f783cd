"""Benchmarks the 14 MediaPipe models (CPU XNNPACK, CPU builtin, delegate
FP32 and FP16, interleaved) and writes docs/benchmarks/mediapipe.json,
mediapipe.md and mediapipe.png.

Usage: python tools/bench_mediapipe.py [--warmup 3] [--iterations 30] [--profile]
                                       [--out-dir docs/benchmarks] [MODEL ...]

The models are fetched (sha256-checked) into $TFLITE_GPU_MODEL_DIR or
~/.cache/tflite_gpu/models first; see python -m tflite_gpu models.
The PNG needs matplotlib.
"""
import argparse
import importlib.util
import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "python"))

from tflite_gpu import bench, models  # noqa: E402


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("models", nargs="*", help="a subset of the 14 models (default: all)")
    ap.add_argument("--warmup", type=int, default=bench.DEFAULT_WARMUP)
    ap.add_argument("--iterations", type=int, default=bench.DEFAULT_ITERATIONS)
    ap.add_argument("--threads", type=int, default=None, help="CPU interpreter threads (default: the cores)")
    ap.add_argument("--profile", action="store_true", help="also list the top kernels per model")
    ap.add_argument("--no-first-result", action="store_true", help="skip the time-to-first-result processes")
    ap.add_argument("--out-dir", default=str(ROOT / "docs" / "benchmarks"))
    ap.add_argument("--name", default="mediapipe", help="basename of the output files")
    ap.add_argument("--no-progress", action="store_true")
    args = ap.parse_args(argv)

    paths = models.fetch_models(args.models or None, progress=not args.no_progress)
    names = sorted(paths)
    report = bench.run_bench([paths[n] for n in names], names=names, warmup=args.warmup,
                             iterations=args.iterations, threads=args.threads, profile=args.profile,
                             first_result=not args.no_first_result, progress=not args.no_progress)
    out = pathlib.Path(args.out_dir)
    out.mkdir(parents=True, exist_ok=True)
    png = out / f"{args.name}.png"
    if importlib.util.find_spec("matplotlib") is None:
        print("matplotlib is not installed: no chart", file=sys.stderr)
        png = None
    written = bench.write_outputs(report, out / f"{args.name}.json", out / f"{args.name}.md", png)
    for p in written:
        print(f"wrote {p}")
    geo, n = report["geomean_fp32_over_xnnpack"], report["geomean_models"]
    print("geometric mean of delegate FP32 / XNNPACK median latency: "
          + (f"{geo:.3f}x over {n} models" if geo else "n/a"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
