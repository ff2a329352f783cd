/* TFLite's fixed-point requantization, prepare side: see quant_multiplier.h. */
#include "util/quant_multiplier.h"

#include <math.h>

void quantize_multiplier(double m, int32_t* q, int* shift) {
  if (m == 0.0) {
    *q = 0;
    *shift = 0;
    return;
  }
  int e;
  double f = frexp(m, &e);
  /* TfLiteRound: half away from zero. */
  int64_t qf = (int64_t)round(f * (double)(1ll << 31));
  if (qf == (1ll << 31)) {
    qf /= 2;
    ++e;
  }
  if (e < -31) { /* QuantizeMultiplier flushes tiny multipliers to 0 */
    e = 0;
    qf = 0;
  }
  *q = (int32_t)qf;
  *shift = e;
}

double conv_real_multiplier(float in_scale, float w_scale, float out_scale) {
  return (double)in_scale * (double)w_scale / (double)out_scale;
}

void prelu_real_multipliers(float in_scale, float alpha_scale, float out_scale, double* m_pos, double* m_neg) {
  /* As TF 2.14's PreluPrepare writes it: float operands, float arithmetic. */
  volatile float pos = in_scale / out_scale;
  volatile float neg = in_scale * alpha_scale / out_scale;
  *m_pos = pos;
  *m_neg = neg;
}

/* SaturatingRoundingDoublingHighMul: round(a * b / 2^31), ties away. */
static int32_t srdhm(int32_t a, int32_t b) {
  if (a == b && a == INT32_MIN) return INT32_MAX;
  int64_t ab = (int64_t)a * (int64_t)b;
  int64_t nudge = ab >= 0 ? (1ll << 30) : (1 - (1ll << 30));
  return (int32_t)((ab + nudge) / (1ll << 31)); /* C division truncates */
}

int32_t multiply_by_quantized_multiplier(int32_t x, int32_t q, int shift, int rounding) {
  int left = shift > 0 ? shift : 0, right = shift > 0 ? 0 : -shift;
  int32_t t = srdhm((int32_t)((uint32_t)x << left), q);
  if (right == 0) return t;
  if (rounding == REQ_ROUND_UP) return (int32_t)(((int64_t)t + (1ll << (right - 1))) >> right);
  int32_t mask = (int32_t)((1ll << right) - 1);
  int32_t rem = t & mask;
  int32_t threshold = (mask >> 1) + (t < 0);
  return (t >> right) + (rem > threshold);
}
