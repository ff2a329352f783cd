/* Data-movement ops: CONCATENATION, RESHAPE, EXPAND_DIMS, SQUEEZE, PAD / PADV2 / MIRROR_PAD,
 * STRIDED_SLICE, and the generic remap every index-map op lowers to
 * (opencl_kernels/layout.cl). */
#include <stdlib.h>
#include <string.h>

#include "encode/encode.h"
#include "ops/op_table.h"
#include "model/tflite_builtins.h"
#include "ops/op_kinds.h"

/* The graph ops this file encodes (graph.h: a node points at its op). */
static int encode_concat(Encoder* ex, int node);
const GOpDesc kGOpConcat = {"CONCAT", encode_concat};
static int encode_remap(Encoder* ex, int node);
/* reshape, slices, pads, transpose, tile, gather: per-axis index maps */
const GOpDesc kGOpRemap = {"REMAP", encode_remap};

/* ---------------- CONCATENATION ---------------- */

static int act_to_unary(int act) {
  switch (act) {
    case kTfLiteActRelu: return UN_RELU;
    case kTfLiteActReluN1To1: return UN_RELU_N1_TO_1;
    case kTfLiteActRelu6: return UN_RELU6;
    case kTfLiteActTanh: return UN_TANH;
    case kTfLiteActSigmoid: return UN_LOGISTIC;
    default: return -1;
  }
}

static int check_concat(const NodeInfo* ni) {
  const TfLiteConcatenationParams* p = ni->node->builtin_data;
  if (!p) return reason(ni, "missing parameters");
  int n = ni_num_inputs(ni);
  if (n < 1 || n > GD_MAX_NODE_INPUTS || ni_num_outputs(ni) != 1)
    return reason(ni, "has %d inputs; 1 to %d are supported", n, GD_MAX_NODE_INPUTS);
  /* The CPU's CONCATENATION refuses every fused activation, so there is no
   * CPU behaviour to match: apply what the schema says, TANH included. */
  if (p->activation != kTfLiteActTanh && p->activation != kTfLiteActSigmoid && check_activation(ni, p->activation))
    return -1;
  int rank = mv_tensor(ni->mv, ni_input(ni, 0))->dims->size;
  if (p->axis < -rank || p->axis >= (rank ? rank : 1)) return reason(ni, "axis %d is out of range for rank %d", p->axis, rank);
  int axis = axis_to_bhwc(p->axis, rank);
  int64_t out[4];
  for (int k = 0; k < n; ++k) {
    int s[4];
    int t = ni_input(ni, k);
    if (t < 0) return reason(ni, "input %d is missing", k);
    if (ni_shape(ni, t, s) != rank) return reason(ni, "input %d has a different rank", k);
    if (k == 0) {
      for (int d = 0; d < 4; ++d) out[d] = s[d];
      continue;
    }
    for (int d = 0; d < 4; ++d) {
      if (d != axis && s[d] != out[d]) return reason(ni, "input %d differs from input 0 off the concat axis", k);
    }
    out[axis] += s[axis]; /* at most 16 ints: no overflow in 64 bits */
  }
  return check_output_shape64(ni, ni_output(ni, 0), out);
}

static int lower_concat(Lowering* lw, const NodeInfo* ni) {
  const TfLiteConcatenationParams* p = ni->node->builtin_data;
  int rank = mv_tensor(lw->mv, ni_input(ni, 0))->dims->size;
  int out = lower_tensor(lw, ni_output(ni, 0));
  if (out < 0) return -1;
  int target = out;
  if (p->activation != kTfLiteActNone) {
    /* Concatenate into a temporary, then apply the activation. */
    target = graph_add_tensor(lw->g, lw->g->tensors[out].shape, lw->g->tensors[out].rank);
    if (target < 0) return lower_error(lw, "out of memory");
  }
  int ins[GD_MAX_NODE_INPUTS];
  int n = ni_num_inputs(ni);
  for (int k = 0; k < n; ++k) {
    ins[k] = lower_tensor(lw, ni_input(ni, k));
    if (ins[k] < 0) return -1;
  }
  GNode* node = graph_add_node(lw->g, GOP_CONCAT);
  if (!node) return lower_error(lw, "out of memory");
  memcpy(node->inputs, ins, (size_t)n * sizeof(int));
  node->num_inputs = n;
  node->outputs[0] = target;
  node->num_outputs = 1;
  node->p.concat.axis = axis_to_bhwc(p->axis, rank);
  if (target != out) return lower_unary_node(lw, target, out, act_to_unary(p->activation), 0.0f, ni->index);
  return 0;
}

