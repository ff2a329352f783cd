/* The registry: every TFLite op the delegate runs, as the descriptor its
 * op file exports (OpDef, op_table.h). Partitioning (op_check.c), the
 * `ops` listing and the README's op table all come from this list. */
#include "ops/op_table.h"

#include <stdio.h>
#include <string.h>

#include "model/tflite_builtins.h"

/* Version limits follow upstream 2.14's GPU delegate (model_builder.cc);
 * RESHAPE and PRELU are v1 there too. Upstream sets none for MEAN,
 * DEPTH_TO_SPACE, SUM, REDUCE_MAX/MIN/PROD, BATCH_MATMUL, PACK, UNPACK,
 * SPLIT, SPLIT_V, TILE and CAST: theirs are the 2.14 runtime's versions,
 * whose later ones only add integer types (refused by the tensor check
 * anyway). LOG_SOFTMAX is not in upstream's table; its v2 is int8. */
/* One line per op, its descriptor and the file that defines it. */
#define TFLITE_GPU_OPS(X) \
  X(kOpAbs)                               /* ops_elementwise.c */   \
  X(kOpAdd)                               /* ops_elementwise.c */   \
  X(kOpAddN)                              /* ops_elementwise.c */   \
  X(kOpArgMax)                            /* ops_argminmax.c */     \
  X(kOpArgMin)                            /* ops_argminmax.c */     \
  X(kOpAveragePool2d)                     /* ops_pool.c */          \
  X(kOpBatchToSpaceNd)                    /* ops_space_batch.c */   \
  X(kOpBidirectionalSequenceLstm)         /* ops_sequence.c */      \
  X(kOpBatchMatmul)                       /* ops_batch_matmul.c */  \
  X(kOpCast)                              /* ops_elementwise.c */   \
  X(kOpConcatenation)                     /* ops_layout.c */        \
  X(kOpConv2d)                            /* ops_conv.c */          \
  X(kOpCos)                               /* ops_elementwise.c */   \
  X(kOpCumsum)                            /* ops_cumsum.c */        \
  X(kOpCustomConvolution2DTransposeBias)  /* ops_transpose_conv.c */ \
  X(kOpCustomLandmarks2TransformMatrix)   /* ops_landmarks.c */     \
  X(kOpCustomMaxPoolingWithArgmax2D)      /* ops_pool_argmax.c */   \
  X(kOpCustomMaxUnpooling2D)              /* ops_pool_argmax.c */   \
  X(kOpCustomResampler)                   /* ops_resampler.c */     \
  X(kOpCustomTransformLandmarks)          /* ops_landmarks.c */     \
  X(kOpCustomTransformTensor)             /* ops_transform_tensor.c */ \
  X(kOpCustomTransformTensorBilinear)     /* ops_transform_tensor.c */ \
  X(kOpDensify)                           /* ops_densify.c */       \
  X(kOpDepthwiseConv2d)                   /* ops_conv.c */          \
  X(kOpDepthToSpace)                      /* ops_depth_to_space.c */ \
  X(kOpDequantize)                        /* ops_quantize.c */      \
  X(kOpDiv)                               /* ops_elementwise.c */   \
  X(kOpElu)                               /* ops_elementwise.c */   \
  X(kOpEqual)                             /* ops_elementwise.c */   \
  X(kOpExp)                               /* ops_elementwise.c */   \
  X(kOpFloor)                             /* ops_elementwise.c */   \
  X(kOpFloorDiv)                          /* ops_elementwise.c */   \
  X(kOpFloorMod)                          /* ops_elementwise.c */   \
  X(kOpFullyConnected)                    /* ops_fully_connected.c */ \
  X(kOpGather)                            /* ops_gather.c */        \
  X(kOpGelu)                              /* ops_elementwise.c */   \
  X(kOpGreater)                           /* ops_elementwise.c */   \
  X(kOpGreaterEqual)                      /* ops_elementwise.c */   \
  X(kOpHardSwish)                         /* ops_elementwise.c */   \
  X(kOpL2Normalization)                   /* ops_l2norm.c */        \
  X(kOpLeakyRelu)                         /* ops_elementwise.c */   \
  X(kOpLess)                              /* ops_elementwise.c */   \
  X(kOpLessEqual)                         /* ops_elementwise.c */   \
  X(kOpLocalResponseNormalization)        /* ops_lrn.c */           \
  X(kOpLog)                               /* ops_elementwise.c */   \
  X(kOpLogicalAnd)                        /* ops_elementwise.c */   \
  X(kOpLogistic)                          /* ops_elementwise.c */   \
  X(kOpLogSoftmax)                        /* ops_softmax.c */       \
  X(kOpLstm)                              /* ops_lstm.c */          \
  X(kOpMaximum)                           /* ops_elementwise.c */   \
  X(kOpMaxPool2d)                         /* ops_pool.c */          \
  X(kOpMean)                              /* ops_reduce.c */        \
  X(kOpMinimum)                           /* ops_elementwise.c */   \
  X(kOpMirrorPad)                         /* ops_layout.c */        \
  X(kOpMul)                               /* ops_elementwise.c */   \
  X(kOpNeg)                               /* ops_elementwise.c */   \
  X(kOpNotEqual)                          /* ops_elementwise.c */   \
  X(kOpOneHot)                            /* ops_gather.c */        \
  X(kOpPack)                              /* ops_remap.c */         \
  X(kOpPad)                               /* ops_layout.c */        \
  X(kOpPadv2)                             /* ops_layout.c */        \
  X(kOpPow)                               /* ops_elementwise.c */   \
  X(kOpPrelu)                             /* ops_elementwise.c */   \
  X(kOpQuantize)                          /* ops_quantize.c */      \
  X(kOpReduceMax)                         /* ops_reduce.c */        \
  X(kOpReduceMin)                         /* ops_reduce.c */        \
  X(kOpReduceProd)                        /* ops_reduce.c */        \
  X(kOpRelu)                              /* ops_elementwise.c */   \
  X(kOpRelu6)                             /* ops_elementwise.c */   \
  X(kOpReluN1To1)                         /* ops_elementwise.c */   \
  X(kOpReshape)                           /* ops_layout.c */        \
  X(kOpSqueeze)                           /* ops_layout.c */        \
  X(kOpExpandDims)                        /* ops_layout.c */        \
  X(kOpResizeBilinear)                    /* ops_resize.c */        \
  X(kOpResizeNearestNeighbor)             /* ops_resize.c */        \
  X(kOpReverseV2)                         /* ops_reverse.c */       \
  X(kOpRsqrt)                             /* ops_elementwise.c */   \
  X(kOpSelect)                            /* ops_elementwise.c */   \
  X(kOpShape)                             /* ops_shape.c */         \
  X(kOpSelectV2)                          /* ops_elementwise.c */   \
  X(kOpSign)                              /* ops_elementwise.c */   \
  X(kOpSin)                               /* ops_elementwise.c */   \
  X(kOpSlice)                             /* ops_remap.c */         \
  X(kOpSoftmax)                           /* ops_softmax.c */       \
  X(kOpSpaceToDepth)                      /* ops_depth_to_space.c */ \
  X(kOpSpaceToBatchNd)                    /* ops_space_batch.c */   \
  X(kOpSplit)                             /* ops_remap.c */         \
  X(kOpSplitV)                            /* ops_remap.c */         \
  X(kOpSqrt)                              /* ops_elementwise.c */   \
  X(kOpSquare)                            /* ops_elementwise.c */   \
  X(kOpSquaredDifference)                 /* ops_elementwise.c */   \
  X(kOpStridedSlice)                      /* ops_layout.c */        \
  X(kOpSub)                               /* ops_elementwise.c */   \
  X(kOpSum)                               /* ops_reduce.c */        \
  X(kOpTanh)                              /* ops_elementwise.c */   \
  X(kOpTile)                              /* ops_remap.c */         \
  X(kOpTranspose)                         /* ops_remap.c */         \
  X(kOpTransposeConv)                     /* ops_transpose_conv.c */ \
  X(kOpUnidirectionalSequenceLstm)        /* ops_sequence.c */      \
  X(kOpUnidirectionalSequenceRnn)         /* ops_sequence.c */      \
  X(kOpUnpack)                            /* ops_remap.c */        

