#include "runtime/executor.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "runtime/capture.h"
#include "runtime/cmdbuf.h"
#include "util/env_hooks.h"
#include "runtime/launch_groups.h"
#include "util/memory_plan.h"
#include "config/options.h"
#include "ops/op_kinds.h"
#include "passes/output_assembly.h"
#include "passes/output_direct.h"
#include "runtime/pinned_staging.h"
#include "select/selectors.h"

/* A boundary tensor's bytes as its staging holds them: float32, int32,
 * int64, one-byte bool, or int8/uint8 bytes (ENABLE_QUANT). */
static size_t boundary_bytes(const GTensor* t) {
  int quant = t->qtype != GD_QNONE;
  return shape_elements(t->shape) * (quant || t->dtype == kTfLiteBool ? 1 : t->dtype == kTfLiteInt64 ? 8 : 4);
}

/* Lifetimes over dispatch steps: boundary inputs are written before step
 * 0, outputs (and parts of assembled outputs, GTensor.out_part) must survive to the
 * end. In the VM modes the boundary tensors' staging gets regions of the
 * arena too, live throughout (the VM program takes no buffer argument per
 * boundary tensor: kernel_abi.h VM_NUM_SPACES). */
static int plan_memory(Executor* ex) {
  Graph* g = &ex->enc.g;
  for (int i = 0; i < g->num_tensors; ++i) {
    GTensor* t = &g->tensors[i];
    t->first_use = t->is_input ? -1 : g->num_nodes;
    t->last_use = t->out_part ? g->num_nodes : -2;
    t->in_arena = 0;
  }
  for (int k = 0; k < g->num_nodes; ++k) {
    const GNode* n = &g->nodes[k];
    for (int j = 0; j < n->num_outputs; ++j) {
      GTensor* t = &g->tensors[n->outputs[j]];
      if (k < t->first_use) t->first_use = k;
      if (k > t->last_use) t->last_use = k;
    }
    for (int j = 0; j < n->num_inputs; ++j) {
      GTensor* t = &g->tensors[n->inputs[j]];
      if (k > t->last_use) t->last_use = k;
    }
  }
  /* TFLITE_GPU_SEPARATE_BUFFERS=1 (a test setting): each activation in a
   * buffer of its own, so checking tools such as Oclgrind see an overrun
   * that a sub-buffer would hide inside the arena (the VM declines it). */
  int separate = env_flag("TFLITE_GPU_SEPARATE_BUFFERS", 0);
  int boundaries = ex->enc.record_buffers && !separate ? ex->num_inputs + ex->num_outputs : 0;
  size_t cap = (size_t)(g->num_tensors + boundaries + 1);
  int* ids = malloc(cap * sizeof(int));
  MemoryRequest* req = malloc(cap * sizeof(MemoryRequest));
  size_t* offsets = malloc(cap * sizeof(size_t));
  if (!ids || !req || !offsets) {
    free(ids);
    free(req);
    free(offsets);
    return ex_fail(&ex->enc, "out of memory");
  }
  int n = 0;
  size_t guard = ex->enc.record_buffers && ex->vm_run ? ex->vm_run->guard_bytes() : 0; /* the VM's checked mode */
  for (int i = 0; i < g->num_tensors; ++i) {
    GTensor* t = &g->tensors[i];
    /* constants; raw inputs; outputs stored into their staging buffers; unused */
    if (t->data || t->is_int32 || t->bhwc || t->bhwc_out || t->last_use == -2) continue;
    if (t->is_output || t->out_part || ex->no_reuse) t->last_use = g->num_nodes;
    if (ex->no_reuse) t->first_use = -1;
    t->bytes = shape_elements_phwc4(t->shape) * (ex_half_storage(&ex->enc, t) ? 2 : 4);
    ids[n] = i;
    req[n++] = (MemoryRequest){t->bytes + guard, t->first_use, t->last_use};
  }
  for (int k = 0; k < boundaries; ++k) {
    BoundaryTensor* b = k < ex->num_inputs ? &ex->inputs[k] : &ex->outputs[k - ex->num_inputs];
    size_t bytes = boundary_bytes(&g->tensors[b->tensor]);
    b->reserved = bytes > 16 ? bytes : 16;
    ids[n] = -1 - k;
    req[n++] = (MemoryRequest){b->reserved + guard, -1, g->num_nodes};
  }
  int rc = memory_plan(req, n, ex->enc.dev->caps.mem_base_align, offsets, &ex->arena_bytes, &ex->lower_bound_bytes);
  if (rc == 0) {
    cl_int err;
    ex->arena = cl.clCreateBuffer(ex->enc.dev->context, CL_MEM_READ_WRITE, ex->arena_bytes ? ex->arena_bytes : 16, NULL,
                                  &err);
    if (!ex->arena) rc = ex_fail(&ex->enc, "allocating the %zu-byte activation arena: %s", ex->arena_bytes, cl_error_name(err));
    unsigned char* fill = ex->arena && guard ? malloc(ex->arena_bytes) : NULL;
    if (fill) memset(fill, ex->vm_run->guard_fill, ex->arena_bytes);
    if (ex->arena && guard &&
        (!fill || (err = cl.clEnqueueWriteBuffer(ex->enc.dev->queue, ex->arena, CL_TRUE, 0, ex->arena_bytes, fill, 0,
                                                 NULL, NULL)) != CL_SUCCESS))
      rc = ex_fail(&ex->enc, "filling the activation arena's guards: %s", fill ? cl_error_name(err) : "out of memory");
    free(fill);
  } else {
    ex_fail(&ex->enc, "out of memory");
  }
  for (int k = 0; rc == 0 && k < n; ++k) {
    if (ids[k] < 0) { /* a boundary tensor's region: staging_buffer makes its buffer */
      int i = -1 - ids[k];
      (i < ex->num_inputs ? &ex->inputs[i] : &ex->outputs[i - ex->num_inputs])->arena_at = offsets[k];
      continue;
    }
    GTensor* t = &g->tensors[ids[k]];
    cl_buffer_region region = {offsets[k], t->bytes ? t->bytes : 16};
    cl_int err;
    t->offset = offsets[k];
    t->in_arena = 1;
    cl_mem m = separate ? cl.clCreateBuffer(ex->enc.dev->context, CL_MEM_READ_WRITE, region.size, NULL, &err)
                        : cl.clCreateSubBuffer(ex->arena, CL_MEM_READ_WRITE, CL_BUFFER_CREATE_TYPE_REGION, &region, &err);
    if (!m) rc = ex_fail(&ex->enc, "creating the buffer of tensor %d (%zu bytes): %s", ids[k], region.size,
                         cl_error_name(err));
    else if (ex_own(&ex->enc, m) || ex_set_mem(&ex->enc, ids[k], m)) rc = -1;
  }
  free(ids);
  free(req);
  free(offsets);
  return rc;
}

