"""Write small, valid .tflite flatbuffers (schema version 3) for tests.

Built on the generated builder functions of the `tflite` package, so every
table and field name below is the schema's own.  Only one subgraph is
written; that is all single-op test models need.

Example::

    mb = ModelBuilder()
    x = mb.add_input([1, 7, 9, 3])
    w = mb.add_tensor([8, 3, 3, 3], data=weights)
    b = mb.add_tensor([8], data=bias)
    y = mb.add_tensor([1, 7, 9, 8])
    mb.add_op("CONV_2D", [x, w, b], [y], dict(padding="SAME", fused_activation="RELU6"))
    mb.mark_output(y)
    model_bytes = mb.build()
"""

import flatbuffers
import numpy as np
import tflite

_FILE_IDENTIFIER = b"TFL3"
_SCHEMA_VERSION = 3
# Constant data starts on a 16-byte boundary so a reader may use it in place.
# (The MediaPipe models only guarantee 4: readers must not rely on more.)
_BUFFER_ALIGNMENT = 16

_TENSOR_TYPES = {
    np.dtype(np.float32): tflite.TensorType.FLOAT32,
    np.dtype(np.float16): tflite.TensorType.FLOAT16,
    np.dtype(np.int32): tflite.TensorType.INT32,
    np.dtype(np.uint8): tflite.TensorType.UINT8,
    np.dtype(np.int64): tflite.TensorType.INT64,
    np.dtype(np.int8): tflite.TensorType.INT8,
    np.dtype(np.int16): tflite.TensorType.INT16,
    np.dtype(np.bool_): tflite.TensorType.BOOL,
}


def _enum_value(enum_cls, value):
    """Accept an enum member name ("RELU6") or its integer value."""
    if isinstance(value, str):
        try:
            return getattr(enum_cls, value.upper())
        except AttributeError:
            raise ValueError(f"unknown {enum_cls.__name__} {value!r}") from None
    return int(value)


def _activation(value):
    return _enum_value(tflite.ActivationFunctionType, value)


def _padding(value):
    return _enum_value(tflite.Padding, value)


def _int_vector(value):
    return np.asarray(value, dtype=np.int32).reshape(-1)


# Readable option key -> (schema field name, value converter).  Field names
# are shared across the *Options tables, so one map serves every op; a key
# that the op's table lacks is rejected when the model is built.
_FIELDS = {
    "padding": ("Padding", _padding),
    "radius": ("Radius", int),
    "bias": ("Bias", float),
    "stride_w": ("StrideW", int),
    "stride_h": ("StrideH", int),
    "dilation_w": ("DilationWFactor", int),
    "dilation_h": ("DilationHFactor", int),
    "depth_multiplier": ("DepthMultiplier", int),
    "fused_activation": ("FusedActivationFunction", _activation),
    "filter_w": ("FilterWidth", int),
    "filter_h": ("FilterHeight", int),
    "axis": ("Axis", int),
    "new_shape": ("NewShape", _int_vector),
    "squeeze_dims": ("SqueezeDims", _int_vector),
    "begin_mask": ("BeginMask", int),
    "end_mask": ("EndMask", int),
    "ellipsis_mask": ("EllipsisMask", int),
    "new_axis_mask": ("NewAxisMask", int),
    "shrink_axis_mask": ("ShrinkAxisMask", int),
    "offset": ("Offset", bool),
    "keep_num_dims": ("KeepNumDims", bool),
    "keep_dims": ("KeepDims", bool),
    "align_corners": ("AlignCorners", bool),
    "half_pixel_centers": ("HalfPixelCenters", bool),
    "block_size": ("BlockSize", int),
    "beta": ("Beta", float),
    "adj_x": ("AdjX", bool),
    "adj_y": ("AdjY", bool),
    "exclusive": ("Exclusive", bool),
    "reverse": ("Reverse", bool),
    "cell_clip": ("CellClip", float),
    "proj_clip": ("ProjClip", float),
    "kernel_type": ("KernelType", lambda v: _enum_value(tflite.LSTMKernelType, v)),
    "time_major": ("TimeMajor", bool),
    "merge_outputs": ("MergeOutputs", bool),
    "num_splits": ("NumSplits", int),
    "values_count": ("ValuesCount", int),
    "num": ("Num", int),
    "batch_dims": ("BatchDims", int),
    "mode": ("Mode", lambda v: _enum_value(tflite.MirrorPadMode, v)),
    "alpha": ("Alpha", float),
    "approximate": ("Approximate", bool),
    "output_type": ("OutputType", lambda v: _enum_value(tflite.TensorType, v)),
    "out_type": ("OutType", lambda v: _enum_value(tflite.TensorType, v)),
}

