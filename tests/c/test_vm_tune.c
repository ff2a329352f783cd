/* uses: vm/vm_tune.c util/env_hooks.c cl/kernel_cache.c */
/* The persistent grid's tuning (vm_tune.c) against stand-ins for what it
 * calls: a device of 10 compute units whose self-test passes on the grids
 * the case says are resident, invokes that take the time the case gives
 * each grid (or time out: the VM's fallback state set, as vm_aborted
 * does), and the log. Covers the choice (the 5% rule), candidates that
 * drop out, failures that keep the grid as built, the remembered file
 * (written, read, refused when it is not ours) and the cases that do not
 * tune at all. */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "config/options.h"
#include "vm/vm.h"
#include "vm/vm_tune.h"

enum { UNITS = 10 };

/* What the stand-ins do, per grid of 10, 20 or 40 groups (index 0-2). */
static struct {
  int resident[3];  /* the self-test passes */
  double us[3];     /* an invoke's time */
  int times_out[3]; /* the invoke's barrier times out */
  int fail_timing;  /* executor_time returns a CL error */
  size_t cap;       /* vm_grid_size caps the grid (the TFLITE_GPU_VM_GROUPS hook); 0 none */
  int selftests, invokes;
  char log[2048];
} S;

static int index_of(size_t grid) { return grid == UNITS ? 0 : grid == 2 * UNITS ? 1 : grid == 4 * UNITS ? 2 : -1; }

size_t vm_grid_size(const GpuDevice* dev, int per_unit) {
  (void)dev;
  size_t grid = (size_t)UNITS * (size_t)per_unit;
  return S.cap && S.cap < grid ? S.cap : grid;
}

int vm_selftest(Executor* ex, char* why, size_t whylen) {
  S.selftests++;
  int i = index_of(ex->vm->grid);
  if (i >= 0 && S.resident[i]) return 1;
  snprintf(why, whylen, "grid %zu not resident", ex->vm->grid);
  return 0;
}

int executor_time(Executor* ex, int reps, double* best_us, char* err, size_t errlen) {
  (void)reps;
  S.invokes++;
  if (S.fail_timing) return snprintf(err, errlen, "CL_OUT_OF_RESOURCES"), -1;
  int i = index_of(ex->vm->grid);
  if (i < 0) return snprintf(err, errlen, "unexpected grid"), -1;
  if (S.times_out[i]) {
    ex->vm->stepped_only = 1;
    snprintf(ex->vm->fallback, sizeof(ex->vm->fallback), "a grid barrier timed out");
  }
  *best_us = S.us[i];
  return 0;
}

void gd_log(int threshold, int level, const char* fmt, ...) {
  (void)threshold;
  size_t used = strlen(S.log);
  used += (size_t)snprintf(S.log + used, sizeof(S.log) - used, "%s: ", level == 1 ? "W" : "I");
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(S.log + used, sizeof(S.log) - used, fmt, ap);
  va_end(ap);
  used = strlen(S.log);
  snprintf(S.log + used, sizeof(S.log) - used, "\n");
}

static GpuDevice g_dev;
static VmState g_vm;
static Executor g_ex;

/* A fresh persistent partition built with one group per unit, every grid
 * resident, taking 1000 us. */
static Executor* fresh(void) {
  memset(&S, 0, sizeof(S));
  memset(&g_vm, 0, sizeof(g_vm));
  memset(&g_ex, 0, sizeof(g_ex));
  pthread_mutex_init(&g_dev.mutex, NULL);
  g_ex.enc.dev = &g_dev;
  g_ex.vm = &g_vm;
  g_vm.mode = GD_EXEC_PERSISTENT;
  g_vm.grid = UNITS;
  for (int i = 0; i < 3; ++i) S.resident[i] = 1, S.us[i] = 1000;
  return &g_ex;
}

static void write_file(const char* path, const char* text) {
  FILE* f = fopen(path, "w");
  if (f) {
    fputs(text, f);
    fclose(f);
  }
}

static void read_file(const char* path, char* buf, size_t size) {
  buf[0] = '\0';
  FILE* f = fopen(path, "r");
  if (!f) return;
  size_t n = fread(buf, 1, size - 1, f);
  buf[n] = '\0';
  fclose(f);
}

