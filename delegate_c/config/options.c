#include "config/options.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "util/log.h"
#include "cl/target.h"

TfLiteGpuDelegateOptionsV2 TfLiteGpuDelegateOptionsV2Default(void) {
  TfLiteGpuDelegateOptionsV2 o;
  memset(&o, 0, sizeof(o));
  o.is_precision_loss_allowed = -1; /* upstream's sentinel: follow the priorities */
  o.inference_preference = TFLITE_GPU_INFERENCE_PREFERENCE_FAST_SINGLE_ANSWER;
  o.inference_priority1 = TFLITE_GPU_INFERENCE_PRIORITY_MAX_PRECISION;
  o.inference_priority2 = TFLITE_GPU_INFERENCE_PRIORITY_AUTO;
  o.inference_priority3 = TFLITE_GPU_INFERENCE_PRIORITY_AUTO;
  o.experimental_flags = TFLITE_GPU_EXPERIMENTAL_FLAGS_ENABLE_QUANT;
  o.max_delegated_partitions = 1;
  return o;
}

void gpu_config_default(GpuConfig* cfg) {
  memset(cfg, 0, sizeof(*cfg));
  cfg->v2 = TfLiteGpuDelegateOptionsV2Default();
  cfg->log_level = GD_LOG_WARNING;
  cfg->tune_budget = GD_TUNE_BUDGET_DEFAULT;
}

void gpu_config_free(GpuConfig* cfg) {
  free(cfg->serialization_dir);
  free(cfg->model_token);
  free(cfg->device);
  free(cfg->policy);
  cfg->serialization_dir = cfg->model_token = cfg->device = cfg->policy = NULL;
  cfg->v2.serialization_dir = cfg->v2.model_token = NULL;
}

/* ---- value parsers: each returns 0, or -1 leaving a reason in err ---- */

static int parse_bool(const char* v, int* out) {
  static const char* yes[] = {"1", "true", "yes", "on"};
  static const char* no[] = {"0", "false", "no", "off"};
  for (size_t i = 0; i < 4; ++i) {
    if (strcasecmp(v, yes[i]) == 0) return *out = 1, 0;
    if (strcasecmp(v, no[i]) == 0) return *out = 0, 0;
  }
  return -1;
}

static int parse_int(const char* v, long long lo, long long hi, long long* out) {
  if (!*v) return -1;
  errno = 0;
  char* end = NULL;
  long long x = strtoll(v, &end, 0);
  if (errno || *end != '\0' || x < lo || x > hi) return -1;
  *out = x;
  return 0;
}

static const char* const kPriorityNames[] = {"AUTO", "MAX_PRECISION", "MIN_LATENCY", "MIN_MEMORY_USAGE"};
static const char* const kUsageNames[] = {"FAST_SINGLE_ANSWER", "SUSTAINED_SPEED", "BALANCED"};
static const char* const kLogNames[] = {"silent", "warning", "info", "verbose"};
const char* const kPartitionPolicyNames[3] = {"largest", "all", "measured"};

/* An enum given by name (case-insensitive, optional upstream prefix) or number. */
static int parse_enum(const char* v, const char* const* names, int n, const char* prefix, int* out) {
  size_t plen = strlen(prefix);
  const char* s = (plen && strncasecmp(v, prefix, plen) == 0) ? v + plen : v;
  for (int i = 0; i < n; ++i) {
    if (strcasecmp(s, names[i]) == 0) return *out = i, 0;
  }
  long long x;
  if (parse_int(v, 0, n - 1, &x) == 0) return *out = (int)x, 0;
  return -1;
}

static int dup_string(char** dst, const char* v) {
  char* copy = strdup(v);
  if (!copy) return -1;
  free(*dst);
  *dst = copy;
  return 0;
}

/* ---- the option table ---- */

typedef int (*OptionSetter)(GpuConfig* cfg, const char* value);

