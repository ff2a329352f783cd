/* MediaPipe's Landmarks2TransformMatrix (v1, v2) and TransformLandmarks
 * (v1, v2): custom ops whose semantics live only in MediaPipe
 * (mediapipe/util/tflite/operations/landmarks_to_transform_matrix.cc,
 * transform_landmarks.cc); kernels in opencl_kernels/landmarks.cl.
 *
 * Landmarks2TransformMatrix reads 3-D landmarks (v1: a [1,1,1,3N] tensor,
 * v2: [1,N,3]) and writes the 4x4 matrix [1,4,4] that maps output pixels
 * of a rotated crop to input pixels. Its FlexBuffers options:
 *   v2: subset_idxs, left_rotation_idx, right_rotation_idx,
 *       target_rotation_radians, output_height, output_width, scale_x, scale_y
 *   v1: subset, left_rotation_idx, right_rotation_idx, input_hw, output_hw,
 *       dimensions (3), landmarks_range, bbox_size_multiplier
 * subset lists landmark pairs; only their min / max matter, so the flat
 * list is kept (an odd trailing index pairs with itself upstream).
 * Unlike the CPU kernel, every landmark index is checked against the
 * landmark count here, so a bad model cannot read outside the tensor.
 *
 * Versions: the stock runtime gives an unresolved custom op a dummy
 * registration of version 1, whatever the model says, so the version is
 * read from the node itself: v2's options have subset_idxs, v1's subset;
 * TransformLandmarks v2 has rank-3 landmarks, v1 rank 4. A runtime that
 * resolves the op (MediaPipe's) reports the real version, which must then
 * agree. */
#include <stdlib.h>
#include <string.h>

#include "ops/custom_options.h"
#include "encode/encode.h"
#include "ops/op_table.h"
#include "model/tflite_builtins.h"
#include "ops/op_kinds.h"

/* The graph ops this file encodes (graph.h: a node points at its op). */
static int encode_landmarks_to_matrix(Encoder* ex, int node);
/* MediaPipe Landmarks2TransformMatrix: p.l2m */
const GOpDesc kGOpLandmarksToMatrix = {"LANDMARKS_TO_MATRIX", encode_landmarks_to_matrix};
static int encode_transform_landmarks(Encoder* ex, int node);
/* MediaPipe TransformLandmarks: inputs (landmarks, matrix) */
const GOpDesc kGOpTransformLandmarks = {"TRANSFORM_LANDMARKS", encode_transform_landmarks};

#define GD_MAX_SUBSET 4096

typedef struct L2MParams {
  int version;
  int left, right;
  int num_subset;
  int subset[GD_MAX_SUBSET];
  /* v2 */
  float target_rotation, scale_x, scale_y;
  int output_w, output_h;
  /* v1 */
  int input_hw[2], output_hw[2], landmarks_range;
  float bbox_multiplier;
} L2MParams;

static int check_index(const NodeInfo* ni, const char* what, int idx, int count) {
  if (idx < 0 || idx >= count) return reason(ni, "%s %d is outside the %d landmarks", what, idx, count);
  return 0;
}

