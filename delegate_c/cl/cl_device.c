#include "cl/cl_device.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/env_hooks.h"

#define GD_MAX_DEVICES 64

typedef struct DeviceEntry {
  cl_platform_id platform;
  cl_device_id device;
} DeviceEntry;

/* Every device of every platform, in platform order. */
static int enumerate(DeviceEntry* out, int max, char* err, size_t errlen) {
  if (cl_api_load(err, errlen)) return -1;
  cl_uint np = 0;
  cl_int rc = cl.clGetPlatformIDs(0, NULL, &np);
  if (rc != CL_SUCCESS || np == 0) {
    snprintf(err, errlen, "no OpenCL platform found (%s); install an OpenCL driver such as pocl-opencl-icd",
             rc == CL_SUCCESS ? "0 platforms" : cl_error_name(rc));
    return -1;
  }
  cl_platform_id plats[16];
  if (np > 16) np = 16;
  cl.clGetPlatformIDs(np, plats, NULL);
  int n = 0;
  for (cl_uint p = 0; p < np && n < max; ++p) {
    cl_uint nd = 0;
    if (cl.clGetDeviceIDs(plats[p], CL_DEVICE_TYPE_ALL, 0, NULL, &nd) != CL_SUCCESS || nd == 0) continue;
    cl_device_id devs[GD_MAX_DEVICES];
    if (nd > GD_MAX_DEVICES) nd = GD_MAX_DEVICES;
    cl.clGetDeviceIDs(plats[p], CL_DEVICE_TYPE_ALL, nd, devs, NULL);
    for (cl_uint d = 0; d < nd && n < max; ++d) out[n++] = (DeviceEntry){plats[p], devs[d]};
  }
  if (n == 0) {
    snprintf(err, errlen, "OpenCL platforms exist but expose no device");
    return -1;
  }
  return n;
}

static void info_string(cl_device_id d, cl_device_info what, char* buf, size_t size) {
  buf[0] = '\0';
  if (cl.clGetDeviceInfo(d, what, size, buf, NULL) != CL_SUCCESS) buf[0] = '\0';
  buf[size - 1] = '\0';
}

static void platform_string(cl_platform_id p, cl_platform_info what, char* buf, size_t size) {
  buf[0] = '\0';
  if (cl.clGetPlatformInfo(p, what, size, buf, NULL) != CL_SUCCESS) buf[0] = '\0';
  buf[size - 1] = '\0';
}

static int pick(const DeviceEntry* list, int n, const char* selector, char* err, size_t errlen) {
  if (!selector) {
    for (int i = 0; i < n; ++i) {
      cl_device_type t = 0;
      cl.clGetDeviceInfo(list[i].device, CL_DEVICE_TYPE, sizeof(t), &t, NULL);
      if (t & CL_DEVICE_TYPE_GPU) return i;
    }
    return 0; /* no GPU: the first device of any type (PoCL's CPU device) */
  }
  char* end = NULL;
  long idx = strtol(selector, &end, 10);
  if (*selector && *end == '\0') {
    if (idx >= 0 && idx < n) return (int)idx;
    snprintf(err, errlen, "option device=%s is out of range; %d OpenCL device(s) exist (0-%d)", selector, n, n - 1);
    return -1;
  }
  for (int i = 0; i < n; ++i) {
    char full[600], pname[256], dname[256];
    platform_string(list[i].platform, CL_PLATFORM_NAME, pname, sizeof(pname));
    info_string(list[i].device, CL_DEVICE_NAME, dname, sizeof(dname));
    snprintf(full, sizeof(full), "%s %s", pname, dname);
    if (gpu_contains_nocase(full, selector)) return i;
  }
  snprintf(err, errlen, "option device=%s matches no OpenCL device (see python -m tflite_gpu devices)", selector);
  return -1;
}

