/* Index-map ops that lower to the generic remap (layout.cl `remap`), one
 * node per output: TRANSPOSE, TILE, SLICE, SPLIT, SPLIT_V, UNPACK; and
 * PACK, which is RESHAPEs (inserting the new axis keeps row-major order)
 * into one CONCATENATION. */
#include <string.h>

#include "encode/encode.h"
#include "ops/op_table.h"
#include "model/tflite_builtins.h"

/* A constant int vector input with exactly `want` values (want < 0: any
 * count up to max), or a reason naming it. */
static int const_ints(const NodeInfo* ni, int k, const char* what, int* out, int max, int want, int* count) {
  int t = ni_input(ni, k);
  if (t < 0) return reason(ni, "input %d (%s) is missing", k, what);
  if (!mv_is_const(ni->mv, t)) return reason(ni, "input %d (%s) must be constant", k, what);
  char err[200];
  if (mv_const_ints(ni->mv, t, out, max, count, err, sizeof(err))) return reason(ni, "%s (input %d): %s", what, k, err);
  if (want >= 0 && *count != want) return reason(ni, "%s (input %d) holds %d values; %d expected", what, k, *count, want);
  return 0;
}

/* The runtime tensor input k and its rank (>= min_rank), or a reason. */
static int runtime_input(const NodeInfo* ni, int k, int min_rank, int shape[4]) {
  int t = ni_input(ni, k);
  if (t < 0 || mv_is_const(ni->mv, t)) return reason(ni, "input %d must be a runtime tensor", k);
  int rank = ni_shape(ni, t, shape);
  if (rank < min_rank) return reason(ni, "input %d must have rank %d-4", k, min_rank);
  return rank;
}

/* Normalizes a TFLite axis of a rank-r tensor, or -1 when out of range. */
static int norm_axis(int axis, int rank) {
  if (axis < -rank || axis >= rank) return -1;
  return axis < 0 ? axis + rank : axis;
}

/* ---------------- TRANSPOSE ---------------- */

static int check_transpose(const NodeInfo* ni) {
  if (ni_num_inputs(ni) != 2 || ni_num_outputs(ni) != 1) return reason(ni, "needs 2 inputs and 1 output");
  int in[4], perm[8], count;
  int rank = runtime_input(ni, 0, 1, in);
  if (rank < 0 || const_ints(ni, 1, "perm", perm, 8, rank, &count)) return -1;
  int out[4] = {1, 1, 1, 1}, seen[4] = {0, 0, 0, 0};
  for (int i = 0; i < rank; ++i) {
    int a = norm_axis(perm[i], rank);
    if (a < 0 || seen[a]++) return reason(ni, "perm is not a permutation of 0..%d", rank - 1);
    out[4 - rank + i] = in[4 - rank + a];
  }
  return check_output_shape(ni, ni_output(ni, 0), out);
}

static int lower_transpose(Lowering* lw, const NodeInfo* ni) {
  int perm[8], count;
  if (mv_const_ints(lw->mv, ni_input(ni, 1), perm, 8, &count, lw->err, lw->errlen)) return -1;
  int in = lower_tensor(lw, ni_input(ni, 0));
  int out = in < 0 ? -1 : lower_tensor(lw, ni_output(ni, 0));
  if (out < 0) return -1;
  GNode* n = lower_remap_node(lw, in, out, REMAP_SLICE);
  if (!n) return -1;
  /* Output axis i reads input axis perm[i]: that source axis follows it. */
  int rank = count;
  for (int i = 0; i < rank; ++i) n->p.remap.perm[4 - rank + norm_axis(perm[i], rank)] = 4 - rank + i;
  return 0;
}

/* ---------------- TILE ---------------- */

static int check_tile(const NodeInfo* ni) {
  if (ni_num_inputs(ni) != 2 || ni_num_outputs(ni) != 1) return reason(ni, "needs 2 inputs and 1 output");
  int in[4], mult[8], count;
  int rank = runtime_input(ni, 0, 1, in);
  if (rank < 0 || const_ints(ni, 1, "multiples", mult, 8, rank, &count)) return -1;
  int64_t out[4];
  for (int d = 0; d < 4; ++d) out[d] = in[d];
  for (int i = 0; i < rank; ++i) {
    if (mult[i] < 1) return reason(ni, "multiple %d on axis %d; must be >= 1", mult[i], i);
    out[4 - rank + i] *= mult[i]; /* an int times an int: fits 64 bits */
  }
  return check_output_shape64(ni, ni_output(ni, 0), out);
}

