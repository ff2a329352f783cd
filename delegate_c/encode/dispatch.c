/* The dispatch list while a partition is lowered: the encoders append
 * dispatches and set their arguments on a KernelRef, which records them;
 * once every node is lowered, ex_finish_dispatches builds each program
 * with only the kernels the partition launches from it (-DGD_KSEL,
 * common.cl), creates the kernels, sets the recorded arguments and fixes
 * the launch geometry. */
#include "encode/encode.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cl/kernels_embedded.h"
#include "util/env_hooks.h"

/* PoCL compiles a work-group function per (kernel, local size), costing
 * cold start time, and runs local size 1 about 20x slower, so each kernel
 * has one local size and bounds-checks a rounded-up global size: 64, or 16
 * for the heavy conv kernels on CPU devices (a work-item there does
 * hundreds to thousands of multiply-adds, so small groups cost nothing,
 * and the late layers of the MediaPipe models - a few hundred work-items -
 * still split evenly over the cores: 432 work-items make 7 groups of 64,
 * 4 + 3 per core, but 27 of 16). */
#define GD_LOCAL_SIZE 64
#define GD_LOCAL_SIZE_HEAVY_CPU 16

int ex_fail(Encoder* ex, const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(ex->err, ex->errlen, fmt, ap);
  va_end(ap);
  return -1;
}

/* The largest work-group the device runs kernel k in. TFLITE_GPU_MAX_GROUP
 * lowers it (tests: the smaller-group rebuild on a device that never needs
 * it). 0 when unknown. */
static size_t kernel_max_group(const Encoder* ex, cl_kernel k) {
  size_t max_wg = 0;
  cl.clGetKernelWorkGroupInfo(k, ex->dev->device, CL_KERNEL_WORK_GROUP_SIZE, sizeof(max_wg), &max_wg, NULL);
  long c = env_long("TFLITE_GPU_MAX_GROUP", 0);
  if (c > 0 && (!max_wg || (size_t)c < max_wg)) max_wg = (size_t)c;
  return max_wg;
}

static size_t variant_group(const KernelVariant* v) {
  size_t group = 1;
  for (int i = 0; i < v->dims; ++i) group *= v->local[i] ? v->local[i] : 1;
  return group;
}

/* The variant's defines, plus the one that keeps a node of an FP16
 * partition on float storage (common.cl) and the one that makes a conv
 * store its output as the runtime's BHWC float32 (conv_gpu.cl
 * CONVG_DST_BHWC; output_direct.c). */
static void storage_defines(const KernelVariant* v, int on_float, int dst_bhwc, char* out, size_t size) {
  int n = snprintf(out, size, "%.*s%s%s%s%s", (int)sizeof(v->defines), v->defines,
                   on_float && v->defines[0] ? " " : "", on_float ? "-DFP32_STORAGE=1" : "",
                   dst_bhwc && (v->defines[0] || on_float) ? " " : "", dst_bhwc ? "-DCONVG_DST_BHWC=1" : "");
  if (n < 0 || (size_t)n >= size) out[0] = '\0'; /* cannot happen: size holds them all */
}

/* Arguments a kernel takes at most, and the largest by value (int4). */
#define GD_MAX_KERNEL_ARGS 32
#define GD_MAX_ARG_BYTES 16

struct PendingDispatch {
  KernelVariant v; /* as the selector chose it, tuned */
  char key[2 * GD_MAX_DEFINES + 64]; /* its program's defines before selection (storage_defines) */
  int bit;         /* the kernel's GD_KSEL bit in its file, -1: not selectable */
  int on_float;
  int dst_bhwc;    /* the node stores its output as BHWC float32 (GTensor.bhwc_out) */
  int scale;       /* SUSTAINED_SPEED tuning: log2 of the 1-D group's scale */
  unsigned math[2]; /* ex_math: the unary and binary ops it computes */
  cl_uint num_args;
  struct {
    size_t size;
    int has_value; /* 0: a __local buffer of `size` bytes */
    unsigned char value[GD_MAX_ARG_BYTES];
  } args[GD_MAX_KERNEL_ARGS];
};