static int set_precision_loss(GpuConfig* c, const char* v) {
  int b;
  if (strcmp(v, "-1") == 0) return c->v2.is_precision_loss_allowed = -1, 0;
  if (parse_bool(v, &b)) return -1;
  c->v2.is_precision_loss_allowed = b;
  return 0;
}
static int set_preference(GpuConfig* c, const char* v) {
  int e;
  if (parse_enum(v, kUsageNames, 3, "TFLITE_GPU_INFERENCE_PREFERENCE_", &e)) return -1;
  c->v2.inference_preference = e;
  return 0;
}
static int set_sustained(GpuConfig* c, const char* v) {
  int b;
  if (parse_bool(v, &b)) return -1;
  c->v2.inference_preference =
      b ? TFLITE_GPU_INFERENCE_PREFERENCE_SUSTAINED_SPEED : TFLITE_GPU_INFERENCE_PREFERENCE_FAST_SINGLE_ANSWER;
  return 0;
}
static int set_priority(int32_t* field, const char* v) {
  int e;
  if (parse_enum(v, kPriorityNames, 4, "TFLITE_GPU_INFERENCE_PRIORITY_", &e)) return -1;
  *field = e;
  return 0;
}
static int set_priority1(GpuConfig* c, const char* v) { return set_priority(&c->v2.inference_priority1, v); }
static int set_priority2(GpuConfig* c, const char* v) { return set_priority(&c->v2.inference_priority2, v); }
static int set_priority3(GpuConfig* c, const char* v) { return set_priority(&c->v2.inference_priority3, v); }

/* A number, or flag names joined by '|' or ',' (ENABLE_QUANT|CL_ONLY). */
static int set_flags(GpuConfig* c, const char* v) {
  static const struct {
    const char* name;
    int64_t bit;
  } kFlags[] = {{"NONE", 0},
                {"ENABLE_QUANT", TFLITE_GPU_EXPERIMENTAL_FLAGS_ENABLE_QUANT},
                {"CL_ONLY", TFLITE_GPU_EXPERIMENTAL_FLAGS_CL_ONLY},
                {"GL_ONLY", TFLITE_GPU_EXPERIMENTAL_FLAGS_GL_ONLY},
                {"ENABLE_SERIALIZATION", TFLITE_GPU_EXPERIMENTAL_FLAGS_ENABLE_SERIALIZATION}};
  long long x;
  if (parse_int(v, 0, 15, &x) == 0) return c->v2.experimental_flags = x, 0;
  int64_t bits = 0;
  const char* p = v;
  while (*p) {
    size_t len = strcspn(p, "|,");
    int found = 0;
    for (size_t i = 0; i < sizeof(kFlags) / sizeof(kFlags[0]) && !found; ++i) {
      const char* name = kFlags[i].name;
      const char* full_prefix = "TFLITE_GPU_EXPERIMENTAL_FLAGS_";
      size_t fl = strlen(full_prefix);
      const char* q = p;
      size_t qlen = len;
      if (qlen > fl && strncasecmp(q, full_prefix, fl) == 0) q += fl, qlen -= fl;
      if (strlen(name) == qlen && strncasecmp(q, name, qlen) == 0) bits |= kFlags[i].bit, found = 1;
    }
    if (!found) return -1;
    p += len;
    if (*p) ++p;
  }
  c->v2.experimental_flags = bits;
  return 0;
}
static int set_enable_quant(GpuConfig* c, const char* v) {
  int b;
  if (parse_bool(v, &b)) return -1;
  if (b)
    c->v2.experimental_flags |= TFLITE_GPU_EXPERIMENTAL_FLAGS_ENABLE_QUANT;
  else
    c->v2.experimental_flags &= ~(int64_t)TFLITE_GPU_EXPERIMENTAL_FLAGS_ENABLE_QUANT;
  return 0;
}
static int set_backend(GpuConfig* c, const char* v) {
  /* Only OpenCL exists here; "gl" is refused rather than silently ignored. */
  if (*v == '\0' || strcasecmp(v, "cl") == 0 || strcasecmp(v, "opencl") == 0) {
    if (*v) c->v2.experimental_flags |= TFLITE_GPU_EXPERIMENTAL_FLAGS_CL_ONLY;
    return 0;
  }
  return -1;
}
static int set_max_partitions(GpuConfig* c, const char* v) {
  long long x;
  if (parse_int(v, 0, INT_MAX, &x)) return -1;
  c->v2.max_delegated_partitions = (int32_t)x;
  return 0;
}
static int set_serialization_dir(GpuConfig* c, const char* v) { return dup_string(&c->serialization_dir, v); }
static int set_model_token(GpuConfig* c, const char* v) { return dup_string(&c->model_token, v); }
static int set_device(GpuConfig* c, const char* v) {
  /* Longer than any "platform device" name it could match (cl_device.c
   * compares against 600 bytes): refused here, where the echo is cut short. */
  if (!*v || strlen(v) >= 600) return -1;
  return dup_string(&c->device, v);
}
static int set_kernel_set(GpuConfig* c, const char* v) {
  int k = kernel_set_parse(v);
  if (k < 0) return -1;
  c->kernel_set = k;
  return 0;
}
static int set_partition_policy(GpuConfig* c, const char* v) {
  return parse_enum(v, kPartitionPolicyNames, 3, "", &c->partition_policy);
}
static const char* const kGuardNames[] = {"off", "on"};
const char* const kExecutionNames[4] = {"auto", "kernels", "stepped", "persistent"};
static int set_execution(GpuConfig* c, const char* v) { return parse_enum(v, kExecutionNames, 4, "", &c->execution); }
static int set_fp16_guard(GpuConfig* c, const char* v) { return parse_enum(v, kGuardNames, 2, "", &c->fp16_guard); }
const char* const kTuneNames[3] = {"auto", "force", "clear"};
static int set_tune(GpuConfig* c, const char* v) { return parse_enum(v, kTuneNames, 3, "", &c->tune); }
static int set_tune_budget(GpuConfig* c, const char* v) {
  char* end;
  double s = strtod(v, &end);
  if (end == v || *end || !(s >= 0 && s <= 3600)) return -1;
  c->tune_budget = s;
  return 0;
}
/* Checked field by field when the delegate is created (select/policy.c),
 * where the field table lives; here only its shape. */
