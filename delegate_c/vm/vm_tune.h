/* The persistent grid's size for inference_preference=SUSTAINED_SPEED
 * (vm_tune.c); tune.c does execution=kernels' work-groups. */
#ifndef TFLITE_GPU_VM_TUNE_H
#define TFLITE_GPU_VM_TUNE_H

#include "runtime/executor.h"

/* The candidates, groups per compute unit: one (2 warps of an NVIDIA SM at
 * groups of 64) and more, to hide the bodies' memory waits, if the device
 * keeps them resident (the self-test and the bounded barrier say). */
#define VM_TUNE_CANDIDATES 3
extern const int kVmTunePerUnit[VM_TUNE_CANDIDATES];
/* Rounds of one invoke per candidate, interleaved; each candidate's best counts. */
#define VM_TUNE_ROUNDS 8

/* us[c]: candidate c's best invoke, < 0 where it failed. The index of the
 * fastest by GD_TUNE_MIN_GAIN over candidate 0 (else 0), or -1 when
 * candidate 0 failed. */
int vm_tune_choose(const double* us, int n);
/* Sets ex's persistent grid to per_unit groups per compute unit (> 0). */
void vm_tune_apply(Executor* ex, int per_unit);
/* ex persistent, SUSTAINED_SPEED: the groups per compute unit remembered
 * beside the partition's kernel-cache file (cache_path, NULL: none), else
 * the candidates' grids timed (each grid's self-test first) and the choice
 * saved there. Applies it and returns it; 0 when the grid stays as built
 * (not persistent, TFLITE_GPU_VM_GROUPS_PER_UNIT set, or the timing
 * failed: logged). Takes the device's mutex. */
int vm_tune_grid(Executor* ex, const char* cache_path, int log_level);

#endif
