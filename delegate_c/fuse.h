/* Graph rewrites before planning: fuse PRELU and residual ADD into the
 * CONV_2D / DEPTHWISE_CONV_2D that feeds them. */
#ifndef TFLITE_GPU_FUSE_H
#define TFLITE_GPU_FUSE_H

#include "graph.h"

/* outputs: graph tensors read back by the runtime (never fused away).
 * Returns the number of nodes fused, or -1 on OOM. */
int fuse_graph(Graph* g, const int* outputs, int num_outputs);

#endif