static int set_policy(GpuConfig* c, const char* v) {
  if (strlen(v) >= 2000 || strpbrk(v, " \t;:")) return -1;
  return *v ? dup_string(&c->policy, v) : 0;
}
static int set_log_level(GpuConfig* c, const char* v) {
  int e;
  if (parse_enum(v, kLogNames, 4, "", &e)) return -1;
  c->log_level = e;
  return 0;
}

typedef struct OptionSpec {
  const char* key;
  const char* aliases; /* comma-separated, may be "" */
  const char* accepted;
  const char* default_text;
  const char* help;
  OptionSetter set;
} OptionSpec;

static const OptionSpec kOptions[] = {
    {"is_precision_loss_allowed", "", "-1, true/false/1/0", "-1",
     "-1: follow the priorities (FP32 by default); 1: FP16 storage, FP32 math; 0: FP32", set_precision_loss},
    {"gpu_precision_loss_allowed", "precision_loss_allowed", "true/false/1/0", "-1",
     "upstream tools' spelling of is_precision_loss_allowed", set_precision_loss},
    {"inference_preference", "", "FAST_SINGLE_ANSWER, SUSTAINED_SPEED, BALANCED or 0-2", "FAST_SINGLE_ANSWER",
     "TfLiteGpuInferenceUsage; SUSTAINED_SPEED also tunes each partition at its first start on a device (option "
     "tune): its candidate policies (kernels, persistent, the VM's bodies and grids) and then the kernels' "
     "work-group sizes timed, the fastest that agrees with the first remembered in the cache directory",
     set_preference},
    {"gpu_inference_for_sustained_speed", "", "true/false", "false",
     "true sets inference_preference=SUSTAINED_SPEED", set_sustained},
    {"inference_priority1", "", "AUTO, MAX_PRECISION, MIN_LATENCY, MIN_MEMORY_USAGE or 0-3", "MAX_PRECISION",
     "first TfLiteGpuInferencePriority; MAX_PRECISION first means FP32", set_priority1},
    {"inference_priority2", "", "AUTO, MAX_PRECISION, MIN_LATENCY, MIN_MEMORY_USAGE or 0-3", "AUTO",
     "second priority", set_priority2},
    {"inference_priority3", "", "AUTO, MAX_PRECISION, MIN_LATENCY, MIN_MEMORY_USAGE or 0-3", "AUTO",
     "third priority", set_priority3},
    {"experimental_flags", "", "0-15 or names joined by '|': ENABLE_QUANT, CL_ONLY, GL_ONLY, ENABLE_SERIALIZATION",
     "ENABLE_QUANT", "TfLiteGpuExperimentalFlags bits", set_flags},
    {"gpu_experimental_enable_quant", "enable_quant", "true/false", "true",
     "sets or clears the ENABLE_QUANT flag", set_enable_quant},
    {"gpu_backend", "backend", "cl, opencl or empty", "", "only OpenCL is implemented; 'cl' sets CL_ONLY",
     set_backend},
    {"max_delegated_partitions", "", "integer >= 0 (0 means 1)", "1",
     "how many partitions to delegate, largest first", set_max_partitions},
    {"partition_policy", "", "largest, all, measured or 0-2", "largest",
     "which partitions to delegate: the largest max_delegated_partitions (upstream's rule), all of them, or the "
     "set that minimises the model's time, each partition timed once on the device against its estimated CPU "
     "time (at most max_delegated_partitions)",
     set_partition_policy},
    {"fp16_guard", "", "off, on or 0-1", "off",
     "with FP16 storage: each partition is also run once on float storage at start-up (seeded inputs in [-1, 1)), "
     "and an output more than 0.5% relative L2 from it keeps everything it depends on in float; costs a second "
     "build and two runs per partition at start-up",
     set_fp16_guard},
    {"serialization_dir", "delegate_serialize_dir,serialize_dir", "a directory path", "",
     "kernel cache directory: with model_token, compiled programs are saved there and loaded on the next start "
     "(it must exist and not be writable by others)",
     set_serialization_dir},
    {"model_token", "delegate_serialize_token,serialize_token", "a string", "",
     "names the model in the kernel cache; tflite_gpu.model_token(path) fingerprints the model's bytes",
     set_model_token},
    {"device", "gpu_device", "an OpenCL device index (0, 1, ...) or a name substring", "first GPU, else first device",
     "which OpenCL device to use", set_device},
    {"kernel_set", "", "auto, cpu or gpu", "auto",
     "which kernel family runs the ops: gpu (work-group tiles in local memory), cpu (register tiles for SIMD "
     "cores), or auto (the device's policy: gpu on GPU devices, cpu elsewhere)",
     set_kernel_set},
    {"execution", "", "auto, kernels, stepped or persistent", "auto",
     "how a partition runs: kernels (one launch per kernel), stepped (the partition as data for one VM program "
     "of the cpu kernel set's bodies, a launch per step), persistent (the same program, one launch per segment, "
     "grid barriers between steps; falls back to stepped where a barrier times out); auto: what the tuner "
     "remembered for the partition on this device, else the device's rule (kernels on every device class so far)",
     set_execution},
    {"policy", "", "name=value[,name=value...] of the policy's fields", "",
     "overrides the device's choices for experiments (the fields and their values: tflite-gpu explain, "
     "docs/policy.md); beats the rule, the remembered tuning and the options",
     set_policy},
    {"tune", "", "auto, force or clear", "auto",
     "when the tuner times each partition's candidate policies on the device and remembers the fastest that "
     "agrees with the first: auto (with SUSTAINED_SPEED, when nothing is remembered), force (now), clear (forget "
     "what is remembered, time nothing)",
     set_tune},
    {"tune_budget", "", "seconds, 0-3600", "30",
     "the most one partition's tuning may take; candidates past it are skipped, and said to be (0 times nothing)",
     set_tune_budget},
    {"log_level", "", "silent, warning, info, verbose or 0-3", "warning", "what the delegate prints to stderr",
     set_log_level},
};
enum { kNumOptions = sizeof(kOptions) / sizeof(kOptions[0]) };

