/* The target layer: which kernel runs an op on this device.
 *
 *   op encoder --asks--> selector(device caps, kernel set, node) --> KernelVariant
 *   KernelVariant --> program cache (file, defines) on the device --> N-D dispatch
 *
 * Each op family's encoder (ops_*.c) calls its selector (select_*.c), packs
 * the weights in the layout the variant names, and binds the arguments. A
 * selector is where a new device class gets its kernels: add a branch on
 * the Target (kernel set, caps) that names another file, kernel, defines
 * and launch geometry. Kernels of one family take the same arguments in
 * every variant, so the binding code is shared. */
#ifndef TFLITE_GPU_TARGET_H
#define TFLITE_GPU_TARGET_H

#include <stddef.h>

#include "cl/device_caps.h"

/* The kernel families (option kernel_set; the policy's field): the CPU set
 * (register tiles for SIMD cores, no local memory) and the GPU set
 * (work-group kernels); AUTO is the policy's rule (select/policy_rules.c). */
typedef enum KernelSet { GD_KSET_AUTO = 0, GD_KSET_CPU = 1, GD_KSET_GPU = 2 } KernelSet;
const char* kernel_set_name(KernelSet set);
/* "auto", "cpu" or "gpu" (case-insensitive); -1 otherwise. */
int kernel_set_parse(const char* s);

#define GD_MAX_DEFINES 64

/* One kernel choice with its launch geometry. local[d] 0 on a 1-D variant
 * means the executor's default for the device (see executor.c). */
typedef struct KernelVariant {
  const char* file;               /* embedded .cl file */
  const char* kernel;
  char defines[GD_MAX_DEFINES];   /* extra build options ("-DTILE=4"); part of the program's key */
  int dims;                       /* 1, 2 or 3 */
  size_t global[3];               /* work-items per dimension, before rounding up to local */
  size_t local[3];
  int heavy;                      /* 1-D default local size for work-items that do much work */
  int weight_block;               /* output slices per weight block (upload_dense_weights_blocked) */
  int form;                       /* family-specific argument form (which geometry a conv kernel takes) */
  size_t total;                   /* the kernels' `total` argument: work-items that do work (1-D) */
  /* GPU variants whose group size is a build define: the define that
   * carries local[d] (NULL where fixed), so that a kernel the device runs
   * only in smaller groups (CL_KERNEL_WORK_GROUP_SIZE: registers, local
   * memory) is rebuilt with smaller ones (variant_fit_group). */
  const char* local_define[3];
  int global_in_groups;           /* global[0] is local[0] x the item count (one group per item) */
} KernelVariant;

/* A 1-D variant of n work-items with the executor's default local size. */
static inline KernelVariant variant_1d(const char* file, const char* kernel, size_t n) {
  KernelVariant v = {file, kernel, "", 1, {n, 1, 1}, {0, 1, 1}, 0, 1, 0, n, {NULL, NULL, NULL}, 0};
  return v;
}

/* Halves the variant's defined local sizes (the largest first) until a
 * group holds at most max_group work-items, and rewrites its defines to
 * match (a variant with local_define set has no other defines). 0 when it fits now; -1 when its group is fixed (no local_define)
 * or the defines do not fit the buffer. */
int variant_fit_group(KernelVariant* v, size_t max_group);

/* The kernels are OpenCL C 1.2 (no later feature is used): the minor
 * version of OpenCL C 1.x a device reporting CL_DEVICE_OPENCL_C_VERSION
 * `version` builds them as (cl_device.c passes -cl-std=CL1.<minor>): 2 for
 * OpenCL C 1.2 or later (3.0 devices report 1.2 or more), 1 for 1.1, and 0
 * (no -cl-std, which every compiler accepts) for 1.0 or an unreadable
 * string. */
int gpu_opencl_c_minor(const char* version);

static inline size_t div_up(size_t a, size_t b) { return (a + b - 1) / b; }

#endif