static int l2m_params(const NodeInfo* ni, L2MParams* p) {
  FlexRef m;
  memset(p, 0, sizeof(*p));
  if (custom_options_map(ni, &m)) return -1;
  if (custom_has(&m, "subset_idxs") == 1)
    p->version = 2;
  else if (custom_has(&m, "subset") == 1)
    p->version = 1;
  else
    return reason(ni, "custom_options have neither 'subset_idxs' (version 2) nor 'subset' (version 1)");
  if (ni->reg->version > 1 && ni->reg->version != p->version)
    return reason(ni, "the registration says version %d, the options are version %d's", ni->reg->version, p->version);
  if (custom_int(ni, &m, "left_rotation_idx", &p->left) || custom_int(ni, &m, "right_rotation_idx", &p->right))
    return -1;
  int n;
  if (p->version == 2) {
    if (custom_ints(ni, &m, "subset_idxs", p->subset, GD_MAX_SUBSET, &p->num_subset) ||
        custom_float(ni, &m, "target_rotation_radians", &p->target_rotation) ||
        custom_int(ni, &m, "output_height", &p->output_h) || custom_int(ni, &m, "output_width", &p->output_w) ||
        custom_float(ni, &m, "scale_x", &p->scale_x) || custom_float(ni, &m, "scale_y", &p->scale_y))
      return -1;
    if (p->output_h <= 0 || p->output_w <= 0)
      return reason(ni, "output size %dx%d must be positive", p->output_h, p->output_w);
    if (p->scale_x <= 0 || p->scale_y <= 0) return reason(ni, "scale %g x %g must be positive", p->scale_x, p->scale_y);
  } else {
    int dims;
    if (custom_ints(ni, &m, "subset", p->subset, GD_MAX_SUBSET, &p->num_subset) ||
        custom_ints(ni, &m, "input_hw", p->input_hw, 2, &n))
      return -1;
    if (n != 2) return reason(ni, "custom_options 'input_hw' must hold 2 values");
    if (custom_ints(ni, &m, "output_hw", p->output_hw, 2, &n)) return -1;
    if (n != 2) return reason(ni, "custom_options 'output_hw' must hold 2 values");
    if (custom_int(ni, &m, "dimensions", &dims) || custom_int(ni, &m, "landmarks_range", &p->landmarks_range) ||
        custom_float(ni, &m, "bbox_size_multiplier", &p->bbox_multiplier))
      return -1;
    if (dims != 3) return reason(ni, "dimensions %d: only 3 is supported (as on the CPU)", dims);
    if (p->input_hw[0] <= 0 || p->input_hw[1] <= 0 || p->output_hw[0] <= 0 || p->output_hw[1] <= 0)
      return reason(ni, "input_hw and output_hw must be positive");
    if (p->landmarks_range <= 0) return reason(ni, "landmarks_range %d must be positive", p->landmarks_range);
    if (p->bbox_multiplier == 0) return reason(ni, "bbox_size_multiplier must not be 0");
  }
  if (p->num_subset < 1) return reason(ni, "the landmark subset is empty");
  return 0;
}

static int check_landmarks_to_matrix(const NodeInfo* ni) {
  if (ni_num_inputs(ni) != 1 || ni_num_outputs(ni) != 1)
    return reason(ni, "needs 1 input and 1 output, has %d and %d", ni_num_inputs(ni), ni_num_outputs(ni));
  if (mv_is_const(ni->mv, ni_input(ni, 0))) return reason(ni, "input 0 is a constant; a runtime input is required");
  L2MParams* p = malloc(sizeof(*p));
  if (!p) return reason(ni, "out of memory");
  int rc = l2m_params(ni, p);
  int dims[8];
  int rank = mv_dims(ni->mv, ni_input(ni, 0), dims, 8);
  size_t count = mv_elements(ni->mv, ni_input(ni, 0));
  if (rc == 0 && p->version == 2 && (rank != 3 || dims[0] != 1 || dims[2] != 3))
    rc = reason(ni, "version 2 needs landmarks of shape [1,N,3]");
  if (rc == 0 && p->version == 1 && (rank != 4 || dims[0] != 1 || dims[1] != 1 || dims[2] != 1 || dims[3] % 3))
    rc = reason(ni, "version 1 needs landmarks of shape [1,1,1,3N]");
  int n = (int)(count / 3);
  if (rc == 0) rc = check_index(ni, "left_rotation_idx", p->left, n);
  if (rc == 0) rc = check_index(ni, "right_rotation_idx", p->right, n);
  for (int i = 0; rc == 0 && i < p->num_subset; ++i) rc = check_index(ni, "subset index", p->subset[i], n);
  free(p);
  if (rc) return -1;
  int expect[4] = {1, 1, 4, 4};
  if (mv_dims(ni->mv, ni_output(ni, 0), dims, 8) != 3) return reason(ni, "the output must be a [1,4,4] matrix");
  return check_output_shape(ni, ni_output(ni, 0), expect);
}

/* A constant graph tensor holding the subset (exact as float: < 2^24). */
static int subset_tensor(Lowering* lw, const L2MParams* p) {
  int shape[4] = {1, 1, 1, p->num_subset};
  int id = graph_add_tensor(lw->g, shape, 1);
  if (id < 0) return lower_error(lw, "out of memory");
  float* d = malloc((size_t)p->num_subset * sizeof(float));
  if (!d) return lower_error(lw, "out of memory");
  for (int i = 0; i < p->num_subset; ++i) d[i] = (float)p->subset[i];
  lw->g->tensors[id].data = d;
  return id;
}

