/* Test hooks in the OpenCL layer: counts of live OpenCL objects (created
 * minus released) and program builds, always on; and, in builds made with
 * -DTFLITE_GPU_FAULT_INJECTION only, failure of the Nth call of a kind
 * (context/queue creation, program build, buffer allocation, kernel
 * enqueue, transfer; the delegate maps no buffers, transfers are its
 * only host<->device copies). Both work
 * by wrapping the entry points in `cl` once it is loaded. */
#ifndef TFLITE_GPU_CL_HOOKS_H
#define TFLITE_GPU_CL_HOOKS_H

#include "cl/cl_api.h"

enum {
  CLH_CONTEXT = 0, CLH_QUEUE, CLH_MEM, CLH_PROGRAM, CLH_KERNEL, CLH_EVENT, /* live objects */
  CLH_PROGRAM_BUILDS,                                                     /* calls so far */
  CLH_NUM
};

/* Replaces the counted entry points of api with wrappers (once). */
void cl_hooks_install(ClApi* api);
/* Current value of counter `what` (CLH_*). */
long cl_hooks_count(int what);
/* "create=N,build=N,alloc=N,enqueue=N,transfer=N": the Nth call of each named kind,
 * counted from now, fails (0 or absent: never). "" clears. Returns 0, or -1
 * when the spec is malformed or fault injection is not compiled in. Also
 * read from $TFLITE_GPU_FAULT_INJECT when the OpenCL library loads. */
int cl_hooks_set_faults(const char* spec);

#endif
