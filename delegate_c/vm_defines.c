/* See vm_defines.h. */
#include "vm_defines.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char kHead[] = "-DGD_VM_PROGRAM=1";
/* Words 0..2 (the bodies at the program's storage) are always written;
 * the float copies' words (VM_FLOAT_COPY on) only when one is set, so that
 * a program without them keeps the defines it always had. */
enum { ALWAYS = VM_FLOAT_COPY / VM_OPS_BITS };
_Static_assert(VM_FLOAT_COPY % VM_OPS_BITS == 0 && (int)ALWAYS < (int)VM_OPS_WORDS, "the float copies start a word");

int vm_defines_format(char* out, size_t size, const unsigned ops[VM_OPS_WORDS], const char* rest) {
  int words = ALWAYS;
  for (int w = ALWAYS; w < VM_OPS_WORDS; ++w)
    if (ops[w]) words = VM_OPS_WORDS;
  size_t n = (size_t)snprintf(out, size, "%s", kHead);
  for (int w = 0; w < words && n < size; ++w) n += (size_t)snprintf(out + n, size - n, " -DVM_OPS_%d=0x%x", w, ops[w]);
  if (n < size) n += (size_t)snprintf(out + n, size - n, "%s", rest ? rest : "");
  return n >= size ? -1 : 0;
}

int vm_defines_parse(const char* defines, unsigned ops[VM_OPS_WORDS], const char** rest) {
  size_t head = sizeof(kHead) - 1;
  if (!defines || strncmp(defines, kHead, head) != 0) return -1;
  const char* p = defines + head;
  for (int w = 0; w < VM_OPS_WORDS; ++w) ops[w] = 0;
  for (int w = 0; w < VM_OPS_WORDS; ++w) {
    char want[16];
    snprintf(want, sizeof(want), " -DVM_OPS_%d=0x", w);
    size_t n = strlen(want);
    if (strncmp(p, want, n) != 0) {
      if (w == ALWAYS) break; /* no float copies: none of their words */
      return -1;
    }
    p += n;
    /* Lower-case hex digits only, as format writes them, 8 at most. */
    unsigned v = 0;
    int digits = 0;
    for (; (*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f'); ++p, ++digits)
      v = v * 16u + (unsigned)(*p <= '9' ? *p - '0' : *p - 'a' + 10);
    if (digits == 0 || digits > 8) return -1;
    ops[w] = v;
  }
  if ((*p && *p != ' ') || !strncmp(p, " -DVM_OPS_", 10)) return -1; /* a word out of order, or after the last */
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
