/* See capture.h. */
#include "runtime/capture.h"

#include <stdlib.h>
#include <string.h>

#include "model/sparse_densify.h"

static void clear(CaptureStore* s) {
  for (int i = 0; i < s->count; ++i) {
    free(s->items[i].raw);
    free(s->items[i].data);
  }
  s->count = 0;
  s->failed = 0;
}

CaptureStore* capture_store_new(void) {
  CaptureStore* s = calloc(1, sizeof(*s));
  if (s) s->refs = 1;
  return s;
}

CaptureStore* capture_store_ref(CaptureStore* s) {
  if (s) __atomic_add_fetch(&s->refs, 1, __ATOMIC_RELAXED);
  return s;
}

void capture_store_release(CaptureStore* s) {
  if (!s || __atomic_sub_fetch(&s->refs, 1, __ATOMIC_ACQ_REL) != 0) return;
  clear(s);
  free(s->items);
  free(s);
}

void capture_set(CaptureStore* s, int on) {
  if (!s) return;
  clear(s);
  s->on = on;
  if (!on) {
    free(s->items);
    s->items = NULL;
    s->cap = 0;
  }
}

CaptureStore* capture_active(CaptureStore* s) { return s && s->on ? s : NULL; }

static CapturedTensor* add(CaptureStore* s) {
  if (s->count == s->cap) {
    int cap = s->cap ? 2 * s->cap : 64;
    CapturedTensor* r = realloc(s->items, (size_t)cap * sizeof(*r));
    if (!r) return NULL;
    s->items = r;
    s->cap = cap;
  }
  CapturedTensor* c = &s->items[s->count++];
  memset(c, 0, sizeof(*c));
  return c;
}

int capture_after_dispatch(Executor* ex, CaptureStore* s, int partition, int i) {
  const Encoder* e = &ex->enc;
  int node = e->dispatches[i].node;
  if (node < 0 || (i + 1 < e->num_dispatches && e->dispatches[i + 1].node == node)) return 0;
  const GNode* n = &e->g.nodes[node];
  for (int j = 0; j < n->num_outputs; ++j) {
    const GTensor* t = &e->g.tensors[n->outputs[j]];
    cl_mem mem = ex_mem(e, n->outputs[j]);
    if (t->tflite_index < 0 || !mem || t->is_int32) continue;
    CapturedTensor* c = add(s);
    if (!c) return s->failed = 1, 0;
    *c = (CapturedTensor){partition, node, t->tflite_index, {t->shape[0], t->shape[1], t->shape[2], t->shape[3]},
                          CAPTURE_PHWC4_FLOAT, NULL, 0, NULL};
    size_t offset = 0;
    if (t->bhwc_out) {
      c->layout = CAPTURE_BHWC_FLOAT;
      c->raw_bytes = shape_elements(t->shape) * 4;
      offset = t->bhwc_offset * 4;
    } else {
      c->layout = e->dev->fp16 && !t->fp32 ? CAPTURE_PHWC4_HALF : CAPTURE_PHWC4_FLOAT;
      c->raw_bytes = shape_elements_phwc4(t->shape) * (c->layout == CAPTURE_PHWC4_HALF ? 2 : 4);
    }
    c->raw = malloc(c->raw_bytes ? c->raw_bytes : 1);
    if (!c->raw) {
      s->count--;
      s->failed = 1;
      return 0;
    }
    cl_int rc = cl.clEnqueueReadBuffer(e->dev->queue, mem, CL_FALSE, offset, c->raw_bytes, c->raw, 0, NULL, NULL);
    if (rc != CL_SUCCESS) return rc;
  }
  return 0;
}

void capture_finish(Executor* ex, CaptureStore* s) {
  (void)ex;
  for (int i = 0; i < s->count; ++i) {
    CapturedTensor* c = &s->items[i];
    if (c->data) continue;
    const int* sh = c->shape;
    size_t n = shape_elements(sh);
    c->data = malloc((n ? n : 1) * sizeof(float));
    if (!c->data) {
      s->failed = 1;
      continue;
    }
    if (c->layout == CAPTURE_BHWC_FLOAT) {
      memcpy(c->data, c->raw, n * sizeof(float));
      continue;
    }
    int slices = (sh[3] + 3) / 4;
    for (int b = 0; b < sh[0]; ++b)
      for (int y = 0; y < sh[1]; ++y)
        for (int x = 0; x < sh[2]; ++x)
          for (int ch = 0; ch < sh[3]; ++ch) {
            size_t src = ((((size_t)b * slices + ch / 4) * sh[1] + y) * sh[2] + x) * 4 + ch % 4;
            size_t dst = (((size_t)b * sh[1] + y) * sh[2] + x) * sh[3] + ch;
            c->data[dst] = c->layout == CAPTURE_PHWC4_HALF ? tflite_gpu_half_to_float(((const uint16_t*)c->raw)[src])
                                                           : ((const float*)c->raw)[src];
          }
  }
}
