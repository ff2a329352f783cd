/* The measured partition policy's costs (partition_policy=measured): each
 * candidate partition is built and timed once on the device, boundary
 * copies included, and its nodes' CPU time is estimated from FLOPs and
 * bytes at rates measured on this host once per process. */
#ifndef TFLITE_GPU_PARTITION_COST_H
#define TFLITE_GPU_PARTITION_COST_H

#include <stddef.h>

#include "cl/cl_device.h"
#include "model/model_view.h"
#include "select/policy.h"
#include "model/tflite_abi.h"

typedef struct PartCost {
  double device_us; /* measured: inputs in, every kernel, outputs out; < 0: it did not build */
  double cpu_us;    /* estimated for the interpreter's own kernels */
} PartCost;

/* Fills costs[p] for parts[0..np). Never fails as a whole: a partition
 * that cannot be built or run gets device_us -1 (reason logged at info). */
void partition_costs(const ModelView* mv, GpuDevice* dev, const Policy* run, const TfLiteDelegateParams* parts, int np,
                     int log_level, PartCost* costs);

/* Host rates behind the CPU estimate: FLOP/us of a register-tiled FP32
 * loop on one core, bytes/us of memcpy, and a fixed cost per node. */
typedef struct HostRates {
  double flops_per_us;
  double bytes_per_us;
  double node_us;
} HostRates;
const HostRates* host_rates(void);

#endif
