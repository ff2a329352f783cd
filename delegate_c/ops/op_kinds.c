/* See op_kinds.h. */
#include "ops/op_kinds.h"

#include "encode/encode.h"

static const GOpDesc* const kDescs[GOP_NUM] = {
    [GOP_ARG_MINMAX] = &kGOpArgMinmax,
    [GOP_BATCH_MATMUL] = &kGOpBatchMatmul,
    [GOP_BATCH_TO_SPACE] = &kGOpBatchToSpace,
    [GOP_BINARY] = &kGOpBinary,
    [GOP_CONCAT] = &kGOpConcat,
    [GOP_CONV2D] = &kGOpConv2d,
    [GOP_CUMSUM] = &kGOpCumsum,
    [GOP_DEPTHWISE] = &kGOpDepthwise,
    [GOP_DEPTH_TO_SPACE] = &kGOpDepthToSpace,
    [GOP_DW_CONV1X1] = &kGOpDwConv1x1,
    [GOP_FC_HEADS] = &kGOpFcHeads,
    [GOP_FC_PAIR] = &kGOpFcPair,
    [GOP_FULLY_CONNECTED] = &kGOpFullyConnected,
    [GOP_INT8_EXACT] = &kGOpInt8Exact,
    [GOP_L2_NORM] = &kGOpL2Norm,
    [GOP_LANDMARKS_TO_MATRIX] = &kGOpLandmarksToMatrix,
    [GOP_LRN] = &kGOpLrn,
    [GOP_LSTM_CELL] = &kGOpLstmCell,
    [GOP_MAX_POOL_ARGMAX] = &kGOpMaxPoolArgmax,
    [GOP_MAX_UNPOOL] = &kGOpMaxUnpool,
    [GOP_NORM_STATS] = &kGOpNormStats,
    [GOP_ONE_HOT] = &kGOpOneHot,
    [GOP_POOL] = &kGOpPool,
    [GOP_PW_DEPTHWISE] = &kGOpPwDepthwise,
    [GOP_QUANTIZE] = &kGOpQuantize,
    [GOP_REDUCE] = &kGOpReduce,
    [GOP_REMAP] = &kGOpRemap,
    [GOP_RESAMPLER] = &kGOpResampler,
    [GOP_RESIZE_BILINEAR] = &kGOpResizeBilinear,
    [GOP_RESIZE_NEAREST] = &kGOpResizeNearest,
    [GOP_SEQUENCE] = &kGOpSequence,
    [GOP_SOFTMAX] = &kGOpSoftmax,
    [GOP_SPACE_TO_BATCH] = &kGOpSpaceToBatch,
    [GOP_SPACE_TO_DEPTH] = &kGOpSpaceToDepth,
    [GOP_STORAGE_CAST] = &kGOpStorageCast,
    [GOP_TRANSFORM_LANDMARKS] = &kGOpTransformLandmarks,
    [GOP_TRANSFORM_TENSOR] = &kGOpTransformTensor,
    [GOP_TRANSPOSE_CONV] = &kGOpTransposeConv,
    [GOP_UNARY] = &kGOpUnary,
};

const GOpDesc* op_desc(GOp op) { return op > GOP_NONE && op < GOP_NUM ? kDescs[op] : NULL; }

int op_encode(Encoder* ex, int node) {
  const GOpDesc* d = op_desc(ex->g.nodes[node].op);
  if (!d) return ex_fail(ex, "node %d has no kind an encoder takes", node);
  return d->encode(ex, node);
}
