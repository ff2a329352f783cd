"""The kernel cache (serialization_dir + model_token): a second start loads
what the first compiled; any change of model, option or file is a miss that
rebuilds with correct outputs; files are safe against corruption, concurrent
writers, hostile tokens and permissive directories."""
import json
import os
import re
import stat
import subprocess
import sys

import numpy as np
import pytest

import tflite_gpu
from conftest import ROOT, assert_close, run_cpu
from tflite_gpu import _capi, interpreters
from tflite_gpu.model_builder import ModelBuilder

SHAPE = [2, 5, 7, 3]  # batch > 1, odd sizes, 3 channels


def _model(seed=0, ops=("ADD", "LOGISTIC", "MUL")):
    """x (+) constant -> unary -> (*) x, by default ADD, LOGISTIC, MUL: two
    programs (elementwise, layout)."""
    rng = np.random.default_rng(seed)
    mb = ModelBuilder()
    x = mb.add_input(SHAPE)
    c = mb.add_tensor([3], data=rng.uniform(-1, 1, [3]).astype(np.float32))
    a = mb.add_tensor(SHAPE)
    mb.add_op(ops[0], [x, c], [a], dict(fused_activation="NONE"))
    s = mb.add_tensor(SHAPE)
    mb.add_op(ops[1], [a], [s])
    y = mb.add_tensor(SHAPE)
    mb.add_op(ops[2], [s, x], [y], dict(fused_activation="NONE"))
    mb.mark_output(y)
    return mb.build()


MODEL_A = _model(0)
MODEL_B = _model(1)  # same graph, other constant: another partition fingerprint
INPUTS = [np.random.default_rng(42).uniform(-2, 2, SHAPE).astype(np.float32)]


def _run(model, cache_dir, token="tok", **options):
    """Outputs and cache counters of one fresh delegate."""
    opts = {"log_level": "warning", **options}
    if cache_dir is not None:
        opts.update(serialization_dir=str(cache_dir), model_token=token)
    d = tflite_gpu.load_delegate(**opts)
    it = interpreters.make(model, delegate=d)
    out = interpreters.run(it, INPUTS)[0]
    st = _capi.delegate_stats(d._get_native_delegate_pointer())
    assert st["cpu_nodes"] == 0
    del it, d
    return out, {k[6:]: st[k] for k in ("cache_hits", "cache_misses", "cache_writes", "cache_rejected")}


_EXPECTED = {}


def _check(model, out, fp16=False):
    key = id(model)
    if key not in _EXPECTED:
        _EXPECTED[key] = run_cpu(model, INPUTS)[0]
    tol = 1e-2 if fp16 else 1e-5  # elementwise only: FP32 differs by rounding alone
    assert_close(out, _EXPECTED[key], rtol_l2=tol, atol=tol)


def _cache_dir(tmp_path, name="cache", mode=0o700):
    d = tmp_path / name
    d.mkdir()
    d.chmod(mode)
    return d


def _files(d):
    return sorted(p.name for p in d.iterdir())


def _warnings(err):
    """The delegate's warning lines (the runtime's own INFO lines aside)."""
    return [ln for ln in err.splitlines() if ln.strip() and not ln.startswith("INFO:")]


def test_second_start_hits(tmp_path, capfd):
    d = _cache_dir(tmp_path)
    out, c = _run(MODEL_A, d)
    _check(MODEL_A, out)
    assert c == {"hits": 0, "misses": 1, "writes": 1, "rejected": 0}
    files = _files(d)
    assert len(files) == 1 and files[0].startswith("tflite_gpu_") and files[0].endswith(".bin"), files
    assert stat.S_IMODE((d / files[0]).stat().st_mode) == 0o600
    out, c = _run(MODEL_A, d)
    _check(MODEL_A, out)
    assert c == {"hits": 1, "misses": 0, "writes": 0, "rejected": 0}
    assert _files(d) == files  # nothing rewritten, no temp files left
    assert _warnings(capfd.readouterr().err) == []