KernelRef ex_dispatch_variant(Encoder* ex, const KernelVariant* v, int node) {
  if (ex->num_dispatches == ex->cap_dispatches) {
    int cap = ex->cap_dispatches ? ex->cap_dispatches * 2 : 64;
    Dispatch* d = realloc(ex->dispatches, (size_t)cap * sizeof(*d));
    if (!d) {
      ex_fail(ex, "out of memory");
      return NULL;
    }
    ex->dispatches = d;
    ex->cap_dispatches = cap;
  }
  if (v->dims < 1 || v->dims > 3) {
    ex_fail(ex, "kernel %s: %d launch dimensions", v->kernel, v->dims);
    return NULL;
  }
  PendingDispatch* p = calloc(1, sizeof(*p));
  if (!p) {
    ex_fail(ex, "out of memory");
    return NULL;
  }
  /* SUSTAINED_SPEED tuning (tune.c): this dispatch's group scaled by
   * 2^scale; a fixed group only shrinks (its define is rebuilt). */
  p->scale = ex->tune && ex->num_dispatches < ex->tune_len ? ex->tune[ex->num_dispatches] : 0;
  p->v = *v;
  if (p->scale < 0 && !(v->dims == 1 && v->local[0] == 0)) {
    KernelVariant tuned = *v;
    size_t want = variant_group(v) >> -p->scale;
    if (variant_fit_group(&tuned, want ? want : 1) == 0) p->v = tuned;
  }
  /* A node that mixed_storage.c keeps on float inside an FP16 partition
   * (node -1, a boundary conversion: its tensor says). */
  p->on_float = ex->dev->fp16 && (node >= 0 ? ex->g.nodes[node].fp32 : ex->boundary_fp32);
  p->dst_bhwc = node >= 0 && ex->g.nodes[node].num_outputs == 1 && ex->g.tensors[ex->g.nodes[node].outputs[0]].bhwc_out;
  storage_defines(&p->v, p->on_float, p->dst_bhwc, p->key, sizeof(p->key));
  p->bit = embedded_kernel_bit(v->file, v->kernel);
  ex->dispatches[ex->num_dispatches++] = (Dispatch){NULL, (cl_uint)v->dims, {1, 1, 1}, {1, 1, 1}, node, v->kernel, p, 0};
  return p;
}

/* The GD_KSEL mask of the program dispatch i's kernel comes from: every
 * kernel the partition launches from the same file and defines; -1 where
 * one of them is not selectable (every kernel is built then). */
static long selection_mask(const Encoder* ex, int i) {
  const PendingDispatch* p = ex->dispatches[i].pending;
  long mask = 0;
  for (int j = 0; j < ex->num_dispatches; ++j) {
    const PendingDispatch* q = ex->dispatches[j].pending;
    if (!q || strcmp(q->v.file, p->v.file) != 0 || strcmp(q->key, p->key) != 0) continue;
    if (q->bit < 0) return -1;
    mask |= 1L << q->bit;
  }
  return mask;
}

/* The selection to build with: an existing program of the same file and
 * defines that holds every kernel of `mask` (the whole file, or a wider
 * selection: another partition's) is reused rather than built again, and
 * near the device's program limit the whole file is built, which every
 * later partition can share. */
static long usable_mask(const GpuDevice* dev, const char* file, const char* base, long mask) {
  if (mask < 0) return mask;
  size_t n = strlen(base);
  for (int i = 0; i < dev->num_programs; ++i) {
    const GpuProgram* p = &dev->programs[i];
    if (strcmp(p->file, file) != 0 || strncmp(p->defines, base, n) != 0) continue;
    const char* rest = p->defines + n;
    if (!*rest) return -1;
    if (n && *rest++ != ' ') continue;
    unsigned long m = 0;
    int end = 0;
    if (sscanf(rest, "-DGD_KSEL=0x%lx%n", &m, &end) == 1 && !rest[end] && ((long)m & mask) == mask) return (long)m;
  }
  return dev->num_programs >= GD_MAX_PROGRAMS * 3 / 4 ? -1 : mask;
}

/* The defines of variant v's program, with its selection. */
enum { PROGRAM_DEFINES = 2 * GD_MAX_DEFINES + 96 };
static void program_defines(Encoder* ex, const KernelVariant* v, int on_float, int dst_bhwc, long mask,
                            char defines[PROGRAM_DEFINES]) {
  storage_defines(v, on_float, dst_bhwc, defines, PROGRAM_DEFINES);
  mask = usable_mask(ex->dev, v->file, defines, mask);
  if (mask >= 0) {
    size_t n = strlen(defines);
    snprintf(defines + n, PROGRAM_DEFINES - n, "%s-DGD_KSEL=0x%lx", n ? " " : "", (unsigned long)mask);
  }
}

