/* The rule table: what a device class gets when nothing was measured on
 * it. Each row says what it is based on (docs/benchmarks/); a class never
 * measured gets the conservative row. The tuner (delegate/tuner.c) times
 * the alternatives on the user's device and remembers what wins. */
#include "select/policy.h"

#include <stdio.h>
#include <string.h>

#include "select/conv_geometry.h"

typedef struct PolicyRow {
  const char* name;
  long v[POL_NUM_FIELDS];
} PolicyRow;

/* CPU devices (PoCL, Intel's CPU runtime). execution kernels: persistent
 * was faster on the three small MediaPipe models but 8-28% slower on the
 * two largest (vm-phases-pocl-2026-11-28.md), so the tuner decides per
 * partition. The CPU set (kernel-sets.md, cpu-set-ab.md), the VM's
 * register-tiled bodies (2.1-10.5x faster than the fine ones on PoCL,
 * policy-pocl-2026-12-02.md; the group bodies only go with the fine ones);
 * no command buffer (no gain on PoCL 3.1, small-models.md); pageable
 * staging (pinned buffers are host memory already on a CPU); no work-group
 * timing: the CPU set's groups were set for CPUs, timing moved them within
 * noise (0.98-1.01, tuning.md) and each new group size is a compile at the
 * first launch on PoCL, 10-60 ms more at every start
 * (policy-pocl-2026-12-02.md). */
static const PolicyRow kCpu = {
    "cpu",
    {[POL_EXECUTION] = GD_EXEC_KERNELS, [POL_KERNEL_SET] = GD_KSET_CPU, [POL_VM_FINE] = 0,
     [POL_VM_GROUP_BODIES] = 1, [POL_VM_TILES] = 0, [POL_VM_GROUPS_PER_UNIT] = 1, [POL_VM_SPLIT_CONV] = 1,
     [POL_VM_SPLIT_REDUCE] = 1, [POL_VM_SPLIT_FC] = 1, [POL_VM_SPLIT_MIN_STEPS] = 128, [POL_VM_SCHEDULE] = 1,
     [POL_FUSE_DW_1X1] = 1, [POL_FUSE_PW_DW] = 1, [POL_DW_1X1_MAX_TAPS] = GD_DW_1X1_MAX_ITEM_TAPS,
     [POL_PW_DW_MAX_LOADS] = GD_PW_DW_MAX_ITEM_LOADS,
     [POL_COMMAND_BUFFER] = 0, [POL_PINNED_STAGING] = 0, [POL_TUNE_GROUPS] = 0, [POL_INLINE_RARE] = 0, [POL_VLOAD4] = 0,
     [POL_BUILD_THREADS] = 1}};

/* NVIDIA (H100, H200; gpu-h100-2026-11-26.md, gpu-h200-2026-11-27.md).
 * execution kernels with the GPU set: persistent was faster on 11 of 14
 * models (1.11-3.25x) but 2.76x slower on selfie_segmentation, 1.96x on
 * its landscape variant and 1.11x on hand_landmark_full (run 3), so the
 * tuner decides. For the VM: the fine bodies (1.2-1.9x faster than the
 * register tiles on all 14, run 2), the group bodies, one group of 64 per
 * unit (256 slower on all 14); splits from 128 steps (not yet swept). The
 * dw_1x1 bound of 576 taps (run 2 on the H100: pairs above it slower);
 * pinned staging (the transfers); no command buffer (the driver has none);
 * work-group timing (the GPU set's groups gained 4-31% from it on PoCL,
 * tuning.md; not yet timed on a GPU).
 * Rare paths out of line and aligned float4 accesses (ptxas 4.8-8.9x
 * faster, nvptx-build-time.md). */
