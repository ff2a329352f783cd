"""Malformed sparse weights never crash the delegate (issue 13).

A DENSIFY node's sparse constant (SparsityParameters.dim_metadata's CSR
segment and index arrays) is validated when the delegate chooses nodes: a
malformed one stays on the CPU with the reason, and the partition build can
never fail on it (a failed build made the runtime's fallback run DENSIFY's
Prepare again, which crashed).

Each run happens in a child process (tests/support/sparse_child.py) so a
crash is seen as a crash. The CPU's own DENSIFY kernel does not validate:
on a malformed encoding it may read or write out of bounds, so its result,
and whether it crashes, depend on the process's memory layout (a process
with the delegate loaded has another heap than one without, so "the CPU
alone crashes too" is no test). Outputs are therefore compared with the CPU
only where the encoding is well formed (the delegate folds the DENSIFY), or
where the corruption keeps the CPU kernel in bounds; a delegated run may die
only in its invoke, after the delegate left a malformed DENSIFY on the CPU.

TFLITE_GPU_SPARSE_SEEDS=N runs N random mutations of the MediaPipe model
(default 16, about a minute; a long run: TFLITE_GPU_SPARSE_SEEDS=300 took 20
minutes on two busy cores, all passing)."""
from __future__ import annotations

import json
import os
import pathlib
import random
import subprocess
import sys

import numpy as np
import pytest
import tflite

import tflite_gpu
from tflite_gpu import models
from tflite_gpu.model_builder import ModelBuilder

ROOT = pathlib.Path(__file__).resolve().parent.parent
CHILD = ROOT / "tests" / "support" / "sparse_child.py"
SPARSE_MODEL = "face_detection_full_range_sparse"
SEEDS = int(os.environ.get("TFLITE_GPU_SPARSE_SEEDS", "16"))

# SparseIndexVector union tag -> (table class, element size).
_INDEX_VECTORS = {1: (tflite.Int32Vector, 4), 2: (tflite.Uint16Vector, 2), 3: (tflite.Uint8Vector, 1)}


def sparse_arrays(model):
    """Every CSR array of every sparse tensor: dicts with the tensor index,
    level, kind ('segments'/'indices'), byte offset in the file, element
    size and element count."""
    m = tflite.Model.GetRootAsModel(model, 0)
    found = []
    for s in range(m.SubgraphsLength()):
        g = m.Subgraphs(s)
        for i in range(g.TensorsLength()):
            sp = g.Tensors(i).Sparsity()
            if sp is None:
                continue
            for level in range(sp.DimMetadataLength()):
                dm = sp.DimMetadata(level)
                for kind, tag, table in (("segments", dm.ArraySegmentsType(), dm.ArraySegments()),
                                         ("indices", dm.ArrayIndicesType(), dm.ArrayIndices())):
                    if table is None or tag not in _INDEX_VECTORS:
                        continue
                    cls, size = _INDEX_VECTORS[tag]
                    vec = cls()
                    vec.Init(table.Bytes, table.Pos)
                    field = vec._tab.Offset(4)  # Values
                    if not field:
                        continue
                    found.append(dict(tensor=i, level=level, kind=kind, start=vec._tab.Vector(field), size=size,
                                      count=vec._tab.VectorLen(field)))
    return found


def _run(mode, model, tmp_path, tag):
    path = tmp_path / f"{tag}.tflite"
    path.write_bytes(model)
    out = tmp_path / f"{tag}-{mode}.npz"
    env = dict(os.environ, TFLITE_GPU_LIBRARY=tflite_gpu.library_path())  # the parent's library
    p = subprocess.run([sys.executable, str(CHILD), mode, str(path), str(out)], capture_output=True, text=True,
                       timeout=300, env=env)
    stages = [json.loads(line) for line in p.stdout.splitlines() if line.startswith("{")]
    report = stages[0] if stages and stages[0]["stage"] == "prepared" else None
    if p.returncode == 0:
        assert [s["stage"] for s in stages] == ["prepared", "done"], p.stdout
    outputs = [np.load(out)[k] for k in sorted(np.load(out).files)] if p.returncode == 0 else None
    return p.returncode, report, outputs, p.stderr[-2000:]


def _died_in_a_refused_densify(rc, report, err):
    """A delegated child that died (rc != 0) did so in its invoke, after the
    delegate had left a malformed DENSIFY on the CPU: the stock kernel's
    out-of-bounds access, not the delegate's. Anything else fails."""
    assert report is not None, f"the delegated run died (rc {rc}) before its tensors were allocated:\n{err}"
    refused = [n for n in report["densify"] if n["where"] == "cpu" and "is malformed" in n["reason"]]
    assert refused, f"the delegated run died (rc {rc}) with no malformed DENSIFY left on the CPU:\n{report}\n{err}"


