/* See epilogue_args.h. */
#include "encode/epilogue_args.h"

#include <stdlib.h>
#include <string.h>

/* Float4s of step e's constants in the alpha operand: PReLU's alphas and a
 * constant EPI_BINARY operand a float4 per slice, an affine step's (a, b)
 * two, a QDQ grid or leaky relu's alpha one. */
static int alpha_float4s(const Graph* g, const Epilogue* e, int slices) {
  switch (e->op) {
    case EPI_PRELU: return slices;
    case EPI_AFFINE: return 2 * slices;
    case EPI_QDQ: return 1;
    case EPI_UNARY: return e->act == UN_LEAKY_RELU;
    case EPI_BINARY: return g->tensors[e->tensor].data ? slices : 0;
    default: return 0;
  }
}

/* Value c of a constant per channel or scalar; lanes past cout repeat
 * channel 0 (never read back: the stores mask them), so that a DIV or POW
 * there makes no inf. */
static float channel_value(const GTensor* t, int c, int cout) {
  return t->data[t->shape[GD_C] == 1 ? 0 : c < cout ? c : 0];
}

/* Writes step e's constants (alpha_float4s of them, none for a step that
 * takes none) at v. */
static void fill_alpha(const Graph* g, const Epilogue* e, int cout, float* v) {
  int slices = (cout + 3) / 4;
  const GTensor* a = e->tensor >= 0 ? &g->tensors[e->tensor] : NULL;
  if (e->op == EPI_PRELU) {
    for (int c = 0; c < cout; ++c) v[c] = channel_value(a, c, cout);
  } else if (e->op == EPI_BINARY && a->data) { /* a runtime operand takes none */
    for (int c = 0; c < slices * 4; ++c) v[c] = channel_value(a, c, cout);
  } else if (e->op == EPI_AFFINE) {
    /* (a, b) per slice: a the multiplier (1 where none), b the addend (0
     * where none; negated for a SUB; times a where it came first). */
    const GTensor* b = e->shift >= 0 ? &g->tensors[e->shift] : NULL;
    for (int c = 0; c < slices * 4; ++c) {
      float* slot = &v[(size_t)(c / 4) * 8 + c % 4];
      slot[0] = a ? channel_value(a, c, cout) : 1.0f;
      slot[4] = b ? e->shift_sign * channel_value(b, c, cout) : 0.0f;
      if (e->add_first) slot[4] *= slot[0]; /* (v + b) * a */
    }
  } else if (e->op == EPI_QDQ) {
    v[0] = e->qscale, v[1] = (float)e->qzero, v[2] = (float)e->qmin, v[3] = (float)e->qmax;
  } else if (e->op == EPI_UNARY && e->act == UN_LEAKY_RELU) {
    v[0] = e->qscale;
  }
}

/* The two-step form: at most two steps, one of them using alpha, no EPI_BINARY. */
static int two_step(const Graph* g, const GNode* n) {
  int alpha = 0;
  for (int e = 0; e < n->num_epi; ++e) {
    if (n->epi[e].op == EPI_BINARY) return 0;
    alpha += alpha_float4s(g, &n->epi[e], 1) > 0;
  }
  return n->num_epi <= 2 && alpha <= 1;
}

int epilogue_needs_un(const Graph* g, const GNode* n) {
  for (int e = 0; e < n->num_epi; ++e)
    if (n->epi[e].op == EPI_UNARY) return 1;
  return !two_step(g, n);
}

void epilogue_math(const GNode* n, unsigned* unary_ops, unsigned* binary_ops) {
  *unary_ops = *binary_ops = 0;
  for (int e = 0; e < n->num_epi; ++e) {
    if (n->epi[e].op == EPI_UNARY) *unary_ops |= 1u << n->epi[e].act;
    if (n->epi[e].op == EPI_BINARY) *binary_ops |= 1u << n->epi[e].bin;
  }
}

int epilogue_args(Encoder* ex, const GNode* n, const KernelVariant* v, cl_mem placeholder, cl_mem* alpha_out,
                  cl_mem* residual_out, int epi[4], int* res_slices) {
  const Graph* g = &ex->g;
  int cout = g->tensors[n->outputs[0]].shape[GD_C], slices = (cout + 3) / 4;
  *alpha_out = *residual_out = placeholder;
  memset(epi, 0, 4 * sizeof(int));
  /* The runtime operand. A residual may have fewer channels than the output
   * (fuse_epilogue.c folds a channel PAD into the ADD); its missing slices
   * add zero. */
  *res_slices = slices;
  int read = EPI_NONE;
  for (int e = 0; e < n->num_epi; ++e) {
    const Epilogue* x = &n->epi[e];
    if (x->op != EPI_ADD && !(x->op == EPI_BINARY && !g->tensors[x->tensor].data)) continue;
    /* Through a pool or a resize the convolutions read it (common.cl conv_residual); depthwise.cl's
     * kernels do not (the pooled_residual pass gives it to CONV_2D nodes only). */
    if (x->op == EPI_ADD && x->via && strcmp(v->file, "depthwise.cl") == 0)
      return ex_fail(ex, "%s cannot read a residual through a pool or a resize", v->kernel);
    *residual_out = ex_tensor_mem(ex, x->tensor);
    *res_slices = (g->tensors[x->tensor].shape[GD_C] + 3) / 4;
    read = x->via ? x->via : EPI_ADD;
  }
  int floats = 0, two = two_step(g, n);
  for (int e = 0; e < n->num_epi; ++e) floats += 4 * alpha_float4s(g, &n->epi[e], slices);
  if (!two) floats += 4 * n->num_epi; /* the chain's step words */
  float* buf = floats ? calloc((size_t)floats, sizeof(float)) : NULL;
  if (floats && !buf) return ex_fail(ex, "out of memory");
  int at = two ? 0 : n->num_epi; /* float4 where the next step's constants go */
  for (int e = 0; e < n->num_epi; ++e) {
    const Epilogue* x = &n->epi[e];
    int code = x->op == EPI_ADD && two ? read : x->op;
    if (two) {
      epi[2 * e] = code, epi[2 * e + 1] = x->act;
    } else {
      int aux = x->op != EPI_BINARY ? 0
                : x->bin | (x->swap ? EPI_BIN_SWAP : 0) | (g->tensors[x->tensor].data ? 0 : EPI_BIN_RUNTIME);
      int words[4] = {code, x->act, at, aux};
      memcpy(&buf[4 * e], words, sizeof(words));
    }
    if (alpha_float4s(g, x, slices)) fill_alpha(g, x, cout, &buf[4 * at]);
    at += alpha_float4s(g, x, slices);
  }
  if (!two) epi[0] = EPI_CHAIN, epi[1] = n->num_epi, epi[2] = read;
  if (!buf) return 0; /* no step takes constants: the placeholder stands in */
  *alpha_out = ex_upload(ex, buf, (size_t)floats * sizeof(float));
  free(buf);
  return *alpha_out ? 0 : -1;
}
