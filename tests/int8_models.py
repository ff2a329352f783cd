"""Full-integer int8 models built like TF 2.14's post-training quantization
of MTCNN's P-Net and R-Net (issue 14), for measuring how far the delegate's
float view drifts from the CPU's integer kernels through a whole model.

A network is a list of nodes over named tensors (`Net`). Its weights are
seeded random floats. `Net.calibrate` builds the float model with
ModelBuilder, runs it on the CPU interpreter over calibration inputs with
every tensor marked as an output and records each tensor's min/max, as the
converter's calibration does. `Net.int8_model` then writes the quantized
model the way the converter does:

- CONV_2D weights: int8, per-channel symmetric (scale = max|w_c| / 127,
  zero point 0, quantized_dimension 0); FULLY_CONNECTED weights per-tensor
  symmetric (the converter's default for dense layers in 2.14);
- biases: int32, scale = input_scale * weight_scale (per channel);
- activations: int8 per-tensor asymmetric over [min(lo, 0), max(hi, 0)]
  (scale = range / 255, zero point = round(-128 - lo / scale));
- MAX_POOL_2D and RESHAPE outputs keep their input's scale and zero point;
- SOFTMAX output: scale 1/256, zero point -128 (what the int8 kernel needs);
- PRELU alpha: int8 per-tensor asymmetric over [min(alpha, 0), max(alpha, 0)].

`int8_model(outputs=...)` can mark any tensors as outputs (the default is
the net's own outputs), and `single_op_model(i)` writes node i alone with
the same scales, for feeding it the CPU's real intermediate values.
"""
from __future__ import annotations

import numpy as np

from tflite_gpu.model_builder import ModelBuilder

VERSION = {"CONV_2D": 3, "DEPTHWISE_CONV_2D": 3, "FULLY_CONNECTED": 4, "MAX_POOL_2D": 2, "RESHAPE": 1, "SOFTMAX": 2, "PRELU": 1}

# Per-channel weight axis (None: per-tensor, the converter's default for dense layers).
WEIGHT_AXIS = {"CONV_2D": 0, "DEPTHWISE_CONV_2D": 3, "FULLY_CONNECTED": None}


def _act_quant(lo, hi):
    """The converter's int8 activation parameters for the range [lo, hi]."""
    lo, hi = min(float(lo), 0.0), max(float(hi), 0.0)
    scale = max(hi - lo, 1e-6) / 255.0
    zp = int(np.clip(round(-128 - lo / scale), -128, 127))
    return float(np.float32(scale)), zp


def _sym_scales(w, axis=None):
    """Symmetric int8 weight scales: one per index of `axis`, or one."""
    if axis is None:
        return np.array([max(np.abs(w).max(), 1e-8) / 127.0], np.float32)
    other = tuple(d for d in range(w.ndim) if d != axis)
    return np.maximum(np.abs(w).max(axis=other), 1e-8).astype(np.float32) / np.float32(127.0)


def _quant_weights(w, scales, axis):
    shape = [1] * w.ndim
    if axis is not None:
        shape[axis] = w.shape[axis]
    q = np.clip(np.round(w / scales.reshape(shape)), -127, 127)
    return q.astype(np.int8)