def test_changed_model_or_option_is_a_miss(tmp_path):
    d = _cache_dir(tmp_path)
    _run(MODEL_A, d)
    # The same token for another model: a miss that overwrites, never a wrong load.
    out, c = _run(MODEL_B, d)
    _check(MODEL_B, out)
    assert c["hits"] == 0 and c["misses"] == 1 and c["writes"] == 1
    assert len(_files(d)) == 1
    out, c = _run(MODEL_A, d)
    _check(MODEL_A, out)
    assert c["hits"] == 0 and c["writes"] == 1
    # Another precision compiles other programs: a miss (its own file).
    out, c = _run(MODEL_A, d, is_precision_loss_allowed="1")
    _check(MODEL_A, out, fp16=True)
    assert c["hits"] == 0 and c["misses"] == 1 and c["writes"] == 1
    assert len(_files(d)) == 2
    out, c = _run(MODEL_A, d)
    assert c["hits"] == 1
    out, c = _run(MODEL_A, d, is_precision_loss_allowed="1")
    _check(MODEL_A, out, fp16=True)
    assert c["hits"] == 1
    # Another token: its own file, a miss.
    out, c = _run(MODEL_A, d, token="other")
    assert c["hits"] == 0 and c["writes"] == 1
    assert len(_files(d)) == 3


