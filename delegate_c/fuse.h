/* Graph rewrites before planning: fuse PRELU and residual ADD into the
 * CONV_2D / DEPTHWISE_CONV_2D that feeds them, and a depthwise into the
 * 1x1 convolution after it. */
#ifndef TFLITE_GPU_FUSE_H
#define TFLITE_GPU_FUSE_H

#include "graph.h"

/* outputs: graph tensors read back by the runtime (never fused away).
 * dw_1x1: also fuse each depthwise into the 1x1 convolution that alone
 * reads it (fuse_dw_conv.c; the GPU kernel set has the kernel:
 * select_fuses_dw_1x1). Returns the number of nodes fused, or -1 on OOM. */
int fuse_graph(Graph* g, const int* outputs, int num_outputs, int dw_1x1);

#endif
