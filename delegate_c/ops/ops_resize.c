/* RESIZE_BILINEAR and RESIZE_NEAREST_NEIGHBOR (opencl_kernels/resize.cl):
 * checks, lowering and kernel dispatch. The bilinear source coordinates
 * follow TFLite's reference kernel (reference_ops::ResizeBilinear): the same float scale, the same
 * half-pixel offset, and the lower / upper source index clamped on their
 * own sides, with the weights taken from the unclamped coordinate. */
#include "encode/encode.h"
#include "ops/op_table.h"
#include "select/selectors.h"
#include "model/tflite_builtins.h"
#include "ops/op_kinds.h"

/* The graph ops this file encodes (graph.h: a node points at its op). */
static int encode_resize_bilinear(Encoder* ex, int node);
const GOpDesc kGOpResizeBilinear = {"RESIZE_BILINEAR", encode_resize_bilinear};
static int encode_resize_nearest(Encoder* ex, int node);
const GOpDesc kGOpResizeNearest = {"RESIZE_NEAREST", encode_resize_nearest};

/* Both resize ops: a rank-4 runtime input and a constant int32 size. */
static int check_resize(const NodeInfo* ni) {
  if (check_io(ni, 2, 1) || check_const_input(ni, 1, "size", kTfLiteInt32)) return -1;
  int size = ni_input(ni, 1);
  int in[4];
  if (ni_shape(ni, ni_input(ni, 0), in) != 4) return reason(ni, "input 0 must have rank 4");
  int dims[8];
  if (mv_dims(ni->mv, size, dims, 8) != 1) return reason(ni, "input 1 (size) must have rank 1");
  int hw[8], count;
  char err[200];
  if (mv_const_ints(ni->mv, size, hw, 8, &count, err, sizeof(err))) return reason(ni, "size (input 1): %s", err);
  if (count != 2) return reason(ni, "size (input 1) holds %d values; 2 (height, width) are required", count);
  if (hw[0] < 1 || hw[1] < 1) return reason(ni, "size %dx%d must be positive", hw[0], hw[1]);
  int out[4] = {in[GD_B], hw[0], hw[1], in[GD_C]};
  return check_output_shape(ni, ni_output(ni, 0), out);
}

static int check_resize_bilinear(const NodeInfo* ni) {
  const TfLiteResizeBilinearParams* p = ni->node->builtin_data;
  if (!p) return reason(ni, "missing parameters");
  if (p->align_corners && p->half_pixel_centers)
    return reason(ni, "align_corners and half_pixel_centers are both set, which TFLite rejects");
  return check_resize(ni);
}

/* TFLite's nearest-neighbor kernel accepts both flags together (the
 * rounding of align_corners with the half-pixel offset). */
static int check_resize_nearest(const NodeInfo* ni) {
  if (!ni->node->builtin_data) return reason(ni, "missing parameters");
  return check_resize(ni);
}

/* Source pixels per output pixel along one axis, in float as TFLite has it. */
static float resize_scale(int in, int out, int align_corners) {
  if (align_corners && out > 1) return (float)(in - 1) / (float)(out - 1);
  return (float)in / (float)out;
}

/* The node both resize ops lower to: one input, one output, and the scale
 * (source pixels per output pixel) of each axis in *scale_x / *scale_y. */
static GNode* lower_resize_node(Lowering* lw, const NodeInfo* ni, GOp op, int align_corners, float* scale_x,
                                float* scale_y) {
  int in = lower_tensor(lw, ni_input(ni, 0));
  int out = in < 0 ? -1 : lower_tensor(lw, ni_output(ni, 0));
  if (out < 0) return NULL;
  GNode* n = graph_add_node(lw->g, op);
  if (!n) return lower_error(lw, "out of memory"), NULL;
  const int* s = lw->g->tensors[in].shape;
  const int* d = lw->g->tensors[out].shape;
  n->inputs[0] = in;
  n->num_inputs = 1;
  n->outputs[0] = out;
  n->num_outputs = 1;
  *scale_y = resize_scale(s[GD_H], d[GD_H], align_corners);
  *scale_x = resize_scale(s[GD_W], d[GD_W], align_corners);
  return n;
}

static int lower_resize_bilinear(Lowering* lw, const NodeInfo* ni) {
  const TfLiteResizeBilinearParams* p = ni->node->builtin_data;
  float sx, sy;
  GNode* n = lower_resize_node(lw, ni, GOP_RESIZE_BILINEAR, p->align_corners, &sx, &sy);
  if (!n) return -1;
  n->p.resize.half_pixel_centers = p->half_pixel_centers;
  n->p.resize.scale_x = sx;
  n->p.resize.scale_y = sy;
  return 0;
}

static int encode_resize_bilinear(Encoder* ex, int node) {
  const GNode* n = &ex->g.nodes[node];
  const int* d = ex->g.tensors[n->outputs[0]].shape;
  KernelVariant v;
  select_resize_bilinear(&ex->target, d, &v);
  size_t items = v.total;
  KernelRef k = ex_dispatch_variant(ex, &v, node);
  if (!k) return -1;
  KArgs a = {k, 0, CL_SUCCESS, (int)items};
  karg_mem(&a, ex_tensor_mem(ex, n->inputs[0]));
  karg_mem(&a, ex_tensor_mem(ex, n->outputs[0]));
  karg_shape(&a, ex->g.tensors[n->inputs[0]].shape);
  karg_shape(&a, d);
  karg_float(&a, n->p.resize.scale_x);
  karg_float(&a, n->p.resize.scale_y);
  karg_int(&a, n->p.resize.half_pixel_centers);
  karg_int(&a, a.total);
  return karg_done(ex, &a);
}

static int lower_resize_nearest(Lowering* lw, const NodeInfo* ni) {
  const TfLiteResizeNearestNeighborParams* p = ni->node->builtin_data;
  float sx, sy;
  GNode* n = lower_resize_node(lw, ni, GOP_RESIZE_NEAREST, p->align_corners, &sx, &sy);
  if (!n) return -1;
  n->p.nearest.align_corners = p->align_corners;
  n->p.nearest.half_pixel_centers = p->half_pixel_centers;
  n->p.nearest.scale_x = sx;
  n->p.nearest.scale_y = sy;
  return 0;
}

static int encode_resize_nearest(Encoder* ex, int node) {
  const GNode* n = &ex->g.nodes[node];
  KArgs a;
  if (ex_dispatch_src_dst(ex, node, "resize.cl", "resize_nearest", &a)) return -1;
  karg_float(&a, n->p.nearest.scale_x);
  karg_float(&a, n->p.nearest.scale_y);
  karg_int(&a, n->p.nearest.align_corners);
  karg_int(&a, n->p.nearest.half_pixel_centers);
  karg_int(&a, a.total);
  return karg_done(ex, &a);
}

/* The TFLite ops this file runs (op_table.c lists them). */
const OpDef kOpResizeBilinear = {.builtin_code = kBuiltinResizeBilinear, .max_version = 3,
    .check = check_resize_bilinear, .lower = lower_resize_bilinear,
    .constraints = "rank-4 input; constant int32 size [2]; align_corners or half_pixel_centers (not both)"};
const OpDef kOpResizeNearestNeighbor = {.builtin_code = kBuiltinResizeNearestNeighbor, .max_version = 3,
    .check = check_resize_nearest, .lower = lower_resize_nearest,
    .constraints = "rank-4 input; constant int32 size [2]; align_corners and half_pixel_centers"};