def _assert_same(got, want, what):
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.shape == w.shape, what
        np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-4, err_msg=what)


# ---- a small model: DENSIFY -> CONV_2D, the MediaPipe layout ---------------

def _small_model(index_type="uint8"):
    rng = np.random.default_rng(7)
    w = rng.standard_normal([6, 1, 1, 12]).astype(np.float32)
    w[rng.random(w.shape) < 0.6] = 0
    mb = ModelBuilder()
    x = mb.add_input([1, 5, 4, 12])
    ws = mb.add_sparse_tensor(w, name="sparse_w", index_type=index_type)
    wd = mb.add_tensor([6, 1, 1, 12])
    mb.add_op("DENSIFY", [ws], [wd])
    b = mb.add_tensor([6], data=rng.standard_normal(6).astype(np.float32))
    out = mb.add_tensor([1, 5, 4, 6])
    mb.add_op("CONV_2D", [x, wd, b], [out], dict(padding="SAME", stride_w=1, stride_h=1, fused_activation="NONE"))
    mb.mark_output(out)
    return mb.build()


def _patch(model, array, pos, value):
    """Element pos of a CSR array set to value (little endian)."""
    b = bytearray(model)
    at = array["start"] + pos * array["size"]
    b[at:at + array["size"]] = int(value).to_bytes(array["size"], "little", signed=False)
    return bytes(b)


def _element(model, array, pos):
    at = array["start"] + pos * array["size"]
    return int.from_bytes(model[at:at + array["size"]], "little")


def test_sparse_arrays_found_in_small_model():
    model = _small_model()
    arrays = {a["kind"]: a for a in sparse_arrays(model)}
    assert set(arrays) == {"segments", "indices"}
    assert arrays["segments"]["count"] == 6 + 1  # 6 rows of 1x1: one segment each
    assert _element(model, arrays["segments"], 0) == 0


def test_well_formed_sparse_weights_are_folded(tmp_path):
    model = _small_model()
    rc_c, _, want, err_c = _run("cpu", model, tmp_path, "ok")
    rc_d, rep, got, err_d = _run("gpu", model, tmp_path, "ok")
    assert rc_c == 0 and rc_d == 0, (err_c, err_d)
    assert rep["densify"][0]["where"] == "gpu", rep  # folded into the partition
    _assert_same(got, want, "well-formed")


def _in_bounds_corruptions(model):
    """Corruptions the CPU's DENSIFY kernel survives without touching memory
    out of bounds (its output stays inside the dense tensor), so the CPU's
    result is well defined and the delegated run must give exactly it."""
    arrays = {a["kind"]: a for a in sparse_arrays(model)}
    seg, idx = arrays["segments"], arrays["indices"]
    segs = [_element(model, seg, i) for i in range(seg["count"])]
    row = next(r for r in range(len(segs) - 2) if segs[r + 1] - segs[r] >= 2)  # not the last row; 2+ entries
    a, b = segs[row], segs[row] + 1
    swapped = _patch(_patch(model, idx, a, _element(model, idx, b)), idx, b, _element(model, idx, a))
    repeated = _patch(model, idx, b, _element(model, idx, a))
    # Index 12 on a row before the last: the CPU writes into the next row.
    past_row = _patch(model, idx, segs[row + 1] - 1, 12)
    return {"indices not increasing": (swapped, "not increasing"),
            "index repeated": (repeated, "not increasing"),
            "index past the row": (past_row, "out of range")}


@pytest.mark.parametrize("case", ["indices not increasing", "index repeated", "index past the row"])
def test_malformed_sparse_weights_stay_on_cpu_with_reason(case, tmp_path):
    model, words = _in_bounds_corruptions(_small_model())[case]
    rc_c, _, want, err_c = _run("cpu", model, tmp_path, "bad")
    rc_d, rep, got, err_d = _run("gpu", model, tmp_path, "bad")
    assert rc_c == 0, err_c
    assert rc_d == 0, err_d
    (dn,) = rep["densify"]
    assert dn["where"] == "cpu", rep
    assert "sparse constant sparse_w is malformed" in dn["reason"] and words in dn["reason"], dn
    _assert_same(got, want, case)