/* phwc4_to_bhwc of a float tensor into dst, from element dst_offset on. */
static int convert_out(Executor* ex, int tensor, cl_mem dst, size_t dst_offset) {
  const GTensor* t = &ex->enc.g.tensors[tensor];
  KernelVariant v;
  select_boundary(&ex->enc.target, t->shape, 0, &v);
  ex->enc.boundary_fp32 = t->fp32;
  KernelRef k = ex_dispatch_variant(&ex->enc, &v, -1);
  ex->enc.boundary_fp32 = 0;
  if (!k) return -1;
  KArgs a = {k, 0, CL_SUCCESS, 0};
  karg_mem(&a, ex_mem(&ex->enc, tensor));
  karg_mem(&a, dst);
  karg_shape(&a, t->shape);
  karg_int(&a, (int)dst_offset);
  karg_int(&a, (int)v.total);
  return karg_done(&ex->enc, &a);
}

/* A boundary tensor's staging buffer of b->bytes: the region plan_memory
 * reserved in the arena (the VM modes), else a buffer of its own. */
static cl_mem staging_buffer(Executor* ex, BoundaryTensor* b, cl_mem_flags flags) {
  if (!b->reserved) return ex_buffer(&ex->enc, flags, b->bytes, NULL);
  if (b->bytes > b->reserved) {
    ex_fail(&ex->enc, "a staging buffer of %zu bytes in a region of %zu", b->bytes, b->reserved);
    return NULL;
  }
  cl_buffer_region region = {b->arena_at, b->bytes ? b->bytes : 16};
  cl_int err;
  cl_mem m = cl.clCreateSubBuffer(ex->arena, CL_MEM_READ_WRITE, CL_BUFFER_CREATE_TYPE_REGION, &region, &err);
  if (!m) {
    ex_fail(&ex->enc, "creating a staging buffer in the arena (%zu bytes): %s", region.size, cl_error_name(err));
    return NULL;
  }
  if (ex_own(&ex->enc, m)) {
    cl.clReleaseMemObject(m);
    return NULL;
  }
  b->in_arena = 1;
  return m;
}

