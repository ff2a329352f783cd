"""Single-op test models for test_ops.py (and test_elementwise.py,
test_layout_graphs.py), one module per op family: conv, elementwise,
layout, spatial (pooling, bilinear resize), math_ops, sequence (LSTM/RNN), shape_fold
(SHAPE chains), layer_norm (fused statistics); _common holds Case
and the graph helpers.

Each Case holds a readable id and a `build(mb, rng, cpu)` function that writes
one small graph into a ModelBuilder and returns the runtime inputs.  It is
called twice with the same seed: once for the model the delegate runs
(cpu=False) and once for the CPU reference (cpu=True).  The two are the same
graph except where the stock CPU kernels cannot run what the delegate must:

* CONV_2D / DEPTHWISE_CONV_2D without bias (input 2 = -1): the TFLite CPU
  kernels require a float bias ("Tensor at index 2 was optional but was
  expected"), so the reference gets an explicit zero bias instead.
* Fused TANH: the CPU kernels silently ignore it (CalculateActivationRange
  only knows the RELU family), so the delegate keeps such nodes on the CPU
  and the reference is the same model. CONCATENATION on the CPU rejects any
  fused activation, so its reference runs the activation as its own op.
"""

from ._common import ACTIVATIONS, CHANNELS, SPATIAL, Case  # noqa: F401
from .conv import (KERNELS, absorbed_dequantize_cases, conv_cases, densify_cases, depthwise_cases,
                   fully_connected_cases)  # noqa: F401
from .elementwise import (BINARY_KINDS, COMPARISONS, UNARY_KINDS, UNARY_SHAPES, activation_op_cases, add_n_cases,
                          binary_cases, cast_cases, elementwise_cases, elementwise_graph_cases, ew_binary_cases,
                          math_unary_cases, prelu_cases, relu_cases, select_cases)  # noqa: F401
from .layout import (NEAREST_MODES, concat_cases, depth_to_space_cases, expand_squeeze_cases, gather_cases,
                     mirror_pad_cases, one_hot_cases, pack_cases, pad_cases, padv2_cases, reshape_cases,
                     resize_nearest_cases, reverse_cases, slice_cases, space_to_depth_cases, split_cases,
                     strided_slice_cases, tile_cases, transpose_cases, unpack_cases)  # noqa: F401
from .math_ops import (arg_minmax_cases, batch_matmul_cases, cumsum_cases, l2_norm_cases, lstm_cases, math_cases,
                       mean_cases, reduce_cases, softmax_cases)  # noqa: F401
from .sequence import sequence_cases  # noqa: F401
from .shape_fold import shape_fold_cases  # noqa: F401
from .layer_norm import layer_norm_cases  # noqa: F401
from .space_batch import space_batch_cases  # noqa: F401
from .spatial import RESIZE_MODES, avgpool_cases, maxpool_cases, resize_cases  # noqa: F401
from ._common import _unique


def all_cases():
    return _unique(conv_cases() + depthwise_cases() + binary_cases("ADD") + binary_cases("MUL")
                   + concat_cases() + maxpool_cases() + avgpool_cases() + pad_cases() + prelu_cases()
                   + relu_cases() + activation_op_cases() + reshape_cases() + strided_slice_cases()
                   + densify_cases() + resize_cases() + mean_cases() + fully_connected_cases()
                   + depth_to_space_cases() + math_cases() + transpose_cases() + slice_cases() + split_cases()
                   + pack_cases() + unpack_cases() + tile_cases() + mirror_pad_cases() + padv2_cases()
                   + space_to_depth_cases() + resize_nearest_cases() + gather_cases() + one_hot_cases()
                   + elementwise_cases() + expand_squeeze_cases() + reverse_cases() + space_batch_cases()
                   + sequence_cases() + shape_fold_cases() + layer_norm_cases())
