/* fp16_guard=on: half storage only where it measurably agrees with float.
 *
 * Some models amplify FP16's roundings into outputs that are wrong (the
 * segmentation logits of pose_landmark_full: 0.025-0.09 relative L2, and
 * not from one op: rounding only its input image to half costs 0.004, so no
 * small float island fixes it). Before an FP16 partition is built for good,
 * partition_kernel.c builds it twice more, as planned and on float storage
 * throughout; this file runs both on the same seeded inputs (floats uniform
 * in [-1, 1) as `tflite-gpu check` draws them, other types zero) and flags
 * each float output whose half result is further than the limit from the
 * float one (relative L2), unless every element is within GD_FP16_GUARD_ABS
 * (outputs near zero, such as a mask after a sigmoid on random inputs). Those outputs keep every node they depend on on float
 * (mixed_storage.c); the rest of the partition stays half. */
#include "runtime/fp16_guard.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cl/cl_api.h"
#include "model/tflite_abi.h"

/* The probe's input values: a seed per TFLite tensor, so that two
 * executors of one partition see the same data whatever their input order. */
static void fill_input(const GTensor* t, int tflite_index, void* host, size_t bytes) {
  memset(host, 0, bytes);
  if (t->dtype != kTfLiteFloat32 || t->qtype != GD_QNONE || t->is_int32) return;
  uint32_t x = 2463534242u ^ (uint32_t)(tflite_index + 1) * 2654435761u;
  float* f = host;
  for (size_t i = 0; i < bytes / sizeof(float); ++i) {
    x ^= x << 13, x ^= x >> 17, x ^= x << 5; /* xorshift32 */
    f[i] = (float)((double)x / 4294967296.0 * 2.0 - 1.0);
  }
}

static int is_float_output(const GTensor* t) { return t->dtype == kTfLiteFloat32 && t->qtype == GD_QNONE; }

/* One run of ex on the probe's inputs; outs[k] receives output k (malloc'd). */
static cl_int probe_run(Executor* ex, unsigned char** outs) {
  cl_command_queue q = ex->enc.dev->queue;
  cl_int rc = CL_SUCCESS;
  unsigned char** ins = calloc((size_t)ex->num_inputs + 1, sizeof(*ins));
  if (!ins) return CL_OUT_OF_HOST_MEMORY;
  for (int k = 0; k < ex->num_inputs && rc == CL_SUCCESS; ++k) {
    const BoundaryTensor* b = &ex->inputs[k];
    ins[k] = malloc(b->bytes ? b->bytes : 1);
    if (!ins[k]) {
      rc = CL_OUT_OF_HOST_MEMORY;
      break;
    }
    fill_input(&ex->enc.g.tensors[b->tensor], b->tflite_index, ins[k], b->bytes);
    rc = cl.clEnqueueWriteBuffer(q, b->staging, CL_FALSE, 0, b->bytes, ins[k], 0, NULL, NULL);
  }
  if (rc == CL_SUCCESS) rc = executor_enqueue(ex);
  for (int k = 0; k < ex->num_outputs && rc == CL_SUCCESS; ++k) {
    outs[k] = malloc(ex->outputs[k].bytes ? ex->outputs[k].bytes : 1);
    if (!outs[k]) rc = CL_OUT_OF_HOST_MEMORY;
    else rc = cl.clEnqueueReadBuffer(q, ex->outputs[k].staging, CL_FALSE, 0, ex->outputs[k].bytes, outs[k], 0, NULL,
                                     NULL);
  }
  cl_int fin = cl.clFinish(q); /* the writes and reads must not outlive the host buffers */
  executor_waited(ex);
  if (rc == CL_SUCCESS) rc = fin;
  for (int k = 0; k < ex->num_inputs; ++k) free(ins[k]);
  free(ins);
  return rc;
}

/* Relative L2 distance of a from the reference r, and the largest
 * absolute difference; a NaN or infinity that r does not have counts as
 * infinitely far. */
static double rel_l2(const float* a, const float* r, size_t n, double* max_abs) {
  double num = 0, den = 0;
  *max_abs = 0;
  for (size_t i = 0; i < n; ++i) {
    if (!isfinite(a[i]) && isfinite(r[i])) return *max_abs = INFINITY;
    if (!isfinite(r[i])) continue;
    double d = fabs((double)a[i] - (double)r[i]);
    if (d > *max_abs) *max_abs = d;
    num += d * d;
    den += (double)r[i] * r[i];
  }
  if (den == 0) return num == 0 ? 0 : INFINITY;
  return sqrt(num / den);
}

int fp16_guard_compare(Executor* half, Executor* ref, double limit, char* keep_float, double* rel, char* err,
                       size_t errlen) {
  int n = half->num_outputs - half->num_state_outputs; /* the partition's outputs, not written-back states */
  if (ref->num_outputs != half->num_outputs) return snprintf(err, errlen, "fp16_guard: the two builds differ in outputs"), -1;
  int all = half->num_outputs;
  unsigned char** a = calloc((size_t)all + 1, sizeof(*a));
  unsigned char** b = calloc((size_t)all + 1, sizeof(*b));
  int rc = -1;
  if (!a || !b) {
    snprintf(err, errlen, "out of memory");
    goto done;
  }
  cl_int cr = probe_run(half, a);
  if (cr == CL_SUCCESS) cr = probe_run(ref, b);
  if (cr != CL_SUCCESS) {
    snprintf(err, errlen, "fp16_guard: running the probe: %s", cl_error_name(cr));
    goto done;
  }
  rc = 0;
  for (int k = 0; k < n; ++k) {
    const GTensor* t = &half->enc.g.tensors[half->outputs[k].tensor];
    rel[k] = 0;
    keep_float[k] = 0;
    if (!is_float_output(t) || half->outputs[k].bytes != ref->outputs[k].bytes) continue;
    double max_abs;
    rel[k] = rel_l2((const float*)a[k], (const float*)b[k], half->outputs[k].bytes / sizeof(float), &max_abs);
    keep_float[k] = !(rel[k] <= limit || max_abs <= GD_FP16_GUARD_ABS);
    rc += keep_float[k];
  }
done:
  for (int k = 0; a && b && k < all; ++k) free(a[k]), free(b[k]);
  free(a);
  free(b);
  return rc;
}