/* The kernel of variant v with its program's selection. */
static cl_kernel selected_kernel(Encoder* ex, const KernelVariant* v, int on_float, int dst_bhwc, long mask) {
  char defines[PROGRAM_DEFINES];
  program_defines(ex, v, on_float, dst_bhwc, mask, defines);
  return gpu_device_kernel(ex->dev, v->file, defines, v->kernel, ex->err, ex->errlen);
}

/* The programs of the dispatches that run as kernels, compiled at once
 * (gpu_device_prebuild) before finish_dispatch takes them one by one. */
static void prebuild(Encoder* ex) {
  if (gpu_device_build_threads(ex->dev) < 2) return; /* the default: finish_dispatch builds each in turn */
  int n = 0;
  const char** files = malloc((size_t)(ex->num_dispatches + 1) * 2 * sizeof(char*));
  char(*defines)[PROGRAM_DEFINES] = malloc((size_t)(ex->num_dispatches + 1) * sizeof(*defines));
  if (files && defines) {
    const char** names = files + ex->num_dispatches + 1;
    for (int i = 0; i < ex->num_dispatches; ++i) {
      const PendingDispatch* p = ex->dispatches[i].pending;
      if (ex->dispatches[i].vm || !p) continue;
      program_defines(ex, &p->v, p->on_float, p->dst_bhwc, selection_mask(ex, i), defines[n]);
      files[n] = p->v.file;
      names[n] = defines[n];
      ++n;
    }
    gpu_device_prebuild(ex->dev, files, names, n);
  }
  free(files);
  free(defines);
}

/* Dispatch d's kernel, built, fitted to the device's group limit, with
 * its recorded arguments and its launch geometry. */
static int finish_dispatch(Encoder* ex, Dispatch* d, long mask) {
  const PendingDispatch* p = d->pending;
  const KernelVariant* v = &p->v;
  cl_kernel k = selected_kernel(ex, v, p->on_float, p->dst_bhwc, mask);
  if (!k) return -1;
  size_t max_wg = kernel_max_group(ex, k);
  KernelVariant fitted;
  int fixed_group = !(v->dims == 1 && v->local[0] == 0);
  if (fixed_group && max_wg && variant_group(v) > max_wg) {
    /* The selector's group is more than the device runs this kernel in
     * (registers, local memory): the same kernel built for smaller groups. */
    fitted = *v;
    cl.clReleaseKernel(k);
    if (variant_fit_group(&fitted, max_wg))
      return ex_fail(ex, "kernel %s needs work-groups of %zu; the device allows %zu for it", v->kernel,
                     variant_group(v), max_wg);
    v = &fitted;
    k = selected_kernel(ex, v, p->on_float, p->dst_bhwc, mask);
    if (!k) return -1;
    size_t again = kernel_max_group(ex, k);
    if (again && variant_group(v) > again) {
      cl.clReleaseKernel(k);
      return ex_fail(ex, "kernel %s with %s needs work-groups of %zu; the device allows %zu for it", v->kernel,
                     v->defines, variant_group(v), again);
    }
  }
  d->kernel = k;
  for (cl_uint i = 0; i < p->num_args; ++i) {
    cl_int rc = cl.clSetKernelArg(k, i, p->args[i].size, p->args[i].has_value ? p->args[i].value : NULL);
    if (rc != CL_SUCCESS) return ex_fail(ex, "clSetKernelArg(%u) of %s: %s", i, v->kernel, cl_error_name(rc));
  }
  if (!fixed_group) {
    size_t local = v->heavy && !ex->dev->caps.is_gpu ? GD_LOCAL_SIZE_HEAVY_CPU : GD_LOCAL_SIZE;
    local = p->scale >= 0 ? local << p->scale : local >> -p->scale;
    if (!local) local = 1;
    /* A kernel the device can only run in smaller groups (registers). */
    if (max_wg && max_wg < local) local = max_wg;
    d->local[0] = local;
  } else {
    for (int i = 0; i < v->dims; ++i) d->local[i] = v->local[i] ? v->local[i] : 1;
  }
  for (int i = 0; i < v->dims; ++i) {
    size_t items = v->global[i] ? v->global[i] : 1;
    d->global[i] = (items + d->local[i] - 1) / d->local[i] * d->local[i];
  }
  return 0;
}

