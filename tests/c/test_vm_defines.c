/* uses: vm/vm_defines.c */
/* The VM program's defines (vm_defines.c): format and parse round-trip,
 * malformed strings refused, and merge: a cached program holding every
 * opcode and math op is taken as it is, one
 * lacking some becomes the union, and one with other defines besides the
 * masks is never merged. */
#include <string.h>

#include "check.h"
#include "cl/cl_device.h"
#include "vm/vm_defines.h"

#define OK(cond) CHECK(cond, "%s", #cond)

int main(void) {
  char d[GD_MAX_PROGRAM_DEFINES], c[GD_MAX_PROGRAM_DEFINES];
  unsigned ops[VM_MASK_WORDS] = {0x5, 0x80000000u, 0x0}, got[VM_MASK_WORDS];
  ops[VM_UN_WORD] = 1u << UN_TANH;
  ops[VM_BIN_WORD] = 1u << BIN_POW | 1u << BIN_ADD;
  const char* rest;
  OK(vm_defines_format(d, sizeof(d), ops, " -DVM_TCLK") == 0);
  /* No float copy: the three words the defines always had, then the math ops. */
  OK(strcmp(d, "-DGD_VM_PROGRAM=1 -DVM_OPS_0=0x5 -DVM_OPS_1=0x80000000 -DVM_OPS_2=0x0 -DGD_UN_OPS=0x8 "
               "-DGD_BIN_OPS=0x101 -DVM_TCLK") == 0);
  OK(vm_defines_parse(d, got, &rest) == 0);
  OK(memcmp(got, ops, sizeof(ops)) == 0 && strcmp(rest, " -DVM_TCLK") == 0);
  OK(vm_defines_count(ops) == 3);
  OK(vm_defines_format(d, 20, ops, "") == -1); /* does not fit */
  /* A float copy (opcode VM_FLOAT_COPY + 1, word 4): every word. */
  _Static_assert(VM_FLOAT_COPY == 128 && VM_OPS_WORDS == 8, "the words below");
  unsigned copies[VM_MASK_WORDS] = {0x5, 0x0, 0x0, 0x0, 0x2, 0x0, 0x0, 0x0};
  OK(vm_defines_format(d, sizeof(d), copies, "") == 0);
  OK(strcmp(d, "-DGD_VM_PROGRAM=1 -DVM_OPS_0=0x5 -DVM_OPS_1=0x0 -DVM_OPS_2=0x0 -DVM_OPS_3=0x0 -DVM_OPS_4=0x2 "
               "-DVM_OPS_5=0x0 -DVM_OPS_6=0x0 -DVM_OPS_7=0x0 -DGD_UN_OPS=0x0 -DGD_BIN_OPS=0x0") == 0);
  OK(vm_defines_parse(d, got, &rest) == 0 && memcmp(got, copies, sizeof(copies)) == 0 && !strcmp(rest, ""));
  OK(vm_defines_count(copies) == 3);
  /* A body of opcode 96 or more (word 3) and no float copy: that word too. */
  unsigned high[VM_MASK_WORDS] = {0x5, 0x0, 0x0, 0x1};
  OK(vm_defines_format(d, sizeof(d), high, "") == 0);
  OK(strcmp(d, "-DGD_VM_PROGRAM=1 -DVM_OPS_0=0x5 -DVM_OPS_1=0x0 -DVM_OPS_2=0x0 -DVM_OPS_3=0x1 "
               "-DGD_UN_OPS=0x0 -DGD_BIN_OPS=0x0") == 0);
  OK(vm_defines_parse(d, got, &rest) == 0 && memcmp(got, high, sizeof(high)) == 0 && !strcmp(rest, ""));
  /* The longest defines the library writes fit its program records. */
  unsigned full[VM_MASK_WORDS];
  memset(full, 0xff, sizeof(full));
  OK(vm_defines_format(d, GD_MAX_PROGRAM_DEFINES, full, " -DVM_TCLK -DEPI_UN=1") == 0);

  /* Malformed: each is refused. */
  const char* bad[] = {"", "-DGD_VM_PROGRAM=1", "-DGD_VM_PROGRAM=1 -DVM_OPS_0=0x5 -DVM_OPS_1=0x1",
                       "-DGD_VM_PROGRAM=1 -DVM_OPS_0=0x -DVM_OPS_1=0x1 -DVM_OPS_2=0x0 -DGD_UN_OPS=0x0 -DGD_BIN_OPS=0x0",
                       "-DGD_VM_PROGRAM=1 -DVM_OPS_0=0x123456789 -DVM_OPS_1=0x1 -DVM_OPS_2=0x0 -DGD_UN_OPS=0x0 "
                       "-DGD_BIN_OPS=0x0",
                       "-DGD_VM_PROGRAM=1 -DVM_OPS_0=0x5 -DVM_OPS_1=0x1 -DVM_OPS_2=0x0 -DGD_UN_OPS=0x0 -DGD_BIN_OPS=0x0x",
                       "-DGD_VM_PROGRAM=1 -DVM_OPS_0=0xA -DVM_OPS_1=0x1 -DVM_OPS_2=0x0 -DGD_UN_OPS=0x0 -DGD_BIN_OPS=0x0",
                       "-DFOO=1",
                       /* the opcodes alone, or one math word */
                       "-DGD_VM_PROGRAM=1 -DVM_OPS_0=0x5 -DVM_OPS_1=0x1 -DVM_OPS_2=0x0",
                       "-DGD_VM_PROGRAM=1 -DVM_OPS_0=0x5 -DVM_OPS_1=0x1 -DVM_OPS_2=0x0 -DGD_UN_OPS=0x0",
                       /* the math words swapped */
                       "-DGD_VM_PROGRAM=1 -DVM_OPS_0=0x5 -DVM_OPS_1=0x1 -DVM_OPS_2=0x0 -DGD_BIN_OPS=0x0 -DGD_UN_OPS=0x0",
                       /* some of the float copies' words, not all */
                       "-DGD_VM_PROGRAM=1 -DVM_OPS_0=0x5 -DVM_OPS_1=0x1 -DVM_OPS_2=0x0 -DVM_OPS_3=0x0 -DVM_OPS_4=0x1 "
                       "-DGD_UN_OPS=0x0 -DGD_BIN_OPS=0x0",
                       "-DGD_VM_PROGRAM=1 -DVM_OPS_0=0x5 -DVM_OPS_1=0x1 -DVM_OPS_2=0x0 -DVM_OPS_3=0x0 -DVM_OPS_4=0x1 "
                       "-DVM_OPS_5=0x0 -DVM_OPS_6=0x0 -DGD_UN_OPS=0x0 -DGD_BIN_OPS=0x0",
                       /* a word skipped */
                       "-DGD_VM_PROGRAM=1 -DVM_OPS_0=0x5 -DVM_OPS_1=0x1 -DVM_OPS_2=0x0 -DVM_OPS_4=0x1 -DGD_UN_OPS=0x0 "
                       "-DGD_BIN_OPS=0x0"};
  for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); ++i) OK(vm_defines_parse(bad[i], got, &rest) == -1);

  /* The cached program holds all: defines become the cached ones. */
  unsigned mine[VM_MASK_WORDS] = {0x4, 0x0, 0x1}, all[VM_MASK_WORDS] = {0x6, 0x10, 0x1};
  vm_defines_format(d, sizeof(d), mine, "");
  vm_defines_format(c, sizeof(c), all, "");
  OK(vm_defines_merge(d, sizeof(d), c) == 1 && strcmp(d, c) == 0);
  /* It lacks one: the union. */
  unsigned more[VM_MASK_WORDS] = {0x9, 0x0, 0x0}, both[VM_MASK_WORDS] = {0xf, 0x10, 0x1};
  vm_defines_format(d, sizeof(d), more, "");
  OK(vm_defines_merge(d, sizeof(d), c) == 0);
  OK(vm_defines_parse(d, got, &rest) == 0 && memcmp(got, both, sizeof(both)) == 0 && !strcmp(rest, ""));
  /* A float copy more: the union holds it. */
  unsigned copy[VM_MASK_WORDS] = {0x4, 0x0, 0x0, 0x0, 0x0, 0x0, 0x0, 0x80000000u};
  unsigned with_copy[VM_MASK_WORDS] = {0x6, 0x10, 0x1, 0x0, 0x0, 0x0, 0x0, 0x80000000u};
  vm_defines_format(d, sizeof(d), copy, "");
  OK(vm_defines_merge(d, sizeof(d), c) == 0);
  OK(vm_defines_parse(d, got, &rest) == 0 && memcmp(got, with_copy, sizeof(with_copy)) == 0);
  /* A math op more: the union holds it, and a program that has it holds the partition. */
  unsigned math[VM_MASK_WORDS] = {0x4}, with_math[VM_MASK_WORDS] = {0x6, 0x10, 0x1};
  math[VM_UN_WORD] = with_math[VM_UN_WORD] = 1u << UN_EXP;
  vm_defines_format(d, sizeof(d), math, "");
  OK(vm_defines_merge(d, sizeof(d), c) == 0);
  OK(vm_defines_parse(d, got, &rest) == 0 && memcmp(got, with_math, sizeof(with_math)) == 0);
  char wide[GD_MAX_PROGRAM_DEFINES];
  strcpy(wide, d);
  vm_defines_format(d, sizeof(d), math, "");
  OK(vm_defines_merge(d, sizeof(d), wide) == 1 && strcmp(d, wide) == 0);
  /* Other test hooks: unchanged. */
  vm_defines_format(d, sizeof(d), mine, " -DVM_TCLK");
  char before[GD_MAX_PROGRAM_DEFINES];
  strcpy(before, d);
  OK(vm_defines_merge(d, sizeof(d), c) == -1 && strcmp(d, before) == 0);
  OK(vm_defines_merge(d, sizeof(d), "garbage") == -1 && strcmp(d, before) == 0);
  /* A union that does not fit the caller's buffer: unchanged. */
  vm_defines_format(d, sizeof(d), more, "");
  strcpy(before, d);
  OK(vm_defines_merge(d, strlen(d) + 1, c) == -1 && strcmp(d, before) == 0);
  printf("%d checks, %d failures\n", g_checks, g_failures);
  return g_failures ? 1 : 0;
}
