/* The tuner's work-group step (tuner.c), as upstream tunes: once kernels
 * won, the partition is built once per candidate group scale (the
 * selector's group x 1, 1/2, 1/4 and 2; a group fixed by a build define
 * only shrinks, variant_fit_group), this file times every dispatch of each
 * build on its own, and each dispatch keeps the scale that ran it fastest
 * (by at least GD_TUNE_MIN_GAIN, else the selector's). The scales are
 * remembered with the policy (policy_store.h). */
#include "delegate/tune.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cl/cl_api.h"

const signed char kTuneScales[GD_TUNE_CANDIDATES] = {0, -1, -2, 1};

static double now_us(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e6 + (double)t.tv_nsec * 1e-3;
}

int tune_time_dispatches(Executor* ex, int reps, double* us, char* err, size_t errlen) {
  cl_command_queue q = ex->enc.dev->queue;
  cl_int rc = CL_SUCCESS;
  /* One run of the whole list first: the first launch of a kernel (and of
   * a new local size, on PoCL) compiles. */
  for (int i = 0; i < ex->enc.num_dispatches && rc == CL_SUCCESS; ++i) {
    const Dispatch* d = &ex->enc.dispatches[i];
    rc = cl.clEnqueueNDRangeKernel(q, d->kernel, d->dims, NULL, d->global, d->local, 0, NULL, NULL);
  }
  if (rc == CL_SUCCESS) rc = cl.clFinish(q);
  for (int i = 0; i < ex->enc.num_dispatches && rc == CL_SUCCESS; ++i) {
    const Dispatch* d = &ex->enc.dispatches[i];
    us[i] = -1;
    for (int r = 0; r < reps && rc == CL_SUCCESS; ++r) {
      double t0 = now_us();
      rc = cl.clEnqueueNDRangeKernel(q, d->kernel, d->dims, NULL, d->global, d->local, 0, NULL, NULL);
      if (rc == CL_SUCCESS) rc = cl.clFinish(q);
      double t = now_us() - t0;
      if (us[i] < 0 || t < us[i]) us[i] = t;
    }
  }
  if (rc != CL_SUCCESS) {
    cl.clFinish(q);
    snprintf(err, errlen, "timing the dispatches: %s", cl_error_name(rc));
    return -1;
  }
  return 0;
}

double tune_choose(const double* const* us, int n, signed char* tune) {
  double before = 0, after = 0;
  for (int i = 0; i < n; ++i) {
    int best = 0;
    for (int c = 1; c < GD_TUNE_CANDIDATES; ++c)
      if (us[c][i] >= 0 && us[c][i] < us[best][i] * (1.0 - GD_TUNE_MIN_GAIN)) best = c;
    tune[i] = kTuneScales[best];
    before += us[0][i];
    after += us[best][i];
  }
  return before > 0 ? after / before : 1.0;
}
