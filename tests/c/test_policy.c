/* uses: select/policy.c select/policy_rules.c select/policy_resolve.c select/policy_tune.c util/env_hooks.c */
/* The policy (select/policy.h) from faked device capabilities, with an
 * empty environment: the rule table's row per device class, the order in
 * which a remembered choice, the options and the overrides apply, the
 * override syntax's errors, and the tuner's candidates and choice. */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "select/policy.h"

static GpuCaps caps_of(int is_gpu, int is_cpu, GpuVendor vendor) {
  GpuCaps c;
  memset(&c, 0, sizeof(c));
  c.is_gpu = is_gpu, c.is_cpu = is_cpu, c.vendor_id = vendor, c.compute_units = 8;
  return c;
}

static void test_rules_per_device_class(void) {
  struct {
    GpuCaps caps;
    const char* row;
    long kernel_set, vm_fine, pinned;
  } cases[] = {
      {caps_of(0, 1, GD_VENDOR_POCL), "cpu", GD_KSET_CPU, 0, 0},     /* PoCL */
      {caps_of(0, 1, GD_VENDOR_INTEL), "cpu", GD_KSET_CPU, 0, 0},    /* Intel's CPU runtime */
      {caps_of(1, 0, GD_VENDOR_NVIDIA), "nvidia", GD_KSET_GPU, 1, 1}, /* H100, H200 */
      {caps_of(1, 0, GD_VENDOR_ARM), "gpu", GD_KSET_GPU, 1, 1},      /* Mali: never measured */
      {caps_of(1, 0, GD_VENDOR_AMD), "gpu", GD_KSET_GPU, 1, 1},
      {caps_of(1, 1, GD_VENDOR_OCLGRIND), "gpu", GD_KSET_GPU, 1, 1}, /* both: a GPU */
  };
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); ++i) {
    Policy p;
    policy_rule(&cases[i].caps, &p);
    CHECK(!strcmp(p.rule, cases[i].row), "case %zu: row %s, want %s", i, p.rule, cases[i].row);
    CHECK(p.v[POL_EXECUTION] == GD_EXEC_KERNELS, "case %zu: kernels by rule everywhere (tuned per partition)", i);
    CHECK(p.v[POL_KERNEL_SET] == cases[i].kernel_set, "case %zu: kernel set %ld", i, p.v[POL_KERNEL_SET]);
    CHECK(p.v[POL_VM_FINE] == cases[i].vm_fine && p.v[POL_PINNED_STAGING] == cases[i].pinned, "case %zu", i);
    CHECK(p.v[POL_VM_GROUPS_PER_UNIT] == 1 && p.v[POL_VM_TILES] == 0 && p.v[POL_COMMAND_BUFFER] == 0 &&
              p.v[POL_BUILD_THREADS] == 1 && p.v[POL_DW_1X1_MAX_TAPS] == 576,
          "case %zu: the common fields", i);
    for (int f = 0; f < POL_NUM_FIELDS; ++f) {
      CHECK(p.src[f] == POL_SRC_RULE, "case %zu: field %d from the rule", i, f);
      CHECK(p.v[f] >= kPolicyFields[f].min && p.v[f] <= kPolicyFields[f].max, "case %zu: %s in range", i,
            kPolicyFields[f].name);
    }
  }
}

