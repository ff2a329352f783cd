/* See vm.h. */
#include "vm/vm.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/env_hooks.h"
#include "cl/kernels_embedded.h"
#include "util/log.h"
#include "config/options.h"
#include "select/selectors.h"
#include "vm/vm_defines.h"
#include "vm/vm_schedule.h"

/* (Work-items per group: VM_GROUP_SIZE, selectors.h, at most what the VM
 * kernel's registers allow, vm_finish.) */
enum { VM_ARGS = 32, VM_OTHER_ALIGN = 64 };
_Static_assert(VM_NO_BARRIER > 0 && (VM_NO_BARRIER & (VM_NO_BARRIER - 1)) == 0, "VM_NO_BARRIER is one bit of an offset");

typedef struct Place {
  cl_mem mem;
  int space;     /* 0 activations and staging buffers, 1 the other buffers */
  size_t offset; /* bytes */
  size_t bytes;  /* spaces 0 and 1: the buffer's size (the checked mode's guard follows) */
  int id;        /* space 0: the graph tensor (-1 - k: boundary tensor k's staging); 1: the record */
} Place;

typedef struct Plan {
  Place* places;
  int num_places;
  /* What each phase touches: phase k's accesses are acc[acc_at[k],
   * acc_at[k + 1]) (vm_schedule.h). */
  Access* acc;
  int num_acc, cap_acc;
  int* acc_at;
  int* words; /* phase offsets, then the phases */
  int num_words, cap_words;
  int epi_un; /* a phase's body needs the unary epilogue steps (EPI_UN_DEFINE) */
  unsigned math[2]; /* the unary and binary ops the phases compute (ex_math) */
  size_t group; /* work-items per group of every launch: a group body's own size */
  int lmem;     /* the most __local float4s a phase's group body takes */
} Plan;

static int push(Plan* p, int w) {
  if (p->num_words == p->cap_words) {
    int cap = p->cap_words ? 2 * p->cap_words : 1024;
    int* r = realloc(p->words, (size_t)cap * sizeof(int));
    if (!r) return -1;
    p->words = r;
    p->cap_words = cap;
  }
  p->words[p->num_words++] = w;
  return 0;
}

static const Place* find(const Plan* p, cl_mem m) {
  for (int i = 0; i < p->num_places; ++i)
    if (p->places[i].mem == m) return &p->places[i];
  return NULL;
}

/* Where every buffer a dispatch can name lives: the activations and the
 * staging buffers by their planned offsets in the arena (executor.c), and
 * every other buffer the encoders made packed into one arena (its contents
 * written once, here). Returns the other arena's host bytes (size *bytes),
 * NULL with *bytes 0 when there is none; -1 in *ok when the partition
 * cannot run on the VM. */
static unsigned char* place_buffers(Executor* ex, Plan* p, size_t* bytes, int* ok) {
  Encoder* e = &ex->enc;
  size_t guard = vm_guard_bytes(1);
  int cap = e->g.num_tensors + e->num_records + 2 * (ex->num_inputs + ex->num_outputs) + 1;
  *bytes = 0;
  if (!(p->places = calloc((size_t)cap, sizeof(Place)))) return *ok = -1, NULL;
  for (int i = 0; i < e->g.num_tensors; ++i) {
    const GTensor* t = &e->g.tensors[i];
    cl_mem mem = ex_mem(e, i);
    if (t->in_arena && mem) p->places[p->num_places++] = (Place){mem, 0, t->offset, t->bytes, i};
  }
  for (int k = 0; k < ex->num_inputs + ex->num_outputs; ++k) {
    const BoundaryTensor* b = k < ex->num_inputs ? &ex->inputs[k] : &ex->outputs[k - ex->num_inputs];
    if (!b->staging || find(p, b->staging)) continue;
    if (!b->in_arena) return *ok = 0, NULL; /* a staging buffer of its own: no space holds it */
    p->places[p->num_places++] = (Place){b->staging, 0, b->arena_at, b->bytes, -1 - k};
  }
  for (int i = 0; i < e->num_records; ++i) {
    if (find(p, e->records[i].mem)) continue;
    p->places[p->num_places++] = (Place){e->records[i].mem, 1, *bytes, e->records[i].bytes, i};
    *bytes += (e->records[i].bytes + guard + VM_OTHER_ALIGN - 1) / VM_OTHER_ALIGN * VM_OTHER_ALIGN;
  }
  unsigned char* host = calloc(*bytes ? *bytes : 1, 1);
  if (!host) return *ok = -1, NULL;
  for (int i = 0; guard && i < p->num_places; ++i)
    if (p->places[i].space == 1) memset(host + p->places[i].offset + p->places[i].bytes, VM_GUARD_PATTERN, guard);
  for (int i = 0; i < e->num_records; ++i) {
    const Place* at = find(p, e->records[i].mem);
    if (at->space == 1 && e->records[i].data) memcpy(host + at->offset, e->records[i].data, e->records[i].bytes);
  }
  return host;
}

