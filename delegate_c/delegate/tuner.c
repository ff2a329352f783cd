/* See tuner.h. */
#include "delegate/tuner.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "delegate/tune.h"
#include "runtime/probe.h"
#include "select/selectors.h"
#include "util/env_hooks.h"
#include "util/log.h"
#include "vm/vm.h"

/* Timing rounds of 5 invokes a candidate, its time the best round's median:
 * at least 8 rounds, spread over at least 2 s of wall time (a pause between
 * quick ones), so that a burst of load on the machine (seconds long on a
 * shared host) leaves some rounds clean; at most 40. A candidate 1.5x the
 * best after two rounds is timed no more. Each round starts at another
 * candidate and each candidate's timing follows a 50 ms pause: a CPU
 * runtime's worker threads spin, then sleep, after an invoke, so with a
 * fixed order the candidate timed right after another ran with warm
 * threads and the first one with cold ones (on Intel's runtime, within 1%
 * of each other where a pausing benchmark has them 7-10% apart). */
#define TUNE_ROUND_INVOKES 5
#define TUNE_MIN_ROUNDS 8
#define TUNE_MAX_ROUNDS 40
#define TUNE_SPAN_S 2.0
#define TUNE_DROP_RATIO 1.5
#define TUNE_PAUSE_US 50000

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* Whether out's outputs are ref's within the precision's tolerance: `tflite-gpu
 * check`'s (FP32 1e-4 relative L2, FP16 1e-2) or its floors (1e-7, 2^-10)
 * for outputs near zero; other types byte for byte. */
static int agrees(const Executor* ex, unsigned char** out, unsigned char** ref, char* why, size_t whylen) {
  int fp16 = ex->enc.dev->fp16;
  double tol = fp16 ? 1e-2 : 1e-4, floor_abs = fp16 ? 1.0 / 1024 : 1e-7;
  for (int k = 0; k < ex->num_outputs - ex->num_state_outputs; ++k) {
    const BoundaryTensor* b = &ex->outputs[k];
    const GTensor* t = &ex->enc.g.tensors[b->tensor];
    if (!probe_is_float(t)) {
      if (memcmp(out[k], ref[k], b->bytes)) return snprintf(why, whylen, "output %d differs", k), 0;
      continue;
    }
    double max_abs, rel = probe_rel_l2((const float*)out[k], (const float*)ref[k], b->bytes / sizeof(float), &max_abs);
    if (!(rel <= tol || max_abs <= floor_abs))
      return snprintf(why, whylen, "output %d is %.3g relative L2 from the first candidate's", k, rel), 0;
  }
  return 1;
}

static void free_outs(unsigned char** outs, int n) {
  for (int k = 0; outs && k < n; ++k) free(outs[k]);
  free(outs);
}

/* Runs candidate ex on the probe; 1 and its outputs in *outs when it ran
 * as asked (a persistent one that fell back to stepped did not). */
static int probe(Executor* ex, int persistent, const char* wrong, const char* name, unsigned char*** outs, char* why,
                 size_t whylen) {
  *outs = calloc((size_t)ex->num_outputs + 1, sizeof(**outs));
  if (!*outs) return snprintf(why, whylen, "out of memory"), 0;
  if (ex->vm) ex->vm->warned = 1; /* a fallback while tuning is the candidate's, not the partition's: no warning */
  pthread_mutex_lock(&ex->enc.dev->mutex);
  cl_int rc = probe_run(ex, *outs);
  pthread_mutex_unlock(&ex->enc.dev->mutex);
  if (rc != CL_SUCCESS) return snprintf(why, whylen, "running it: %s", cl_error_name(rc)), 0;
  if (persistent && (!ex->vm || ex->vm->mode != GD_EXEC_PERSISTENT || ex->vm->stepped_only))
    return snprintf(why, whylen, "it ran stepped: %.90s", ex->vm ? ex->vm->fallback : ex->vm_declined), 0;
  if (wrong && !strcmp(wrong, name)) /* test hook: its outputs as if they were wrong */
    for (int k = 0; k < ex->num_outputs; ++k)
      if (probe_is_float(&ex->enc.g.tensors[ex->outputs[k].tensor]))
        for (size_t i = 0; i < ex->outputs[k].bytes / sizeof(float); ++i) ((float*)(*outs)[k])[i] += 1.0f;
  return 1;
}

/* Each dispatch's work-group scale (tune.c) for a kernels winner: the
 * partition built once per scale, every dispatch timed. 0 with r->tune set,
 * or -1 (the selector's groups stay). */
static int tune_groups(GpuDevice* dev, TuneResult* r, Executor* chosen, TuneBuildFn build, void* ctx, double deadline,
                       int log_level) {
  int n = chosen->enc.num_dispatches;
  double* us[GD_TUNE_CANDIDATES] = {NULL};
  signed char* scales = malloc((size_t)n + 1);
  signed char* tune = malloc((size_t)n + 1);
  char err[GD_ERR_LEN] = "";
  int ok = scales && tune && n > 0;
  for (int c = 0; ok && c < GD_TUNE_CANDIDATES; ++c) ok = (us[c] = malloc(sizeof(double) * (size_t)(n + 1))) != NULL;
  for (int c = 0; ok && c < GD_TUNE_CANDIDATES; ++c) {
    if (now_s() > deadline) {
      ok = 0;
      snprintf(err, sizeof(err), "the budget ran out");
      break;
    }
    Executor ex = {0}, *run = chosen; /* candidate 0 is the winner as built */
    if (c > 0) {
      memset(scales, kTuneScales[c], (size_t)n);
      ok = build(ctx, &r->policy, scales, n, &ex, err, sizeof(err)) == 0;
      if (ok && ex.enc.num_dispatches != n) ok = 0, snprintf(err, sizeof(err), "the dispatch lists differ");
      run = &ex;
    }
    pthread_mutex_lock(&dev->mutex);
    if (ok) ok = tune_time_dispatches(run, 3, us[c], err, sizeof(err)) == 0;
    if (c > 0) executor_free(&ex);
    pthread_mutex_unlock(&dev->mutex);
  }
  if (ok) {
    double ratio = tune_choose((const double* const*)us, n, tune);
    int changed = 0;
    for (int i = 0; i < n; ++i) changed += tune[i] != 0;
    gd_log(log_level, GD_LOG_INFO, "tuner: %d of %d dispatches take another work-group size; kernel time %.2fx the "
           "selector's", changed, n, ratio);
    if (changed) r->tune = tune, r->tune_len = n, tune = NULL;
  } else {
    gd_log(log_level, GD_LOG_INFO, "tuner: work-groups not tuned (%s); the selector's stay", err);
  }
  for (int c = 0; c < GD_TUNE_CANDIDATES; ++c) free(us[c]);
  free(scales);
  free(tune);
  return ok ? 0 : -1;
}

void tuner_run(GpuDevice* dev, const Policy* base, int min_memory, double budget, TuneBuildFn build, void* ctx,
               int log_level, TuneResult* r) {
  memset(r, 0, sizeof(*r));
  r->policy = *base;
  r->num_candidates = policy_candidates(base, min_memory, r->cand, TUNE_MAX_CANDIDATES);
  double start = now_s(), deadline = start + budget;
  const char* slow = env_text("TFLITE_GPU_TEST_TUNE_SLOW");
  const char* wrong = env_text("TFLITE_GPU_TEST_TUNE_WRONG");
  Executor ex[TUNE_MAX_CANDIDATES];
  int built[TUNE_MAX_CANDIDATES] = {0};
  unsigned char** ins[TUNE_MAX_CANDIDATES] = {NULL}; /* timed on the probe's inputs, as users' data, not zeros */
  unsigned char** ref = NULL;
  memset(ex, 0, sizeof(ex));
  for (int c = 0; c < r->num_candidates; ++c) {
    r->us[c] = -1;
    const Policy* p = &r->cand[c].policy;
    if (budget <= 0 || now_s() > deadline) {
      snprintf(r->why[c], sizeof(r->why[c]), "skipped: the budget of %g s ran out", budget);
      continue;
    }
    char err[GD_ERR_LEN] = "";
    if (build(ctx, p, NULL, 0, &ex[c], err, sizeof(err))) {
      snprintf(r->why[c], sizeof(r->why[c]), "not built: %.100s", err);
      continue;
    }
    built[c] = 1;
    unsigned char** outs = NULL;
    int ok = probe(&ex[c], p->v[POL_EXECUTION] == GD_EXEC_PERSISTENT, wrong, r->cand[c].name, &outs, r->why[c],
                   sizeof(r->why[c]));
    if (ok && c == 0) ref = outs, outs = NULL;
    else if (ok && !ref) ok = 0, snprintf(r->why[c], sizeof(r->why[c]), "nothing to compare with");
    else if (ok) ok = agrees(&ex[c], outs, ref, r->why[c], sizeof(r->why[c]));
    if (ok && !(ins[c] = probe_inputs(&ex[c]))) ok = 0, snprintf(r->why[c], sizeof(r->why[c]), "out of memory");
    if (ok) r->us[c] = 0; /* to be timed */
    else if (c > 0) gd_log(log_level, GD_LOG_INFO, "tuner: candidate '%s' refused: %s", r->cand[c].name, r->why[c]);
    free_outs(outs, ex[c].num_outputs);
  }
  if (ref) free_outs(ref, ex[0].num_outputs);
  /* Interleaved rounds: drift on a busy machine hits every candidate alike.
   * Each candidate's time is its best round's median (a busy machine only
   * adds time). */
  double best[TUNE_MAX_CANDIDATES];
  for (int c = 0; c < r->num_candidates; ++c) best[c] = -1;
  double timing_start = now_s();
  for (int round = 0; round < TUNE_MAX_ROUNDS && (round == 0 || now_s() < deadline) &&
                      (round < TUNE_MIN_ROUNDS || now_s() - timing_start < TUNE_SPAN_S);
       ++round) {
    double behind = timing_start + round * (TUNE_SPAN_S / TUNE_MAX_ROUNDS) - now_s();
    if (behind > 0 && round > 0) usleep((useconds_t)(behind * 1e6)); /* spread quick rounds out */
    double lead = -1;
    for (int c = 0; c < r->num_candidates; ++c)
      if (best[c] >= 0 && (lead < 0 || best[c] < lead)) lead = best[c];
    for (int i = 0; i < r->num_candidates; ++i) {
      int c = (round + i) % r->num_candidates;
      if (r->us[c] < 0) continue;
      if (round >= 2 && c > 0 && best[c] > TUNE_DROP_RATIO * lead) continue; /* out: its time stays */
      char err[GD_ERR_LEN] = "";
      double us;
      usleep(TUNE_PAUSE_US);
      pthread_mutex_lock(&dev->mutex);
      int rc = executor_time(&ex[c], TUNE_ROUND_INVOKES, ins[c], &us, err, sizeof(err));
      pthread_mutex_unlock(&dev->mutex);
      if (rc == 0 && ex[c].vm && ex[c].vm->stepped_only && r->cand[c].policy.v[POL_EXECUTION] == GD_EXEC_PERSISTENT)
        rc = -1, snprintf(err, sizeof(err), "it fell back to stepped: %.80s", ex[c].vm->fallback);
      if (rc) {
        r->us[c] = -1;
        snprintf(r->why[c], sizeof(r->why[c]), "timing it: %.100s", err);
        continue;
      }
      if (slow && !strcmp(slow, r->cand[c].name)) { /* test hook: this candidate 50 ms slower, more than */
        usleep((useconds_t)(2 * us + 50000));       /* a persistent grid takes on a loaded CI machine */
        us = 3 * us + 50000;
      }
      if (best[c] < 0 || us < best[c]) best[c] = us;
      r->us[c] = best[c];
    }
  }
  r->chosen = policy_choose(r->us, r->num_candidates, GD_TUNE_MIN_GAIN);
  r->timed = r->us[r->chosen] >= 0;
  if (r->timed) {
    r->policy = r->cand[r->chosen].policy;
    policy_mark_measured(&r->policy);
    if (r->policy.v[POL_EXECUTION] == GD_EXEC_KERNELS && r->policy.v[POL_TUNE_GROUPS] && built[r->chosen] &&
        now_s() < deadline)
      tune_groups(dev, r, &ex[r->chosen], build, ctx, deadline, log_level);
  }
  pthread_mutex_lock(&dev->mutex);
  for (int c = 0; c < r->num_candidates; ++c) {
    if (ins[c]) probe_free_inputs(ins[c], ex[c].num_inputs);
    if (built[c]) executor_free(&ex[c]);
  }
  pthread_mutex_unlock(&dev->mutex);
  r->seconds = now_s() - start;
  char line[1400];
  size_t used = (size_t)snprintf(line, sizeof(line), "tuner: %s '%s' in %.1f s:", r->timed ? "chose" : "timed nothing, kept",
                                 r->cand[r->timed ? r->chosen : 0].name, r->seconds);
  for (int c = 0; c < r->num_candidates && used < sizeof(line); ++c) {
    if (r->us[c] >= 0)
      used += (size_t)snprintf(line + used, sizeof(line) - used, "%s %s %.0f us", c ? ";" : "", r->cand[c].name, r->us[c]);
    else
      used += (size_t)snprintf(line + used, sizeof(line) - used, "%s %s (%s)", c ? ";" : "", r->cand[c].name, r->why[c]);
  }
  gd_log(log_level, GD_LOG_INFO, "%s", line);
}

void tune_result_free(TuneResult* r) {
  free(r->tune);
  r->tune = NULL;
}

size_t tune_result_text(const TuneResult* r, char* buf, size_t size) {
  size_t used = 0;
  if (size) buf[0] = '\0';
  for (int c = 0; c < r->num_candidates; ++c) {
    int n = snprintf(used < size ? buf + used : NULL, used < size ? size - used : 0, "%s\t%.1f\t%d\t%s\n",
                     r->cand[c].name, r->us[c], c == r->chosen && r->timed, r->why[c]);
    if (n > 0) used += (size_t)n;
  }
  return used;
}
