/* The VM's profile (TFLITE_GPU_PROFILE=1; vm.h): stepped, every launch's
 * time goes to the row of the kernel whose body its phase runs, as in
 * kernels mode; persistent, one launch runs every phase, so on NVIDIA the
 * phases stamp their start and end from the GPU's timer (vm/vm_run.cl) and
 * each phase's time goes to its kernel's row; where there is no timer the
 * launch is one row, "vm_run". */
#include <stdlib.h>

#include "util/env_hooks.h"
#include "util/log.h"
#include "config/options.h"
#include "vm/vm.h"

int vm_profile_timing(const GpuDevice* dev, int mode) {
  if (!dev->profiling || mode != GD_EXEC_PERSISTENT) return 0;
  if (dev->caps.vendor_id == GD_VENDOR_NVIDIA) return 1;
  /* Test hook: a clock in which every phase lasts 1000 ns, to check the bookkeeping here. */
  return env_flag("TFLITE_GPU_TEST_VM_CLOCK", 0) ? 2 : 0;
}

int vm_profile_init(Executor* ex) {
  VmState* vm = ex->vm;
  GpuDevice* dev = ex->enc.dev;
  if (!dev->profiling) return 0;
  /* At most one launch per dispatch (stepped). */
  vm->max_events = ex->enc.num_dispatches + 1;
  vm->events = calloc((size_t)vm->max_events, sizeof(cl_event));
  vm->event_rows = calloc((size_t)vm->max_events, sizeof(char*));
  if (!vm->events || !vm->event_rows) return ex_fail(&ex->enc, "out of memory");
  if (vm->timing) {
    cl_int rc;
    vm->stamps = cl.clCreateBuffer(dev->context, CL_MEM_READ_WRITE, 2 * (size_t)vm->num_phases * sizeof(cl_ulong),
                                   NULL, &rc);
    if (!vm->stamps) return ex_fail(&ex->enc, "creating the VM's phase stamps: %s", cl_error_name(rc));
  }
  return 0;
}

cl_event* vm_profile_event(VmState* vm, const char* row) {
  if (!vm->events || vm->num_events == vm->max_events) return NULL;
  vm->event_rows[vm->num_events] = row;
  return &vm->events[vm->num_events++];
}

void vm_profile_drop(VmState* vm) {
  for (int i = 0; vm->events && i < vm->num_events; ++i)
    if (vm->events[i]) cl.clReleaseEvent(vm->events[i]);
  vm->num_events = 0;
}

/* Each phase's stamps of the last (persistent) invoke into its kernel's
 * row, and into the phase's own time (VmPhase.ns; delegate_phase_times). */
static void add_phase_stamps(Executor* ex) {
  VmState* vm = ex->vm;
  Encoder* e = &ex->enc;
  cl_ulong* t = malloc(2 * (size_t)vm->num_phases * sizeof(cl_ulong));
  if (!t || cl.clEnqueueReadBuffer(e->dev->queue, vm->stamps, CL_TRUE, 0, 2 * (size_t)vm->num_phases * sizeof(cl_ulong),
                                   t, 0, NULL, NULL) != CL_SUCCESS) {
    gd_log(e->dev->log_level, GD_LOG_WARNING, "profile: could not read the VM's phase stamps");
    free(t);
    return;
  }
  for (int i = 0; i < e->num_dispatches; ++i) {
    int p = vm->phase_of[i];
    if (p < 0) continue;
    double ns = t[2 * p + 1] > t[2 * p] ? (double)(t[2 * p + 1] - t[2 * p]) : 0.0;
    gpu_device_profile_add(e->dev, e->dispatches[i].name, ns);
    vm->phase[p].ns += ns;
  }
  vm->timed++;
  free(t);
}

void vm_profile_collect(Executor* ex) {
  VmState* vm = ex->vm;
  if (!vm->events) return;
  cl_ulong prev_end = 0;
  for (int i = 0; i < vm->num_events; ++i) {
    gpu_device_profile_event(ex->enc.dev, vm->events[i], vm->event_rows[i], &prev_end);
    vm->events[i] = NULL;
  }
  vm->num_events = 0;
  if (vm->timing && vm->last_persistent) add_phase_stamps(ex);
}