/* Appends a phase's accesses. -1 out of memory. */
static int add_accesses(Plan* p, const Access* acc, int n) {
  if (p->num_acc + n > p->cap_acc) {
    int cap = 2 * (p->num_acc + n) + 64;
    Access* r = realloc(p->acc, (size_t)cap * sizeof(Access));
    if (!r) return -1;
    p->acc = r;
    p->cap_acc = cap;
  }
  memcpy(p->acc + p->num_acc, acc, (size_t)n * sizeof(Access));
  p->num_acc += n;
  return 0;
}

/* Whether a dispatch of a group body of lx x ly work-items (GROUP_KERNEL,
 * common.cl) runs as built in the VM program: groups of that size, which
 * are the VM's, and no defines but the size the program compiles it for
 * or the unary epilogue steps' (epi_un, which the program then holds). */
static int group_fits(const KernelVariant* v, int lx, int ly, size_t group, int epi_un) {
  char wg[32];
  snprintf(wg, sizeof(wg), "-DWG=%d", lx * ly);
  if ((size_t)lx * (size_t)ly != group || v->dims < 1 || v->dims > 3 ||
      (v->defines[0] && !epi_un && (ly != 1 || strcmp(v->defines, wg))))
    return 0;
  size_t groups = 1;
  for (int d = 0; d < v->dims; ++d) {
    size_t l = d == 0 ? (size_t)lx : d == 1 ? (size_t)ly : 1;
    if (v->local[d] != l) return 0;
    groups *= div_up(v->global[d], l); /* global: work-items before rounding up to the group */
  }
  return (v->dims > 1 || ly == 1) && groups <= (size_t)INT_MAX / group;
}

/* Dispatch i as a phase's words and its accesses (1), or 0 when the VM
 * has no body for it. A dispatch that an FP16 partition keeps on float
 * storage (ex_recorded_storage 1: fp16_guard's islands, their conversions'
 * float side) runs its body's float copy (opcode + VM_FLOAT_COPY,
 * tools/gen_vm.py). A group body's phase counts its work-items in groups
 * and has the groups along x and y as its first two words (vm_gcall).
 * shift: bytes added to every activation offset (a test hook's fault). */
