/* Work-group tuning for inference_preference=SUSTAINED_SPEED (tune.c). */
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
/* The remembered choice (malloc'd, n scales), or NULL when the file is
 * missing or not a valid choice. */
#define GD_TUNE_MAX_DISPATCHES 1000000
signed char* tune_load(const char* path, int* n);
int tune_save(const char* path, const signed char* tune, int n);

#endif
