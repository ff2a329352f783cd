/* The VM's invoke half (vm.h): the launches of one invoke, the check of a
 * persistent launch's barrier state after the wait, the fallback to
 * stepped, and the once-per-device self-test before the first persistent
 * launch. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/capture.h"
#include "util/env_hooks.h"
#include "util/log.h"
#include "config/options.h"
#include "vm/vm.h"

/* The process's persistent-grid lock (vm.c) and the self-test's results. */
static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t g_selftests_lock = PTHREAD_MUTEX_INITIALIZER;
enum { MAX_SELFTESTS = 16 };
static struct {
  char key[600];
  int passed;
  char why[160];
} g_selftests[MAX_SELFTESTS];
static int g_num_selftests;

static void stay_stepped(Executor* ex, const char* why) {
  VmState* vm = ex->vm;
  vm->stepped_only = 1;
  snprintf(vm->fallback, sizeof(vm->fallback), "%s", why);
  if (!vm->warned) {
    vm->warned = 1;
    gd_log(ex->enc.dev->log_level, GD_LOG_WARNING, "execution=persistent: %s; this partition runs stepped from now on", why);
  }
}

/* The litmus test of grid_sync.cl on the grid a persistent launch uses:
 * groups write, pass the barrier, read what others wrote (lines they read
 * before); 0 stale values and every barrier passed, or why not. */
static int run_selftest(Executor* ex, char* why, size_t whylen) {
  GpuDevice* dev = ex->enc.dev;
  VmState* vm = ex->vm;
  if (env_flag("TFLITE_GPU_TEST_VM_SELFTEST_FAIL", 0)) return snprintf(why, whylen, "the self-test failed (test hook)"), 0;
  char err[512];
  cl_kernel k = gpu_device_kernel(dev, "vm_program.cl", vm->defines, "gs_litmus", err, sizeof(err));
  if (!k) return snprintf(why, whylen, "the self-test did not build: %.100s", err), 0;
  const int phases = 16, words = 256;
  int zeros[GS_WORDS] = {0, 0}, result[2] = {0, 0}, sync[GS_WORDS] = {0, 0};
  cl_int rc;
  cl_mem s = cl.clCreateBuffer(dev->context, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, sizeof(zeros), zeros, &rc);
  cl_mem d = cl.clCreateBuffer(dev->context, CL_MEM_READ_WRITE, vm->grid * words * sizeof(int), NULL, &rc);
  cl_mem e = cl.clCreateBuffer(dev->context, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, sizeof(result), result, &rc);
  cl_ulong limit = vm_wait_bound(dev);
  size_t global = vm->grid * vm->group, local = vm->group;
  rc = s && d && e ? CL_SUCCESS : CL_OUT_OF_RESOURCES;
  cl_uint a = 0;
  if (rc == CL_SUCCESS) rc = cl.clSetKernelArg(k, a++, sizeof(cl_mem), &s);
  if (rc == CL_SUCCESS) rc = cl.clSetKernelArg(k, a++, sizeof(cl_mem), &d);
  if (rc == CL_SUCCESS) rc = cl.clSetKernelArg(k, a++, sizeof(cl_mem), &e);
  if (rc == CL_SUCCESS) rc = cl.clSetKernelArg(k, a++, sizeof(int), &phases);
  if (rc == CL_SUCCESS) rc = cl.clSetKernelArg(k, a++, sizeof(int), &words);
  if (rc == CL_SUCCESS) rc = cl.clSetKernelArg(k, a++, sizeof(cl_ulong), &limit);
  if (rc == CL_SUCCESS) rc = cl.clEnqueueNDRangeKernel(dev->queue, k, 1, NULL, &global, &local, 0, NULL, NULL);
  if (rc == CL_SUCCESS) rc = cl.clEnqueueReadBuffer(dev->queue, e, CL_TRUE, 0, sizeof(result), result, 0, NULL, NULL);
  if (rc == CL_SUCCESS) rc = cl.clEnqueueReadBuffer(dev->queue, s, CL_TRUE, 0, sizeof(sync), sync, 0, NULL, NULL);
  cl.clFinish(dev->queue);
  if (s) cl.clReleaseMemObject(s);
  if (d) cl.clReleaseMemObject(d);
  if (e) cl.clReleaseMemObject(e);
  cl.clReleaseKernel(k);
  if (rc != CL_SUCCESS) return snprintf(why, whylen, "the self-test failed to run: %s", cl_error_name(rc)), 0;
  if (sync[GS_ABORT] || sync[GS_COUNT] != 2 * phases * (int)vm->grid)
    return snprintf(why, whylen, "the self-test's grid of %zu groups did not pass its barriers (not all resident?)",
                    vm->grid), 0;
  if (result[0])
    return snprintf(why, whylen, "the self-test read %d stale values across groups after the barrier", result[0]), 0;
  return 1;
}

int vm_selftest(Executor* ex, char* why, size_t whylen) {
  const GpuCaps* c = &ex->enc.dev->caps;
  char key[600];
  snprintf(key, sizeof(key), "%.250s|%.250s|%zu|%zu", c->name, c->driver, ex->vm->grid, ex->vm->group);
  pthread_mutex_lock(&g_selftests_lock);
  int i = 0;
  while (i < g_num_selftests && strcmp(g_selftests[i].key, key) != 0) ++i;
  int passed;
  if (i < g_num_selftests) {
    passed = g_selftests[i].passed;
    snprintf(why, whylen, "%s", g_selftests[i].why);
  } else {
    char reason[160] = "";
    passed = run_selftest(ex, reason, sizeof(reason));
    snprintf(why, whylen, "%s", reason);
    if (i < MAX_SELFTESTS) {
      snprintf(g_selftests[i].key, sizeof(g_selftests[i].key), "%s", key);
      g_selftests[i].passed = passed;
      snprintf(g_selftests[i].why, sizeof(g_selftests[i].why), "%s", reason);
      g_num_selftests++;
    }
  }
  pthread_mutex_unlock(&g_selftests_lock);
  return passed;
}

