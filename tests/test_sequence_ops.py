"""UNIDIRECTIONAL_SEQUENCE_LSTM / _RNN through the delegate against the CPU
interpreter over several invokes of one interpreter each: the states are
variable tensors that persist across invokes, so invokes after the first
start from the state the previous one left, which the delegate must have
written back. (test_ops.py runs the same cases once each, from zero state,
in its op sweep.)"""

import numpy as np
import pytest

import tflite_gpu
from conftest import _interpreter, _run, assert_close, run_refusal, test_options
from op_cases._common import _input
from op_cases.sequence import _w, sequence_cases
from tflite_gpu import _capi

# FP32 on both sides: differences are summation order only, ~1e-6 relative
# per step; a recurrence of up to 9 steps compounds that a few-fold, and
# 1e-4 still catches a wrong weight, gate or state (those give >1e-2).
RTOL_L2 = 1e-4
INVOKES = 3


@pytest.mark.parametrize("case", [pytest.param(c, id=c.id) for c in sequence_cases()])
def test_states_carry_across_invokes(case):
    model, reference, first = case.make()
    rng = np.random.default_rng(7)
    feeds = [first] + [[rng.standard_normal(x.shape, dtype=np.float32) for x in first] for _ in range(INVOKES - 1)]
    cpu = _interpreter(reference)
    delegate = tflite_gpu.load_delegate(**test_options())
    gpu = _interpreter(model, [delegate])
    stats = _capi.delegate_stats(delegate._get_native_delegate_pointer())
    assert stats["cpu_nodes"] == 0, f"{stats['cpu_nodes']} node(s) left on the CPU"
    for k, inputs in enumerate(feeds):
        expected = _run(cpu, inputs)
        actual = _run(gpu, inputs)
        for got, want in zip(actual, expected):
            assert_close(got, want, rtol_l2=RTOL_L2, atol=1e-4 * max(1.0, float(np.abs(want).max())))
        if k == 0:
            first_out = expected[0]
    # The first inputs again, now from a carried state: as on the CPU, and
    # (where the state cannot die out as RELU's can) unlike the first time.
    again, again_cpu = _run(gpu, feeds[0]), _run(cpu, feeds[0])
    assert_close(again[0], again_cpu[0], rtol_l2=RTOL_L2, atol=1e-4 * max(1.0, float(np.abs(again_cpu[0]).max())))
    if "relu" not in case.id:
        assert not np.allclose(again[0], first_out, atol=1e-3)
    del gpu


def _lstm_with(extra):
    """An LSTM that the delegate must refuse; `extra` edits its inputs."""
    def build(mb, rng):
        inputs = []
        x = _input(mb, rng, [2, 4, 3], inputs)
        ins = [x] + [_w(mb, rng, [5, 3], 8) for _ in range(4)] + [_w(mb, rng, [5, 5], 8) for _ in range(4)]
        ins += [-1, -1, -1] + [_w(mb, rng, [5], 4) for _ in range(4)] + [-1, -1]
        ins += [mb.add_tensor([2, 5], variable=True), mb.add_tensor([2, 5], variable=True)]
        ins = extra(mb, rng, ins)
        out = mb.add_tensor([2, 4, 5])
        mb.add_op("UNIDIRECTIONAL_SEQUENCE_LSTM", ins, [out])
        mb.mark_output(out)
        return inputs
    return build


def _projection(mb, rng, ins):
    ins[16] = _w(mb, rng, [5, 5], 5)  # projection to the same size: still a valid model for the CPU
    return ins


def _state_read_twice(mb, rng, ins):
    # The cell state also feeds an ADD after the LSTM: the delegate writes
    # the variable back only at the end of its partition.
    other = mb.add_tensor([2, 5])
    mb.add_op("ADD", [ins[19], ins[19]], [other], dict(fused_activation="NONE"))
    mb.mark_output(other)
    return ins


@pytest.mark.parametrize("edit, why", [(_projection, "projection"), (_state_read_twice, "read by another node")],
                         ids=["projection", "state-read-elsewhere"])
def test_unsupported_lstm_stays_on_cpu(edit, why, capfd):
    actual, expected, report, log = run_refusal(_lstm_with(edit), 3, capfd)
    assert report.cpu_nodes >= 1
    assert why in log
    for got, want in zip(actual, expected):
        assert_close(got, want, rtol_l2=RTOL_L2)


# FP16 storage: every stored h and c is rounded to half (~5e-4 relative)
# and the next step reads it back; over <= 9 steps through saturating gates
# that stays well under 1e-2 relative L2, the models' FP16 bound.
FP16_RTOL_L2 = 1e-2


@pytest.mark.parametrize("guard", ["off", "on"])
@pytest.mark.parametrize("case", [pytest.param(c, id=c.id) for c in sequence_cases()])
def test_fp16_states_carry(case, guard):
    """Half storage (and with fp16_guard=on, whose probe runs the partition
    with its written-back states as extra outputs) over two invokes."""
    model, reference, first = case.make()
    first = [x.astype(np.float16).astype(np.float32) for x in first]
    cpu = _interpreter(reference)
    delegate = tflite_gpu.load_delegate(**test_options(is_precision_loss_allowed="1", fp16_guard=guard))
    gpu = _interpreter(model, [delegate])
    for _ in range(2):
        expected, actual = _run(cpu, first), _run(gpu, first)
        for got, want in zip(actual, expected):
            assert_close(got, want, rtol_l2=FP16_RTOL_L2, atol=FP16_RTOL_L2 * max(1.0, float(np.abs(want).max())))
    del gpu