static const OptionSpec* find_option(const char* key) {
  for (int i = 0; i < kNumOptions; ++i) {
    if (strcmp(key, kOptions[i].key) == 0) return &kOptions[i];
    const char* a = kOptions[i].aliases;
    size_t klen = strlen(key);
    while (*a) {
      size_t len = strcspn(a, ",");
      if (len == klen && strncmp(a, key, len) == 0) return &kOptions[i];
      a += len;
      if (*a) ++a;
    }
  }
  return NULL;
}

/* A user-given string as it may appear in a message: at most 80
 * characters ("..." and the length after), control bytes as \xNN, so a
 * huge or binary value is never echoed whole. */
#define QUOTE_MAX 80
#define QUOTE_SIZE (QUOTE_MAX * 4 + 48)
static const char* quoted(char buf[QUOTE_SIZE], const char* s) {
  size_t len = strlen(s), used = 0;
  for (size_t i = 0; i < len && i < QUOTE_MAX; ++i) {
    unsigned char c = (unsigned char)s[i];
    if (c < 0x20 || c == 0x7f)
      used += (size_t)snprintf(buf + used, QUOTE_SIZE - used, "\\x%02x", c);
    else
      buf[used++] = (char)c;
  }
  buf[used] = '\0';
  if (len > QUOTE_MAX) snprintf(buf + used, QUOTE_SIZE - used, "... (%zu bytes)", len);
  return buf;
}