static void test_precedence(void) {
  GpuCaps cpu = caps_of(0, 1, GD_VENDOR_POCL);
  Policy remembered, p;
  char err[600];
  policy_rule(&cpu, &remembered);
  remembered.v[POL_EXECUTION] = GD_EXEC_PERSISTENT, remembered.src[POL_EXECUTION] = POL_SRC_MEASURED;
  remembered.v[POL_VM_FINE] = 1, remembered.src[POL_VM_FINE] = POL_SRC_MEASURED;
  remembered.v[POL_BUILD_THREADS] = 4, remembered.src[POL_BUILD_THREADS] = POL_SRC_MEASURED; /* per device: never */
  PolicyRequest none = {GD_EXEC_AUTO, GD_KSET_AUTO, 0, NULL};
  CHECK(policy_resolve(&cpu, &none, &remembered, &p, err, sizeof(err)) == 0, "%s", err);
  CHECK(p.v[POL_EXECUTION] == GD_EXEC_PERSISTENT && p.src[POL_EXECUTION] == POL_SRC_MEASURED, "remembered");
  CHECK(p.v[POL_VM_FINE] == 1 && p.v[POL_BUILD_THREADS] == 1 && p.src[POL_BUILD_THREADS] == POL_SRC_RULE,
        "a remembered per-device field is not taken");
  PolicyRequest mem = {GD_EXEC_AUTO, GD_KSET_AUTO, 1, NULL};
  CHECK(policy_resolve(&cpu, &mem, &remembered, &p, err, sizeof(err)) == 0 && p.v[POL_EXECUTION] == GD_EXEC_KERNELS,
        "MIN_MEMORY_USAGE: no persistent from a measurement");
  PolicyRequest opt = {GD_EXEC_STEPPED, GD_KSET_GPU, 1, NULL};
  CHECK(policy_resolve(&cpu, &opt, &remembered, &p, err, sizeof(err)) == 0, "%s", err);
  CHECK(p.v[POL_EXECUTION] == GD_EXEC_STEPPED && p.src[POL_EXECUTION] == POL_SRC_OPTION &&
            p.v[POL_KERNEL_SET] == GD_KSET_GPU && p.src[POL_KERNEL_SET] == POL_SRC_OPTION,
        "an option beats the remembered choice");
  setenv("TFLITE_GPU_POLICY", "execution=kernels,vm_groups_per_unit=3", 1);
  PolicyRequest over = {GD_EXEC_STEPPED, GD_KSET_AUTO, 0, "execution=persistent"};
  CHECK(policy_resolve(&cpu, &over, &remembered, &p, err, sizeof(err)) == 0, "%s", err);
  CHECK(p.v[POL_EXECUTION] == GD_EXEC_PERSISTENT && p.src[POL_EXECUTION] == POL_SRC_OVERRIDE,
        "the option policy beats TFLITE_GPU_POLICY, which beats the options");
  CHECK(p.v[POL_VM_GROUPS_PER_UNIT] == 3 && p.src[POL_VM_GROUPS_PER_UNIT] == POL_SRC_OVERRIDE, "the variable's field");
  setenv("TFLITE_GPU_POLICY", "vm_groups_per_unit=9", 1);
  CHECK(policy_resolve(&cpu, &none, NULL, &p, err, sizeof(err)) == -1 && strstr(err, "TFLITE_GPU_POLICY") &&
            strstr(err, "accepted 1-4"),
        "a bad variable is named: %s", err);
  unsetenv("TFLITE_GPU_POLICY");
}

static void test_override_syntax(void) {
  GpuCaps gpu = caps_of(1, 0, GD_VENDOR_NVIDIA);
  Policy p, before;
  char err[600];
  policy_rule(&gpu, &p);
  before = p;
  CHECK(policy_apply_text(&p, "vm_tiles=1,execution=stepped,,kernel_set=cpu", POL_SRC_OVERRIDE, err, sizeof(err)) == 0,
        "%s", err);
  CHECK(p.v[POL_VM_TILES] == 1 && p.v[POL_EXECUTION] == GD_EXEC_STEPPED && p.v[POL_KERNEL_SET] == GD_KSET_CPU,
        "names and numbers");
  const char* bad[] = {"vm_tiles", "no_such=1", "vm_tiles=2", "execution=fast", "vm_split_min_steps=0",
                       "vm_groups_per_unit=", "dw_1x1_max_taps=12x"};
  for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); ++i) {
    Policy q = before;
    CHECK(policy_apply_text(&q, bad[i], POL_SRC_OVERRIDE, err, sizeof(err)) == -1 && err[0], "'%s' refused", bad[i]);
    CHECK(!memcmp(&q, &before, sizeof(q)), "'%s' leaves the policy as it was", bad[i]);
  }
  char text[2048];
  policy_format(&p, 1, text, sizeof(text));
  CHECK(strstr(text, "execution=stepped:override,kernel_set=cpu:override,vm_fine=1:rule") == text, "%s", text);
  Policy back = before;
  policy_format(&p, 0, text, sizeof(text));
  CHECK(policy_apply_text(&back, text, POL_SRC_MEASURED, err, sizeof(err)) == 0 && !memcmp(back.v, p.v, sizeof(p.v)),
        "the format reads back: %s", err);
}

