/* Graph rewrites before planning: fuse PRELU and residual ADD into the
 * CONV_2D / DEPTHWISE_CONV_2D that feeds them, and a depthwise into the
 * 1x1 convolution after it. */
#ifndef TFLITE_GPU_FUSE_H
#define TFLITE_GPU_FUSE_H

#include "graph.h"

/* What the device's kernels allow beyond the epilogues every set runs
 * (select_fusions says which; only the GPU kernel set has them): */
enum {
  FUSE_DW_1X1 = 1,       /* a depthwise into the 1x1 that alone reads it (fuse_dw_conv.c) */
  FUSE_POOLED_RESIDUAL = 2, /* a residual that is a 2x2 max pool or a 2x bilinear resize, read through it */
  FUSE_BHWC_INPUT = 4,      /* a float input only convolutions read stays BHWC (no conversion launch) */
  FUSE_CHANNEL_SCALE = 8,   /* a MUL by a per-channel scale into the 1x1 that reads it (fuse_conv_source.c) */
  FUSE_UPSAMPLED_SOURCE = 16, /* a 2x RESIZE_BILINEAR into the 1x1 that reads it (fuse_conv_source.c) */
  FUSE_FC_PAIR = 32,          /* two 1x1s on one pixel, one launch (fuse_fc_pair.c) */
  FUSE_BHWC_OUTPUT = 64,      /* outputs a conv writes stored by it as BHWC (output_direct.c) */
  FUSE_PW_DW = 128,           /* a 1x1 into the depthwise that alone reads it (fuse_pw_dw.c) */
  FUSE_FC_HEADS = 256         /* FULLY_CONNECTED heads of one source row, one launch (fuse_fc_heads.c) */
};
/* outputs: graph tensors read back by the runtime (never fused away);
 * flags: FUSE_* bits. Returns the number of nodes fused, or -1 on OOM. */
int fuse_graph(Graph* g, const int* outputs, int num_outputs, int flags);

#endif
