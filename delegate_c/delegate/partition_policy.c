/* See partition_policy.h. */
#include "delegate/partition_policy.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "delegate/serialization.h"
#include "util/log.h"

/* Appends the tuner's candidates of partition `partition` to d->tune_report
 * (best effort): "partition\tname\tus\tchosen\twhy" lines. */
static void record_tuning(GpuDelegate* d, int partition, const TuneResult* r) {
  size_t add = tune_result_text(r, NULL, 0) + (size_t)r->num_candidates * 12 + 1;
  size_t old = d->tune_report ? strlen(d->tune_report) : 0;
  char* text = malloc(add);
  char* grown = text ? realloc(d->tune_report, old + add + (size_t)r->num_candidates * 12) : NULL;
  if (!grown) {
    free(text);
    return;
  }
  d->tune_report = grown;
  tune_result_text(r, text, add);
  size_t used = old;
  for (char *line = text, *end; *line; line = end + 1) {
    end = strchr(line, '\n');
    if (!end) break;
    used += (size_t)sprintf(d->tune_report + used, "%d\t%.*s\n", partition, (int)(end - line), line);
  }
  free(text);
}

int partition_policy_resolve(GpuDelegate* d, GpuDevice* dev, const TfLiteDelegateParams* params, PolicyStore* store,
                     Policy* policy, signed char** tune, int* tune_len, TuneBuildFn build, void* ctx, int log_level,
                     char* err, size_t errlen) {
  char dir[4096], why[800];
  int have = 0;
  Remembered rem;
  memset(&rem, 0, sizeof(rem));
  if (policy_store_dir(&d->cfg, d->cache_on, dir, sizeof(dir)) == 0 &&
      policy_store_open(store, dir, dev, ser_partition_fingerprint(d->current_view, params)) == 0) {
    if (d->cfg.tune == GD_TUNE_CLEAR) {
      if (policy_store_clear(store) > 0)
        gd_log(log_level, GD_LOG_INFO, "tuner: forgot the policy remembered in %s", store->path);
    } else if (d->cfg.tune != GD_TUNE_FORCE) {
      have = policy_store_load(store, &rem, why, sizeof(why));
      if (have < 0) gd_log(log_level, GD_LOG_WARNING, "remembered policy ignored: %s; it is rebuilt when tuned", why);
      else if (have) gd_log(log_level, GD_LOG_INFO, "tuner: policy remembered in %s", store->path);
    }
  }
  PolicyRequest req = policy_request(&d->cfg);
  if (policy_resolve(&dev->caps, &req, have > 0 ? &rem.policy : NULL, policy, err, errlen)) {
    remembered_free(&rem);
    return -1;
  }
  if (have > 0 && rem.tune && policy->v[POL_EXECUTION] == GD_EXEC_KERNELS) {
    *tune = rem.tune, *tune_len = rem.tune_len;
    rem.tune = NULL;
  }
  remembered_free(&rem);
  int sustained = d->cfg.v2.inference_preference == TFLITE_GPU_INFERENCE_PREFERENCE_SUSTAINED_SPEED;
  if (!((sustained && d->cfg.tune == GD_TUNE_AUTO && have <= 0) || d->cfg.tune == GD_TUNE_FORCE)) return 0;
  TuneResult r;
  tuner_run(dev, policy, req.min_memory, d->cfg.tune_budget, build, ctx, log_level, &r);
  int partition = 0;
  for (const char* c = d->partition_report; c && *c; ++c) partition += *c == '\n';
  record_tuning(d, partition, &r);
  if (r.timed) {
    *policy = r.policy;
    free(*tune);
    *tune = r.tune, *tune_len = r.tune_len;
    r.tune = NULL;
    if (policy_store_save(store, policy, *tune, *tune_len, why, sizeof(why)))
      gd_log(log_level, GD_LOG_WARNING, "tuner: the choice is not remembered: %s", why);
  }
  tune_result_free(&r);
  return 0;
}