/* -cl-std=CL1.x as the device's OpenCL C version allows (a 1.1 device is
 * not asked for 1.2; none for 1.0). -DGD_POCL=1 on PoCL: its compiler is
 * clang, and common.cl then uses clang's attributes and pragmas there
 * (outlined kernel bodies, forced inlining), which other compilers may
 * reject or warn about. -DGD_NVIDIA=1 on NVIDIA's driver: the grid
 * barrier's device-wide fence and timer (grid_sync.cl), the rare paths
 * out of line (common.cl GD_NOINLINE) and aligned float4 accesses
 * (LOAD4). The device's choices on NVIDIA (gpu_device_set_choices, from
 * the policy): inline_rare adds -DGD_INLINE_RARE=1 (the rare paths
 * inlined), vload4 -DGD_VLOAD=1 (vload4). TFLITE_GPU_TEST_CHECK_ALIGN=1, any device:
 * -DGD_CHECK_ALIGN=1 (aligned accesses that report a misaligned address).
 * TFLITE_GPU_TEST_OPT_DISABLE=1, any device: -cl-opt-disable (the test
 * suite's many small graphs beside the portability matrix, which builds
 * as users do: PoCL compiled the GPU set's work-group kernels 4x faster). */
static void compose_build_options(GpuDevice* dev) {
  char std[32] = "";
  if (dev->caps.cl_c_minor > 0) snprintf(std, sizeof(std), "-cl-std=CL1.%d", dev->caps.cl_c_minor);
  int nvidia = dev->caps.vendor_id == GD_VENDOR_NVIDIA;
  snprintf(dev->build_options, sizeof(dev->build_options), "%s%s%s%s%s%s%s%s", std,
           dev->caps.vendor_id == GD_VENDOR_POCL ? " -DGD_POCL=1" : "", nvidia ? " -DGD_NVIDIA=1" : "",
           nvidia && dev->inline_rare ? " -DGD_INLINE_RARE=1" : "", nvidia && dev->vload4 ? " -DGD_VLOAD=1" : "",
           env_flag("TFLITE_GPU_TEST_CHECK_ALIGN", 0) ? " -DGD_CHECK_ALIGN=1" : "", dev->fp16 ? " -DFP16_STORAGE=1" : "",
           env_flag("TFLITE_GPU_TEST_OPT_DISABLE", 0) ? " -cl-opt-disable" : "");
}

void gpu_device_set_choices(GpuDevice* dev, int inline_rare, int vload4, int build_threads) {
  dev->inline_rare = inline_rare;
  dev->vload4 = vload4;
  dev->build_threads = build_threads;
  compose_build_options(dev);
}

int gpu_device_create(const char* selector, int fp16, GpuDevice** out, char* err, size_t errlen) {
  DeviceEntry list[GD_MAX_DEVICES];
  int n = enumerate(list, GD_MAX_DEVICES, err, errlen);
  if (n < 0) return -1;
  int i = pick(list, n, selector, err, errlen);
  if (i < 0) return -1;
  GpuDevice* dev = calloc(1, sizeof(*dev));
  if (!dev) {
    snprintf(err, errlen, "out of memory");
    return -1;
  }
  dev->refcount = 1;
  pthread_mutex_init(&dev->mutex, NULL);
  pthread_cond_init(&dev->cache.done, NULL);
  dev->platform = list[i].platform;
  dev->device = list[i].device;
  dev->fp16 = fp16;
  gpu_caps_query(dev->platform, dev->device, &dev->caps);
  dev->build_threads = 1;
  compose_build_options(dev);

  cl_int rc;
  cl_context_properties props[] = {CL_CONTEXT_PLATFORM, (cl_context_properties)dev->platform, 0};
  dev->context = cl.clCreateContext(props, 1, &dev->device, NULL, NULL, &rc);
  if (!dev->context) {
    snprintf(err, errlen, "clCreateContext failed on %s: %s", dev->caps.name, cl_error_name(rc));
    gpu_device_release(dev);
    return -1;
  }
  dev->profiling = env_flag("TFLITE_GPU_PROFILE", 0);
  cl_command_queue_properties qp = dev->profiling ? CL_QUEUE_PROFILING_ENABLE : 0;
  dev->queue = cl.clCreateCommandQueue(dev->context, dev->device, qp, &rc);
  if (!dev->queue) {
    snprintf(err, errlen, "clCreateCommandQueue failed on %s: %s", dev->caps.name, cl_error_name(rc));
    gpu_device_release(dev);
    return -1;
  }
  *out = dev;
  return 0;
}