def _corruptions(data):
    n = len(data)
    flips = sorted({0, 5, 8, 12, 16, 20, 24, 31, 32, 35, 40, 60, 100, n // 4, n // 2, 3 * n // 4, n - 2, n - 1})
    for off in flips:
        b = bytearray(data)
        b[off] ^= 0x5A
        yield f"flip@{off}", bytes(b)
    for size in sorted({0, 1, 8, 31, 32, 36, 100, n // 2, n - 1}):
        yield f"truncate@{size}", data[:size]
    yield "appended", data + b"\0" * 7
    yield "foreign", b"GGUF" + bytes(range(256)) * 4
    future = bytearray(data)
    future[8] += 1  # format version + 1
    yield "future", bytes(future)


def test_corrupt_files_rebuild_with_one_warning(tmp_path, capfd):
    d = _cache_dir(tmp_path)
    _run(MODEL_A, d)
    (path,) = d.iterdir()
    good = path.read_bytes()
    capfd.readouterr()
    for name, data in _corruptions(good):
        path.write_bytes(data)
        out, c = _run(MODEL_A, d)
        _check(MODEL_A, out)
        warns = _warnings(capfd.readouterr().err)
        assert len(warns) == 1 and "kernel cache" in warns[0], (name, warns)
        assert c == {"hits": 0, "misses": 1, "writes": 1, "rejected": 1}, (name, c)
        assert path.read_bytes() != data  # rewritten ...
        out, c = _run(MODEL_A, d)  # ... and valid again
        assert c["hits"] == 1, name
    assert _warnings(capfd.readouterr().err) == []


_WRITER = """
import json, sys
import numpy as np
sys.path.insert(0, sys.argv[1])
import tflite_gpu
from tflite_gpu import _capi
model = open(sys.argv[2], "rb").read()
x = np.load(sys.argv[3])
d = tflite_gpu.load_delegate(serialization_dir=sys.argv[4], model_token="shared", log_level="warning")
it = tflite_gpu.Interpreter(model_content=model, experimental_delegates=[d])
it.allocate_tensors()
it.set_tensor(it.get_input_details()[0]["index"], x)
it.invoke()
np.save(sys.argv[5], it.get_tensor(it.get_output_details()[0]["index"]))
print(json.dumps(_capi.delegate_stats(d._get_native_delegate_pointer())))
"""


def _child(tmp_path, script_text):
    """A child process's command line (script, python dir, model, input,
    cache dir) and environment, for MODEL_A on INPUTS, with a cache dir."""
    d = _cache_dir(tmp_path)
    model = tmp_path / "m.tflite"
    model.write_bytes(MODEL_A)
    np.save(tmp_path / "x.npy", INPUTS[0])
    script = tmp_path / "child.py"
    script.write_text(script_text)
    env = dict(os.environ, PYTHONPATH=str(ROOT / "python"), TFLITE_GPU_LIBRARY=str(tflite_gpu.library_path()))
    return d, [sys.executable, str(script), str(ROOT / "python"), str(model), str(tmp_path / "x.npy"), str(d)], env


def test_concurrent_writers(tmp_path):
    d, cmd, env = _child(tmp_path, _WRITER)
    procs = [subprocess.Popen(cmd + [str(tmp_path / f"out{i}.npy")], env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for i in range(4)]
    for i, p in enumerate(procs):
        out, err = p.communicate(timeout=600)
        assert p.returncode == 0, err[-2000:]
        assert _warnings(err) == [], err
        st = json.loads(out.strip().splitlines()[-1])
        assert st["cache_hits"] + st["cache_misses"] == 1
        _check(MODEL_A, np.load(tmp_path / f"out{i}.npy"))
    files = _files(d)
    assert len(files) == 1 and not files[0].endswith(".tmp"), files
    out, c = _run(MODEL_A, d, token="shared")
    _check(MODEL_A, out)
    assert c["hits"] == 1 and c["rejected"] == 0


_EXIT_AFTER_FIRST = """
import ctypes, sys
import numpy as np
sys.path.insert(0, sys.argv[1])
import tflite_gpu
model = open(sys.argv[2], "rb").read()
d = tflite_gpu.load_delegate(serialization_dir=sys.argv[4], model_token="exit", log_level="warning")
it = tflite_gpu.Interpreter(model_content=model, experimental_delegates=[d])
it.allocate_tensors()
it.set_tensor(it.get_input_details()[0]["index"], np.load(sys.argv[3]))
it.invoke()
outs = [it.get_tensor(it.get_output_details()[0]["index"])]
for _ in range(int(sys.argv[5])):  # invokes while the file is being written
    it.invoke()
    outs.append(it.get_tensor(it.get_output_details()[0]["index"]))
np.save(sys.argv[6], np.stack(outs))
sys.stdout.flush()
ctypes.CDLL(None).exit(0)  # C exit(): the delegate is never deleted, only atexit handlers run
"""


@pytest.mark.parametrize("more_invokes", [0, 5])
def test_write_off_the_first_invoke(tmp_path, more_invokes):
    """The file is written on a thread of its own after the first invoke.
    Invokes that follow while it is written give the same outputs, and a
    process that ends right away (C exit, no delegate teardown) still
    leaves a complete file: exit waits for the writer."""
    d, cmd, env = _child(tmp_path, _EXIT_AFTER_FIRST)
    env.pop("TFLITE_GPU_CACHE_ASYNC", None)
    p = subprocess.run(cmd + [str(more_invokes), str(tmp_path / "outs.npy")], env=env, capture_output=True, text=True,
                       timeout=600)
    assert p.returncode == 0, p.stderr[-2000:]
    assert _warnings(p.stderr) == [], p.stderr
    outs = np.load(tmp_path / "outs.npy")
    assert len(outs) == more_invokes + 1
    for out in outs:
        _check(MODEL_A, out)
    files = _files(d)
    assert len(files) == 1 and files[0].endswith(".bin"), files
    out, c = _run(MODEL_A, d, token="exit")
    _check(MODEL_A, out)
    assert c == {"hits": 1, "misses": 0, "writes": 0, "rejected": 0}


@pytest.mark.parametrize("token", ["../../escape/x", "/etc/passwd", "..", "a/../../b", "x\ny"])
def test_token_cannot_escape_the_directory(tmp_path, token):
    base = tmp_path / "base"
    base.mkdir()
    d = _cache_dir(base, "a")
    out, c = _run(MODEL_A, d, token=token)
    _check(MODEL_A, out)
    assert c["writes"] == 1
    everything = sorted(str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*"))
    assert everything == ["base", "base/a", f"base/a/{_files(d)[0]}"], everything
    assert _run(MODEL_A, d, token=token)[1]["hits"] == 1


def test_world_writable_directory_is_refused(tmp_path, capfd):
    d = _cache_dir(tmp_path, mode=0o777)
    out, c = _run(MODEL_A, d)
    _check(MODEL_A, out)
    warns = _warnings(capfd.readouterr().err)
    assert len(warns) == 1 and "writable by other users" in warns[0], warns
    assert c == {"hits": 0, "misses": 0, "writes": 0, "rejected": 0}
    assert _files(d) == []
    d.chmod(0o770)  # group-writable: refused too
    _run(MODEL_A, d)
    assert _files(d) == []
    d.chmod(0o1777)  # sticky, as /tmp: others cannot replace our files
    assert _run(MODEL_A, d)[1]["writes"] == 1


def test_missing_directory_warns_and_runs(tmp_path, capfd):
    out, c = _run(MODEL_A, tmp_path / "does-not-exist")
    _check(MODEL_A, out)
    warns = _warnings(capfd.readouterr().err)
    assert len(warns) == 1 and "does-not-exist" in warns[0], warns
    assert c["writes"] == 0 and not (tmp_path / "does-not-exist").exists()


@pytest.mark.skipif(os.geteuid() == 0, reason="root can write to any directory")
def test_unwritable_directory_warns_and_runs(tmp_path, capfd):
    d = _cache_dir(tmp_path, mode=0o500)
    out, c = _run(MODEL_A, d)
    _check(MODEL_A, out)
    assert len(_warnings(capfd.readouterr().err)) == 1 and c["writes"] == 0


def test_files_are_0600_whatever_the_umask(tmp_path):
    d = _cache_dir(tmp_path)
    old = os.umask(0)
    try:
        _run(MODEL_A, d)
    finally:
        os.umask(old)
    (path,) = d.iterdir()
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


def test_upstream_option_names_and_flag(tmp_path, capfd):
    d = _cache_dir(tmp_path)
    opts = {"delegate_serialize_dir": str(d), "delegate_serialize_token": "up"}
    assert _run(MODEL_A, None, **opts)[1]["writes"] == 1
    assert _run(MODEL_A, None, **opts)[1]["hits"] == 1
    # The flag alone (C API style) without a directory and token: one warning, no cache.
    capfd.readouterr()
    out, c = _run(MODEL_A, None, experimental_flags="ENABLE_QUANT|ENABLE_SERIALIZATION")
    _check(MODEL_A, out)
    warns = _warnings(capfd.readouterr().err)
    assert len(warns) == 1 and "serialization_dir" in warns[0], warns
    # A directory alone does not turn it on.
    e = _cache_dir(tmp_path, "alone")
    _run(MODEL_A, None, serialization_dir=str(e))
    assert _files(e) == []


def test_model_token(tmp_path):
    p = tmp_path / "a.tflite"
    p.write_bytes(MODEL_A)
    t = tflite_gpu.model_token(p)
    assert t == tflite_gpu.model_token(str(p)) == tflite_gpu.model_token(MODEL_A)
    assert t == tflite_gpu.model_token(bytearray(MODEL_A)) == tflite_gpu.model_token(memoryview(MODEL_A))
    assert t.startswith("tflite-") and len(t) == 7 + 32
    assert tflite_gpu.model_token(MODEL_B) != t
    flipped = bytearray(MODEL_A)
    flipped[len(flipped) // 2] ^= 1
    assert tflite_gpu.model_token(bytes(flipped)) != t
    with pytest.raises(TypeError):
        tflite_gpu.model_token(12)
    assert tflite_gpu.cache_options(tmp_path, MODEL_A) == {"serialization_dir": str(tmp_path), "model_token": t}


def test_check_cli_cache_dir(tmp_path):
    d = _cache_dir(tmp_path)
    model = tmp_path / "m.tflite"
    model.write_bytes(MODEL_A)
    env = dict(os.environ, PYTHONPATH=str(ROOT / "python"), TFLITE_GPU_LIBRARY=str(tflite_gpu.library_path()))
    cmd = [sys.executable, "-m", "tflite_gpu", "check", str(model), "--cache-dir", str(d), "--json"]
    runs = []
    for _ in range(2):
        r = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=600)
        assert r.returncode == 0, r.stderr[-2000:]
        runs.append(json.loads(r.stdout)[0])
    assert runs[0]["kernel_cache"]["writes"] == 1 and runs[0]["kernel_cache"]["hits"] == 0
    assert runs[1]["kernel_cache"]["hits"] == 1 and runs[1]["kernel_cache"]["writes"] == 0
    assert all(r["passed"] for r in runs)
    (name,) = _files(d)
    # One file per (token, partition, precision, kernel set, device).
    assert re.fullmatch(r"tflite_gpu_[0-9a-f]{16}_n0_fp32_cpu_[0-9a-f]{8}\.bin", name), name


class _CDelegate:
    """A delegate made through the C API (TfLiteGpuDelegateV2Create), as a C
    or C++ app would, handed to the Python interpreter by pointer."""

    def __init__(self, flags, cache_dir, token):
        lib, ffi = _capi.lib(), _capi.ffi
        opts = ffi.new("TfLiteGpuDelegateOptionsV2*", lib.TfLiteGpuDelegateOptionsV2Default())
        self._strings = [ffi.new("char[]", str(cache_dir).encode()), ffi.new("char[]", token.encode())]
        opts.experimental_flags = flags
        opts.serialization_dir, opts.model_token = self._strings
        self.ptr = lib.TfLiteGpuDelegateV2Create(opts)
        assert self.ptr != ffi.NULL

    def _get_native_delegate_pointer(self):
        return int(_capi.ffi.cast("uintptr_t", self.ptr))

    def delete(self):
        _capi.lib().TfLiteGpuDelegateV2Delete(self.ptr)


ENABLE_QUANT, ENABLE_SERIALIZATION = 1, 8


@pytest.mark.parametrize("flags,cached", [(ENABLE_QUANT | ENABLE_SERIALIZATION, True), (ENABLE_QUANT, False)])
def test_c_api_flag(tmp_path, flags, cached):
    """The C API needs the flag: directory and token alone do nothing there."""
    d = _cache_dir(tmp_path)
    counters = []
    for _ in range(2):
        cd = _CDelegate(flags, d, "c-api")
        it = tflite_gpu.Interpreter(model_content=MODEL_A, experimental_delegates=[cd])
        it.allocate_tensors()
        it.set_tensor(it.get_input_details()[0]["index"], INPUTS[0])
        it.invoke()
        _check(MODEL_A, it.get_tensor(it.get_output_details()[0]["index"]))
        counters.append(_capi.delegate_stats(cd._get_native_delegate_pointer()))
        del it
        cd.delete()
    if cached:
        assert counters[0]["cache_writes"] == 1 and counters[1]["cache_hits"] == 1
        assert len(_files(d)) == 1
    else:
        assert all(c["cache_writes"] == 0 and c["cache_hits"] == 0 for c in counters)
        assert _files(d) == []


def _reduction_model():
    """MEAN over a long row then FULLY_CONNECTED with K = 300: in the GPU set
    both run work-group kernels built with -DWG=..., so cached programs are
    keyed by (file, defines)."""
    rng = np.random.default_rng(7)
    mb = ModelBuilder()
    x = mb.add_input([2, 1, 300, 5])
    axis = mb.add_tensor([1], dtype=np.int32, data=np.array([2], np.int32))
    m = mb.add_tensor([2, 1, 5])
    mb.add_op("MEAN", [x, axis], [m], dict(keep_dims=False))
    r = mb.add_tensor([2, 5])
    mb.add_op("RESHAPE", [m], [r], dict(new_shape=[2, 5]))
    w = mb.add_tensor([300, 5], data=rng.standard_normal([300, 5]).astype(np.float32))
    y = mb.add_tensor([2, 300])
    mb.add_op("FULLY_CONNECTED", [r, w, -1], [y], dict(fused_activation="NONE"))
    mb.mark_output(y)
    return mb.build()


@pytest.mark.parametrize("kernel_set", ["cpu", "gpu"])
def test_kernel_sets_keep_their_own_files(tmp_path, kernel_set):
    """Each kernel set writes its own file; a second start of each hits and
    gives the same outputs, whatever the other set wrote in the directory."""
    model = _reduction_model()
    x = np.random.default_rng(3).standard_normal([2, 1, 300, 5]).astype(np.float32)
    d = _cache_dir(tmp_path)
    other = "gpu" if kernel_set == "cpu" else "cpu"
    outs = []
    for ks in (kernel_set, other, kernel_set):
        dl = tflite_gpu.load_delegate(serialization_dir=str(d), model_token="t", kernel_set=ks, log_level="warning")
        it = tflite_gpu.Interpreter(model_content=model, experimental_delegates=[dl])
        it.allocate_tensors()
        it.set_tensor(it.get_input_details()[0]["index"], x)
        it.invoke()
        outs.append(it.get_tensor(it.get_output_details()[0]["index"]).copy())
        st = _capi.delegate_stats(dl._get_native_delegate_pointer())
        assert st["cpu_nodes"] == 0
        del it, dl
    assert st["cache_hits"] == 1, st  # the third start found the first one's file intact
    assert len(_files(d)) == 2 and any("_gpu_" in f for f in _files(d)), _files(d)
    expected = run_cpu(model, [x])[0]
    for out in outs:
        assert_close(out, expected, rtol_l2=1e-5, atol=1e-4)


def test_vm_program_is_shared_by_every_model(tmp_path, capfd, monkeypatch):
    """execution=stepped|persistent runs a VM program holding the bodies its
    partition runs (vm.c). The first model's start writes it to a file of
    the device's; a second model whose bodies and math ops it holds
    (another token, another partition) compiles nothing; a model with another body compiles
    the union of both and replaces the device's program with it, which then
    runs the first model too, with nothing compiled (vm_defines.h)."""
    d = _cache_dir(tmp_path)
    monkeypatch.setenv("TFLITE_GPU_BUILD_LOG", "1")  # a line per program compiled from source
    builds = lambda: re.findall(r"tflite-gpu build (\S+)", capfd.readouterr().err)  # noqa: E731

    def run(model, token, execution, log_level="warning"):
        dlg = tflite_gpu.load_delegate(serialization_dir=str(d), model_token=token, execution=execution,
                                       log_level=log_level)
        it = interpreters.make(model, delegate=dlg)
        _check(model, interpreters.run(it, INPUTS)[0])
        st = _capi.delegate_stats(dlg._get_native_delegate_pointer())
        del it, dlg
        return st

    builds()
    st = run(MODEL_A, "first", "stepped")
    assert builds() == ["vm_program.cl"] and (st["cache_misses"], st["cache_writes"]) == (1, 2)
    assert len(_files(d)) == 2  # the partition's file and the device's VM file
    st = run(_model(7, ("MUL", "LOGISTIC", "ADD")), "second", "persistent")  # another graph, the same ops
    assert builds() == [], "the second model compiled a program from source"
    assert (st["cache_misses"], st["cache_writes"], st["cache_rejected"]) == (1, 1, 0)  # its own file only
    assert len(_files(d)) == 3
    st = run(MODEL_A, "first", "stepped")  # the first model again: its file and the device's, a hit
    assert builds() == [] and (st["cache_hits"], st["cache_misses"], st["cache_writes"]) == (1, 0, 0)
    st = run(_model(3, ("ADD", "L2_NORMALIZATION", "MUL")), "third", "persistent", "info")  # l2_norm's body too
    err = capfd.readouterr().err
    assert re.findall(r"tflite-gpu build (\S+)", err) == ["vm_program.cl"]
    assert (st["cache_misses"], st["cache_writes"]) == (1, 2)
    held = re.search(r"VM program holds (\d+) bodies, not all (\d+) of this partition's: building one with the (\d+)",
                     err)
    assert held, err[-3000:]
    n_old, n_mine, n_all = map(int, held.groups())
    assert n_mine > 0 and max(n_old, n_mine) < n_all <= n_old + n_mine, held.group(0)
    assert len(_files(d)) == 4, _files(d)  # the union replaced the device's VM file
    st = run(_model(3, ("ADD", "L2_NORMALIZATION", "MUL")), "third", "stepped")
    assert builds() == [] and (st["cache_hits"], st["cache_misses"], st["cache_writes"]) == (1, 0, 0)
    st = run(MODEL_A, "first", "persistent")  # the union holds the first model's bodies
    assert builds() == [] and (st["cache_hits"], st["cache_misses"], st["cache_writes"]) == (1, 0, 0)
    assert len(_files(d)) == 4