static int encode_concat(Encoder* ex, int node) {
  const GNode* n = &ex->g.nodes[node];
  const GTensor* dst = &ex->g.tensors[n->outputs[0]];
  int axis = n->p.concat.axis;
  int offset = 0;
  for (int k = 0; k < n->num_inputs; ++k) {
    const GTensor* src = &ex->g.tensors[n->inputs[k]];
    KernelRef kern = ex_dispatch(ex, "layout.cl", "concat_copy", phwc4_items(src->shape), node);
    if (!kern) return -1;
    int off[4] = {0, 0, 0, 0};
    off[axis] = offset;
    offset += src->shape[axis];
    int ends_channels = axis == GD_C && k == n->num_inputs - 1;
    KArgs a = {kern, 0, CL_SUCCESS, 0};
    karg_mem(&a, ex_tensor_mem(ex, n->inputs[k]));
    karg_mem(&a, ex_tensor_mem(ex, n->outputs[0]));
    karg_shape(&a, src->shape);
    karg_shape(&a, dst->shape);
    karg_int4(&a, off[GD_W], off[GD_H], off[GD_C], off[GD_B]);
    karg_int(&a, ends_channels ? dst->shape[GD_C] : 0);
    karg_int(&a, (int)phwc4_items(src->shape));
    if (karg_done(ex, &a)) return -1;
  }
  return 0;
}

/* ------- remap: RESHAPE, PAD, PADV2, MIRROR_PAD, STRIDED_SLICE ------- */

/* Re-planning after a resize: the output shape TFLite's RESHAPE would give
 * (the constant shape input, else the parameters; one -1 resolved). */
static int infer_reshape(const NodeInfo* ni, const int in[4]) {
  int dims[8], rank = 0;
  char err[200];
  const TfLiteReshapeParams* p = ni->node->builtin_data;
  if (ni_input(ni, 1) >= 0 && mv_is_const(ni->mv, ni_input(ni, 1))) {
    if (mv_const_ints(ni->mv, ni_input(ni, 1), dims, 8, &rank, err, sizeof(err)))
      return reason(ni, "new shape: %s", err);
  } else if (p && p->num_dimensions > 0 && p->num_dimensions <= 8) {
    rank = p->num_dimensions;
    memcpy(dims, p->shape, (size_t)rank * sizeof(int));
  } else {
    /* No known target: the shape stays, and the element check decides. */
    int cur[8];
    int n = mv_dims(ni->mv, ni_output(ni, 0), cur, 8);
    return n < 0 ? reason(ni, "output has no shape") : set_output_dims(ni, ni_output(ni, 0), cur, n);
  }
  if (rank > 4) return reason(ni, "new shape has rank %d; at most 4 is supported", rank);
  int64_t known = 1, total = (int64_t)shape_elements(in);
  int unknown = -1;
  for (int d = 0; d < rank; ++d) {
    if (dims[d] == -1 && unknown < 0) unknown = d;
    else if (dims[d] > 0) known = size_mul(known, dims[d]);
    else return reason(ni, "new shape has dimension %d = %d", d, dims[d]);
  }
  if (unknown >= 0) {
    if (known == 0 || total % known) return reason(ni, "cannot reshape %lld elements to the new shape", (long long)total);
    dims[unknown] = (int)(total / known);
  }
  return set_output_dims(ni, ni_output(ni, 0), dims, rank);
}