void gpu_device_retain(GpuDevice* dev) { __atomic_add_fetch(&dev->refcount, 1, __ATOMIC_ACQ_REL); }

void gpu_device_wait_cache_writes(GpuDevice* dev) {
  while (dev->cache.pending) pthread_cond_wait(&dev->cache.done, &dev->mutex);
}

void gpu_device_runs_reset(GpuDevice* dev) {
  for (int i = 0; i < GD_MAX_RUNS; ++i) free(dev->runs[i].phase_ns);
  memset(dev->runs, 0, sizeof(dev->runs));
}

void gpu_device_release(GpuDevice* dev) {
  if (!dev || __atomic_sub_fetch(&dev->refcount, 1, __ATOMIC_ACQ_REL) != 0) return;
  for (int i = 0; i < dev->num_programs; ++i) cl.clReleaseProgram(dev->programs[i].program);
  gpu_device_runs_reset(dev);
  if (dev->queue) cl.clReleaseCommandQueue(dev->queue);
  if (dev->context) cl.clReleaseContext(dev->context);
  pthread_cond_destroy(&dev->cache.done);
  pthread_mutex_destroy(&dev->mutex);
  free(dev);
}

int gpu_device_list(char* buf, size_t size, char* err, size_t errlen) {
  DeviceEntry list[GD_MAX_DEVICES];
  int n = enumerate(list, GD_MAX_DEVICES, err, errlen);
  if (n < 0) return -1;
  size_t used = 0;
  if (size) buf[0] = '\0';
  for (int i = 0; i < n; ++i) {
    char pname[256], dname[256], ver[256], drv[256], ext[4096];
    platform_string(list[i].platform, CL_PLATFORM_NAME, pname, sizeof(pname));
    info_string(list[i].device, CL_DEVICE_NAME, dname, sizeof(dname));
    info_string(list[i].device, CL_DEVICE_VERSION, ver, sizeof(ver));
    info_string(list[i].device, CL_DRIVER_VERSION, drv, sizeof(drv));
    info_string(list[i].device, CL_DEVICE_EXTENSIONS, ext, sizeof(ext));
    cl_device_type t = 0;
    cl_ulong mem = 0;
    cl.clGetDeviceInfo(list[i].device, CL_DEVICE_TYPE, sizeof(t), &t, NULL);
    cl.clGetDeviceInfo(list[i].device, CL_DEVICE_GLOBAL_MEM_SIZE, sizeof(mem), &mem, NULL);
    const char* type = (t & CL_DEVICE_TYPE_GPU) ? "GPU" : (t & CL_DEVICE_TYPE_CPU) ? "CPU" : "OTHER";
    int fp16 = strstr(ext, "cl_khr_fp16") != NULL;
    int w = snprintf(used < size ? buf + used : NULL, used < size ? size - used : 0, "%d\t%s\t%s\t%s\t%s\t%s\t%llu\t%d\n",
                     i, pname, dname, type, ver, drv, (unsigned long long)mem, fp16);
    if (w > 0) used += (size_t)w;
  }
  return (int)used;
}

int gpu_device_query_caps(int index, GpuCaps* caps, char* err, size_t errlen) {
  DeviceEntry list[GD_MAX_DEVICES];
  int n = enumerate(list, GD_MAX_DEVICES, err, errlen);
  if (n < 0) return -1;
  if (index < 0 || index >= n) {
    snprintf(err, errlen, "device %d is out of range; %d OpenCL device(s) exist", index, n);
    return -1;
  }
  gpu_caps_query(list[index].platform, list[index].device, caps);
  return 0;
}
