/* The encoder API's buffers (encode.h): the buffers an encoder owns,
 * constants uploaded in PHWC4, dense weights repacked for the conv and
 * fully connected kernels, and index tensors as ints. */
#include "encode/encode.h"

#include <stdlib.h>
#include <string.h>

#include "util/half.h"

int ex_own(Encoder* ex, cl_mem m) {
  if (ex->num_owned == ex->cap_owned) {
    int cap = ex->cap_owned ? ex->cap_owned * 2 : 64;
    cl_mem* o = realloc(ex->owned, (size_t)cap * sizeof(*o));
    if (!o) return ex_fail(ex, "out of memory");
    ex->owned = o;
    ex->cap_owned = cap;
  }
  ex->owned[ex->num_owned++] = m;
  return 0;
}

/* Keeps m's size and a copy of its contents for the VM (vm.c). */
static int record(Encoder* ex, cl_mem m, size_t bytes, const void* data) {
  if (ex->num_records == ex->cap_records) {
    int cap = ex->cap_records ? 2 * ex->cap_records : 64;
    BufferRecord* r = realloc(ex->records, (size_t)cap * sizeof(*r));
    if (!r) return ex_fail(ex, "out of memory");
    ex->records = r;
    ex->cap_records = cap;
  }
  void* copy = NULL;
  if (data && !(copy = malloc(bytes ? bytes : 1))) return ex_fail(ex, "out of memory");
  if (copy) memcpy(copy, data, bytes);
  ex->records[ex->num_records++] = (BufferRecord){m, bytes, copy};
  return 0;
}

void ex_drop_records(Encoder* ex) {
  for (int i = 0; i < ex->num_records; ++i) free(ex->records[i].data);
  free(ex->records);
  ex->records = NULL;
  ex->num_records = ex->cap_records = 0;
}

cl_mem ex_buffer(Encoder* ex, cl_mem_flags flags, size_t bytes, const void* data) {
  cl_int rc;
  cl_mem m = cl.clCreateBuffer(ex->dev->context, flags | (data ? CL_MEM_COPY_HOST_PTR : 0), bytes ? bytes : 16,
                               (void*)data, &rc);
  if (!m) {
    ex_fail(ex, "clCreateBuffer(%zu bytes): %s", bytes, cl_error_name(rc));
    return NULL;
  }
  if (ex_own(ex, m)) {
    cl.clReleaseMemObject(m);
    return NULL;
  }
  if (ex->record_buffers && record(ex, m, bytes, data)) return NULL; /* m is owned: released with the rest */
  return m;
}

cl_mem ex_upload(Encoder* ex, const void* data, size_t bytes) {
  return ex_buffer(ex, CL_MEM_READ_ONLY, bytes, data);
}

int ex_half_storage(const Encoder* ex, const GTensor* t) { return ex->dev->fp16 && !t->fp32; }

int ex_set_mem(Encoder* ex, int t, cl_mem m) {
  if (t < 0 || t >= ex->g.num_tensors) return ex_fail(ex, "tensor %d is not in the graph", t);
  if (!ex->mems && !(ex->mems = calloc((size_t)ex->g.num_tensors, sizeof(cl_mem)))) return ex_fail(ex, "out of memory");
  ex->mems[t] = m;
  return 0;
}

/* A constant used as an operand: uploaded once in PHWC4, storage type. */
static cl_mem upload_const_phwc4(Encoder* ex, int tensor) {
  const GTensor* t = &ex->g.tensors[tensor];
  const int* s = t->shape;
  int slices = (s[GD_C] + 3) / 4;
  size_t n = shape_elements_phwc4(s);
  float* f = calloc(n ? n : 1, sizeof(float));
  if (!f) {
    ex_fail(ex, "out of memory");
    return NULL;
  }
  for (int b = 0; b < s[GD_B]; ++b)
    for (int y = 0; y < s[GD_H]; ++y)
      for (int x = 0; x < s[GD_W]; ++x)
        for (int c = 0; c < s[GD_C]; ++c) {
          size_t src = (((size_t)b * s[GD_H] + y) * s[GD_W] + x) * s[GD_C] + c;
          size_t dst = ((((size_t)b * slices + c / 4) * s[GD_H] + y) * s[GD_W] + x) * 4 + c % 4;
          f[dst] = t->data[src];
        }
  cl_mem m;
  if (ex_half_storage(ex, t)) {
    uint16_t* h = malloc((n ? n : 1) * sizeof(uint16_t));
    if (!h) {
      free(f);
      ex_fail(ex, "out of memory");
      return NULL;
    }
    for (size_t i = 0; i < n; ++i) h[i] = float_to_half(f[i]);
    m = ex_upload(ex, h, n * 2);
    free(h);
  } else {
    m = ex_upload(ex, f, n * 4);
  }
  free(f);
  return m && ex_set_mem(ex, tensor, m) == 0 ? m : NULL;
}

