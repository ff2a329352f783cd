"""numpy emulation of an int8 `Net` (tests/int8_models.py) two ways, op by
op, to tell which ops' rounding makes the whole-model drift (issue 14):

- "cpu": TFLite 2.14's integer arithmetic as the x86 tflite_runtime wheel
  runs it: int32 accumulation, then the fixed-point multiplier from
  QuantizeMultiplier (tensorflow/lite/kernels/internal/quantization_util.cc)
  applied with a rounding doubling high multiply and a rounding right shift
  (MultiplyByQuantizedMultiplier, tensorflow/lite/kernels/internal/common.h);
- "float": the delegate's float view: the exact real value of the op on the
  dequantized inputs, rounded once (half away from zero) onto the output grid.

`forward(net, x, exact=...)` runs the net with the ops whose output names
are in `exact` done the "cpu" way and the others the "float" way.

Rounding of the last shift: the per-channel CONV_2D path of the wheel
(optimized_integer_ops::ConvPerChannel -> cpu_backend_gemm -> ruy) rounds
half up (toward +inf) in the final right shift; the reference
RoundingDivideByPOT rounds half away from zero. `ROUNDING` picks per op
type which one the emulation uses; tests/test_int8_fidelity.py checks that
each choice reproduces the CPU bit for bit.
"""
from __future__ import annotations

import math

import numpy as np

from int8_models import WEIGHT_AXIS, _act_quant, _quant_weights, _sym_scales


def quantize_multiplier(m):
    """QuantizeMultiplier: m = q * 2^shift, q a Q31 int in [2^30, 2^31)."""
    if m == 0:
        return 0, 0
    q, shift = math.frexp(m)
    qf = int(round(q * (1 << 31)))  # TfLiteRound: half away from zero
    if qf == (1 << 31):
        qf //= 2
        shift += 1
    return qf, shift


def _srdhm(a, b):
    """SaturatingRoundingDoublingHighMul (gemmlowp): round(a * b / 2^31),
    ties away from zero (C++ division truncates toward zero)."""
    ab = np.asarray(a, np.int64) * np.int64(b)
    r = ab + np.where(ab >= 0, np.int64(1 << 30), np.int64(1 - (1 << 30)))
    return np.where(r >= 0, r >> 31, -((-r) >> 31))


def _rdbpot_away(x, e):
    """RoundingDivideByPOT: x / 2^e rounded, ties away from zero."""
    if e == 0:
        return x
    mask = (1 << e) - 1
    rem = x & mask
    threshold = (mask >> 1) + (x < 0)
    return (x >> e) + (rem > threshold)


def _rdbpot_up(x, e):
    """Rounding right shift, ties toward +inf (ruy's x86 kernels)."""
    if e == 0:
        return x
    return (x + (1 << (e - 1))) >> e


def mbqm(x, m, rounding="away"):
    """MultiplyByQuantizedMultiplier(x, QuantizeMultiplier(m)): double
    rounding with the last shift's ties "away" (gemmlowp) or "up" (ruy's
    older kernels), or "single" (TFLITE_SINGLE_ROUNDING, newer ruy)."""
    qm, shift = quantize_multiplier(m)
    if rounding == "single":
        total = 31 - shift
        return (np.asarray(x, np.int64) * qm + (1 << (total - 1))) >> total
    left, right = max(shift, 0), max(-shift, 0)
    t = _srdhm(np.asarray(x, np.int64) << left, qm)
    return (_rdbpot_up if rounding == "up" else _rdbpot_away)(t, right)


# Rounding of the final shift, per op: as the tflite_runtime 2.14 wheel's
# builtin (optimized) kernels run it, and as its reference kernels
# (OpResolverType.BUILTIN_REF) do. tests/test_int8_fidelity.py checks both.
# DEPTHWISE_CONV_2D differs between runtimes: ties away in tflite_runtime
# 2.14, up in LiteRT 2.3 (tests/int8_rounding_probe.py); not in the MTCNN nets.
OPTIMIZED = {"CONV_2D": "up", "FULLY_CONNECTED": "up", "PRELU": "away", "DEPTHWISE_CONV_2D": "away"}
REFERENCE = {"CONV_2D": "away", "FULLY_CONNECTED": "away", "PRELU": "away", "DEPTHWISE_CONV_2D": "away"}
ROUNDING = OPTIMIZED


def _round_away(v):
    return np.sign(v) * np.floor(np.abs(v) + 0.5)


def _to_int8(v):
    return np.clip(v, -128, 127).astype(np.int8)


def _conv_acc(xi, wq, bq, padding):
    n, h, w, _ = xi.shape
    cout, k, _, _ = wq.shape
    if padding == "SAME":  # stride 1, odd k
        p = (k - 1) // 2
        xi = np.pad(xi, ((0, 0), (p, k - 1 - p), (p, k - 1 - p), (0, 0)))
        oh, ow = h, w
    else:
        oh, ow = h - k + 1, w - k + 1
    acc = np.zeros((n, oh, ow, cout), np.int64)
    for dy in range(k):
        for dx in range(k):
            acc += np.einsum("nhwc,oc->nhwo", xi[:, dy:dy + oh, dx:dx + ow, :], wq[:, dy, dx, :])
    return acc + bq


