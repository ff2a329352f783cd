/* LOCAL_RESPONSE_NORMALIZATION over TFLite's last axis (channels), as the
 * CPU's kernel computes it: x[c] * (bias + alpha * sum of x[k]^2 for k in
 * [c - radius, c + radius] within the channels)^-beta
 * (opencl_kernels/lrn.cl). */
#include "encode/encode.h"
#include "ops/op_table.h"
#include "model/tflite_builtins.h"
#include "ops/op_kinds.h"

/* The graph ops this file encodes (graph.h: a node points at its op). */
static int encode_lrn(Encoder* ex, int node);
const GOpDesc kGOpLrn = {"LRN", encode_lrn};

static int parse_lrn(const NodeInfo* ni, void* out) {
  TfLiteLocalResponseNormParams* p = out;
  const TfLiteLocalResponseNormParams* tp = ni->node->builtin_data;
  if (!tp) return reason(ni, "missing parameters");
  if (check_io(ni, 1, 1)) return -1;
  int in[4];
  if (ni_shape(ni, ni_input(ni, 0), in) != 4) return reason(ni, "input 0 must have rank 4 (as TFLite's kernel)");
  if (tp->radius < 0) return reason(ni, "radius %d; it must be >= 0", tp->radius);
  *p = *tp;
  return 0;
}

static int lower_lrn(Lowering* lw, const NodeInfo* ni) {
  const TfLiteLocalResponseNormParams* p = ni->params;
  int in = lower_tensor(lw, ni_input(ni, 0));
  int out = in < 0 ? -1 : lower_tensor(lw, ni_output(ni, 0));
  if (out < 0) return -1;
  GNode* n = graph_add_node_io(lw->g, GOP_LRN, in, out);
  if (!n) return lower_error(lw, "out of memory");
  n->p.lrn.radius = p->radius;
  n->p.lrn.bias = p->bias;
  n->p.lrn.alpha = p->alpha;
  n->p.lrn.beta = p->beta;
  return 0;
}

static int encode_lrn(Encoder* ex, int node) {
  const GNode* n = &ex->g.nodes[node];
  KArgs a;
  if (ex_dispatch_src_dst(ex, node, "lrn.cl", "lrn", &a)) return -1;
  karg_int(&a, n->p.lrn.radius);
  karg_float(&a, n->p.lrn.bias);
  karg_float(&a, n->p.lrn.alpha);
  karg_float(&a, n->p.lrn.beta);
  karg_int(&a, a.total);
  return karg_done(ex, &a);
}

/* The TFLite ops this file runs (op_table.c lists them). */
const OpDef kOpLocalResponseNormalization = {.builtin_code = kBuiltinLocalResponseNormalization, .max_version = 1,
    .parse = parse_lrn, .params_size = sizeof(TfLiteLocalResponseNormParams), .infer = infer_input_shape,
    .lower = lower_lrn,
    .constraints = "float32 rank-4 input; any radius >= 0, bias, alpha, beta; the window [c - radius, c + radius] "
                   "as the CPU's kernel; float32 sums (not in upstream's table)"};
