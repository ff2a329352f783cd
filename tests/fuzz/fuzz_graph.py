"""Mutation fuzzer for the graph checks: mutates a valid small model's
flatbuffer (the resize test's chain of CONV_2D, DEQUANTIZE, ADD, DEPTHWISE,
PAD, MEAN, RESHAPE, FULLY_CONNECTED, RESIZE_BILINEAR) and, for every mutant
the CPU interpreter accepts (builds, allocates and invokes), applies the
delegate, allocates and invokes. Refusals are fine (CPU fallback or a clear
error); a crash is a bug.

Mutations: int32 words set to edge values (shapes, types, indices, opcodes
and options all live in int fields), byte flips, and one-off runs of bytes.
Seeded and deterministic (not coverage-guided: the library is not
instrumented for it; libFuzzer covers the option parser).

  python tests/fuzz/fuzz_graph.py --seconds 40 --seed 1 --out DIR
  python tests/fuzz/fuzz_graph.py --replay FILE...     # regression inputs

A worker process runs the mutants; before each it writes the mutant and the
phase ("cpu" / "gpu") to DIR, so when the worker dies the parent knows
which input killed it and whether the CPU interpreter alone or the delegate
did. Mutants that kill the delegate are kept in DIR/crashes/ (copy them to
tests/fuzz/regressions/models/). Prints a JSON summary.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import pathlib
import subprocess
import sys
import time

HERE = pathlib.Path(__file__).resolve().parent
EDGE = (0, 1, 2, 3, 4, 7, 8, 16, 255, 65535, -1, -2, 0x7FFFFFFF, -0x80000000)


def seed_model() -> bytes:
    sys.path.insert(0, str(HERE.parent))
    from test_resize import _chain_model
    return _chain_model()


def mutate(data: bytes, rng) -> bytes:
    b = bytearray(data)
    for _ in range(int(rng.integers(1, 4))):
        kind = int(rng.integers(0, 10))
        if kind < 6:  # an aligned int32 to an edge value
            pos = int(rng.integers(0, len(b) // 4)) * 4
            b[pos:pos + 4] = int(EDGE[int(rng.integers(0, len(EDGE)))]).to_bytes(4, "little", signed=True)
        elif kind < 9:  # flip a bit
            pos = int(rng.integers(0, len(b)))
            b[pos] ^= 1 << int(rng.integers(0, 8))
        else:  # a short run of one byte value
            pos = int(rng.integers(0, len(b)))
            n = int(rng.integers(1, 9))
            b[pos:pos + n] = bytes([int(rng.integers(0, 256))]) * len(b[pos:pos + n])
    return bytes(b)


def _inputs(it, rng):
    import numpy as np
    for d in it.get_input_details():
        shape = [int(s) for s in d["shape"]]
        if d["dtype"] == np.float32:
            x = rng.uniform(-1, 1, shape).astype(np.float32)
        else:
            x = np.zeros(shape, d["dtype"])
        it.set_tensor(d["index"], x)


def _too_big(it, limit=1 << 22):
    """Mutated shapes can ask for gigabytes; skip those (time, not bugs)."""
    total = 0
    for d in it.get_tensor_details():
        n = 1
        for s in d["shape"]:
            n *= max(int(s), 1)
        total += n
    return total > limit


def run_one(model: bytes, delegate, rng, state_dir: pathlib.Path | None):
    """'cpu-refused', 'gpu-refused' or 'ok'. Crashes kill the process."""
    import tflite_gpu
    mod = tflite_gpu.runtime()

    def phase(p):
        if state_dir:
            (state_dir / "phase").write_text(p)

    phase("cpu")
    # The stock CPU interpreter itself crashes on some mutants: it runs in a
    # forked child, so only the delegate's phase can kill this process.
    seed = int(rng.integers(0, 1 << 31))
    pid = os.fork()
    if pid == 0:
        code = 3
        try:
            import numpy as np
            cpu = mod.Interpreter(model_content=model,
                                  experimental_op_resolver_type=mod.OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES)
            if not _too_big(cpu):
                cpu.allocate_tensors()
                _inputs(cpu, np.random.default_rng(seed))
                cpu.invoke()
                code = 0
        except BaseException:  # noqa: BLE001 - refused
            pass
        os._exit(code)
    _, status = os.waitpid(pid, 0)
    if not os.WIFEXITED(status) or os.WEXITSTATUS(status) != 0:
        return "cpu-refused"
    phase("gpu")
    try:
        it = mod.Interpreter(model_content=model, experimental_delegates=[delegate])
        it.allocate_tensors()
        _inputs(it, rng)
        it.invoke()
        for d in it.get_output_details():
            it.get_tensor(d["index"])
    except Exception:  # noqa: BLE001 - a clear refusal is fine
        return "gpu-refused"
    finally:
        phase("done")
    return "ok"


def worker(args):
    import numpy as np
    import tflite_gpu
    state = pathlib.Path(args.out)
    delegate = tflite_gpu.load_delegate(log_level="silent")
    base = seed_model()
    rng = np.random.default_rng(args.seed)
    counts = {"cpu-refused": 0, "gpu-refused": 0, "ok": 0}
    deadline = time.monotonic() + args.seconds
    while time.monotonic() < deadline:
        mutant = mutate(base, rng)
        (state / "current.tflite").write_bytes(mutant)
        counts[run_one(mutant, delegate, rng, state)] += 1
        with open(state / "counts.json", "w") as f:
            json.dump(counts, f)


def replay(files):
    import numpy as np
    import tflite_gpu
    delegate = tflite_gpu.load_delegate(log_level="silent")
    for f in files:
        print(f, run_one(pathlib.Path(f).read_bytes(), delegate, np.random.default_rng(0), None), flush=True)


def parent(args):
    out = pathlib.Path(args.out)
    (out / "crashes").mkdir(parents=True, exist_ok=True)
    deadline = time.monotonic() + args.seconds
    seed, totals, crashes, cpu_crashes = args.seed, {"cpu-refused": 0, "gpu-refused": 0, "ok": 0}, [], 0
    while time.monotonic() < deadline - 2:
        for name in ("phase", "counts.json", "current.tflite"):
            (out / name).unlink(missing_ok=True)
        left = max(1, int(deadline - time.monotonic()))
        p = subprocess.run([sys.executable, __file__, "--worker", "--seconds", str(left), "--seed", str(seed),
                            "--out", str(out)], capture_output=True, text=True, timeout=left + 300)
        if (out / "counts.json").exists():
            for k, v in json.loads((out / "counts.json").read_text()).items():
                totals[k] += v
        if p.returncode != 0:
            phase = (out / "phase").read_text() if (out / "phase").exists() else "?"
            if phase == "gpu" and (out / "current.tflite").exists():
                data = (out / "current.tflite").read_bytes()
                name = out / "crashes" / (hashlib.sha1(data).hexdigest()[:16] + ".tflite")
                name.write_bytes(data)
                crashes.append(dict(file=str(name), rc=p.returncode, stderr=p.stderr[-1500:]))
            elif phase == "cpu":
                cpu_crashes += 1  # the stock CPU interpreter died: not ours
            else:
                crashes.append(dict(file=None, rc=p.returncode, phase=phase, stderr=p.stderr[-1500:]))
        seed += 1000
    print(json.dumps(dict(totals, crashes=crashes, cpu_crashes=cpu_crashes)))
    return 1 if crashes else 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seconds", type=float, default=40)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--out", default="build-fuzz/graph")
    ap.add_argument("--worker", action="store_true")
    ap.add_argument("--replay", nargs="*")
    args = ap.parse_args()
    sys.path.insert(0, str(HERE.parent))
    if args.replay is not None:
        return replay(args.replay)
    if args.worker:
        return worker(args)
    return parent(args)


if __name__ == "__main__":
    sys.exit(main() or 0)
