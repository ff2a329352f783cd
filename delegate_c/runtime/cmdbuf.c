#include "runtime/cmdbuf.h"

#include <stdint.h>
#include <stdlib.h>

#include "runtime/executor.h"
#include "gpu_delegate.h"
#include "gpu_delegate_introspection.h"

/* Test hooks: command buffers alive, and replays enqueued, since load. */
static long g_live, g_replays;

TFLITE_GPU_EXPORT int tflite_gpu_debug_command_buffers(int64_t* live, int64_t* replays) {
  if (live) *live = __atomic_load_n(&g_live, __ATOMIC_RELAXED);
  if (replays) *replays = __atomic_load_n(&g_replays, __ATOMIC_RELAXED);
  return 0;
}

/* The provisional cl_khr_command_buffer entry points as PoCL 3.x and the
 * Khronos headers of that time declare them (clCommandNDRangeKernelKHR
 * with a properties list, no mutable handles in use). */
typedef cl_command_buffer_khr(CL_API_CALL* CreateFn)(cl_uint, const cl_command_queue*,
                                                     const cl_command_buffer_properties_khr*, cl_int*);
typedef cl_int(CL_API_CALL* FinalizeFn)(cl_command_buffer_khr);
typedef cl_int(CL_API_CALL* ReleaseFn)(cl_command_buffer_khr);
typedef cl_int(CL_API_CALL* EnqueueFn)(cl_uint, cl_command_queue*, cl_command_buffer_khr, cl_uint, const cl_event*,
                                       cl_event*);
typedef cl_int(CL_API_CALL* NDRangeFn)(cl_command_buffer_khr, cl_command_queue,
                                       const cl_ndrange_kernel_command_properties_khr*, cl_kernel, cl_uint,
                                       const size_t*, const size_t*, const size_t*, cl_uint,
                                       const cl_sync_point_khr*, cl_sync_point_khr*, cl_mutable_command_khr*);

typedef struct CmdBufApi {
  CreateFn create;
  FinalizeFn finalize;
  ReleaseFn release;
  EnqueueFn enqueue;
  NDRangeFn ndrange;
} CmdBufApi;


/* The entry points for a platform; 0 when any is missing. */
static int load_api(cl_platform_id p, CmdBufApi* api) {
  if (!cl.clGetExtensionFunctionAddressForPlatform) return 0;
  *(void**)&api->create = cl.clGetExtensionFunctionAddressForPlatform(p, "clCreateCommandBufferKHR");
  *(void**)&api->finalize = cl.clGetExtensionFunctionAddressForPlatform(p, "clFinalizeCommandBufferKHR");
  *(void**)&api->release = cl.clGetExtensionFunctionAddressForPlatform(p, "clReleaseCommandBufferKHR");
  *(void**)&api->enqueue = cl.clGetExtensionFunctionAddressForPlatform(p, "clEnqueueCommandBufferKHR");
  *(void**)&api->ndrange = cl.clGetExtensionFunctionAddressForPlatform(p, "clCommandNDRangeKernelKHR");
  return api->create && api->finalize && api->release && api->enqueue && api->ndrange;
}

/* The queue has every property the extension requires of it. */
static int queue_fits(const GpuDevice* dev) {
  cl_command_queue_properties need = 0, have = 0;
  if (!cl.clGetCommandQueueInfo) return 0; /* optional in cl_api.h */
  if (cl.clGetDeviceInfo(dev->device, CL_DEVICE_COMMAND_BUFFER_REQUIRED_QUEUE_PROPERTIES_KHR, sizeof(need), &need,
                         NULL) != CL_SUCCESS)
    return 0;
  if (cl.clGetCommandQueueInfo(dev->queue, CL_QUEUE_PROPERTIES, sizeof(have), &have, NULL) != CL_SUCCESS) return 0;
  return (need & ~have) == 0;
}

int cmdbuf_record(Executor* ex) {
  GpuDevice* dev = ex->enc.dev;
  if (ex->replay) return 1;
  /* Policy command_buffer, off by rule: on PoCL 3.1 (2 CPU cores) the replay
   * measured no faster than enqueueing each kernel (docs/benchmarks/small-models.md):
   * its clEnqueueCommandBufferKHR re-creates every recorded command per replay. */
  if (!dev->caps.command_buffer || ex->events || ex->enc.num_dispatches == 0 ||
      !ex->enc.target.pol.v[POL_COMMAND_BUFFER])
    return 0;
  CmdBufApi api;
  if (!load_api(dev->platform, &api) || !queue_fits(dev)) return 0;
  cl_int rc;
  cl_command_buffer_khr cb = api.create(1, &dev->queue, NULL, &rc);
  if (!cb || rc != CL_SUCCESS) return 0;
  /* The queue is in order, and so is a command buffer recorded on it
   * without sync points: each kernel sees its producers' results. */
  for (int i = 0; i < ex->enc.num_dispatches && rc == CL_SUCCESS; ++i) {
    const Dispatch* d = &ex->enc.dispatches[i];
    rc = api.ndrange(cb, NULL, NULL, d->kernel, d->dims, NULL, d->global, d->local, 0, NULL, NULL, NULL);
  }
  if (rc == CL_SUCCESS) rc = api.finalize(cb);
  if (rc != CL_SUCCESS) {
    api.release(cb);
    return 0;
  }
  ex->replay = cb;
  __atomic_add_fetch(&g_live, 1, __ATOMIC_RELAXED);
  ex->replay_enqueue = (void*)api.enqueue;
  ex->replay_release = (void*)api.release;
  return 1;
}

cl_int cmdbuf_enqueue(Executor* ex) {
  EnqueueFn enqueue = (EnqueueFn)ex->replay_enqueue;
  cl_int rc = enqueue(1, &ex->enc.dev->queue, ex->replay, 0, NULL, NULL);
  if (rc == CL_SUCCESS) __atomic_add_fetch(&g_replays, 1, __ATOMIC_RELAXED);
  return rc;
}

void cmdbuf_release(Executor* ex) {
  if (!ex->replay) return;
  ((ReleaseFn)ex->replay_release)(ex->replay);
  ex->replay = NULL;
  __atomic_sub_fetch(&g_live, 1, __ATOMIC_RELAXED);
}