static void test_candidates_and_choice(void) {
  GpuCaps cpu = caps_of(0, 1, GD_VENDOR_POCL), gpu = caps_of(1, 0, GD_VENDOR_NVIDIA);
  PolicyCandidate c[POLICY_MAX_CANDIDATES];
  Policy base;
  policy_rule(&cpu, &base);
  int n = policy_candidates(&base, 0, c, POLICY_MAX_CANDIDATES);
  CHECK(n == 5, "CPU: kernels and four persistent ones, %d", n);
  CHECK(n == 5 && !strcmp(c[0].name, "as resolved") && !strcmp(c[1].name, "persistent") &&
            !strcmp(c[2].name, "persistent, fine bodies") && !strcmp(c[3].name, "persistent, tiles") &&
            !strcmp(c[4].name, "persistent, 2 groups a unit"),
        "the order");
  CHECK(c[3].policy.v[POL_VM_FINE] && c[3].policy.v[POL_VM_GROUP_BODIES] && c[3].policy.v[POL_VM_TILES] &&
            c[4].policy.v[POL_VM_GROUPS_PER_UNIT] == 2 && !c[2].policy.v[POL_VM_TILES],
        "the variants' fields");
  CHECK(policy_candidates(&base, 1, c, POLICY_MAX_CANDIDATES) == 1, "MIN_MEMORY_USAGE: no persistent candidate");
  policy_rule(&gpu, &base);
  n = policy_candidates(&base, 0, c, POLICY_MAX_CANDIDATES);
  CHECK(n == 4, "GPU: persistent is its fine bodies already, %d", n);
  base.v[POL_EXECUTION] = GD_EXEC_PERSISTENT, base.src[POL_EXECUTION] = POL_SRC_OPTION;
  base.v[POL_VM_TILES] = 0, base.src[POL_VM_TILES] = POL_SRC_OVERRIDE;
  n = policy_candidates(&base, 0, c, POLICY_MAX_CANDIDATES);
  CHECK(n == 2 && c[1].policy.v[POL_VM_GROUPS_PER_UNIT] == 2, "fixed fields are never varied: %d", n);
  policy_mark_measured(&c[1].policy);
  CHECK(c[1].policy.src[POL_EXECUTION] == POL_SRC_OPTION && c[1].policy.src[POL_VM_TILES] == POL_SRC_OVERRIDE &&
            c[1].policy.src[POL_VM_GROUPS_PER_UNIT] == POL_SRC_MEASURED,
        "only what the tuner decided is measured");
  double a[] = {100, 96, 97}, b[] = {100, 94, 99}, d[] = {-1, 50, 40}, e[] = {-1, -1}, f[] = {100, -1, 90};
  CHECK(policy_choose(a, 3, 0.05) == 0, "4%% faster keeps the first");
  CHECK(policy_choose(b, 3, 0.05) == 1, "6%% faster wins");
  CHECK(policy_choose(d, 3, 0.05) == 2, "the first not timed: the fastest of the rest");
  CHECK(policy_choose(e, 2, 0.05) == 0, "none timed: the first");
  CHECK(policy_choose(f, 3, 0.05) == 2, "a dropped candidate is skipped");
}

int main(void) {
  unsetenv("TFLITE_GPU_POLICY");
  test_rules_per_device_class();
  test_precedence();
  test_override_syntax();
  test_candidates_and_choice();
  printf("%d checks, %d failures\n", g_checks, g_failures);
  return g_failures ? 1 : 0;
}
