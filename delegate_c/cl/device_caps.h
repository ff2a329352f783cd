/* What one OpenCL device can do, read once when the device is opened. The
 * kernel selectors (select_*.c, selectors.h) decide from this struct
 * alone, so a new device class means new rules there, never new queries
 * scattered around. */
#ifndef TFLITE_GPU_DEVICE_CAPS_H
#define TFLITE_GPU_DEVICE_CAPS_H

#include <stddef.h>

#include "cl/cl_api.h"

typedef enum GpuVendor {
  GD_VENDOR_OTHER = 0,
  GD_VENDOR_NVIDIA,
  GD_VENDOR_AMD,
  GD_VENDOR_INTEL,
  GD_VENDOR_ARM,      /* Mali */
  GD_VENDOR_QUALCOMM, /* Adreno */
  GD_VENDOR_APPLE,
  GD_VENDOR_POCL,     /* PoCL's CPU device (the platform, whatever the CPU's maker) */
  GD_VENDOR_OCLGRIND, /* the simulator: reports itself as a GPU */
} GpuVendor;

typedef struct GpuCaps {
  GpuVendor vendor_id;
  char vendor[128];        /* CL_DEVICE_VENDOR */
  char name[256];
  char platform[256];
  char version[256];       /* CL_DEVICE_VERSION */
  char driver[256];        /* CL_DRIVER_VERSION */
  char opencl_c[64];       /* CL_DEVICE_OPENCL_C_VERSION, e.g. "OpenCL C 1.2" */
  int cl_c_minor;          /* the OpenCL C 1.x the kernels are built as: 1.2, or lower on an older device */
  int is_gpu, is_cpu;
  cl_uint compute_units;
  size_t max_work_group;   /* CL_DEVICE_MAX_WORK_GROUP_SIZE */
  size_t max_item[3];      /* CL_DEVICE_MAX_WORK_ITEM_SIZES */
  cl_ulong local_mem;      /* bytes of __local memory per work-group */
  int local_mem_dedicated; /* CL_LOCAL: on-chip; else emulated in global memory (CPU devices) */
  cl_ulong global_mem;
  cl_ulong max_alloc;
  cl_uint mem_base_align;  /* bytes */
  cl_uint vec_float;       /* CL_DEVICE_PREFERRED_VECTOR_WIDTH_FLOAT */
  cl_uint vec_half;        /* CL_DEVICE_PREFERRED_VECTOR_WIDTH_HALF (0 without fp16) */
  int fp16;                /* cl_khr_fp16: half arithmetic */
  int subgroups;           /* cl_khr_subgroups or cl_intel_subgroups */
  int images;              /* CL_DEVICE_IMAGE_SUPPORT */
  int command_buffer;      /* cl_khr_command_buffer */
  char extensions[4096];   /* CL_DEVICE_EXTENSIONS, for listings */
} GpuCaps;

/* Fills caps from the device (never fails: unknown fields stay 0). */
void gpu_caps_query(cl_platform_id platform, cl_device_id device, GpuCaps* caps);

/* "key\tvalue" lines, one per field, for `tflite-gpu devices`. Returns the
 * length it needed (snprintf-style). */
size_t gpu_caps_format(const GpuCaps* caps, char* buf, size_t size);

const char* gpu_vendor_name(GpuVendor v);

/* Whether hay contains needle, ignoring ASCII case (device names). */
int gpu_contains_nocase(const char* hay, const char* needle);

#endif
