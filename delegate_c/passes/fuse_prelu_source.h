/* A CONV_2D that reads its source through the PRELU before it: the PRELU
 * is never a phase of its own. hand_recrop's blocks end in an ADD whose
 * sum two nodes read: the next block's pooled residual and a PRELU, whose
 * output only the next block's 2x2 stride-2 conv reads (a 1x1 depthwise
 * between them folded into that conv by channel_affine): the conv applies
 * the per-channel alpha where it loads each source float4 (conv.cl
 * conv2d_x4_prelu; prelu(0) = 0, so padding taps stay 0). The VM's fine
 * bodies only (a GPU's): the CPU and GPU sets' register-tiled convs have
 * no such form. The prelu_source pass (fuse.c). */
#ifndef TFLITE_GPU_FUSE_PRELU_SOURCE_H
#define TFLITE_GPU_FUSE_PRELU_SOURCE_H

#include "model/graph.h"

/* Rewrites each PRELU -> CONV_2D pair in place, where the PRELU has no
 * activation nor epilogue and a constant alpha of one value per channel
 * (or one value), and the conv, reading no other source op, is the only
 * reader of its output, as its source: the conv reads the PRELU's input
 * and appends the alpha to its inputs, at conv.prelu_input; the PRELU is
 * marked in dead[]. outputs: graph tensors read back by the runtime,
 * never fused away. Returns the number of nodes removed. */
int fuse_prelu_source(Graph* g, const int* outputs, int num_outputs, char* dead);

#endif
