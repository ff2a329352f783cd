/* See policy.h: the order in which the rule, a measurement, the options
 * and the overrides apply, and the one read of the override variable. */
#include "select/policy.h"

#include <stdio.h>

#include "util/env_hooks.h"

PolicyRequest policy_request(const GpuConfig* cfg) {
  PolicyRequest r = {cfg->execution, cfg->kernel_set,
                     cfg->v2.inference_priority1 == TFLITE_GPU_INFERENCE_PRIORITY_MIN_MEMORY_USAGE, cfg->policy};
  return r;
}

int policy_resolve(const GpuCaps* caps, const PolicyRequest* req, const Policy* remembered, Policy* out, char* err,
                   size_t errlen) {
  policy_rule(caps, out);
  if (remembered)
    for (int f = 0; f < POL_NUM_FIELDS; ++f)
      if (remembered->src[f] == POL_SRC_MEASURED && !kPolicyFields[f].per_device) {
        out->v[f] = remembered->v[f];
        out->src[f] = POL_SRC_MEASURED;
      }
  /* MIN_MEMORY_USAGE: a persistent launch keeps every activation apart (no
   * arena reuse), so neither the rule nor a measurement may pick it. */
  if (req->min_memory && out->v[POL_EXECUTION] == GD_EXEC_PERSISTENT && out->src[POL_EXECUTION] <= POL_SRC_MEASURED) {
    out->v[POL_EXECUTION] = GD_EXEC_KERNELS;
    out->src[POL_EXECUTION] = POL_SRC_OPTION;
  }
  if (req->execution != GD_EXEC_AUTO) out->v[POL_EXECUTION] = req->execution, out->src[POL_EXECUTION] = POL_SRC_OPTION;
  if (req->kernel_set != GD_KSET_AUTO) out->v[POL_KERNEL_SET] = req->kernel_set, out->src[POL_KERNEL_SET] = POL_SRC_OPTION;
  char why[600];
  const char* env = env_text("TFLITE_GPU_POLICY");
  if (env && policy_apply_text(out, env, POL_SRC_OVERRIDE, why, sizeof(why)))
    return snprintf(err, errlen, "TFLITE_GPU_POLICY: %s", why), -1;
  if (req->overrides && policy_apply_text(out, req->overrides, POL_SRC_OVERRIDE, why, sizeof(why)))
    return snprintf(err, errlen, "policy: %s", why), -1;
  return 0;
}
