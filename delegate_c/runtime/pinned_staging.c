#include "runtime/pinned_staging.h"

#include <stdlib.h>
#include <string.h>


static void pin(Executor* ex, BoundaryTensor* b) {
  cl_int rc = CL_SUCCESS;
  cl_mem m = cl.clCreateBuffer(ex->enc.dev->context, CL_MEM_ALLOC_HOST_PTR | CL_MEM_READ_WRITE, b->bytes ? b->bytes : 16,
                               NULL, &rc);
  if (!m || rc != CL_SUCCESS) return;
  void* host = cl.clEnqueueMapBuffer(ex->enc.dev->queue, m, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 0,
                                     b->bytes ? b->bytes : 16, 0, NULL, NULL, &rc);
  if (!host || rc != CL_SUCCESS) {
    cl.clReleaseMemObject(m);
    return;
  }
  b->pinned = m;
  b->host = host;
}

void pinned_staging_attach(Executor* ex) {
  if (!ex->enc.target.pol.v[POL_PINNED_STAGING]) return;
  for (int k = 0; k < ex->num_inputs; ++k) pin(ex, &ex->inputs[k]);
  for (int k = 0; k < ex->num_outputs; ++k) pin(ex, &ex->outputs[k]);
}

static void unpin(Executor* ex, BoundaryTensor* b) {
  if (!b->pinned) return;
  cl.clEnqueueUnmapMemObject(ex->enc.dev->queue, b->pinned, b->host, 0, NULL, NULL);
  cl.clFinish(ex->enc.dev->queue); /* the unmap completes before the release */
  cl.clReleaseMemObject(b->pinned);
  b->pinned = NULL;
  b->host = NULL;
}

void pinned_staging_release(Executor* ex) {
  for (int k = 0; ex->inputs && k < ex->num_inputs; ++k) unpin(ex, &ex->inputs[k]);
  for (int k = 0; ex->outputs && k < ex->num_outputs; ++k) unpin(ex, &ex->outputs[k]);
}

const void* pinned_input(const BoundaryTensor* b, const void* data) {
  if (!b->host) return data;
  memcpy(b->host, data, b->bytes);
  return b->host;
}

void* pinned_output(const BoundaryTensor* b, void* data) { return b->host ? b->host : data; }

void pinned_output_done(const BoundaryTensor* b, void* data) {
  if (b->host) memcpy(data, b->host, b->bytes);
}
