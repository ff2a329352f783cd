/* The partition runtime: runs one lowered, fused partition. Its build plans
 * the activations' memory, stages the boundary tensors, has each node's op
 * encode its dispatches (encode.h) and builds them; its invoke enqueues
 * the flat dispatch list (or replays it as a command buffer) with no host
 * synchronisation until the outputs are read back. */
#ifndef TFLITE_GPU_EXECUTOR_H
#define TFLITE_GPU_EXECUTOR_H

#include <stddef.h>

#include "encode/encode.h"
#include "kernel_abi.h"
#include "model/tflite_abi.h"

typedef struct BoundaryTensor {
  int tflite_index;
  int tensor;          /* graph tensor */
  cl_mem staging;      /* BHWC copy of the runtime tensor (float32, int32, bool, or int8/uint8 bytes) */
  size_t bytes;
  cl_mem pinned;       /* its host side, mapped at `host` (pinned_staging.c); NULL: pageable transfers */
  void* host;
  /* The VM modes: a region of the activation arena plan_memory reserved
   * for its staging (bytes at arena_at; 0: none), and whether staging is it. */
  size_t arena_at, reserved;
  int in_arena;
} BoundaryTensor;

/* Called with the VM program's build defines before it is built (vm.c):
 * the kernel cache loads the device's VM program and may widen defines to
 * the opcodes it holds (serialization.c, vm_defines.h). */
typedef struct VmProgramCache {
  void (*load)(void* ctx, char* defines, size_t size);
  void* ctx;
} VmProgramCache;

struct Executor;
struct VmState;
/* How a partition runs as the VM's op list (execution=stepped|persistent):
 * vm/ fills it (vm_strategy), the delegate hands it to the build, and the
 * runtime reaches the VM through it alone. */
typedef struct VmStrategy {
  size_t (*guard_bytes)(void); /* the checked mode's guard behind each buffer (0: none), */
  unsigned char guard_fill;    /* filled with this byte */
  /* Sets ex->vm to the op list of the dispatches encoded so far, or leaves
   * it NULL with ex->vm_declined saying why the partition runs its kernels. */
  int (*plan)(struct Executor* ex, int mode);
  int (*finish)(struct Executor* ex); /* builds the program and its launches */
  cl_int (*enqueue)(struct Executor* ex);
  /* After the wait: why the last invoke is void (a phase wrote into a
   * guard), "" when it is not. */
  const char* (*overrun)(const struct Executor* ex);
  int (*aborted)(struct Executor* ex); /* after the wait: rerun stepped? */
  void (*profile_collect)(struct Executor* ex);
  void (*free)(struct VmState* vm);
} VmStrategy;

typedef struct Executor {
  Encoder enc;         /* the graph, the device (retained), the buffers and the dispatch list (encode.h) */
  cl_mem arena;
  size_t arena_bytes;
  size_t lower_bound_bytes; /* peak bytes of simultaneously live activations */
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
  int stale_inputs;     /* test hook TFLITE_GPU_TEST_STALE_INPUTS=1: inputs written by the first invoke only */
  int invokes;
  struct CaptureStore* capture; /* during an invoke: read back every tensor (capture.h); NULL: no */
  int capture_partition;
  int no_reuse;         /* every activation its own memory (a persistent launch, vm.h) */
  const VmStrategy* vm_run; /* the VM, when the build may run the partition on it (executor_build_tuned) */
  struct VmState* vm;   /* execution=stepped|persistent: the partition as the VM's op list; NULL: kernels */
  char vm_declined[128]; /* a VM mode asked, kernels run: why (vm_plan) */
  VmProgramCache vm_cache;
} Executor;

/* Takes ownership of g. Plans memory, uploads constants, builds kernels,
 * as the policy says (its execution and kernel set among the rest). Call
 * with dev->mutex held. */
int executor_build(Executor* ex, GpuDevice* dev, const Policy* policy, Graph* g, const int* outputs, int num_outputs,
                   char* err, size_t errlen);
/* Copies inputs in, runs every dispatch, copies outputs back. Call with
 * dev->mutex held. */
int executor_invoke(Executor* ex, TfLiteContext* ctx, char* err, size_t errlen);
/* executor_build with per-dispatch group scales (tune.c): dispatch i's
 * work-group is scaled by 2^tune[i] (a fixed group only shrinks); the VM
 * (vm_run, or NULL: kernels whatever the device's execution) and vm_cache
 * (or NULL) to load the VM program from the kernel cache. */
int executor_build_tuned(Executor* ex, GpuDevice* dev, const Policy* policy, Graph* g, const int* outputs,
                         int num_outputs, const signed char* tune, int tune_len, const VmStrategy* vm_run,
                         const VmProgramCache* vm_cache, char* err, size_t errlen);
/* Runs the partition reps (at most 15) times after one warm-up run on
 * inputs[k] (one host buffer per input, as probe_inputs makes; NULL: zero
 * inputs, which on PoCL ran the persistent VM 4-10% faster than the seeded
 * ones against 3-4% for kernels, docs/benchmarks/policy-pocl-2026-12-02.md),
 * and sets median_us to the median run's wall time: input writes,
 * every dispatch and output reads (partition_cost.c, the tuner): the typical
 * invoke, not a lucky one. Call with dev->mutex held. */
int executor_time(Executor* ex, int reps, unsigned char* const* inputs, double* median_us, char* err, size_t errlen);
/* The launches of one run, nothing else (timing, fp16_guard's probes);
 * call executor_waited after the wait. A CL error. */
cl_int executor_enqueue(Executor* ex);
void executor_waited(Executor* ex);
void executor_free(Executor* ex);

#endif