_CONV_DEFAULTS = dict(padding="SAME", stride_w=1, stride_h=1,
                      fused_activation="NONE", dilation_w=1, dilation_h=1)
_POOL_DEFAULTS = dict(padding="SAME", stride_w=1, stride_h=1,
                      filter_w=1, filter_h=1, fused_activation="NONE")
_ACT_DEFAULTS = dict(fused_activation="NONE")

# Builtin op -> (options table, defaults).  Defaults are written explicitly
# because several schema defaults are unusable (stride 0, softmax beta 0).
# Builtin ops missing here are written with BuiltinOptions NONE.
_OPTIONS = {
    "CONV_2D": ("Conv2DOptions", _CONV_DEFAULTS),
    "DEPTHWISE_CONV_2D": ("DepthwiseConv2DOptions",
                          dict(_CONV_DEFAULTS, depth_multiplier=1)),
    "TRANSPOSE_CONV": ("TransposeConvOptions",
                       dict(padding="SAME", stride_w=1, stride_h=1,
                            fused_activation="NONE")),
    "ADD": ("AddOptions", _ACT_DEFAULTS),
    "SUB": ("SubOptions", _ACT_DEFAULTS),
    "MUL": ("MulOptions", _ACT_DEFAULTS),
    "DIV": ("DivOptions", _ACT_DEFAULTS),
    "CONCATENATION": ("ConcatenationOptions",
                      dict(axis=0, fused_activation="NONE")),
    "MAX_POOL_2D": ("Pool2DOptions", _POOL_DEFAULTS),
    "AVERAGE_POOL_2D": ("Pool2DOptions", _POOL_DEFAULTS),
    "RESHAPE": ("ReshapeOptions", {}),
    "STRIDED_SLICE": ("StridedSliceOptions", {}),
    "PAD": ("PadOptions", {}),
    "PADV2": ("PadV2Options", {}),
    "FULLY_CONNECTED": ("FullyConnectedOptions",
                        dict(fused_activation="NONE", keep_num_dims=False)),
    "MEAN": ("ReducerOptions", dict(keep_dims=False)),
    "SUM": ("ReducerOptions", dict(keep_dims=False)),
    "REDUCE_MAX": ("ReducerOptions", dict(keep_dims=False)),
    "REDUCE_MIN": ("ReducerOptions", dict(keep_dims=False)),
    "REDUCE_PROD": ("ReducerOptions", dict(keep_dims=False)),
    "CUMSUM": ("CumsumOptions", dict(exclusive=False, reverse=False)),
    "BATCH_MATMUL": ("BatchMatMulOptions", dict(adj_x=False, adj_y=False)),
    "LOG_SOFTMAX": ("LogSoftmaxOptions", {}),
    "LSTM": ("LSTMOptions", dict(fused_activation="TANH", cell_clip=0.0, proj_clip=0.0,
                                 kernel_type="BASIC")),
    "RESIZE_BILINEAR": ("ResizeBilinearOptions",
                        dict(align_corners=False, half_pixel_centers=False)),
    "DEPTH_TO_SPACE": ("DepthToSpaceOptions", dict(block_size=2)),
    "SPACE_TO_DEPTH": ("SpaceToDepthOptions", dict(block_size=2)),
    "SOFTMAX": ("SoftmaxOptions", dict(beta=1.0)),
    "TRANSPOSE": ("TransposeOptions", {}),
    "SLICE": ("SliceOptions", {}),
    "SPLIT": ("SplitOptions", dict(num_splits=1)),
    "SPLIT_V": ("SplitVOptions", dict(num_splits=1)),
    "PACK": ("PackOptions", dict(values_count=1, axis=0)),
    "UNPACK": ("UnpackOptions", dict(num=1, axis=0)),
    "TILE": ("TileOptions", {}),
    "GATHER": ("GatherOptions", dict(axis=0, batch_dims=0)),
    "MIRROR_PAD": ("MirrorPadOptions", dict(mode="REFLECT")),
    "RESIZE_NEAREST_NEIGHBOR": ("ResizeNearestNeighborOptions",
                                dict(align_corners=False, half_pixel_centers=False)),
    "ONE_HOT": ("OneHotOptions", dict(axis=-1)),
    "LEAKY_RELU": ("LeakyReluOptions", dict(alpha=0.2)),
    "GELU": ("GeluOptions", dict(approximate=False)),
    "SQUEEZE": ("SqueezeOptions", {}),
    "EXPAND_DIMS": ("ExpandDimsOptions", {}),
    "ARG_MAX": ("ArgMaxOptions", dict(output_type="INT32")),
    "ARG_MIN": ("ArgMinOptions", dict(output_type="INT32")),
    "L2_NORMALIZATION": ("L2NormOptions", _ACT_DEFAULTS),
    "LOCAL_RESPONSE_NORMALIZATION": ("LocalResponseNormalizationOptions",
                                     dict(radius=5, bias=1.0, alpha=1.0, beta=0.5)),
    "REVERSE_V2": ("ReverseV2Options", {}),
    "SHAPE": ("ShapeOptions", dict(out_type="INT32")),
    "UNIDIRECTIONAL_SEQUENCE_LSTM": ("UnidirectionalSequenceLSTMOptions",
                                     dict(fused_activation="TANH", cell_clip=0.0, proj_clip=0.0,
                                          time_major=False)),
    "BIDIRECTIONAL_SEQUENCE_LSTM": ("BidirectionalSequenceLSTMOptions",
                                    dict(fused_activation="TANH", cell_clip=0.0, proj_clip=0.0,
                                         merge_outputs=False, time_major=True)),
    "UNIDIRECTIONAL_SEQUENCE_RNN": ("SequenceRNNOptions",
                                    dict(fused_activation="TANH", time_major=False)),
}