static int check_reshape(const NodeInfo* ni) {
  int n = ni_num_inputs(ni);
  if (n < 1 || n > 2 || ni_num_outputs(ni) != 1) return reason(ni, "needs 1-2 inputs and 1 output");
  if (mv_is_const(ni->mv, ni_input(ni, 0))) return reason(ni, "input 0 is a constant");
  int in[4], out[4];
  if (ni_shape(ni, ni_input(ni, 0), in) < 0) return reason(ni, "input 0 must have rank <= 4");
  if (ni->mv->infer_shapes && infer_reshape(ni, in)) return -1;
  if (ni_shape(ni, ni_output(ni, 0), out) < 0) return reason(ni, "output must have rank <= 4");
  if (shape_elements(in) != shape_elements(out))
    return reason(ni, "output holds %zu elements, input %zu", shape_elements(out), shape_elements(in));
  return 0;
}

static int lower_reshape(Lowering* lw, const NodeInfo* ni) {
  int in = lower_tensor(lw, ni_input(ni, 0));
  int out = in < 0 ? -1 : lower_tensor(lw, ni_output(ni, 0));
  if (out < 0) return -1;
  return lower_remap_node(lw, in, out, REMAP_RESHAPE) ? 0 : -1;
}

/* EXPAND_DIMS and SQUEEZE insert or drop size-1 dimensions: reshapes whose
 * output dims follow from the input's, which the check computes and
 * compares with the declared ones (or sets them when re-planning). */
static int check_dims_change(const NodeInfo* ni, const int* dims, int rank) {
  if (rank > 4) return reason(ni, "the output would have rank %d; at most 4 is supported", rank);
  if (ni->mv->infer_shapes) return set_output_dims(ni, ni_output(ni, 0), dims, rank);
  int declared[8];
  int n = mv_dims(ni->mv, ni_output(ni, 0), declared, 8);
  if (n != rank || memcmp(declared, dims, (size_t)rank * sizeof(int)) != 0)
    return reason(ni, "declared output shape differs from the one its input and parameters give");
  return 0;
}

static int check_expand_dims(const NodeInfo* ni) {
  if (ni_num_inputs(ni) != 2 || ni_num_outputs(ni) != 1) return reason(ni, "needs 2 inputs and 1 output");
  if (mv_is_const(ni->mv, ni_input(ni, 0))) return reason(ni, "input 0 is a constant");
  if (!mv_is_const(ni->mv, ni_input(ni, 1))) return reason(ni, "the axis (input 1) must be a constant");
  int dims[8], axis[8], rank, count = 0;
  char err[200];
  if ((rank = mv_dims(ni->mv, ni_input(ni, 0), dims, 7)) < 0 || rank > 3)
    return reason(ni, "input 0 must have rank <= 3 (the output at most 4)");
  if (mv_const_ints(ni->mv, ni_input(ni, 1), axis, 8, &count, err, sizeof(err))) return reason(ni, "axis: %s", err);
  if (count != 1) return reason(ni, "the axis holds %d values; 1 expected", count);
  int a = axis[0] < 0 ? axis[0] + rank + 1 : axis[0];
  if (a < 0 || a > rank) return reason(ni, "axis %d is outside [%d, %d]", axis[0], -rank - 1, rank);
  memmove(dims + a + 1, dims + a, (size_t)(rank - a) * sizeof(int));
  dims[a] = 1;
  return check_dims_change(ni, dims, rank + 1);
}

static int check_squeeze(const NodeInfo* ni) {
  const TfLiteSqueezeParams* p = ni->node->builtin_data;
  if (!p) return reason(ni, "missing parameters");
  if (ni_num_inputs(ni) != 1 || ni_num_outputs(ni) != 1) return reason(ni, "needs 1 input and 1 output");
  if (mv_is_const(ni->mv, ni_input(ni, 0))) return reason(ni, "input 0 is a constant");
  int dims[8], rank;
  if ((rank = mv_dims(ni->mv, ni_input(ni, 0), dims, 8)) < 0) return reason(ni, "input 0 has no usable shape");
  if (p->num_squeeze_dims < 0 || p->num_squeeze_dims > 8)
    return reason(ni, "num_squeeze_dims %d is outside 0..8", p->num_squeeze_dims);
  int drop[8] = {0};
  for (int k = 0; k < p->num_squeeze_dims; ++k) {
    int a = p->squeeze_dims[k] < 0 ? p->squeeze_dims[k] + rank : p->squeeze_dims[k];
    if (a < 0 || a >= rank) return reason(ni, "squeeze dimension %d is outside the input's rank %d", p->squeeze_dims[k], rank);
    if (dims[a] != 1) return reason(ni, "squeeze dimension %d has size %d, not 1", p->squeeze_dims[k], dims[a]);
    drop[a] = 1;
  }
  int out[8], n = 0;
  for (int d = 0; d < rank; ++d)
    if (!(p->num_squeeze_dims ? drop[d] : dims[d] == 1)) out[n++] = dims[d];
  return check_dims_change(ni, out, n);
}

