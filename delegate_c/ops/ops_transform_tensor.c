/* MediaPipe's TransformTensorBilinear (v1, v2): samples a [1,H,W,C]
 * tensor through a [1,4,4] matrix into [1,OH,OW,C]
 * (mediapipe/util/tflite/operations/transform_tensor_bilinear.cc; kernel
 * in opencl_kernels/transform_tensor.cl). Options (FlexBuffers):
 *   v1: output_size [h, w] (and mode, which must be "bilinear" if given);
 *   v2: output_height, output_width; the matrix is shifted to pixel
 *       centres (align_corners).
 * The CPU kernel reads batch 0 only; batch 1 is required here. MediaPipe
 * registers version 1 as "TransformTensor" and version 2 under this name;
 * both names map here.
 * The version comes from the options (see ops_landmarks.c for why): v2's
 * have output_height, v1's output_size. */
#include "ops/custom_options.h"
#include "encode/encode.h"
#include "ops/op_table.h"
#include "model/tflite_builtins.h"
#include "ops/op_kinds.h"

/* The graph ops this file encodes (graph.h: a node points at its op). */
static int encode_transform_tensor(Encoder* ex, int node);
/* MediaPipe TransformTensorBilinear: inputs (tensor, matrix) */
const GOpDesc kGOpTransformTensor = {"TRANSFORM_TENSOR", encode_transform_tensor};

static int transform_tensor_version(const FlexRef* m) {
  if (custom_has(m, "output_height") == 1) return 2;
  if (custom_has(m, "output_size") == 1) return 1;
  return -1;
}

static int check_transform_tensor(const NodeInfo* ni) {
  if (check_io(ni, 2, 1)) return -1;
  FlexRef m;
  int oh = -1, ow = -1;
  if (custom_options_map(ni, &m)) return -1;
  int version = transform_tensor_version(&m);
  if (version < 0)
    return reason(ni, "custom_options have neither 'output_height' (version 2) nor 'output_size' (version 1)");
  if (ni->reg->version > 1 && ni->reg->version != version)
    return reason(ni, "the registration says version %d, the options are version %d's", ni->reg->version, version);
  if (version == 2) {
    if (custom_int(ni, &m, "output_height", &oh) || custom_int(ni, &m, "output_width", &ow)) return -1;
  } else {
    int hw[2], n;
    if (custom_has(&m, "mode") == 1 && custom_string_is(ni, &m, "mode", "bilinear")) return -1;
    if (custom_ints(ni, &m, "output_size", hw, 2, &n)) return -1;
    if (n != 2) return reason(ni, "custom_options 'output_size' must hold 2 values");
    oh = hw[0];
    ow = hw[1];
  }
  int in[4], mat[4];
  if (ni_shape(ni, ni_input(ni, 0), in) != 4 || in[GD_B] != 1)
    return reason(ni, "input 0 must be a [1,H,W,C] tensor (the CPU kernel reads batch 0 only)");
  if (ni_shape(ni, ni_input(ni, 1), mat) < 0 || mat[0] != 1 || mat[1] != 1 || mat[2] != 4 || mat[3] != 4)
    return reason(ni, "input 1 must be a [1,4,4] matrix");
  if (oh < 1 || ow < 1) return reason(ni, "output size %dx%d must be positive", oh, ow);
  int out[4] = {1, oh, ow, in[GD_C]};
  return check_output_shape(ni, ni_output(ni, 0), out);
}

static int lower_transform_tensor(Lowering* lw, const NodeInfo* ni) {
  int in = lower_tensor(lw, ni_input(ni, 0));
  int mat = in < 0 ? -1 : lower_tensor(lw, ni_input(ni, 1));
  int out = mat < 0 ? -1 : lower_tensor(lw, ni_output(ni, 0));
  if (out < 0) return -1;
  GNode* n = graph_add_node(lw->g, GOP_TRANSFORM_TENSOR);
  if (!n) return lower_error(lw, "out of memory");
  n->inputs[0] = in;
  n->inputs[1] = mat;
  n->num_inputs = 2;
  n->outputs[0] = out;
  n->num_outputs = 1;
  FlexRef m;
  if (custom_options_map(ni, &m)) return -1; /* the parse wrote lw->err */
  n->p.transform.align_corners = transform_tensor_version(&m) == 2;
  return 0;
}

static int encode_transform_tensor(Encoder* ex, int node) {
  const GNode* n = &ex->g.nodes[node];
  KArgs a;
  if (ex_dispatch_src_dst(ex, node, "transform_tensor.cl", "transform_tensor_bilinear", &a)) return -1;
  karg_mem(&a, ex_tensor_mem(ex, n->inputs[1]));
  karg_shape(&a, ex->g.tensors[n->inputs[1]].shape);
  karg_int(&a, n->p.transform.align_corners);
  karg_int(&a, a.total);
  return karg_done(ex, &a);
}

/* The TFLite ops this file runs (op_table.c lists them). */
const OpDef kOpCustomTransformTensor = {.builtin_code = kBuiltinCustom, .custom_name = "TransformTensor", .max_version = 1,
    .check = check_transform_tensor, .lower = lower_transform_tensor,
    .constraints = "MediaPipe: version 1's registered name of TransformTensorBilinear (options output_size, mode bilinear)"};
const OpDef kOpCustomTransformTensorBilinear = {.builtin_code = kBuiltinCustom, .custom_name = "TransformTensorBilinear", .max_version = 2,
    .check = check_transform_tensor, .lower = lower_transform_tensor,
    .constraints = "MediaPipe: [1,H,W,C] tensor and [1,4,4] matrix -> [1,OH,OW,C]; options v1 output_size (mode bilinear), "
     "v2 output_height/width (pixel-centre aligned); batch 1"};