def _builtin_code(op_name):
    try:
        return getattr(tflite.BuiltinOperator, op_name)
    except AttributeError:
        raise ValueError(f"unknown builtin operator {op_name!r}") from None


def _schema_fn(table, suffix):
    """The generated free function `<table><suffix>`, e.g. Conv2DOptionsStart."""
    return getattr(tflite, table + suffix)


def _tensor_type(dtype):
    dtype = np.dtype(dtype)
    if dtype not in _TENSOR_TYPES:
        raise ValueError(f"unsupported tensor dtype {dtype}")
    return _TENSOR_TYPES[dtype]


def _smallest_index_type(max_value):
    """Narrowest SparseIndexVector that holds max_value, as the converter picks."""
    if max_value <= np.iinfo(np.uint8).max:
        return "uint8"
    if max_value <= np.iinfo(np.uint16).max:
        return "uint16"
    return "int32"


# Sparse index vector element type -> (union tag, table name, numpy dtype).
_INDEX_VECTORS = {
    "uint8": (tflite.SparseIndexVector.Uint8Vector, "Uint8Vector", np.uint8),
    "uint16": (tflite.SparseIndexVector.Uint16Vector, "Uint16Vector", np.uint16),
    "int32": (tflite.SparseIndexVector.Int32Vector, "Int32Vector", np.int32),
}


def csr_encode(dense):
    """CSR over (prod(shape[:-1]), shape[-1]): (values, segments, indices).

    This is the layout the converter writes for MediaPipe's sparse weights:
    every dimension DENSE except the last, which is SPARSE_CSR.
    """
    rows = dense.reshape(-1, dense.shape[-1])
    nonzero = rows != 0
    indices = np.nonzero(nonzero)[1]
    segments = np.concatenate([[0], np.cumsum(nonzero.sum(axis=1))])
    return rows[nonzero], segments, indices


