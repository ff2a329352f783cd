/* Introspection for tests: live OpenCL objects, program builds and host
 * allocations of the library's own code; the fault-injection switch. */
#include <stdint.h>

#include "cl_hooks.h"
#include "gpu_delegate.h"

long gd_host_allocations(void); /* alloc_count.c */

/* The Python binding (_capi.py) declares the same struct. */
typedef struct TfLiteGpuDebugCounters {
  int64_t live_contexts;
  int64_t live_queues;
  int64_t live_buffers;   /* buffers and sub-buffers */
  int64_t live_programs;
  int64_t live_kernels;
  int64_t live_events;
  int64_t program_builds; /* clBuildProgram calls since the library loaded */
  int64_t host_allocations; /* malloc/calloc/realloc calls by this library */
  int32_t fault_injection;  /* 1 in builds with the fault-injection switch */
} TfLiteGpuDebugCounters;

TFLITE_GPU_EXPORT int tflite_gpu_debug_counters(TfLiteGpuDebugCounters* out) {
  if (!out) return -1;
  out->live_contexts = cl_hooks_count(CLH_CONTEXT);
  out->live_queues = cl_hooks_count(CLH_QUEUE);
  out->live_buffers = cl_hooks_count(CLH_MEM);
  out->live_programs = cl_hooks_count(CLH_PROGRAM);
  out->live_kernels = cl_hooks_count(CLH_KERNEL);
  out->live_events = cl_hooks_count(CLH_EVENT);
  out->program_builds = cl_hooks_count(CLH_PROGRAM_BUILDS);
  out->host_allocations = gd_host_allocations();
#ifdef TFLITE_GPU_FAULT_INJECTION
  out->fault_injection = 1;
#else
  out->fault_injection = 0;
#endif
  return 0;
}

/* See cl_hooks_set_faults: "build=N,alloc=N,enqueue=N,transfer=N". */
TFLITE_GPU_EXPORT int tflite_gpu_fault_inject(const char* spec) { return cl_hooks_set_faults(spec); }
