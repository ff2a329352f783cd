/* See pipeline.h. */
#include "delegate/pipeline.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config/options.h"
#include "ops/partition_lower.h"
#include "select/selectors.h"
#include "vm/vm.h"

int pipeline_plan(ModelView* mv, const TfLiteIntArray* nodes, const TfLiteIntArray* output_tensors, GpuDevice* dev,
                  const Policy* policy, const char* float_outputs, PartitionPlan* plan, char* err, size_t errlen) {
  memset(plan, 0, sizeof(*plan));
  plan->target = (SelectTarget){&dev->caps, *policy, dev->fp16};
  plan->target.pol.v[POL_KERNEL_SET] = policy_build_kernel_set(policy);
  plan->num_outputs = output_tensors->size;
  plan->outputs = malloc((size_t)(plan->num_outputs + 1) * sizeof(int));
  if (!plan->outputs) return snprintf(err, errlen, "out of memory"), -1;
  mv->fp16_storage = dev->fp16;
  if (lower_partition(mv, nodes, output_tensors, &plan->g, plan->outputs, err, errlen)) {
    pipeline_plan_free(plan);
    return -1;
  }
  plan->fuse = (FuseStage){.g = &plan->g, .outputs = plan->outputs, .num_outputs = plan->num_outputs,
                           .passes = fuse_passes_for(&plan->target), .fp16 = dev->fp16,
                           .float_outputs = float_outputs, .target = &plan->target};
  if (fuse_graph(&plan->fuse) < 0) {
    pipeline_plan_free(plan);
    return snprintf(err, errlen, "out of memory"), -1;
  }
  return 0;
}

int pipeline_build(PartitionPlan* plan, Executor* ex, GpuDevice* dev, const signed char* tune, int tune_len,
                   const VmProgramCache* vm_cache, char* err, size_t errlen) {
  int rc = executor_build_tuned(ex, dev, &plan->target.pol, &plan->g, plan->outputs, plan->num_outputs, tune, tune_len,
                                vm_strategy(), vm_cache, err, errlen);
  if (rc) executor_free(ex);
  return rc;
}

void pipeline_plan_free(PartitionPlan* plan) {
  graph_free(&plan->g);
  free(plan->outputs);
  plan->outputs = NULL;
}