/* Mistakes a path value shows on its face: a Python bytes object turned
 * into text by str() (b'/tmp' arrives as the 7 characters "b'/tmp'"), or
 * more than a path can hold. 0, or -1 with the reason. */
static int check_path(const char* key, const char* v, char* err, size_t errlen) {
  size_t len = strlen(v);
  char q[QUOTE_SIZE];
  if (len >= 3 && v[0] == 'b' && (v[1] == '\'' || v[1] == '"') && v[len - 1] == v[1]) {
    snprintf(err, errlen,
             "option %s=%s looks like a Python bytes object turned into text by str(); "
             "pass the path as a str (os.fsdecode(path))", key, quoted(q, v));
    return -1;
  }
  if (len >= PATH_MAX) {
    snprintf(err, errlen, "option %s is %zu bytes long; a path holds at most %d: '%s'", key, len, PATH_MAX - 1,
             quoted(q, v));
    return -1;
  }
  return 0;
}

static int config_finish(GpuConfig* cfg, char* err, size_t errlen) {
  TfLiteGpuDelegateOptionsV2* o = &cfg->v2;
  if (o->is_precision_loss_allowed < -1 || o->is_precision_loss_allowed > 1) {
    snprintf(err, errlen, "is_precision_loss_allowed=%d is out of range; accepted: -1, 0, 1",
             o->is_precision_loss_allowed);
    return -1;
  }
  if (o->inference_preference < 0 || o->inference_preference > 2) {
    snprintf(err, errlen, "inference_preference=%d is out of range; accepted: 0-2", o->inference_preference);
    return -1;
  }
  int32_t p[3] = {o->inference_priority1, o->inference_priority2, o->inference_priority3};
  for (int i = 0; i < 3; ++i) {
    if (p[i] < 0 || p[i] > 3) {
      snprintf(err, errlen, "inference_priority%d=%d is out of range; accepted: 0-3", i + 1, p[i]);
      return -1;
    }
  }
  /* Upstream's validity rules (api.cc IsValid). */
  if (p[0] == 0 || (p[1] == 0 && p[2] != 0) || (p[1] != 0 && p[1] == p[0]) || (p[2] != 0 && p[2] == p[0]) ||
      (p[2] != 0 && p[2] == p[1])) {
    snprintf(err, errlen,
             "invalid priorities inference_priority1=%s, inference_priority2=%s, inference_priority3=%s: "
             "priority1 must not be AUTO, priority3 must be AUTO when priority2 is, and no priority may repeat",
             kPriorityNames[p[0]], kPriorityNames[p[1]], kPriorityNames[p[2]]);
    return -1;
  }
  if (o->experimental_flags & TFLITE_GPU_EXPERIMENTAL_FLAGS_GL_ONLY) {
    snprintf(err, errlen, "experimental_flags has GL_ONLY, but this delegate implements OpenCL only");
    return -1;
  }
  if (o->experimental_flags & ~(int64_t)15) {
    snprintf(err, errlen, "experimental_flags=%lld has unknown bits; accepted: 0-15", (long long)o->experimental_flags);
    return -1;
  }
  if (o->max_delegated_partitions <= 0) o->max_delegated_partitions = 1; /* as upstream */
  o->serialization_dir = cfg->serialization_dir;
  o->model_token = cfg->model_token;

  /* Precision: MAX_PRECISION first means FP32; anywhere else (or absent)
   * means upstream would pick F16 or F32_F16. We always accumulate in FP32,
   * so both become FP16 storage here. */
  if (o->is_precision_loss_allowed == -1) {
    int32_t first = p[0];
    if (first == TFLITE_GPU_INFERENCE_PRIORITY_AUTO) first = TFLITE_GPU_INFERENCE_PRIORITY_MAX_PRECISION;
    cfg->fp16 = first != TFLITE_GPU_INFERENCE_PRIORITY_MAX_PRECISION;
  } else {
    cfg->fp16 = o->is_precision_loss_allowed == 1;
  }
  return 0;
}

