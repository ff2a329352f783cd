/* The tuner's work-group step (tune.c). */
#ifndef TFLITE_GPU_TUNE_H
#define TFLITE_GPU_TUNE_H

#include <stddef.h>

#include "runtime/executor.h"
#include "select/selectors.h" /* GD_TUNE_MIN_GAIN */

/* The candidates: log2 of the scale applied to each dispatch's group,
 * the selector's own (0) first. */
#define GD_TUNE_CANDIDATES 4
extern const signed char kTuneScales[GD_TUNE_CANDIDATES];

/* After one warm-up run of the list, times each dispatch alone (enqueue
 * and finish), best of reps: us[i]. dev->mutex held. */
int tune_time_dispatches(Executor* ex, int reps, double* us, char* err, size_t errlen);
/* us[c][i]: dispatch i under candidate c. Sets tune[i] to the chosen
 * scales; returns the chosen total time over the selector's. */
double tune_choose(const double* const* us, int n, signed char* tune);
#endif