/* Whether persistent launches may run here (vm_selftest); if not, the
 * partition stays stepped and says why. */
static int selftest(Executor* ex) {
  char why[160] = "";
  int passed = vm_selftest(ex, why, sizeof(why));
  if (!passed) stay_stepped(ex, why);
  return passed;
}

static cl_int launch(cl_command_queue q, cl_kernel k, size_t items, size_t group, cl_event* event) {
  size_t global = (items + group - 1) / group * group, local = group;
  if (!global) global = group;
  return cl.clEnqueueNDRangeKernel(q, k, 1, NULL, &global, &local, 0, NULL, event);
}

cl_int vm_enqueue(Executor* ex) {
  VmState* vm = ex->vm;
  Encoder* e = &ex->enc;
  cl_command_queue q = e->dev->queue;
  /* The checked mode runs stepped: its guards are read after every phase. */
  int persistent =
      vm->mode == GD_EXEC_PERSISTENT && !vm->stepped_only && !ex->capture && !vm->checked && selftest(ex);
  vm->overrun[0] = '\0';
  vm_profile_drop(vm);
  static const int fresh[GS_WORDS] = {0, 0}, aborted[GS_WORDS] = {0, 1};
  cl_int rc = CL_SUCCESS;
  int launches = 0, vm_segments = 0;
  if (persistent) {
    pthread_mutex_lock(&g_lock);
    vm->locked = 1;
    /* Test hook: an abort already raised, as a timed-out wait leaves it. */
    const int* start = env_flag("TFLITE_GPU_TEST_VM_TIMEOUT", 0) ? aborted : fresh;
    rc = cl.clEnqueueWriteBuffer(q, vm->sync, CL_FALSE, 0, sizeof(fresh), start, 0, NULL, NULL);
  }
  for (int s = 0; s < vm->num_segs && rc == CL_SUCCESS; ++s) {
    const VmSegment* seg = &vm->segs[s];
    if (!seg->vm) {
      const Dispatch* d = &e->dispatches[seg->first];
      rc = cl.clEnqueueNDRangeKernel(q, d->kernel, d->dims, NULL, d->global, d->local, 0, NULL,
                                     vm_profile_event(vm, d->name));
      launches++;
      if (rc == CL_SUCCESS && ex->capture) rc = capture_after_dispatch(ex, ex->capture, ex->capture_partition, seg->first);
      continue;
    }
    if (persistent) {
      /* Arrivals count from 0 per launch; an abort stays raised for the rest. */
      if (vm_segments++) rc = cl.clEnqueueWriteBuffer(q, vm->sync, CL_FALSE, 0, sizeof(int), fresh, 0, NULL, NULL);
      if (rc == CL_SUCCESS)
        rc = launch(q, seg->whole, vm->grid * vm->group, vm->group, vm_profile_event(vm, vm->timing ? NULL : "vm_run"));
      launches++;
      continue;
    }
    for (int i = seg->first; i < seg->last && rc == CL_SUCCESS && !vm->overrun[0]; ++i) {
      rc = launch(q, vm->steps[vm->phase_of[i]], (size_t)vm->phase[vm->phase_of[i]].items, vm->group,
                  vm_profile_event(vm, e->dispatches[i].name));
      launches++;
      if (rc == CL_SUCCESS && ex->capture) rc = capture_after_dispatch(ex, ex->capture, ex->capture_partition, i);
      if (rc == CL_SUCCESS && vm->checked) rc = vm_check_guards(ex, i);
    }
    if (vm->overrun[0]) break;
  }
  if (persistent && rc == CL_SUCCESS)
    rc = cl.clEnqueueReadBuffer(q, vm->sync, CL_FALSE, 0, sizeof(vm->sync_result), vm->sync_result, 0, NULL, NULL);
  vm->last_persistent = persistent;
  vm->last_launches = launches;
  return rc;
}

int vm_aborted(Executor* ex) {
  VmState* vm = ex->vm;
  if (!vm->locked) return 0;
  vm->locked = 0;
  pthread_mutex_unlock(&g_lock);
  if (!vm->sync_result[GS_ABORT]) return 0;
  stay_stepped(ex, "a grid barrier timed out (a group waited past its bound)");
  return 1;
}

int vm_launches(const VmState* vm, int persistent) {
  if (!persistent) return vm->segs[vm->num_segs - 1].last;
  return vm->num_segs;
}

void vm_free(VmState* vm) {
  if (!vm) return;
  vm_profile_drop(vm);
  if (vm->stamps) cl.clReleaseMemObject(vm->stamps);
  free(vm->events);
  free(vm->event_rows);
  if (vm->locked) pthread_mutex_unlock(&g_lock);
  for (int p = 0; vm->steps && p < vm->num_phases; ++p)
    if (vm->steps[p]) cl.clReleaseKernel(vm->steps[p]);
  for (int s = 0; vm->segs && s < vm->num_segs; ++s)
    if (vm->segs[s].whole) cl.clReleaseKernel(vm->segs[s].whole);
  cl_mem bufs[4] = {vm->ops, vm->other, vm->sync, vm->dummy};
  for (int i = 0; i < 4; ++i)
    if (bufs[i]) cl.clReleaseMemObject(bufs[i]);
  free(vm->steps);
  free(vm->guards);
  free(vm->phase);
  free(vm->segs);
  free(vm->phase_of);
  free(vm);
}
