/* The order of a persistent launch's phases (vm.c, issue 36): a grid
 * barrier between two phases only where the later depends on the earlier.
 * A phase's buffers are byte ranges of a space (0 the activations, 1 the
 * other buffers, 2.. a staging buffer as a whole), read or written (a
 * body's `const` parameters only read, tools/gen_vm.py). */
#ifndef TFLITE_GPU_VM_SCHEDULE_H
#define TFLITE_GPU_VM_SCHEDULE_H

#include <stddef.h>

typedef struct Access {
  int space;
  size_t lo, hi; /* bytes [lo, hi) */
  int writes;
} Access;

/* Phases [a, b) of one segment, phase k touching acc[acc_at[k],
 * acc_at[k + 1]): each gets a level one more than the highest of the
 * earlier phases it depends on (it touches a range one writes, or writes
 * a range one touches), 0 when none; by_level 0 gives phase k level k - a
 * (dispatch order, a barrier before every phase). order[a, b) gets the
 * phases by level, in dispatch order within a level; starts[a, b) 1 where
 * order[n] starts a level (after the first). Returns the grid barriers:
 * the levels less one. level, order, starts: at least b entries. */
int vm_schedule(const Access* acc, const int* acc_at, int a, int b, int by_level, int* level, int* order,
                unsigned char* starts);

#endif
