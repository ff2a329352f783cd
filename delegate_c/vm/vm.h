/* A partition as data for one program (issue 36): the dispatch list the
 * encoders recorded becomes an op list of phases, each a kernel's body
 * (opcode, work-items, its arguments as words: buffers as offsets in
 * the activation arena, which holds the staging buffers too, or in one
 * arena of the other buffers), run by the VM program (tools/gen_vm.py, vm/vm_run.cl):
 * - stepped: one launch per phase;
 * - persistent: one launch per segment of phases, a grid barrier between
 *   phases (grid_sync.cl). The grid is at most one group per compute unit
 *   (all resident), the activations never share memory (no line another
 *   group cached is reused), each wait is bounded; a launch that timed out
 *   makes the host run the invoke again stepped, warn once and stay
 *   stepped. A self-test (the litmus test of grid_sync.cl) runs once per
 *   device in the process before the first persistent launch.
 * A body is an OUTLINED_KERNEL's (per work-item) or a GROUP_KERNEL's (per
 * work-group, common.cl): a group body's phase runs virtual work-groups of
 * its size, which must be the VM's group. Dispatches without a body
 * (kernels written as neither, other group sizes) run as kernels between
 * segments. */
#ifndef TFLITE_GPU_VM_H
#define TFLITE_GPU_VM_H

#include "runtime/executor.h"

typedef struct VmSegment {
  int first, last;     /* dispatches [first, last) */
  int vm;              /* 1: phases of the VM program; 0: one dispatch launched as its own kernel */
  cl_kernel whole;     /* persistent: vm_run over every phase of the segment */
} VmSegment;

/* A guard zone of the checked mode (vm_checked.c): VM_GUARD_BYTES behind
 * a buffer that ends at byte `end` of space 0 (activations and staging
 * buffers) or 1 (the other buffers); id: the graph tensor (-1 - k: boundary
 * tensor k's staging), or the buffer's index. */
enum { VM_GUARD_BYTES = 256, VM_GUARD_PATTERN = 0xA5 };
typedef struct VmGuard {
  int space;
  size_t end;
  int id;
} VmGuard;

/* A phase as built: the kernel whose body it runs, its work-items, and
 * its segment (a kernel without a body between two ends one) and level
 * in a persistent launch (vm_schedule; grid barriers separate levels; in
 * dispatch order with policy vm_schedule=0). */
typedef struct VmPhase {
  char kernel[48];
  int items, segment, level;
  int node; /* the fused graph's node (Dispatch.node; -1: a boundary conversion) */
  /* Profiled persistent invokes with a timer (vm_profile.c): its time,
   * summed over VmState.timed of them. */
  double ns;
} VmPhase;

typedef struct VmState {
  int mode;            /* GD_EXEC_STEPPED or GD_EXEC_PERSISTENT, as asked */
  int stepped_only;    /* persistent fell back (why: fallback): stepped from now on */
  char fallback[256];
  int warned;
  cl_mem ops, other, sync, dummy;
  int* phase_of;       /* per dispatch: its phase, -1 when it runs as a kernel */
  int num_phases;
  int barriers;        /* phases that need a grid barrier before them (the first of a segment has none) */
  cl_kernel* steps;    /* per phase: vm_run over that phase alone */
  VmSegment* segs;
  int num_segs;
  size_t group, grid;  /* work-items per group; groups of a persistent launch */
  int group_phases;    /* phases of group bodies (their group size is vm->group) */
  size_t lmem_bytes;   /* vm_run's __local memory: the most a phase's group body takes */
  int sync_result[2];  /* read back after a persistent invoke */
  int last_persistent; /* what the last invoke ran: 1 persistent, 0 stepped */
  int last_launches;
  int locked;          /* holds the process's persistent-grid lock (one grid on a device at a time) */
  /* The VM program's build defines: -DGD_VM_PROGRAM=1 and the masks of the
   * opcodes this partition runs (tools/gen_vm.py) and of the math ops they
   * compute (vm_defines.h), so that a driver compiles those alone. */
  char defines[GD_MAX_PROGRAM_DEFINES];
  /* Checked mode (vm_checked.c): guards checked after every phase. */
  int checked;
  size_t other_bytes;
  VmGuard* guards;
  int num_guards;
  VmPhase* phase;           /* per phase: what it runs (explain --phases) */
  char overrun[384];        /* set by the last invoke when a phase wrote into a guard */
  /* Profiling (TFLITE_GPU_PROFILE=1, vm_profile.c): an event per launch of
   * the last invoke and the profile row each adds to (NULL: none, a
   * persistent launch whose phases are timed). timing: persistent launches
   * stamp their phases (stamps, 2 per phase) from the GPU's timer (1, on
   * NVIDIA) or the test clock (2, TFLITE_GPU_TEST_VM_CLOCK=1, -DVM_TCLK). */
  cl_event* events;
  const char** event_rows;
  int num_events, max_events;
  int timing;
  cl_mem stamps;
  long timed; /* invokes whose phases' stamps went into VmPhase.ns */
} VmState;