/* PAD, PADV2 (constant value, input 2) and MIRROR_PAD (REFLECT or
 * SYMMETRIC) share one check and one remap with a border rule. */
static int pad_border(const NodeInfo* ni) {
  if (ni->reg->builtin_code != kBuiltinMirrorPad) return BORDER_CONST;
  const TfLiteMirrorPaddingParams* p = ni->node->builtin_data;
  if (!p) return -1;
  if (p->mode == kTfLiteMirrorPaddingReflect) return BORDER_REFLECT;
  if (p->mode == kTfLiteMirrorPaddingSymmetric) return BORDER_SYMMETRIC;
  return -1;
}

static int check_pad(const NodeInfo* ni) {
  int code = ni->reg->builtin_code;
  int n_in = code == kBuiltinPadv2 ? 3 : 2;
  if (ni_num_inputs(ni) != n_in || ni_num_outputs(ni) != 1)
    return reason(ni, "needs %d inputs and 1 output, has %d and %d", n_in, ni_num_inputs(ni), ni_num_outputs(ni));
  if (mv_is_const(ni->mv, ni_input(ni, 0))) return reason(ni, "input 0 is a constant");
  int border = pad_border(ni);
  if (border < 0) return reason(ni, "unknown mirror padding mode");
  if (code == kBuiltinPadv2) {
    if (check_const_input(ni, 2, "constant_values", kTfLiteFloat32)) return -1;
    if (mv_elements(ni->mv, ni_input(ni, 2)) != 1) return reason(ni, "constant_values (input 2) must hold 1 value");
  }
  if (!mv_is_const(ni->mv, ni_input(ni, 1))) return reason(ni, "paddings (input 1) must be constant");
  int pads[8], count, in[4];
  int64_t out[4];
  int rank = ni_shape(ni, ni_input(ni, 0), in);
  if (rank < 1) return reason(ni, "input 0 must have rank 1-4");
  char err[200];
  if (mv_const_ints(ni->mv, ni_input(ni, 1), pads, 8, &count, err, sizeof(err)))
    return reason(ni, "paddings (input 1): %s", err);
  if (count != rank * 2) return reason(ni, "paddings hold %d values; %d expected", count, rank * 2);
  for (int d = 0; d < 4; ++d) out[d] = in[d];
  for (int d = 0; d < rank; ++d) {
    int dim = in[4 - rank + d];
    if (pads[2 * d] < 0 || pads[2 * d + 1] < 0) return reason(ni, "negative padding on axis %d", d);
    /* A mirror reaches at most one reflection into the input. */
    int limit = border == BORDER_REFLECT ? dim - 1 : dim;
    if (border != BORDER_CONST && (pads[2 * d] > limit || pads[2 * d + 1] > limit))
      return reason(ni, "%s padding %d/%d on axis %d exceeds %d for a size-%d axis",
                    border == BORDER_REFLECT ? "REFLECT" : "SYMMETRIC", pads[2 * d], pads[2 * d + 1], d, limit, dim);
    out[4 - rank + d] += (int64_t)pads[2 * d] + pads[2 * d + 1];
  }
  /* Also bounds the kernel's source coordinate (output - leading pad). */
  return check_output_shape64(ni, ni_output(ni, 0), out);
}

