/* Two 1x1 CONV_2Ds on a single pixel, the first read only by the second:
 * the excitation of a squeeze-and-excitation block ([B, 1, 1, C] -> 1x1
 * with RELU -> 1x1 with LOGISTIC: selfie_segmentation has nine). Each is a
 * few thousand multiply-adds, so on a GPU the launches are the cost: the
 * pair becomes one node, GOP_FC_PAIR (fused_fc_pair.c, fc_gpu.cl's
 * fc_pair_gpu), and the hidden row is never written. GPU kernel set only
 * (the fc_pair pass, fuse.c). */
#ifndef TFLITE_GPU_FUSE_FC_PAIR_H
#define TFLITE_GPU_FUSE_FC_PAIR_H

#include "model/graph.h"

/* fc_gpu.cl's FCP_MAX_SLICES: the most source and hidden slices the
 * kernel holds in __local memory (4 KiB each). */
#define FC_PAIR_MAX_SLICES 256

/* Rewrites each pair in place: the second conv becomes GOP_FC_PAIR, reads
 * the first's source and holds the first's constants and activation
 * (conv.first_*); the first is marked in dead[]. Neither may have an
 * epilogue, a scaled or upsampled source; same storage. outputs: graph
 * tensors read back by the runtime, never fused away. Returns the number
 * of nodes removed. */
int fuse_fc_pair(Graph* g, const int* outputs, int num_outputs, char* dead);

#endif
