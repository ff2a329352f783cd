/* Runs one lowered partition: a memory plan for the activations, constant
 * uploads, and a flat list of kernel dispatches that invoke enqueues with
 * no host synchronisation until the outputs are read back. */
#ifndef TFLITE_GPU_EXECUTOR_H
#define TFLITE_GPU_EXECUTOR_H

#include <stddef.h>

#include "cl_device.h"
#include "graph.h"
#include "tflite_abi.h"

/* A dispatch as the encoders see it while the partition is lowered: its
 * variant and the arguments they set, kept until every dispatch is known.
 * Only then are the programs built, each with just the kernels launched
 * from it (-DGD_KSEL, common.cl), and the arguments set (dispatch.c). */
typedef struct PendingDispatch PendingDispatch;
typedef PendingDispatch* KernelRef;

typedef struct Dispatch {
  cl_kernel kernel;    /* NULL until the partition's programs are built */
  cl_uint dims;        /* 1-3 */
  size_t global[3];    /* work-items, rounded up to the local size */
  size_t local[3];
  int node;            /* graph node position, -1 for boundary conversions */
  const char* name;    /* kernel name, for errors and profiles */
  PendingDispatch* pending; /* while lowering; freed once the kernel is made */
} Dispatch;

typedef struct BoundaryTensor {
  int tflite_index;
  int tensor;          /* graph tensor */
  cl_mem staging;      /* BHWC copy of the runtime tensor (float32, int32, bool, or int8/uint8 bytes) */
  size_t bytes;
  cl_mem pinned;       /* its host side, mapped at `host` (pinned_staging.c); NULL: pageable transfers */
  void* host;
} BoundaryTensor;

typedef struct Executor {
  GpuDevice* dev;      /* retained */
  Graph g;             /* owned */
  cl_mem arena;
  size_t arena_bytes;
  size_t lower_bound_bytes; /* peak bytes of simultaneously live activations */
  cl_mem* owned;       /* constant and staging buffers, sub-buffers */
  int num_owned, cap_owned;
  Dispatch* dispatches;
  int num_dispatches, cap_dispatches;
  cl_event* events;    /* one per dispatch, only when the device profiles */
  /* The dispatches recorded as one command buffer (cmdbuf.c), replayed by
   * invokes after the first; NULL: enqueued one by one. */
  cl_command_buffer_khr replay;
  void* replay_enqueue; /* its entry points (clEnqueue/clReleaseCommandBufferKHR) */
  void* replay_release;
  int replay_tried;
  BoundaryTensor* inputs;
  int num_inputs;
  BoundaryTensor* outputs;
  int num_outputs;
  int num_state_outputs; /* the last of outputs: states written back into variable tensors (GTensor.write_back) */
  int boundary_fp32;   /* while adding a boundary conversion: its tensor is on float storage */
  const signed char* tune; /* while building: per dispatch, log2 of its group's scale (tune.c); not owned */
  int tune_len;
  char* err;
  size_t errlen;
} Executor;

/* Takes ownership of g. Plans memory, uploads constants, builds kernels.
 * Call with dev->mutex held. */
int executor_build(Executor* ex, GpuDevice* dev, Graph* g, const int* outputs, int num_outputs, char* err,
                   size_t errlen);
/* Copies inputs in, runs every dispatch, copies outputs back. Call with
 * dev->mutex held. */
int executor_invoke(Executor* ex, TfLiteContext* ctx, char* err, size_t errlen);
/* executor_build with per-dispatch group scales (tune.c): dispatch i's
 * work-group is scaled by 2^tune[i] (a fixed group only shrinks). */
int executor_build_tuned(Executor* ex, GpuDevice* dev, Graph* g, const int* outputs, int num_outputs,
                         const signed char* tune, int tune_len, char* err, size_t errlen);
/* Runs the partition reps times after one warm-up run, inputs zero, and
 * sets best_us to the fastest run's wall time: input writes, every
 * dispatch and output reads (partition_cost.c). Call with dev->mutex held. */
int executor_time(Executor* ex, int reps, double* best_us, char* err, size_t errlen);
void executor_free(Executor* ex);

/* ---- for the encode functions of the op files ---- */

/* Appends a dispatch of the variant a selector chose (target.h); returns
 * the reference to set its arguments on (KArgs), or NULL (error set). */
KernelRef ex_dispatch_variant(Executor* ex, const KernelVariant* v, int node);
/* Appends a dispatch of `work_items` work-items of kernel `name` from
 * `file` (a 1-D variant with the default local size). */
KernelRef ex_dispatch(Executor* ex, const char* file, const char* name, size_t work_items, int node);
/* The same for kernels whose work-items each do much work (convolutions):
 * a smaller local size on CPU devices, see dispatch.c. */
KernelRef ex_dispatch_heavy(Executor* ex, const char* file, const char* name, size_t work_items, int node);
/* The device buffer of a graph tensor: planned for activations, uploaded
 * in PHWC4 (storage type) for constants used as operands. */
cl_mem ex_tensor_mem(Executor* ex, int tensor);
/* A read-only float32 buffer with these contents, owned by the executor. */
cl_mem ex_upload(Executor* ex, const void* data, size_t bytes);
int ex_fail(Executor* ex, const char* fmt, ...) __attribute__((format(printf, 2, 3)));
/* Once every dispatch is known (dispatch.c): the programs, each with only
 * the kernels launched from it, the kernels and their recorded arguments.
 * An error names the node. */
int ex_finish_dispatches(Executor* ex);

/* Kernel arguments, set in order; the first failure is kept in rc. */
typedef struct KArgs {
  KernelRef k;
  cl_uint i;
  cl_int rc;
  int total; /* work-items before rounding, set by ex_dispatch_src_dst */
} KArgs;
void karg(KArgs* a, const void* value, size_t size);
void karg_mem(KArgs* a, cl_mem m);
void karg_int(KArgs* a, int v);
void karg_float(KArgs* a, float v);
void karg_int2(KArgs* a, int x, int y);
void karg_int4(KArgs* a, int x, int y, int z, int w);
/* A BHWC shape as the kernels' int4 (W, H, C, B). */
void karg_shape(KArgs* a, const int shape[4]);
int karg_done(Executor* ex, KArgs* a);

/* The common start of a one-input op over its output: a dispatch of one
 * work-item per output float4, then arguments (src, dst, src shape, dst
 * shape). The caller adds its own and ends with karg_int(a, a->total). */
int ex_dispatch_src_dst(Executor* ex, int node, const char* file, const char* name, KArgs* a);


/* Uploads OHWI weights (row-major [O][KH][KW][I]; a FULLY_CONNECTED [O][K]
 * is the 1x1 case) in the layout conv2d and fully_connected read:
 * [S_out][KH][KW][S_in][4 in][4 out], zero padded, and the bias as [S_out]
 * float4 (zeros when bias is NULL). */
int upload_dense_weights(Executor* ex, const GTensor* weights, int src_channels, const GTensor* bias, cl_mem* wm,
                         cl_mem* bm);
/* The same with block_slices output slices per block:
 * [ceil(S_out / block_slices)][KH][KW][S_in][4 in][4 * block_slices out],
 * bias [blocks * 4 * block_slices]; block_slices 1 is the layout above. */
int upload_dense_weights_blocked(Executor* ex, const GTensor* weights, int src_channels, const GTensor* bias,
                                 int block_slices, cl_mem* wm, cl_mem* bm);

/* GATHER / ONE_HOT indices as an int32 device buffer (ops_layout.c). */
cl_mem ex_int_indices(Executor* ex, int tensor);

#endif
