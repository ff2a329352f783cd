/* See probe.h. */
#include "runtime/probe.h"

#include <math.h>
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

int probe_is_float(const GTensor* t) { return t->dtype == kTfLiteFloat32 && t->qtype == GD_QNONE; }

unsigned char** probe_inputs(const Executor* ex) {
  unsigned char** ins = calloc((size_t)ex->num_inputs + 1, sizeof(*ins));
  for (int k = 0; ins && k < ex->num_inputs; ++k) {
    const BoundaryTensor* b = &ex->inputs[k];
    if (!(ins[k] = malloc(b->bytes ? b->bytes : 1))) {
      probe_free_inputs(ins, k);
      return NULL;
    }
    fill_input(&ex->enc.g.tensors[b->tensor], b->tflite_index, ins[k], b->bytes);
  }
  return ins;
}

void probe_free_inputs(unsigned char** ins, int n) {
  for (int k = 0; ins && k < n; ++k) free(ins[k]);
  free(ins);
}

cl_int probe_run(Executor* ex, unsigned char** outs) {
  cl_command_queue q = ex->enc.dev->queue;
  cl_int rc = CL_SUCCESS;
  unsigned char** ins = probe_inputs(ex);
  if (!ins) return CL_OUT_OF_HOST_MEMORY;
  for (int k = 0; k < ex->num_inputs && rc == CL_SUCCESS; ++k)
    rc = cl.clEnqueueWriteBuffer(q, ex->inputs[k].staging, CL_FALSE, 0, ex->inputs[k].bytes, ins[k], 0, NULL, NULL);
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
  probe_free_inputs(ins, ex->num_inputs);
  return rc;
}

double probe_rel_l2(const float* a, const float* r, size_t n, double* max_abs) {
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