class ModelBuilder:
    """Collects tensors and ops of one subgraph, then serializes them."""

    def __init__(self):
        self._tensors = []      # dicts, see add_tensor
        self._buffers = [b""]  # buffer 0: the empty sentinel every schema-3 model has
        self._ops = []
        self._opcodes = []      # (builtin_code, custom_name, version)
        self._inputs = []
        self._outputs = []

    # -- graph construction ------------------------------------------------

    def add_tensor(self, shape, dtype=np.float32, data=None, name=None,
                   quant=None, shape_signature=None, variable=False):
        """Add a tensor; with `data` it is a constant with its own buffer.

        variable: a variable tensor (is_variable), state that ops such as
        UNIDIRECTIONAL_SEQUENCE_LSTM update in place and that persists
        across invokes; the runtime starts it at zero.

        quant: dict(scale=float|list, zero_point=int|list,
                    quantized_dimension=int): one scale (per-tensor) or one
        per index of quantized_dimension (per-channel), zero points alike
        (default 0); see quantization().
        """
        shape = [int(d) for d in shape]
        if quant is not None:
            quant = _checked_quant(quant, shape)
        buffer = 0
        if data is not None:
            data = np.asarray(data, dtype=dtype)
            if data.size != int(np.prod(shape)):
                raise ValueError(f"data has {data.size} elements, shape {shape} "
                                 f"needs {int(np.prod(shape))}")
            buffer = self._add_buffer(data)
        return self._add_tensor_record(
            shape=shape, type=_tensor_type(dtype), buffer=buffer, name=name,
            quant=quant, shape_signature=shape_signature, sparsity=None,
            variable=bool(variable))

    def add_sparse_tensor(self, dense, dtype=None, name=None, index_type=None):
        """Add a constant stored CSR-sparse, as the MediaPipe models store it.

        The buffer holds only the nonzero values.  index_type ("uint8",
        "uint16", "int32") defaults to the narrowest type that fits, which is
        what the converter does (the real models use Uint8 and Uint16).
        """
        dtype = np.dtype(dtype or dense.dtype)
        if dtype not in (np.dtype(np.float32), np.dtype(np.float16)):
            raise ValueError("sparse tensors must be float32 or float16")
        dense = np.asarray(dense, dtype=dtype)  # zeros are judged after the cast
        if dense.ndim < 1:
            raise ValueError("sparse tensors need rank >= 1")
        values, segments, indices = csr_encode(dense)
        sparsity = dict(
            dims=list(dense.shape),
            segments=segments,
            indices=indices,
            segments_type=index_type or _smallest_index_type(segments[-1]),
            indices_type=index_type or _smallest_index_type(dense.shape[-1] - 1),
        )
        return self._add_tensor_record(
            shape=list(dense.shape), type=_tensor_type(dtype),
            buffer=self._add_buffer(values), name=name, quant=None,
            shape_signature=None, sparsity=sparsity)

    def add_input(self, shape, dtype=np.float32, name=None, quant=None):
        """Add a runtime tensor and list it as a graph input."""
        index = self.add_tensor(shape, dtype, name=name, quant=quant)
        self._inputs.append(index)
        return index

    def add_op(self, op, inputs, outputs, options=None, version=1,
               custom_options=None):
        """Add an operator: a builtin name ("CONV_2D") or "CUSTOM:<name>".

        inputs may hold -1 for an optional input that is absent.  (The stock
        CPU float CONV_2D / DEPTHWISE_CONV_2D kernels reject an absent bias;
        the converter always writes one.)
        """
        if op.startswith("CUSTOM:"):
            key = (tflite.BuiltinOperator.CUSTOM, op[len("CUSTOM:"):], version)
            if options:
                raise ValueError("custom ops take custom_options, not options")
        else:
            key = (_builtin_code(op), None, version)
            if options and op not in _OPTIONS:
                raise ValueError(f"{op} has no builtin options")
        if key not in self._opcodes:
            self._opcodes.append(key)
        self._ops.append(dict(
            opcode=self._opcodes.index(key), name=op,
            inputs=[int(i) for i in inputs], outputs=[int(o) for o in outputs],
            options=dict(options or {}), custom_options=custom_options))

    def mark_output(self, tensor):
        self._outputs.append(int(tensor))

    # -- serialization -----------------------------------------------------

    def build(self):
        """Serialize to .tflite bytes."""
        b = flatbuffers.Builder(1024)
        buffers = [self._write_buffer(b, data) for data in self._buffers]
        tensors = [self._write_tensor(b, i, t) for i, t in enumerate(self._tensors)]
        operators = [self._write_operator(b, op) for op in self._ops]
        opcodes = [self._write_opcode(b, *key) for key in self._opcodes]

        name = b.CreateString("main")
        tensor_vec = _table_vector(b, tensors)
        op_vec = _table_vector(b, operators)
        inputs = b.CreateNumpyVector(_int_vector(self._inputs))
        outputs = b.CreateNumpyVector(_int_vector(self._outputs))
        tflite.SubGraphStart(b)
        tflite.SubGraphAddTensors(b, tensor_vec)
        tflite.SubGraphAddInputs(b, inputs)
        tflite.SubGraphAddOutputs(b, outputs)
        tflite.SubGraphAddOperators(b, op_vec)
        tflite.SubGraphAddName(b, name)
        subgraph = tflite.SubGraphEnd(b)

        description = b.CreateString("tflite_gpu.model_builder")
        opcode_vec = _table_vector(b, opcodes)
        subgraph_vec = _table_vector(b, [subgraph])
        buffer_vec = _table_vector(b, buffers)
        tflite.ModelStart(b)
        tflite.ModelAddVersion(b, _SCHEMA_VERSION)
        tflite.ModelAddOperatorCodes(b, opcode_vec)
        tflite.ModelAddSubgraphs(b, subgraph_vec)
        tflite.ModelAddDescription(b, description)
        tflite.ModelAddBuffers(b, buffer_vec)
        b.Finish(tflite.ModelEnd(b), file_identifier=_FILE_IDENTIFIER)
        return bytes(b.Output())

    # -- internals ---------------------------------------------------------

    def _add_buffer(self, array):
        self._buffers.append(np.ascontiguousarray(array).astype(
            array.dtype.newbyteorder("<"), copy=False).tobytes())
        return len(self._buffers) - 1

    def _add_tensor_record(self, **record):
        if record["name"] is None:
            record["name"] = f"tensor_{len(self._tensors)}"
        self._tensors.append(record)
        return len(self._tensors) - 1

    @staticmethod
    def _write_buffer(b, data):
        if not data:  # sentinel / no data: an empty table, like the converter
            tflite.BufferStart(b)
            return tflite.BufferEnd(b)
        vec = _aligned_bytes(b, data, _BUFFER_ALIGNMENT)
        tflite.BufferStart(b)
        tflite.BufferAddData(b, vec)
        return tflite.BufferEnd(b)

    def _write_tensor(self, b, index, t):
        name = b.CreateString(t["name"])
        shape = b.CreateNumpyVector(_int_vector(t["shape"]))
        signature = None
        if t["shape_signature"] is not None:
            signature = b.CreateNumpyVector(_int_vector(t["shape_signature"]))
        quant = _write_quantization(b, t["quant"]) if t["quant"] else None
        sparsity = _write_sparsity(b, t["sparsity"]) if t["sparsity"] else None

        tflite.TensorStart(b)
        tflite.TensorAddShape(b, shape)
        tflite.TensorAddType(b, t["type"])
        tflite.TensorAddBuffer(b, t["buffer"])
        tflite.TensorAddName(b, name)
        if quant is not None:
            tflite.TensorAddQuantization(b, quant)
        if sparsity is not None:
            tflite.TensorAddSparsity(b, sparsity)
        if signature is not None:
            tflite.TensorAddShapeSignature(b, signature)
        if t.get("variable"):
            tflite.TensorAddIsVariable(b, True)
        return tflite.TensorEnd(b)

    @staticmethod
    def _write_operator(b, op):
        options_type, options = _write_builtin_options(b, op["name"], op["options"])
        custom = None
        if op["custom_options"] is not None:
            custom = b.CreateByteVector(bytes(op["custom_options"]))
        inputs = b.CreateNumpyVector(_int_vector(op["inputs"]))
        outputs = b.CreateNumpyVector(_int_vector(op["outputs"]))

        tflite.OperatorStart(b)
        tflite.OperatorAddOpcodeIndex(b, op["opcode"])
        tflite.OperatorAddInputs(b, inputs)
        tflite.OperatorAddOutputs(b, outputs)
        tflite.OperatorAddBuiltinOptionsType(b, options_type)
        if options is not None:
            tflite.OperatorAddBuiltinOptions(b, options)
        if custom is not None:
            tflite.OperatorAddCustomOptions(b, custom)
            tflite.OperatorAddCustomOptionsFormat(
                b, tflite.CustomOptionsFormat.FLEXBUFFERS)
        return tflite.OperatorEnd(b)

    @staticmethod
    def _write_opcode(b, code, custom_name, version):
        custom = b.CreateString(custom_name) if custom_name is not None else None
        tflite.OperatorCodeStart(b)
        # Codes above 127 do not fit the old int8 field; the converter writes
        # the PLACEHOLDER value 127 there and the real code in builtin_code.
        tflite.OperatorCodeAddDeprecatedBuiltinCode(b, min(code, 127))
        tflite.OperatorCodeAddBuiltinCode(b, code)
        tflite.OperatorCodeAddVersion(b, version)
        if custom is not None:
            tflite.OperatorCodeAddCustomCode(b, custom)
        return tflite.OperatorCodeEnd(b)


