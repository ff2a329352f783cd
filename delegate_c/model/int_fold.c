/* See int_fold.h. Semantics follow TFLite's reference kernels for the
 * rank <= 1 integer tensors of shape arithmetic; anything else (a mask
 * this file does not model, an index out of range, a result that does not
 * match the declared output) is simply not folded, and the node keeps its
 * ordinary check. */
#include "model/int_fold.h"

#include <stdio.h>
#include <string.h>

#include "model/tflite_builtins.h"

static int is_fold_op(int code) {
#define AS_CASE(c, name) case c:
  switch (code) {
    INT_FOLD_OPS(AS_CASE)
    case kBuiltinShape:
      return 1;
    default:
      return 0;
  }
#undef AS_CASE
}

typedef struct {
  const ModelView* mv;
  char* err;
  size_t errlen;
  int depth;
} Fold;

static int fail(Fold* f, const char* what) {
  snprintf(f->err, f->errlen, "%s", what);
  return -1;
}

static int is_int_type(int type) { return type == kTfLiteInt32 || type == kTfLiteInt64; }

static int rank_of(const ModelView* mv, int t) {
  const TfLiteTensor* x = mv_tensor(mv, t);
  return x->dims ? x->dims->size : -1;
}

static int values(Fold* f, int tensor, int64_t* out, int* count);

/* One input's values (index k of the node), any rank, at most max. */
static int input(Fold* f, const TfLiteNode* node, int k, int64_t* out, int* count) {
  if (!node->inputs || k >= node->inputs->size) return fail(f, "missing input");
  return values(f, node->inputs->data[k], out, count);
}

static int strided_slice(Fold* f, const TfLiteNode* node, const int64_t* in, int n, int64_t* out, int* count) {
  const TfLiteStridedSliceParams* p = node->builtin_data;
  int64_t b[INT_FOLD_MAX], e[INT_FOLD_MAX], s[INT_FOLD_MAX];
  int nb, ne, ns;
  if (!p || p->ellipsis_mask || p->new_axis_mask || p->offset) return fail(f, "strided slice masks");
  if (input(f, node, 1, b, &nb) || input(f, node, 2, e, &ne) || input(f, node, 3, s, &ns)) return -1;
  if (nb != 1 || ne != 1 || ns != 1 || s[0] == 0) return fail(f, "strided slice of a vector");
  int64_t stride = s[0], start = b[0], stop = e[0];
  if (p->shrink_axis_mask & 1) {
    if (p->begin_mask & 1) return fail(f, "shrink with begin mask");
    if (start < 0) start += n;
    if (start < 0 || start >= n) return fail(f, "index out of range");
    out[0] = in[start];
    *count = 1;
    return 0;
  }
  /* TFLite's StartForAxis / StopForAxis for one axis. */
  int64_t lo = stride > 0 ? 0 : -1, hi = stride > 0 ? n : n - 1;
  if (p->begin_mask & 1) start = stride > 0 ? lo : hi;
  else if (start < 0) start += n;
  if (p->end_mask & 1) stop = stride > 0 ? hi : lo;
  else if (stop < 0) stop += n;
  start = start < lo ? lo : start > hi ? hi : start;
  stop = stop < lo ? lo : stop > hi ? hi : stop;
  int c = 0;
  for (int64_t i = start; stride > 0 ? i < stop : i > stop; i += stride) out[c++] = in[i];
  *count = c;
  return 0;
}

static int binary(Fold* f, int code, const TfLiteNode* node, int64_t* out, int* count) {
  int64_t a[INT_FOLD_MAX], b[INT_FOLD_MAX];
  int na, nb;
  if (input(f, node, 0, a, &na) || input(f, node, 1, b, &nb)) return -1;
  /* ADD, SUB and MUL carry a fused activation first in their params. */
  const TfLiteFusedActivation* act = node->builtin_data;
  if ((code == kBuiltinAdd || code == kBuiltinSub || code == kBuiltinMul) && act && *act != kTfLiteActNone)
    return fail(f, "fused activation");
  if (na != nb && na != 1 && nb != 1) return fail(f, "broadcast beyond a scalar");
  int n = na > nb ? na : nb;
  for (int i = 0; i < n; ++i) {
    int64_t x = a[na == 1 ? 0 : i], y = b[nb == 1 ? 0 : i], r;
    switch (code) {
      case kBuiltinAdd: r = x + y; break;
      case kBuiltinSub: r = x - y; break;
      case kBuiltinMul: r = x * y; break;
      case kBuiltinMaximum: r = x > y ? x : y; break;
      case kBuiltinMinimum: r = x < y ? x : y; break;
      default: /* FLOOR_DIV */
        if (y == 0) return fail(f, "division by zero");
        r = x / y;
        if ((x % y != 0) && ((x < 0) != (y < 0))) --r;
    }
    out[i] = r;
  }
  *count = n;
  return 0;
}

