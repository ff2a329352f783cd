/* Delegate configuration: upstream's TfLiteGpuDelegateOptionsV2 plus our
 * own settings, and the parser for load_delegate's string options. The
 * option table in options.c is the one list of accepted keys; the Python
 * docs are generated from it through tflite_gpu_describe_options(). */
#ifndef TFLITE_GPU_OPTIONS_H
#define TFLITE_GPU_OPTIONS_H

#include <stddef.h>

#include "gpu_delegate.h"

typedef struct GpuConfig {
  TfLiteGpuDelegateOptionsV2 v2;  /* string fields point at the owned copies below */
  char* serialization_dir;        /* owned, may be NULL */
  char* model_token;              /* owned, may be NULL */
  char* device;                   /* owned: an OpenCL device index or name substring; NULL = default */
  int log_level;                  /* GD_LOG_* */
  int kernel_set;                 /* KernelSet (target.h): GD_KSET_AUTO unless the option says */
  int partition_policy;           /* GD_PARTS_*: which partitions to delegate */
  int fp16;                       /* resolved precision: 1 = FP16 storage, 0 = FP32 */
  int fp16_guard;                 /* 1: FP16 partitions keep outputs that drift from float on float (fp16_guard.c) */
  int execution;                  /* GD_EXEC_*: how a partition's dispatches run (vm.h) */
  char* policy;                   /* owned: the option `policy`, overrides of the policy's fields; NULL: none */
  int tune;                       /* GD_TUNE_*: when the tuner times a partition's candidates */
  double tune_budget;             /* seconds a partition's tuning may take */
} GpuConfig;

/* tune: auto (under SUSTAINED_SPEED, when nothing is remembered), force
 * (now, and remember), clear (forget what is remembered; time nothing). */
enum { GD_TUNE_AUTO = 0, GD_TUNE_FORCE = 1, GD_TUNE_CLEAR = 2 };
extern const char* const kTuneNames[3];
#define GD_TUNE_BUDGET_DEFAULT 30.0

/* partition_policy: the largest max_delegated_partitions (upstream's
 * rule), every partition, or those that measure faster on the device than
 * their estimated CPU time (partition_cost.c), at most max_delegated_partitions. */
enum { GD_PARTS_LARGEST = 0, GD_PARTS_ALL = 1, GD_PARTS_MEASURED = 2 };
extern const char* const kPartitionPolicyNames[3];

/* execution: auto (kernels until a device is known to do better), one
 * kernel launch per dispatch, the VM program launched per phase, or once
 * per segment of phases (vm.h). */
enum { GD_EXEC_AUTO = 0, GD_EXEC_KERNELS = 1, GD_EXEC_STEPPED = 2, GD_EXEC_PERSISTENT = 3 };
extern const char* const kExecutionNames[4];

void gpu_config_default(GpuConfig* cfg);
/* Copies options (NULL = defaults) into cfg, validating them. Returns 0 or
 * -1 with a one-line reason in err; cfg owns nothing on failure. */
int gpu_config_from_options(GpuConfig* cfg, const TfLiteGpuDelegateOptionsV2* options, char* err, size_t errlen);
/* Parses load_delegate's key/value strings over the defaults. */
int gpu_config_from_strings(GpuConfig* cfg, const char* const* keys, const char* const* values, int n, char* err,
                            size_t errlen);
void gpu_config_free(GpuConfig* cfg);

/* Writes one line per accepted key: "key\taliases\ttype\tdefault\thelp". */
size_t gpu_config_describe(char* buf, size_t size);

#endif
