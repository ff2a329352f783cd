#include "cl/target.h"

#include <stdio.h>
#include <strings.h>

const char* kernel_set_name(KernelSet set) {
  return set == GD_KSET_CPU ? "cpu" : set == GD_KSET_GPU ? "gpu" : "auto";
}

int kernel_set_parse(const char* s) {
  for (int k = GD_KSET_AUTO; k <= GD_KSET_GPU; ++k)
    if (strcasecmp(s, kernel_set_name((KernelSet)k)) == 0) return k;
  return -1;
}

int gpu_opencl_c_minor(const char* version) {
  int major = 0, minor = 0;
  if (!version || sscanf(version, "OpenCL C %d.%d", &major, &minor) != 2 || major < 1) return 0;
  return major > 1 || minor >= 2 ? 2 : minor;
}

int variant_fit_group(KernelVariant* v, size_t max_group) {
  if (max_group < 1) return -1;
  size_t group = 1;
  for (int d = 0; d < v->dims; ++d) group *= v->local[d] ? v->local[d] : 1;
  while (group > max_group) {
    int widest = -1;
    for (int d = 0; d < v->dims; ++d)
      if (v->local_define[d] && v->local[d] > 1 && (widest < 0 || v->local[d] > v->local[widest])) widest = d;
    if (widest < 0) return -1;
    size_t half = v->local[widest] / 2;
    if (widest == 0 && v->global_in_groups) v->global[0] = v->global[0] / v->local[0] * half;
    group = group / v->local[widest] * half;
    v->local[widest] = half;
  }
  size_t used = 0;
  v->defines[0] = '\0';
  for (int d = 0; d < v->dims; ++d) {
    if (!v->local_define[d]) continue;
    int n = snprintf(v->defines + used, sizeof(v->defines) - used, "%s-D%s=%zu", used ? " " : "", v->local_define[d],
                     v->local[d]);
    if (n < 0 || (size_t)n >= sizeof(v->defines) - used) return -1;
    used += (size_t)n;
  }
  return 0;
}