#define DECLARE_OP(name) extern const OpDef name;
TFLITE_GPU_OPS(DECLARE_OP)
#define OP_ENTRY(name) &name,
const OpDef* const kOps[] = {TFLITE_GPU_OPS(OP_ENTRY)};
const int kNumOps = sizeof(kOps) / sizeof(kOps[0]);

const OpDef* op_lookup(const TfLiteRegistration* reg) {
  for (int i = 0; i < kNumOps; ++i) {
    const OpDef* d = kOps[i];
    if (d->builtin_code != reg->builtin_code) continue;
    if (d->custom_name && (!reg->custom_name || strcmp(d->custom_name, reg->custom_name) != 0)) continue;
    return d;
  }
  return NULL;
}

size_t op_table_describe(char* buf, size_t size) {
  size_t used = 0;
  for (int i = 0; i < kNumOps; ++i) {
    const OpDef* d = kOps[i];
    char name[128];
    if (d->custom_name)
      snprintf(name, sizeof(name), "CUSTOM %s", d->custom_name);
    else
      snprintf(name, sizeof(name), "%s", builtin_name(d->builtin_code));
    int n = snprintf(used < size ? buf + used : NULL, used < size ? size - used : 0, "%s\t%d\t1-%d\t%s\n", name,
                     d->builtin_code, d->max_version, d->constraints);
    if (n > 0) used += (size_t)n;
  }
  return used;
}
