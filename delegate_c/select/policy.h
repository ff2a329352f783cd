/* The policy: every choice that depends on the device, for one partition,
 * in one struct. policy_resolve fills it, and is the only place that reads
 * the override variable or looks at the device's class to choose; the
 * selectors, passes, runtime and VM read the struct. Each field records
 * where its value came from: the rule table (policy_rules.c, which cites
 * the measurements behind each row), a measurement on this device (the
 * tuner, remembered), an option, or an override (option `policy`, or
 * TFLITE_GPU_POLICY for test suites).
 *
 * Capabilities and correctness (local memory, compute units, the grid
 * barrier's bound, NVIDIA's fence path) are facts of the device
 * (cl/device_caps.h), never policy. */
#ifndef TFLITE_GPU_POLICY_H
#define TFLITE_GPU_POLICY_H

#include <stddef.h>

#include "cl/device_caps.h"
#include "cl/target.h"
#include "config/options.h"

/* Each field: its name in the override syntax, explain's listing and the
 * remembered file. The order is the table's (kPolicyFields). */
typedef enum PolicyField {
  POL_EXECUTION,          /* GD_EXEC_KERNELS, _STEPPED or _PERSISTENT (config/options.h) */
  POL_KERNEL_SET,         /* GD_KSET_CPU or GD_KSET_GPU (cl/target.h) */
  POL_VM_FINE,            /* the VM's fine-grained bodies (conv2d_x4, one float4 a work-item) */
  POL_VM_GROUP_BODIES,    /* the GPU set's work-group bodies for long reductions (with vm_fine) */
  POL_VM_TILES,           /* the GPU set's conv and depthwise as VM bodies (with vm_group_bodies) */
  POL_VM_GROUPS_PER_UNIT, /* a persistent grid's groups per compute unit */
  POL_VM_SPLIT_CONV,      /* a conv of few tiles and a long reduction in two phases */
  POL_VM_SPLIT_REDUCE,    /* a reduction of long windows in two phases */
  POL_VM_SPLIT_FC,        /* a FULLY_CONNECTED of few outputs split over K */
  POL_VM_SPLIT_MIN_STEPS, /* the reduction steps from which those splits happen */
  POL_VM_SCHEDULE,        /* a persistent launch's phases by level (barriers only between dependent ones) */
  POL_FUSE_DW_1X1,        /* the dw_1x1 pass */
  POL_FUSE_PW_DW,         /* the pw_dw pass */
  POL_DW_1X1_MAX_TAPS,    /* its bound: depthwise loads per work-item */
  POL_PW_DW_MAX_LOADS,    /* its bound: 1x1 source loads per work-item */
  POL_COMMAND_BUFFER,     /* the dispatch list replayed as a recorded command buffer */
  POL_PINNED_STAGING,     /* inputs and outputs staged through pinned host buffers */
  POL_TUNE_GROUPS,        /* the tuner also times each dispatch's work-group size (kernels chosen) */
  /* Per device (the first partition's resolution decides them for the device): */
  POL_INLINE_RARE,        /* NVIDIA: the rare paths inlined (else out of line, GD_NOINLINE) */
  POL_VLOAD4,             /* NVIDIA: vload4 (else one aligned float4 access) */
  POL_BUILD_THREADS,      /* programs compiled on this many threads at once; 1 in the calling thread, 0 the cores */
  POL_NUM_FIELDS
} PolicyField;

typedef enum PolicySource { POL_SRC_RULE = 0, POL_SRC_MEASURED, POL_SRC_OPTION, POL_SRC_OVERRIDE } PolicySource;

typedef struct Policy {
  long v[POL_NUM_FIELDS];
  unsigned char src[POL_NUM_FIELDS]; /* PolicySource */
  const char* rule;                  /* the rule row's name ("cpu", "nvidia", "gpu") */
} Policy;