/* The staging buffers of the outputs (or parts) their convs store as BHWC
 * (output_direct.c), made before the convs are encoded: the stored
 * tensors' buffer is their output's. */
static int stage_direct_outputs(Executor* ex) {
  Graph* g = &ex->enc.g;
  for (int k = 0; k < ex->num_outputs - ex->num_state_outputs; ++k) {
    BoundaryTensor* b = &ex->outputs[k];
    for (int i = 0; i < g->num_tensors; ++i) {
      if (!g->tensors[i].bhwc_out || g->tensors[i].bhwc_output != b->tensor) continue;
      if (!b->staging) {
        b->bytes = shape_elements(g->tensors[b->tensor].shape) * 4;
        if (!(b->staging = staging_buffer(ex, b, CL_MEM_READ_WRITE))) return -1;
      }
      if (ex_set_mem(&ex->enc, i, b->staging)) return -1;
    }
  }
  return 0;
}

/* A boundary tensor's runtime buffer holds float32, or (for the few ops
 * that allow them, see op_table.c) int32, int64 or one-byte bool elements. */
static int add_conversion(Executor* ex, BoundaryTensor* b, int to_device) {
  const GTensor* t = &ex->enc.g.tensors[b->tensor];
  /* A float32 output stored as float whose PHWC4 form starts with its BHWC
   * form (the landmark and score vectors: [1, 63], [1, 1]) is read back
   * from its own buffer, a launch fewer. Not inputs: the kernels read the
   * padded lanes of a PHWC4 tensor as zeros, which a plain write of the
   * runtime's bytes leaves unset. */
  if (!to_device && t->bhwc_out) return 0; /* its conv stores it into b->staging (stage_direct_outputs) */
  if (!to_device && output_read_back_as_is(t, ex->enc.dev->fp16)) {
    b->bytes = shape_elements(t->shape) * 4;
    b->staging = ex_mem(&ex->enc, b->tensor);
    return 0;
  }
  int typed = t->dtype == kTfLiteInt32 || t->dtype == kTfLiteInt64 || t->dtype == kTfLiteBool;
  /* int8/uint8 runtime tensors (ENABLE_QUANT) are staged as bytes and
   * (de)quantized by the conversion kernel. */
  int quant = t->qtype != GD_QNONE;
  b->bytes = boundary_bytes(t);
  b->staging = staging_buffer(ex, b, to_device ? CL_MEM_READ_ONLY : CL_MEM_WRITE_ONLY);
  if (!b->staging) return -1;
  if (t->is_int32 || t->bhwc) {
    /* Indices stay row-major int32, and inputs only conv2d_bhwc_gpu reads
     * stay BHWC float32: the kernels read the staging buffer. */
    return ex_set_mem(&ex->enc, b->tensor, b->staging);
  }
  const char* name = quant   ? (to_device ? "bhwc_q_to_phwc4" : "phwc4_to_bhwc_q")
                     : typed ? (to_device ? "typed_to_phwc4" : "phwc4_to_typed")
                           : (to_device ? "bhwc_to_phwc4" : "phwc4_to_bhwc");
  /* The float conversions are a selector's choice (pixels per work-item
   * by kernel set); the typed and quantized ones move one float4. */
  if (!quant && !typed && !to_device) return convert_out(ex, b->tensor, b->staging, 0);
  KernelVariant v = variant_1d("layout.cl", name, phwc4_items(t->shape));
  if (!quant && !typed) select_boundary(&ex->enc.target, t->shape, to_device, &v);
  size_t items = v.total;
  ex->enc.boundary_fp32 = t->fp32;
  KernelRef k = ex_dispatch_variant(&ex->enc, &v, -1);
  ex->enc.boundary_fp32 = 0;
  if (!k) return -1;
  KArgs a = {k, 0, CL_SUCCESS, 0};
  karg_mem(&a, to_device ? b->staging : ex_mem(&ex->enc, b->tensor));
  karg_mem(&a, to_device ? ex_mem(&ex->enc, b->tensor) : b->staging);
  karg_shape(&a, t->shape);
  if (typed) karg_int(&a, t->dtype == kTfLiteBool ? TYPED_BOOL : t->dtype == kTfLiteInt64 ? TYPED_INT64 : TYPED_INT32);
  if (quant) {
    karg_float(&a, t->qscale);
    karg_int(&a, t->qzero);
    karg_int(&a, t->qtype == GD_QINT8);
  }
  karg_int(&a, (int)items);
  return karg_done(&ex->enc, &a);
}

