/* See policy.h: the field table and the override syntax. */
#include "select/policy.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


static const char* const kExecution[] = {"auto", "kernels", "stepped", "persistent"};
static const char* const kKernelSet[] = {"auto", "cpu", "gpu"};
const char* const kPolicySourceNames[4] = {"rule", "measured", "option", "override"};

#define BOOL_FIELD(name, help) {name, 0, 1, NULL, 0, help}
const PolicyFieldDesc kPolicyFields[POL_NUM_FIELDS] = {
    [POL_EXECUTION] = {"execution", GD_EXEC_KERNELS, GD_EXEC_PERSISTENT, kExecution, 0,
                       "kernels: a launch per dispatch; stepped: the VM program a launch per phase; persistent: "
                       "one launch per invoke, grid barriers between phases"},
    [POL_KERNEL_SET] = {"kernel_set", GD_KSET_CPU, GD_KSET_GPU, kKernelSet, 0,
                        "cpu: register tiles for SIMD cores; gpu: work-group kernels with __local tiles"},
    [POL_VM_FINE] = BOOL_FIELD("vm_fine", "the VM's fine-grained bodies (4 pixels x 4 channels a work-item)"),
    [POL_VM_GROUP_BODIES] = BOOL_FIELD("vm_group_bodies",
                                       "long reductions as the GPU set's work-group bodies (with vm_fine)"),
    [POL_VM_TILES] = BOOL_FIELD("vm_tiles", "the GPU set's conv and depthwise as VM bodies (with vm_group_bodies)"),
    [POL_VM_GROUPS_PER_UNIT] = {"vm_groups_per_unit", 1, 4, NULL, 0, "a persistent grid's groups per compute unit"},
    [POL_VM_SPLIT_CONV] = BOOL_FIELD("vm_split_conv", "a conv of few tiles and a long reduction in two phases"),
    [POL_VM_SPLIT_REDUCE] = BOOL_FIELD("vm_split_reduce", "a reduction of long windows in two phases"),
    [POL_VM_SPLIT_FC] = BOOL_FIELD("vm_split_fc", "a fully connected layer of few outputs split over its inputs"),
    [POL_VM_SPLIT_MIN_STEPS] = {"vm_split_min_steps", 1, 1L << 20, NULL, 0,
                                "reduction steps from which the VM splits (vm_split_*)"},
    [POL_VM_SCHEDULE] = BOOL_FIELD("vm_schedule", "a persistent launch's phases by level, barriers only between "
                                                  "dependent ones (0: dispatch order)"),
    [POL_FUSE_DW_1X1] = BOOL_FIELD("fuse_dw_1x1", "the dw_1x1 pass (a depthwise read by a 1x1, one launch)"),
    [POL_FUSE_PW_DW] = BOOL_FIELD("fuse_pw_dw", "the pw_dw pass (a 1x1 read by a depthwise, one launch)"),
    [POL_DW_1X1_MAX_TAPS] = {"dw_1x1_max_taps", 0, 1L << 30, NULL, 0,
                             "dw_1x1's bound: serial depthwise loads per work-item"},
    [POL_PW_DW_MAX_LOADS] = {"pw_dw_max_loads", 0, 1L << 30, NULL, 0, "pw_dw's bound: 1x1 loads per work-item"},
    [POL_COMMAND_BUFFER] = BOOL_FIELD("command_buffer", "the dispatch list replayed as a recorded command buffer "
                                                        "(cl_khr_command_buffer devices)"),
    [POL_PINNED_STAGING] = BOOL_FIELD("pinned_staging", "inputs and outputs staged through pinned host buffers"),
    [POL_TUNE_GROUPS] = BOOL_FIELD("tune_groups", "the tuner also times each dispatch's work-group size (when it keeps kernels)"),
    [POL_INLINE_RARE] = {"inline_rare", 0, 1, NULL, 1, "NVIDIA: the rare paths inlined (0: out of line)"},
    [POL_VLOAD4] = {"vload4", 0, 1, NULL, 1, "NVIDIA: vload4 (0: one aligned float4 access)"},
    [POL_BUILD_THREADS] = {"build_threads", 0, 8, NULL, 1,
                           "threads a partition's programs compile on (1: the calling thread; 0: the cores)"},
};

