/* inference_preference=SUSTAINED_SPEED with execution=persistent: the
 * grid's groups per compute unit chosen by timing the partition on the
 * device, as upstream tunes for a model that will run many times. One
 * group of 64 per unit leaves most of a GPU's warp slots empty (2 of an
 * NVIDIA SM's 64); more groups hide the bodies' memory waits better but
 * add arrivals to every grid barrier, and need the device to keep them
 * all resident. Which wins is the device's to say, so each candidate grid
 * runs its self-test (vm_invoke.c) and then whole invokes, interleaved
 * round by round; a grid whose self-test fails or whose barrier times out
 * drops out quietly. The choice is one small file beside the partition's
 * kernel-cache file, so a cached start does not time again. */
#include "vm/vm_tune.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/env_hooks.h"
#include "cl/kernel_cache.h"
#include "util/log.h"
#include "config/options.h"
#include "select/selectors.h"
#include "vm/vm.h"

const int kVmTunePerUnit[VM_TUNE_CANDIDATES] = {1, 2, 4};

#define GRID_MAGIC "tflite-gpu vm grid 1"

int vm_tune_choose(const double* us, int n) {
  if (n < 1 || us[0] < 0) return -1;
  int best = 0;
  for (int c = 1; c < n; ++c)
    if (us[c] >= 0 && us[c] < us[0] * (1.0 - GD_TUNE_MIN_GAIN) && us[c] < us[best]) best = c;
  return best;
}

void vm_tune_apply(Executor* ex, int per_unit) {
  if (ex->vm && per_unit > 0) ex->vm->grid = vm_grid_size(ex->enc.dev, per_unit);
}

static int known_per_unit(int v) {
  for (int c = 0; c < VM_TUNE_CANDIDATES; ++c)
    if (v == kVmTunePerUnit[c]) return 1;
  return 0;
}

/* The remembered groups per unit, or 0 when the file is missing or not ours. */
static int grid_load(const char* path) {
  FILE* f = fopen(path, "r");
  if (!f) return 0;
  int v = 0, extra;
  int ok = fscanf(f, GRID_MAGIC " %d", &v) == 1 && known_per_unit(v) && fscanf(f, "%d", &extra) != 1;
  fclose(f);
  return ok ? v : 0;
}

/* Through the kernel cache's writer: aside, then renamed into place. */
static int grid_save(const char* path, int per_unit) {
  char text[64], why[256];
  int n = snprintf(text, sizeof(text), GRID_MAGIC " %d\n", per_unit);
  return kc_write_file(path, (const unsigned char*)text, (size_t)n, why, sizeof(why));
}

/* Times the candidates on ex (dev->mutex held): us[c] each one's best
 * invoke, -1 where its self-test failed or a barrier timed out (why[c]).
 * -1 on a CL error (err). */
static int time_grids(Executor* ex, const size_t* grids, double* us, char (*why)[160], char* err, size_t errlen) {
  VmState* vm = ex->vm;
  int ok[VM_TUNE_CANDIDATES];
  for (int c = 0; c < VM_TUNE_CANDIDATES; ++c) {
    us[c] = -1;
    vm->grid = grids[c];
    /* A candidate whose grid is an earlier one's (a hook's cap) is not timed again. */
    ok[c] = grids[c] > 0 && vm_selftest(ex, why[c], sizeof(why[c]));
    for (int e = 0; e < c && ok[c]; ++e)
      if (grids[e] == grids[c]) ok[c] = 0, snprintf(why[c], sizeof(why[c]), "the grid of %zu groups again", grids[c]);
  }
  /* A barrier timing out during tuning is not the partition's fallback:
   * no warning, and the state is put back after each launch. */
  int warned = vm->warned;
  vm->warned = 1;
  int rc = 0;
  for (int r = 0; r < VM_TUNE_ROUNDS && rc == 0; ++r)
    for (int c = 0; c < VM_TUNE_CANDIDATES && rc == 0; ++c) {
      if (!ok[c]) continue;
      vm->grid = grids[c];
      double t;
      rc = executor_time(ex, 1, &t, err, errlen);
      if (rc == 0 && vm->stepped_only) {
        ok[c] = 0, us[c] = -1;
        snprintf(why[c], sizeof(why[c]), "%.150s", vm->fallback);
        vm->stepped_only = 0, vm->fallback[0] = '\0';
      } else if (rc == 0 && (us[c] < 0 || t < us[c])) {
        us[c] = t;
      }
    }
  vm->warned = warned;
  return rc;
}

int vm_tune_grid(Executor* ex, const char* cache_path, int log_level) {
  VmState* vm = ex->vm;
  if (!vm || vm->mode != GD_EXEC_PERSISTENT || vm->checked || vm->stepped_only ||
      env_text("TFLITE_GPU_VM_GROUPS_PER_UNIT"))
    return 0;
  char path[4096] = "";
  if (cache_path && snprintf(path, sizeof(path), "%s.grid", cache_path) >= (int)sizeof(path)) path[0] = '\0';
  int per_unit = path[0] ? grid_load(path) : 0;
  if (per_unit) {
    vm_tune_apply(ex, per_unit);
    gd_log(log_level, GD_LOG_INFO, "SUSTAINED_SPEED: persistent grid of %d group(s) per compute unit, from %s",
           per_unit, path);
    return per_unit;
  }
  size_t built = vm->grid, grids[VM_TUNE_CANDIDATES];
  double us[VM_TUNE_CANDIDATES];
  char why[VM_TUNE_CANDIDATES][160] = {{0}}, err[512] = "";
  for (int c = 0; c < VM_TUNE_CANDIDATES; ++c) grids[c] = vm_grid_size(ex->enc.dev, kVmTunePerUnit[c]);
  GpuDevice* dev = ex->enc.dev;
  pthread_mutex_lock(&dev->mutex);
  int rc = time_grids(ex, grids, us, why, err, sizeof(err));
  pthread_mutex_unlock(&dev->mutex);
  int best = rc == 0 ? vm_tune_choose(us, VM_TUNE_CANDIDATES) : -1;
  vm->grid = built;
  if (best < 0) {
    gd_log(log_level, GD_LOG_WARNING, "SUSTAINED_SPEED: timing the persistent grid failed (%s); it stays %zu groups",
           rc ? err : why[0], built);
    return 0;
  }
  per_unit = kVmTunePerUnit[best];
  vm_tune_apply(ex, per_unit);
  char rest[3 * 200] = "";
  size_t used = 0;
  for (int c = 0; c < VM_TUNE_CANDIDATES && used < sizeof(rest); ++c) {
    if (us[c] < 0)
      used += (size_t)snprintf(rest + used, sizeof(rest) - used, "; %d per unit: not run (%s)", kVmTunePerUnit[c], why[c]);
    else
      used += (size_t)snprintf(rest + used, sizeof(rest) - used, "; %d per unit: %.0f us", kVmTunePerUnit[c], us[c]);
  }
  gd_log(log_level, GD_LOG_INFO, "SUSTAINED_SPEED: persistent grid of %d group(s) per compute unit (%zu groups)%s",
         per_unit, vm->grid, rest);
  if (path[0] && grid_save(path, per_unit))
    gd_log(log_level, GD_LOG_WARNING, "SUSTAINED_SPEED: cannot write %s", path);
  return per_unit;
}