/* An assembled output: a staging buffer the parts are converted into. A
 * single part whose PHWC4 bytes begin with its BHWC bytes (see
 * phwc4_is_bhwc) is read back from its own buffer. */
static int add_assembled(Executor* ex, BoundaryTensor* b) {
  const Graph* as = &ex->enc.g;
  const GTensor* t = &ex->enc.g.tensors[b->tensor];
  b->bytes = shape_elements(t->shape) * 4;
  int n = 0, only = -1;
  for (int i = 0; i < as->num_parts; ++i)
    if (as->parts[i].output == b->tensor) n++, only = i;
  const GTensor* p = &ex->enc.g.tensors[as->parts[only].tensor];
  /* Parts their convs store (stage_direct_outputs made b->staging) need no launch. */
  if (!b->staging && n == 1 && (!ex->enc.dev->fp16 || p->fp32) && phwc4_is_bhwc(p->shape)) {
    b->staging = ex_mem(&ex->enc, as->parts[only].tensor);
    return 0;
  }
  if (!b->staging && !(b->staging = staging_buffer(ex, b, CL_MEM_WRITE_ONLY))) return -1;
  for (int i = 0; i < as->num_parts; ++i)
    if (as->parts[i].output == b->tensor && !ex->enc.g.tensors[as->parts[i].tensor].bhwc_out &&
        convert_out(ex, as->parts[i].tensor, b->staging, as->parts[i].offset))
      return -1;
  return 0;
}

static int build(Executor* ex, GpuDevice* dev, Graph* g, const int* outputs, int num_outputs, char* err,
                 size_t errlen);

int executor_build(Executor* ex, GpuDevice* dev, const Policy* policy, Graph* g, const int* outputs, int num_outputs,
                   char* err, size_t errlen) {
  return executor_build_tuned(ex, dev, policy, g, outputs, num_outputs, NULL, 0, NULL, NULL, err, errlen);
}

int executor_build_tuned(Executor* ex, GpuDevice* dev, const Policy* policy, Graph* g, const int* outputs,
                         int num_outputs, const signed char* tune, int tune_len, const VmStrategy* vm_run,
                         const VmProgramCache* vm_cache, char* err, size_t errlen) {
  memset(ex, 0, sizeof(*ex));
  ex->vm_run = vm_run;
  ex->enc.target = (SelectTarget){&dev->caps, *policy, dev->fp16};
  if (vm_cache) ex->vm_cache = *vm_cache;
  ex->enc.tune = tune;
  ex->enc.tune_len = tune_len;
  int rc = build(ex, dev, g, outputs, num_outputs, err, errlen);
  ex->enc.tune = NULL;
  return rc;
}