static int lower_pad(Lowering* lw, const NodeInfo* ni) {
  int pads[8], count;
  if (mv_const_ints(lw->mv, ni_input(ni, 1), pads, 8, &count, lw->err, lw->errlen)) return -1;
  float value = 0.0f;
  if (ni->reg->builtin_code == kBuiltinPadv2) {
    float* v;
    if (mv_const_float(lw->mv, ni_input(ni, 2), &v, lw->err, lw->errlen)) return -1;
    value = v[0];
    free(v);
  }
  int in = lower_tensor(lw, ni_input(ni, 0));
  int out = in < 0 ? -1 : lower_tensor(lw, ni_output(ni, 0));
  if (out < 0) return -1;
  GNode* n = lower_remap_node(lw, in, out, REMAP_PAD);
  if (!n) return -1;
  int rank = count / 2;
  for (int d = 0; d < rank; ++d) n->p.remap.begin[4 - rank + d] = -pads[2 * d];
  n->p.remap.value = value;
  n->p.remap.border = pad_border(ni);
  return 0;
}

/* TFLite's strided-slice bounds for one axis (positive stride). */
/* In 64 bits: begin, end and stride are arbitrary model ints. */
static void slice_axis(int dim, int b, int e, int s, int begin_masked, int end_masked, int shrink, int offset,
                       int* start, int* size) {
  int64_t lo = begin_masked ? 0 : (b < 0 ? (int64_t)b + dim : b);
  if (lo < 0) lo = 0;
  if (lo > dim) lo = dim;
  int64_t hi;
  if (shrink) {
    hi = lo + 1;
  } else if (end_masked) {
    hi = dim;
  } else {
    hi = offset ? lo + e : (e < 0 ? (int64_t)e + dim : e);
    if (hi < 0) hi = 0;
    if (hi > dim) hi = dim;
  }
  *start = (int)lo;
  *size = hi > lo ? (int)((hi - lo + s - 1) / s) : 0;
}

/* Computes begin/stride/size per BHWC axis; returns -1 with reason. */
static int slice_params(const NodeInfo* ni, const ModelView* mv, int begin4[4], int stride4[4], int size4[4]) {
  const TfLiteStridedSliceParams* p = ni->node->builtin_data;
  int in[4], b[4], e[4], s[4], nb, ne, ns;
  int rank = ni_shape(ni, ni_input(ni, 0), in);
  char err[200];
  if (mv_const_ints(mv, ni_input(ni, 1), b, 4, &nb, err, sizeof(err)) ||
      mv_const_ints(mv, ni_input(ni, 2), e, 4, &ne, err, sizeof(err)) ||
      mv_const_ints(mv, ni_input(ni, 3), s, 4, &ns, err, sizeof(err)))
    return reason(ni, "begin/end/strides: %s", err);
  if (nb != rank || ne != rank || ns != rank) return reason(ni, "begin/end/strides must each hold %d values", rank);
  for (int d = 0; d < 4; ++d) begin4[d] = 0, stride4[d] = 1, size4[d] = in[d];
  for (int d = 0; d < rank; ++d) {
    if (s[d] <= 0) return reason(ni, "stride %d on axis %d; only positive strides are supported", s[d], d);
    int ax = 4 - rank + d;
    slice_axis(in[ax], b[d], e[d], s[d], (p->begin_mask >> d) & 1, (p->end_mask >> d) & 1,
               (p->shrink_axis_mask >> d) & 1, p->offset, &begin4[ax], &size4[ax]);
    stride4[ax] = s[d];
    if (size4[ax] < 1) return reason(ni, "the slice of axis %d is empty", d);
  }
  return 0;
}

