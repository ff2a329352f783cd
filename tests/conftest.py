"""Shared helpers: run a model on the stock CPU interpreter and through the
delegate, and compare outputs with stated tolerances."""
from __future__ import annotations

import dataclasses
import os
import pathlib
import sys
import tempfile

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

import tflite_gpu  # noqa: E402

# `tflite-gpu check` caches kernels in the user's cache directory by
# default; the tests (and the CLI children they start) use a directory of
# their own instead, so a test run never writes to ~/.cache.
os.environ.setdefault("TFLITE_GPU_CACHE_DIR", tempfile.mkdtemp(prefix="tflite-gpu-test-cache-"))
from tflite_gpu import _capi, interpreters  # noqa: E402
from tflite_gpu.model_builder import ModelBuilder  # noqa: E402


def set_policy(monkeypatch, **fields):
    """Overrides fields of the library's policy (select/policy.h) for the
    rest of the test, through TFLITE_GPU_POLICY, which the library reads
    each time it resolves a partition's policy: merged with the fields the
    test set before; a field given as None is dropped."""
    current = dict(kv.split("=", 1) for kv in os.environ.get("TFLITE_GPU_POLICY", "").split(",") if "=" in kv)
    for k, v in fields.items():
        if v is None:
            current.pop(k, None)
        else:
            current[k] = str(v)
    if current:
        monkeypatch.setenv("TFLITE_GPU_POLICY", ",".join(f"{k}={v}" for k, v in current.items()))
    else:
        monkeypatch.delenv("TFLITE_GPU_POLICY", raising=False)


@dataclasses.dataclass
class DelegateReport:
    delegated_nodes: int
    cpu_nodes: int
    partitions: int


def _interpreter(model_bytes, delegates=None):
    """Through the delegate(s), else the builtin CPU kernels as the
    reference (no XNNPACK rewrites); tensors allocated."""
    if delegates:
        (delegate,) = delegates
        return interpreters.make(model_bytes, delegate=delegate)
    return interpreters.make(model_bytes, cpu="builtin")


_run = interpreters.run  # sets the inputs (as the inputs' dtypes), invokes, copies the outputs


def run_cpu(model_bytes, inputs):
    return _run(_interpreter(model_bytes), inputs)


def test_options(**options):
    """The options every test's delegate gets: silent, the kernel set named
    by $TFLITE_GPU_TEST_KERNEL_SET (auto, cpu, gpu) so the portability
    matrix runs the same tests with each family of kernels, and the
    execution mode named by $TFLITE_GPU_TEST_EXECUTION (so it runs them as
    phases of the VM program too)."""
    options.setdefault("log_level", "silent")
    for env, option in (("TFLITE_GPU_TEST_KERNEL_SET", "kernel_set"), ("TFLITE_GPU_TEST_EXECUTION", "execution")):
        if os.environ.get(env):
            options.setdefault(option, os.environ[env])
    return options


test_options.__test__ = False  # a helper, not a test


def run_delegate(model_bytes, inputs, **options):
    options = test_options(**options)
    delegate = tflite_gpu.load_delegate(**options)
    it = _interpreter(model_bytes, [delegate])
    stats = _capi.delegate_stats(delegate._get_native_delegate_pointer())
    outputs = _run(it, inputs)
    del it
    return outputs, DelegateReport(stats["delegated_nodes"], stats["cpu_nodes"], stats["partitions"])


def run_refusal(build, seed, capfd):
    """A model the delegate should (partly) refuse: build(mb, rng) adds its
    ops and returns the inputs. Returns (delegate outputs, CPU outputs,
    report, the delegate's log at warning level)."""
    mb = ModelBuilder()
    inputs = build(mb, np.random.default_rng(seed))
    model = mb.build()
    expected = run_cpu(model, inputs)
    capfd.readouterr()
    actual, report = run_delegate(model, inputs, log_level="warning")
    return actual, expected, report, capfd.readouterr().err


def rel_l2(actual, expected):
    a = np.asarray(actual, np.float64)
    e = np.asarray(expected, np.float64)
    return float(np.linalg.norm(a - e) / max(np.linalg.norm(e), 1e-30))


def assert_close(actual, expected, rtol_l2=1e-4, atol=1e-4):
    assert actual.shape == expected.shape, (actual.shape, expected.shape)
    assert np.all(np.isfinite(actual)), "non-finite values in the delegate's output"
    err = rel_l2(actual, expected)
    max_abs = float(np.abs(actual.astype(np.float64) - expected).max()) if actual.size else 0.0
    assert err <= rtol_l2, f"relative L2 {err:.3g} > {rtol_l2:g} (max abs {max_abs:.3g})"
    assert max_abs <= atol, f"max abs {max_abs:.3g} > {atol:g} (relative L2 {err:.3g})"


def pytest_report_header(config):
    mod = tflite_gpu.runtime()
    pkg = mod.__name__.split(".")[0]
    try:
        from importlib.metadata import version
        ver = version(pkg.replace("_", "-"))
    except Exception:  # noqa: BLE001 - the header is informational
        ver = "?"
    return f"tflite_gpu runtime: {pkg} {ver}, numpy {np.__version__}, library {tflite_gpu.library_path()}"


def pytest_collection_modifyitems(config, items):
    """Sampling for the second runtime's pass (tools/run_tests.sh), whose
    tests differ from the first's only in the runtime under the delegate:
    - TFLITE_GPU_OP_TEST_EVERY=N[:K] keeps every Nth op test of
      tests/test_ops.py (from the Kth, in collection order, so every op
      family keeps cases);
    - TFLITE_GPU_CASE_EVERY=N keeps, of every other parametrized test
      function, its first case and every Nth after it (shapes, channels and
      options vary the kernels, which the first pass runs in full, more
      than the runtime's part).
    The rest are deselected."""
    dropped = set()
    every = os.environ.get("TFLITE_GPU_OP_TEST_EVERY")
    if every:
        n, _, k = every.partition(":")
        n, k = int(n), int(k or 0)
        ops = [item for item in items if item.nodeid.startswith("tests/test_ops.py::")]
        dropped |= {id(item) for i, item in enumerate(ops) if i % n != k % n}
    case_every = int(os.environ.get("TFLITE_GPU_CASE_EVERY", "1") or 1)
    if case_every > 1:
        seen = {}
        for item in items:
            if item.nodeid.startswith("tests/test_ops.py::") or not getattr(item, "callspec", None):
                continue
            key = (item.nodeid.split("::")[0], item.originalname)
            i = seen[key] = seen.get(key, -1) + 1
            if i % case_every:
                dropped.add(id(item))
    if dropped:
        config.hook.pytest_deselected(items=[item for item in items if id(item) in dropped])
        items[:] = [item for item in items if id(item) not in dropped]
