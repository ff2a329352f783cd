/* The VM program's build defines (vm.c): "-DGD_VM_PROGRAM=1", the masks of
 * the opcodes whose bodies it holds ("-DVM_OPS_0=0x.. -DVM_OPS_1=0x..
 * -DVM_OPS_2=0x.."), then the rest (storage, test hooks). A program whose
 * masks hold a partition's opcodes, with the same rest, runs that
 * partition: the kernel cache keeps one per device, precision and rest,
 * widened to the union of the opcodes its models ran (serialization.c).
 * Pure string functions, unit-tested in tests/c/test_vm_defines.c. */
#ifndef TFLITE_GPU_VM_DEFINES_H
#define TFLITE_GPU_VM_DEFINES_H

#include <stddef.h>

#include "kernel_abi.h"

/* Writes the defines for ops and rest ("" or " -D..."); -1 if they do not fit. */
int vm_defines_format(char* out, size_t size, const unsigned ops[VM_OPS_WORDS], const char* rest);
/* Reads what vm_defines_format wrote: 0 with ops and *rest (a pointer into
 * defines), -1 for anything else. */
int vm_defines_parse(const char* defines, unsigned ops[VM_OPS_WORDS], const char** rest);
/* The number of opcodes in ops. */
int vm_defines_count(const unsigned ops[VM_OPS_WORDS]);
/* Widens defines (a partition's) by cached's opcodes when both parse and
 * have the same rest. Returns 1 when cached held every opcode of defines
 * (defines becomes cached), 0 when defines became the union of both, -1
 * when they cannot be merged (defines unchanged). */
int vm_defines_merge(char* defines, size_t size, const char* cached);

#endif
