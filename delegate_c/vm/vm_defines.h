/* The VM program's build defines (vm.c): "-DGD_VM_PROGRAM=1", the masks of
 * the opcodes whose bodies it holds ("-DVM_OPS_0=0x.. -DVM_OPS_1=0x..
 * -DVM_OPS_2=0x.."), of the unary and binary ops they compute
 * ("-DGD_UN_OPS=0x.. -DGD_BIN_OPS=0x..", common.cl), then the rest (storage,
 * test hooks). A program whose masks hold a partition's, with the
 * same rest, runs that partition: the kernel cache keeps one per device,
 * precision and rest, widened to the union of what its models ran
 * (serialization.c).
 * Pure string functions, unit-tested in tests/c/test_vm_defines.c. */
#ifndef TFLITE_GPU_VM_DEFINES_H
#define TFLITE_GPU_VM_DEFINES_H

#include <stddef.h>

#include "kernel_abi.h"

/* The masks' words: VM_OPS_WORDS of opcodes, then the unary ops (bit UN_*)
 * and the binary ops (bit BIN_*). */
enum { VM_UN_WORD = VM_OPS_WORDS, VM_BIN_WORD, VM_MASK_WORDS };

/* Writes the defines for masks and rest ("" or " -D..."); -1 if they do not fit. */
int vm_defines_format(char* out, size_t size, const unsigned masks[VM_MASK_WORDS], const char* rest);
/* Reads what vm_defines_format wrote: 0 with masks and *rest (a pointer into
 * defines), -1 for anything else. */
int vm_defines_parse(const char* defines, unsigned masks[VM_MASK_WORDS], const char** rest);
/* The number of opcodes in masks. */
int vm_defines_count(const unsigned masks[VM_MASK_WORDS]);
/* Widens defines (a partition's) by cached's masks when both parse and
 * have the same rest. Returns 1 when cached held every bit of defines
 * (defines becomes cached), 0 when defines became the union of both, -1
 * when they cannot be merged (defines unchanged). */
int vm_defines_merge(char* defines, size_t size, const char* cached);

#endif
