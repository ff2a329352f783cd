/* Running a built partition on seeded inputs and comparing what two
 * builds of it give: fp16_guard.c (half against float storage) and the
 * tuner (delegate/tuner.c: each candidate policy against the first). The
 * inputs are floats uniform in [-1, 1) as `tflite-gpu check` draws them,
 * one seed per TFLite tensor (so that two builds see the same data
 * whatever their input order), other types zero. */
#ifndef TFLITE_GPU_PROBE_H
#define TFLITE_GPU_PROBE_H

#include <stddef.h>

#include "runtime/executor.h"

/* The probe's inputs for ex: one malloc'd buffer per input (NULL: out of
 * memory), freed with probe_free_inputs. */
unsigned char** probe_inputs(const Executor* ex);
void probe_free_inputs(unsigned char** ins, int n);
/* One run of ex on the probe's inputs; outs[k] receives output k
 * (malloc'd, ex->outputs[k].bytes). A CL error. Call with dev->mutex held. */
cl_int probe_run(Executor* ex, unsigned char** outs);
/* Whether a tensor is compared as floats (float32, not quantized). */
int probe_is_float(const GTensor* t);
/* Relative L2 distance of a from the reference r, and the largest
 * absolute difference; a NaN or infinity that r does not have counts as
 * infinitely far. */
double probe_rel_l2(const float* a, const float* r, size_t n, double* max_abs);

#endif
