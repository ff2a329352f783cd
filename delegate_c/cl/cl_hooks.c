#include "cl/cl_hooks.h"
#include "util/env_hooks.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static ClApi real; /* the loader's entry points */
static long counts[CLH_NUM];

static void add(int what, long d) { __atomic_add_fetch(&counts[what], d, __ATOMIC_RELAXED); }
long cl_hooks_count(int what) { return what >= 0 && what < CLH_NUM ? __atomic_load_n(&counts[what], __ATOMIC_RELAXED) : -1; }

/* ---- fault injection (test builds) ---- */

enum { FAULT_CREATE = 0, FAULT_BUILD, FAULT_ALLOC, FAULT_ENQUEUE, FAULT_TRANSFER, FAULT_KINDS };
static const char* const kFaultNames[FAULT_KINDS] = {"create", "build", "alloc", "enqueue", "transfer"};

#ifdef TFLITE_GPU_FAULT_INJECTION
static long fault_at[FAULT_KINDS]; /* 1-based call number that fails; 0: none */
static long fault_calls[FAULT_KINDS];

/* 1 when this call of `kind` is the one to fail. */
static int fault(int kind) {
  long at = __atomic_load_n(&fault_at[kind], __ATOMIC_RELAXED);
  if (!at) return 0;
  return __atomic_add_fetch(&fault_calls[kind], 1, __ATOMIC_RELAXED) == at;
}
#else
static int fault(int kind) {
  (void)kind;
  return 0;
}
#endif

int cl_hooks_set_faults(const char* spec) {
  long at[FAULT_KINDS] = {0};
  const char* p = spec ? spec : "";
  while (*p) {
    int kind = -1;
    for (int k = 0; k < FAULT_KINDS; ++k) {
      size_t n = strlen(kFaultNames[k]);
      if (strncmp(p, kFaultNames[k], n) == 0 && p[n] == '=') kind = k, p += n + 1;
    }
    if (kind < 0) return -1;
    char* end;
    long v = strtol(p, &end, 10);
    if (end == p || v < 0) return -1;
    at[kind] = v;
    p = end;
    if (*p == ',') ++p;
    else if (*p) return -1;
  }
#ifdef TFLITE_GPU_FAULT_INJECTION
  for (int k = 0; k < FAULT_KINDS; ++k) {
    __atomic_store_n(&fault_calls[k], 0, __ATOMIC_RELAXED);
    __atomic_store_n(&fault_at[k], at[k], __ATOMIC_RELAXED);
  }
  return 0;
#else
  for (int k = 0; k < FAULT_KINDS; ++k)
    if (at[k]) return -1;
  return 0;
#endif
}

/* ---- wrappers ---- */

