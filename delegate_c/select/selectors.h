/* The kernel selectors, one per op family (select_*.c): from the device
 * (caps and resolved kernel set, target.h) and the node, the variant to run.
 * The CPU set holds the kernels shaped for SIMD CPU cores (PoCL, Intel's
 * CPU runtime): register tiles, no local memory, 1-D launches. The GPU set
 * holds work-group kernels: local-memory tiles, barriers, N-D launches with
 * neighbouring work-items on neighbouring memory. */
#ifndef TFLITE_GPU_SELECTORS_H
#define TFLITE_GPU_SELECTORS_H

#include "cl/cl_device.h"
#include "model/graph.h"
#include "cl/target.h"

/* Argument forms of the conv family (ops_conv.c binds them). */
enum { CONV_ARGS_NO_GEOMETRY = 0, CONV_ARGS_GEOMETRY = 1, CONV_ARGS_PAD_ONLY = 2, CONV_ARGS_DW_1X1 = 3,
       CONV_ARGS_SCALED = 4, CONV_ARGS_UP2 = 5, CONV_ARGS_SCALED_ADD = 6, CONV_ARGS_PW_DW = 7,
       CONV_ARGS_PRELU = 8 };

/* The work-groups a GPU-set conv or depthwise launch aims for (occupancy,
 * select_conv_gpu.c): 2 per compute unit; 0 (no aim: the default groups) on
 * CPU devices and where the count is unknown. TFLITE_GPU_COMPUTE_UNITS=N
 * (a test hook) stands for the device's count, on any device. */
size_t select_occupancy_target(const GpuDevice* dev);

void select_conv2d(const GpuDevice* dev, const Graph* g, const GNode* n, KernelVariant* v);
/* Depth multiplier 1 or more. */
void select_depthwise(const GpuDevice* dev, const Graph* g, const GNode* n, KernelVariant* v);
/* The GPU set's conv and depthwise variants (select_conv_gpu.c), 0 where
 * the device cannot run them (the CPU set's kernels run instead); vm: as a
 * VM body (select_vm_tiles), in the default group. */
int select_gpu_conv2d(const GpuDevice* dev, const Graph* g, const GNode* n, KernelVariant* v, int vm);
int select_gpu_depthwise(const GpuDevice* dev, const Graph* g, const GNode* n, KernelVariant* v, int vm);
/* Whether every CONV_2D here runs a conv_gpu.cl kernel (the GPU set, both
 * conv groups fit): what the fusion passes that only those kernels
 * implement need (fuse.c's table, kernel set "gpu"). */
int select_gpu_convs_always(const GpuDevice* dev);
/* Whether pw_depthwise_gpu's __local band fits (the pw_dw pass). */
int select_pw_depthwise_fits(const GpuDevice* dev);
/* A GOP_FC_HEADS node (made by the fc_heads pass, fuse.c). */
void select_fc_heads(const GpuDevice* dev, const Graph* g, const GNode* n, KernelVariant* v);
/* A GOP_FC_PAIR node (made by the fc_pair pass, fuse.c). */
void select_fc_pair(const GpuDevice* dev, const Graph* g, const GNode* n, KernelVariant* v);
/* A GOP_PW_DEPTHWISE node (made by the pw_dw pass, fuse.c). */
void select_pw_depthwise(const GpuDevice* dev, const Graph* g, const GNode* n, KernelVariant* v);
/* A GOP_DW_CONV1X1 node (made by the dw_1x1 pass, fuse.c). */
void select_dw_conv1x1(const GpuDevice* dev, const Graph* g, const GNode* n, KernelVariant* v);

/* Argument forms of BATCH_MATMUL kernels (ops_batch_matmul.c binds them):
 * (adj) for the general ones, the row grid (and adj_y) for the 4-row ones. */
enum { MATMUL_ARGS_GENERAL = 0, MATMUL_ARGS_ROWS4 = 1, MATMUL_ARGS_ROWS4_ADJ_Y = 2 };

void select_fully_connected(const GpuDevice* dev, const Graph* g, const GNode* n, KernelVariant* v);
void select_batch_matmul(const GpuDevice* dev, const Graph* g, const GNode* n, KernelVariant* v);
void select_reduce(const GpuDevice* dev, const Graph* g, const GNode* n, KernelVariant* v);
/* Whether the VM on this device takes the fine-grained bodies a GPU needs
 * (select_vm.c: execution=stepped|persistent on a device that reports
 * itself a GPU, Oclgrind's CPU-and-GPU included, or TFLITE_GPU_VM_FINE). */
