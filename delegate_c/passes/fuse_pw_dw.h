/* A 1x1 CONV_2D whose output only a DEPTHWISE_CONV_2D reads becomes part
 * of that depthwise (GOP_PW_DEPTHWISE, depthwise_gpu.cl's pw_depthwise_gpu): the
 * expansion of an inverted-residual block computed where the depthwise
 * reads it, one launch instead of two, the wide expanded tensor never
 * written. It takes the blocks fuse_dw_conv.c leaves apart, whose
 * depthwise is too wide to recompute per 1x1 output (hand and pose
 * models: 1x1 192 -> 1,152, then 5x5), so a block is two launches
 * instead of three. GPU kernel set only (the pw_dw pass, fuse.c).
 *
 * No value is computed twice but at band edges: a work-group makes one
 * slice of the 1x1's output over a band of its rows (all of a 7x7 or
 * 14x14 tensor; PWDW_LOCAL float4s of __local memory), then the
 * depthwise's outputs of that slice and band from it. Neighbouring bands
 * share (KH - 1) * dilation source rows, which both compute. */
#ifndef TFLITE_GPU_FUSE_PW_DW_H
#define TFLITE_GPU_FUSE_PW_DW_H

#include "model/graph.h"
#include "select/conv_geometry.h" /* the bands and the bound */

/* Rewrites each pair in place: the depthwise becomes GOP_PW_DEPTHWISE, reads
 * the 1x1's source and holds its constants, activation and output
 * channels (conv.first_*); the 1x1 is marked in dead[]. The 1x1 has no
 * epilogue, the depthwise multiplier 1; same storage. A MEAN over H and W
 * that alone reads the depthwise, at batch 1 where one band holds the
 * whole tensor, goes too: the group averages its slice (conv.mean_of;
 * hand_landmark's last block, 7x7x1,152, then its heads). outputs: graph
 * tensors read back by the runtime, never fused away. bound: the most
 * 1x1 source loads per work-item (policy pw_dw_max_loads). Returns the
 * number of nodes removed. */
int fuse_pw_dw(Graph* g, const int* outputs, int num_outputs, char* dead, long bound);

#endif