static int check_strided_slice(const NodeInfo* ni) {
  const TfLiteStridedSliceParams* p = ni->node->builtin_data;
  if (!p) return reason(ni, "missing parameters");
  if (ni_num_inputs(ni) != 4 || ni_num_outputs(ni) != 1) return reason(ni, "needs 4 inputs and 1 output");
  if (mv_is_const(ni->mv, ni_input(ni, 0))) return reason(ni, "input 0 is a constant");
  if (p->ellipsis_mask) return reason(ni, "ellipsis_mask %d is not supported", p->ellipsis_mask);
  if (p->new_axis_mask) return reason(ni, "new_axis_mask %d is not supported", p->new_axis_mask);
  int in[4];
  if (ni_shape(ni, ni_input(ni, 0), in) < 1) return reason(ni, "input 0 must have rank 1-4");
  int begin[4], stride[4], size[4];
  if (slice_params(ni, ni->mv, begin, stride, size)) return -1;
  if (ni->mv->infer_shapes && p->shrink_axis_mask) {
    /* Re-planning after a resize: the sliced axes minus the shrunk ones. */
    int rank = ni_shape(ni, ni_input(ni, 0), in), dims[4], n = 0;
    for (int d = 0; d < rank; ++d)
      if (!((p->shrink_axis_mask >> d) & 1)) dims[n++] = size[4 - rank + d];
    if (set_output_dims(ni, ni_output(ni, 0), dims, n)) return -1;
  }
  int out[4];
  if (ni_shape(ni, ni_output(ni, 0), out) < 0) return reason(ni, "output must have rank <= 4");
  if (shape_elements(out) != shape_elements(size))
    return reason(ni, "declared output holds %zu elements, the slice %zu", shape_elements(out), shape_elements(size));
  /* Shrunk axes vanish from the output; otherwise shapes must agree. */
  if (p->shrink_axis_mask == 0) return check_output_shape(ni, ni_output(ni, 0), size);
  return 0;
}

static int lower_strided_slice(Lowering* lw, const NodeInfo* ni) {
  int begin[4], stride[4], size[4];
  if (slice_params(ni, lw->mv, begin, stride, size)) return -1;
  int in = lower_tensor(lw, ni_input(ni, 0));
  int out = in < 0 ? -1 : lower_tensor(lw, ni_output(ni, 0));
  if (out < 0) return -1;
  int target = out;
  if (memcmp(lw->g->tensors[out].shape, size, sizeof(size)) != 0) {
    /* Shrunk axes: slice into the input-aligned shape, then reshape. */
    target = graph_add_tensor(lw->g, size, 4);
    if (target < 0) return lower_error(lw, "out of memory");
  }
  GNode* n = lower_remap_node(lw, in, target, REMAP_SLICE);
  if (!n) return -1;
  memcpy(n->p.remap.begin, begin, sizeof(begin));
  memcpy(n->p.remap.stride, stride, sizeof(stride));
  if (target != out && !lower_remap_node(lw, target, out, REMAP_RESHAPE)) return -1;
  return 0;
}

/* Kernel axis order (x, y, c, b) from BHWC and back. */
static const int kToKernel[4] = {3, 1, 0, 2};
static const int kFromKernel[4] = {GD_W, GD_H, GD_C, GD_B};

/* Channels map to themselves from 0 with step 1, so whole float4s move:
 * then the output's channels are a prefix of the source's, or the rest is
 * a zero fill (the source's padded lanes are zero). */
static int remap_whole_slices(const GNode* n, const int* src, const int* dst) {
  const int *perm = n->p.remap.perm, *stride = n->p.remap.stride;
  if (n->p.remap.mode == REMAP_RESHAPE || perm[GD_C] != GD_C || n->p.remap.begin[GD_C] != 0 || stride[GD_C] != 1)
    return 0;
  if (n->p.remap.gather && (n->p.remap.gather_axis == GD_C || n->p.remap.gather_stride[GD_C] != 0)) return 0;
  for (int a = 0; a < 3; ++a)
    if (perm[a] == GD_C && stride[a] != 0) return 0;
  return dst[GD_C] <= src[GD_C] || (n->p.remap.border == BORDER_CONST && n->p.remap.value == 0.0f);
}

/* Reshapes, slices and pads (identity perm, constant fill) take the short
 * `remap` kernel; every other map takes `remap_map`. */