int main(void) {
  /* The choice alone: the fastest by 5% or more over candidate 0. */
  CHECK(vm_tune_choose((double[]){1000, 800, 900}, 3) == 1, "the fastest wins");
  CHECK(vm_tune_choose((double[]){1000, 960, 990}, 3) == 0, "a gain under 5%% keeps one per unit");
  CHECK(vm_tune_choose((double[]){1000, -1, 700}, 3) == 2, "a failed candidate is skipped");
  CHECK(vm_tune_choose((double[]){-1, 500, 400}, 3) == -1, "candidate 0 failed: no choice");

  /* Tuned: 2 per unit is 20% faster; the grid and the log say so. */
  Executor* ex = fresh();
  S.us[1] = 800, S.us[2] = 900;
  CHECK(vm_tune_grid(ex, NULL, 2) == 2, "2 per unit chosen");
  CHECK(g_vm.grid == 2 * UNITS, "grid %zu", g_vm.grid);
  CHECK(S.invokes == 3 * VM_TUNE_ROUNDS, "every candidate every round: %d invokes", S.invokes);
  CHECK(strstr(S.log, "2 group(s) per compute unit (20 groups)") && strstr(S.log, "1 per unit: 1000 us"), "%s", S.log);

  /* Within 5%: one per unit stays. */
  ex = fresh();
  S.us[1] = 960, S.us[2] = 990;
  CHECK(vm_tune_grid(ex, NULL, 2) == 1 && g_vm.grid == UNITS, "one per unit kept: grid %zu", g_vm.grid);

  /* Grids the device does not keep resident drop out, quietly, with why. */
  ex = fresh();
  S.resident[1] = S.resident[2] = 0, S.us[1] = S.us[2] = 100;
  CHECK(vm_tune_grid(ex, NULL, 2) == 1 && g_vm.grid == UNITS, "grid %zu", g_vm.grid);
  CHECK(S.invokes == VM_TUNE_ROUNDS, "only the resident grid timed: %d", S.invokes);
  CHECK(strstr(S.log, "2 per unit: not run (grid 20 not resident)") && !strstr(S.log, "W: "), "%s", S.log);

  /* A barrier that times out drops its grid and leaves no fallback behind. */
  ex = fresh();
  S.us[2] = 500, S.times_out[2] = 1;
  g_vm.warned = 0;
  CHECK(vm_tune_grid(ex, NULL, 2) == 1, "the timed-out grid is not chosen");
  CHECK(!g_vm.stepped_only && !g_vm.fallback[0] && !g_vm.warned, "fallback state put back: %d '%s' %d",
        g_vm.stepped_only, g_vm.fallback, g_vm.warned);
  CHECK(strstr(S.log, "4 per unit: not run (a grid barrier timed out)"), "%s", S.log);

  /* One per unit fails its self-test: nothing chosen, the grid as built, a warning. */
  ex = fresh();
  S.resident[0] = 0;
  CHECK(vm_tune_grid(ex, NULL, 2) == 0 && g_vm.grid == UNITS, "grid %zu", g_vm.grid);
  CHECK(strstr(S.log, "W: SUSTAINED_SPEED: timing the persistent grid failed (grid 10 not resident)"), "%s", S.log);

  /* A CL error while timing: the grid as built, a warning naming it. */
  ex = fresh();
  S.fail_timing = 1;
  CHECK(vm_tune_grid(ex, NULL, 2) == 0 && g_vm.grid == UNITS, "grid %zu", g_vm.grid);
  CHECK(strstr(S.log, "failed (CL_OUT_OF_RESOURCES)"), "%s", S.log);

  /* A capped grid (the same for every candidate) is timed once. */
  ex = fresh();
  S.cap = UNITS;
  CHECK(vm_tune_grid(ex, NULL, 2) == 1 && S.invokes == VM_TUNE_ROUNDS, "%d invokes", S.invokes);

  /* Not tuned: stepped, checked, already stepped, or the A/B switch set. */
  ex = fresh();
  g_vm.mode = GD_EXEC_STEPPED;
  CHECK(vm_tune_grid(ex, NULL, 2) == 0 && S.invokes == 0 && S.selftests == 0, "stepped is not tuned");
  ex = fresh();
  g_vm.checked = 1;
  CHECK(vm_tune_grid(ex, NULL, 2) == 0 && S.invokes == 0, "checked mode is not tuned");
  ex = fresh();
  setenv("TFLITE_GPU_VM_GROUPS_PER_UNIT", "1", 1);
  CHECK(vm_tune_grid(ex, NULL, 2) == 0 && S.invokes == 0 && g_vm.grid == UNITS, "the A/B switch wins");
  unsetenv("TFLITE_GPU_VM_GROUPS_PER_UNIT");

  /* The remembered choice: written beside the cache file, read back
   * without timing; a file that is not ours is timed over and rewritten. */
  char dir[] = "/tmp/test_vm_tune_XXXXXX", base[128], path[160], text[128];
  CHECK(mkdtemp(dir) != NULL, "mkdtemp");
  snprintf(base, sizeof(base), "%s/part.bin", dir);
  snprintf(path, sizeof(path), "%s.grid", base);
  ex = fresh();
  S.us[2] = 700;
  CHECK(vm_tune_grid(ex, base, 2) == 4, "4 per unit chosen");
  read_file(path, text, sizeof(text));
  CHECK(strcmp(text, "tflite-gpu vm grid 1 4\n") == 0, "file: '%s'", text);
  ex = fresh();
  CHECK(vm_tune_grid(ex, base, 2) == 4 && g_vm.grid == 4 * UNITS && S.invokes == 0 && S.selftests == 0,
        "read back: grid %zu, %d invokes", g_vm.grid, S.invokes);
  CHECK(strstr(S.log, "from ") && strstr(S.log, ".grid"), "%s", S.log);
  const char* foreign[] = {"tflite-gpu vm grid 1 3\n", "tflite-gpu vm grid 1 2 2\n", "garbage\n", "",
                           "tflite-gpu tune 1 2\n"};
  for (int i = 0; i < 5; ++i) {
    write_file(path, foreign[i]);
    ex = fresh();
    S.us[1] = 600;
    CHECK(vm_tune_grid(ex, base, 2) == 2 && S.invokes > 0, "file %d: timed again", i);
    read_file(path, text, sizeof(text));
    CHECK(strcmp(text, "tflite-gpu vm grid 1 2\n") == 0, "file %d rewritten: '%s'", i, text);
  }
  /* An unwritable place: a warning, the choice still applied. */
  ex = fresh();
  S.us[1] = 600;
  CHECK(vm_tune_grid(ex, "/nonexistent-dir/part.bin", 2) == 2 && g_vm.grid == 2 * UNITS, "applied");
  CHECK(strstr(S.log, "W: SUSTAINED_SPEED: cannot write /nonexistent-dir/part.bin.grid"), "%s", S.log);
  remove(path);
  rmdir(dir);

  printf("%d checks, %d failures\n", g_checks, g_failures);
  return g_failures ? 1 : 0;
}
