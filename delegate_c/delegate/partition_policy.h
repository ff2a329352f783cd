/* A partition's policy (select/policy.h), as its kernel is made: the
 * device's rule, what this device remembered for this partition
 * (policy_store.h), the options and the overrides; then, with
 * SUSTAINED_SPEED and nothing remembered (or tune=force), the tuner's choice
 * (tuner.h), remembered, and its candidates added to the delegate's report.
 * tune=clear forgets. */
#ifndef TFLITE_GPU_PARTITION_POLICY_H
#define TFLITE_GPU_PARTITION_POLICY_H

#include <stddef.h>

#include "delegate/delegate.h"
#include "delegate/policy_store.h"
#include "delegate/tuner.h"

/* Fills *policy and the work-group scales (*tune: malloc'd, or left as it
 * was) for the partition params of d's running Prepare; store is opened
 * (policy_store_free it). build/ctx build a candidate (tuner.h). 0, or -1
 * with err set when an override is not valid. */
int partition_policy_resolve(GpuDelegate* d, GpuDevice* dev, const TfLiteDelegateParams* params, PolicyStore* store,
                     Policy* policy, signed char** tune, int* tune_len, TuneBuildFn build, void* ctx, int log_level,
                     char* err, size_t errlen);

#endif
