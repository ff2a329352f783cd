/* The test hooks of gpu_delegate_introspection.h: live OpenCL objects,
 * program builds and host allocations of the library's own code; the
 * fault-injection switch. */
#include <stdint.h>

#include "cl/cl_hooks.h"
#include "gpu_delegate_introspection.h"

/* alloc_count.c, linked only into counting builds (make ALLOC_COUNT=1,
 * cmake -DTFLITE_GPU_ALLOC_COUNT=ON); absent, the weak reference is NULL. */
long gd_host_allocations(void) __attribute__((weak, visibility("hidden")));

TFLITE_GPU_EXPORT int tflite_gpu_debug_counters(TfLiteGpuDebugCounters* out) {
  if (!out) return -1;
  out->live_contexts = cl_hooks_count(CLH_CONTEXT);
  out->live_queues = cl_hooks_count(CLH_QUEUE);
  out->live_buffers = cl_hooks_count(CLH_MEM);
  out->live_programs = cl_hooks_count(CLH_PROGRAM);
  out->live_kernels = cl_hooks_count(CLH_KERNEL);
  out->live_events = cl_hooks_count(CLH_EVENT);
  out->program_builds = cl_hooks_count(CLH_PROGRAM_BUILDS);
  out->host_allocations = gd_host_allocations ? gd_host_allocations() : -1;
#ifdef TFLITE_GPU_FAULT_INJECTION
  out->fault_injection = 1;
#else
  out->fault_injection = 0;
#endif
  return 0;
}

TFLITE_GPU_EXPORT int tflite_gpu_fault_inject(const char* spec) { return cl_hooks_set_faults(spec); }