int select_vm_fine(const GpuDevice* dev);
/* The VM's work-items per group (vm.c): VM_GROUP_SIZE, or the test hook
 * and A/B switch TFLITE_GPU_VM_GROUP=N (select_vm.c). On an H200 groups
 * of 256 made every model slower than 64 did, with either kind of body
 * (docs/benchmarks/gpu-h200-2026-11-27.md, "Bodies and groups"). */
enum { VM_GROUP_SIZE = 64 };
size_t select_vm_group(void);
/* Whether the VM on this device takes the GPU set's work-group bodies
 * (fc_gpu.cl, reduce_gpu.cl: GROUP_KERNEL) for long reductions, at its
 * group size: with the fine bodies, groups of VM_GROUP_SIZE, and
 * TFLITE_GPU_VM_GROUP_BODIES (default 1). */
int select_vm_group_bodies(const GpuDevice* dev);
/* The GPU set's conv and depthwise kernels as the VM's bodies (TFLITE_GPU_VM_TILES=1, select_vm.c). */
int select_vm_tiles(const GpuDevice* dev);
/* Whether a reduction runs as two (W, then H: ops_reduce.c): with the VM's
 * fine bodies, over H and W alone, a window of at least 64 in more than
 * one row. */
int select_reduce_split(const GpuDevice* dev, const Graph* g, const GNode* n);
/* Whether reduce_gpu runs as two group phases, reduce_gpu_part over chunks
 * of each window then reduce_gpu_sum (ops_reduce.c): with the VM's group
 * bodies, for outputs too few to give work to a quarter of the grid's
 * groups and windows of 16 float4s a work-item or more. The chunks (0: one
 * phase), *chunk their length in window float4s, *part and *sum the two
 * launches. */
int select_reduce_chunks(const GpuDevice* dev, const Graph* g, const GNode* n, int* chunk, KernelVariant* part,
                         KernelVariant* sum);
/* The VM's splits of long reductions on a GPU (select_vm.c): one grid's
 * work-items, the chunk of a split, and CONV_2D (conv2d_x4) over its
 * reduction in two phases (the chunk in steps, 0 for one pass). */
size_t select_vm_lanes(const GpuDevice* dev);
/* The shortest reduction split: a step is one input float4 (FC) or one tap
 * of one input slice (4 pixels x 16 multiply-adds, conv2d_x4). Shorter
 * loops would gain less than the second phase's barrier costs (about 1.2
 * us on an H200); a guess until a GPU times the splits. */
enum { VM_SPLIT_MIN_STEPS = 128 };
/* VM_SPLIT_MIN_STEPS, or the A/B switch TFLITE_GPU_VM_SPLIT_MIN_STEPS=N. */
int select_split_min_steps(void);
int select_split_chunk(int steps);
int select_conv_split(const GpuDevice* dev, const Graph* g, const GNode* n);
/* FULLY_CONNECTED over K in two phases: the chunk in input slices, 0 for one pass. */
int select_fc_split(const GpuDevice* dev, const Graph* g, const GNode* n);
void select_softmax(const GpuDevice* dev, const Graph* g, const GNode* n, KernelVariant* v);

/* Binary ops whose first operand has the output's shape and whose second
 * has it too or one value per channel (elementwise.cl binary_op_rows). */
void select_binary_rows(const GpuDevice* dev, const int dst_shape[4], KernelVariant* v);

/* A float boundary conversion (layout.cl) of a BHWC tensor of this shape. */
void select_boundary(const GpuDevice* dev, const int shape[4], int to_device, KernelVariant* v);
/* RESIZE_BILINEAR to this output shape (resize.cl). */
void select_resize_bilinear(const GpuDevice* dev, const int dst_shape[4], KernelVariant* v);

/* A timed choice (a dispatch's work-group, tune.c; a persistent grid,
 * vm_tune.c) leaves the rule's only for a gain of 5% or more: less is within
 * one machine's run-to-run noise. */
#define GD_TUNE_MIN_GAIN 0.05

#endif
