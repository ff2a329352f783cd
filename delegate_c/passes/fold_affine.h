/* A DEPTHWISE_CONV_2D with a 1x1 filter, stride 1 and multiplier 1 is a
 * per-channel affine map, x * s + t. When only a CONV_2D reads its output,
 * as its source, and that conv never reads past the input's edge (no
 * padding taps), the map folds into the conv's constants:
 *   W'[o][ky][kx][i] = W[o][ky][kx][i] * s[i],
 *   b'[o] = b[o] + sum over ky, kx, i of W[o][ky][kx][i] * t[i],
 * and the depthwise is never launched. hand_recrop scales channels so
 * before each of its six 2x2 stride-2 convolutions. Both kernel sets. */
#ifndef TFLITE_GPU_FOLD_AFFINE_H
#define TFLITE_GPU_FOLD_AFFINE_H

#include "model/graph.h"

/* Rewrites each pair in place: the conv reads the depthwise's input and
 * takes new constant tensors; the depthwise is marked in dead[]. Returns
 * the number of nodes removed, or -1 on OOM. TFLITE_GPU_FOLD_AFFINE=0 (a
 * test hook) turns it off. */
int fold_channel_affine(Graph* g, const int* outputs, int num_outputs, char* dead);

#endif
