/* The kernel selectors, one per op family (select_*.c): from the device
 * (caps and resolved kernel set, target.h) and the node, the variant to run.
 * The CPU set holds the kernels shaped for SIMD CPU cores (PoCL, Intel's
 * CPU runtime): register tiles, no local memory, 1-D launches. The GPU set
 * holds work-group kernels: local-memory tiles, barriers, N-D launches with
 * neighbouring work-items on neighbouring memory. */
#ifndef TFLITE_GPU_SELECTORS_H
#define TFLITE_GPU_SELECTORS_H

#include "cl_device.h"
#include "graph.h"
#include "target.h"

/* Argument forms of the conv family (ops_conv.c binds them). */
enum { CONV_ARGS_NO_GEOMETRY = 0, CONV_ARGS_GEOMETRY = 1, CONV_ARGS_PAD_ONLY = 2, CONV_ARGS_DW_1X1 = 3,
       CONV_ARGS_SCALED = 4, CONV_ARGS_UP2 = 5, CONV_ARGS_SCALED_ADD = 6, CONV_ARGS_PW_DW = 7 };

/* The work-groups a GPU-set conv or depthwise launch aims for (occupancy,
 * select_conv.c): 2 per compute unit; 0 (no aim: the default groups) on
 * CPU devices and where the count is unknown. TFLITE_GPU_COMPUTE_UNITS=N
 * (a test hook) stands for the device's count, on any device. */
size_t select_occupancy_target(const GpuDevice* dev);

void select_conv2d(const GpuDevice* dev, const Graph* g, const GNode* n, KernelVariant* v);
/* Depth multiplier 1 or more. */
void select_depthwise(const GpuDevice* dev, const Graph* g, const GNode* n, KernelVariant* v);
/* fuse.h's FUSE_* bits this device's kernels allow, all or none: the
 * passes that only the GPU set's kernels implement, so every CONV_2D must
 * run one (the GPU set, both conv groups fit). Test hooks turn each off:
 * TFLITE_GPU_FUSE_DW_1X1=0, TFLITE_GPU_FUSE_POOLED_RESIDUAL=0,
 * TFLITE_GPU_BHWC_INPUT=0, TFLITE_GPU_FUSE_CHANNEL_SCALE=0,
 * TFLITE_GPU_FUSE_UPSAMPLED_SOURCE=0, TFLITE_GPU_FUSE_FC_PAIR=0,
 * TFLITE_GPU_BHWC_OUTPUT=0, TFLITE_GPU_FUSE_PW_DW=0, TFLITE_GPU_FUSE_FC_HEADS=0. */
int select_fusions(const GpuDevice* dev);
/* A kGOpFcHeads node (only where select_fusions has FUSE_FC_HEADS). */
void select_fc_heads(const GpuDevice* dev, const Graph* g, const GNode* n, KernelVariant* v);
/* A kGOpFcPair node (only where select_fusions has FUSE_FC_PAIR). */
void select_fc_pair(const GpuDevice* dev, const Graph* g, const GNode* n, KernelVariant* v);
/* A kGOpPwDepthwise node (only where select_fusions has FUSE_PW_DW). */
void select_pw_depthwise(const GpuDevice* dev, const Graph* g, const GNode* n, KernelVariant* v);
/* A kGOpDwConv1x1 node (only where select_fusions has FUSE_DW_1X1). */
void select_dw_conv1x1(const GpuDevice* dev, const Graph* g, const GNode* n, KernelVariant* v);

/* Argument forms of BATCH_MATMUL kernels (ops_batch_matmul.c binds them):
 * (adj) for the general ones, the row grid (and adj_y) for the 4-row ones. */
enum { MATMUL_ARGS_GENERAL = 0, MATMUL_ARGS_ROWS4 = 1, MATMUL_ARGS_ROWS4_ADJ_Y = 2 };

void select_fully_connected(const GpuDevice* dev, const Graph* g, const GNode* n, KernelVariant* v);
void select_batch_matmul(const GpuDevice* dev, const Graph* g, const GNode* n, KernelVariant* v);
void select_reduce(const GpuDevice* dev, const Graph* g, const GNode* n, KernelVariant* v);
void select_softmax(const GpuDevice* dev, const Graph* g, const GNode* n, KernelVariant* v);

/* Binary ops whose first operand has the output's shape and whose second
 * has it too or one value per channel (elementwise.cl binary_op_rows). */
void select_binary_rows(const GpuDevice* dev, const int dst_shape[4], KernelVariant* v);

/* A float boundary conversion (layout.cl) of a BHWC tensor of this shape. */
void select_boundary(const GpuDevice* dev, const int shape[4], int to_device, KernelVariant* v);
/* RESIZE_BILINEAR to this output shape (resize.cl). */
void select_resize_bilinear(const GpuDevice* dev, const int dst_shape[4], KernelVariant* v);

#endif