# -- flatbuffer helpers -----------------------------------------------------

def _table_vector(b, offsets):
    """A vector of table offsets (flatbuffers are built back to front)."""
    b.StartVector(4, len(offsets), 4)
    for off in reversed(offsets):
        b.PrependUOffsetTRelative(off)
    return b.EndVector()


def _aligned_bytes(b, data, alignment):
    """A [ubyte] vector whose payload starts on an `alignment` boundary."""
    b.StartVector(1, len(data), alignment)
    b.head -= len(data)
    b.Bytes[b.head:b.head + len(data)] = data
    return b.EndVector()


def _write_builtin_options(b, op_name, options):
    """Returns (BuiltinOptions union tag, table offset or None)."""
    if op_name not in _OPTIONS:
        return tflite.BuiltinOptions.NONE, None
    table, defaults = _OPTIONS[op_name]
    values = dict(defaults, **options)

    fields = []
    for key, value in values.items():
        if key not in _FIELDS:
            raise ValueError(f"{op_name}: unknown option {key!r}")
        field, convert = _FIELDS[key]
        if not hasattr(tflite, f"{table}Add{field}"):
            raise ValueError(f"{op_name}: {table} has no field for {key!r}")
        value = convert(value)
        if isinstance(value, np.ndarray):  # vectors must precede the table
            value = b.CreateNumpyVector(value)
        fields.append((field, value))

    _schema_fn(table, "Start")(b)
    for field, value in fields:
        _schema_fn(table, f"Add{field}")(b, value)
    return getattr(tflite.BuiltinOptions, table), _schema_fn(table, "End")(b)