static int build(Executor* ex, GpuDevice* dev, Graph* g, const int* outputs, int num_outputs, char* err,
                 size_t errlen) {
  ex->enc.dev = dev;
  gpu_device_retain(dev);
  ex->enc.g = *g;
  memset(g, 0, sizeof(*g));
  ex->enc.err = err;
  ex->enc.errlen = errlen;
  if (errlen) err[0] = '\0'; /* karg_done tells a failed upload by a set error */
  Graph* gr = &ex->enc.g;
  int execution = (int)ex->enc.target.pol.v[POL_EXECUTION];
  int vm = policy_vm(&ex->enc.target.pol) && ex->vm_run;
  ex->enc.record_buffers = vm; /* the VM packs them into one arena (vm/vm.c) */
  /* Inside one persistent launch no activation may reuse another's memory:
   * a group could read a line it cached before another group rewrote it. */
  ex->no_reuse = execution == GD_EXEC_PERSISTENT || (vm && ex->vm_run->guard_bytes());

  /* Partition inputs: runtime tensors read by a node but written by none. */
  char* written = calloc((size_t)gr->num_tensors + 1, 1);
  if (!written) return ex_fail(&ex->enc, "out of memory");
  for (int k = 0; k < gr->num_nodes; ++k)
    for (int j = 0; j < gr->nodes[k].num_outputs; ++j) written[gr->nodes[k].outputs[j]] = 1;
  /* An assembled output's nodes are gone (output_assembly.c): its parts make it. */
  for (int i = 0; i < gr->num_parts; ++i) written[gr->parts[i].output] = 1;
  ex->inputs = calloc((size_t)gr->num_tensors + 1, sizeof(BoundaryTensor));
  int states = 0;
  for (int id = 0; id < gr->num_tensors; ++id) states += gr->tensors[id].write_back >= 0 && written[id];
  ex->outputs = calloc((size_t)(num_outputs + states) + 1, sizeof(BoundaryTensor));
  if (!ex->inputs || !ex->outputs) {
    free(written);
    return ex_fail(&ex->enc, "out of memory");
  }
  for (int k = 0; k < gr->num_nodes; ++k) {
    for (int j = 0; j < gr->nodes[k].num_inputs; ++j) {
      GTensor* t = &gr->tensors[gr->nodes[k].inputs[j]];
      if (t->data || written[gr->nodes[k].inputs[j]] || t->is_input) continue;
      t->is_input = 1;
      ex->inputs[ex->num_inputs++] = (BoundaryTensor){.tflite_index = t->tflite_index, .tensor = gr->nodes[k].inputs[j]};
    }
  }
  /* A part of an assembled output that no node reads or writes: a
   * partition input converted straight into the output. */
  for (int i = 0; i < gr->num_parts; ++i) {
    int id = gr->parts[i].tensor;
    GTensor* t = &gr->tensors[id];
    if (t->data || written[id] || t->is_input) continue;
    t->is_input = 1;
    ex->inputs[ex->num_inputs++] = (BoundaryTensor){.tflite_index = t->tflite_index, .tensor = id};
  }
  for (int k = 0; k < num_outputs; ++k) {
    int id = outputs[k];
    if (id < 0 || id >= gr->num_tensors || !written[id]) {
      free(written);
      return ex_fail(&ex->enc, "partition output %d is not computed by the partition", k);
    }
    gr->tensors[id].is_output = 1;
    ex->outputs[ex->num_outputs++] = (BoundaryTensor){.tflite_index = gr->tensors[id].tflite_index, .tensor = id};
  }
  /* Sequence ops' final states, read back into their variable tensors. */
  for (int id = 0; id < gr->num_tensors; ++id) {
    if (gr->tensors[id].write_back < 0 || !written[id]) continue;
    gr->tensors[id].is_output = 1;
    ex->outputs[ex->num_outputs++] = (BoundaryTensor){.tflite_index = gr->tensors[id].write_back, .tensor = id};
    ex->num_state_outputs++;
  }
  free(written);
  int rc = plan_memory(ex);
  if (rc == 0) rc = stage_direct_outputs(ex);
  for (int k = 0; rc == 0 && k < ex->num_inputs; ++k) rc = add_conversion(ex, &ex->inputs[k], 1);
  for (int k = 0; rc == 0 && k < gr->num_nodes; ++k) {
    if (op_encode(&ex->enc, k) || launch_groups_perturb(&ex->enc, k)) {
      char why[1024];
      snprintf(why, sizeof(why), "%.1000s", ex->enc.err);
      rc = ex_fail(&ex->enc, "%s (node %d): %s", gr->nodes[k].name ? gr->nodes[k].name : "op", gr->nodes[k].tflite_node,
                   why);
    }
  }
  for (int k = 0; rc == 0 && k < ex->num_outputs; ++k) {
    BoundaryTensor* b = &ex->outputs[k];
    rc = output_assembled(gr, b->tensor) ? add_assembled(ex, b) : add_conversion(ex, b, 0);
  }
  if (rc || (vm && ex->vm_run->plan(ex, execution))) return -1;
  ex_drop_records(&ex->enc);
  if (ex_finish_dispatches(&ex->enc) || (ex->vm && ex->vm_run->finish(ex))) return -1;
  pinned_staging_attach(ex);
  ex->stale_inputs = env_flag("TFLITE_GPU_TEST_STALE_INPUTS", 0);
  if (dev->profiling && !ex->vm) {
    ex->events = calloc((size_t)ex->enc.num_dispatches + 1, sizeof(cl_event));
    if (!ex->events) return ex_fail(&ex->enc, "out of memory");
  }
  return 0;
}