static int lower_landmarks_to_matrix(Lowering* lw, const NodeInfo* ni) {
  L2MParams* p = malloc(sizeof(*p));
  if (!p) return lower_error(lw, "out of memory");
  if (l2m_params(ni, p)) {
    free(p);
    return -1; /* the parse wrote lw->err */
  }
  int in = lower_tensor(lw, ni_input(ni, 0));
  int out = in < 0 ? -1 : lower_tensor(lw, ni_output(ni, 0));
  int subset = out < 0 ? -1 : subset_tensor(lw, p);
  GNode* n = subset < 0 ? NULL : graph_add_node(lw->g, GOP_LANDMARKS_TO_MATRIX);
  if (!n) {
    free(p);
    return subset < 0 ? -1 : lower_error(lw, "out of memory");
  }
  n->inputs[0] = in;
  n->num_inputs = 1;
  n->outputs[0] = out;
  n->num_outputs = 1;
  LandmarksMatrixParams* q = &n->p.l2m;
  q->version = p->version;
  q->left = p->left;
  q->right = p->right;
  q->subset = subset;
  q->num_subset = p->num_subset;
  if (p->version == 2) {
    q->f[0] = p->target_rotation;
    q->f[1] = p->scale_x;
    q->f[2] = p->scale_y;
    q->i[0] = p->output_w;
    q->i[1] = p->output_h;
  } else {
    q->f[0] = (float)p->landmarks_range;
    q->f[1] = p->bbox_multiplier;
    q->i[0] = p->input_hw[1];
    q->i[1] = p->input_hw[0];
    q->i[2] = p->output_hw[1];
    q->i[3] = p->output_hw[0];
  }
  free(p);
  return 0;
}

static int encode_landmarks_to_matrix(Encoder* ex, int node) {
  const GNode* n = &ex->g.nodes[node];
  const LandmarksMatrixParams* q = &n->p.l2m;
  const GTensor* st = &ex->g.tensors[q->subset];
  int* idx = malloc((size_t)q->num_subset * sizeof(int));
  if (!idx) return ex_fail(ex, "out of memory");
  for (int i = 0; i < q->num_subset; ++i) idx[i] = (int)st->data[i];
  cl_mem subset = ex_upload(ex, idx, (size_t)q->num_subset * sizeof(int));
  free(idx);
  if (!subset) return -1;
  const char* name = q->version == 2 ? "landmarks_to_transform_matrix_v2" : "landmarks_to_transform_matrix_v1";
  KernelRef k = ex_dispatch(ex, "landmarks.cl", name, 1, node);
  if (!k) return -1;
  KArgs a = {k, 0, CL_SUCCESS, 1};
  karg_mem(&a, ex_tensor_mem(ex, n->inputs[0]));
  karg_mem(&a, ex_tensor_mem(ex, n->outputs[0]));
  karg_shape(&a, ex->g.tensors[n->inputs[0]].shape);
  karg_shape(&a, ex->g.tensors[n->outputs[0]].shape);
  karg_mem(&a, subset);
  karg_int(&a, q->num_subset);
  karg_int2(&a, q->left, q->right);
  if (q->version == 2) {
    karg_float(&a, q->f[0]);
    cl_float4 v = {{q->f[1], q->f[2], (float)q->i[0], (float)q->i[1]}};
    karg(&a, &v, sizeof(v));
  } else {
    karg_int4(&a, q->i[0], q->i[1], q->i[2], q->i[3]);
    cl_float2 v = {{q->f[0], q->f[1]}};
    karg(&a, &v, sizeof(v));
  }
  return karg_done(ex, &a);
}

/* ---- TransformLandmarks ----
 * v1: landmarks [1,H,W,C] with C a multiple of `dimensions` (options:
 *     dimensions 2 or 3, scale != 0, which multiplies the translation);
 * v2: landmarks [1,N,D] with D = 2 or 3, no options. The matrix is [1,4,4]. */