static int encode_remap(Encoder* ex, int node) {
  const GNode* n = &ex->g.nodes[node];
  const int* b = n->p.remap.begin;
  const int* s = n->p.remap.stride;
  int plain = !n->p.remap.gather && n->p.remap.border == BORDER_CONST;
  for (int d = 0; d < 4; ++d) plain &= n->p.remap.perm[d] == d && (s[d] != 0 || n->p.remap.mode == REMAP_RESHAPE);
  KArgs a;
  if (plain) {
    if (ex_dispatch_src_dst(ex, node, "layout.cl", "remap", &a)) return -1;
    karg_int4(&a, b[GD_W], b[GD_H], b[GD_C], b[GD_B]);
    karg_int4(&a, s[GD_W], s[GD_H], s[GD_C], s[GD_B]);
    karg_int(&a, n->p.remap.mode == REMAP_RESHAPE ? 0 : 1);
    karg_float(&a, n->p.remap.value);
    karg_int(&a, a.total);
    return karg_done(ex, &a);
  }
  /* Column k of the output-to-source map: which source axis follows
   * output axis k, scaled by its stride (kernel axis order). */
  int col[4][4] = {{0}}, gstride[4];
  for (int k = 0; k < 4; ++k) gstride[k] = n->p.remap.gather_stride[kFromKernel[k]];
  for (int src = 0; src < 4; ++src)
    if (!n->p.remap.gather || src != n->p.remap.gather_axis)
      col[kToKernel[n->p.remap.perm[src]]][kToKernel[src]] = s[src];
  cl_mem indices = n->p.remap.gather ? ex_int_indices(ex, n->inputs[1]) : ex_tensor_mem(ex, n->inputs[0]);
  if (!indices) return -1;
  if (ex_dispatch_src_dst(ex, node, "layout.cl", "remap_map", &a)) return -1;
  karg_int4(&a, b[GD_W], b[GD_H], b[GD_C], b[GD_B]);
  for (int k = 0; k < 4; ++k) karg_int4(&a, col[k][0], col[k][1], col[k][2], col[k][3]);
  karg_int(&a, n->p.remap.border);
  karg_float(&a, n->p.remap.value);
  karg_int(&a, remap_whole_slices(n, ex->g.tensors[n->inputs[0]].shape, ex->g.tensors[n->outputs[0]].shape));
  karg_mem(&a, indices);
  karg_int(&a, n->p.remap.gather ? kToKernel[n->p.remap.gather_axis] : -1);
  karg_int4(&a, gstride[0], gstride[1], gstride[2], gstride[3]);
  karg_int(&a, a.total);
  return karg_done(ex, &a);
}

/* The TFLite ops this file runs (op_table.c lists them). */
const OpDef kOpConcatenation = {.builtin_code = kBuiltinConcatenation, .max_version = 2,
    .check = check_concat, .lower = lower_concat,
    .constraints = "any axis of a rank <= 4 tensor; up to 16 inputs; fused activation"};
const OpDef kOpMirrorPad = {.builtin_code = kBuiltinMirrorPad, .max_version = 2,
    .check = check_pad, .lower = lower_pad,
    .constraints = "constant paddings on any of the (up to 4) axes; REFLECT (padding < size) and SYMMETRIC (padding <= size; "
     "upstream: REFLECT only)"};
const OpDef kOpPad = {.builtin_code = kBuiltinPad, .max_version = 2, .check = check_pad, .lower = lower_pad,
    .constraints = "constant paddings on any of the (up to 4) axes; zero fill"};
const OpDef kOpPadv2 = {.builtin_code = kBuiltinPadv2, .max_version = 2, .check = check_pad, .lower = lower_pad,
    .constraints = "constant paddings on any of the (up to 4) axes; constant float32 pad value"};
const OpDef kOpReshape = {.builtin_code = kBuiltinReshape, .max_version = 1,
    .check = check_reshape, .lower = lower_reshape,
    .constraints = "same element count; rank <= 4 in and out"};
const OpDef kOpSqueeze = {.builtin_code = kBuiltinSqueeze, .max_version = 1,
    .check = check_squeeze, .lower = lower_reshape,
    .constraints = "squeeze_dims of size 1 (or every size-1 dimension); rank <= 4 in and out"};
const OpDef kOpExpandDims = {.builtin_code = kBuiltinExpandDims, .max_version = 1,
    .check = check_expand_dims, .lower = lower_reshape,
    .constraints = "constant int32 axis (negative allowed); rank <= 4 out"};
const OpDef kOpStridedSlice = {.builtin_code = kBuiltinStridedSlice, .max_version = 4,
    .check = check_strided_slice, .lower = lower_strided_slice,
    .constraints = "constant begin/end/strides; begin/end masks; positive strides; ellipsis/new-axis masks 0; "
     "shrink_axis_mask supported"};
