/* FULLY_CONNECTED heads that read one source row: hand_landmark's four
 * (presence, handedness, landmarks, world landmarks) on its pooled
 * 1,152-vector. Each is one launch of a few work-groups, so on a GPU the
 * launches are the cost: up to GD_MAX_NODE_OUTPUTS of them become one node,
 * GOP_FC_HEADS (fused_fc_heads.c, fc_gpu.cl's fc_heads_gpu), with an output
 * and an activation per head. GPU kernel set only (the fc_heads
 * pass, fuse.c). */
#ifndef TFLITE_GPU_FUSE_FC_HEADS_H
#define TFLITE_GPU_FUSE_FC_HEADS_H

#include "model/graph.h"

/* Merges each set of FULLY_CONNECTED nodes with the same source, one pixel
 * (a single row) in and out, same storage, into the first of them, which
 * writes every head's output; the others are marked in dead[]. Its hook is in
 * the pass table (fuse.c). Returns the number of nodes removed. */
int fuse_fc_heads(Graph* g, char* dead);

#endif