static cl_context CL_API_CALL w_create_context(const cl_context_properties* p, cl_uint n, const cl_device_id* d,
                                               void(CL_CALLBACK* cb)(const char*, const void*, size_t, void*),
                                               void* u, cl_int* rc) {
  if (fault(FAULT_CREATE)) {
    if (rc) *rc = CL_OUT_OF_HOST_MEMORY;
    return NULL;
  }
  cl_context c = real.clCreateContext(p, n, d, cb, u, rc);
  if (c) add(CLH_CONTEXT, 1);
  return c;
}
static cl_int CL_API_CALL w_release_context(cl_context c) {
  cl_int rc = real.clReleaseContext(c);
  if (rc == CL_SUCCESS) add(CLH_CONTEXT, -1);
  return rc;
}
static cl_command_queue CL_API_CALL w_create_queue(cl_context c, cl_device_id d, cl_command_queue_properties p,
                                                   cl_int* rc) {
  if (fault(FAULT_CREATE)) {
    if (rc) *rc = CL_OUT_OF_HOST_MEMORY;
    return NULL;
  }
  cl_command_queue q = real.clCreateCommandQueue(c, d, p, rc);
  if (q) add(CLH_QUEUE, 1);
  return q;
}
static cl_int CL_API_CALL w_release_queue(cl_command_queue q) {
  cl_int rc = real.clReleaseCommandQueue(q);
  if (rc == CL_SUCCESS) add(CLH_QUEUE, -1);
  return rc;
}
static cl_mem CL_API_CALL w_create_buffer(cl_context c, cl_mem_flags f, size_t n, void* h, cl_int* rc) {
  if (fault(FAULT_ALLOC)) {
    if (rc) *rc = CL_MEM_OBJECT_ALLOCATION_FAILURE;
    return NULL;
  }
  cl_mem m = real.clCreateBuffer(c, f, n, h, rc);
  if (m) add(CLH_MEM, 1);
  return m;
}
static cl_mem CL_API_CALL w_create_sub_buffer(cl_mem b, cl_mem_flags f, cl_buffer_create_type t, const void* r,
                                              cl_int* rc) {
  if (fault(FAULT_ALLOC)) {
    if (rc) *rc = CL_MEM_OBJECT_ALLOCATION_FAILURE;
    return NULL;
  }
  cl_mem m = real.clCreateSubBuffer(b, f, t, r, rc);
  if (m) add(CLH_MEM, 1);
  return m;
}
static cl_int CL_API_CALL w_release_mem(cl_mem m) {
  cl_int rc = real.clReleaseMemObject(m);
  if (rc == CL_SUCCESS) add(CLH_MEM, -1);
  return rc;
}
static cl_program CL_API_CALL w_program_source(cl_context c, cl_uint n, const char** s, const size_t* l, cl_int* rc) {
  cl_program p = real.clCreateProgramWithSource(c, n, s, l, rc);
  if (p) add(CLH_PROGRAM, 1);
  return p;
}
static cl_program CL_API_CALL w_program_binary(cl_context c, cl_uint n, const cl_device_id* d, const size_t* l,
                                               const unsigned char** b, cl_int* st, cl_int* rc) {
  cl_program p = real.clCreateProgramWithBinary(c, n, d, l, b, st, rc);
  if (p) add(CLH_PROGRAM, 1);
  return p;
}
static cl_int CL_API_CALL w_build(cl_program p, cl_uint n, const cl_device_id* d, const char* o,
                                  void(CL_CALLBACK* cb)(cl_program, void*), void* u) {
  add(CLH_PROGRAM_BUILDS, 1);
  if (fault(FAULT_BUILD)) {
    /* A real compile error (float4 made an unknown type), so the compiler
     * writes a real build log for the error path to report. */
    char opts[512];
    snprintf(opts, sizeof(opts), "%s -D__kernel=injected_fault_unknown_type", o ? o : "");
    cl_int rc = real.clBuildProgram(p, n, d, opts, cb, u);
    return rc == CL_SUCCESS ? CL_BUILD_PROGRAM_FAILURE : rc;
  }
  return real.clBuildProgram(p, n, d, o, cb, u);
}
static cl_int CL_API_CALL w_release_program(cl_program p) {
  cl_int rc = real.clReleaseProgram(p);
  if (rc == CL_SUCCESS) add(CLH_PROGRAM, -1);
  return rc;
}
static cl_kernel CL_API_CALL w_create_kernel(cl_program p, const char* name, cl_int* rc) {
  cl_kernel k = real.clCreateKernel(p, name, rc);
  if (k) add(CLH_KERNEL, 1);
  return k;
}
static cl_int CL_API_CALL w_release_kernel(cl_kernel k) {
  cl_int rc = real.clReleaseKernel(k);
  if (rc == CL_SUCCESS) add(CLH_KERNEL, -1);
  return rc;
}
static cl_int CL_API_CALL w_enqueue_kernel(cl_command_queue q, cl_kernel k, cl_uint dim, const size_t* off,
                                           const size_t* g, const size_t* l, cl_uint nw, const cl_event* w,
                                           cl_event* ev) {
  if (fault(FAULT_ENQUEUE)) return CL_OUT_OF_RESOURCES;
  cl_int rc = real.clEnqueueNDRangeKernel(q, k, dim, off, g, l, nw, w, ev);
  if (rc == CL_SUCCESS && ev) add(CLH_EVENT, 1);
  return rc;
}
static cl_int CL_API_CALL w_write(cl_command_queue q, cl_mem m, cl_bool b, size_t o, size_t n, const void* p,
                                  cl_uint nw, const cl_event* w, cl_event* ev) {
  if (fault(FAULT_TRANSFER)) return CL_OUT_OF_RESOURCES;
  cl_int rc = real.clEnqueueWriteBuffer(q, m, b, o, n, p, nw, w, ev);
  if (rc == CL_SUCCESS && ev) add(CLH_EVENT, 1);
  return rc;
}
static cl_int CL_API_CALL w_read(cl_command_queue q, cl_mem m, cl_bool b, size_t o, size_t n, void* p, cl_uint nw,
                                 const cl_event* w, cl_event* ev) {
  if (fault(FAULT_TRANSFER)) return CL_OUT_OF_RESOURCES;
  cl_int rc = real.clEnqueueReadBuffer(q, m, b, o, n, p, nw, w, ev);
  if (rc == CL_SUCCESS && ev) add(CLH_EVENT, 1);
  return rc;
}
static cl_int CL_API_CALL w_release_event(cl_event e) {
  cl_int rc = real.clReleaseEvent(e);
  if (rc == CL_SUCCESS) add(CLH_EVENT, -1);
  return rc;
}

void cl_hooks_install(ClApi* api) {
  real = *api;
  api->clCreateContext = w_create_context;
  api->clReleaseContext = w_release_context;
  api->clCreateCommandQueue = w_create_queue;
  api->clReleaseCommandQueue = w_release_queue;
  api->clCreateBuffer = w_create_buffer;
  api->clCreateSubBuffer = w_create_sub_buffer;
  api->clReleaseMemObject = w_release_mem;
  api->clCreateProgramWithSource = w_program_source;
  api->clCreateProgramWithBinary = w_program_binary;
  api->clBuildProgram = w_build;
  api->clReleaseProgram = w_release_program;
  api->clCreateKernel = w_create_kernel;
  api->clReleaseKernel = w_release_kernel;
  api->clEnqueueNDRangeKernel = w_enqueue_kernel;
  api->clEnqueueWriteBuffer = w_write;
  api->clEnqueueReadBuffer = w_read;
  api->clReleaseEvent = w_release_event;
  const char* spec = env_text("TFLITE_GPU_FAULT_INJECT");
  if (spec) cl_hooks_set_faults(spec);
}