int gpu_config_from_options(GpuConfig* cfg, const TfLiteGpuDelegateOptionsV2* options, char* err, size_t errlen) {
  gpu_config_default(cfg);
  if (options) {
    cfg->v2 = *options;
    cfg->v2.serialization_dir = cfg->v2.model_token = NULL;
    if ((options->serialization_dir && dup_string(&cfg->serialization_dir, options->serialization_dir)) ||
        (options->model_token && dup_string(&cfg->model_token, options->model_token))) {
      snprintf(err, errlen, "out of memory copying options");
      gpu_config_free(cfg);
      return -1;
    }
  }
  if (config_finish(cfg, err, errlen)) {
    gpu_config_free(cfg);
    return -1;
  }
  return 0;
}

int gpu_config_from_strings(GpuConfig* cfg, const char* const* keys, const char* const* values, int n, char* err,
                            size_t errlen) {
  gpu_config_default(cfg);
  int dir_given = 0, token_given = 0;
  for (int i = 0; i < n; ++i) {
    const char* key = keys ? keys[i] : NULL;
    const char* value = values ? values[i] : NULL;
    if (!key || !value) {
      snprintf(err, errlen, "option %d has a NULL key or value", i);
      gpu_config_free(cfg);
      return -1;
    }
    const OptionSpec* spec = find_option(key);
    char qk[QUOTE_SIZE], qv[QUOTE_SIZE];
    if (!spec) {
      size_t used = (size_t)snprintf(err, errlen, "unknown option '%s' (value '%s'); accepted keys:", quoted(qk, key),
                                     quoted(qv, value));
      for (int k = 0; k < kNumOptions && used < errlen; ++k)
        used += (size_t)snprintf(err + used, errlen - used, "%s %s", k ? "," : "", kOptions[k].key);
      gpu_config_free(cfg);
      return -1;
    }
    /* serialization_dir is the one path option. */
    if (spec->set == set_serialization_dir && check_path(key, value, err, errlen)) {
      gpu_config_free(cfg);
      return -1;
    }
    if (spec->set(cfg, value)) {
      snprintf(err, errlen, "option %s has an invalid value '%s'; accepted: %s", key, quoted(qv, value),
               spec->accepted);
      gpu_config_free(cfg);
      return -1;
    }
    if (spec->set == set_serialization_dir) dir_given = *value != '\0';
    if (spec->set == set_model_token) token_given = *value != '\0';
  }
  /* As upstream's tools: a directory and a token together turn caching on. */
  if (dir_given && token_given) cfg->v2.experimental_flags |= TFLITE_GPU_EXPERIMENTAL_FLAGS_ENABLE_SERIALIZATION;
  if (config_finish(cfg, err, errlen)) {
    gpu_config_free(cfg);
    return -1;
  }
  return 0;
}