@pytest.mark.parametrize("case", ["segment decreases", "segments past the end", "index huge"])
def test_out_of_bounds_sparse_weights_never_reach_the_build(case, tmp_path):
    """Corruptions that send the CPU kernel out of bounds: the delegate must
    refuse the DENSIFY at node selection; whatever the CPU kernel then does
    is the stock runtime's (outputs are not compared)."""
    model = _small_model()
    arrays = {a["kind"]: a for a in sparse_arrays(model)}
    seg, idx = arrays["segments"], arrays["indices"]
    if case == "segment decreases":
        model = _patch(model, seg, 2, 0)
    elif case == "segments past the end":
        model = _patch(model, seg, seg["count"] - 1, 255)
    else:
        model = _patch(model, idx, 0, 250)
    rc_d, rep, _, err_d = _run("gpu", model, tmp_path, "oob")
    assert rep is not None, f"the delegated run died (rc {rc_d}) before its tensors were allocated:\n{err_d}"
    (dn,) = rep["densify"]
    assert dn["where"] == "cpu" and "is malformed (densify:" in dn["reason"], dn
    assert "Init" not in err_d  # no partition build failed


# ---- the MediaPipe model's sparse arrays, mutated ---------------------------

@pytest.fixture(scope="module")
def sparse_model():
    return models.model_path(SPARSE_MODEL).read_bytes()


def _mutate(model, arrays, seed):
    """1-3 random bytes inside one CSR array of one sparse weight."""
    r = random.Random(seed)
    a = r.choice(arrays)
    b = bytearray(model)
    for _ in range(r.randint(1, 3)):
        b[a["start"] + r.randrange(a["count"] * a["size"])] = r.randrange(256)
    return bytes(b), a


@pytest.mark.parametrize("seed", range(SEEDS))
def test_mutated_mediapipe_sparse_weights(seed, sparse_model, tmp_path):
    arrays = sparse_arrays(sparse_model)
    assert len(arrays) == 92  # 46 sparse conv weights, CSR on the last level
    model, a = _mutate(sparse_model, arrays, seed)
    what = f"seed {seed}: tensor {a['tensor']} {a['kind']}"
    rc_c, _, want, err_c = _run("cpu", model, tmp_path, f"m{seed}")
    rc_d, rep, got, err_d = _run("gpu", model, tmp_path, f"m{seed}")
    assert "AddressSanitizer" not in err_d and "runtime error:" not in err_d, f"{what}:\n{err_d}"
    if rc_d != 0:
        _died_in_a_refused_densify(rc_d, rep, f"{what}:\n{err_d}")
        return
    if rc_c != 0:
        # The stock DENSIFY kernel crashed on its own: the delegated run
        # survived it, but the delegate must not have taken it.
        assert all(n["where"] == "cpu" for n in rep["densify"] if "is malformed" in n["reason"]), what
        return
    assert "Init" not in err_d, f"{what}: a partition build failed:\n{err_d}"
    bad = [n for n in rep["densify"] if "is malformed" in n["reason"]]
    assert all(n["where"] == "cpu" for n in bad), (what, bad)
    # Only the mutated weight can be refused, and it names the tensor.
    name = tflite.Model.GetRootAsModel(model, 0).Subgraphs(0).Tensors(a["tensor"]).Name().decode()
    assert all(f"sparse constant {name} is malformed (densify:" in n["reason"] for n in bad), (what, bad)
    if not bad:
        # Still well formed (a value changed within its order): the delegate
        # folds it and must agree with the CPU.
        _assert_same(got, want, what)


def test_sparse_weights_read_directly_are_checked_too():
    """FULLY_CONNECTED may read sparse weights without a DENSIFY: the
    delegate densifies them when lowering, so its check validates them."""
    rng = np.random.default_rng(11)
    w = rng.standard_normal([6, 12]).astype(np.float32)
    w[rng.random(w.shape) < 0.6] = 0
    mb = ModelBuilder()
    x = mb.add_input([1, 12])
    ws = mb.add_sparse_tensor(w, name="fc_w", index_type="uint8")
    out = mb.add_tensor([1, 6])
    mb.add_op("FULLY_CONNECTED", [x, ws, -1], [out], dict(fused_activation="NONE"))
    mb.mark_output(out)
    model = mb.build()
    idx = next(a for a in sparse_arrays(model) if a["kind"] == "indices")
    bad = _patch(model, idx, 0, 200)
    mod = tflite_gpu.runtime()
    for m, where in ((model, "gpu"), (bad, "cpu")):
        delegate = tflite_gpu.load_delegate(log_level="silent")
        mod.Interpreter(model_content=m, experimental_delegates=[delegate])  # node choice only: no invoke
        (node,) = _capi_nodes(delegate)
        assert node["where"] == where, node
    assert "constant input 1 (fc_w) has malformed sparsity metadata: densify: level 1 index 200 out of range" \
        in node["reason"], node


def _capi_nodes(delegate):
    from tflite_gpu import _capi
    return _capi.delegate_nodes(delegate._get_native_delegate_pointer())