typedef struct PolicyFieldDesc {
  const char* name;
  long min, max;
  const char* const* names; /* value names (min..max), or NULL for numbers */
  int per_device;
  const char* help;
} PolicyFieldDesc;
extern const PolicyFieldDesc kPolicyFields[POL_NUM_FIELDS];
extern const char* const kPolicySourceNames[4];

/* What the options ask (PolicyRequest fields left 0 ask nothing). */
typedef struct PolicyRequest {
  int execution;          /* GD_EXEC_AUTO: the remembered choice, else the rule's */
  int kernel_set;         /* GD_KSET_AUTO: the rule's */
  int min_memory;         /* inference priority MIN_MEMORY_USAGE first: no persistent launch by rule or measurement */
  const char* overrides;  /* the option `policy`, or NULL */
} PolicyRequest;

/* What the options ask of every partition's policy: the options execution,
 * kernel_set and policy, and MIN_MEMORY_USAGE as the first priority. */
PolicyRequest policy_request(const GpuConfig* cfg);
/* The rule table's row for this device, every field's source "rule". */
void policy_rule(const GpuCaps* caps, Policy* out);
/* The field table and the rule rows as text (tflite_gpu_describe_policy). */
size_t policy_describe(char* buf, size_t size);
/* The policy of one partition: the rule, then the remembered fields
 * (remembered NULL: none), then the options, then TFLITE_GPU_POLICY, then
 * the option `policy`. 0, or -1 with err naming the bad override. */
int policy_resolve(const GpuCaps* caps, const PolicyRequest* req, const Policy* remembered, Policy* out, char* err,
                   size_t errlen);
/* Applies "name=value,name=value" to p with source src (value names or
 * numbers, inside each field's range). 0, or -1 with err naming what is
 * wrong; p is unchanged then. */
int policy_apply_text(Policy* p, const char* text, PolicySource src, char* err, size_t errlen);
/* "name=value" pairs of every field, "," apart (sources with with_source:
 * "execution=kernels:rule"); the length it needed. */
size_t policy_format(const Policy* p, int with_source, char* buf, size_t size);
/* A field's value as text (its value name, or the number) into buf. */
const char* policy_value_text(PolicyField f, long value, char* buf, size_t size);

/* The tuner's candidates for a partition whose resolved policy is base,
 * base first (what runs without tuning): kernels, persistent with the
 * rule's bodies, with the fine ones, with the GPU set's tiles, on a grid of
 * 2 groups per unit. A field the options or an override set is never
 * varied; min_memory leaves persistent out; identical ones once. */
enum { POLICY_MAX_CANDIDATES = 8 };
typedef struct PolicyCandidate {
  const char* name;
  Policy policy;
} PolicyCandidate;
int policy_candidates(const Policy* base, int min_memory, PolicyCandidate* out, int max);
/* The winner among n timed candidates (us[c] < 0: not timed): the fastest
 * if it beats candidate 0 by margin (0.05: 5%) or more, else 0; the
 * fastest of the rest when 0 was not timed; 0 when none was. */
int policy_choose(const double* us, int n, double margin);
/* The fields the tuner varies, where neither an option nor an override
 * set them, marked measured (the winner's, as remembered). */
void policy_mark_measured(Policy* p);

/* What the VM runs, composed from the fields (select_vm.c reads these). */
static inline int policy_vm(const Policy* p) {
  return p->v[POL_EXECUTION] == GD_EXEC_STEPPED || p->v[POL_EXECUTION] == GD_EXEC_PERSISTENT;
}
/* The kernel set a partition builds with: the VM encodes its phases from
 * the CPU set's dispatches (the register tiles, or the fine bodies; the
 * GPU set's come in only as vm_tiles), whatever kernel_set says for
 * kernels, so a VM execution builds with the CPU set. */
static inline long policy_build_kernel_set(const Policy* p) {
  return policy_vm(p) ? GD_KSET_CPU : p->v[POL_KERNEL_SET];
}

#endif