static const PolicyRow kNvidia = {
    "nvidia",
    {[POL_EXECUTION] = GD_EXEC_KERNELS, [POL_KERNEL_SET] = GD_KSET_GPU, [POL_VM_FINE] = 1,
     [POL_VM_GROUP_BODIES] = 1, [POL_VM_TILES] = 0, [POL_VM_GROUPS_PER_UNIT] = 1, [POL_VM_SPLIT_CONV] = 1,
     [POL_VM_SPLIT_REDUCE] = 1, [POL_VM_SPLIT_FC] = 1, [POL_VM_SPLIT_MIN_STEPS] = 128, [POL_VM_SCHEDULE] = 1,
     [POL_FUSE_DW_1X1] = 1, [POL_FUSE_PW_DW] = 1, [POL_DW_1X1_MAX_TAPS] = GD_DW_1X1_MAX_ITEM_TAPS,
     [POL_PW_DW_MAX_LOADS] = GD_PW_DW_MAX_ITEM_LOADS,
     [POL_COMMAND_BUFFER] = 0, [POL_PINNED_STAGING] = 1, [POL_TUNE_GROUPS] = 1, [POL_INLINE_RARE] = 0, [POL_VLOAD4] = 0,
     [POL_BUILD_THREADS] = 1}};

/* Any other GPU (Mali, Adreno, Intel, AMD, Apple; Oclgrind emulates one):
 * never measured here, so NVIDIA's row without what is NVIDIA's own
 * (inline_rare and vload4 change nothing elsewhere). */
static const PolicyRow kGpu = {
    "gpu",
    {[POL_EXECUTION] = GD_EXEC_KERNELS, [POL_KERNEL_SET] = GD_KSET_GPU, [POL_VM_FINE] = 1,
     [POL_VM_GROUP_BODIES] = 1, [POL_VM_TILES] = 0, [POL_VM_GROUPS_PER_UNIT] = 1, [POL_VM_SPLIT_CONV] = 1,
     [POL_VM_SPLIT_REDUCE] = 1, [POL_VM_SPLIT_FC] = 1, [POL_VM_SPLIT_MIN_STEPS] = 128, [POL_VM_SCHEDULE] = 1,
     [POL_FUSE_DW_1X1] = 1, [POL_FUSE_PW_DW] = 1, [POL_DW_1X1_MAX_TAPS] = GD_DW_1X1_MAX_ITEM_TAPS,
     [POL_PW_DW_MAX_LOADS] = GD_PW_DW_MAX_ITEM_LOADS,
     [POL_COMMAND_BUFFER] = 0, [POL_PINNED_STAGING] = 1, [POL_TUNE_GROUPS] = 1, [POL_INLINE_RARE] = 0, [POL_VLOAD4] = 0,
     [POL_BUILD_THREADS] = 1}};

static const PolicyRow* const kRows[] = {&kCpu, &kNvidia, &kGpu};

size_t policy_describe(char* buf, size_t size) {
  size_t used = 0;
  if (size) buf[0] = '\0';
#define ADD(...)                                                                               \
  do {                                                                                         \
    int n_ = snprintf(used < size ? buf + used : NULL, used < size ? size - used : 0, __VA_ARGS__); \
    if (n_ > 0) used += (size_t)n_;                                                            \
  } while (0)
  for (int f = 0; f < POL_NUM_FIELDS; ++f) {
    const PolicyFieldDesc* d = &kPolicyFields[f];
    ADD("%s\t%ld\t%ld\t", d->name, d->min, d->max);
    for (long v = d->min; d->names && v <= d->max; ++v) ADD("%s%s", v > d->min ? "|" : "", d->names[v]);
    ADD("\t%s\t%s\n", d->per_device ? "device" : "partition", d->help);
  }
  for (size_t r = 0; r < sizeof(kRows) / sizeof(kRows[0]); ++r) {
    Policy p;
    memset(&p, 0, sizeof(p));
    memcpy(p.v, kRows[r]->v, sizeof(p.v));
    char text[2048];
    policy_format(&p, 0, text, sizeof(text));
    ADD("rule\t%s\t%s\n", kRows[r]->name, text);
  }
#undef ADD
  return used;
}

void policy_rule(const GpuCaps* caps, Policy* out) {
  /* A device that says it is both (Oclgrind) counts as a GPU, so that its
   * checks cover what GPUs run. */
  const PolicyRow* row = caps->is_gpu ? (caps->vendor_id == GD_VENDOR_NVIDIA ? &kNvidia : &kGpu) : &kCpu;
  memset(out, 0, sizeof(*out));
  memcpy(out->v, row->v, sizeof(out->v));
  out->rule = row->name;
}
