/* The encoder API: what an op's encode function (ops/op_kinds.h, the
 * ops_*.c files) calls to turn its node into kernel dispatches, and what
 * the executor's boundary conversions use too. An Encoder holds what the
 * encoders build: the graph being lowered, the device, the buffers they
 * upload and the dispatch list (dispatch.c records it; the partition
 * runtime, executor.c, then runs it). */
#ifndef TFLITE_GPU_ENCODE_H
#define TFLITE_GPU_ENCODE_H

#include <stddef.h>

#include "cl/cl_device.h"
#include "model/graph.h"
#include "cl/target.h"
#include "select/selectors.h"

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
  int vm;              /* run by the VM program (vm.c): no kernel of its own is built */
} Dispatch;

/* A buffer ex_buffer made, recorded for the VM (vm.c packs them into one
 * arena): its size and a copy of its contents (NULL: none given). */
typedef struct BufferRecord {
  cl_mem mem;
  size_t bytes;
  void* data;
} BufferRecord;

typedef struct Encoder {
  GpuDevice* dev;      /* retained by the executor */
  SelectTarget target; /* the device's caps and the partition's policy (select/policy.h), as selectors take them */
  Graph g;             /* owned */
  cl_mem* mems;        /* per graph tensor, its device buffer once planned (ex_mem; the graph holds no OpenCL type) */
  cl_mem* owned;       /* constant and staging buffers, sub-buffers */
  int num_owned, cap_owned;
  Dispatch* dispatches;
  int num_dispatches, cap_dispatches;
  int boundary_fp32;   /* while adding a boundary conversion: its tensor is on float storage */
  const signed char* tune; /* while building: per dispatch, log2 of its group's scale (tune.c); not owned */
  int tune_len;
  char* err;
  size_t errlen;
  int record_buffers;  /* the VM asked: ex_buffer records each buffer (records, owned) */
  BufferRecord* records;
  int num_records, cap_records;
} Encoder;

/* Sets the error message; returns -1. */
int ex_fail(Encoder* ex, const char* fmt, ...) __attribute__((format(printf, 2, 3)));

/* Graph tensor t's device buffer, NULL while it has none. */
static inline cl_mem ex_mem(const Encoder* ex, int t) {
  return ex->mems && t >= 0 && t < ex->g.num_tensors ? ex->mems[t] : NULL;
}
/* Sets it (not owned: ex_own owns); -1 with the error set on out of memory. */
int ex_set_mem(Encoder* ex, int t, cl_mem m);

/* Appends a dispatch of the variant a selector chose (target.h); returns
 * the reference to set its arguments on (KArgs), or NULL (error set). */
KernelRef ex_dispatch_variant(Encoder* ex, const KernelVariant* v, int node);
/* Appends a dispatch of `work_items` work-items of kernel `name` from
 * `file` (a 1-D variant with the default local size). */
KernelRef ex_dispatch(Encoder* ex, const char* file, const char* name, size_t work_items, int node);
/* The same for kernels whose work-items each do much work (convolutions):
 * a smaller local size on CPU devices, see dispatch.c. */
KernelRef ex_dispatch_heavy(Encoder* ex, const char* file, const char* name, size_t work_items, int node);
/* Once every dispatch is known (dispatch.c): the programs, each with only
 * the kernels launched from it, the kernels and their recorded arguments
 * (none for the dispatches the VM runs). An error names the node. */
int ex_finish_dispatches(Encoder* ex);

/* A recorded kernel argument: `size` bytes of value, or (has_value 0) a
 * __local buffer of that size. */
typedef struct RecordedArg {
  size_t size;
  int has_value;
  const unsigned char* value;
} RecordedArg;
/* Before ex_finish_dispatches: dispatch i's variant (as tuned), and up to
 * `cap` of its arguments into args (*num_args: how many it has). */