int ex_finish_dispatches(Encoder* ex) {
  prebuild(ex);
  for (int i = 0; i < ex->num_dispatches; ++i) {
    Dispatch* d = &ex->dispatches[i];
    if (d->vm) continue;
    if (finish_dispatch(ex, d, selection_mask(ex, i))) {
      const GNode* n = d->node >= 0 ? &ex->g.nodes[d->node] : NULL;
      /* Room for a rejected build's whole message (device, options, the
       * compiler's first errors: up to about 1,300 characters). */
      char why[3072];
      snprintf(why, sizeof(why), "%.3000s", ex->err);
      return ex_fail(ex, "%s (node %d): %s", n ? (n->name ? n->name : "op") : "boundary conversion",
                     n ? n->tflite_node : -1, why);
    }
  }
  for (int i = 0; i < ex->num_dispatches; ++i) {
    free(ex->dispatches[i].pending);
    ex->dispatches[i].pending = NULL;
  }
  return 0;
}

const KernelVariant* ex_recorded(const Encoder* ex, int i, RecordedArg* args, int cap, int* num_args) {
  const PendingDispatch* p = ex->dispatches[i].pending;
  if (!p) return NULL;
  *num_args = (int)p->num_args;
  for (int a = 0; a < (int)p->num_args && a < cap; ++a)
    args[a] = (RecordedArg){p->args[a].size, p->args[a].has_value, p->args[a].value};
  return &p->v;
}

void ex_math(KernelRef k, unsigned unary_ops, unsigned binary_ops) {
  k->math[0] |= unary_ops;
  k->math[1] |= binary_ops;
}

void ex_recorded_math(const Encoder* ex, int i, unsigned* unary_ops, unsigned* binary_ops) {
  const PendingDispatch* p = ex->dispatches[i].pending;
  *unary_ops = p ? p->math[0] : 0;
  *binary_ops = p ? p->math[1] : 0;
}

int ex_recorded_storage(const Encoder* ex, int i) {
  const PendingDispatch* p = ex->dispatches[i].pending;
  return !p || p->dst_bhwc ? -1 : p->on_float;
}

KernelRef ex_dispatch(Encoder* ex, const char* file, const char* name, size_t work_items, int node) {
  KernelVariant v = variant_1d(file, name, work_items);
  return ex_dispatch_variant(ex, &v, node);
}

KernelRef ex_dispatch_heavy(Encoder* ex, const char* file, const char* name, size_t work_items, int node) {
  KernelVariant v = variant_1d(file, name, work_items);
  v.heavy = 1;
  return ex_dispatch_variant(ex, &v, node);
}

/* Recorded, and set on the kernel once it is built (finish_dispatch). */
void karg(KArgs* a, const void* value, size_t size) {
  if (a->rc != CL_SUCCESS) return;
  PendingDispatch* p = a->k;
  if (a->i >= GD_MAX_KERNEL_ARGS || (value && size > GD_MAX_ARG_BYTES) || !size) {
    a->rc = a->i >= GD_MAX_KERNEL_ARGS ? CL_INVALID_ARG_INDEX : CL_INVALID_ARG_SIZE;
    a->i++;
    return;
  }
  p->args[a->i].size = size;
  p->args[a->i].has_value = value != NULL;
  if (value) memcpy(p->args[a->i].value, value, size);
  p->num_args = ++a->i;
}
/* A NULL buffer means its creation failed (the error is already in
 * ex->err); OpenCL would accept it as an argument and the kernel would
 * then dereference NULL, so it fails the dispatch here instead. */
#define GD_ARG_NULL_BUFFER CL_MEM_OBJECT_ALLOCATION_FAILURE
void karg_mem(KArgs* a, cl_mem m) {
  if (!m && a->rc == CL_SUCCESS) a->rc = GD_ARG_NULL_BUFFER, a->i++;
  karg(a, &m, sizeof(m));
}
void karg_int(KArgs* a, int v) {
  cl_int x = v;
  karg(a, &x, sizeof(x));
}
void karg_float(KArgs* a, float v) {
  cl_float x = v;
  karg(a, &x, sizeof(x));
}
void karg_int2(KArgs* a, int x, int y) {
  cl_int2 v = {{x, y}};
  karg(a, &v, sizeof(v));
}
void karg_int4(KArgs* a, int x, int y, int z, int w) {
  cl_int4 v = {{x, y, z, w}};
  karg(a, &v, sizeof(v));
}
void karg_shape(KArgs* a, const int s[4]) { karg_int4(a, s[GD_W], s[GD_H], s[GD_C], s[GD_B]); }

int karg_done(Encoder* ex, KArgs* a) {
  if (a->rc == CL_SUCCESS) return 0;
  if (a->rc == GD_ARG_NULL_BUFFER && ex->err[0]) return -1;
  return ex_fail(ex, "clSetKernelArg(%u): %s", a->i - 1, cl_error_name(a->rc));
}

