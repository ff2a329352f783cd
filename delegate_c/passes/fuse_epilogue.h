/* Epilogues: what fuses into the convolution that feeds it (see
 * fuse_epilogue.c), and the reordering that lets residual ADDs fuse. */
#ifndef TFLITE_GPU_FUSE_EPILOGUE_H
#define TFLITE_GPU_FUSE_EPILOGUE_H

#include "model/graph.h"

/* Residual ADDs whose shortcut (or binary ops whose runtime operand) is
 * computed after the convolution feeding the other operand: the shortcut's
 * nodes move ahead of it (in place, dead moving with its nodes). Returns
 * the ops made fusable, -1 on OOM. */
int fuse_hoist_residuals(Graph* g, const int* outputs, int num_outputs, char* dead);
/* Fuses each chain of consumers into its conv, depthwise or fully
 * connected node (dead marks the consumers). pooled_residual: residuals
 * may be read through a pool, resize or channel prefix (conv_gpu.cl's
 * kernels only), counted in *pooled. Returns the nodes fused. */
int fuse_epilogues(Graph* g, const int* outputs, int num_outputs, char* dead, int pooled_residual, int* pooled);

#endif
