/* The OpenCL entry points we use, loaded at run time with dlopen so the
 * library loads (and fails with a clear message) on machines without an
 * OpenCL loader, and never links libOpenCL. Call them as cl.Name(...). */
#ifndef TFLITE_GPU_CL_API_H
#define TFLITE_GPU_CL_API_H

#define CL_TARGET_OPENCL_VERSION 120
#define CL_USE_DEPRECATED_OPENCL_1_2_APIS
#include <CL/cl.h>
#include <CL/cl_ext.h>

/* cl_khr_command_buffer (cmdbuf.c) for OpenCL headers older than it: the
 * provisional extension's types and the one device query used. */
#ifndef CL_DEVICE_COMMAND_BUFFER_REQUIRED_QUEUE_PROPERTIES_KHR
typedef struct _cl_command_buffer_khr* cl_command_buffer_khr;
typedef cl_uint cl_sync_point_khr;
typedef cl_bitfield cl_command_buffer_properties_khr;
typedef cl_bitfield cl_ndrange_kernel_command_properties_khr;
typedef struct _cl_mutable_command_khr* cl_mutable_command_khr;
#define CL_DEVICE_COMMAND_BUFFER_REQUIRED_QUEUE_PROPERTIES_KHR 0x12AA
#endif
#include <stddef.h>

/* X(name, return type, parameter list) */
#define TFLITE_GPU_CL_FUNCTIONS(X)                                                                      \
  X(clGetPlatformIDs, cl_int, (cl_uint, cl_platform_id*, cl_uint*))                                    \
  X(clGetPlatformInfo, cl_int, (cl_platform_id, cl_platform_info, size_t, void*, size_t*))             \
  X(clGetDeviceIDs, cl_int, (cl_platform_id, cl_device_type, cl_uint, cl_device_id*, cl_uint*))        \
  X(clGetDeviceInfo, cl_int, (cl_device_id, cl_device_info, size_t, void*, size_t*))                   \
  X(clCreateContext, cl_context,                                                                       \
    (const cl_context_properties*, cl_uint, const cl_device_id*,                                       \
     void(CL_CALLBACK*)(const char*, const void*, size_t, void*), void*, cl_int*))                     \
  X(clReleaseContext, cl_int, (cl_context))                                                            \
  X(clCreateCommandQueue, cl_command_queue, (cl_context, cl_device_id, cl_command_queue_properties, cl_int*)) \
  X(clReleaseCommandQueue, cl_int, (cl_command_queue))                                                 \
  X(clCreateBuffer, cl_mem, (cl_context, cl_mem_flags, size_t, void*, cl_int*))                        \
  X(clCreateSubBuffer, cl_mem, (cl_mem, cl_mem_flags, cl_buffer_create_type, const void*, cl_int*))    \
  X(clReleaseMemObject, cl_int, (cl_mem))                                                              \
  X(clCreateProgramWithSource, cl_program, (cl_context, cl_uint, const char**, const size_t*, cl_int*)) \
  X(clCreateProgramWithBinary, cl_program,                                                             \
    (cl_context, cl_uint, const cl_device_id*, const size_t*, const unsigned char**, cl_int*, cl_int*)) \
  X(clBuildProgram, cl_int,                                                                            \
    (cl_program, cl_uint, const cl_device_id*, const char*, void(CL_CALLBACK*)(cl_program, void*), void*)) \
  X(clGetProgramBuildInfo, cl_int, (cl_program, cl_device_id, cl_program_build_info, size_t, void*, size_t*)) \
  X(clGetProgramInfo, cl_int, (cl_program, cl_program_info, size_t, void*, size_t*))                   \
  X(clReleaseProgram, cl_int, (cl_program))                                                            \
  X(clCreateKernel, cl_kernel, (cl_program, const char*, cl_int*))                                     \
  X(clReleaseKernel, cl_int, (cl_kernel))                                                              \
  X(clGetKernelInfo, cl_int, (cl_kernel, cl_kernel_info, size_t, void*, size_t*))                      \
  X(clSetKernelArg, cl_int, (cl_kernel, cl_uint, size_t, const void*))                                 \
  X(clGetKernelWorkGroupInfo, cl_int, (cl_kernel, cl_device_id, cl_kernel_work_group_info, size_t, void*, size_t*)) \
  X(clEnqueueNDRangeKernel, cl_int,                                                                    \
    (cl_command_queue, cl_kernel, cl_uint, const size_t*, const size_t*, const size_t*, cl_uint,       \
     const cl_event*, cl_event*))                                                                      \
  X(clEnqueueWriteBuffer, cl_int,                                                                      \
    (cl_command_queue, cl_mem, cl_bool, size_t, size_t, const void*, cl_uint, const cl_event*, cl_event*)) \
  X(clEnqueueReadBuffer, cl_int,                                                                       \
    (cl_command_queue, cl_mem, cl_bool, size_t, size_t, void*, cl_uint, const cl_event*, cl_event*))   \
  X(clEnqueueMapBuffer, void*,                                                                        \
    (cl_command_queue, cl_mem, cl_bool, cl_map_flags, size_t, size_t, cl_uint, const cl_event*, cl_event*, cl_int*)) \
  X(clEnqueueUnmapMemObject, cl_int, (cl_command_queue, cl_mem, void*, cl_uint, const cl_event*, cl_event*)) \
  X(clFinish, cl_int, (cl_command_queue))                                                              \
  X(clFlush, cl_int, (cl_command_queue))                                                               \
  X(clWaitForEvents, cl_int, (cl_uint, const cl_event*))                                               \
  X(clReleaseEvent, cl_int, (cl_event))                                                                \
  X(clGetEventProfilingInfo, cl_int, (cl_event, cl_profiling_info, size_t, void*, size_t*))

/* Optional entry points: NULL when the library lacks them (the command
 * buffer replay, cmdbuf.c, is then off). */
#define TFLITE_GPU_CL_OPTIONAL_FUNCTIONS(X)                                                             \
  X(clGetExtensionFunctionAddressForPlatform, void*, (cl_platform_id, const char*))                    \
  X(clGetCommandQueueInfo, cl_int, (cl_command_queue, cl_command_queue_info, size_t, void*, size_t*))

typedef struct ClApi {
#define TFLITE_GPU_CL_FIELD(name, ret, params) ret(CL_API_CALL* name) params;
  TFLITE_GPU_CL_FUNCTIONS(TFLITE_GPU_CL_FIELD)
  TFLITE_GPU_CL_OPTIONAL_FUNCTIONS(TFLITE_GPU_CL_FIELD)
#undef TFLITE_GPU_CL_FIELD
} ClApi;

/* Filled by cl_api_load(); valid for the life of the process once loaded. */
extern ClApi cl;

/* Loads the OpenCL ICD loader once per process (thread-safe): only
 * $TFLITE_GPU_OPENCL_LIBRARY when it is set (a failure names it), else
 * libOpenCL.so.1, then libOpenCL.so. Returns 0, or -1 with a reason in err. */
int cl_api_load(char* err, size_t errlen);

/* "CL_OUT_OF_RESOURCES" etc. for an error code. */
const char* cl_error_name(cl_int code);

#endif