class Net:
    """nodes: dicts op, inputs (names), output (name), options, and float
    constants w / b / alpha; shapes: tensor name -> shape."""

    def __init__(self, name, input_shape, seed):
        self.name = name
        self.rng = np.random.default_rng(seed)
        self.nodes = []
        self.shapes = {"input": list(input_shape)}
        self.outputs = []
        self.ranges = None
        self._n = 0

    # -- construction ----------------------------------------------------

    def _new(self, prefix, shape):
        self._n += 1
        name = f"{prefix}{self._n}"
        self.shapes[name] = list(shape)
        return name

    def conv(self, x, cout, k, padding="VALID"):
        n, h, w, cin = self.shapes[x]
        oh, ow = (h - k + 1, w - k + 1) if padding == "VALID" else (h, w)
        y = self._new("conv", [n, oh, ow, cout])
        wt = self.rng.normal(0, np.sqrt(2.0 / (k * k * cin)), (cout, k, k, cin)).astype(np.float32)
        b = self.rng.normal(0, 0.1, cout).astype(np.float32)
        self.nodes.append(dict(op="CONV_2D", inputs=[x], output=y, w=wt, b=b,
                               options=dict(padding=padding, stride_w=1, stride_h=1)))
        return y

    def depthwise(self, x, k, padding="VALID"):
        """DEPTHWISE_CONV_2D, depth multiplier 1, weights per-channel on axis 3
        (not in MTCNN; for probing its kernel's rounding)."""
        n, h, w, c = self.shapes[x]
        oh, ow = (h - k + 1, w - k + 1) if padding == "VALID" else (h, w)
        y = self._new("dw", [n, oh, ow, c])
        wt = self.rng.normal(0, np.sqrt(2.0 / (k * k)), (1, k, k, c)).astype(np.float32)
        b = self.rng.normal(0, 0.1, c).astype(np.float32)
        self.nodes.append(dict(op="DEPTHWISE_CONV_2D", inputs=[x], output=y, w=wt, b=b, options=dict(
            padding=padding, stride_w=1, stride_h=1, depth_multiplier=1)))
        return y

    def fc(self, x, cout):
        n, cin = self.shapes[x]
        y = self._new("fc", [n, cout])
        wt = self.rng.normal(0, np.sqrt(2.0 / cin), (cout, cin)).astype(np.float32)
        b = self.rng.normal(0, 0.1, cout).astype(np.float32)
        self.nodes.append(dict(op="FULLY_CONNECTED", inputs=[x], output=y, w=wt, b=b, options={}))
        return y

    def prelu(self, x):
        shape = self.shapes[x]
        c = shape[-1]
        ashape = [1, 1, c] if len(shape) == 4 else [c]  # as the converted MTCNN models hold them
        alpha = self.rng.uniform(0.05, 0.4, ashape).astype(np.float32)
        y = self._new("prelu", shape)
        self.nodes.append(dict(op="PRELU", inputs=[x], output=y, alpha=alpha, options={}))
        return y

    def maxpool(self, x, k, s, padding):
        n, h, w, c = self.shapes[x]
        if padding == "SAME":
            oh, ow = -(-h // s), -(-w // s)
        else:
            oh, ow = (h - k) // s + 1, (w - k) // s + 1
        y = self._new("pool", [n, oh, ow, c])
        self.nodes.append(dict(op="MAX_POOL_2D", inputs=[x], output=y, options=dict(
            padding=padding, filter_w=k, filter_h=k, stride_w=s, stride_h=s)))
        return y

    def reshape(self, x):
        n = self.shapes[x][0]
        flat = int(np.prod(self.shapes[x][1:]))
        y = self._new("reshape", [n, flat])
        self.nodes.append(dict(op="RESHAPE", inputs=[x], output=y, options=dict(new_shape=[n, flat])))
        return y

    def softmax(self, x):
        y = self._new("softmax", self.shapes[x])
        self.nodes.append(dict(op="SOFTMAX", inputs=[x], output=y, options=dict(beta=1.0)))
        return y

    # -- models ----------------------------------------------------------

    def tensors(self):
        """Every runtime tensor, input first, in node order."""
        return ["input"] + [nd["output"] for nd in self.nodes]

    def float_model(self, outputs=None):
        mb = ModelBuilder()
        t = {"input": mb.add_input(self.shapes["input"], name="input")}
        for nd in self.nodes:
            x = t[nd["inputs"][0]]
            y = mb.add_tensor(self.shapes[nd["output"]], name=nd["output"])
            if nd["op"] in WEIGHT_AXIS:
                w = mb.add_tensor(nd["w"].shape, data=nd["w"])
                b = mb.add_tensor(nd["b"].shape, data=nd["b"])
                mb.add_op(nd["op"], [x, w, b], [y], nd["options"])
            elif nd["op"] == "PRELU":
                a = mb.add_tensor(nd["alpha"].shape, data=nd["alpha"])
                mb.add_op("PRELU", [x, a], [y])
            elif nd["op"] == "RESHAPE":
                s = mb.add_tensor([2], np.int32, data=np.array(self.shapes[nd["output"]], np.int32))
                mb.add_op("RESHAPE", [x, s], [y], nd["options"])
            else:
                mb.add_op(nd["op"], [x], [y], nd["options"])
            t[nd["output"]] = y
        for name in outputs or self.outputs:
            mb.mark_output(t[name])
        return mb.build()

    def calibration_inputs(self, count, seed=1):
        """MTCNN's normalised pixels, (p - 127.5) / 128: smooth random images."""
        rng = np.random.default_rng(seed)
        n, h, w, c = self.shapes["input"]
        out = []
        for _ in range(count):
            coarse = rng.uniform(0, 255, (n, (h + 3) // 4, (w + 3) // 4, c))
            img = np.repeat(np.repeat(coarse, 4, axis=1), 4, axis=2)[:, :h, :w, :]
            img = np.clip(img + rng.normal(0, 20, img.shape), 0, 255)
            out.append(((img - 127.5) / 128.0).astype(np.float32))
        return out

    def calibrate(self, run_cpu, count=8):
        """Record each tensor's min/max over calibration inputs (CPU float model)."""
        names = self.tensors()
        model = self.float_model(outputs=names[1:])
        lo = {k: np.inf for k in names}
        hi = {k: -np.inf for k in names}
        for x in self.calibration_inputs(count):
            values = [x] + list(run_cpu(model, [x]))
            for k, v in zip(names, values):
                lo[k], hi[k] = min(lo[k], float(v.min())), max(hi[k], float(v.max()))
        self.ranges = {k: (lo[k], hi[k]) for k in names}
        self.qparams = {}
        for k in names:
            self.qparams[k] = _act_quant(*self.ranges[k])
        for nd in self.nodes:  # ops that keep the grid, and softmax's fixed grid
            if nd["op"] in ("MAX_POOL_2D", "RESHAPE"):
                self.qparams[nd["output"]] = self.qparams[nd["inputs"][0]]
            elif nd["op"] == "SOFTMAX":
                self.qparams[nd["output"]] = (1.0 / 256, -128)
        return self

    def _qtensor(self, mb, name, is_input=False):
        scale, zp = self.qparams[name]
        quant = dict(scale=[scale], zero_point=[zp])
        if is_input:
            return mb.add_input(self.shapes[name], np.int8, name=name, quant=quant)
        return mb.add_tensor(self.shapes[name], np.int8, name=name, quant=quant)

    def _write_node(self, mb, nd, t):
        x = t[nd["inputs"][0]]
        y = self._qtensor(mb, nd["output"])
        in_scale = self.qparams[nd["inputs"][0]][0]
        if nd["op"] in WEIGHT_AXIS:
            axis = WEIGHT_AXIS[nd["op"]]
            ws = _sym_scales(nd["w"], axis)
            wq = _quant_weights(nd["w"], ws, axis)
            w = mb.add_tensor(wq.shape, np.int8, data=wq, quant=dict(
                scale=ws.tolist(), zero_point=[0] * len(ws), quantized_dimension=axis or 0))
            bs = (np.float32(in_scale) * ws).astype(np.float32)
            bq = np.round(nd["b"] / np.broadcast_to(bs, nd["b"].shape)).astype(np.int32)
            b = mb.add_tensor(bq.shape, np.int32, data=bq, quant=dict(
                scale=bs.tolist(), zero_point=[0] * len(bs), quantized_dimension=0))
            mb.add_op(nd["op"], [x, w, b], [y], nd["options"], version=VERSION[nd["op"]])
        elif nd["op"] == "PRELU":
            a = nd["alpha"]
            scale, zp = _act_quant(a.min(), a.max())
            aq = np.clip(np.round(a / scale) + zp, -128, 127).astype(np.int8)
            at = mb.add_tensor(a.shape, np.int8, data=aq, quant=dict(scale=[scale], zero_point=[zp]))
            mb.add_op("PRELU", [x, at], [y], version=VERSION["PRELU"])
        elif nd["op"] == "RESHAPE":
            s = mb.add_tensor([2], np.int32, data=np.array(self.shapes[nd["output"]], np.int32))
            mb.add_op("RESHAPE", [x, s], [y], nd["options"], version=VERSION["RESHAPE"])
        else:
            mb.add_op(nd["op"], [x], [y], nd["options"], version=VERSION[nd["op"]])
        t[nd["output"]] = y

    def int8_model(self, outputs=None):
        """The full-integer model (int8 input and outputs); `outputs` marks
        other tensors as outputs too (e.g. every tensor, to localise drift)."""
        mb = ModelBuilder()
        t = {"input": self._qtensor(mb, "input", is_input=True)}
        for nd in self.nodes:
            self._write_node(mb, nd, t)
        for name in outputs or self.outputs:
            mb.mark_output(t[name])
        return mb.build()

    def single_op_model(self, i):
        """Node i alone, with the whole model's scales: its int8 input is
        the model input, its output the model output."""
        nd = self.nodes[i]
        mb = ModelBuilder()
        t = {nd["inputs"][0]: self._qtensor(mb, nd["inputs"][0], is_input=True)}
        self._write_node(mb, nd, t)
        mb.mark_output(t[nd["output"]])
        return mb.build()

    def quantize_input(self, x):
        scale, zp = self.qparams["input"]
        return np.clip(np.round(x / scale) + zp, -128, 127).astype(np.int8)

    def test_inputs(self, count, seed=7):
        """Seeded int8 inputs: fresh images (not the calibration set)."""
        return [self.quantize_input(x) for x in self.calibration_inputs(count, seed=seed)]


def pnet(seed=0, batch=4, size=12):
    """MTCNN P-Net: 12x12x3 -> conv3x3 10, PRELU, maxpool 2x2 s2 (SAME),
    conv3x3 16, PRELU, conv3x3 32, PRELU -> conv1x1 2 + SOFTMAX, conv1x1 4."""
    net = Net("pnet", [batch, size, size, 3], seed)
    x = net.prelu(net.conv("input", 10, 3))
    x = net.maxpool(x, 2, 2, "SAME")
    x = net.prelu(net.conv(x, 16, 3))
    x = net.prelu(net.conv(x, 32, 3))
    prob = net.softmax(net.conv(x, 2, 1))
    box = net.conv(x, 4, 1)
    net.outputs = [prob, box]
    return net


def rnet(seed=0, batch=4):
    """MTCNN R-Net: 24x24x3 -> conv3x3 28, PRELU, maxpool 3x3 s2 (SAME),
    conv3x3 48, PRELU, maxpool 3x3 s2 (VALID), conv2x2 64, PRELU, reshape,
    FC 128, PRELU -> FC 2 + SOFTMAX, FC 4."""
    net = Net("rnet", [batch, 24, 24, 3], seed)
    x = net.prelu(net.conv("input", 28, 3))
    x = net.maxpool(x, 3, 2, "SAME")
    x = net.prelu(net.conv(x, 48, 3))
    x = net.maxpool(x, 3, 2, "VALID")
    x = net.prelu(net.conv(x, 64, 2))
    x = net.prelu(net.fc(net.reshape(x), 128))
    prob = net.softmax(net.fc(x, 2))
    box = net.fc(x, 4)
    net.outputs = [prob, box]
    return net


def steps(actual, expected):
    """|actual - expected| in quantization steps (int8 tensors)."""
    return np.abs(np.asarray(actual, np.int32) - np.asarray(expected, np.int32))


def summary(actual, expected):
    d = steps(actual, expected)
    return dict(within1=float((d <= 1).mean()), exact=float((d == 0).mean()), max=int(d.max()),
                mean_signed=float((np.asarray(actual, np.int32) - np.asarray(expected, np.int32)).mean()))
