/* TFLite's fixed-point requantization (issue 14, docs/int8-fidelity.md):
 * QuantizeMultiplier (tensorflow/lite/kernels/internal/quantization_util.cc)
 * turns a real multiplier into a Q31 int32 and a power-of-two shift, and
 * MultiplyByQuantizedMultiplier (common.h) applies it with a rounding
 * doubling high multiply and a rounding right shift. The prepare-time half
 * runs here; the kernels apply it (common.cl, EPI_REQUANT). */
#ifndef TFLITE_GPU_QUANT_MULTIPLIER_H
#define TFLITE_GPU_QUANT_MULTIPLIER_H

#include <stdint.h>

/* Tie rule of the last rounding shift: REQ_ROUND_UP (ties toward +inf:
 * the x86 wheels' optimized CONV_2D / FULLY_CONNECTED), REQ_ROUND_AWAY
 * (gemmlowp's RoundingDivideByPOT: PRELU, the reference kernels). */
enum { REQ_ROUND_AWAY = 0, REQ_ROUND_UP = 1 };

/* m = q * 2^shift with q in [2^30, 2^31) (or 0, 0). */
void quantize_multiplier(double m, int32_t* q, int* shift);

/* CONV_2D / FULLY_CONNECTED effective scale, in double as
 * PopulateConvolutionQuantizationParams / GetQuantizedConvolutionMultipler. */
double conv_real_multiplier(float in_scale, float w_scale, float out_scale);

/* PRELU's two (activations.cc PreluPrepare, TF 2.14: float arithmetic,
 * then widened): x >= 0: in / out; x < 0: in * alpha / out. */
void prelu_real_multipliers(float in_scale, float alpha_scale, float out_scale, double* m_pos, double* m_neg);

/* MultiplyByQuantizedMultiplier(x, q, shift), the last shift's ties by
 * `rounding` (REQ_ROUND_*). The kernels' integer step must match it. */
int32_t multiply_by_quantized_multiplier(int32_t x, int32_t q, int shift, int rounding);

#endif