size_t gpu_config_describe(char* buf, size_t size) {
  size_t used = 0;
  for (int i = 0; i < kNumOptions; ++i) {
    const OptionSpec* o = &kOptions[i];
    int n = snprintf(used < size ? buf + used : NULL, used < size ? size - used : 0, "%s\t%s\t%s\t%s\t%s\n", o->key,
                     o->aliases, o->accepted, o->default_text, o->help);
    if (n > 0) used += (size_t)n;
  }
  return used;
}

/* The options as the library resolves them (aliases, priorities, defaults),
 * one "key\tvalue" line each, for tools that must not re-derive them from
 * option spellings: precision (fp16 or fp32), is_precision_loss_allowed,
 * inference_preference, inference_priority1-3, experimental_flags,
 * max_delegated_partitions, partition_policy, fp16_guard, serialization (1: kernel cache on),
 * serialization_dir, model_token, device, kernel_set and execution (as
 * requested; auto is the policy's, per partition), log_level, policy (the
 * overrides as given), tune and tune_budget.
 * Returns the text's length (call with size 0 to size the buffer), or -1
 * with the reason in err when the options are rejected. */
TFLITE_GPU_EXPORT int tflite_gpu_resolve_options(const char* const* keys, const char* const* values, int n,
                                                 char* buf, size_t size, char* err, size_t errlen) {
  GpuConfig cfg;
  if (gpu_config_from_strings(&cfg, keys, values, n, err, errlen)) return -1;
  const TfLiteGpuDelegateOptionsV2* o = &cfg.v2;
  char tmp[1];
  if (!buf || !size) buf = tmp, size = 1;
  int len = snprintf(
      buf, size,
      "precision\t%s\nis_precision_loss_allowed\t%d\ninference_preference\t%s\ninference_priority1\t%s\n"
      "inference_priority2\t%s\ninference_priority3\t%s\nexperimental_flags\t%lld\nmax_delegated_partitions\t%d\n"
      "partition_policy\t%s\nfp16_guard\t%s\nserialization\t%d\nserialization_dir\t%s\nmodel_token\t%s\ndevice\t%s\nkernel_set\t%s\nexecution\t%s\nlog_level\t%s\n"
      "policy\t%s\ntune\t%s\ntune_budget\t%g\n",
      cfg.fp16 ? "fp16" : "fp32", o->is_precision_loss_allowed,
      o->inference_preference >= 0 && o->inference_preference < 3 ? kUsageNames[o->inference_preference] : "?",
      kPriorityNames[o->inference_priority1], kPriorityNames[o->inference_priority2],
      kPriorityNames[o->inference_priority3], (long long)o->experimental_flags, o->max_delegated_partitions,
      kPartitionPolicyNames[cfg.partition_policy], kGuardNames[cfg.fp16_guard],
      (o->experimental_flags & TFLITE_GPU_EXPERIMENTAL_FLAGS_ENABLE_SERIALIZATION) ? 1 : 0,
      cfg.serialization_dir ? cfg.serialization_dir : "", cfg.model_token ? cfg.model_token : "",
      cfg.device ? cfg.device : "", kernel_set_name((KernelSet)cfg.kernel_set), kExecutionNames[cfg.execution],
      cfg.log_level >= 0 && cfg.log_level < 4 ? kLogNames[cfg.log_level] : "?", cfg.policy ? cfg.policy : "",
      kTuneNames[cfg.tune], cfg.tune_budget);
  gpu_config_free(&cfg);
  return len;
}
