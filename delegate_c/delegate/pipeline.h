/* The one path from a partition's TFLite nodes to a built executor:
 * lowering (ops/partition_lower.c), the fuse stage (passes/fuse.c), then
 * the build (runtime/executor.c) with the VM installed. The partition
 * kernel (partition_kernel.c) and the cost measurement (partition_cost.c)
 * both go through it, so what is timed is what runs. */
#ifndef TFLITE_GPU_PIPELINE_H
#define TFLITE_GPU_PIPELINE_H

#include <stddef.h>

#include "model/model_view.h"
#include "passes/fuse.h"
#include "runtime/executor.h"

/* A lowered and fused partition, not yet built. */
typedef struct PartitionPlan {
  SelectTarget target; /* the device's caps and the partition's policy (select/policy.h) */
  Graph g;
  int* outputs;        /* the graph tensor of each output tensor */
  int num_outputs;
  FuseStage fuse;      /* what the fuse stage ran and did (passes, counts, mixed) */
} PartitionPlan;

/* Lowers `nodes` of mv (in execution order; mv's storage flag set to the
 * device's) and fuses them for dev under policy: the passes its kernel set
 * and execution take, float_outputs (or NULL) kept on float storage. 0, or
 * -1 with err set; plan is then empty. */
int pipeline_plan(ModelView* mv, const TfLiteIntArray* nodes, const TfLiteIntArray* output_tensors, GpuDevice* dev,
                  const Policy* policy, const char* float_outputs, PartitionPlan* plan, char* err, size_t errlen);
/* Builds the plan into ex under its policy (ex takes its graph, built or not): group
 * scales tune (or NULL), the VM program's cache hook vm_cache (or NULL).
 * dev->mutex held. 0, or -1 with err set and ex freed. */
int pipeline_build(PartitionPlan* plan, Executor* ex, GpuDevice* dev, const signed char* tune, int tune_len,
                   const VmProgramCache* vm_cache, char* err, size_t errlen);
/* What a plan holds that no build took. */
void pipeline_plan_free(PartitionPlan* plan);

#endif
