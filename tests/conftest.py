"""Shared helpers: run a model on the stock CPU interpreter and through the
delegate, and compare outputs with stated tolerances."""
from __future__ import annotations

import dataclasses
import os
import pathlib
import sys

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

import tflite_gpu  # noqa: E402
from tflite_gpu import _capi, interpreters  # noqa: E402


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
    """The options every test's delegate gets: silent, and the kernel set
    named by $TFLITE_GPU_TEST_KERNEL_SET (auto, cpu, gpu) so the portability
    matrix runs the same tests with each family of kernels."""
    options.setdefault("log_level", "silent")
    kernel_set = os.environ.get("TFLITE_GPU_TEST_KERNEL_SET")
    if kernel_set:
        options.setdefault("kernel_set", kernel_set)
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