def _maxpool(x, k, s, padding):
    n, h, w, c = x.shape
    if padding == "SAME":
        oh, ow = -(-h // s), -(-w // s)
        ph = max((oh - 1) * s + k - h, 0) // 2
        pw = max((ow - 1) * s + k - w, 0) // 2
    else:
        oh, ow, ph, pw = (h - k) // s + 1, (w - k) // s + 1, 0, 0
    out = np.full((n, oh, ow, c), -129, np.int32)
    for y in range(oh):
        for xx in range(ow):
            y0, x0 = y * s - ph, xx * s - pw
            win = x[:, max(y0, 0):min(y0 + k, h), max(x0, 0):min(x0 + k, w), :]
            out[:, y, xx, :] = win.max(axis=(1, 2))
    return out.astype(np.int8)


def run_node(net, nd, x, how, rounding=None):
    """One node on int8 input x, 'cpu' or 'float'; rounding: OPTIMIZED
    (default) or REFERENCE."""
    rounding = rounding or ROUNDING
    s_in, z_in = net.qparams[nd["inputs"][0]]
    s_out, z_out = net.qparams[nd["output"]]
    xi = x.astype(np.int64) - z_in
    op = nd["op"]
    if op in WEIGHT_AXIS:
        axis = WEIGHT_AXIS[op]
        ws = _sym_scales(nd["w"], axis)
        wq = _quant_weights(nd["w"], ws, axis).astype(np.int64)
        bs = (np.float32(s_in) * ws).astype(np.float32)
        bq = np.round(nd["b"] / np.broadcast_to(bs, nd["b"].shape)).astype(np.int64)
        if op == "CONV_2D":
            acc = _conv_acc(xi, wq, bq, nd["options"]["padding"])
        elif op == "DEPTHWISE_CONV_2D":  # VALID, stride 1, multiplier 1
            k = wq.shape[1]
            oh, ow = xi.shape[1] - k + 1, xi.shape[2] - k + 1
            acc = sum(xi[:, dy:dy + oh, dx:dx + ow, :] * wq[0, dy, dx, :]
                      for dy in range(k) for dx in range(k)) + bq
        else:
            acc = xi @ wq.T + bq
        wsb = np.broadcast_to(ws, (acc.shape[-1],))
        if how == "float":
            real = acc * (float(np.float32(s_in)) * wsb.astype(np.float64) / float(np.float32(s_out)))
            return _to_int8(_round_away(real) + z_out)
        out = np.empty_like(acc)
        for o in range(acc.shape[-1]):
            m = float(np.float32(s_in)) * float(wsb[o]) / float(np.float32(s_out))
            out[..., o] = mbqm(acc[..., o], m, rounding[op])
        return _to_int8(out + z_out)
    if op == "PRELU":
        a = nd["alpha"]
        a_s, a_z = _act_quant(a.min(), a.max())
        aq = np.clip(np.round(a / a_s) + a_z, -128, 127).astype(np.int64) - a_z
        aq = np.broadcast_to(aq, xi.shape)
        if how == "float":
            real = np.where(xi >= 0, xi * (s_in / s_out), xi * aq * (s_in * a_s / s_out))
            return _to_int8(_round_away(real) + z_out)
        pos = mbqm(xi, float(np.float32(s_in)) / float(np.float32(s_out)), rounding[op])
        neg = mbqm(xi * aq, float(np.float32(s_in)) * float(np.float32(a_s)) / float(np.float32(s_out)),
                   rounding[op])
        return _to_int8(np.where(xi >= 0, pos, neg) + z_out)
    if op == "MAX_POOL_2D":
        o = nd["options"]
        return _maxpool(x, o["filter_w"], o["stride_w"], o["padding"])
    if op == "RESHAPE":
        return x.reshape(net.shapes[nd["output"]])
    if op == "SOFTMAX":
        # Both ways in float: the wheel's int8 softmax is a float exp table
        # (optimized_ops::PopulateSoftmaxLookupTable / Softmax).
        v = xi * s_in
        e = np.exp(v - v.max(axis=-1, keepdims=True))
        p = e / e.sum(axis=-1, keepdims=True)
        return _to_int8(_round_away(p * 256) + z_out)
    raise ValueError(op)


def forward(net, x, exact=(), rounding=None):
    """Every tensor of the net on int8 input x; nodes whose output is in
    `exact` run the 'cpu' way (with `rounding`), the others the 'float' way."""
    t = {"input": x}
    for nd in net.nodes:
        how = "cpu" if nd["output"] in exact else "float"
        t[nd["output"]] = run_node(net, nd, t[nd["inputs"][0]], how, rounding)
    return t