/* The node's output values; every path bounds its writes by INT_FOLD_MAX
 * (inputs are at most that many values, and the concatenating ops check). */
static int evaluate(Fold* f, const TfLiteNode* node, const TfLiteRegistration* reg, int64_t* out, int* count) {
  int code = reg->builtin_code;
  int64_t in[INT_FOLD_MAX];
  int n = 0;
  if (!node->inputs || node->inputs->size < 1) return fail(f, "no inputs");
  if (code == kBuiltinShape) {
    int t = node->inputs->data[0];
    if (t < 0 || t >= f->mv->num_tensors) return fail(f, "bad input");
    const TfLiteTensor* x = mv_tensor(f->mv, t);
    if (!x->dims || x->dims->size > INT_FOLD_MAX) return fail(f, "no dims");
    for (int i = 0; i < x->dims->size; ++i) {
      if (x->dims->data[i] < 0) return fail(f, "unknown dimension");
      out[i] = x->dims->data[i];
    }
    *count = x->dims->size;
    return 0;
  }
  switch (code) {
    case kBuiltinAdd: case kBuiltinSub: case kBuiltinMul: case kBuiltinFloorDiv:
    case kBuiltinMaximum: case kBuiltinMinimum:
      return binary(f, code, node, out, count);
    case kBuiltinPack: case kBuiltinConcatenation: {
      const int* axisp = node->builtin_data;
      if (!axisp) return fail(f, "no params");
      /* PACK of scalars, or along axis 0, and CONCATENATION of vectors:
       * the inputs one after another; PACK of vectors along axis 1
       * interleaves them. */
      int k = node->inputs->size, total = 0, first = 0, axis = code == kBuiltinPack
          ? ((const TfLitePackParams*)node->builtin_data)->axis : *axisp;
      int in_rank = rank_of(f->mv, node->inputs->data[0]);
      if (code == kBuiltinConcatenation) {
        if (((const TfLiteConcatenationParams*)node->builtin_data)->activation != kTfLiteActNone)
          return fail(f, "fused activation");
        if (in_rank != 1 || (axis != 0 && axis != -1)) return fail(f, "concatenation of vectors");
      } else if (in_rank > 1 || (in_rank == 0 && axis != 0 && axis != -1) ||
                 (in_rank == 1 && (axis < -2 || axis > 1))) {
        return fail(f, "pack of scalars or vectors");
      }
      int interleave = code == kBuiltinPack && in_rank == 1 && (axis == 1 || axis == -1);
      for (int j = 0; j < k; ++j) {
        int c;
        if (rank_of(f->mv, node->inputs->data[j]) != in_rank) return fail(f, "inputs of different ranks");
        if (input(f, node, j, in, &c)) return -1;
        if (j == 0) first = c;
        if (total + c > INT_FOLD_MAX || (code == kBuiltinPack && c != first)) return fail(f, "too many values");
        for (int i = 0; i < c; ++i) out[interleave ? i * k + j : total + i] = in[i];
        total += c;
      }
      *count = total;
      return 0;
    }
    default:
      break;
  }
  if (input(f, node, 0, in, &n)) return -1;
  switch (code) {
    case kBuiltinCast: case kBuiltinReshape: case kBuiltinSqueeze: case kBuiltinExpandDims:
      memcpy(out, in, (size_t)n * sizeof(int64_t));
      *count = n;
      return 0;
    case kBuiltinStridedSlice:
      if (rank_of(f->mv, node->inputs->data[0]) != 1 || node->inputs->size != 4) return fail(f, "not a vector");
      return strided_slice(f, node, in, n, out, count);
    case kBuiltinSlice: {
      int64_t b[INT_FOLD_MAX], s[INT_FOLD_MAX];
      int nb, ns;
      if (rank_of(f->mv, node->inputs->data[0]) != 1 || input(f, node, 1, b, &nb) || input(f, node, 2, s, &ns))
        return -1;
      if (nb != 1 || ns != 1) return fail(f, "slice of a vector");
      int64_t size = s[0] == -1 ? n - b[0] : s[0];
      if (b[0] < 0 || size < 0 || b[0] + size > n) return fail(f, "slice out of range");
      memcpy(out, in + b[0], (size_t)size * sizeof(int64_t));
      *count = (int)size;
      return 0;
    }
    case kBuiltinGather: {
      const TfLiteGatherParams* p = node->builtin_data;
      int64_t idx[INT_FOLD_MAX];
      int ni;
      if (!p || p->batch_dims != 0 || (p->axis != 0 && p->axis != -1) || rank_of(f->mv, node->inputs->data[0]) != 1)
        return fail(f, "gather from a vector");
      if (input(f, node, 1, idx, &ni)) return -1;
      for (int i = 0; i < ni; ++i) {
        if (idx[i] < 0 || idx[i] >= n) return fail(f, "index out of range");
        out[i] = in[idx[i]];
      }
      *count = ni;
      return 0;
    }
    case kBuiltinReduceProd: {
      int64_t axes[INT_FOLD_MAX];
      int na;
      if (rank_of(f->mv, node->inputs->data[0]) != 1 || input(f, node, 1, axes, &na)) return -1;
      if (na != 1 || (axes[0] != 0 && axes[0] != -1)) return fail(f, "product over a vector");
      int64_t r = 1;
      for (int i = 0; i < n; ++i) {
        r *= in[i];
        if (r > INT32_MAX || r < INT32_MIN) return fail(f, "overflow");
      }
      out[0] = r;
      *count = 1;
      return 0;
    }
    default:
      return fail(f, "not an integer fold");
  }
}

