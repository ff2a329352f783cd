"""tflite_gpu.interpreters: the one interpreter factory (CPU or through the
delegate, either runtime) and the one way to run a model with inputs."""
import os

import numpy as np
import pytest

import tflite_gpu
from conftest import assert_close, test_options
from test_bench import _conv_model
from tflite_gpu import _capi, interpreters


def test_model_source(tmp_path):
    model = _conv_model()
    assert interpreters.model_source(model) == {"model_content": model}
    assert interpreters.model_source({"model_path": "x"}) == {"model_path": "x"}
    plain = tmp_path / "m.tflite"
    assert interpreters.model_source(plain) == {"model_path": str(plain)}
    odd = tmp_path / os.fsdecode(b"m\xff.tflite")
    odd.write_bytes(model)
    assert interpreters.model_source(odd) == {"model_content": model}


def test_cpu_kinds_and_delegate_agree():
    model = _conv_model()
    it = interpreters.make(model, cpu="builtin")
    x = [np.random.default_rng(0).uniform(-1, 1, d["shape"]).astype(d["dtype"]) for d in it.get_input_details()]
    want = interpreters.run(it, x)
    assert_close(interpreters.run_model(model, x, threads=1)[0], want[0])
    d = tflite_gpu.load_delegate(**test_options())
    got = interpreters.run(interpreters.make(model, delegate=d), x)
    assert _capi.delegate_stats(d._get_native_delegate_pointer())["cpu_nodes"] == 0
    assert_close(got[0], want[0])


def test_unallocated_and_bad_kind():
    it = interpreters.make(_conv_model(), allocate=False)
    it.allocate_tensors()
    with pytest.raises(ValueError, match="unknown CPU kind"):
        interpreters.make(_conv_model(), cpu="gpu")