/* Event times of the last invoke into the device's per-kernel profile,
 * and where the time between kernels went (gpu_device_profile_intervals). */
static void collect_profile(Executor* ex) {
  cl_ulong prev_end = 0;
  for (int i = 0; i < ex->enc.num_dispatches; ++i) {
    gpu_device_profile_event(ex->enc.dev, ex->events[i], ex->enc.dispatches[i].name, &prev_end);
    ex->events[i] = NULL;
  }
}

/* Whether the runtime's tensor holds the bytes the plan expects. */
static int boundary_fits(Executor* ex, const BoundaryTensor* b, const TfLiteTensor* t, const char* what) {
  if (t->data.raw && t->bytes == b->bytes) return 1;
  ex_fail(&ex->enc, "%s tensor %s holds %zu bytes, the plan expects %zu", what, t->name ? t->name : "?", t->bytes, b->bytes);
  return 0;
}

/* An enqueue failed: wait for what is already queued (writes that read the
 * runtime's inputs, reads into its outputs) before reporting. */
static int fail_queued(Executor* ex, const char* fmt, const char* what, cl_int rc) {
  cl.clFinish(ex->enc.dev->queue);
  return ex_fail(&ex->enc, fmt, what, cl_error_name(rc));
}

static int enqueue_dispatches(Executor* ex);
static int read_outputs(Executor* ex, TfLiteContext* ctx);

int executor_invoke(Executor* ex, TfLiteContext* ctx, char* err, size_t errlen) {
  ex->enc.err = err;
  ex->enc.errlen = errlen;
  cl_command_queue q = ex->enc.dev->queue;
  /* Every size checked before anything is queued. */
  for (int k = 0; k < ex->num_inputs; ++k)
    if (!boundary_fits(ex, &ex->inputs[k], &ctx->tensors[ex->inputs[k].tflite_index], "input")) return -1;
  for (int k = 0; k < ex->num_outputs; ++k)
    if (!boundary_fits(ex, &ex->outputs[k], &ctx->tensors[ex->outputs[k].tflite_index], "output")) return -1;
  /* Non-blocking writes: the runtime's buffers stay untouched until the
   * one wait below returns. (The stale-inputs test hook writes them once:
   * later invokes then compute on the first one's, a bug check must catch.) */
  for (int k = 0; k < ex->num_inputs && !(ex->stale_inputs && ex->invokes > 0); ++k) {
    const TfLiteTensor* t = &ctx->tensors[ex->inputs[k].tflite_index];
    cl_int rc = cl.clEnqueueWriteBuffer(q, ex->inputs[k].staging, CL_FALSE, 0, ex->inputs[k].bytes,
                                        pinned_input(&ex->inputs[k], t->data.raw), 0, NULL, NULL);
    if (rc != CL_SUCCESS) return fail_queued(ex, "writing input %s: %s", t->name ? t->name : "?", rc);
  }
  /* A persistent launch that aborted (vm.h) runs the invoke once more,
   * stepped, on the inputs already written. */
  for (int pass = 0; pass < 2; ++pass) {
    if (enqueue_dispatches(ex) || read_outputs(ex, ctx)) return -1;
    /* The one host synchronisation per invoke: every transfer non-blocking,
     * then one wait (it covers a partition with no outputs too, so inputs
     * are never read after we return). */
    cl_int rc = cl.clFinish(q);
    if (rc != CL_SUCCESS) {
      if (ex->vm) ex->vm_run->aborted(ex);
      return ex_fail(&ex->enc, "clFinish: %s", cl_error_name(rc));
    }
    if (!ex->vm || !ex->vm_run->aborted(ex)) break;
  }
  for (int k = 0; k < ex->num_outputs; ++k)
    pinned_output_done(&ex->outputs[k], ctx->tensors[ex->outputs[k].tflite_index].data.raw);
  if (ex->capture) capture_finish(ex, ex->capture);
  ex->invokes++;
  if (ex->events) collect_profile(ex);
  if (ex->vm) ex->vm_run->profile_collect(ex);
  if (!ex->replay_tried) {
    ex->replay_tried = 1;
    if (!ex->vm) cmdbuf_record(ex);
  }
  return 0;
}

