/* 1x1 CONV_2Ds that read their source through the op that feeds it, so
 * that op is never launched and its output never written:
 * - a MUL of an activation by a runtime per-channel scale: the conv
 *   multiplies each input float4 by the scale where it loads it
 *   (conv_gpu.cl conv2d_1x1_scaled_gpu; in the CPU set and the VM, conv.cl
 *   conv2d_1x1_scaled and conv2d_x4_scaled). Squeeze-and-excitation blocks (MobileNetV3,
 *   selfie_segmentation) end so: x * sigmoid(fc(mean x)) -> the block's
 *   1x1 projection. A MUL then an ADD of a same-shaped runtime tensor
 *   (a decoder's attention gate: skip * scale + upsampled) is read so too,
 *   the addend added after the scale (the _scaled_add kernels).
 *   The channel_scale pass (fuse.c), every kernel set.
 * - a RESIZE_BILINEAR to twice its input's size (no align_corners): the
 *   conv interpolates the input itself (conv2d_1x1_up2_gpu; conv.cl
 *   conv2d_1x1_up2 and conv2d_x4_up2 in the CPU set and the VM). Decoders and
 *   feature pyramids upsample so before a 1x1 (selfie_segmentation,
 *   palm_detection). The upsampled_source pass (fuse.c). */
#ifndef TFLITE_GPU_FUSE_CONV_SOURCE_H
#define TFLITE_GPU_FUSE_CONV_SOURCE_H

#include "model/graph.h"

/* Rewrites each MUL -> 1x1 pair in place: the 1x1 reads the MUL's
 * activation as its source and appends the scale ([B, 1, 1, C], the
 * source's B and C) to its inputs, at conv.scale_input; the MUL is marked
 * in dead[] and reads nothing. MUL -> ADD -> 1x1 likewise, the ADD's other
 * operand appended at conv.add_input and the ADD dead too. outputs: graph
 * tensors read back by the runtime, never fused away. Returns the number
 * of nodes removed. */
int fuse_channel_scale(Graph* g, const int* outputs, int num_outputs, char* dead);

/* Rewrites each RESIZE_BILINEAR -> 1x1 pair in place: the 1x1 reads the
 * resize's input and sets conv.src_via; the resize is marked in dead[].
 * Returns the number of nodes removed. */
int fuse_upsampled_source(Graph* g, const int* outputs, int num_outputs, char* dead);

#endif
