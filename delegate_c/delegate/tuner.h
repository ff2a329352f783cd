/* The tuner: which policy runs a partition fastest on this device,
 * decided by timing it. inference_preference=SUSTAINED_SPEED (when nothing
 * is remembered) or the option tune=force (`tflite-gpu tune`) asks for it;
 * the choice is remembered (policy_store.h).
 *
 * The candidates (select/policy.h policy_candidates): the policy as
 * resolved first (what runs without tuning), then kernels and the
 * persistent variants. Each is built and run
 * on the probe's seeded inputs (runtime/probe.h): one whose outputs are not
 * the first candidate's within the precision's tolerance is refused, and so
 * is a persistent one that falls back to stepped. The rest are timed
 * interleaved, round after round; the fastest wins only by 5% or more over
 * the first (GD_TUNE_MIN_GAIN), so that choices do not flip between runs.
 * With kernels chosen, each dispatch's work-group scale is then timed too
 * (tune.c). The budget bounds it all: candidates past it are skipped and
 * said to be; budget 0 times nothing.
 *
 * Test hooks: TFLITE_GPU_TEST_TUNE_SLOW=NAME makes candidate NAME slower
 * (a sleep after each of its timed runs, counted in its time);
 * TFLITE_GPU_TEST_TUNE_WRONG=NAME adds 1.0 to its outputs as read back. */
#ifndef TFLITE_GPU_TUNER_H
#define TFLITE_GPU_TUNER_H

#include <stddef.h>

#include "runtime/executor.h"
#include "select/policy.h"

enum { TUNE_MAX_CANDIDATES = POLICY_MAX_CANDIDATES };

/* Builds the partition under policy p with work-group scales tune (or
 * NULL) into ex; 0, or -1 with err set (ex freed). dev->mutex NOT held. */
typedef int (*TuneBuildFn)(void* ctx, const Policy* p, const signed char* tune, int tune_len, Executor* ex, char* err,
                           size_t errlen);

typedef struct TuneResult {
  Policy policy;        /* the winner, with the fields the tuner decided marked measured */
  signed char* tune;    /* its work-group scales (malloc'd), or NULL */
  int tune_len;
  int num_candidates, chosen;
  PolicyCandidate cand[TUNE_MAX_CANDIDATES];
  double us[TUNE_MAX_CANDIDATES]; /* best invoke, -1: not timed (why says why) */
  char why[TUNE_MAX_CANDIDATES][120];
  double seconds;       /* what the tuning took */
  int timed;            /* 1 when something was timed (and the result is worth remembering) */
} TuneResult;

/* Times the candidates for base within budget seconds (see above). Always
 * fills r (r->policy is base when nothing could be timed); its log line at
 * GD_LOG_INFO. dev->mutex not held. */
void tuner_run(GpuDevice* dev, const Policy* base, int min_memory, double budget, TuneBuildFn build, void* ctx,
               int log_level, TuneResult* r);
void tune_result_free(TuneResult* r);
/* One line per candidate: "name\tus\tchosen\twhy" (the CLI's table). */
size_t tune_result_text(const TuneResult* r, char* buf, size_t size);

#endif