static int encode_phase(const Executor* ex, Plan* p, int i, int shift) {
  RecordedArg args[VM_ARGS];
  int n = 0;
  const KernelVariant* v = ex_recorded(&ex->enc, i, args, VM_ARGS, &n);
  const char* kinds = "";
  /* A variant built with defines has no body, but for the unary epilogue
   * steps': the VM program then holds them (Plan.epi_un). */
  int epi_un = v && !strcmp(v->defines, EPI_UN_DEFINE);
  int storage = ex_recorded_storage(&ex->enc, i);
  int op = v && storage >= 0 ? embedded_vm_opcode(v->file, v->kernel, &kinds) : -1;
  int lx = 0, ly = 0, lmem = 0, grouped = op >= 0 && embedded_vm_group(op, &lx, &ly, &lmem);
  if (grouped ? !group_fits(v, lx, ly, p->group, epi_un)
              : op < 0 || v->dims != 1 || (v->defines[0] && !epi_un) || v->global[0] > INT_MAX)
    return 0;
  if ((int)strlen(kinds) != n || n > VM_ARGS) return 0;
  op += storage ? VM_FLOAT_COPY : 0;
  if (lmem > p->lmem) p->lmem = lmem;
  p->epi_un |= epi_un;
  int start = p->num_words;
  Access acc[VM_ARGS];
  int num_acc = 0;
  /* {opcode, work-items, first lane (set after vm_schedule), [groups
   * along x and y,] arguments} */
  size_t gx = grouped ? div_up(v->global[0], (size_t)lx) : 0;
  size_t gy = grouped && v->dims > 1 ? div_up(v->global[1], (size_t)ly) : 1;
  size_t items = grouped ? gx * gy * (v->dims > 2 ? v->global[2] : 1) * p->group : v->global[0];
  if (push(p, grouped ? op | VM_GROUPED : op) || push(p, (int)items) || push(p, 0)) return -1;
  if (grouped && (push(p, (int)gx) || push(p, (int)gy))) return -1;
  for (int a = 0; a < n; ++a) {
    const RecordedArg* r = &args[a];
    if (!r->has_value) return p->num_words = start, 0;
    if (kinds[a] == 'p' || kinds[a] == 'c') {
      cl_mem m;
      const Place* at = r->size == sizeof(m) ? (memcpy(&m, r->value, sizeof(m)), find(p, m)) : NULL;
      if (!at || at->offset > INT_MAX) return p->num_words = start, 0;
      if (push(p, at->space) || push(p, (int)at->offset + (at->space == 0 ? shift : 0))) return -1;
      acc[num_acc++] = (Access){at->space, at->space < 2 ? at->offset : 0,
                                at->space < 2 ? at->offset + at->bytes : SIZE_MAX, kinds[a] == 'p'};
      continue;
    }
    size_t words = kinds[a] == '4' || kinds[a] == 'q' ? 4 : kinds[a] == '2' || kinds[a] == 'd' ? 2 : 1;
    if (r->size != 4 * words) return p->num_words = start, 0;
    for (size_t w = 0; w < words; ++w) {
      int x;
      memcpy(&x, r->value + 4 * w, 4);
      if (push(p, x)) return -1;
    }
  }
  /* The math the phase computes: the program holds it (GD_UN_OPS, GD_BIN_OPS). */
  unsigned un, bin;
  ex_recorded_math(&ex->enc, i, &un, &bin);
  p->math[0] |= un;
  p->math[1] |= bin;
  return add_accesses(p, acc, num_acc) ? -1 : 1;
}

static int make_buffer(Executor* ex, cl_mem* out, cl_mem_flags flags, size_t bytes, const void* data) {
  cl_int rc;
  *out = cl.clCreateBuffer(ex->enc.dev->context, flags | (data ? CL_MEM_COPY_HOST_PTR : 0), bytes ? bytes : 16,
                           (void*)data, &rc);
  return *out ? 0 : ex_fail(&ex->enc, "creating a VM buffer (%zu bytes): %s", bytes, cl_error_name(rc));
}

size_t vm_grid_size(const GpuDevice* dev, int per_unit) {
  size_t grid = dev->caps.compute_units ? dev->caps.compute_units : 1;
  if (per_unit > 1) grid *= (size_t)(per_unit < VM_MAX_PER_UNIT ? per_unit : VM_MAX_PER_UNIT);
  long groups = env_long("TFLITE_GPU_VM_GROUPS", 0); /* a test hook: a smaller grid */
  return groups > 0 && (size_t)groups < grid ? (size_t)groups : grid;
}

