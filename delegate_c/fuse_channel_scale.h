/* A MUL of an activation by a runtime per-channel scale, whose product
 * only a 1x1 CONV_2D reads, becomes part of that convolution: the conv
 * multiplies each input float4 by the scale where it loads it
 * (opencl_kernels/conv_gpu.cl's conv2d_1x1_scaled_gpu), so the MUL is
 * never launched and its product never written. Squeeze-and-excitation
 * blocks (MobileNetV3, selfie_segmentation) end so: x * sigmoid(fc(mean
 * x)) -> the block's 1x1 projection. GPU kernel set only
 * (select_fusions' FUSE_CHANNEL_SCALE). */
#ifndef TFLITE_GPU_FUSE_CHANNEL_SCALE_H
#define TFLITE_GPU_FUSE_CHANNEL_SCALE_H

#include "graph.h"

/* Rewrites each such MUL -> 1x1 pair in place: the 1x1 reads the MUL's
 * activation as its source and appends the scale ([B, 1, 1, C], the
 * source's B and C) to its inputs, at conv.scale_input; the MUL is marked
 * in dead[] and reads nothing. outputs: graph tensors read back by the
 * runtime, never fused away. Returns the number of nodes removed. */
int fuse_channel_scale(Graph* g, const int* outputs, int num_outputs, char* dead);

#endif
