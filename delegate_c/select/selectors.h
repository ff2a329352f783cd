/* The kernel selectors, one per op family (select_*.c): from the device's
 * capabilities, the partition's policy (policy.h: kernel set, execution,
 * the VM's bodies) and the node, the variant to run.
 * The CPU set holds the kernels shaped for SIMD CPU cores (PoCL, Intel's
 * CPU runtime): register tiles, no local memory, 1-D launches. The GPU set
 * holds work-group kernels: local-memory tiles, barriers, N-D launches with
 * neighbouring work-items on neighbouring memory. */
#ifndef TFLITE_GPU_SELECTORS_H
#define TFLITE_GPU_SELECTORS_H

#include "cl/device_caps.h"
#include "cl/target.h"
#include "model/graph.h"
#include "select/policy.h"

/* What a selector decides from: the device's capabilities, the policy of
 * the partition being built, and the storage precision. */
typedef struct SelectTarget {
  const GpuCaps* caps; /* the device's, which outlives every build */
  Policy pol;          /* a copy: the target is copied with what holds it */
  int fp16;
} SelectTarget;

/* Argument forms of the conv family (ops_conv.c binds them). */
enum { CONV_ARGS_NO_GEOMETRY = 0, CONV_ARGS_GEOMETRY = 1, CONV_ARGS_PAD_ONLY = 2, CONV_ARGS_DW_1X1 = 3,
       CONV_ARGS_SCALED = 4, CONV_ARGS_UP2 = 5, CONV_ARGS_SCALED_ADD = 6, CONV_ARGS_PW_DW = 7,
       CONV_ARGS_PRELU = 8 };

/* The work-groups a GPU-set conv or depthwise launch aims for (occupancy,
 * select_conv_gpu.c): 2 per compute unit; 0 (no aim: the default groups) on
 * CPU devices and where the count is unknown. TFLITE_GPU_COMPUTE_UNITS=N
 * (a test hook) stands for the device's count, on any device. */
size_t select_occupancy_target(const SelectTarget* t);

void select_conv2d(const SelectTarget* t, const Graph* g, const GNode* n, KernelVariant* v);
/* Depth multiplier 1 or more. */
void select_depthwise(const SelectTarget* t, const Graph* g, const GNode* n, KernelVariant* v);
/* The GPU set's conv and depthwise variants (select_conv_gpu.c), 0 where
 * the device cannot run them (the CPU set's kernels run instead); vm: as a
 * VM body (select_vm_tiles), in the default group. */
int select_gpu_conv2d(const SelectTarget* t, const Graph* g, const GNode* n, KernelVariant* v, int vm);
int select_gpu_depthwise(const SelectTarget* t, const Graph* g, const GNode* n, KernelVariant* v, int vm);
/* Whether every CONV_2D here runs a conv_gpu.cl kernel (the GPU set, both
 * conv groups fit): what the fusion passes that only those kernels
 * implement need (fuse.c's table, kernel set "gpu"). */
int select_gpu_convs_always(const SelectTarget* t);
/* Whether pw_depthwise_gpu's __local band fits (the pw_dw pass). */
int select_pw_depthwise_fits(const SelectTarget* t);
/* A GOP_FC_HEADS node (made by the fc_heads pass, fuse.c). */
void select_fc_heads(const SelectTarget* t, const Graph* g, const GNode* n, KernelVariant* v);
/* A GOP_FC_PAIR node (made by the fc_pair pass, fuse.c). */
void select_fc_pair(const SelectTarget* t, const Graph* g, const GNode* n, KernelVariant* v);
/* A GOP_PW_DEPTHWISE node (made by the pw_dw pass, fuse.c). */
void select_pw_depthwise(const SelectTarget* t, const Graph* g, const GNode* n, KernelVariant* v);
/* A GOP_DW_CONV1X1 node (made by the dw_1x1 pass, fuse.c). */
void select_dw_conv1x1(const SelectTarget* t, const Graph* g, const GNode* n, KernelVariant* v);

