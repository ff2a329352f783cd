"""The VM program holds the math of the unary and binary ops its phases
compute, and no other (GD_UN_OPS and GD_BIN_OPS, common.cl; encode.h
ex_math; vm.c): unary_math and binary with every op were a third of the
PTX of selfie_segmentation's program on NVIDIA's path
(tools/nvptx_build_time.py).

One model computes every float unary op and every binary op of two inputs,
as elementwise phases and as a conv's epilogue steps (EPI_UNARY, EPI_BINARY);
run as VM phases, stepped and persistent, its outputs are the CPU
interpreter's, and its program's masks are exactly its ops. An op a program
leaves out computes NaN, so a dispatch that does not declare its op fails
here (and in any op test run in a VM mode) as non-finite, never quietly.

Tolerance: test_ops's FP32 one (1e-4 relative L2 and of the output's
scale): both sides compute in float, the math functions within a few ulp,
over a sum of 30 terms of at most ~100."""
import re

import numpy as np
import pytest

import tflite_gpu
from cli_run import run_cli
from conftest import ROOT, assert_close, run_cpu
from tflite_gpu import _capi, interpreters
from tflite_gpu.model_builder import ModelBuilder

SHAPE = [1, 5, 7, 3]
# TFLite op -> its code in kernel_abi.h (UN_* / BIN_*); each reads input x,
# which is positive (LOG, SQRT, RSQRT, POW's base), or x and y.
UNARY = {"ABS": "ABS", "COS": "COS", "SIN": "SIN", "EXP": "EXP", "LOG": "LOG", "NEG": "NEG", "RSQRT": "RSQRT",
         "SQRT": "SQRT", "SQUARE": "SQUARE", "SIGN": "SIGN", "FLOOR": "FLOOR", "ELU": "ELU", "TANH": "TANH",
         "LOGISTIC": "LOGISTIC", "HARD_SWISH": "HARD_SWISH", "RELU": "RELU", "RELU6": "RELU6",
         "RELU_N1_TO_1": "RELU_N1_TO_1", "LEAKY_RELU": "LEAKY_RELU", "GELU": "GELU", "GELU~": "GELU_TANH"}
BINARY = {"ADD": "ADD", "SUB": "SUB", "MUL": "MUL", "DIV": "DIV", "MAXIMUM": "MAX", "MINIMUM": "MIN",
          "SQUARED_DIFFERENCE": "SQDIFF", "POW": "POW", "FLOOR_DIV": "FLOOR_DIV", "FLOOR_MOD": "FLOOR_MOD",
          "PRELU": "PRELU"}
# Comparisons and LOGICAL_AND give bools: one output of them all.
BOOLEAN = {"GREATER": "GREATER", "LESS": "LESS", "EQUAL": "EQUAL", "NOT_EQUAL": "NOT_EQUAL",
           "GREATER_EQUAL": "GREATER_EQUAL", "LESS_EQUAL": "LESS_EQUAL", "LOGICAL_AND": "LOGICAL_AND"}
# The conv's epilogue: ELU (an EPI_UNARY step), then POW by a constant (EPI_BINARY).
EPILOGUE = ({"ELU"}, {"POW"})


def _codes(prefix):
    """{NAME: value} of kernel_abi.h's enum whose first member is PREFIX..."""
    abi = (ROOT / "opencl_kernels" / "kernel_abi.h").read_text()
    body = re.search(rf"{prefix}[A-Z_0-9]+ = 0,[^}}]*", abi).group(0)
    names = [re.match(r"\s*(\w+)", item).group(1) for item in body.split(",") if item.strip()]
    return {name[len(prefix):]: i for i, name in enumerate(names)}


def _model():
    rng = np.random.default_rng(5)
    mb = ModelBuilder()
    x, y = mb.add_input(SHAPE), mb.add_input(SHAPE)
    terms = []

    def op(name, inputs, options=None, dtype=np.float32):
        out = mb.add_tensor(SHAPE, dtype=dtype)
        mb.add_op(name, inputs, [out], options)
        return out

    for name in UNARY:
        options = dict(alpha=0.2) if name == "LEAKY_RELU" else dict(approximate=name == "GELU~") if \
            name.startswith("GELU") else None
        terms.append(op(name.rstrip("~"), [x], options))
    terms += [op(name, [x, y]) for name in BINARY]
    c = SHAPE[3]
    w = mb.add_tensor([c, 3, 3, c], data=(rng.standard_normal([c, 3, 3, c]) * 0.3).astype(np.float32))
    b = mb.add_tensor([c], data=rng.standard_normal([c]).astype(np.float32))
    exponent = mb.add_tensor([1], data=np.array([2.0], np.float32))
    conv = op("CONV_2D", [x, w, b], dict(padding="SAME", stride_w=1, stride_h=1))
    terms.append(op("POW", [op("ELU", [conv]), exponent]))
    total = terms[0]
    for t in terms[1:]:
        total = op("ADD", [total, t])
    mb.mark_output(total)
    flags = [op(name, [x, y], dtype=np.bool_) for name in BOOLEAN if name != "LOGICAL_AND"]
    both = flags[0]
    for f in flags[1:]:
        both = op("LOGICAL_AND", [both, f], dtype=np.bool_)
    mb.mark_output(both)
    # Ties for the comparisons: y repeats x at a third of the values.
    xs = rng.uniform(0.5, 2.0, SHAPE).astype(np.float32)
    ys = np.where(rng.random(SHAPE) < 0.3, xs, rng.uniform(0.5, 2.0, SHAPE)).astype(np.float32)
    return mb.build(), [xs, ys]


@pytest.mark.parametrize("execution", ["stepped", "persistent"])
def test_every_math_op_runs_right_as_a_phase(execution):
    model, inputs = _model()
    expected = run_cpu(model, inputs)
    d = tflite_gpu.load_delegate(log_level="silent", execution=execution)
    it = interpreters.make(model, delegate=d)
    outputs = interpreters.run(it, inputs)
    pointer = d._get_native_delegate_pointer()
    (part,) = _capi.delegate_partitions(pointer)
    del it
    assert part["execution"] == execution and part["launches"] == (1 if execution == "persistent" else
                                                                    part["dispatches"]), part
    total, both = outputs
    assert np.isfinite(total).all()
    assert_close(total, expected[0], rtol_l2=1e-4, atol=1e-4 * max(1.0, float(np.abs(expected[0]).max())))
    assert np.array_equal(both, expected[1])


def test_the_program_holds_exactly_the_models_math(tmp_path):
    path = tmp_path / "math.tflite"
    path.write_bytes(_model()[0])
    p = run_cli("explain", path, "--opt", "execution=stepped", env={"TFLITE_GPU_BUILD_LOG": "1"})
    assert p.returncode == 0, p.stderr
    (options,) = re.findall(r"build vm_program\.cl \[([^\]]*)\]", p.stderr + p.stdout)
    got = {k: int(v, 16) for k, v in re.findall(r"-DGD_(UN|BIN)_OPS=0x([0-9a-f]+)", options)}
    for kind, names, extra in (("UN", UNARY.values(), EPILOGUE[0]), ("BIN", [*BINARY.values(), *BOOLEAN.values()],
                                                                      EPILOGUE[1])):
        codes = _codes(kind + "_")
        assert got[kind] == sum(1 << codes[name] for name in {*names, *extra}), (kind, hex(got[kind]))
