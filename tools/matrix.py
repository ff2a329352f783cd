#!/usr/bin/env python3
"""The portability matrix: the op tests, the single-kernel tests and the 14
MediaPipe models on several OpenCL implementations with each kernel set,
then one summary table (implementation x kernel set x precision: passed,
failed, time). Run through tools/run_matrix.sh, which registers the
implementations first (tools/opencl_impls.sh); the README's "Portability
matrix" says what is sampled and why.

Pieces (KS = each kernel set, cpu and gpu):
  pocl      op tests, all of tests/test_ops.py, KS, recording the kernels
            each test launches (tools/matrix_plugin.py), the GPU set under
            POCL_WORK_GROUP_METHOD=cbs; the 14 models with `tflite-gpu
            check`, KS x FP32/FP16 (the GPU set: half of them per
            precision, Matrix.add_models).
  oclgrind  two passes, "races" (OCLGRIND_DATA_RACES + OCLGRIND_CHECK_API on
            the optimised build; out-of-bounds checks are always on) and
            "uninit" (the same plus OCLGRIND_UNINITIALIZED, built with
            -cl-opt-disable: Oclgrind 21.10's uninitialised-value plugin
            aborts on the `freeze` instruction of optimised LLVM 15 code),
            each with TFLITE_GPU_SEPARATE_BUFFERS=1: the single-kernel tests
            (test_cl_*.py, TFLITE_GPU_CL_SMALL=1; the GPU set adds
            test_group_fallback.py), the int8 integer-kernel tests of
            test_quantized.py (GPU set) and the op-test sample of KS (the
            "uninit" pass: of the GPU set; the CPU set's, advisory, with
            --full). Any
            Oclgrind report fails the piece (tools/oclgrind_scan.py). In
            the "races" pass also the VM program (execution=stepped in its
            checked mode, TFLITE_GPU_VM_CHECKED=1, whose guard zones find
            the overruns that one arena hides from Oclgrind): hand_recrop,
            and the CPU set's op-test sample as VM phases.
  intel     the op-test sample of KS; the models, KS x FP32/FP16, half
            per precision (the GPU set: the other half of PoCL's); the
            int8 tests (integer kernels and the MTCNN-like whole models,
            CPU set); the half-arithmetic and fp16_guard tests (GPU set:
            the only device here with cl_khr_fp16). Built with
            TFLITE_GPU_TEST_CHECK_ALIGN=1: the aligned float4 accesses
            NVIDIA gets (common.cl LOAD4), each address checked; a piece
            whose output reports a misaligned one fails.

The op-test sample of a kernel set is a small set of tests that together
launch every kernel (FP16-storage builds counted apart) that the PoCL run of
that set launched, cheapest first (tools/matrix_sample.py); a sampled run
that misses one fails. --full runs every op test everywhere instead.

Exit status: 0 if every piece passed, 1 otherwise.
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import os
import pathlib
import re
import signal
import subprocess
import sys
import threading
import time
import xml.etree.ElementTree as ET

ROOT = pathlib.Path(__file__).resolve().parent.parent
TOOLS = ROOT / "tools"
MODELS: list[str] = []  # the 14 MediaPipe models (tflite_gpu.models.MODELS), filled in main()
CL_TESTS = ["tests/test_cl_kernels.py", "tests/test_cl_conv_gpu.py", "tests/test_cl_reduce_gpu.py"]
# The GPU set's kernels rebuilt for smaller work-groups (through the
# library): they run with the GPU set's single-kernel tests.
GROUP_TESTS = ["tests/test_group_fallback.py"]
# The int8 integer-arithmetic kernels (int8_exact.cl) are not in the op-test
# sample (test_ops.py has no int8 cases): their own tests, as pytest args.
INT8_KERNEL_TESTS = ["tests/test_quantized.py", "-k", "integer_kernels or accumulation_bound or prelu_integer"]
INT8_MODEL_TESTS = ["tests/test_int8_fidelity.py"]
# The VM program under Oclgrind: stepped (one launch per phase), checked, in its arenas.
VM_ENV = {"TFLITE_GPU_SEPARATE_BUFFERS": "0", "TFLITE_GPU_TEST_EXECUTION": "stepped", "TFLITE_GPU_VM_CHECKED": "1"}
VM_MODEL_TEST = "tests/test_execution_modes.py::test_the_checked_mode_finds_no_phase_writing_past_its_buffer[hand_recrop-fp32]"
# Half arithmetic needs cl_khr_fp16, which only Intel's runtime has here
# (test_half_math.py skips elsewhere); the FP16 guard's storage casts with it.
HALF_TESTS = ["tests/test_half_math.py", "tests/test_fp16_guard.py"]
# (model, precision) pairs that fail `check` on every implementation and
# kernel set for a reason tracked elsewhere: still run and shown in the
# table, but not a matrix failure; one that starts passing fails the piece,
# so this list cannot go stale.
KNOWN_FAILURES = {}
# FP16 runs use fp16_guard=on (fp16_guard.c): without it pose_landmark_full's
# segmentation logits fail the FP16 tolerance on every implementation (their
# half roundings, the input image's included, are amplified by the head).
FP16_OPTIONS = ["--opt", "is_precision_loss_allowed=1", "--opt", "fp16_guard=on"]
# Oclgrind's uninitialised-value plugin on the CPU set's kernels, which hold
# float8/float16 accumulators in private arrays: it reports the register-
# tiled conv stores as uninitialised (conv2d_1x1, conv2d_tiled_c3) and
# segfaults on the float8 depthwise kernels, while the same kernels pass
# every op test against the CPU interpreter with NaN-free results on PoCL
# and Intel, and the GPU set (float4 only) is clean. Until the reports are
# traced to the plugin or to the kernels, that pass is shown but does not
# fail the matrix; the `races` pass (invalid accesses and data races)
# gates the CPU set.
UNINIT_CPU_ADVISORY = "Oclgrind's uninit plugin on float8/float16 private arrays (see matrix.py)"
OCLGRIND_PASSES = {
    "races": {"OCLGRIND_DATA_RACES": "1", "OCLGRIND_CHECK_API": "1"},
    "uninit": {"OCLGRIND_DATA_RACES": "1", "OCLGRIND_CHECK_API": "1", "OCLGRIND_UNINITIALIZED": "1",
               "OCLGRIND_BUILD_OPTIONS": "-cl-opt-disable"},
}


@dataclasses.dataclass
class Piece:
    impl: str
    kset: str
    precision: str
    what: str
    run: object                      # callable(piece) -> None; fills the result fields
    deps: tuple = ()                 # names of pieces that must finish first
    lane: str = "main"               # pieces of one lane run one after another
    passed: int = 0
    failed: int = 0
    seconds: float = 0.0
    status: str = "pending"          # ok, FAIL, skipped
    note: str = ""
    advisory: str = ""               # why a failure here is reported but does not fail the matrix
    log: str = ""
    models: tuple = ()               # a models piece: the models it checks

    @property
    def name(self):
        return f"{self.impl}/{self.kset}/{self.precision}/{self.what}"


class Matrix:
    def __init__(self, args):
        self.args = args
        self.out = pathlib.Path(args.out).resolve()
        self.out.mkdir(parents=True, exist_ok=True)
        self.python = args.python
        self.pieces: list[Piece] = []
        self.models = [m for m in args.models.split(",") if m] if args.models else MODELS
        self.lock = threading.Lock()

    # ------------------------------------------------------------ helpers

    def env(self, impl, kset, extra=None):
        env = dict(os.environ)
        env["OCL_ICD_VENDORS"] = str(ROOT / "build" / "icd" / impl)
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(TOOLS), env.get("PYTHONPATH")]))
        env["PYTHONUNBUFFERED"] = "1"
        env.pop("TFLITE_GPU_TEST_KERNEL_SET", None)
        if kset != "default":
            env["TFLITE_GPU_TEST_KERNEL_SET"] = kset
        if impl == "intel":
            env["TFLITE_GPU_TEST_CHECK_ALIGN"] = "1"
        if impl == "oclgrind":
            env["TFLITE_GPU_SEPARATE_BUFFERS"] = "1"
            for k in list(env):
                if k.startswith("OCLGRIND_"):
                    del env[k]
        env.update(extra or {})
        return env

    def sh(self, cmd, env, log, append=False):
        """Runs cmd with stdout and stderr into log; returns the exit status
        (negative: killed by that signal; 124: the piece's time limit)."""
        timeout = self.args.piece_timeout or None
        with open(log, "a" if append else "w") as f:
            f.write("$ " + " ".join(str(c) for c in cmd) + "\n")
            f.flush()
            proc = subprocess.Popen([str(c) for c in cmd], cwd=ROOT, env=env, stdout=f, stderr=subprocess.STDOUT,
                                    start_new_session=True)
            try:
                return proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
                f.write(f"\n== matrix: killed after {timeout} s\n")
                return 124

    def pytest_cmd(self, *args):
        cmd = [self.python, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "matrix_plugin", *args]
        if self.args.ops_k and "tests/test_ops.py" in args:
            cmd += ["-k", self.args.ops_k]
        return cmd

    @staticmethod
    def junit_counts(path):
        try:
            root = ET.parse(path).getroot()
        except (OSError, ET.ParseError):
            return None
        suites = [root] if root.tag == "testsuite" else list(root.iter("testsuite"))
        total = sum(int(s.get("tests", 0)) for s in suites)
        bad = sum(int(s.get("failures", 0)) + int(s.get("errors", 0)) for s in suites)
        skipped = sum(int(s.get("skipped", 0)) for s in suites)
        return total - bad - skipped, bad, skipped

    @staticmethod
    def tag(p):
        """A file-name stem for the piece: pocl-cpu-FP32-14_models."""
        return re.sub(r"[^A-Za-z0-9.-]+", "_", f"{p.impl}-{p.kset}-{p.precision}-{p.what}").strip("_")

    # ------------------------------------------------------------ pieces

    def pytest_piece(self, p, targets, env, select=None, record=None, sample_check=None):
        """pytest on targets; passed/failed from its JUnit XML."""
        tag = self.tag(p)
        p.log = str(self.out / f"{tag}.log")
        junit = self.out / f"{tag}.xml"
        # -s: the kernels' reports of a misaligned access (printf) reach the log
        args = [f"--junitxml={junit}", *targets] + (["-s"] if env.get("TFLITE_GPU_TEST_CHECK_ALIGN") else [])
        if select:
            args.append(f"--matrix-select={select}")
        if record:
            pathlib.Path(record).unlink(missing_ok=True)
            args.append(f"--matrix-kernels={record}")
        rc = self.sh(self.pytest_cmd(*args), env, p.log)
        counts = self.junit_counts(junit)
        if counts is None:
            p.status, p.note = "FAIL", f"pytest exit {rc}, no results"
            return
        p.passed, p.failed, skipped = counts
        p.status = "ok" if rc == 0 and p.failed == 0 else "FAIL"
        if rc not in (0, 1):
            p.note = f"pytest exit {rc}"
        if skipped:
            p.note = (p.note + f"; {skipped} skipped").lstrip("; ")
        if sample_check and p.status == "ok":
            self.coverage(p, sample_check, record)

    def coverage(self, p, reference, record):
        r = subprocess.run([self.python, TOOLS / "matrix_sample.py", "check", reference, record],
                           capture_output=True, text=True)
        msg = (r.stdout + r.stderr).strip()
        with open(p.log, "a") as f:
            f.write(f"\n== matrix coverage: {msg}\n")
        if r.returncode != 0:
            p.status = "FAIL"
            p.note = (p.note + "; " + msg).lstrip("; ")

    def record_piece(self, p):
        """PoCL, every op test, recording kernels; then the sample. The GPU
        set's kernels (the only ones with __local memory and barriers) run
        under PoCL's cbs work-group method, which runs a group's work-items
        differently from its default method and exposes the barrier and
        local-memory bugs that one hides and GPUs would show."""
        record = self.out / f"kernels-pocl-{p.kset}.jsonl"
        extra = {"POCL_WORK_GROUP_METHOD": "cbs"} if p.kset == "gpu" else None
        self.pytest_piece(p, ["tests/test_ops.py"], self.env("pocl", p.kset, extra), record=record)
        sample = self.out / f"sample-{p.kset}.txt"
        r = subprocess.run([self.python, TOOLS / "matrix_sample.py", "cover", record, "--out", sample,
                            "--extra-every", str(self.args.extra_every)], capture_output=True, text=True)
        if r.returncode != 0:
            p.status, p.note = "FAIL", "no sample: " + r.stderr.strip()[-300:]
        else:
            p.note = (p.note + "; sample: " + r.stderr.strip()).lstrip("; ")

    def sample_for(self, kset):
        return None if self.args.full else self.out / f"sample-{kset}.txt"

    def ops_piece(self, p):
        """The op-test sample (or every op test with --full) on Intel."""
        sample = self.sample_for(p.kset)
        if sample is not None and not sample.exists():
            p.status, p.note = "FAIL", f"no sample ({sample.name}): the PoCL run failed"
            return
        record = self.out / f"kernels-{p.impl}-{p.kset}.jsonl"
        self.pytest_piece(p, ["tests/test_ops.py"], self.env(p.impl, p.kset), select=sample, record=record,
                          sample_check=self.out / f"kernels-pocl-{p.kset}.jsonl")

    def oclgrind_piece(self, p, targets, pass_name, extra_env=None, coverage=True):
        """pytest under Oclgrind with -s (its reports reach the log),
        markers around each test, then tools/oclgrind_scan.py. If Oclgrind
        itself crashes in a test (its uninitialised-value plugin segfaults
        on some kernels), the run resumes after that test; in the "uninit"
        pass such a crash is noted, in the "races" pass it fails the piece.
        coverage: check that the op-test sample launched every kernel PoCL's
        run did (not for the VM, whose one kernel runs every body)."""
        tag = self.tag(p)
        p.log = str(self.out / f"{tag}.log")
        env = self.env("oclgrind", p.kset, dict(OCLGRIND_PASSES[pass_name], **(extra_env or {})))
        select = self.sample_for(p.kset) if "tests/test_ops.py" in targets else None
        if select is not None and not select.exists():
            p.status, p.note = "FAIL", f"no sample ({select.name}): the PoCL run failed"
            return
        # The ids to run, so that a run can resume after a crash.
        ids_file = self.out / f"{tag}.ids"
        collect = self.pytest_cmd("--collect-only", *targets, *([f"--matrix-select={select}"] if select else []))
        r = subprocess.run([str(c) for c in collect], cwd=ROOT, env=env, capture_output=True, text=True)
        ids = [line for line in r.stdout.splitlines() if "::" in line]
        if not ids:
            p.status, p.note = "FAIL", "nothing collected: " + (r.stdout + r.stderr).strip()[-300:]
            return
        record = (self.out / f"kernels-oclgrind-{pass_name}-{p.kset}.jsonl"
                  if (select or self.args.full) and coverage else None)
        if record and "tests/test_ops.py" in targets:
            record.unlink(missing_ok=True)
        finished, crashed, results, first = set(), [], {}, True
        while True:
            todo = [i for i in ids if i not in finished and i not in crashed]
            if not todo:
                break
            ids_file.write_text("".join(i + "\n" for i in todo))
            args = ["-s", "--matrix-markers", f"--matrix-select={ids_file}", *targets]
            if record and "tests/test_ops.py" in targets:
                args.insert(0, f"--matrix-kernels={record}")
            start = os.path.getsize(p.log) if not first else 0
            rc = self.sh(self.pytest_cmd(*args), env, p.log, append=not first)
            first = False
            with open(p.log, errors="replace") as f:
                f.seek(start)
                text = f.read()
            started = re.findall(r"^== matrix test: (.*)$", text, re.M)
            done_now = set(re.findall(r"^== matrix done: (.*)$", text, re.M))
            results.update(re.findall(r"^== matrix result: (.*) (\w+)$", text, re.M))
            finished |= done_now
            running = [t for t in started if t not in done_now]
            if rc in (0, 1) and not running:
                break
            if rc == 124 or not running:
                p.status, p.note = "FAIL", f"pytest exit {rc}" + (" (time limit)" if rc == 124 else " outside a test")
                break
            crashed.append(running[-1])  # Oclgrind (or the process) died in this test: go on after it
        p.passed = sum(1 for o in results.values() if o == "passed")
        p.failed = sum(1 for o in results.values() if o == "failed")
        if p.status == "FAIL":
            return
        tolerate = [f"--tolerate={c}" for c in crashed] if pass_name == "uninit" else []
        scan = subprocess.run([self.python, TOOLS / "oclgrind_scan.py", p.log, "--json",
                               str(self.out / f"{tag}.scan.json"), *tolerate], capture_output=True, text=True)
        with open(p.log, "a") as f:
            f.write("\n" + scan.stdout)
        first_line = scan.stdout.splitlines()[0] if scan.stdout else "scan failed"
        try:
            reports = json.loads((self.out / f"{tag}.scan.json").read_text())["reports"]
        except (OSError, ValueError, KeyError):
            reports = -1
        p.status = "ok" if p.failed == 0 and reports == 0 else "FAIL"
        p.note = first_line.replace("oclgrind: ", "")
        if crashed:
            # In the "uninit" pass (Oclgrind's uninitialised-value plugin is
            # known to segfault on some kernels) a crash is noted and what
            # Oclgrind printed in that test is not counted; in the "races"
            # pass a crash fails the piece.
            p.note += f"; Oclgrind crashed in {len(crashed)} test(s): {', '.join(c.split('::')[-1] for c in crashed[:3])}"
            if pass_name != "uninit":
                p.status = "FAIL"
        if record and p.status == "ok" and pass_name == "races":
            self.coverage(p, self.out / f"kernels-pocl-{p.kset}.jsonl", record)

    def models_piece(self, p):
        tag = self.tag(p)
        p.log = str(self.out / f"{tag}.log")
        out = self.out / f"{tag}.json"
        opts = []
        if p.kset != "default":
            opts += ["--opt", f"kernel_set={p.kset}"]
        if p.precision == "FP16":
            opts += FP16_OPTIONS
        env = self.env(p.impl, p.kset)
        cmd = [self.python, "-m", "tflite_gpu", "check", *p.models, *opts, "--json"]
        with open(out, "w") as f, open(p.log, "w") as log:
            log.write("$ " + " ".join(cmd) + f" > {out.name}\n")
            log.flush()
            proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=f, stderr=log, start_new_session=True)
            try:
                rc = proc.wait(timeout=self.args.piece_timeout or None)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
                rc = 124
        try:
            results = json.loads(out.read_text())
        except ValueError:
            p.status, p.note = "FAIL", f"check exit {rc}, no JSON (see {p.log})"
            return
        if not isinstance(results, list):  # an error document: the run stopped (a crash, a bad model)
            p.status, p.note = "FAIL", f"check exit {rc}: {json.dumps(results)[:300]} (see {p.log})"
            return
        bad = [pathlib.Path(r["model"]).stem for r in results if not r.get("passed")]
        known = {m for (m, prec) in KNOWN_FAILURES if prec == p.precision and m in p.models}
        unexpected = [m for m in bad if m not in known]
        fixed = sorted(known - set(bad))
        p.passed, p.failed = len(results) - len(bad), len(bad)
        p.status = ("ok" if rc in (0, 1) and (rc == 0 or bad) and not unexpected and not fixed
                    and len(results) == len(p.models) else "FAIL")
        notes = []
        if unexpected:
            notes.append("failed: " + ", ".join(unexpected))
        if set(bad) & known:
            notes.append("known failure: " + ", ".join(sorted(set(bad) & known)))
        if fixed:
            notes.append("now passes, remove from KNOWN_FAILURES: " + ", ".join(fixed))
        if not notes and rc != 0:
            notes.append(f"check exit {rc}")
        p.note = "; ".join(notes)

    # ------------------------------------------------------------ plan

    def plan(self, impls, ksets, passes):
        add = self.pieces.append
        for ks in ksets:
            add(Piece("pocl", ks, "FP32+FP16", "op tests (all; kernel record)", self.record_piece))
        if "oclgrind" in impls:
            for ps in passes:
                # The CPU set's single-kernel tests and the GPU set's apart:
                # their `uninit` verdicts are judged differently (below).
                for ks, tests in (("cpu", CL_TESTS[:1]), ("gpu", CL_TESTS[1:] + GROUP_TESTS)):
                    if self.advisory_only(ps, ks):
                        continue
                    add(Piece("oclgrind", ks, "FP32+FP16", f"single-kernel tests ({ps})",
                              lambda p, ps=ps, tests=tests: self.oclgrind_piece(p, tests, ps,
                                                                               {"TFLITE_GPU_CL_SMALL": "1"}),
                              advisory=UNINIT_CPU_ADVISORY if ps == "uninit" and ks == "cpu" else ""))
                if "gpu" in ksets:
                    add(Piece("oclgrind", "gpu", "int8", f"int8 integer kernels ({ps})",
                              lambda p, ps=ps: self.oclgrind_piece(p, INT8_KERNEL_TESTS, ps)))
            for ks in ksets:
                for ps in passes:
                    if self.advisory_only(ps, ks):
                        continue
                    what = f"op tests ({'all' if self.args.full else 'sample'}; {ps})"
                    add(Piece("oclgrind", ks, "FP32+FP16", what,
                              lambda p, ps=ps: self.oclgrind_piece(p, ["tests/test_ops.py"], ps),
                              deps=(f"pocl/{ks}/FP32+FP16/op tests (all; kernel record)",),
                              advisory=UNINIT_CPU_ADVISORY if ps == "uninit" and ks == "cpu" else ""))
            if "cpu" in ksets and "races" in passes:
                # In the second lane (Intel's), which finishes minutes before the main one.
                add(Piece("oclgrind", "cpu", "FP32", "hand_recrop, VM stepped, checked (races)",
                          lambda p: self.oclgrind_piece(p, [VM_MODEL_TEST], "races", VM_ENV), lane="intel"))
                add(Piece("oclgrind", "cpu", "FP32+FP16", "op tests (sample; VM stepped, checked; races)",
                          lambda p: self.oclgrind_piece(p, ["tests/test_ops.py"], "races", VM_ENV, coverage=False),
                          deps=("pocl/cpu/FP32+FP16/op tests (all; kernel record)",), lane="intel"))
        if "intel" in impls:
            # Intel's compiler is slow (seconds per program): its own lane.
            for ks in ksets:
                for prec in ("FP32", "FP16"):
                    self.add_models(Piece("intel", ks, prec, "", self.models_piece, lane="intel"))
            for ks in ksets:
                add(Piece("intel", ks, "FP32+FP16", f"op tests ({'all' if self.args.full else 'sample'})",
                          self.ops_piece, deps=(f"pocl/{ks}/FP32+FP16/op tests (all; kernel record)",),
                          lane="intel"))
            if "gpu" in ksets:
                add(Piece("intel", "gpu", "FP16", "half math and fp16_guard",
                          lambda p: self.pytest_piece(p, HALF_TESTS, self.env("intel", "gpu")), lane="intel"))
            if "cpu" in ksets:
                add(Piece("intel", "cpu", "int8", "int8 kernels and whole models",
                          lambda p: self.pytest_piece(p, INT8_KERNEL_TESTS[:1] + INT8_MODEL_TESTS
                                                      + INT8_KERNEL_TESTS[1:2]
                                                      + [INT8_KERNEL_TESTS[2] + " or fidelity"],
                                                      self.env("intel", "cpu")),
                          lane="intel"))
        if "pocl" in impls:
            for ks in ksets:
                for prec in ("FP32", "FP16"):
                    self.add_models(Piece("pocl", ks, prec, "", self.models_piece))

    def advisory_only(self, pass_name, kset):
        """The `uninit` pass on the CPU set (UNINIT_CPU_ADVISORY) gates
        nothing: it runs with --full only."""
        return pass_name == "uninit" and kset == "cpu" and not self.args.full

    def add_models(self, p):
        """A models piece. The GPU set on these CPU devices (a few seconds per
        model and precision) checks half of the models per precision, every
        other one in name order, the halves swapped between PoCL and Intel:
        each model runs in both precisions with the GPU set, each (model,
        precision) on one of the two implementations. The CPU set runs all
        14 in both precisions on PoCL and half per precision on Intel.
        --full or --models runs every model everywhere."""
        models = self.models
        halved = p.impl == "intel" or (p.kset == "gpu" and p.impl == "pocl")
        if halved and not self.args.full and not self.args.models:
            half = (("FP32", "FP16").index(p.precision) + ("pocl", "intel").index(p.impl)) % 2
            models = [m for i, m in enumerate(self.models) if i % 2 == half]
        p.models = tuple(models)
        if models == MODELS:
            p.what = "14 models"
        elif len(models) == len(MODELS) // 2 and models != self.models:
            p.what = f"{len(models)} of {len(MODELS)} models ({'1st, 3rd' if half == 0 else '2nd, 4th'}, ...)"
        else:
            p.what = f"{len(models)} model(s)"
        self.pieces.append(p)

    def run_piece(self, p):
        t0 = time.monotonic()
        print(f"matrix: start {p.name}", flush=True)
        try:
            p.run(p)
            misaligned = self.misaligned(p)
            if misaligned:
                p.status, p.note = "FAIL", (p.note + f"; {misaligned} misaligned float4 access(es) reported").lstrip("; ")
        except Exception as e:  # noqa: BLE001 - a broken piece is a failed piece, the others go on
            p.status, p.note = "FAIL", f"{type(e).__name__}: {e}"
        p.seconds = time.monotonic() - t0
        print(f"matrix: {p.status:4s} {p.name}: {p.passed} passed, {p.failed} failed, {p.seconds:.0f} s"
              + (f" ({p.note})" if p.note else ""), flush=True)

    def misaligned(self, p):
        """Reports of a misaligned LOAD4 / STORE4 (TFLITE_GPU_TEST_CHECK_ALIGN)
        in the piece's log and its check JSON."""
        files = [pathlib.Path(p.log)] if p.log else []
        files.append(self.out / f"{self.tag(p)}.json")
        count = 0
        for f in files:
            if f.is_file():
                with open(f, errors="replace") as fh:
                    count += sum(line.count("tflite-gpu: misaligned") for line in fh)
        return count

    def run(self):
        """Lanes run in parallel (up to --jobs), pieces within a lane in
        order; a piece waits for its dependencies."""
        lanes = {}
        for p in self.pieces:
            lanes.setdefault(p.lane, []).append(p)
        finished = {}
        cond = threading.Condition()
        sem = threading.Semaphore(max(1, self.args.jobs))

        def worker(pieces):
            for p in pieces:
                with cond:
                    cond.wait_for(lambda: all(d in finished or d not in {q.name for q in self.pieces}
                                              for d in p.deps))
                with sem:
                    self.run_piece(p)
                with cond:
                    finished[p.name] = p.status
                    cond.notify_all()

        threads = [threading.Thread(target=worker, args=(ps,)) for ps in lanes.values()]
        for t in threads:
            t.start()
        for t in threads:
            t.join()

    def table(self):
        rows = [("implementation", "kernel set", "precision", "what", "passed", "failed", "time", "status")]
        for p in self.pieces:
            rows.append((p.impl, p.kset, p.precision, p.what, str(p.passed), str(p.failed),
                         f"{int(p.seconds) // 60}m{int(p.seconds) % 60:02d}s",
                         "advisory" if p.advisory and p.status != "ok" else p.status))
        widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
        lines = []
        for n, r in enumerate(rows):
            lines.append("  ".join(c.rjust(w) if i in (4, 5, 6) else c.ljust(w) for i, (c, w) in enumerate(zip(r, widths))))
            if n == 0:
                lines.append("  ".join("-" * w for w in widths))
        notes = [f"  {p.name}: {p.note}" for p in self.pieces if p.note]
        notes += [f"  {p.name}: advisory, does not fail the matrix: {p.advisory}" for p in self.pieces
                  if p.advisory and p.status != "ok"]
        return "\n".join(lines) + ("\nnotes:\n" + "\n".join(notes) if notes else "")