/* Argument forms of BATCH_MATMUL kernels (ops_batch_matmul.c binds them):
 * (adj) for the general ones, the row grid (and adj_y) for the 4-row ones. */
enum { MATMUL_ARGS_GENERAL = 0, MATMUL_ARGS_ROWS4 = 1, MATMUL_ARGS_ROWS4_ADJ_Y = 2 };

void select_fully_connected(const SelectTarget* t, const Graph* g, const GNode* n, KernelVariant* v);
void select_batch_matmul(const SelectTarget* t, const Graph* g, const GNode* n, KernelVariant* v);
void select_reduce(const SelectTarget* t, const Graph* g, const GNode* n, KernelVariant* v);
/* The VM's bodies, from the policy (select_vm.c): the fine-grained ones
 * (policy vm_fine, under execution=stepped|persistent), the GPU set's
 * work-group bodies for long reductions (fc_gpu.cl, reduce_gpu.cl, with the
 * fine ones; vm_group_bodies), and its conv and depthwise tiles (with the
 * group bodies; vm_tiles). */
int select_vm_fine(const SelectTarget* t);
int select_vm_group_bodies(const SelectTarget* t);
int select_vm_tiles(const SelectTarget* t);
/* The VM's work-items per group (vm.c). On an H200 groups of 256 made
 * every model slower than 64 did, with either kind of body
 * (docs/benchmarks/gpu-h200-2026-11-27.md, run 2): 64 it is. */
enum { VM_GROUP_SIZE = 64 };
/* Whether a reduction runs as two (W, then H: ops_reduce.c): with the VM's
 * fine bodies, over H and W alone, a window of at least 64 in more than
 * one row. */
int select_reduce_split(const SelectTarget* t, const Graph* g, const GNode* n);
/* Whether reduce_gpu runs as two group phases, reduce_gpu_part over chunks
 * of each window then reduce_gpu_sum (ops_reduce.c): with the VM's group
 * bodies, for outputs too few to give work to a quarter of the grid's
 * groups and windows of 16 float4s a work-item or more. The chunks (0: one
 * phase), *chunk their length in window float4s, *part and *sum the two
 * launches. */
int select_reduce_chunks(const SelectTarget* t, const Graph* g, const GNode* n, int* chunk, KernelVariant* part,
                         KernelVariant* sum);
/* The VM's splits of long reductions on a GPU (select_vm.c): one grid's
 * work-items, the chunk of a split, and CONV_2D (conv2d_x4) over its
 * reduction in two phases (the chunk in steps, 0 for one pass). */
size_t select_vm_lanes(const SelectTarget* t);
/* The shortest reduction split (policy vm_split_min_steps): a step is one
 * input float4 (FC) or one tap of one input slice (4 pixels x 16
 * multiply-adds, conv2d_x4). */
int select_split_min_steps(const SelectTarget* t);
int select_split_chunk(int steps);
int select_conv_split(const SelectTarget* t, const Graph* g, const GNode* n);
/* FULLY_CONNECTED over K in two phases: the chunk in input slices, 0 for one pass. */
int select_fc_split(const SelectTarget* t, const Graph* g, const GNode* n);
void select_softmax(const SelectTarget* t, const Graph* g, const GNode* n, KernelVariant* v);

/* Binary ops whose first operand has the output's shape and whose second
 * has it too or one value per channel (elementwise.cl binary_op_rows). */
void select_binary_rows(const SelectTarget* t, const int dst_shape[4], KernelVariant* v);

/* A float boundary conversion (layout.cl) of a BHWC tensor of this shape. */
void select_boundary(const SelectTarget* t, const int shape[4], int to_device, KernelVariant* v);
/* RESIZE_BILINEAR to this output shape (resize.cl). */
void select_resize_bilinear(const SelectTarget* t, const int dst_shape[4], KernelVariant* v);

/* A timed choice (a dispatch's work-group, tune.c; a persistent grid,
 * the tuner's policy, tuner.c) leaves the first only for a gain of 5% or more: less is within
 * one machine's run-to-run noise. */
#define GD_TUNE_MIN_GAIN 0.05

#endif