static int lower_tile(Lowering* lw, const NodeInfo* ni) {
  int in = lower_tensor(lw, ni_input(ni, 0));
  int out = in < 0 ? -1 : lower_tensor(lw, ni_output(ni, 0));
  if (out < 0) return -1;
  GNode* n = lower_remap_node(lw, in, out, REMAP_SLICE);
  if (!n) return -1;
  n->p.remap.border = BORDER_WRAP;
  return 0;
}

/* ---------------- SLICE ---------------- */

/* BHWC begin and size of a SLICE (size -1: to the end), or a reason. */
static int slice_box(const NodeInfo* ni, int begin4[4], int size4[4]) {
  int in[4], b[8], s[8], nb, ns;
  int rank = runtime_input(ni, 0, 1, in);
  if (rank < 0 || const_ints(ni, 1, "begin", b, 8, rank, &nb) || const_ints(ni, 2, "size", s, 8, rank, &ns)) return -1;
  for (int d = 0; d < 4; ++d) begin4[d] = 0, size4[d] = in[d];
  for (int i = 0; i < rank; ++i) {
    int ax = 4 - rank + i, dim = in[ax];
    if (b[i] < 0 || b[i] >= dim) return reason(ni, "begin %d, size %d do not fit axis %d of size %d", b[i], s[i], i, dim);
    int size = s[i] == -1 ? dim - b[i] : s[i];
    if (size < 1 || (int64_t)b[i] + size > dim)
      return reason(ni, "begin %d, size %d do not fit axis %d of size %d", b[i], s[i], i, dim);
    begin4[ax] = b[i];
    size4[ax] = size;
  }
  return 0;
}

static int check_slice(const NodeInfo* ni) {
  if (ni_num_inputs(ni) != 3 || ni_num_outputs(ni) != 1) return reason(ni, "needs 3 inputs and 1 output");
  int begin[4], size[4];
  if (slice_box(ni, begin, size)) return -1;
  return check_output_shape(ni, ni_output(ni, 0), size);
}

static int lower_slice(Lowering* lw, const NodeInfo* ni) {
  int begin[4], size[4];
  if (slice_box(ni, begin, size)) return -1;
  int in = lower_tensor(lw, ni_input(ni, 0));
  int out = in < 0 ? -1 : lower_tensor(lw, ni_output(ni, 0));
  if (out < 0) return -1;
  GNode* n = lower_remap_node(lw, in, out, REMAP_SLICE);
  if (!n) return -1;
  memcpy(n->p.remap.begin, begin, sizeof(begin));
  return 0;
}

/* ---------------- SPLIT, SPLIT_V ---------------- */

/* Where the data and axis inputs are, and the piece sizes along the axis
 * (BHWC axis in *axis4). Returns the number of pieces, or -1 (reason). */
static int split_pieces(const NodeInfo* ni, int* axis4, int* sizes, int max) {
  int is_v = ni->reg->builtin_code == kBuiltinSplitV;
  int data = is_v ? 0 : 1, axis_in = is_v ? 2 : 0;
  int pieces = ni_num_outputs(ni);
  if (ni_num_inputs(ni) != (is_v ? 3 : 2)) return reason(ni, "needs %d inputs", is_v ? 3 : 2);
  if (pieces < 1 || pieces > max) return reason(ni, "has %d outputs; 1 to %d are supported", pieces, max);
  int in[4], ax, count;
  int rank = runtime_input(ni, data, 1, in);
  if (rank < 0 || const_ints(ni, axis_in, "axis", &ax, 1, 1, &count)) return -1;
  int a = norm_axis(ax, rank);
  if (a < 0) return reason(ni, "axis %d is out of range for rank %d", ax, rank);
  *axis4 = 4 - rank + a;
  int dim = in[*axis4];
  if (!is_v) {
    if (dim % pieces) return reason(ni, "axis size %d does not split into %d equal pieces", dim, pieces);
    for (int i = 0; i < pieces; ++i) sizes[i] = dim / pieces;
    return pieces;
  }
  if (const_ints(ni, 1, "size_splits", sizes, max, pieces, &count)) return -1;
  int64_t sum = 0; /* at most 256 ints */
  int unknown = -1;
  for (int i = 0; i < pieces; ++i) {
    if (sizes[i] == -1 && unknown < 0) {
      unknown = i;
    } else if (sizes[i] < 1) {
      return reason(ni, "size_splits[%d] = %d; sizes must be >= 1 (one may be -1)", i, sizes[i]);
    } else {
      sum += sizes[i];
    }
  }
  if ((unknown >= 0 && dim - sum < 1) || (unknown < 0 && sum != dim))
    return reason(ni, "size_splits do not add up to the axis size %d", dim);
  if (unknown >= 0) sizes[unknown] = (int)(dim - sum);
  return pieces;
}