/* Evaluates node (model or folded inputs) into out and checks the result
 * against its declared output: count and int32 range. */
static int eval_node(Fold* f, const TfLiteNode* node, const TfLiteRegistration* reg, int64_t* out, int* count) {
  if (++f->depth > 32) return fail(f, "folding chain too deep");
  int rc = evaluate(f, node, reg, out, count);
  --f->depth;
  if (rc) return -1;
  int o = node->outputs->data[0];
  if (*count < 0 || *count > INT_FOLD_MAX || (size_t)*count != mv_elements(f->mv, o))
    return fail(f, "result does not match the declared output shape");
  for (int i = 0; i < *count; ++i)
    if (mv_tensor(f->mv, o)->type == kTfLiteInt32 && (out[i] > INT32_MAX || out[i] < INT32_MIN))
      return fail(f, "result outside the int32 range");
  return 0;
}

static int values(Fold* f, int tensor, int64_t* out, int* count) {
  const ModelView* mv = f->mv;
  if (tensor < 0 || tensor >= mv->num_tensors) return fail(f, "bad tensor index");
  const TfLiteTensor* t = mv_tensor(mv, tensor);
  if (!is_int_type(t->type)) return fail(f, "not an int32/int64 tensor");
  size_t n = mv_elements(mv, tensor);
  if (n > INT_FOLD_MAX) return fail(f, "too many values");
  if (mv->const_kind[tensor] == CONST_MODEL) {
    if (t->bytes < n * (t->type == kTfLiteInt64 ? 8 : 4)) return fail(f, "constant shorter than its shape");
    for (size_t i = 0; i < n; ++i) out[i] = t->type == kTfLiteInt64 ? t->data.i64[i] : t->data.i32[i];
    *count = (int)n;
    return 0;
  }
  if (!int_fold_is_output(mv, tensor)) return fail(f, "not a constant");
  TfLiteNode* node;
  TfLiteRegistration* reg;
  if (mv_node(mv, mv->plan[mv->producer[tensor]], &node, &reg)) return fail(f, "GetNodeAndRegistration failed");
  return eval_node(f, node, reg, out, count);
}

int int_fold_is_output(const ModelView* mv, int tensor) {
  if (tensor < 0 || tensor >= mv->num_tensors || mv->const_kind[tensor] != CONST_FOLDED) return 0;
  int p = mv->producer[tensor];
  return p >= 0 && is_int_type(mv_tensor(mv, tensor)->type) && mv->foldable[p];
}

int int_fold_values(const ModelView* mv, int tensor, int64_t* out, int max, int* count, char* err, size_t errlen) {
  int64_t buf[INT_FOLD_MAX];
  Fold f = {mv, err, errlen, 0};
  if (values(&f, tensor, buf, count)) return -1;
  if (*count > max) return fail(&f, "too many values");
  memcpy(out, buf, (size_t)*count * sizeof(int64_t));
  return 0;
}

int int_fold_kind(const ModelView* mv, const TfLiteNode* node, const TfLiteRegistration* reg) {
  if (!is_fold_op(reg->builtin_code) || !node->inputs || !node->outputs || node->outputs->size != 1) return 0;
  int o = node->outputs->data[0];
  if (o < 0 || o >= mv->num_tensors || !is_int_type(mv_tensor(mv, o)->type)) return 0;
  int kind = reg->builtin_code == kBuiltinShape ? FOLD_SHAPE : FOLD_CONST;
  for (int k = reg->builtin_code == kBuiltinShape ? 1 : 0; k < node->inputs->size; ++k) {
    int t = node->inputs->data[k];
    if (t < 0) continue; /* an optional input left out */
    if (t >= mv->num_tensors || mv->const_kind[t] == CONST_NONE) return 0;
    if (int_fold_is_output(mv, t) && mv->foldable[mv->producer[t]] == FOLD_SHAPE) kind = FOLD_SHAPE;
  }
  int64_t out[INT_FOLD_MAX];
  int count;
  char err[120];
  Fold f = {mv, err, sizeof(err), 0};
  return eval_node(&f, node, reg, out, &count) == 0 ? kind : 0;
}
