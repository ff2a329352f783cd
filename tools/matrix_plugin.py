"""pytest plugin for tools/run_matrix.sh (load with `-p matrix_plugin` and
tools/ on PYTHONPATH). Inactive unless one of its options is given.

--matrix-select FILE   run only the tests whose node ids FILE lists (one a
                       line; lines starting with '#' are comments); ids it lists that do not exist
                       are an error, so a stale sample cannot pass by
                       running nothing.
--matrix-every N[:K]   run every Nth collected test, starting at the Kth
                       (deterministic: collection order).
--matrix-kernels FILE  record, per test, the OpenCL kernels its delegates
                       launched (JSON lines appended to FILE: nodeid,
                       kernels, seconds, outcome). Sets TFLITE_GPU_PROFILE=1: the library's
                       per-kernel profile is the record.
--matrix-markers       write "== matrix test: NODEID" to stderr (fd 2)
                       before each test, "== matrix result: NODEID OUTCOME"
                       and "== matrix done: NODEID" after,
                       so messages an OpenCL implementation prints (Oclgrind)
                       can be attributed to a test.
"""
from __future__ import annotations

import json
import os

import pytest


def pytest_addoption(parser):
    group = parser.getgroup("matrix", "portability matrix (tools/run_matrix.sh)")
    group.addoption("--matrix-select", metavar="FILE", help="run only the node ids listed in FILE")
    group.addoption("--matrix-every", metavar="N[:K]", help="run every Nth test, from the Kth (0-based)")
    group.addoption("--matrix-kernels", metavar="FILE", help="write the kernels each test launched (JSON lines)")
    group.addoption("--matrix-markers", action="store_true", help="mark each test's start and end on stderr")


def _read_ids(path):
    ids = []
    with open(path) as f:
        for line in f:
            line = line.strip()
            if line and not line.startswith("#"):
                ids.append(line)
    return ids


def pytest_configure(config):
    if config.getoption("--matrix-kernels"):
        # The library reads it when a delegate opens its device.
        os.environ["TFLITE_GPU_PROFILE"] = "1"
        config.pluginmanager.register(_KernelRecorder(config.getoption("--matrix-kernels")), "matrix-kernels")
    if config.getoption("--matrix-markers"):
        config.pluginmanager.register(_Markers(), "matrix-markers")


def pytest_collection_modifyitems(session, config, items):
    select = config.getoption("--matrix-select")
    every = config.getoption("--matrix-every")
    if not select and not every:
        return
    keep = list(items)
    if select:
        wanted = _read_ids(select)
        present = {item.nodeid for item in items}
        missing = [i for i in wanted if i not in present]
        if missing:
            raise pytest.UsageError(f"--matrix-select {select}: {len(missing)} id(s) not collected, e.g. {missing[0]}")
        wanted = set(wanted)
        keep = [item for item in keep if item.nodeid in wanted]
    if every:
        n, _, k = every.partition(":")
        n, k = int(n), int(k or 0)
        keep = [item for i, item in enumerate(keep) if i % n == k % n]
    deselected = [item for item in items if item not in set(keep)]
    if deselected:
        config.hook.pytest_deselected(items=deselected)
    items[:] = keep


class _Markers:
    @staticmethod
    def _say(text):
        os.write(2, f"\n== matrix {text}\n".encode())

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_setup(self, item):
        self._say(f"test: {item.nodeid}")

    def pytest_runtest_logreport(self, report):
        if report.when == "call" or (report.when == "setup" and report.outcome != "passed"):
            self._say(f"result: {report.nodeid} {report.outcome}")

    @pytest.hookimpl(trylast=True)
    def pytest_runtest_teardown(self, item):
        self._say(f"done: {item.nodeid}")


class _KernelRecorder:
    """Wraps tflite_gpu.load_delegate so that each delegate a test creates
    lives until the test's teardown; there its profile (kernel -> launches)
    is read and compared with the profile right after creation, so the
    kernels counted are the ones this test launched even if a device were
    shared between delegates."""

    def __init__(self, path):
        self.path = path
        self.out = open(path, "a")  # appended: a run resumed after a crash adds to it
        self.live = []  # (delegate, calls at creation)
        self.seconds = {}
        self.outcome = {}
        import tflite_gpu
        from tflite_gpu import _capi

        self._capi = _capi
        original = tflite_gpu.load_delegate

        def load_delegate(*args, **kwargs):
            delegate = original(*args, **kwargs)
            try:
                self.live.append((delegate, self._calls(delegate)))
            except Exception:  # noqa: BLE001 - a delegate without the profile API records nothing
                pass
            return delegate

        tflite_gpu.load_delegate = load_delegate

    def _calls(self, delegate):
        """{kernel: launches so far}; FP16-storage programs are other
        builds of the same source, so their kernels count as "NAME@FP16"."""
        ptr = delegate._get_native_delegate_pointer()
        rows = self._capi.delegate_profile(ptr)
        suffix = "@FP16" if "16" in self._capi.delegate_device(ptr).get("precision", "") else ""
        return {r["kernel"] + suffix: r["calls"] for r in rows}

    def pytest_runtest_logreport(self, report):
        if report.when == "call" or (report.when == "setup" and report.outcome != "passed"):
            self.seconds[report.nodeid] = self.seconds.get(report.nodeid, 0.0) + report.duration
            self.outcome[report.nodeid] = report.outcome

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_teardown(self, item):
        kernels = {}
        for delegate, before in self.live:
            try:
                after = self._calls(delegate)
            except Exception:  # noqa: BLE001
                continue
            for name, calls in after.items():
                if calls > before.get(name, 0):
                    kernels[name] = kernels.get(name, 0) + calls - before.get(name, 0)
        self.live.clear()
        yield
        record = {"nodeid": item.nodeid, "kernels": kernels,
                  "seconds": round(self.seconds.get(item.nodeid, 0.0), 4),
                  "outcome": self.outcome.get(item.nodeid, "?")}
        self.out.write(json.dumps(record) + "\n")
        self.out.flush()

    def pytest_unconfigure(self, config):
        self.out.close()