def kernel_set_supported(python):
    """Whether the library knows kernel_set (older builds refuse the key)."""
    code = "import tflite_gpu, sys\ntry:\n tflite_gpu.load_delegate(kernel_set='cpu', log_level='silent')\n" \
           "except ValueError as e:\n sys.exit(3 if 'kernel_set' in str(e) else 0)\n"
    env = dict(os.environ, OCL_ICD_VENDORS=str(ROOT / "build" / "icd" / "pocl"))
    return subprocess.run([python, "-c", code], cwd=ROOT, env=env, capture_output=True).returncode != 3


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--impls", default=os.environ.get("TFLITE_GPU_MATRIX_IMPLS", "pocl,intel,oclgrind"),
                    help="implementations (default pocl,intel,oclgrind; $TFLITE_GPU_MATRIX_IMPLS)")
    ap.add_argument("--kernel-sets", default=os.environ.get("TFLITE_GPU_MATRIX_KERNEL_SETS", "cpu,gpu"),
                    help="kernel sets (default cpu,gpu; 'default' passes no kernel_set; $TFLITE_GPU_MATRIX_KERNEL_SETS)")
    ap.add_argument("--oclgrind-passes", default=os.environ.get("TFLITE_GPU_MATRIX_OCLGRIND_PASSES", "races,uninit"))
    ap.add_argument("--full", action="store_true", default=os.environ.get("TFLITE_GPU_MATRIX_FULL") == "1",
                    help="every op test everywhere, no sample ($TFLITE_GPU_MATRIX_FULL=1; hours)")
    ap.add_argument("--extra-every", type=int, default=int(os.environ.get("TFLITE_GPU_MATRIX_EXTRA_EVERY", "0")),
                    help="add every Nth op test to the sample (0: the cover alone)")
    ap.add_argument("--jobs", type=int, default=int(os.environ.get("TFLITE_GPU_MATRIX_JOBS", "2")),
                    help="pieces at a time (default 2: Intel's lane beside the rest)")
    ap.add_argument("--piece-timeout", type=int, default=int(os.environ.get("TFLITE_GPU_MATRIX_PIECE_TIMEOUT", "1800")),
                    help="seconds before a piece is killed (0: none)")
    ap.add_argument("--out", default=os.environ.get("TFLITE_GPU_MATRIX_OUT", str(ROOT / "build" / "matrix")))
    venv = ROOT / ".venv" if (ROOT / ".venv" / "bin" / "python").exists() else ROOT / ".venv-litert"
    ap.add_argument("--python", default=str(venv / "bin" / "python"),
                    help="the python that runs the pieces (default .venv's, else .venv-litert's: Python 3.12+)")
    ap.add_argument("--ops-k", default=os.environ.get("TFLITE_GPU_MATRIX_OPS_K"),
                    help="only the op tests matching this pytest -k expression (for trying the matrix out)")
    ap.add_argument("--models", default=os.environ.get("TFLITE_GPU_MATRIX_MODELS"),
                    help="comma-separated models instead of the 14 (for trying the matrix out)")
    ap.add_argument("--only", help="only the pieces whose name matches this regular expression "
                    "(for trying the matrix out; a dependency outside the selection is not run)")
    ap.add_argument("--list", action="store_true", help="print the pieces and exit")
    args = ap.parse_args(argv)

    from tflite_gpu.models import MODELS as corpus

    MODELS[:] = sorted(corpus)
    impls = [i for i in args.impls.split(",") if i]
    ksets = [k for k in args.kernel_sets.split(",") if k]
    passes = [p for p in args.oclgrind_passes.split(",") if p]
    for i in impls:
        if i not in ("pocl", "intel", "oclgrind"):
            ap.error(f"unknown implementation {i!r}")
    for ps in passes:
        if ps not in OCLGRIND_PASSES:
            ap.error(f"unknown Oclgrind pass {ps!r} ({', '.join(OCLGRIND_PASSES)})")
    if not args.list and ksets != ["default"] and not kernel_set_supported(args.python):
        print("matrix: this library has no kernel_set option; running its default kernels only", flush=True)
        ksets = ["default"]
    m = Matrix(args)
    m.plan(impls, ksets, passes)
    if args.only:
        m.pieces = [p for p in m.pieces if re.search(args.only, p.name)]
    if args.list:
        for p in m.pieces:
            print(f"{p.lane:6s} {p.name}" + (f"  (after {', '.join(p.deps)})" if p.deps else ""))
        return 0
    t0 = time.monotonic()
    m.run()
    total = time.monotonic() - t0
    table = m.table()
    summary = (f"portability matrix ({'full' if args.full else 'sampled'}; {total / 60:.1f} min; logs in {m.out})\n"
               + table)
    print("\n" + summary)
    (m.out / "summary.txt").write_text(summary + "\n")
    (m.out / "results.json").write_text(json.dumps(
        [{f.name: getattr(p, f.name) for f in dataclasses.fields(p) if f.name != "run"} | {"name": p.name}
         for p in m.pieces], indent=1))
    return 0 if all(p.status == "ok" or p.advisory for p in m.pieces) else 1


if __name__ == "__main__":
    sys.exit(main())
