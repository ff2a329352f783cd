/* The encoders of the graph's node kinds (model/graph.h GOp): each op file
 * defines the GOpDesc of the kinds it encodes, op_kinds.c maps every kind to
 * one. Nothing outside ops/ names a GOpDesc: the layers below make and
 * match nodes by kind, the runtime encodes a node through op_encode. */
#ifndef TFLITE_GPU_OP_KINDS_H
#define TFLITE_GPU_OP_KINDS_H

#include "model/graph.h"

struct Encoder;
typedef struct GOpDesc {
  const char* name; /* for messages */
  int (*encode)(struct Encoder* ex, int node);
} GOpDesc;

extern const GOpDesc kGOpArgMinmax;
extern const GOpDesc kGOpBatchMatmul;
extern const GOpDesc kGOpBatchToSpace;
extern const GOpDesc kGOpBinary;
extern const GOpDesc kGOpConcat;
extern const GOpDesc kGOpConv2d;
extern const GOpDesc kGOpCumsum;
extern const GOpDesc kGOpDepthwise;
extern const GOpDesc kGOpDepthToSpace;
extern const GOpDesc kGOpDwConv1x1;
extern const GOpDesc kGOpFcHeads;
extern const GOpDesc kGOpFcPair;
extern const GOpDesc kGOpFullyConnected;
extern const GOpDesc kGOpInt8Exact;
extern const GOpDesc kGOpL2Norm;
extern const GOpDesc kGOpLandmarksToMatrix;
extern const GOpDesc kGOpLrn;
extern const GOpDesc kGOpLstmCell;
extern const GOpDesc kGOpMaxPoolArgmax;
extern const GOpDesc kGOpMaxUnpool;
extern const GOpDesc kGOpNormStats;
extern const GOpDesc kGOpOneHot;
extern const GOpDesc kGOpPool;
extern const GOpDesc kGOpPwDepthwise;
extern const GOpDesc kGOpQuantize;
extern const GOpDesc kGOpReduce;
extern const GOpDesc kGOpRemap;
extern const GOpDesc kGOpResampler;
extern const GOpDesc kGOpResizeBilinear;
extern const GOpDesc kGOpResizeNearest;
extern const GOpDesc kGOpSequence;
extern const GOpDesc kGOpSoftmax;
extern const GOpDesc kGOpSpaceToBatch;
extern const GOpDesc kGOpSpaceToDepth;
extern const GOpDesc kGOpStorageCast;
extern const GOpDesc kGOpTransformLandmarks;
extern const GOpDesc kGOpTransformTensor;
extern const GOpDesc kGOpTransposeConv;
extern const GOpDesc kGOpUnary;

/* The descriptor of kind op; NULL for GOP_NONE or a value out of range. */
const GOpDesc* op_desc(GOp op);
/* Encodes node `node` of the encoder's graph: its kind's encode function
 * (-1 with the encoder's error set for a node of no kind). */
int op_encode(struct Encoder* ex, int node);

#endif
