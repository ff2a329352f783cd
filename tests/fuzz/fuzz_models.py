"""Model-file fuzzer for the CLI: seeded mutations of MediaPipe models, run
through `python -m tflite_gpu check --json` in a subprocess.

Mutations aim at the flatbuffer's structure and payloads, found with
tflite_gpu.verify.layout(): truncation, byte flips, shapes, buffer sizes and
indices, opcode indices and builtin codes, tensor indices, tensor types,
offsets, vector lengths, builtin option fields, custom options, sparse index
arrays, and weights set to NaN / infinity / huge values. Each mutant is a
recipe of edits on a named model ({"model", "sha256", "ops"}), so a finding
is kept as a few bytes of JSON (tests/fuzz/regressions/model_mutations.json),
never as a model file.

Two stages:
  1. the verifier in this process, on many mutants: it must accept a mutant
     or raise ModelError, nothing else;
  2. the CLI on fewer mutants, one subprocess each. The only acceptable
     outcomes are a clean result (exit 0 or 1 with a list of results) or
     exit 4 with one strict JSON error object of kind "model" or
     "cpu-crashed" and a one-line message, and never a traceback.
     Anything else (exit 5: the delegate crashed; a signal; a timeout;
     broken JSON) is a finding.

  python tests/fuzz/fuzz_models.py --seed 7 --seconds 3600 --out build-fuzz/models   # a long run
  python tests/fuzz/fuzz_models.py --replay tests/fuzz/regressions/model_mutations.json

Prints a JSON summary; exits 1 when there are findings (written to --out).
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import pathlib
import struct
import subprocess
import sys
import tempfile
import time

import numpy as np

EDGE = (0, 1, 2, 3, 7, 255, 256, 65535, 65536, 1 << 20, 0x7FFFFFFF, -1, -2, -0x80000000)
FLOATS = (float("nan"), float("inf"), -float("inf"), 3e38, 0.0, -1e-30)
KINDS = ("truncate", "flip", "shape", "buffer", "opcode", "tensor_index", "type", "offset", "vector_length",
         "options", "custom_options", "sparse", "payload")
SHORT_MODELS = ("hand_recrop", "face_detection_short_range", "iris_landmark")
CLI_TIMEOUT_S = 180


# --------------------------------------------------------------------------
# Mutations


def _targets(layout):
    """{mutation kind: [(where, kind, pos, size)]} of the parts each kind edits."""
    t = {k: [] for k in KINDS}
    for entry in layout:
        where, kind, pos, size = entry
        leaf = where.split(".")[-1].split("[")[0]
        if kind == "vector" and leaf == "shape":
            t["shape"].append(entry)
        if (kind == "scalar" and leaf == "buffer") or (kind == "vector" and where.endswith(".data")):
            t["buffer"].append(entry)
        if kind == "scalar" and leaf in ("opcode_index", "builtin_code", "deprecated_builtin_code"):
            t["opcode"].append(entry)
        if kind == "vector" and leaf in ("inputs", "outputs", "intermediates") and "signature" not in where:
            t["tensor_index"].append(entry)
        if kind == "scalar" and leaf == "type":
            t["type"].append(entry)
        if kind == "offset":
            t["offset"].append(entry)
        if kind in ("vector", "string"):
            t["vector_length"].append(entry)
        if ".builtin_options." in where:
            t["options"].append(entry)
        if leaf == "custom_options" and kind == "vector":
            t["custom_options"].append(entry)
        if ".sparsity." in where and kind in ("scalar", "vector"):
            t["sparse"].append(entry)
        if kind == "vector" and where.endswith(".data"):
            t["payload"].append(entry)
    return t


def _le(value: int, size: int) -> str:
    return (int(value) & ((1 << 8 * size) - 1)).to_bytes(size, "little").hex()


def _count(base, pos) -> int:
    return struct.unpack_from("<I", base, pos)[0]


def _edit_vector_element(base, entry, rng, values=EDGE):
    where, kind, pos, size = entry
    n = _count(base, pos)
    if n == 0 or rng.random() < 0.2:
        return [{"set": [pos, _le(int(rng.choice(values)), 4)]}]
    i = int(rng.integers(0, n))
    return [{"set": [pos + 4 + i * size, _le(int(rng.choice(values)), size)]}]


def mutation(base: bytes, targets: dict, rng, kind: str) -> list:
    """The edits (a JSON-able list) of one mutation of `kind`."""
    pool = targets.get(kind) or []
    if kind == "truncate":
        n = int(rng.choice([1024, 4096, len(base) // 2, int(rng.integers(1, len(base)))]))
        return [{"truncate": min(n, len(base) - 1)}]
    if kind == "flip" or not pool:
        return [{"xor": [int(rng.integers(0, len(base))), 1 << int(rng.integers(0, 8))]}
                for _ in range(int(rng.integers(1, 4)))]
    entry = pool[int(rng.integers(0, len(pool)))]
    where, part, pos, size = entry
    if kind == "payload":
        n = _count(base, pos)
        if n < 4:
            return [{"xor": [pos + 4, 0xFF]}] if n else [{"set": [pos, _le(1 << 20, 4)]}]
        at = pos + 4 + 4 * int(rng.integers(0, n // 4))
        return [{"set": [at, struct.pack("<f", float(rng.choice(FLOATS))).hex()]}]
    if kind == "custom_options":
        n = _count(base, pos)
        if n and rng.random() < 0.7:
            return [{"xor": [pos + 4 + int(rng.integers(0, n)), 1 << int(rng.integers(0, 8))]}]
        return [{"set": [pos, _le(int(rng.choice(EDGE)), 4)]}]
    if kind == "vector_length":
        return [{"set": [pos, _le(int(rng.choice(EDGE)), 4)]}]
    if kind == "offset":
        delta = int(rng.choice([-8, -4, 4, 8, 1 << 16])) if rng.random() < 0.5 else None
        value = _count(base, pos) + delta if delta is not None else int(rng.choice(EDGE))
        return [{"set": [pos, _le(value, 4)]}]
    if part == "scalar":
        value = int(rng.choice(EDGE)) if kind != "type" else int(rng.integers(0, 24))
        return [{"set": [pos, _le(value, size)]}]
    return _edit_vector_element(base, entry, rng)


def apply(base: bytes, ops: list) -> bytes:
    b = bytearray(base)
    for op in ops:
        if "truncate" in op:
            del b[op["truncate"]:]
        elif "set" in op:
            pos, data = op["set"][0], bytes.fromhex(op["set"][1])
            if 0 <= pos and pos + len(data) <= len(b):
                b[pos:pos + len(data)] = data
        elif "xor" in op:
            pos, mask = op["xor"]
            if 0 <= pos < len(b):
                b[pos] ^= mask
    return bytes(b)


class Corpus:
    """Base models with their layouts: mutants as recipes."""

    def __init__(self, names):
        from tflite_gpu import models, verify

        paths = models.fetch_models(list(names), progress=False)
        self.bases = {n: pathlib.Path(paths[n]).read_bytes() for n in names}
        self.targets = {n: _targets(verify.layout(b)) for n, b in self.bases.items()}

    def recipe(self, rng, kind=None) -> dict:
        name = sorted(self.bases)[int(rng.integers(0, len(self.bases)))]
        kind = kind or KINDS[int(rng.integers(0, len(KINDS)))]
        base = self.bases[name]
        ops = mutation(base, self.targets[name], rng, kind)
        return {"model": name, "sha256": hashlib.sha256(base).hexdigest(), "kind": kind, "ops": ops}

    def mutant(self, recipe) -> bytes:
        base = self.bases[recipe["model"]]
        if hashlib.sha256(base).hexdigest() != recipe["sha256"]:
            raise ValueError(f"{recipe['model']}: the recipe was made for another version of the model")
        return apply(base, recipe["ops"])


# --------------------------------------------------------------------------
# Running


def verifier_stage(corpus, rng, count=None, seconds=None) -> tuple:
    """(counts, findings): the verifier must accept a mutant or raise ModelError."""
    from tflite_gpu import verify

    counts, findings = {"accepted": 0, "rejected": 0}, []
    deadline = time.monotonic() + seconds if seconds else None
    done = 0
    while (count is None or done < count) and (deadline is None or time.monotonic() < deadline):
        recipe = corpus.recipe(rng)
        done += 1
        try:
            verify.verify_bytes(corpus.mutant(recipe))
            counts["accepted"] += 1
        except verify.ModelError:
            counts["rejected"] += 1
        except Exception as e:  # noqa: BLE001 - the finding
            findings.append(dict(recipe, stage="verifier", why=f"{type(e).__name__}: {e}"))
    return counts, findings


def _strict_json(text):
    def no_constants(name):
        raise ValueError(f"{name} is not JSON")
    return json.loads(text, parse_constant=no_constants)


def judge(rc, stdout, stderr) -> tuple:
    """(outcome, None) when acceptable, else (outcome, why)."""
    if "Traceback (most recent call last)" in stderr:
        return "traceback", "a Python traceback on stderr"
    try:
        doc = _strict_json(stdout)
    except ValueError as e:
        return "bad-json", f"stdout is not one strict JSON document ({e}): {stdout[:200]!r}"
    if rc in (0, 1) and isinstance(doc, list) and doc and all("verdict" in r for r in doc):
        return "clean", None
    if isinstance(doc, dict) and isinstance(doc.get("error"), dict):
        err = doc["error"]
        outcome = err.get("kind", "?")
        if rc == 4 and err.get("exit_code") == 4 and outcome in ("model", "cpu-crashed") \
                and isinstance(err.get("message"), str) and "\n" not in err["message"] and err["message"]:
            return outcome, None
        return outcome, f"exit {rc}: {err.get('message', '')[:300]}"
    return f"exit-{rc}", f"exit {rc} with an unexpected document {stdout[:200]!r}"


def run_cli(data: bytes, workdir, timeout=CLI_TIMEOUT_S) -> tuple:
    """(outcome, why or None, seconds) of `check --json` on one mutant."""
    path = pathlib.Path(workdir) / "mutant.tflite"
    path.write_bytes(data)
    cmd = [sys.executable, "-m", "tflite_gpu", "check", "--json", str(path), "--opt", "log_level=silent"]
    t = time.monotonic()
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, errors="backslashreplace", timeout=timeout)
    except subprocess.TimeoutExpired:
        return "timeout", f"no answer in {timeout} s", time.monotonic() - t
    outcome, why = judge(p.returncode, p.stdout, p.stderr)
    return outcome, why, time.monotonic() - t


def cli_stage(corpus, rng, count=None, seconds=None, workdir=None) -> tuple:
    counts, findings = {}, []
    deadline = time.monotonic() + seconds if seconds else None
    done = 0
    with tempfile.TemporaryDirectory() as tmp:
        while (count is None or done < count) and (deadline is None or time.monotonic() < deadline):
            recipe = corpus.recipe(rng)
            done += 1
            outcome, why, _ = run_cli(corpus.mutant(recipe), workdir or tmp)
            counts[outcome] = counts.get(outcome, 0) + 1
            if why:
                findings.append(dict(recipe, stage="cli", outcome=outcome, why=why))
    return counts, findings


def replay(path, workdir=None) -> list:
    """Runs every recipe of a regression file through the CLI; the findings."""
    recipes = json.loads(pathlib.Path(path).read_text())
    corpus = Corpus(sorted({r["model"] for r in recipes}))
    findings = []
    with tempfile.TemporaryDirectory() as tmp:
        for r in recipes:
            outcome, why, _ = run_cli(corpus.mutant(r), workdir or tmp)
            if why:
                findings.append(dict(r, outcome=outcome, why=why))
    return findings


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seed", type=int, default=int(os.environ.get("TFLITE_GPU_FUZZ_SEED", "1")))
    ap.add_argument("--seconds", type=float, default=None, help="time budget of each stage (long runs)")
    ap.add_argument("--verifier-mutants", type=int, default=None)
    ap.add_argument("--cli-mutants", type=int, default=None)
    ap.add_argument("--models", default=",".join(SHORT_MODELS), help="comma-separated MediaPipe model names")
    ap.add_argument("--out", default=None, help="directory for findings.json")
    ap.add_argument("--replay", metavar="FILE", help="run the recipes of FILE instead")
    args = ap.parse_args(argv)
    if args.replay:
        findings = replay(args.replay)
        print(json.dumps({"replayed": args.replay, "findings": findings}))
        return 1 if findings else 0
    corpus = Corpus(args.models.split(","))
    rng = np.random.default_rng(args.seed)
    v_counts, v_find = verifier_stage(corpus, rng, args.verifier_mutants, args.seconds)
    c_counts, c_find = cli_stage(corpus, rng, args.cli_mutants, args.seconds)
    findings = v_find + c_find
    if args.out and findings:
        out = pathlib.Path(args.out)
        out.mkdir(parents=True, exist_ok=True)
        (out / "findings.json").write_text(json.dumps(findings, indent=1))
    print(json.dumps({"seed": args.seed, "verifier": v_counts, "cli": c_counts, "findings": findings}))
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main())