static int transform_landmarks_params(const NodeInfo* ni, int* dims, float* scale) {
  int d[8];
  int rank = mv_dims(ni->mv, ni_input(ni, 0), d, 8);
  int version = rank == 3 ? 2 : 1;
  if (ni->reg->version > 1 && ni->reg->version != version)
    return reason(ni, "version %d needs landmarks of rank %d, not %d", ni->reg->version, ni->reg->version == 2 ? 3 : 4,
                  rank);
  if (version == 2) {
    if (rank != 3 || d[0] != 1) return reason(ni, "version 2 needs landmarks of shape [1,N,D]");
    *dims = d[2];
    *scale = 1.0f;
  } else {
    FlexRef m;
    if (rank != 4 || d[0] != 1) return reason(ni, "version 1 needs landmarks of shape [1,H,W,C]");
    if (custom_options_map(ni, &m) || custom_int(ni, &m, "dimensions", dims) || custom_float(ni, &m, "scale", scale))
      return -1;
    if (*scale == 0) return reason(ni, "scale must not be 0");
    if (d[3] % *dims) return reason(ni, "%d channels are not a multiple of dimensions %d", d[3], *dims);
  }
  if (*dims != 2 && *dims != 3) return reason(ni, "landmarks of %d dimensions: 2 or 3 are supported", *dims);
  return 0;
}

static int check_transform_landmarks(const NodeInfo* ni) {
  if (check_io(ni, 2, 1)) return -1;
  int dims;
  float scale;
  if (transform_landmarks_params(ni, &dims, &scale)) return -1;
  int m[4], in[4];
  if (ni_shape(ni, ni_input(ni, 1), m) < 0 || m[0] != 1 || m[1] != 1 || m[2] != 4 || m[3] != 4)
    return reason(ni, "input 1 must be a [1,4,4] matrix");
  ni_shape(ni, ni_input(ni, 0), in);
  return check_output_shape(ni, ni_output(ni, 0), in);
}

static int lower_transform_landmarks(Lowering* lw, const NodeInfo* ni) {
  int dims;
  float scale;
  if (transform_landmarks_params(ni, &dims, &scale)) return -1; /* the parse wrote lw->err */
  int in = lower_tensor(lw, ni_input(ni, 0));
  int mat = in < 0 ? -1 : lower_tensor(lw, ni_input(ni, 1));
  int out = mat < 0 ? -1 : lower_tensor(lw, ni_output(ni, 0));
  if (out < 0) return -1;
  GNode* n = graph_add_node(lw->g, GOP_TRANSFORM_LANDMARKS);
  if (!n) return lower_error(lw, "out of memory");
  n->inputs[0] = in;
  n->inputs[1] = mat;
  n->num_inputs = 2;
  n->outputs[0] = out;
  n->num_outputs = 1;
  n->p.landmarks.dims = dims;
  n->p.landmarks.scale = scale;
  return 0;
}

static int encode_transform_landmarks(Encoder* ex, int node) {
  const GNode* n = &ex->g.nodes[node];
  KArgs a;
  if (ex_dispatch_src_dst(ex, node, "landmarks.cl", "transform_landmarks", &a)) return -1;
  karg_mem(&a, ex_tensor_mem(ex, n->inputs[1]));
  karg_shape(&a, ex->g.tensors[n->inputs[1]].shape);
  karg_int(&a, n->p.landmarks.dims);
  karg_float(&a, n->p.landmarks.scale);
  karg_int(&a, a.total);
  return karg_done(ex, &a);
}

/* The TFLite ops this file runs (op_table.c lists them). */
const OpDef kOpCustomLandmarks2TransformMatrix = {.builtin_code = kBuiltinCustom, .custom_name = "Landmarks2TransformMatrix", .max_version = 2,
    .check = check_landmarks_to_matrix, .lower = lower_landmarks_to_matrix,
    .constraints = "MediaPipe: v1 landmarks [1,1,1,3N], v2 [1,N,3] -> [1,4,4] matrix; FlexBuffers options (v1: subset, "
     "input_hw, output_hw, dimensions 3, landmarks_range, bbox_size_multiplier; v2: subset_idxs, "
     "target_rotation_radians, output_height/width, scale_x/y); landmark indices checked against N"};
const OpDef kOpCustomTransformLandmarks = {.builtin_code = kBuiltinCustom, .custom_name = "TransformLandmarks", .max_version = 2,
    .check = check_transform_landmarks, .lower = lower_transform_landmarks,
    .constraints = "MediaPipe: landmarks (v1 [1,H,W,C] with options dimensions 2/3 and scale; v2 [1,N,2|3]) and a [1,4,4] "
     "matrix"};
