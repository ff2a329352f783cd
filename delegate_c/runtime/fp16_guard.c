/* fp16_guard=on: half storage only where it measurably agrees with float.
 *
 * Some models amplify FP16's roundings into outputs that are wrong (the
 * segmentation logits of pose_landmark_full: 0.025-0.09 relative L2, and
 * not from one op: rounding only its input image to half costs 0.004, so no
 * small float island fixes it). Before an FP16 partition is built for good,
 * partition_kernel.c builds it twice more, as planned and on float storage
 * throughout; this file runs both on the probe's seeded inputs (probe.h) and flags
 * each float output whose half result is further than the limit from the
 * float one (relative L2), unless every element is within GD_FP16_GUARD_ABS
 * (outputs near zero, such as a mask after a sigmoid on random inputs). Those outputs keep every node they depend on on float
 * (mixed_storage.c); the rest of the partition stays half. */
#include "runtime/fp16_guard.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/probe.h"

int fp16_guard_compare(Executor* half, Executor* ref, double limit, char* keep_float, double* rel, char* err,
                       size_t errlen) {
  int n = half->num_outputs - half->num_state_outputs; /* the partition's outputs, not written-back states */
  if (ref->num_outputs != half->num_outputs) return snprintf(err, errlen, "fp16_guard: the two builds differ in outputs"), -1;
  int all = half->num_outputs;
  unsigned char** a = calloc((size_t)all + 1, sizeof(*a));
  unsigned char** b = calloc((size_t)all + 1, sizeof(*b));
  int rc = -1;
  if (!a || !b) {
    snprintf(err, errlen, "out of memory");
    goto done;
  }
  cl_int cr = probe_run(half, a);
  if (cr == CL_SUCCESS) cr = probe_run(ref, b);
  if (cr != CL_SUCCESS) {
    snprintf(err, errlen, "fp16_guard: running the probe: %s", cl_error_name(cr));
    goto done;
  }
  rc = 0;
  for (int k = 0; k < n; ++k) {
    const GTensor* t = &half->enc.g.tensors[half->outputs[k].tensor];
    rel[k] = 0;
    keep_float[k] = 0;
    if (!probe_is_float(t) || half->outputs[k].bytes != ref->outputs[k].bytes) continue;
    double max_abs;
    rel[k] = probe_rel_l2((const float*)a[k], (const float*)b[k], half->outputs[k].bytes / sizeof(float), &max_abs);
    keep_float[k] = !(rel[k] <= limit || max_abs <= GD_FP16_GUARD_ABS);
    rc += keep_float[k];
  }
done:
  for (int k = 0; a && b && k < all; ++k) free(a[k]), free(b[k]);
  free(a);
  free(b);
  return rc;
}
