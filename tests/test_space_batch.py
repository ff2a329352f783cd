"""SPACE_TO_BATCH_ND / BATCH_TO_SPACE_ND beyond the op cases: nodes the
delegate must refuse stay on the CPU with a precise reason, and the model
stays right. (The op cases in tests/op_cases/space_batch.py compare the
delegated ops and a dilated convolution built from them with the CPU.)"""
import numpy as np
import pytest

from conftest import assert_close, run_refusal


def _ints(mb, values):
    values = np.asarray(values, np.int32)
    return mb.add_tensor(values.shape, np.int32, data=values)


def _runtime_block(mb, rng):
    # The block shape is a runtime input: its value is unknown at prepare.
    x = mb.add_input([1, 4, 4, 3])
    block = mb.add_input([2], np.int32)
    y = mb.add_tensor([4, 2, 2, 3])
    mb.add_op("SPACE_TO_BATCH_ND", [x, block, _ints(mb, [[0, 0], [0, 0]])], [y])
    mb.mark_output(y)
    return [rng.standard_normal([1, 4, 4, 3]).astype(np.float32), np.array([2, 2], np.int32)]


def _rank3(mb, rng):
    # Rank 3 (one spatial axis), which TFLite takes from version 3.
    x = mb.add_input([1, 6, 5])
    y = mb.add_tensor([2, 3, 5])
    mb.add_op("SPACE_TO_BATCH_ND", [x, _ints(mb, [2]), _ints(mb, [[0, 0]])], [y], version=3)
    mb.mark_output(y)
    return [rng.standard_normal([1, 6, 5]).astype(np.float32)]


@pytest.mark.parametrize("build,reason", [
    (_runtime_block, "SPACE_TO_BATCH_ND: input 1 (tensor_1) has type INT32; only FLOAT32 runtime tensors"),
    (_rank3, "SPACE_TO_BATCH_ND: input 0 must have rank 4 (rank 3 stays on the CPU)"),
], ids=["runtime-block", "rank3"])
def test_refused_with_reason_and_still_correct(build, reason, capfd):
    actual, expected, report, err = run_refusal(build, 11, capfd)
    assert reason in err, err
    assert report.cpu_nodes == 1
    for got, want in zip(actual, expected):
        assert_close(got, want, rtol_l2=0, atol=0)
