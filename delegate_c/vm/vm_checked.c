/* The VM's checked mode (TFLITE_GPU_VM_CHECKED=1, a test setting): inside
 * the VM's arenas a body that writes past its buffer's end corrupts its
 * neighbour silently, where tools such as Oclgrind see one big buffer. So
 * every buffer gets a guard zone behind it, filled with a pattern at
 * build; the invoke runs stepped, and after each phase the host reads the
 * arenas back and names the first phase that wrote into a guard. Arena
 * memory is never reused in this mode, so a guard is never a live buffer. */
#include <stdio.h>
#include <stdlib.h>

#include "util/env_hooks.h"
#include "vm/vm.h"

size_t vm_guard_bytes(int vm) { return vm && env_flag("TFLITE_GPU_VM_CHECKED", 0) ? VM_GUARD_BYTES : 0; }

static cl_int read_space(cl_command_queue q, cl_mem m, unsigned char** host, size_t bytes) {
  if (!(*host = malloc(bytes ? bytes : 1))) return CL_OUT_OF_HOST_MEMORY;
  return bytes ? cl.clEnqueueReadBuffer(q, m, CL_TRUE, 0, bytes, *host, 0, NULL, NULL) : CL_SUCCESS;
}

cl_int vm_check_guards(Executor* ex, int dispatch) {
  VmState* vm = ex->vm;
  cl_mem spaces[2] = {ex->arena, vm->other};
  unsigned char* host[2] = {NULL, NULL};
  size_t bytes[2] = {ex->arena_bytes, vm->other_bytes};
  cl_int rc = CL_SUCCESS;
  for (int s = 0; s < 2 && rc == CL_SUCCESS; ++s) rc = read_space(ex->enc.dev->queue, spaces[s], &host[s], bytes[s]);
  for (int i = 0; rc == CL_SUCCESS && i < vm->num_guards && !vm->overrun[0]; ++i) {
    const VmGuard* g = &vm->guards[i];
    size_t n = g->end + VM_GUARD_BYTES <= bytes[g->space] ? VM_GUARD_BYTES : 0, bad = 0;
    while (bad < n && host[g->space][g->end + bad] == VM_GUARD_PATTERN) ++bad;
    if (bad == n) continue;
    size_t last = n;
    while (last > bad && host[g->space][g->end + last - 1] == VM_GUARD_PATTERN) --last;
    snprintf(vm->overrun, sizeof(vm->overrun),
             "checked VM (TFLITE_GPU_VM_CHECKED): phase %d (dispatch %d, kernel %s) wrote past the end of %s %d: "
             "bytes %zu-%zu of its guard changed",
             vm->phase_of[dispatch], dispatch, vm->phase[vm->phase_of[dispatch]].kernel,
             g->space ? "the weights and scratch buffer" : g->id < 0 ? "the staging buffer of boundary tensor"
                                                                     : "activation tensor",
             g->id < 0 ? -1 - g->id : g->id, bad, last - 1);
  }
  free(host[0]);
  free(host[1]);
  return rc;
}
