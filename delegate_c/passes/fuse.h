/* The fuse stage: every graph rewrite between lowering (partition_lower.c)
 * and the executor, run in order from one table of passes (fuse.c). Each
 * pass has a name, what it matches, the kernel sets it runs with, and the
 * environment variable that switches it off (set to 0); `tflite-gpu
 * explain --passes` lists the table and what each pass did on a model. */
#ifndef TFLITE_GPU_FUSE_H
#define TFLITE_GPU_FUSE_H

#include "model/graph.h"
#include "passes/mixed_storage.h"
#include "select/selectors.h"

/* The passes, in the order they run (kFusePasses has one entry each). */
typedef enum FusePassId {
  PASS_LAYER_NORM,
  PASS_PAD,
  PASS_CHANNEL_AFFINE,
  PASS_HOIST_RESIDUALS,
  PASS_EPILOGUES,
  PASS_POOLED_RESIDUAL, /* an option of PASS_EPILOGUES: no run of its own */
  PASS_DW_1X1,
  PASS_PW_DW,
  PASS_CHANNEL_SCALE,
  PASS_UPSAMPLED_SOURCE,
  PASS_SUMMED_REDUCE,
  PASS_FC_PAIR,
  PASS_FC_HEADS,
  PASS_PRELU_SOURCE,
  PASS_INPUT_DIRECT,
  PASS_MIXED_STORAGE,
  PASS_OUTPUT_ASSEMBLY,
  PASS_OUTPUT_DIRECT,
  FUSE_NUM_PASSES
} FusePassId;
#define FUSE_PASS_BIT(id) (1u << (id))

/* Kernel sets a pass runs with, bits: cpu 1, gpu 2, 4 the VM's fine
 * bodies on a GPU (select_vm_fine; the VM runs the CPU set's bodies) and 8
 * the VM's group bodies there (select_vm_group_bodies: fc_gpu.cl's). The
 * GPU set's passes make nodes that only conv_gpu.cl / fc_gpu.cl kernels
 * implement, so they also need every CONV_2D to run one
 * (select_gpu_convs_always); a pass with bit 4 also has a fine body, one
 * with bit 8 a group body. Listed as "vm" with either. A pass of bit 4
 * alone makes nodes only a fine body implements (FUSE_KSETS_VM). */
enum { FUSE_KSETS_ALL = 3, FUSE_KSETS_GPU = 2, FUSE_KSETS_VM = 4, FUSE_KSETS_GPU_VM = 6, FUSE_KSETS_GPU_VM_GROUP = 10 };

/* One run of the fuse stage over a lowered partition. */
typedef struct FuseStage {
  Graph* g;
  const int* outputs;  /* the runtime outputs (graph tensors), never fused away */
  int num_outputs;
  unsigned passes;     /* FUSE_PASS_BIT of each pass to run (fuse_passes_for) */
  int fp16;            /* FP16 storage: mixed_storage runs */
  /* The device and the partition's policy: its execution (mixed_storage_apply),
   * the VM's fine bodies (dw_1x1 makes conv2d_x4_dw) and the passes' bounds. */
  const SelectTarget* target;
  const char* float_outputs; /* per output, kept on float storage (mixed_storage.h); NULL: none */
  char* dead;          /* per node, while the node passes run: removed */
  int counts[FUSE_NUM_PASSES]; /* out: what each pass did (nodes fused, folded, marked) */
  MixedStorageStats mixed;     /* out: the mixed_storage pass's */
} FuseStage;

typedef struct FusePass {
  const char* name;    /* as explain --passes prints it */
  const char* matches; /* what it rewrites, one line */
  int kernel_sets;     /* FUSE_KSETS_* */
  const char* hook;    /* a test hook: set to 0, switches the pass off; NULL: none */
  int policy_field;    /* a device's choice (select/policy.h POL_*) that switches it off at 0; -1: none */
  int (*device_allows)(const SelectTarget* t); /* beyond the kernel set; NULL: nothing */
  int (*run)(FuseStage* s); /* what it did, -1 on out of memory; NULL: an option of the pass before */
} FusePass;

extern const FusePass kFusePasses[FUSE_NUM_PASSES];

/* The passes that run on this device with this policy: its kernel set's,
 * those its limits allow, less those the policy or a test hook switches off. */
unsigned fuse_passes_for(const SelectTarget* t);
/* Runs s->passes of the table in order on s->g; s->counts gets what each
 * did. Returns the total, or -1 on out of memory. */
int fuse_graph(FuseStage* s);
/* The table as text, one pass a line: "name\tkernel sets\tswitch\tmatches"
 * (switch: the test hook's variable, or "policy FIELD"). */
size_t fuse_passes_text(char* buf, size_t size);

#endif