cl_ulong vm_wait_bound(const GpuDevice* dev) {
  return dev->caps.vendor_id == GD_VENDOR_NVIDIA ? 1000000000ull : 400000000ull;
}

/* The partition runs its kernels although a VM mode was asked: why, for
 * reports (Executor.vm_declined) and a warning. */
static int decline(Executor* ex, int mode, const char* why) {
  snprintf(ex->vm_declined, sizeof(ex->vm_declined), "%s", why);
  gd_log(ex->enc.dev->log_level, GD_LOG_WARNING, "execution=%s: the partition runs its kernels: %s",
         kExecutionNames[mode], why);
  return 0;
}

int vm_plan(Executor* ex, int mode) {
  Encoder* e = &ex->enc;
  ex->vm_declined[0] = '\0';
  /* Activations in buffers of their own (a test setting) are not in the arena the VM addresses. */
  if (!ex->arena || env_flag("TFLITE_GPU_SEPARATE_BUFFERS", 0))
    return decline(ex, mode, "its activations are in buffers of their own (TFLITE_GPU_SEPARATE_BUFFERS)");
  Plan p = {0};
  size_t other_bytes = 0;
  int ok = 1, rc = 0;
  unsigned char* other = place_buffers(ex, &p, &other_bytes, &ok);
  int* phase_of = ok > 0 ? malloc((size_t)(e->num_dispatches + 1) * sizeof(int)) : NULL;
  int* offsets = phase_of ? malloc((size_t)(e->num_dispatches + 1) * sizeof(int)) : NULL;
  /* Per phase: whether a segment starts there; the persistent order
   * (vm_schedule) and where its levels start; the phases' levels. */
  unsigned char* seg_start = offsets ? calloc((size_t)e->num_dispatches + 1, 2) : NULL;
  unsigned char* level_start = seg_start ? seg_start + e->num_dispatches + 1 : NULL;
  int* order = seg_start ? malloc((size_t)(e->num_dispatches + 1) * 2 * sizeof(int)) : NULL;
  int* level = order ? order + e->num_dispatches + 1 : NULL;
  p.acc_at = order ? malloc((size_t)(e->num_dispatches + 2) * sizeof(int)) : NULL;
  int phases = 0;
  /* Test hook, in the checked mode only (its guards leave room): phase K's
   * activations 128 bytes further on, so that it writes past its output's
   * end (the checked mode must name it). */
  long shift_phase = vm_guard_bytes(1) ? env_long("TFLITE_GPU_TEST_VM_SHIFT_PHASE", -1) : -1;
  if (ok < 0 || (ok > 0 && !p.acc_at)) rc = ex_fail(e, "out of memory");
  if (ok == 0) {
    char why[96];
    snprintf(why, sizeof(why), "a staging buffer outside the activation arena");
    decline(ex, mode, why);
  }
  p.group = VM_GROUP_SIZE;
  for (int i = 0, kernel_before = 1; rc == 0 && p.acc_at && i < e->num_dispatches; ++i) {
    offsets[phases] = p.num_words;
    p.acc_at[phases] = p.num_acc;
    int r = encode_phase(ex, &p, i, phases == shift_phase ? 128 : 0);
    if (r < 0) rc = ex_fail(e, "out of memory");
    if (r > 0) seg_start[phases] = (unsigned char)kernel_before;
    kernel_before = r == 0; /* a kernel between two segments: the next phase starts a launch */
    phase_of[i] = r > 0 ? phases++ : -1;
  }
  if (p.acc_at) p.acc_at[phases] = p.num_acc;
  if (rc == 0 && ok > 0 && !phases) decline(ex, mode, "the VM has a body for none of its kernels");
  VmState* vm = rc == 0 && phases ? calloc(1, sizeof(VmState)) : NULL;
  if (rc == 0 && phases && !vm) rc = ex_fail(e, "out of memory");
  if (vm) {
    /* The op list: two heads of phase offsets, then the phases. The first
     * in dispatch order (stepped, and persistent while timing: a barrier
     * before every phase); the second in the persistent launch's order,
     * each segment's phases by level (vm_schedule), VM_NO_BARRIER set where
     * no grid barrier comes before it (vm_run). */
    int* ops = malloc((size_t)(2 * phases + p.num_words + 1) * sizeof(int));
    vm->segs = calloc((size_t)e->num_dispatches + 1, sizeof(VmSegment));
    vm->steps = calloc((size_t)phases + 1, sizeof(cl_kernel));
    vm->phase = calloc((size_t)phases + 1, sizeof(VmPhase));
    if (!ops || !vm->segs || !vm->steps || !vm->phase) rc = ex_fail(e, "out of memory");
    if (rc == 0 && (long long)2 * phases + p.num_words >= VM_NO_BARRIER)
      rc = ex_fail(e, "the VM's op list is too long (%d words)", 2 * phases + p.num_words);
    for (int a = 0, b; rc == 0 && a < phases; a = b) {
      for (b = a + 1; b < phases && !seg_start[b]; ++b) continue;
      /* Policy vm_schedule=0 keeps dispatch order, a barrier before every phase. */
      int by_level = (int)e->target.pol.v[POL_VM_SCHEDULE];
      vm->barriers += vm_schedule(p.acc, p.acc_at, a, b, by_level, level, order, level_start);
    }
    /* Within a level each phase starts its work-items where the one before
     * it in the level ended (its first lane, modulo the grid's work-items
     * in vm_run), so that a level's short phases run side by side on the
     * grid instead of one after another on its first work-items. */
    for (int k = 0, lane = 0; rc == 0 && k < phases; ++k) {
      ops[k] = offsets[k] + 2 * phases;
      ops[phases + k] = (offsets[order[k]] + 2 * phases) | (level_start[k] ? 0 : VM_NO_BARRIER);
      if (level_start[k] || seg_start[order[k]]) lane = 0;
      int items = p.words[offsets[order[k]] + 1];
      p.words[offsets[order[k]] + 2] = lane;
      lane = (int)(((long long)lane + items) % (1 << 30));
    }
    if (rc == 0) memcpy(ops + 2 * phases, p.words, (size_t)p.num_words * sizeof(int));
    vm->mode = mode;
    vm->num_phases = phases;
    unsigned ops_mask[VM_MASK_WORDS] = {0};
    ops_mask[VM_UN_WORD] = p.math[0];
    ops_mask[VM_BIN_WORD] = p.math[1];
    for (int k = 0; rc == 0 && k < phases; ++k) {
      int op = p.words[offsets[k]] & ~VM_GROUPED;
      vm->group_phases += op != p.words[offsets[k]];
      if (op / VM_OPS_BITS < VM_OPS_WORDS) ops_mask[op / VM_OPS_BITS] |= 1u << (op % VM_OPS_BITS);
    }
    vm->timing = vm_profile_timing(e->dev, mode);
    char rest[64];
    snprintf(rest, sizeof(rest), "%s%s", vm->timing == 2 ? " -DVM_TCLK" : "", p.epi_un ? " " EPI_UN_DEFINE : "");
    if (rc == 0 && vm_defines_format(vm->defines, sizeof(vm->defines), ops_mask, rest))
      rc = ex_fail(e, "the VM program's defines are too long");
    vm->phase_of = phase_of;
    phase_of = NULL;
    vm->group = p.group;
    vm->lmem_bytes = (size_t)(p.lmem ? p.lmem : 1) * 4 * sizeof(float);
    /* Policy vm_groups_per_unit (1-4; a tuner candidate). More than one is
     * not known to stay resident: a grid that is not makes the self-test or
     * a barrier's bounded wait fail, and the partition runs stepped. */
    vm->grid = vm_grid_size(e->dev, (int)e->target.pol.v[POL_VM_GROUPS_PER_UNIT]);
    for (int i = 0; rc == 0 && i < e->num_dispatches; ++i) {
      int is_vm = vm->phase_of[i] >= 0;
      VmSegment* last = vm->num_segs ? &vm->segs[vm->num_segs - 1] : NULL;
      if (is_vm && last && last->vm && last->last == i) {
        last->last = i + 1;
      } else {
        vm->segs[vm->num_segs++] = (VmSegment){i, i + 1, is_vm, NULL};
      }
      e->dispatches[i].vm = is_vm;
    }
    static const int zeros[GS_WORDS] = {0, 0};
    if (rc == 0) rc = make_buffer(ex, &vm->ops, CL_MEM_READ_ONLY, (size_t)(2 * phases + p.num_words) * sizeof(int), ops);
    if (rc == 0) rc = make_buffer(ex, &vm->other, CL_MEM_READ_WRITE, other_bytes, other_bytes ? other : NULL);
    if (rc == 0) rc = make_buffer(ex, &vm->sync, CL_MEM_READ_WRITE, sizeof(zeros), zeros);
    if (rc == 0) rc = make_buffer(ex, &vm->dummy, CL_MEM_READ_WRITE, 16, NULL);
    free(ops);
    ex->vm = vm;
    if (rc == 0)
      gd_log(e->dev->log_level, GD_LOG_INFO,
             "execution=%s: %d of %d dispatches as VM phases, %d segment(s), %d grid barrier(s), grid %zu x %zu",
             kExecutionNames[mode], phases, e->num_dispatches, vm->num_segs, vm->barriers, vm->grid, vm->group);
    vm->checked = vm_guard_bytes(1) > 0;
    vm->other_bytes = other_bytes;
    if (rc == 0 && vm->checked && !(vm->guards = calloc((size_t)p.num_places + 1, sizeof(VmGuard))))
      rc = ex_fail(e, "out of memory");
    for (int i = 0; rc == 0 && vm->checked && i < p.num_places; ++i)
      vm->guards[vm->num_guards++] = (VmGuard){p.places[i].space, p.places[i].offset + p.places[i].bytes, p.places[i].id};
    for (int i = 0, seg = -1; rc == 0 && i < e->num_dispatches; ++i) {
      RecordedArg args[VM_ARGS];
      int n = 0, k = vm->phase_of[i];
      seg += k >= 0 && seg_start[k];
      const KernelVariant* v = k >= 0 ? ex_recorded(e, i, args, VM_ARGS, &n) : NULL;
      if (!v) continue;
      snprintf(vm->phase[k].kernel, sizeof(vm->phase[k].kernel), "%s", v->kernel);
      vm->phase[k].items = p.words[offsets[k] + 1];
      vm->phase[k].level = level[k];
      vm->phase[k].segment = seg;
      vm->phase[k].node = e->dispatches[i].node;
    }
  }
  free(phase_of);
  free(offsets);
  free(seg_start);
  free(order);
  free(p.acc_at);
  free(p.acc);
  free(other);
  free(p.places);
  free(p.words);
  return rc;
}

