/* L2_NORMALIZATION over TFLite's last axis (opencl_kernels/l2norm.cl),
 * which is C in the right-aligned BHWC shapes of every rank 1-4. */
#include "encode/encode.h"
#include "ops/op_table.h"
#include "model/tflite_builtins.h"
#include "ops/op_kinds.h"

/* The graph ops this file encodes (graph.h: a node points at its op). */
static int encode_l2_norm(Encoder* ex, int node);
/* x / max(|x|, 1e-6) over channels */
const GOpDesc kGOpL2Norm = {"L2_NORM", encode_l2_norm};

/* Nothing to keep (no params_size): the parse only validates. */
static int parse_l2_norm(const NodeInfo* ni, void* out) {
  (void)out;
  const TfLiteL2NormParams* p = ni->node->builtin_data;
  if (!p) return reason(ni, "missing parameters");
  if (check_io(ni, 1, 1)) return -1;
  /* The CPU's Prepare refuses any other: there is nothing to match. */
  if (p->activation != kTfLiteActNone)
    return reason(ni, "fused activation %d; TFLite's kernel only takes NONE", (int)p->activation);
  /* int8/uint8 run TFLite's integer square-root approximation, which the
   * float view would not reproduce bit for bit. */
  int type = (int)mv_tensor(ni->mv, ni_input(ni, 0))->type;
  if (type != kTfLiteFloat32)
    return reason(ni, "input has type %s; only FLOAT32 is delegated (the quantized kernel's integer arithmetic "
                  "stays on the CPU)", type_name(type));
  int dims[8];
  int rank = mv_dims(ni->mv, ni_input(ni, 0), dims, 8);
  if (rank < 1 || rank > 4) return reason(ni, "input 0 must have rank 1-4, has %d", rank);
  return 0;
}

static int lower_l2_norm(Lowering* lw, const NodeInfo* ni) {
  int in = lower_tensor(lw, ni_input(ni, 0));
  int out = in < 0 ? -1 : lower_tensor(lw, ni_output(ni, 0));
  if (out < 0) return -1;
  GNode* n = graph_add_node_io(lw->g, GOP_L2_NORM, in, out);
  if (!n) return lower_error(lw, "out of memory");
  return 0;
}

static int encode_l2_norm(Encoder* ex, int node) {
  const GNode* n = &ex->g.nodes[node];
  const int* s = ex->g.tensors[n->inputs[0]].shape;
  /* One work-item per pixel: its channel row. */
  size_t items = (size_t)s[GD_B] * s[GD_H] * s[GD_W];
  KernelRef k = ex_dispatch(ex, "l2norm.cl", "l2_norm", items, node);
  if (!k) return -1;
  KArgs a = {k, 0, CL_SUCCESS, 0};
  karg_mem(&a, ex_tensor_mem(ex, n->inputs[0]));
  karg_mem(&a, ex_tensor_mem(ex, n->outputs[0]));
  karg_shape(&a, s);
  karg_int(&a, (int)items);
  return karg_done(ex, &a);
}

/* The TFLite ops this file runs (op_table.c lists them). */
const OpDef kOpL2Normalization = {.builtin_code = kBuiltinL2Normalization, .max_version = 1,
    .parse = parse_l2_norm, .infer = infer_input_shape,
    .lower = lower_l2_norm,
    .constraints = "float32, over the last axis of a rank 1-4 tensor: x / max(sqrt(sum x^2), 1e-6) as TFLite; fused activation "
     "NONE (the CPU kernel refuses others); int8/uint8 (integer kernel) stays on the CPU"};