/* Every launch of an invoke: the recorded command buffer, the VM's, or one
 * kernel per dispatch (with capture's read-backs after each). */
static int enqueue_dispatches(Executor* ex) {
  cl_command_queue q = ex->enc.dev->queue;
  if (ex->vm) {
    cl_int rc = ex->vm_run->enqueue(ex);
    const char* overrun = rc == CL_SUCCESS ? ex->vm_run->overrun(ex) : "";
    if (overrun[0]) return ex_fail(&ex->enc, "%s", overrun);
    return rc == CL_SUCCESS ? 0 : fail_queued(ex, "enqueueing the %s: %s", "VM's launches", rc);
  }
  /* After the first invoke (which enqueues kernel by kernel, so a failure
   * names its op) the dispatches replay as one recorded command buffer
   * where the device offers cl_khr_command_buffer. */
  if (ex->replay && !ex->capture) {
    cl_int rc = cmdbuf_enqueue(ex);
    if (rc != CL_SUCCESS) {
      cl.clFinish(q);
      return ex_fail(&ex->enc, "enqueueing the command buffer of %d kernels: %s", ex->enc.num_dispatches, cl_error_name(rc));
    }
    return 0;
  }
  for (int i = 0; i < ex->enc.num_dispatches; ++i) {
    const Dispatch* d = &ex->enc.dispatches[i];
    cl_event* ev = ex->events ? &ex->events[i] : NULL;
    cl_int rc = cl.clEnqueueNDRangeKernel(q, d->kernel, d->dims, NULL, d->global, d->local, 0, NULL, ev);
    if (rc != CL_SUCCESS) {
      cl.clFinish(q);
      const GNode* n = d->node >= 0 ? &ex->enc.g.nodes[d->node] : NULL;
      return ex_fail(&ex->enc, "enqueueing kernel %s for %s (node %d): %s", d->name, n && n->name ? n->name : "boundary",
                     n ? n->tflite_node : -1, cl_error_name(rc));
    }
    if (ex->capture && (rc = capture_after_dispatch(ex, ex->capture, ex->capture_partition, i)) != CL_SUCCESS)
      return fail_queued(ex, "reading back a tensor for %s: %s", d->name, rc);
  }
  return 0;
}

/* Submits the batch, so the device runs it while the reads of the outputs
 * are enqueued (a driver may otherwise hold the commands until the wait). */
static int read_outputs(Executor* ex, TfLiteContext* ctx) {
  cl.clFlush(ex->enc.dev->queue);
  for (int k = 0; k < ex->num_outputs; ++k) {
    TfLiteTensor* t = &ctx->tensors[ex->outputs[k].tflite_index];
    cl_int rc = cl.clEnqueueReadBuffer(ex->enc.dev->queue, ex->outputs[k].staging, CL_FALSE, 0, ex->outputs[k].bytes,
                                       pinned_output(&ex->outputs[k], t->data.raw), 0, NULL, NULL);
    if (rc != CL_SUCCESS) return fail_queued(ex, "reading output %s: %s", t->name ? t->name : "?", rc);
  }
  return 0;
}