/* vm_run's arguments; timing only for a persistent launch. */
static int set_args(Executor* ex, cl_kernel k, int first, int last, int persistent, cl_ulong limit) {
  VmState* vm = ex->vm;
  cl_mem spaces[VM_NUM_SPACES] = {ex->arena, vm->other};
  cl_int rc = CL_SUCCESS;
  cl_uint a = 0;
  for (int s = 0; s < VM_NUM_SPACES && rc == CL_SUCCESS; ++s) rc = cl.clSetKernelArg(k, a++, sizeof(cl_mem), &spaces[s]);
  if (rc == CL_SUCCESS) rc = cl.clSetKernelArg(k, a++, sizeof(cl_mem), &vm->ops);
  if (rc == CL_SUCCESS) rc = cl.clSetKernelArg(k, a++, sizeof(int), &first);
  if (rc == CL_SUCCESS) rc = cl.clSetKernelArg(k, a++, sizeof(int), &last);
  if (rc == CL_SUCCESS) rc = cl.clSetKernelArg(k, a++, sizeof(int), &persistent);
  if (rc == CL_SUCCESS) rc = cl.clSetKernelArg(k, a++, sizeof(cl_mem), &vm->sync);
  if (rc == CL_SUCCESS) rc = cl.clSetKernelArg(k, a++, sizeof(cl_ulong), &limit);
  cl_mem stamps = vm->stamps ? vm->stamps : vm->dummy;
  int timing = persistent && vm->stamps;
  if (rc == CL_SUCCESS) rc = cl.clSetKernelArg(k, a++, sizeof(cl_mem), &stamps);
  if (rc == CL_SUCCESS) rc = cl.clSetKernelArg(k, a++, sizeof(int), &timing);
  if (rc == CL_SUCCESS) rc = cl.clSetKernelArg(k, a++, vm->lmem_bytes, NULL); /* vm_lmem */
  return rc == CL_SUCCESS ? 0 : ex_fail(&ex->enc, "setting the VM's arguments: %s", cl_error_name(rc));
}

