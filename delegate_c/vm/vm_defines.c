/* See vm_defines.h. */
#include "vm/vm_defines.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char kHead[] = "-DGD_VM_PROGRAM=1";
/* Words 0..2 of the bodies at the program's storage are always written,
 * the rest of theirs (up to COPIES) up to the last one with a bit set, and
 * the float copies' words (COPIES on) all, only when one is set: so a
 * program that uses neither keeps the defines it always had. A word left
 * out is 0 (tools/gen_vm.py's defaults once VM_OPS_0 is defined). */
enum { BASE_WORDS = 3, COPIES = VM_FLOAT_COPY / VM_OPS_BITS };
_Static_assert(VM_FLOAT_COPY % VM_OPS_BITS == 0 && (int)BASE_WORDS <= (int)COPIES && (int)COPIES < (int)VM_OPS_WORDS,
               "the float copies start a word after the base words");

/* The words after the opcodes', in this order. */
static const char* const kTail[] = {" -DGD_UN_OPS=0x", " -DGD_BIN_OPS=0x"};
_Static_assert(sizeof(kTail) / sizeof(kTail[0]) == VM_MASK_WORDS - VM_OPS_WORDS, "a name per word after the opcodes'");

int vm_defines_format(char* out, size_t size, const unsigned masks[VM_MASK_WORDS], const char* rest) {
  int words = BASE_WORDS;
  for (int w = BASE_WORDS; w < VM_OPS_WORDS; ++w)
    if (masks[w]) words = w < COPIES ? w + 1 : VM_OPS_WORDS;
  size_t n = (size_t)snprintf(out, size, "%s", kHead);
  for (int w = 0; w < words && n < size; ++w) n += (size_t)snprintf(out + n, size - n, " -DVM_OPS_%d=0x%x", w, masks[w]);
  for (int w = VM_OPS_WORDS; w < VM_MASK_WORDS && n < size; ++w)
    n += (size_t)snprintf(out + n, size - n, "%s%x", kTail[w - VM_OPS_WORDS], masks[w]);
  if (n < size) n += (size_t)snprintf(out + n, size - n, "%s", rest ? rest : "");
  return n >= size ? -1 : 0;
}

/* Reads `name` then lower-case hex digits (as format writes them, 8 at
 * most) at *p into *v, moving *p past them; -1 if they are not there. */
static int read_word(const char** p, const char* name, unsigned* v) {
  size_t n = strlen(name);
  if (strncmp(*p, name, n) != 0) return -1;
  const char* q = *p + n;
  unsigned x = 0;
  int digits = 0;
  for (; (*q >= '0' && *q <= '9') || (*q >= 'a' && *q <= 'f'); ++q, ++digits)
    x = x * 16u + (unsigned)(*q <= '9' ? *q - '0' : *q - 'a' + 10);
  if (digits == 0 || digits > 8) return -1;
  *p = q;
  *v = x;
  return 0;
}

int vm_defines_parse(const char* defines, unsigned masks[VM_MASK_WORDS], const char** rest) {
  size_t head = sizeof(kHead) - 1;
  if (!defines || strncmp(defines, kHead, head) != 0) return -1;
  const char* p = defines + head;
  for (int w = 0; w < VM_MASK_WORDS; ++w) masks[w] = 0;
  for (int w = 0; w < VM_OPS_WORDS; ++w) {
    char want[16];
    snprintf(want, sizeof(want), " -DVM_OPS_%d=0x", w);
    /* Past the base words, up to the float copies' first: the words left out are 0. */
    if (w >= BASE_WORDS && w <= COPIES && strncmp(p, want, strlen(want)) != 0) break;
    if (read_word(&p, want, &masks[w])) return -1;
  }
  for (int w = VM_OPS_WORDS; w < VM_MASK_WORDS; ++w)
    if (read_word(&p, kTail[w - VM_OPS_WORDS], &masks[w])) return -1;
  if (*p && *p != ' ') return -1;
  *rest = p;
  return 0;
}

int vm_defines_count(const unsigned masks[VM_MASK_WORDS]) {
  int n = 0;
  for (int w = 0; w < VM_OPS_WORDS; ++w)
    for (unsigned v = masks[w]; v; v &= v - 1) ++n;
  return n;
}

int vm_defines_merge(char* defines, size_t size, const char* cached) {
  unsigned mine[VM_MASK_WORDS], theirs[VM_MASK_WORDS], all[VM_MASK_WORDS];
  const char *my_rest, *their_rest;
  if (vm_defines_parse(defines, mine, &my_rest) || vm_defines_parse(cached, theirs, &their_rest) ||
      strcmp(my_rest, their_rest) != 0)
    return -1;
  int holds = 1;
  for (int w = 0; w < VM_MASK_WORDS; ++w) {
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
