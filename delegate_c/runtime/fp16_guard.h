/* fp16_guard=on: which outputs of an FP16 partition keep float storage
 * (see fp16_guard.c). */
#ifndef TFLITE_GPU_FP16_GUARD_H
#define TFLITE_GPU_FP16_GUARD_H

#include <stddef.h>

#include "runtime/executor.h"

/* How far (relative L2) an output on half storage may be from the same
 * partition on float storage: half of `tflite-gpu check`'s FP16 tolerance
 * (1e-2), since the float build is itself 1e-5-1e-4 from the CPU. */
#define GD_FP16_GUARD_RTOL 5e-3
/* An output whose every element is within this of float passes whatever
 * its relative distance: `check`'s FP16 floor, 2^-10. */
#define GD_FP16_GUARD_ABS (1.0 / 1024.0)

/* Runs the partition built as planned (half) and on float storage (ref)
 * on the same seeded inputs. Sets keep_float[k] = 1 for each float output
 * k further than limit (and than GD_FP16_GUARD_ABS somewhere), rel[k] to its distance (0 for outputs that are not
 * float). Returns how many were flagged, or -1 with err set. Call with
 * dev->mutex held. */
int fp16_guard_compare(Executor* half, Executor* ref, double limit, char* keep_float, double* rel, char* err,
                       size_t errlen);

#endif
