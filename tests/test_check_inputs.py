"""The inputs check and bench feed a model (tflite_gpu/inputs.py): integer
ids drawn inside the table they index, traced through RESHAPE, SQUEEZE,
EXPAND_DIMS and CAST; the user's own arrays (--inputs FILE.npz, --input
NAME=FILE.npy) checked against each input's name, shape and dtype before
anything runs, exit 2 naming what does not fit."""
from __future__ import annotations

import numpy as np
import pytest

from cli_run import run_cli, strict_json, tiny_conv_model
from text_models import TIME, VOCAB, bert_block
from tflite_gpu import check, inputs
from tflite_gpu.model_builder import ModelBuilder


def _i32(mb, values):
    return mb.add_tensor([len(values)], np.int32, data=np.asarray(values, np.int32))


def _plan(data, user=None):
    return {p.name: p for p in inputs.plan(data, user)}


def _details(data):
    return [{"name": p.name, "shape": list(p.shape), "dtype": np.dtype(p.dtype), "quantization": (0.0, 0)}
            for p in inputs.plan(data)]


def test_bert_ids_traced_through_reshape_and_cast():
    for dtype in (np.int32, np.int64):
        data = bert_block(ids_dtype=dtype)
        p = _plan(data)
        ids = p["input_ids"]
        assert ids.how == "ids" and int(ids.high) == VOCAB and "GATHER" in ids.detail, ids
        assert p["attention_mask"].how == "uniform"
        for seed in range(5):
            x = inputs.make(inputs.plan(data), _details(data), seed)[0]
            assert x.dtype == dtype and x.min() >= 0 and x.max() < VOCAB
            assert len(np.unique(x)) > 1  # random, not one id


def test_gather_nd_embedding_lookup_one_hot_and_an_untraced_input():
    mb = ModelBuilder()
    params = mb.add_input([4, 9, 3])
    nd = mb.add_input([5, 2], np.int32, name="nd")
    lk = mb.add_input([6], np.int32, name="lookup")
    oh = mb.add_input([1, 3], np.int32, name="hot")
    other = mb.add_input([3], np.int32, name="other")
    y1 = mb.add_tensor([5, 3])
    mb.add_op("GATHER_ND", [params, nd], [y1])
    table = mb.add_tensor([11, 3], data=np.ones([11, 3], np.float32))
    y2 = mb.add_tensor([6, 3])
    mb.add_op("EMBEDDING_LOOKUP", [lk, table], [y2])
    sq = mb.add_tensor([3], np.int32)
    mb.add_op("SQUEEZE", [oh], [sq], dict(squeeze_dims=[0]))
    y3 = mb.add_tensor([3, 5])
    mb.add_op("ONE_HOT", [sq, mb.add_tensor([], np.int32, data=np.int32(5)), mb.add_tensor([], data=np.float32(1)),
                          mb.add_tensor([], data=np.float32(0))], [y3], dict(axis=-1))
    y4 = mb.add_tensor([3], np.int32)
    mb.add_op("ADD", [other, other], [y4])
    for y in (y1, y2, y3, y4):
        mb.mark_output(y)
    data = mb.build()
    p = _plan(data)
    assert p["nd"].how == "ids" and list(p["nd"].high) == [4, 9] * 5, p["nd"]
    assert p["lookup"].how == "ids" and int(p["lookup"].high) == 11
    assert p["hot"].how == "ids" and int(p["hot"].high) == 5
    assert p["other"].how == "untraced" and "GATHER" in p["other"].detail
    nd_ids = inputs.make(inputs.plan(data), _details(data), 3)[1]
    assert (nd_ids[:, 0] < 4).all() and (nd_ids[:, 1] < 9).all() and nd_ids[:, 1].max() >= 4


def test_check_passes_the_bert_block_without_user_data():
    for dtype in (np.int32, np.int64):
        r = check.check_model(_write(bert_block(ids_dtype=dtype), f"bert-{np.dtype(dtype).name}.tflite"))
        assert r.passed, r.to_dict()
        assert r.delegated_nodes > 0 and r.reference == "cpu"
        assert {p["name"]: p["how"] for p in r.inputs} == {"input_ids": "ids", "attention_mask": "uniform"}


_TMP = {}


def _write(data, name):
    path = _TMP["dir"] / name
    path.write_bytes(data)
    return path


@pytest.fixture(autouse=True)
def _tmp_dir(tmp_path):
    _TMP["dir"] = tmp_path