int executor_time(Executor* ex, int reps, unsigned char* const* inputs, double* median_us, char* err, size_t errlen) {
  ex->enc.err = err;
  ex->enc.errlen = errlen;
  cl_command_queue q = ex->enc.dev->queue;
  size_t most = 1;
  for (int k = 0; k < ex->num_inputs; ++k) most = ex->inputs[k].bytes > most ? ex->inputs[k].bytes : most;
  for (int k = 0; k < ex->num_outputs; ++k) most = ex->outputs[k].bytes > most ? ex->outputs[k].bytes : most;
  /* Without inputs, zeros: every element type reads them as a plain value.
   * host also receives the outputs. */
  unsigned char* host = calloc(1, most);
  if (!host) return ex_fail(&ex->enc, "out of memory");
  enum { MAX_REPS = 15 };
  double runs[MAX_REPS];
  if (reps > MAX_REPS) reps = MAX_REPS;
  if (reps < 1) reps = 1;
  *median_us = -1;
  cl_int rc = CL_SUCCESS;
  for (int r = 0; r <= reps && rc == CL_SUCCESS; ++r) { /* r = 0 warms up: first launches compile on some drivers */
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (int k = 0; k < ex->num_inputs && rc == CL_SUCCESS; ++k)
      rc = cl.clEnqueueWriteBuffer(q, ex->inputs[k].staging, CL_FALSE, 0, ex->inputs[k].bytes,
                                   inputs ? inputs[k] : host, 0, NULL, NULL);
    if (rc == CL_SUCCESS) rc = executor_enqueue(ex);
    for (int k = 0; k < ex->num_outputs && rc == CL_SUCCESS; ++k)
      rc = cl.clEnqueueReadBuffer(q, ex->outputs[k].staging, CL_FALSE, 0, ex->outputs[k].bytes, host, 0, NULL, NULL);
    if (rc == CL_SUCCESS) rc = cl.clFinish(q);
    executor_waited(ex);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double us = (double)(t1.tv_sec - t0.tv_sec) * 1e6 + (double)(t1.tv_nsec - t0.tv_nsec) * 1e-3;
    if (r > 0) runs[r - 1] = us;
  }
  if (rc != CL_SUCCESS) cl.clFinish(q); /* the reads must not outlive host */
  free(host);
  if (rc != CL_SUCCESS) return ex_fail(&ex->enc, "timing the partition: %s", cl_error_name(rc));
  for (int i = 1; i < reps; ++i) /* insertion sort: a handful of runs */
    for (int j = i; j > 0 && runs[j] < runs[j - 1]; --j) {
      double t = runs[j];
      runs[j] = runs[j - 1], runs[j - 1] = t;
    }
  *median_us = reps % 2 ? runs[reps / 2] : 0.5 * (runs[reps / 2 - 1] + runs[reps / 2]);
  return 0;
}

cl_int executor_enqueue(Executor* ex) {
  if (ex->vm) return ex->vm_run->enqueue(ex);
  cl_int rc = CL_SUCCESS;
  for (int i = 0; i < ex->enc.num_dispatches && rc == CL_SUCCESS; ++i) {
    const Dispatch* d = &ex->enc.dispatches[i];
    rc = cl.clEnqueueNDRangeKernel(ex->enc.dev->queue, d->kernel, d->dims, NULL, d->global, d->local, 0, NULL, NULL);
  }
  return rc;
}

void executor_waited(Executor* ex) {
  if (ex->vm) ex->vm_run->aborted(ex);
}

void executor_free(Executor* ex) {
  if (!ex->enc.dev) return;
  cmdbuf_release(ex); /* before the kernels and buffers it refers to */
  if (ex->vm) ex->vm_run->free(ex->vm);
  ex_drop_records(&ex->enc);
  pinned_staging_release(ex);
  for (int i = 0; i < ex->enc.num_dispatches; ++i) {
    if (ex->enc.dispatches[i].kernel) cl.clReleaseKernel(ex->enc.dispatches[i].kernel);
    free(ex->enc.dispatches[i].pending); /* a build that failed before its kernels were made */
  }
  /* Sub-buffers before the arena they live in. */
  for (int i = ex->enc.num_owned - 1; i >= 0; --i) cl.clReleaseMemObject(ex->enc.owned[i]);
  if (ex->arena) cl.clReleaseMemObject(ex->arena);
  free(ex->enc.owned);
  free(ex->enc.mems);
  free(ex->enc.dispatches);
  free(ex->events);
  free(ex->inputs);
  free(ex->outputs);
  graph_free(&ex->enc.g);
  gpu_device_release(ex->enc.dev);
  memset(ex, 0, sizeof(*ex));
}