const KernelVariant* ex_recorded(const Encoder* ex, int i, RecordedArg* args, int cap, int* num_args);
/* Declares the unary and binary ops (bits UN_* and BIN_*, kernel_abi.h) that
 * dispatch k computes through common.cl's unary_math and binary: the VM
 * program compiles the math of those only (vm.c, GD_UN_OPS and GD_BIN_OPS),
 * and an op not declared computes NaN there. */
void ex_math(KernelRef k, unsigned unary_ops, unsigned binary_ops);
/* Dispatch i's declared ops (0 and 0: none, or no record). */
void ex_recorded_math(const Encoder* ex, int i, unsigned* unary_ops, unsigned* binary_ops);
/* Dispatch i's program beyond its variant's defines: 1 kept on float
 * storage in an FP16 partition (-DFP32_STORAGE=1; fp16_guard,
 * mixed_storage.c), 0 the device's storage, -1 another define (BHWC float32
 * output, output_direct.c) or no record. */
int ex_recorded_storage(const Encoder* ex, int i);

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
int karg_done(Encoder* ex, KArgs* a);

/* The common start of a one-input op over its output: a dispatch of one
 * work-item per output float4, then arguments (src, dst, src shape, dst
 * shape). The caller adds its own and ends with karg_int(a, a->total). */
int ex_dispatch_src_dst(Encoder* ex, int node, const char* file, const char* name, KArgs* a);

/* ---- buffers (encode.c) ---- */

/* A buffer owned by the encoder (released with the executor), holding a
 * copy of data when data is not NULL; NULL with the error set. */
cl_mem ex_buffer(Encoder* ex, cl_mem_flags flags, size_t bytes, const void* data);
/* Frees the buffer records (record_buffers). */
void ex_drop_records(Encoder* ex);
/* Takes ownership of m (released with the executor); -1 on out of memory. */
int ex_own(Encoder* ex, cl_mem m);
/* A read-only buffer with these contents, owned by the encoder. */
cl_mem ex_upload(Encoder* ex, const void* data, size_t bytes);
/* The device buffer of a graph tensor: planned for activations, uploaded
 * in PHWC4 (storage type) for constants used as operands. */
cl_mem ex_tensor_mem(Encoder* ex, int tensor);
/* Whether a tensor is held as half in device memory: FP16 storage, unless
 * mixed_storage.c keeps it on float. */
int ex_half_storage(const Encoder* ex, const GTensor* t);
/* GATHER / ONE_HOT indices as an int32 device buffer: a runtime int32
 * tensor's own staging buffer, or a constant uploaded as ints. */
cl_mem ex_int_indices(Encoder* ex, int tensor);

/* Uploads OHWI weights (row-major [O][KH][KW][I]; a FULLY_CONNECTED [O][K]
 * is the 1x1 case) in the layout conv2d and fully_connected read:
 * [S_out][KH][KW][S_in][4 in][4 out], zero padded, and the bias as [S_out]
 * float4 (zeros when bias is NULL). */
/* The first pass of a reduction split in two (split_k.cl, the VM on a GPU):
 * `kernel` over `items` work-items for node's dispatch, with the arguments
 * both passes take first: the source, the partials, the weights, the bias,
 * the source's and the output's shapes. The caller adds its own and calls
 * karg_done. -1 on error. */
int split_first_pass(Encoder* ex, int node, const char* kernel, size_t items, cl_mem part, cl_mem wm, cl_mem bm,
                     KArgs* a);
int upload_dense_weights(Encoder* ex, const GTensor* weights, int src_channels, const GTensor* bias, cl_mem* wm,
                         cl_mem* bm);
/* The same with block_slices output slices per block:
 * [ceil(S_out / block_slices)][KH][KW][S_in][4 in][4 * block_slices out],
 * bias [blocks * 4 * block_slices]; block_slices 1 is the layout above. */
int upload_dense_weights_blocked(Encoder* ex, const GTensor* weights, int src_channels, const GTensor* bias,
                                 int block_slices, cl_mem* wm, cl_mem* bm);

#endif