def quantization(scale, zero_point=0, axis=None):
    """Affine quantization params for add_tensor/add_input: real = scale *
    (q - zero_point). A scalar scale is per-tensor; a list is per-channel
    along `axis` (one scale and zero point per index of that dimension)."""
    scales = np.asarray(scale, np.float64).reshape(-1)
    zps = np.broadcast_to(np.asarray(zero_point, np.int64).reshape(-1), scales.shape)
    if np.ndim(scale) and axis is None:
        raise ValueError("per-channel quantization needs the axis (quantized_dimension)")
    return dict(scale=scales.tolist(), zero_point=zps.tolist(), quantized_dimension=int(axis or 0))


def _checked_quant(quant, shape):
    """Validates a quant dict against the tensor shape; clear errors early."""
    scale = np.asarray(quant.get("scale", []), np.float64).reshape(-1)
    zero_point = np.asarray(quant.get("zero_point", [0] * len(scale)), np.int64).reshape(-1)
    axis = int(quant.get("quantized_dimension", 0))
    if len(scale) == 0 or not np.all(scale > 0):
        raise ValueError(f"quantization scales must be > 0, got {scale.tolist()}")
    if len(zero_point) != len(scale):
        raise ValueError(f"{len(scale)} scale(s) but {len(zero_point)} zero point(s)")
    if len(scale) > 1 and not (0 <= axis < len(shape) and shape[axis] == len(scale)):
        raise ValueError(f"{len(scale)} per-channel scales do not match dimension {axis} of shape {shape}")
    return quant


