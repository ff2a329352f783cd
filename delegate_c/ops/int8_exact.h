/* The CPU's integer requantization for int8 CONV_2D, FULLY_CONNECTED and
 * PRELU (issue 14, docs/int8-fidelity.md): lowering rewrites and the
 * kernels' dispatch (opencl_kernels/int8_exact.cl). */
#ifndef TFLITE_GPU_INT8_EXACT_H
#define TFLITE_GPU_INT8_EXACT_H

#include "encode/encode.h"
#include "ops/op_table.h"

/* kGOpInt8Exact modes (GNode.p.quant.mode). */
enum {
  QMODE_INT_VIEW = 1, /* x / scale rounded: the float view's integers q - zero_point */
  QMODE_REQUANT = 2,  /* integer accumulator -> MultiplyByQuantizedMultiplier per channel -> float view */
  QMODE_PRELU = 3     /* PRELU on the integers, two multipliers, -> float view */
};

/* After an op's own lowering (nodes from first_new on): turns an int8
 * CONV_2D / FULLY_CONNECTED / PRELU into the integer path when it applies;
 * otherwise leaves the nodes alone. 0, or -1 with lw->err set. */
int lower_int8_exact(Lowering* lw, const NodeInfo* ni, int first_new);


#endif
