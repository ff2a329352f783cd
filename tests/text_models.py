"""Text models as converters write them, built with model_builder: a
BERT-style encoder block (int32 token ids into GATHER, a float attention
mask, one self-attention block with a residual), the model `check` must
pass with no user data."""
import numpy as np

from tflite_gpu.model_builder import ModelBuilder

from op_cases.layer_norm import layer_norm_graph

VOCAB, TIME, DIM, HEADS = 37, 7, 16, 2


def _op(mb, op, inputs, shape, options=None, dtype=np.float32):
    out = mb.add_tensor(shape, dtype)
    mb.add_op(op, inputs, [out], options)
    return out


def _w(mb, rng, shape, scale=0.3):
    return mb.add_tensor(shape, data=(scale * rng.standard_normal(shape)).astype(np.float32))


def _i32(mb, values):
    return mb.add_tensor([len(values)], np.int32, data=np.asarray(values, np.int32))


def bert_block(seed=0, ids_dtype=np.int32, time=TIME):
    """The model's bytes: ids [1, time] (ids_dtype) and mask [1, time] in,
    [1, time, DIM] out; the ids reach GATHER through a RESHAPE and a CAST."""
    rng = np.random.default_rng(seed)
    mb = ModelBuilder()
    ids = mb.add_input([1, time], ids_dtype, name="input_ids")
    mask = mb.add_input([1, time], np.float32, name="attention_mask")
    flat = _op(mb, "RESHAPE", [ids, _i32(mb, [time])], [time], dict(new_shape=[time]), dtype=ids_dtype)
    as_i32 = _op(mb, "CAST", [flat], [time], dtype=np.int32) if ids_dtype != np.int32 else flat
    emb = _op(mb, "GATHER", [_w(mb, rng, [VOCAB, DIM], 1.0), as_i32], [time, DIM], dict(axis=0))
    x = _op(mb, "ADD", [emb, _w(mb, rng, [time, DIM], 0.5)], [time, DIM], dict(fused_activation="NONE"))
    x = layer_norm_graph(mb, rng, x, [time, DIM], 1e-5, "keras")
    dh = DIM // HEADS

    def heads(name):
        y = _op(mb, "FULLY_CONNECTED", [x, _w(mb, rng, [DIM, DIM]), _w(mb, rng, [DIM], 0.1)], [time, DIM])
        y = _op(mb, "RESHAPE", [y, _i32(mb, [1, time, HEADS, dh])], [1, time, HEADS, dh],
                dict(new_shape=[1, time, HEADS, dh]))
        return _op(mb, "TRANSPOSE", [y, _i32(mb, [0, 2, 1, 3])], [1, HEADS, time, dh])

    q, k, v = heads("q"), heads("k"), heads("v")
    scores = _op(mb, "BATCH_MATMUL", [q, k], [1, HEADS, time, time], dict(adj_x=False, adj_y=True))
    scores = _op(mb, "MUL", [scores, mb.add_tensor([], data=np.float32(1 / np.sqrt(dh)))], [1, HEADS, time, time],
                 dict(fused_activation="NONE"))
    # (1 - mask) * -1e4 on the masked-out keys, as BERT's converters write it
    inv = _op(mb, "SUB", [mb.add_tensor([], data=np.float32(1)), mask], [1, time], dict(fused_activation="NONE"))
    bias = _op(mb, "MUL", [inv, mb.add_tensor([], data=np.float32(-1e4))], [1, time], dict(fused_activation="NONE"))
    bias = _op(mb, "RESHAPE", [bias, _i32(mb, [1, 1, 1, time])], [1, 1, 1, time], dict(new_shape=[1, 1, 1, time]))
    scores = _op(mb, "ADD", [scores, bias], [1, HEADS, time, time], dict(fused_activation="NONE"))
    probs = _op(mb, "SOFTMAX", [scores], [1, HEADS, time, time], dict(beta=1.0))
    ctx = _op(mb, "BATCH_MATMUL", [probs, v], [1, HEADS, time, dh], dict(adj_x=False, adj_y=False))
    ctx = _op(mb, "TRANSPOSE", [ctx, _i32(mb, [0, 2, 1, 3])], [1, time, HEADS, dh])
    ctx = _op(mb, "RESHAPE", [ctx, _i32(mb, [time, DIM])], [time, DIM], dict(new_shape=[time, DIM]))
    out = _op(mb, "FULLY_CONNECTED", [ctx, _w(mb, rng, [DIM, DIM]), _w(mb, rng, [DIM], 0.1)], [time, DIM])
    out = _op(mb, "ADD", [out, x], [time, DIM], dict(fused_activation="NONE"))
    y = _op(mb, "RESHAPE", [out, _i32(mb, [1, time, DIM])], [1, time, DIM], dict(new_shape=[1, time, DIM]))
    mb.mark_output(y)
    return mb.build()
