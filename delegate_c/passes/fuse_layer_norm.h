/* Layer norms as converters write them (Keras LayerNormalization,
 * hand-written x - mean(x) over channels): MEAN -> SQUARED_DIFFERENCE ->
 * MEAN -> ADD(eps) -> RSQRT becomes one statistics kernel
 * (opencl_kernels/layer_norm.cl) that writes the mean and the reciprocal
 * standard deviation; the elementwise scale and shift after it stay as
 * they are, and the later passes (fuse.c) see them as before. */
#ifndef TFLITE_GPU_FUSE_LAYER_NORM_H
#define TFLITE_GPU_FUSE_LAYER_NORM_H

#include "model/graph.h"

/* Rewrites each match in place (its first node becomes the statistics
 * node, the other four are marked in dead[] and read nothing). outputs:
 * graph tensors read back by the runtime, never fused away. Returns the
 * number of nodes removed. */
int fuse_layer_norm(Graph* g, const int* outputs, int num_outputs, char* dead);

#endif
