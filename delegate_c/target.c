#include "target.h"

#include <strings.h>

KernelSet kernel_set_resolve(KernelSet requested, const GpuCaps* caps) {
  if (requested != GD_KSET_AUTO) return requested;
  return caps->is_gpu ? GD_KSET_GPU : GD_KSET_CPU;
}

const char* kernel_set_name(KernelSet set) {
  return set == GD_KSET_CPU ? "cpu" : set == GD_KSET_GPU ? "gpu" : "auto";
}

int kernel_set_parse(const char* s) {
  for (int k = GD_KSET_AUTO; k <= GD_KSET_GPU; ++k)
    if (strcasecmp(s, kernel_set_name((KernelSet)k)) == 0) return k;
  return -1;
}