/* A VM program this device already holds (another partition of the
 * delegate built or loaded it) that has every opcode of vm's, with the same
 * defines besides them: vm's defines become its, so that this partition
 * builds nothing. */
static void reuse_program(const GpuDevice* dev, VmState* vm) {
  for (int i = 0; i < dev->num_programs; ++i) {
    char merged[sizeof(vm->defines)];
    memcpy(merged, vm->defines, sizeof(merged));
    if (!strcmp(dev->programs[i].file, "vm_program.cl") &&
        vm_defines_merge(merged, sizeof(merged), dev->programs[i].defines) == 1) {
      memcpy(vm->defines, merged, sizeof(merged));
      return;
    }
  }
}

int vm_finish(Executor* ex) {
  VmState* vm = ex->vm;
  Encoder* e = &ex->enc;
  cl_ulong limit = vm_wait_bound(e->dev);
  reuse_program(e->dev, vm);
  if (ex->vm_cache.load) ex->vm_cache.load(ex->vm_cache.ctx, vm->defines, sizeof(vm->defines));
  if (vm_profile_init(ex)) return -1;
  for (int p = 0; p < vm->num_phases; ++p) {
    if (!(vm->steps[p] = gpu_device_kernel(e->dev, "vm_program.cl", vm->defines, "vm_run", e->err, e->errlen))) return -1;
    if (p == 0) {
      /* The group the kernel's registers allow, a power of two. */
      size_t most = 0;
      cl.clGetKernelWorkGroupInfo(vm->steps[0], e->dev->device, CL_KERNEL_WORK_GROUP_SIZE, sizeof(most), &most, NULL);
      if (e->dev->caps.max_work_group && e->dev->caps.max_work_group < most) most = e->dev->caps.max_work_group;
      size_t planned = vm->group;
      while (most && vm->group > most && vm->group > 1) vm->group /= 2;
      if (vm->group != planned && vm->group_phases)
        return ex_fail(e, "the VM's kernel takes at most %zu work-items per group here; its group bodies need %zu",
                       most, planned);
    }
    if (set_args(ex, vm->steps[p], p, p + 1, 0, limit)) return -1;
  }
  for (int s = 0; s < vm->num_segs; ++s) {
    VmSegment* seg = &vm->segs[s];
    if (!seg->vm || vm->mode != GD_EXEC_PERSISTENT) continue;
    if (!(seg->whole = gpu_device_kernel(e->dev, "vm_program.cl", vm->defines, "vm_run", e->err, e->errlen))) return -1;
    /* The second head's order (by level) unless timing: then every phase has a barrier before it. */
    int head = vm->timing ? 0 : vm->num_phases;
    if (set_args(ex, seg->whole, head + vm->phase_of[seg->first], head + vm->phase_of[seg->last - 1] + 1, 1, limit))
      return -1;
  }
  return 0;
}