#define MAX_PIECES 256

static int check_split(const NodeInfo* ni) {
  int axis4, sizes[MAX_PIECES];
  int pieces = split_pieces(ni, &axis4, sizes, MAX_PIECES);
  if (pieces < 0) return -1;
  int is_v = ni->reg->builtin_code == kBuiltinSplitV;
  if (!is_v) {
    const TfLiteSplitParams* p = ni->node->builtin_data;
    if (p && p->num_splits != pieces) return reason(ni, "num_splits %d but %d outputs", p->num_splits, pieces);
  }
  int shape[4];
  ni_shape(ni, ni_input(ni, is_v ? 0 : 1), shape);
  for (int i = 0; i < pieces; ++i) {
    shape[axis4] = sizes[i];
    if (check_output_shape(ni, ni_output(ni, i), shape)) return -1;
  }
  return 0;
}

static int lower_split(Lowering* lw, const NodeInfo* ni) {
  int axis4, sizes[MAX_PIECES];
  int pieces = split_pieces(ni, &axis4, sizes, MAX_PIECES);
  if (pieces < 0) return -1;
  int in = lower_tensor(lw, ni_input(ni, ni->reg->builtin_code == kBuiltinSplitV ? 0 : 1));
  if (in < 0) return -1;
  for (int i = 0, offset = 0; i < pieces; offset += sizes[i++]) {
    int out = lower_tensor(lw, ni_output(ni, i));
    GNode* n = out < 0 ? NULL : lower_remap_node(lw, in, out, REMAP_SLICE);
    if (!n) return -1;
    n->p.remap.begin[axis4] = offset;
  }
  return 0;
}

/* ---------------- PACK ---------------- */

static int check_pack(const NodeInfo* ni) {
  const TfLitePackParams* p = ni->node->builtin_data;
  if (!p) return reason(ni, "missing parameters");
  int n = ni_num_inputs(ni);
  if (n < 1 || n > GD_MAX_NODE_INPUTS || ni_num_outputs(ni) != 1)
    return reason(ni, "has %d inputs; 1 to %d are supported", n, GD_MAX_NODE_INPUTS);
  int in[4];
  int rank = ni_shape(ni, ni_input(ni, 0), in);
  if (rank < 0 || rank > 3) return reason(ni, "inputs must have rank 0-3 (the output at most 4)");
  int a = norm_axis(p->axis, rank + 1);
  if (a < 0) return reason(ni, "axis %d is out of range for rank %d", p->axis, rank + 1);
  for (int k = 1; k < n; ++k) {
    int s[4];
    if (ni_shape(ni, ni_input(ni, k), s) != rank || memcmp(s, in, sizeof(s)) != 0)
      return reason(ni, "input %d differs in shape from input 0", k);
  }
  /* Output: the input dims with n inserted at axis a. */
  int dims[8], out[4];
  mv_dims(ni->mv, ni_input(ni, 0), dims, 8);
  memmove(dims + a + 1, dims + a, (size_t)(rank - a) * sizeof(int));
  dims[a] = n;
  shape_from_dims(dims, rank + 1, out);
  return check_output_shape(ni, ni_output(ni, 0), out);
}

static int lower_pack(Lowering* lw, const NodeInfo* ni) {
  const TfLitePackParams* p = ni->node->builtin_data;
  int n = ni_num_inputs(ni);
  int out = lower_tensor(lw, ni_output(ni, 0));
  if (out < 0) return -1;
  int rank_out = lw->g->tensors[out].rank;
  int axis4 = 4 - rank_out + norm_axis(p->axis, rank_out);
  int piece[4];
  memcpy(piece, lw->g->tensors[out].shape, sizeof(piece));
  piece[axis4] = 1;
  int ins[GD_MAX_NODE_INPUTS];
  for (int k = 0; k < n; ++k) {
    int in = lower_tensor(lw, ni_input(ni, k));
    if (in < 0) return -1;
    ins[k] = in;
    if (memcmp(lw->g->tensors[in].shape, piece, sizeof(piece)) == 0) continue;
    /* A different BHWC alignment: reshape to the piece shape first. */
    ins[k] = graph_add_tensor(lw->g, piece, rank_out);
    if (ins[k] < 0) return lower_error(lw, "out of memory");
    if (lower_reshape_node(lw, in, ins[k])) return -1;
  }
  GNode* node = graph_add_node(lw->g, GOP_CONCAT);
  if (!node) return lower_error(lw, "out of memory");
  memcpy(node->inputs, ins, (size_t)n * sizeof(int));
  node->num_inputs = n;
  node->outputs[0] = out;
  node->num_outputs = 1;
  node->p.concat.axis = axis4;
  return 0;
}