/* Before ex_finish_dispatches: the op list of ex's dispatches (marking
 * Dispatch.vm), the other buffers' arena, the segments. 0 with ex->vm
 * NULL when the partition runs as kernels (why: ex->vm_declined, warned),
 * -1 on error. */
int vm_plan(Executor* ex, int mode);
/* The table that runs a partition on the VM (vm_strategy.c): what the
 * delegate gives executor_build_tuned. */
const VmStrategy* vm_strategy(void);
/* After ex_finish_dispatches: the VM program's kernels. */
int vm_finish(Executor* ex);
/* Enqueues the partition's launches (stepped or persistent, as the state
 * says); a persistent one also the read of its barrier state. CL error. */
cl_int vm_enqueue(Executor* ex);
/* After the invoke's wait: 1 when a persistent launch aborted (the caller
 * enqueues the invoke again, now stepped), else 0. Releases the grid lock. */
int vm_aborted(Executor* ex);
/* The self-test on ex's grid (once per device, driver, grid and group in
 * the process): 1 when it passed, else 0 and why. */
int vm_selftest(Executor* ex, char* why, size_t whylen);
/* Groups of a persistent grid of per_unit groups per compute unit (at most
 * VM_MAX_PER_UNIT; TFLITE_GPU_VM_GROUPS=N, a test hook, caps it). */
enum { VM_MAX_PER_UNIT = 4 };
size_t vm_grid_size(const GpuDevice* dev, int per_unit);
/* A grid barrier wait's bound on dev: NVIDIA's timer in ns (one phase of
 * these models takes microseconds; a second is a hang), else spin
 * iterations. The VM program and the self-test both wait with it. */
cl_ulong vm_wait_bound(const GpuDevice* dev);
/* Launches per invoke: persistent (one per segment) or stepped (one per dispatch). */
int vm_launches(const VmState* vm, int persistent);
void vm_free(VmState* vm);

/* Profiling (vm_profile.c). Whether persistent launches on dev stamp their
 * phases (VmState.timing). */
int vm_profile_timing(const GpuDevice* dev, int mode);
/* In vm_finish: the events and the stamps buffer, when profiling. */
int vm_profile_init(Executor* ex);
/* Where the next launch's event goes (NULL when not profiling), and the row it adds to. */
cl_event* vm_profile_event(VmState* vm, const char* row);
/* Releases the events of launches that will not be collected (an invoke run again). */
void vm_profile_drop(VmState* vm);
/* After the invoke's wait: the launches' times, or the phases' stamps, into the device's profile. */
void vm_profile_collect(Executor* ex);

/* Checked mode: guard bytes behind each buffer (0 when off or not a VM partition). */
size_t vm_guard_bytes(int vm);
/* After phase `dispatch` (blocking): sets vm->overrun when a guard changed. CL error. */
cl_int vm_check_guards(Executor* ex, int dispatch);

#endif
