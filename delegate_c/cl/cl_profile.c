/* Profiling (TFLITE_GPU_PROFILE=1, cl_device.h): each kernel's event times
 * summed per row, and where a launch spent time besides its kernel. */
#include "cl/cl_device.h"

#include <string.h>

void gpu_device_profile_add(GpuDevice* dev, const char* kernel, double ns) {
  int i = 0;
  while (i < dev->num_profile && strcmp(dev->profile[i].kernel, kernel) != 0) ++i;
  if (i == dev->num_profile) {
    if (i == GD_MAX_PROFILE) return;
    dev->profile[dev->num_profile++].kernel = kernel;
  }
  dev->profile[i].calls++;
  dev->profile[i].total_ns += ns;
}

void gpu_device_profile_intervals(GpuDevice* dev, double queued_to_submit_ns, double submit_to_start_ns,
                                  double gap_ns) {
  dev->intervals.launches++;
  dev->intervals.queued_to_submit_ns += queued_to_submit_ns;
  dev->intervals.submit_to_start_ns += submit_to_start_ns;
  if (gap_ns >= 0) {
    dev->intervals.gaps++;
    dev->intervals.gap_ns += gap_ns;
  }
}

void gpu_device_profile_event(GpuDevice* dev, cl_event event, const char* row, cl_ulong* prev_end) {
  static const cl_profiling_info kWhen[4] = {CL_PROFILING_COMMAND_QUEUED, CL_PROFILING_COMMAND_SUBMIT,
                                             CL_PROFILING_COMMAND_START, CL_PROFILING_COMMAND_END};
  if (!event) return;
  cl_ulong t[4] = {0, 0, 0, 0};
  int ok = 1;
  for (int w = 0; w < 4 && ok; ++w)
    ok = cl.clGetEventProfilingInfo(event, kWhen[w], sizeof(t[w]), &t[w], NULL) == CL_SUCCESS;
  if (ok) {
    if (row) gpu_device_profile_add(dev, row, (double)(t[3] - t[2]));
    /* Timestamps of one device clock, but drivers may round them: no negative intervals. */
    gpu_device_profile_intervals(dev, t[1] > t[0] ? (double)(t[1] - t[0]) : 0.0, t[2] > t[1] ? (double)(t[2] - t[1]) : 0.0,
                                 !*prev_end ? -1.0 : t[2] > *prev_end ? (double)(t[2] - *prev_end) : 0.0);
    *prev_end = t[3];
  }
  cl.clReleaseEvent(event);
}