const char* policy_value_text(PolicyField f, long value, char* buf, size_t size) {
  const PolicyFieldDesc* d = &kPolicyFields[f];
  if (d->names && value >= 0 && value <= d->max) return d->names[value];
  snprintf(buf, size, "%ld", value);
  return buf;
}

static int field_of(const char* name, size_t len) {
  for (int f = 0; f < POL_NUM_FIELDS; ++f)
    if (strlen(kPolicyFields[f].name) == len && !strncmp(kPolicyFields[f].name, name, len)) return f;
  return -1;
}

/* A field's value from text: a value name (case as written) or a number in range. */
static int parse_value(int f, const char* v, size_t len, long* out) {
  const PolicyFieldDesc* d = &kPolicyFields[f];
  for (long i = d->min; d->names && i <= d->max; ++i)
    if (strlen(d->names[i]) == len && !strncmp(d->names[i], v, len)) return *out = i, 0;
  char num[32];
  if (!len || len >= sizeof(num)) return -1;
  memcpy(num, v, len);
  num[len] = '\0';
  char* end;
  errno = 0;
  long x = strtol(num, &end, 10);
  if (*end || errno || x < d->min || x > d->max) return -1;
  return *out = x, 0;
}

static void allowed(int f, char* buf, size_t size) {
  const PolicyFieldDesc* d = &kPolicyFields[f];
  if (!d->names) {
    snprintf(buf, size, "%ld-%ld", d->min, d->max);
    return;
  }
  size_t used = 0;
  buf[0] = '\0';
  for (long i = d->min; i <= d->max && used < size; ++i)
    used += (size_t)snprintf(buf + used, size - used, "%s%s", i > d->min ? ", " : "", d->names[i]);
}

int policy_apply_text(Policy* p, const char* text, PolicySource src, char* err, size_t errlen) {
  Policy out = *p;
  for (const char* s = text; s && *s;) {
    const char* end = strchr(s, ',');
    size_t len = end ? (size_t)(end - s) : strlen(s);
    const char* eq = memchr(s, '=', len);
    if (len) {
      int f = eq ? field_of(s, (size_t)(eq - s)) : -1;
      if (f < 0) {
        char names[800];
        size_t used = 0;
        for (int i = 0; i < POL_NUM_FIELDS && used < sizeof(names); ++i)
          used += (size_t)snprintf(names + used, sizeof(names) - used, "%s%s", i ? ", " : "", kPolicyFields[i].name);
        snprintf(err, errlen, "'%.*s' is not name=value of a policy field (%s)", (int)(eq ? eq - s : (long)len), s,
                 names);
        return -1;
      }
      long v;
      if (parse_value(f, eq + 1, len - (size_t)(eq + 1 - s), &v)) {
        char ok[200];
        allowed(f, ok, sizeof(ok));
        snprintf(err, errlen, "%s=%.*s: accepted %s", kPolicyFields[f].name, (int)(len - (size_t)(eq + 1 - s)), eq + 1,
                 ok);
        return -1;
      }
      out.v[f] = v;
      out.src[f] = (unsigned char)src;
    }
    s = end ? end + 1 : NULL;
  }
  *p = out;
  return 0;
}

size_t policy_format(const Policy* p, int with_source, char* buf, size_t size) {
  size_t used = 0;
  if (size) buf[0] = '\0';
  for (int f = 0; f < POL_NUM_FIELDS; ++f) {
    char num[32];
    int n = snprintf(used < size ? buf + used : NULL, used < size ? size - used : 0, "%s%s=%s%s%s", f ? "," : "",
                     kPolicyFields[f].name, policy_value_text((PolicyField)f, p->v[f], num, sizeof(num)),
                     with_source ? ":" : "", with_source ? kPolicySourceNames[p->src[f]] : "");
    if (n > 0) used += (size_t)n;
  }
  return used;
}