/* ---------------- UNPACK ---------------- */

static int check_unpack(const NodeInfo* ni) {
  const TfLiteUnpackParams* p = ni->node->builtin_data;
  if (!p) return reason(ni, "missing parameters");
  if (ni_num_inputs(ni) != 1) return reason(ni, "needs 1 input");
  int in[4];
  int rank = runtime_input(ni, 0, 1, in);
  if (rank < 0) return -1;
  int a = norm_axis(p->axis, rank);
  if (a < 0) return reason(ni, "axis %d is out of range for rank %d", p->axis, rank);
  int count = in[4 - rank + a];
  if (ni_num_outputs(ni) != count) return reason(ni, "axis size %d but %d outputs", count, ni_num_outputs(ni));
  int dims[8], out[4];
  mv_dims(ni->mv, ni_input(ni, 0), dims, 8);
  memmove(dims + a, dims + a + 1, (size_t)(rank - 1 - a) * sizeof(int));
  shape_from_dims(dims, rank - 1, out);
  for (int i = 0; i < count; ++i)
    if (check_output_shape(ni, ni_output(ni, i), out)) return -1;
  return 0;
}

static int lower_unpack(Lowering* lw, const NodeInfo* ni) {
  const TfLiteUnpackParams* p = ni->node->builtin_data;
  int in = lower_tensor(lw, ni_input(ni, 0));
  if (in < 0) return -1;
  int rank = lw->g->tensors[in].rank;
  int a = norm_axis(p->axis, rank);
  for (int i = 0; i < ni_num_outputs(ni); ++i) {
    int out = lower_tensor(lw, ni_output(ni, i));
    GNode* n = out < 0 ? NULL : lower_remap_node(lw, in, out, REMAP_SLICE);
    if (!n) return -1;
    /* Input axis j is output axis j (j < a) or j - 1 (j > a); the
     * unpacked axis and the leading size-1 axes stay fixed (stride 0). */
    for (int s = 0; s < 4; ++s) n->p.remap.stride[s] = 0;
    for (int j = 0; j < rank; ++j) {
      int src = 4 - rank + j;
      if (j == a) {
        n->p.remap.begin[src] = i;
        continue;
      }
      n->p.remap.stride[src] = 1;
      n->p.remap.perm[src] = 4 - (rank - 1) + (j < a ? j : j - 1);
    }
  }
  return 0;
}

/* The TFLite ops this file runs (op_table.c lists them). */
const OpDef kOpPack = {.builtin_code = kBuiltinPack, .max_version = 4, .check = check_pack, .lower = lower_pack,
    .constraints = "1 to 16 inputs of the same shape, rank <= 3; any axis (negative too)"};
const OpDef kOpSlice = {.builtin_code = kBuiltinSlice, .max_version = 2, .check = check_slice, .lower = lower_slice,
    .constraints = "constant begin/size (int32/int64), size -1 to the end; rank 1-4 (upstream: 3-4)"};
const OpDef kOpSplit = {.builtin_code = kBuiltinSplit, .max_version = 4, .check = check_split, .lower = lower_split,
    .constraints = "constant axis (negative too) of a rank 1-4 input; equal pieces; up to 256 outputs"};
const OpDef kOpSplitV = {.builtin_code = kBuiltinSplitV, .max_version = 2, .check = check_split, .lower = lower_split,
    .constraints = "constant size_splits (one may be -1) and axis (negative too) of a rank 1-4 input; up to 256 outputs"};
const OpDef kOpTile = {.builtin_code = kBuiltinTile, .max_version = 3, .check = check_tile, .lower = lower_tile,
    .constraints = "constant multiples >= 1 on any of the (up to 4) axes"};
const OpDef kOpTranspose = {.builtin_code = kBuiltinTranspose, .max_version = 4,
    .check = check_transpose, .lower = lower_transpose,
    .constraints = "constant perm: any permutation of a rank 1-4 input (upstream: rank 2-4)"};
const OpDef kOpUnpack = {.builtin_code = kBuiltinUnpack, .max_version = 4,
    .check = check_unpack, .lower = lower_unpack,
    .constraints = "any axis (negative too) of a rank 1-4 input"};