def test_check_takes_the_users_arrays(tmp_path):
    model = _write(bert_block(), "bert.tflite")
    ids = np.arange(TIME, dtype=np.int64).reshape(1, TIME) % VOCAB  # int64 into int32: values fit, said
    mask = np.ones([1, TIME], np.float64)  # float64 into float32
    np.savez(tmp_path / "in.npz", input_ids=ids, attention_mask=mask)
    p = run_cli("check", model, "--inputs", tmp_path / "in.npz", "--invokes", "2", "--json")
    assert p.returncode == 0, p.stderr
    (row,) = strict_json(p.stdout)
    got = {x["name"]: x for x in row["inputs"]}
    assert got["input_ids"]["how"] == "user" and "cast from int64" in got["input_ids"]["detail"], got
    assert got["attention_mask"]["how"] == "user" and "cast from float64" in got["attention_mask"]["detail"]
    np.save(tmp_path / "mask.npy", np.zeros([1, TIME], np.float32))
    p = run_cli("check", model, "--input", f"attention_mask={tmp_path / 'mask.npy'}", "--invokes", "1")
    assert p.returncode == 0, p.stdout + p.stderr
    assert "attention_mask" in p.stdout and "given (user)" in p.stdout and "generated (ids)" in p.stdout


@pytest.mark.parametrize("what", ["name", "shape", "dtype", "two models", "not numpy", "no equals"])
def test_check_refuses_inputs_that_do_not_fit(tmp_path, what):
    model = _write(bert_block(), "bert.tflite")
    good_ids = np.zeros([1, TIME], np.int32)
    arrays = {"name": {"token_ids": good_ids}, "shape": {"input_ids": np.zeros([1, TIME + 1], np.int32)},
              "dtype": {"input_ids": np.zeros([1, TIME], np.float32)}}.get(what, {"input_ids": good_ids})
    np.savez(tmp_path / "in.npz", **arrays)
    args = [model, "--inputs", tmp_path / "in.npz"]
    if what == "two models":
        args = [model, tiny_conv_model(tmp_path / "conv.tflite"), "--inputs", tmp_path / "in.npz"]
    if what == "not numpy":
        (tmp_path / "bad.npy").write_bytes(b"not an array")
        args = [model, "--input", f"input_ids={tmp_path / 'bad.npy'}"]
    if what == "no equals":
        args = [model, "--input", "input_ids"]
    for command in ("check", "bench"):
        extra = ["--quick", "--configs", "xnnpack"] if command == "bench" else []
        p = run_cli(command, *args, *extra)
        assert p.returncode == 2, (command, p.stdout, p.stderr)
        expect = {"name": "'token_ids' is not an input", "shape": "has shape [1, 8]", "dtype": "float32",
                  "two models": "2 models given", "not numpy": "not a numpy", "no equals": "NAME=FILE.npy"}[what]
        assert expect in p.stderr, (command, p.stderr)
        if what == "name":
            assert "'input_ids'" in p.stderr and "'attention_mask'" in p.stderr  # the inputs it has


def test_bench_reports_how_inputs_were_made(tmp_path):
    model = _write(bert_block(), "bert.tflite")
    np.save(tmp_path / "ids.npy", np.ones([1, TIME], np.int32))
    p = run_cli("bench", model, "--quick", "--configs", "xnnpack,fp32", "--no-progress",
                "--input", f"input_ids={tmp_path / 'ids.npy'}", "--json", "-")
    assert p.returncode == 0, p.stderr
    (m,) = strict_json(p.stdout)["models"]
    assert {x["name"]: x["how"] for x in m["inputs"]} == {"input_ids": "user", "attention_mask": "uniform"}


def test_nonfinite_values_may_match_either_cpu_kernel():
    """Where the builtin kernels saturate (+-3.4e38) and XNNPACK gives NaN,
    a delegate with XNNPACK's NaNs in every place passes, on the finite
    elements as usual; one NaN elsewhere still fails."""
    det = {"name": "y", "dtype": np.float32, "index": 0}
    rng = np.random.default_rng(5)
    builtin = rng.standard_normal(17).astype(np.float32)
    xnnpack = builtin.copy()
    builtin[[2, 9]] = np.float32(3.4e38)
    xnnpack[[2, 9]] = np.nan
    delegate = xnnpack + np.float32(1e-7) * rng.standard_normal(17).astype(np.float32)
    args = (det, delegate, builtin, 1e-4, 0.0, {})
    assert not check._compare(*args).passed  # against the builtin kernels alone
    o = check._compare(*args, other=xnnpack)
    assert o.passed and o.nonfinite_matched == "xnnpack" and o.nonfinite == 2, o
    wrong = delegate.copy()
    wrong[4] = np.nan
    o = check._compare(det, wrong, builtin, 1e-4, 0.0, {}, other=xnnpack)
    assert not o.passed and o.nonfinite_mismatch > 0
    same = check._compare(det, xnnpack, xnnpack, 1e-4, 0.0, {}, other=builtin)
    assert same.passed and same.nonfinite_matched == "reference"
    far = delegate.copy()
    far[0] += 1.0  # a finite element off: fails whatever the NaNs match
    assert not check._compare(det, far, builtin, 1e-4, 0.0, {}, other=xnnpack).passed
