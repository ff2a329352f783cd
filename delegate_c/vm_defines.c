/* See vm_defines.h. */
#include "vm_defines.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char kHead[] = "-DGD_VM_PROGRAM=1";

int vm_defines_format(char* out, size_t size, const unsigned ops[VM_OPS_WORDS], const char* rest) {
  _Static_assert(VM_OPS_WORDS == 3, "three VM_OPS words");
  int n = snprintf(out, size, "%s -DVM_OPS_0=0x%x -DVM_OPS_1=0x%x -DVM_OPS_2=0x%x%s", kHead, ops[0], ops[1], ops[2],
                   rest ? rest : "");
  return n < 0 || (size_t)n >= size ? -1 : 0;
}

int vm_defines_parse(const char* defines, unsigned ops[VM_OPS_WORDS], const char** rest) {
  size_t head = sizeof(kHead) - 1;
  if (!defines || strncmp(defines, kHead, head) != 0) return -1;
  const char* p = defines + head;
  for (int w = 0; w < VM_OPS_WORDS; ++w) {
    char want[16];
    snprintf(want, sizeof(want), " -DVM_OPS_%d=0x", w);
    size_t n = strlen(want);
    if (strncmp(p, want, n) != 0) return -1;
    p += n;
    /* Lower-case hex digits only, as format writes them, 8 at most. */
    unsigned v = 0;
    int digits = 0;
    for (; (*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f'); ++p, ++digits)
      v = v * 16u + (unsigned)(*p <= '9' ? *p - '0' : *p - 'a' + 10);
    if (digits == 0 || digits > 8) return -1;
    ops[w] = v;
  }
  if (*p && *p != ' ') return -1;
  *rest = p;
  return 0;
}

int vm_defines_count(const unsigned ops[VM_OPS_WORDS]) {
  int n = 0;
  for (int w = 0; w < VM_OPS_WORDS; ++w)
    for (unsigned v = ops[w]; v; v &= v - 1) ++n;
  return n;
}

int vm_defines_merge(char* defines, size_t size, const char* cached) {
  unsigned mine[VM_OPS_WORDS], theirs[VM_OPS_WORDS], all[VM_OPS_WORDS];
  const char *my_rest, *their_rest;
  if (vm_defines_parse(defines, mine, &my_rest) || vm_defines_parse(cached, theirs, &their_rest) ||
      strcmp(my_rest, their_rest) != 0)
    return -1;
  int holds = 1;
  for (int w = 0; w < VM_OPS_WORDS; ++w) {
    all[w] = mine[w] | theirs[w];
    holds &= all[w] == theirs[w];
  }
  char rest[256], out[512];
  if (snprintf(rest, sizeof(rest), "%s", my_rest) >= (int)sizeof(rest) || vm_defines_format(out, sizeof(out), all, rest) ||
      strlen(out) >= size)
    return -1;
  memcpy(defines, out, strlen(out) + 1);
  return holds;
}