def _write_quantization(b, quant):
    scale = np.asarray(quant.get("scale", []), dtype=np.float32).reshape(-1)
    zero_point = np.asarray(quant.get("zero_point", [0] * len(scale)),
                            dtype=np.int64).reshape(-1)
    scale_vec = b.CreateNumpyVector(scale)
    zero_vec = b.CreateNumpyVector(zero_point)
    tflite.QuantizationParametersStart(b)
    tflite.QuantizationParametersAddScale(b, scale_vec)
    tflite.QuantizationParametersAddZeroPoint(b, zero_vec)
    tflite.QuantizationParametersAddQuantizedDimension(
        b, int(quant.get("quantized_dimension", 0)))
    return tflite.QuantizationParametersEnd(b)


def _write_index_vector(b, values, type_name):
    """An Int32Vector/Uint16Vector/Uint8Vector table; returns (tag, offset)."""
    tag, table, dtype = _INDEX_VECTORS[type_name]
    vec = b.CreateNumpyVector(np.asarray(values, dtype=dtype))
    _schema_fn(table, "Start")(b)
    _schema_fn(table, "AddValues")(b, vec)
    return tag, _schema_fn(table, "End")(b)


def _write_dim_metadata(b, dense_size=None, segments=None, indices=None):
    """DENSE when dense_size is given, else SPARSE_CSR (segments, indices)."""
    if dense_size is not None:
        tflite.DimensionMetadataStart(b)
        tflite.DimensionMetadataAddFormat(b, tflite.DimensionType.DENSE)
        tflite.DimensionMetadataAddDenseSize(b, dense_size)
        return tflite.DimensionMetadataEnd(b)
    seg_tag, seg = _write_index_vector(b, *segments)
    idx_tag, idx = _write_index_vector(b, *indices)
    tflite.DimensionMetadataStart(b)
    tflite.DimensionMetadataAddFormat(b, tflite.DimensionType.SPARSE_CSR)
    tflite.DimensionMetadataAddArraySegmentsType(b, seg_tag)
    tflite.DimensionMetadataAddArraySegments(b, seg)
    tflite.DimensionMetadataAddArrayIndicesType(b, idx_tag)
    tflite.DimensionMetadataAddArrayIndices(b, idx)
    return tflite.DimensionMetadataEnd(b)


def _write_sparsity(b, sp):
    dims = sp["dims"]
    metadata = [_write_dim_metadata(b, dense_size=d) for d in dims[:-1]]
    metadata.append(_write_dim_metadata(
        b, segments=(sp["segments"], sp["segments_type"]),
        indices=(sp["indices"], sp["indices_type"])))
    traversal = b.CreateNumpyVector(_int_vector(range(len(dims))))
    metadata_vec = _table_vector(b, metadata)
    tflite.SparsityParametersStart(b)
    tflite.SparsityParametersAddTraversalOrder(b, traversal)
    tflite.SparsityParametersAddDimMetadata(b, metadata_vec)
    return tflite.SparsityParametersEnd(b)