cl_mem ex_tensor_mem(Encoder* ex, int tensor) {
  if (!ex_mem(ex, tensor) && ex->g.tensors[tensor].data) return upload_const_phwc4(ex, tensor);
  return ex_mem(ex, tensor);
}

int ex_dispatch_src_dst(Encoder* ex, int node, const char* file, const char* name, KArgs* a) {
  const GNode* n = &ex->g.nodes[node];
  const GTensor* src = &ex->g.tensors[n->inputs[0]];
  const GTensor* dst = &ex->g.tensors[n->outputs[0]];
  size_t items = phwc4_items(dst->shape);
  KernelRef k = ex_dispatch(ex, file, name, items, node);
  if (!k) return -1;
  *a = (KArgs){k, 0, CL_SUCCESS, (int)items};
  karg_mem(a, ex_tensor_mem(ex, n->inputs[0]));
  karg_mem(a, ex_tensor_mem(ex, n->outputs[0]));
  karg_shape(a, src->shape);
  karg_shape(a, dst->shape);
  return 0;
}

/* Indices as a device int buffer: a runtime int32 tensor's own staging
 * buffer, or a constant (held as exact floats) uploaded as ints. */
cl_mem ex_int_indices(Encoder* ex, int tensor) {
  GTensor* t = &ex->g.tensors[tensor];
  if (!t->data) return ex_mem(ex, tensor);
  size_t n = shape_elements(t->shape);
  int* v = malloc((n ? n : 1) * sizeof(int));
  if (!v) {
    ex_fail(ex, "out of memory");
    return NULL;
  }
  for (size_t i = 0; i < n; ++i) v[i] = (int)t->data[i];
  cl_mem m = ex_upload(ex, v, n * sizeof(int));
  free(v);
  return m;
}

int upload_dense_weights_blocked(Encoder* ex, const GTensor* wt, int src_channels, const GTensor* bias,
                                 int block_slices, cl_mem* wm, cl_mem* bm) {
  int cout = wt->shape[0], kh = wt->shape[1], kw = wt->shape[2], cin = wt->shape[3];
  int si = (src_channels + 3) / 4;
  int bw = block_slices * 4; /* output channels per block */
  int blocks = (cout + bw - 1) / bw;
  /* [G][KH][KW][S_in][4 in-lanes][bw out-lanes], zero padded. */
  size_t count = (size_t)blocks * kh * kw * si * 4 * bw;
  float* w = calloc(count, sizeof(float));
  float* b = calloc((size_t)blocks * bw, sizeof(float));
  if (!w || !b) {
    free(w);
    free(b);
    return ex_fail(ex, "out of memory repacking weights");
  }
  if (bias) memcpy(b, bias->data, (size_t)cout * sizeof(float));
  for (int o = 0; o < cout; ++o)
    for (int y = 0; y < kh; ++y)
      for (int x = 0; x < kw; ++x)
        for (int i = 0; i < cin; ++i) {
          size_t dst = ((((size_t)(o / bw) * kh + y) * kw + x) * si * 4 + (size_t)i) * bw + o % bw;
          w[dst] = wt->data[(((size_t)o * kh + y) * kw + x) * cin + i];
        }
  *wm = ex_upload(ex, w, count * sizeof(float));
  *bm = *wm ? ex_upload(ex, b, (size_t)blocks * bw * sizeof(float)) : NULL;
  free(w);
  free(b);
  return *bm ? 0 : -1;
}

int split_first_pass(Encoder* ex, int node, const char* kernel, size_t items, cl_mem part, cl_mem wm, cl_mem bm,
                     KArgs* a) {
  const GNode* n = &ex->g.nodes[node];
  KernelVariant v = variant_1d("split_k.cl", kernel, items);
  KernelRef k = ex_dispatch_variant(ex, &v, node);
  if (!k) return -1;
  *a = (KArgs){k, 0, CL_SUCCESS, 0};
  karg_mem(a, ex_tensor_mem(ex, n->inputs[0]));
  karg_mem(a, part);
  karg_mem(a, wm);
  karg_mem(a, bm);
  karg_shape(a, ex->g.tensors[n->inputs[0]].shape);
  karg_shape(a, ex->g.tensors[n->outputs[0]].shape);
  return 0;
}

int upload_dense_weights(Encoder* ex, const GTensor* wt, int src_channels, const GTensor* bias, cl_mem* wm,
                         cl_mem* bm) {
  return upload_dense_weights_blocked(ex, wt, src_channels, bias, 1, wm, bm);
}
