#include "cl/cl_api.h"

#include "cl/cl_hooks.h"
#include "util/env_hooks.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

ClApi cl;

static pthread_mutex_t g_load_mutex = PTHREAD_MUTEX_INITIALIZER;
static int g_loaded;      /* 1 once every symbol resolved */
static void* g_handle;    /* kept open for the life of the process */

static int resolve_all(void* handle, char* err, size_t errlen) {
#define TFLITE_GPU_CL_RESOLVE(name, ret, params)                                          \
  *(void**)(&cl.name) = dlsym(handle, #name);                                            \
  if (!cl.name) {                                                                         \
    snprintf(err, errlen, "OpenCL library lacks the symbol %s (needs OpenCL 1.2)", #name); \
    return -1;                                                                            \
  }
  TFLITE_GPU_CL_FUNCTIONS(TFLITE_GPU_CL_RESOLVE)
#undef TFLITE_GPU_CL_RESOLVE
#define TFLITE_GPU_CL_RESOLVE_OPTIONAL(name, ret, params) *(void**)(&cl.name) = dlsym(handle, #name);
  TFLITE_GPU_CL_OPTIONAL_FUNCTIONS(TFLITE_GPU_CL_RESOLVE_OPTIONAL)
#undef TFLITE_GPU_CL_RESOLVE_OPTIONAL
  return 0;
}

int cl_api_load(char* err, size_t errlen) {
  pthread_mutex_lock(&g_load_mutex);
  if (g_loaded) {
    pthread_mutex_unlock(&g_load_mutex);
    return 0;
  }
  const char* env = env_text("TFLITE_GPU_OPENCL_LIBRARY");
  if (env) {
    /* An explicit choice is the only candidate: falling back to the system
     * loader would silently run something other than what was asked for. */
    if (!g_handle) g_handle = dlopen(env, RTLD_NOW | RTLD_LOCAL);
    if (!g_handle) {
      const char* why = dlerror();
      snprintf(err, errlen, "TFLITE_GPU_OPENCL_LIBRARY=%.300s could not be loaded: %.300s (unset it to use the "
               "system's libOpenCL.so.1)", env, why ? why : "dlopen failed");
      pthread_mutex_unlock(&g_load_mutex);
      return -1;
    }
  }
  const char* candidates[2] = {"libOpenCL.so.1", "libOpenCL.so"};
  char tried[512] = "";
  size_t used = 0;
  for (int i = 0; i < 2 && !g_handle; ++i) {
    g_handle = dlopen(candidates[i], RTLD_NOW | RTLD_LOCAL);
    if (!g_handle && used < sizeof(tried)) {
      used += (size_t)snprintf(tried + used, sizeof(tried) - used, "%s%s", used ? ", " : "", candidates[i]);
    }
  }
  if (!g_handle) {
    snprintf(err, errlen,
             "no OpenCL library could be loaded (tried %s); install an OpenCL ICD loader and driver "
             "(on Debian: ocl-icd-libopencl1 and pocl-opencl-icd) or set TFLITE_GPU_OPENCL_LIBRARY",
             tried);
    pthread_mutex_unlock(&g_load_mutex);
    return -1;
  }
  int rc = resolve_all(g_handle, err, errlen);
  if (rc != 0 && env && *env) {
    /* Name the library the user chose in the reason. */
    char why[256];
    snprintf(why, sizeof(why), "%s", err);
    snprintf(err, errlen, "TFLITE_GPU_OPENCL_LIBRARY=%.300s: %s", env, why);
  }
  if (rc != 0) {
    dlclose(g_handle); /* not an OpenCL loader: the next call starts afresh */
    g_handle = NULL;
  }
  if (rc == 0) {
    cl_hooks_install(&cl); /* counts live objects; injects faults in test builds */
    g_loaded = 1;
  }
  pthread_mutex_unlock(&g_load_mutex);
  return rc;
}

const char* cl_error_name(cl_int code) {
  switch (code) {
#define E(x) \
  case x:    \
    return #x;
    E(CL_SUCCESS) E(CL_DEVICE_NOT_FOUND) E(CL_DEVICE_NOT_AVAILABLE) E(CL_COMPILER_NOT_AVAILABLE)
    E(CL_MEM_OBJECT_ALLOCATION_FAILURE) E(CL_OUT_OF_RESOURCES) E(CL_OUT_OF_HOST_MEMORY)
    E(CL_PROFILING_INFO_NOT_AVAILABLE) E(CL_MEM_COPY_OVERLAP) E(CL_BUILD_PROGRAM_FAILURE)
    E(CL_MISALIGNED_SUB_BUFFER_OFFSET) E(CL_INVALID_VALUE) E(CL_INVALID_DEVICE_TYPE)
    E(CL_INVALID_PLATFORM) E(CL_INVALID_DEVICE) E(CL_INVALID_CONTEXT) E(CL_INVALID_QUEUE_PROPERTIES)
    E(CL_INVALID_COMMAND_QUEUE) E(CL_INVALID_HOST_PTR) E(CL_INVALID_MEM_OBJECT) E(CL_INVALID_BINARY)
    E(CL_INVALID_BUILD_OPTIONS) E(CL_INVALID_PROGRAM) E(CL_INVALID_PROGRAM_EXECUTABLE)
    E(CL_INVALID_KERNEL_NAME) E(CL_INVALID_KERNEL_DEFINITION) E(CL_INVALID_KERNEL) E(CL_INVALID_ARG_INDEX)
    E(CL_INVALID_ARG_VALUE) E(CL_INVALID_ARG_SIZE) E(CL_INVALID_KERNEL_ARGS) E(CL_INVALID_WORK_DIMENSION)
    E(CL_INVALID_WORK_GROUP_SIZE) E(CL_INVALID_WORK_ITEM_SIZE) E(CL_INVALID_GLOBAL_OFFSET)
    E(CL_INVALID_EVENT_WAIT_LIST) E(CL_INVALID_EVENT) E(CL_INVALID_OPERATION) E(CL_INVALID_BUFFER_SIZE)
    E(CL_INVALID_GLOBAL_WORK_SIZE)
#undef E
    case -1001:
      return "CL_PLATFORM_NOT_FOUND_KHR (the ICD loader found no OpenCL platform)";
    default:
      return "CL_UNKNOWN_ERROR";
  }
}
