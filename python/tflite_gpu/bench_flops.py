"""FLOPs of one inference, read from the model's flatbuffer (the bench
report's GFLOP and GFLOP/s columns); see FLOPS_CONVENTION."""
from __future__ import annotations

import pathlib

import numpy as np

FLOPS_CONVENTION = (
    "FLOPs = 2 x MACs for CONV_2D (N*OH*OW*Cout*KH*KW*Cin), DEPTHWISE_CONV_2D (N*OH*OW*C*KH*KW), "
    "FULLY_CONNECTED (output elements * input features), BATCH_MATMUL, TRANSPOSE_CONV and MediaPipe's "
    "Convolution2DTransposeBias (N*IH*IW*Cin*KH*KW*Cout); bias adds and fused activations are not counted. "
    "Pooling counts KH*KW per output element, reductions (MEAN, SUM, ...) one per input element, every other "
    "computing op (elementwise, activations, resize, softmax, custom ops) one per output element. Data "
    "movement (RESHAPE, CONCATENATION, PAD, STRIDED_SLICE, ...) and constant folding (DEQUANTIZE, DENSIFY) "
    "count zero. Only the main subgraph is counted."
)

# Ops that move or reinterpret data, or are folded into constants at prepare time.
_ZERO_FLOP_OPS = frozenset("""
    RESHAPE SQUEEZE EXPAND_DIMS CONCATENATION PAD PADV2 MIRROR_PAD STRIDED_SLICE SLICE SPLIT SPLIT_V
    TRANSPOSE GATHER GATHER_ND DEPTH_TO_SPACE SPACE_TO_DEPTH BATCH_TO_SPACE_ND SPACE_TO_BATCH_ND
    DEQUANTIZE QUANTIZE DENSIFY CAST SHAPE PACK UNPACK TILE BROADCAST_TO FILL ZEROS_LIKE ONES_LIKE
    REVERSE_V2 IDENTITY
""".split())
_REDUCE_OPS = frozenset("MEAN SUM REDUCE_MAX REDUCE_MIN REDUCE_PROD ARG_MAX ARG_MIN L2_NORMALIZATION".split())
_POOL_OPS = frozenset("AVERAGE_POOL_2D MAX_POOL_2D L2_POOL_2D".split())



def count_flops(model) -> dict:
    """FLOPs of one inference of `model` (a path or .tflite bytes), read from
    the flatbuffer with the `tflite` schema package; see FLOPS_CONVENTION.

    Returns {"total": int, "by_op": {op name: FLOPs}}.
    """
    import tflite

    buf = model if isinstance(model, (bytes, bytearray)) else pathlib.Path(model).read_bytes()
    m = tflite.Model.GetRootAsModel(buf, 0)
    names = {v: k for k, v in vars(tflite.BuiltinOperator).items() if not k.startswith("_") and isinstance(v, int)}
    sg = m.Subgraphs(0)

    def shape(i):
        if i < 0:
            return []
        t = sg.Tensors(i)
        return [int(t.Shape(j)) for j in range(t.ShapeLength())]

    def elems(i):
        return int(np.prod(shape(i), dtype=np.int64)) if i >= 0 else 0

    def options(op, cls):
        tab = op.BuiltinOptions()
        if tab is None:
            return None
        o = cls()
        o.Init(tab.Bytes, tab.Pos)
        return o

    by_op: dict = {}
    for k in range(sg.OperatorsLength()):
        op = sg.Operators(k)
        oc = m.OperatorCodes(op.OpcodeIndex())
        code = max(int(oc.BuiltinCode()), int(oc.DeprecatedBuiltinCode()))
        if code == tflite.BuiltinOperator.CUSTOM:
            custom = oc.CustomCode()
            name = "CUSTOM:" + (custom.decode() if custom else "?")
        else:
            name = names.get(code, f"OP_{code}")
        ins = [int(op.Inputs(j)) for j in range(op.InputsLength())]
        outs = [int(op.Outputs(j)) for j in range(op.OutputsLength())]
        out0 = outs[0] if outs else -1
        flops = 0
        try:
            if name == "CONV_2D":
                w = shape(ins[1])  # [Cout, KH, KW, Cin/groups]
                flops = 2 * elems(out0) * w[1] * w[2] * w[3]
            elif name == "DEPTHWISE_CONV_2D":
                w = shape(ins[1])  # [1, KH, KW, Cout]
                flops = 2 * elems(out0) * w[1] * w[2]
            elif name == "FULLY_CONNECTED":
                w = shape(ins[1])  # [units, in_features]
                flops = 2 * elems(out0) * w[-1]
            elif name == "BATCH_MATMUL":
                a = shape(ins[0])
                o = options(op, tflite.BatchMatMulOptions)
                kdim = a[-2] if (o is not None and o.AdjX()) else a[-1]
                flops = 2 * elems(out0) * kdim
            elif name == "TRANSPOSE_CONV":
                w = shape(ins[1])  # [Cout, KH, KW, Cin]; ins[2] is the input
                flops = 2 * elems(ins[2]) * w[0] * w[1] * w[2]
            elif name == "CUSTOM:Convolution2DTransposeBias":
                w = shape(ins[1])  # [Cout, KH, KW, Cin]; ins[0] is the input
                flops = 2 * elems(ins[0]) * w[0] * w[1] * w[2]
            elif name in _POOL_OPS:
                o = options(op, tflite.Pool2DOptions)
                window = (o.FilterHeight() * o.FilterWidth()) if o is not None else 1
                flops = elems(out0) * window
            elif name in _REDUCE_OPS:
                flops = elems(ins[0])
            elif name in _ZERO_FLOP_OPS:
                flops = 0
            else:
                flops = sum(elems(o) for o in outs)
        except (IndexError, TypeError):  # malformed or unexpected operand layout: count nothing
            flops = 0
        by_op[name] = by_op.get(name, 0) + int(flops)
    return {"total": int(sum(by_op.values())), "by_op": dict(sorted(by_op.items(), key=lambda kv: -kv[1]))}
