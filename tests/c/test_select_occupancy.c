/* uses: select/select_conv.c select/select_conv_gpu.c select/select_vm.c select/select_reduce.c select/policy.c select/policy_rules.c select/policy_resolve.c cl/target.c util/env_hooks.c */
/* Occupancy-aware selection (select_conv_gpu.c occupancy_group, issue 28):
 * the GPU-set selectors replayed on synthetic devices over the conv and
 * depthwise shapes of two real MediaPipe models, with the work-group count
 * of each launch asserted.
 *
 * Shapes: every CONV_2D and DEPTHWISE_CONV_2D of face_detection_short_range
 * and pose_landmark_full, as their .tflite files hold them (read with the
 * `tflite` flatbuffer package: input, output, filter, stride, padding;
 * depth multiplier 1 throughout), deduplicated with a launch count; the
 * delegate's fusions keep these output shapes, which alone set the launch.
 * FULLY_CONNECTED and MEAN from hand_landmark_full.
 *
 * Devices: an H200-like GPU (132 compute units, 48 KiB local memory,
 * groups of 1024) with the GPU set; the same with the rule off (compute
 * units 0: the groups before it); PoCL-like 2-unit CPUs with each set; a
 * 2-unit GPU. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "select/conv_geometry.h"
#include "config/options.h"
#include "select/selectors.h"

enum { FD = 0, PL = 1 };
static const char* kModels[] = {"face_detection_short_range", "pose_landmark_full"};

/* One shape: model, 'c' conv / 'd' depthwise, source and output BHWC,
 * square filter size, stride, SAME padding, launches of it in the model,
 * and the work-groups of its launch on the 132-unit GPU before and with
 * the rule. */
typedef struct Case {
  int model;
  char op;
  int src[4], dst[4];
  int k, stride, same, launches;
  size_t before, after;
} Case;

static const Case kCases[] = {
  {FD, 'c', {1, 128, 128, 3}, {1, 64, 64, 24}, 5, 2, 1, 1, 64, 256},
  {FD, 'd', {1, 64, 64, 24}, {1, 64, 64, 24}, 3, 1, 1, 2, 192, 384},
  {FD, 'c', {1, 64, 64, 24}, {1, 64, 64, 24}, 1, 1, 0, 1, 64, 256},
  {FD, 'c', {1, 64, 64, 24}, {1, 64, 64, 28}, 1, 1, 0, 1, 64, 256},
  {FD, 'd', {1, 64, 64, 28}, {1, 32, 32, 28}, 3, 2, 1, 1, 56, 224},
  {FD, 'c', {1, 32, 32, 28}, {1, 32, 32, 32}, 1, 1, 0, 1, 16, 64},
  {FD, 'd', {1, 32, 32, 32}, {1, 32, 32, 32}, 3, 1, 1, 1, 64, 256},
  {FD, 'c', {1, 32, 32, 32}, {1, 32, 32, 36}, 1, 1, 0, 1, 32, 128},
  {FD, 'd', {1, 32, 32, 36}, {1, 32, 32, 36}, 3, 1, 1, 1, 72, 288},
  {FD, 'c', {1, 32, 32, 36}, {1, 32, 32, 42}, 1, 1, 0, 1, 32, 128},
  {FD, 'd', {1, 32, 32, 42}, {1, 16, 16, 42}, 3, 2, 1, 1, 22, 88},
  {FD, 'c', {1, 16, 16, 42}, {1, 16, 16, 48}, 1, 1, 0, 1, 8, 32},
  {FD, 'd', {1, 16, 16, 48}, {1, 16, 16, 48}, 3, 1, 1, 1, 24, 96},
  {FD, 'c', {1, 16, 16, 48}, {1, 16, 16, 56}, 1, 1, 0, 1, 8, 32},
  {FD, 'd', {1, 16, 16, 56}, {1, 16, 16, 56}, 3, 1, 1, 1, 28, 112},
  {FD, 'c', {1, 16, 16, 56}, {1, 16, 16, 64}, 1, 1, 0, 1, 8, 32},
  {FD, 'd', {1, 16, 16, 64}, {1, 16, 16, 64}, 3, 1, 1, 1, 32, 128},
  {FD, 'c', {1, 16, 16, 64}, {1, 16, 16, 72}, 1, 1, 0, 1, 12, 48},
  {FD, 'd', {1, 16, 16, 72}, {1, 16, 16, 72}, 3, 1, 1, 1, 36, 144},
  {FD, 'c', {1, 16, 16, 72}, {1, 16, 16, 80}, 1, 1, 0, 1, 12, 48},
  {FD, 'd', {1, 16, 16, 80}, {1, 16, 16, 80}, 3, 1, 1, 1, 40, 160},
  {FD, 'c', {1, 16, 16, 80}, {1, 16, 16, 88}, 1, 1, 0, 1, 12, 48},
  {FD, 'd', {1, 16, 16, 88}, {1, 8, 8, 88}, 3, 2, 1, 1, 22, 88},
  {FD, 'c', {1, 8, 8, 88}, {1, 8, 8, 96}, 1, 1, 0, 1, 3, 12},
  {FD, 'd', {1, 8, 8, 96}, {1, 8, 8, 96}, 3, 1, 1, 4, 24, 96},
  {FD, 'c', {1, 8, 8, 96}, {1, 8, 8, 96}, 1, 1, 0, 4, 3, 12},
  {FD, 'c', {1, 16, 16, 88}, {1, 16, 16, 2}, 1, 1, 1, 1, 1, 4},
  {FD, 'c', {1, 8, 8, 96}, {1, 8, 8, 6}, 1, 1, 1, 1, 1, 1},
  {FD, 'c', {1, 16, 16, 88}, {1, 16, 16, 32}, 1, 1, 1, 1, 4, 16},
  {FD, 'c', {1, 8, 8, 96}, {1, 8, 8, 96}, 1, 1, 1, 1, 3, 12},
  {PL, 'c', {1, 258, 258, 3}, {1, 128, 128, 24}, 3, 2, 0, 1, 256, 512},
  {PL, 'd', {1, 128, 128, 24}, {1, 128, 128, 24}, 3, 1, 1, 1, 768, 768},
  {PL, 'c', {1, 128, 128, 24}, {1, 128, 128, 16}, 1, 1, 1, 1, 128, 512},
  {PL, 'c', {1, 128, 128, 16}, {1, 128, 128, 64}, 1, 1, 1, 1, 512, 512},
  {PL, 'd', {1, 128, 128, 16}, {1, 128, 128, 16}, 3, 1, 1, 1, 512, 512},
  {PL, 'c', {1, 128, 128, 16}, {1, 128, 128, 8}, 1, 1, 0, 1, 64, 256},
  {PL, 'd', {1, 130, 130, 64}, {1, 64, 64, 64}, 3, 2, 0, 1, 512, 512},
  {PL, 'c', {1, 64, 64, 64}, {1, 64, 64, 24}, 1, 1, 1, 1, 64, 256},
  {PL, 'c', {1, 64, 64, 24}, {1, 64, 64, 144}, 1, 1, 1, 2, 320, 320},
  {PL, 'd', {1, 64, 64, 144}, {1, 64, 64, 144}, 3, 1, 1, 1, 1152, 1152},
  {PL, 'c', {1, 64, 64, 144}, {1, 64, 64, 24}, 1, 1, 1, 1, 64, 256},
  {PL, 'd', {1, 64, 64, 24}, {1, 64, 64, 24}, 3, 1, 1, 1, 192, 384},
  {PL, 'c', {1, 64, 64, 24}, {1, 64, 64, 48}, 1, 1, 0, 1, 128, 384},
  {PL, 'd', {1, 68, 68, 144}, {1, 32, 32, 144}, 5, 2, 0, 1, 288, 288},
  {PL, 'c', {1, 32, 32, 144}, {1, 32, 32, 32}, 1, 1, 1, 1, 16, 64},
  {PL, 'c', {1, 32, 32, 32}, {1, 32, 32, 192}, 1, 1, 1, 2, 96, 384},
  {PL, 'd', {1, 32, 32, 192}, {1, 32, 32, 192}, 5, 1, 1, 1, 384, 384},
  {PL, 'c', {1, 32, 32, 192}, {1, 32, 32, 32}, 1, 1, 1, 1, 16, 64},
  {PL, 'd', {1, 32, 32, 32}, {1, 32, 32, 32}, 3, 1, 1, 1, 64, 256},
  {PL, 'c', {1, 32, 32, 32}, {1, 32, 32, 48}, 1, 1, 0, 1, 32, 128},
  {PL, 'd', {1, 34, 34, 192}, {1, 16, 16, 192}, 3, 2, 0, 1, 96, 384},
  {PL, 'c', {1, 16, 16, 192}, {1, 16, 16, 64}, 1, 1, 1, 1, 8, 32},
  {PL, 'c', {1, 16, 16, 64}, {1, 16, 16, 384}, 1, 1, 1, 3, 48, 192},
  {PL, 'd', {1, 16, 16, 384}, {1, 16, 16, 384}, 3, 1, 1, 2, 192, 384},
  {PL, 'c', {1, 16, 16, 384}, {1, 16, 16, 64}, 1, 1, 1, 2, 8, 32},
  {PL, 'd', {1, 16, 16, 384}, {1, 16, 16, 384}, 5, 1, 1, 1, 192, 384},
  {PL, 'c', {1, 16, 16, 384}, {1, 16, 16, 88}, 1, 1, 1, 1, 12, 48},
  {PL, 'c', {1, 16, 16, 88}, {1, 16, 16, 528}, 1, 1, 1, 3, 68, 264},
  {PL, 'd', {1, 16, 16, 528}, {1, 16, 16, 528}, 5, 1, 1, 2, 264, 264},
  {PL, 'c', {1, 16, 16, 528}, {1, 16, 16, 88}, 1, 1, 1, 2, 12, 48},
  {PL, 'd', {1, 16, 16, 88}, {1, 16, 16, 88}, 3, 1, 1, 1, 44, 176},
  {PL, 'c', {1, 16, 16, 88}, {1, 16, 16, 48}, 1, 1, 0, 1, 8, 32},
  {PL, 'd', {1, 20, 20, 528}, {1, 8, 8, 528}, 5, 2, 0, 1, 132, 264},
  {PL, 'c', {1, 8, 8, 528}, {1, 8, 8, 144}, 1, 1, 1, 1, 5, 20},
  {PL, 'c', {1, 8, 8, 144}, {1, 8, 8, 864}, 1, 1, 1, 4, 27, 108},
  {PL, 'd', {1, 8, 8, 864}, {1, 8, 8, 864}, 5, 1, 1, 3, 216, 432},
  {PL, 'c', {1, 8, 8, 864}, {1, 8, 8, 144}, 1, 1, 1, 3, 5, 20},
  {PL, 'd', {1, 8, 8, 864}, {1, 8, 8, 864}, 3, 1, 1, 3, 216, 432},
  {PL, 'c', {1, 8, 8, 864}, {1, 8, 8, 48}, 1, 1, 0, 1, 2, 8},
  {PL, 'd', {1, 64, 64, 48}, {1, 64, 64, 48}, 3, 1, 1, 1, 384, 384},
  {PL, 'c', {1, 64, 64, 48}, {1, 64, 64, 8}, 1, 1, 0, 1, 16, 64},
  {PL, 'd', {1, 128, 128, 8}, {1, 128, 128, 8}, 3, 1, 1, 2, 256, 512},
  {PL, 'c', {1, 128, 128, 8}, {1, 128, 128, 8}, 1, 1, 0, 2, 64, 256},
  {PL, 'd', {1, 256, 256, 8}, {1, 256, 256, 8}, 3, 1, 1, 2, 1024, 1024},
  {PL, 'c', {1, 256, 256, 8}, {1, 256, 256, 8}, 1, 1, 0, 2, 256, 512},
  {PL, 'c', {1, 256, 256, 8}, {1, 256, 256, 1}, 3, 1, 1, 1, 256, 512},
  {PL, 'c', {1, 64, 64, 48}, {1, 64, 64, 39}, 1, 1, 1, 1, 128, 320},
  {PL, 'c', {1, 8, 8, 864}, {1, 8, 8, 288}, 1, 1, 0, 1, 9, 36},
  {PL, 'd', {1, 8, 8, 288}, {1, 4, 4, 288}, 3, 2, 1, 1, 72, 144},
  {PL, 'c', {1, 4, 4, 288}, {1, 4, 4, 288}, 1, 1, 0, 5, 9, 36},
  {PL, 'd', {1, 4, 4, 288}, {1, 4, 4, 288}, 3, 1, 1, 4, 72, 144},
  {PL, 'd', {1, 4, 4, 288}, {1, 2, 2, 288}, 3, 2, 1, 1, 72, 72},
  {PL, 'c', {1, 2, 2, 288}, {1, 2, 2, 288}, 1, 1, 0, 6, 9, 36},
  {PL, 'd', {1, 2, 2, 288}, {1, 2, 2, 288}, 3, 1, 1, 5, 72, 72},
  {PL, 'c', {1, 2, 2, 288}, {1, 1, 1, 195}, 2, 1, 0, 1, 7, 25},
  {PL, 'c', {1, 2, 2, 288}, {1, 1, 1, 117}, 2, 1, 0, 1, 4, 15},
  {PL, 'c', {1, 2, 2, 288}, {1, 1, 1, 1}, 2, 1, 0, 1, 1, 1},
};
#define NCASES (sizeof(kCases) / sizeof(kCases[0]))

/* The 132-unit GPU's target: 2 groups per unit. */
#define TARGET 264
/* select_conv_gpu.c's OCC_MIN_GROUP. */
#define MIN_GROUP 16

/* A device as the selectors see it: its caps and the rule's policy for
 * them (select/policy_rules.c), with this kernel set; freed with free(). */
typedef struct FakeDevice {
  SelectTarget t; /* first: the SelectTarget* is the allocation */
  GpuCaps caps;
} FakeDevice;

static SelectTarget* device(unsigned units, int is_gpu, size_t local_mem, size_t max_group, KernelSet set) {
  FakeDevice* d = calloc(1, sizeof(*d));
  d->caps.is_gpu = is_gpu;
  d->caps.is_cpu = !is_gpu;
  d->caps.compute_units = units;
  d->caps.local_mem = local_mem;
  d->caps.local_mem_dedicated = is_gpu;
  d->caps.max_work_group = max_group;
  for (int i = 0; i < 3; ++i) d->caps.max_item[i] = max_group;
  d->t.caps = &d->caps;
  policy_rule(&d->caps, &d->t.pol);
  d->t.pol.v[POL_KERNEL_SET] = set;
  return &d->t;
}

/* The graph of one node: source 0, output 1, weights 2 (TFLite layout:
 * [O, KH, KW, I] for conv, [1, KH, KW, C] for depthwise). */
typedef struct OneNode {
  GTensor t[3];
  GNode n;
  Graph g;
} OneNode;

static void conv_node(const Case* c, OneNode* o) {
  memset(o, 0, sizeof(*o));
  memcpy(o->t[0].shape, c->src, sizeof(c->src));
  memcpy(o->t[1].shape, c->dst, sizeof(c->dst));
  int w[4] = {c->op == 'd' ? 1 : c->dst[GD_C], c->k, c->k, c->op == 'd' ? c->dst[GD_C] : c->src[GD_C]};
  memcpy(o->t[2].shape, w, sizeof(w));
  for (int i = 0; i < 3; ++i) o->t[i].rank = 4;
  o->n.inputs[0] = 0;
  o->n.num_inputs = 1;
  o->n.outputs[0] = 1;
  o->n.num_outputs = 1;
  int pad = c->same ? (c->k - 1) / 2 : 0;
  o->n.p.conv.kw = o->n.p.conv.kh = c->k;
  o->n.p.conv.sx = o->n.p.conv.sy = c->stride;
  o->n.p.conv.dx = o->n.p.conv.dy = 1;
  o->n.p.conv.pad_x = o->n.p.conv.pad_y = pad;
  o->n.p.conv.multiplier = 1;
  o->n.p.conv.weights = 2;
  o->n.p.conv.bias = -1;
  o->g = (Graph){.tensors = o->t, .num_tensors = 3, .cap_tensors = 3, .nodes = &o->n, .num_nodes = 1, .cap_nodes = 1};
}

static KernelVariant select_case(const SelectTarget* d, const Case* c) {
  OneNode o;
  conv_node(c, &o);
  KernelVariant v;
  if (c->op == 'd')
    select_depthwise(d, &o.g, &o.n, &v);
  else
    select_conv2d(d, &o.g, &o.n, &v);
  return v;
}

/* Work-groups of a launch with a fixed group (as dispatch.c rounds it). */
static size_t groups(const KernelVariant* v) {
  size_t n = 1;
  for (int i = 0; i < v->dims; ++i) n *= div_up(v->global[i], v->local[i] ? v->local[i] : 1);
  return n;
}

static int same_variant(const KernelVariant* a, const KernelVariant* b) {
  return strcmp(a->file, b->file) == 0 && strcmp(a->kernel, b->kernel) == 0 && strcmp(a->defines, b->defines) == 0 &&
         a->dims == b->dims && memcmp(a->global, b->global, sizeof(a->global)) == 0 &&
         memcmp(a->local, b->local, sizeof(a->local)) == 0 && a->heavy == b->heavy &&
         a->weight_block == b->weight_block && a->form == b->form && a->total == b->total &&
         a->global_in_groups == b->global_in_groups;
}

static int pow2(size_t x) { return x && !(x & (x - 1)); }

/* The default group of the case's kernel (select_conv_gpu.c): conv 16 x 4, or
 * 64 x 1 for one or two 8-channel blocks; depthwise 8 x 8. */
static void default_group(const Case* c, size_t* lx, size_t* ly) {
  if (c->op == 'd') {
    *lx = DWG_LX, *ly = DWG_LY;
    return;
  }
  int blocks = ((c->dst[GD_C] + 3) / 4 + CONVG_BS - 1) / CONVG_BS;
  *lx = blocks <= 2 ? 64 : CONVG_LX, *ly = blocks <= 2 ? 1 : CONVG_LY;
}

static size_t conv_local_bytes(size_t lx, size_t ly) { return 16 * CONVG_KT * (lx * CONVG_TP + 4 * ly * CONVG_BS); }

/* The group the defines build: kernel_abi.h's default when they name none. */
static void defined_group(const Case* c, const KernelVariant* v, size_t* lx, size_t* ly) {
  const char* fmt = c->op == 'd' ? "-DDWG_LX=%zu -DDWG_LY=%zu" : "-DCONVG_LX=%zu -DCONVG_LY=%zu";
  *lx = c->op == 'd' ? DWG_LX : CONVG_LX, *ly = c->op == 'd' ? DWG_LY : CONVG_LY;
  if (v->defines[0] && sscanf(v->defines, fmt, lx, ly) != 2) *lx = *ly = 0;
}

/* Independently of the selector's search: the best any legal group does
 * (powers of two, each side at most the default's, MIN_GROUP or more work-
 * items, within local memory): the most groups when none reaches TARGET,
 * else the largest group that does. */
static void best_legal(const Case* c, const KernelVariant* v, size_t local_mem, size_t* most, size_t* largest) {
  size_t lx0, ly0;
  default_group(c, &lx0, &ly0);
  *most = 0, *largest = 0;
  for (size_t x = 1; x <= lx0; x *= 2)
    for (size_t y = 1; y <= ly0; y *= 2) {
      if (x * y < MIN_GROUP || (c->op == 'c' && conv_local_bytes(x, y) > local_mem)) continue;
      size_t g = div_up(v->global[0], x) * div_up(v->global[1], y) * v->global[2];
      if (g > *most) *most = g;
      if (g >= TARGET && x * y > *largest) *largest = x * y;
    }
}

static int cmp_size(const void* a, const void* b) {
  size_t x = *(const size_t*)a, y = *(const size_t*)b;
  return x < y ? -1 : x > y;
}

static void test_h200_replay(int print) {
  SelectTarget* h200 = device(132, 1, 48 * 1024, 1024, GD_KSET_GPU);
  SelectTarget* off = device(0, 1, 48 * 1024, 1024, GD_KSET_GPU);
  CHECK(select_occupancy_target(h200) == TARGET, "target %zu", select_occupancy_target(h200));
  CHECK(select_occupancy_target(off) == 0, "no units: no target");
  size_t* before_all[2];
  size_t* after_all[2];
  size_t count[2] = {0, 0}, below_before[2] = {0, 0}, below_after[2] = {0, 0};
  for (int m = 0; m < 2; ++m) {
    before_all[m] = calloc(512, sizeof(size_t));
    after_all[m] = calloc(512, sizeof(size_t));
  }
  if (print) printf("model shape op before after group\n");
  for (size_t i = 0; i < NCASES; ++i) {
    const Case* c = &kCases[i];
    KernelVariant b = select_case(off, c), a = select_case(h200, c);
    size_t gb = groups(&b), ga = groups(&a);
    size_t lx0, ly0, lx, ly;
    default_group(c, &lx0, &ly0);
    defined_group(c, &a, &lx, &ly);
    if (print)
      printf("%s %dx%dx%d->%dx%dx%d %c%d/%d %zu %zu %zux%zu\n", kModels[c->model], c->src[1], c->src[2], c->src[3],
             c->dst[1], c->dst[2], c->dst[3], c->op, c->k, c->stride, gb, ga, a.local[0], a.local[1]);
    CHECK(strcmp(a.file, c->op == 'd' ? "depthwise_gpu.cl" : "conv_gpu.cl") == 0, "case %zu: %s", i, a.file);
    CHECK(b.local[0] == lx0 && b.local[1] == ly0, "case %zu: the rule off changed the default group", i);
    CHECK(gb == c->before, "case %zu (%s %c %dx%dx%d): %zu groups before, want %zu", i, kModels[c->model], c->op,
          c->dst[1], c->dst[2], c->dst[3], gb, c->before);
    CHECK(ga == c->after, "case %zu (%s %c %dx%dx%d): %zu groups, want %zu", i, kModels[c->model], c->op, c->dst[1],
          c->dst[2], c->dst[3], ga, c->after);
    CHECK(ga >= gb, "case %zu: fewer groups (%zu < %zu)", i, ga, gb);
    /* Only the group changes: kernel, grid, weights, arguments stay. */
    CHECK(strcmp(a.kernel, b.kernel) == 0 && memcmp(a.global, b.global, sizeof(a.global)) == 0 &&
              a.weight_block == b.weight_block && a.form == b.form && a.total == b.total,
          "case %zu: more than the group changed", i);
    if (gb >= TARGET) CHECK(same_variant(&a, &b), "case %zu: %zu groups already, yet changed", i, gb);
    if (ga == gb) CHECK(same_variant(&a, &b), "case %zu: no more groups, yet changed (a program for nothing)", i);
    /* A group the kernel is built for (its defines) and handles. */
    CHECK(lx == a.local[0] && ly == a.local[1] && a.local[2] == 1, "case %zu: defines '%s' vs local %zux%zu", i,
          a.defines, a.local[0], a.local[1]);
    CHECK(pow2(lx) && pow2(ly) && lx <= lx0 && ly <= ly0, "case %zu: group %zux%zu", i, lx, ly);
    CHECK(lx * ly >= MIN_GROUP && lx * ly <= 256, "case %zu: group of %zu", i, lx * ly);
    if (c->op == 'c') CHECK(conv_local_bytes(lx, ly) <= 48 * 1024, "case %zu: local memory", i);
    size_t most, largest;
    best_legal(c, &a, 48 * 1024, &most, &largest);
    if (ga < TARGET)
      CHECK(ga == most, "case %zu: %zu groups, a legal group gives %zu", i, ga, most);
    else if (gb < TARGET)
      CHECK(lx * ly == largest, "case %zu: group of %zu reaches the target, %zu would", i, lx * ly, largest);
    for (int k = 0; k < c->launches; ++k) {
      before_all[c->model][count[c->model]] = gb;
      after_all[c->model][count[c->model]++] = ga;
      below_before[c->model] += gb < TARGET;
      below_after[c->model] += ga < TARGET;
    }
  }
  for (int m = 0; m < 2; ++m) {
    qsort(before_all[m], count[m], sizeof(size_t), cmp_size);
    qsort(after_all[m], count[m], sizeof(size_t), cmp_size);
    if (print)
      printf("%s: %zu conv/depthwise launches, %zu / %zu below %d groups, median %zu -> %zu, min %zu -> %zu\n",
             kModels[m], count[m], below_before[m], below_after[m], TARGET, before_all[m][count[m] / 2],
             after_all[m][count[m] / 2], before_all[m][0], after_all[m][0]);
    free(before_all[m]);
    free(after_all[m]);
  }
  CHECK(count[FD] == 37 && count[PL] == 96, "launches %zu %zu", count[FD], count[PL]);
  free(h200);
  free(off);
}

/* A 2-unit CPU (PoCL: 2 MiB of emulated local memory, groups of 4096)
 * with either set, and the GPU set with the rule off: identical variants.
 * The hook TFLITE_GPU_COMPUTE_UNITS=132 turns the rule on there and gives
 * the 132-unit GPU's groups. */
static void test_cpu_unchanged(void) {
  SelectTarget* cpu = device(2, 0, 2 << 20, 4096, GD_KSET_CPU);
  SelectTarget* cpu_off = device(0, 0, 2 << 20, 4096, GD_KSET_CPU);
  SelectTarget* cpu_gpuset = device(2, 0, 2 << 20, 4096, GD_KSET_GPU);
  SelectTarget* cpu_gpuset_off = device(0, 0, 2 << 20, 4096, GD_KSET_GPU);
  SelectTarget* h200 = device(132, 1, 48 * 1024, 1024, GD_KSET_GPU);
  CHECK(select_occupancy_target(cpu) == 0 && select_occupancy_target(cpu_gpuset) == 0, "a CPU has a target");
  for (size_t i = 0; i < NCASES; ++i) {
    const Case* c = &kCases[i];
    KernelVariant a = select_case(cpu, c), b = select_case(cpu_off, c);
    CHECK(same_variant(&a, &b), "case %zu: the CPU set changed on a 2-unit CPU", i);
    CHECK(strcmp(a.file, c->op == 'd' ? "depthwise.cl" : "conv.cl") == 0, "case %zu: CPU set ran %s", i, a.file);
    a = select_case(cpu_gpuset, c), b = select_case(cpu_gpuset_off, c);
    CHECK(same_variant(&a, &b), "case %zu: the GPU set changed on a 2-unit CPU", i);
  }
  setenv("TFLITE_GPU_COMPUTE_UNITS", "132", 1);
  CHECK(select_occupancy_target(cpu_gpuset) == TARGET, "hook: target %zu", select_occupancy_target(cpu_gpuset));
  for (size_t i = 0; i < NCASES; ++i) {
    KernelVariant a = select_case(cpu_gpuset, &kCases[i]), b = select_case(h200, &kCases[i]);
    CHECK(same_variant(&a, &b), "case %zu: the hook's groups differ from the 132-unit GPU's", i);
    a = select_case(cpu, &kCases[i]), b = select_case(cpu_off, &kCases[i]);
    CHECK(same_variant(&a, &b), "case %zu: the hook changed the CPU set", i);
  }
  unsetenv("TFLITE_GPU_COMPUTE_UNITS");
  free(cpu);
  free(cpu_off);
  free(cpu_gpuset);
  free(cpu_gpuset_off);
  free(h200);
}

/* A 2-unit GPU (target 4): a launch of 4 groups or more keeps its group;
 * fewer never get fewer. Small local memory (16 KiB) rules out the 64 x 1
 * conv group's tiles (16.5 KiB): those convs run the CPU set's kernels
 * there, as before. */
static void test_small_gpu(void) {
  SelectTarget* gpu = device(2, 1, 16 * 1024, 256, GD_KSET_GPU);
  SelectTarget* off = device(0, 1, 16 * 1024, 256, GD_KSET_GPU);
  CHECK(select_occupancy_target(gpu) == 4, "target %zu", select_occupancy_target(gpu));
  for (size_t i = 0; i < NCASES; ++i) {
    KernelVariant a = select_case(gpu, &kCases[i]), b = select_case(off, &kCases[i]);
    CHECK(strcmp(a.file, b.file) == 0, "case %zu: %s vs %s", i, a.file, b.file);
    if (strcmp(a.file, "conv_gpu.cl") != 0 && strcmp(a.file, "depthwise_gpu.cl") != 0) continue;
    size_t ga = groups(&a), gb = groups(&b);
    CHECK(gb < 4 ? ga >= gb : same_variant(&a, &b), "case %zu: %zu -> %zu groups", i, gb, ga);
    CHECK(conv_local_bytes(a.local[0], a.local[1]) <= 16 * 1024 || strcmp(a.kernel, "depthwise_gpu") == 0,
          "case %zu: local memory", i);
  }
  free(gpu);
  free(off);
}

/* A depthwise fused into the 1x1 after it (fuse_dw_conv.c) launches as that
 * 1x1 does: same groups and defines, on every device that fuses; only the
 * kernel differs. Devices without the GPU set, and the test hook, fuse
 * nothing. */
static void test_fused_pair_groups(void) {
  SelectTarget* h200 = device(132, 1, 48 * 1024, 1024, GD_KSET_GPU);
  SelectTarget* small = device(2, 1, 32 * 1024, 256, GD_KSET_GPU);
  SelectTarget* tiny = device(2, 1, 16 * 1024, 256, GD_KSET_GPU);
  SelectTarget* cpu = device(2, 0, 512 * 1024, 4096, GD_KSET_CPU);
  CHECK(select_gpu_convs_always(h200) && select_gpu_convs_always(small), "the GPU set fuses");
  CHECK(!select_gpu_convs_always(cpu), "the CPU set does not fuse");
  /* 16 KiB holds 16 x 4 groups' tiles but not 64 x 1's, whose narrow 1x1s
   * fall back to the CPU set: no fused kernel to fall back from. The GPU
   * set's passes (fuse.c) need this; their hooks are tested with the table
   * (tests/test_fusion_passes.py). */
  CHECK(!select_gpu_convs_always(tiny), "a device without 64 x 1 groups does not fuse");
  CHECK(select_pw_depthwise_fits(h200) && select_pw_depthwise_fits(small), "pw_depthwise_gpu's band fits");
  /* A fused pair launches over its 1x1's grid, in groups of its own
   * (fuse_dw_conv.h): as many rows as output blocks, up to
   * DW_1X1_MAX_ROWS, whatever the occupancy; then LX narrowed from 16 (not
   * below 4, nor 16 work-items) while that adds groups below the target. */
  SelectTarget* devs[2] = {h200, small};
  int pairs = 0, narrowed = 0;
  for (size_t i = 0; i < NCASES; ++i) {
    const Case* c = &kCases[i];
    if (c->op != 'c' || c->k != 1 || c->stride != 1) continue;
    for (int d = 0; d < 2; ++d) {
      KernelVariant plain = select_case(devs[d], c);
      OneNode o;
      conv_node(c, &o);
      /* The fused node holds the depthwise's geometry (a 3x3, stride 2). */
      o.n.op = GOP_DW_CONV1X1;
      o.n.p.conv.kw = o.n.p.conv.kh = 3;
      o.n.p.conv.sx = o.n.p.conv.sy = 2;
      o.n.p.conv.pad_x = o.n.p.conv.pad_y = 1;
      KernelVariant fused;
      select_dw_conv1x1(devs[d], &o.g, &o.n, &fused);
      CHECK(strcmp(fused.kernel, "dw_conv2d_1x1_gpu") == 0 && fused.form == CONV_ARGS_DW_1X1, "case %zu: %s",
            i, fused.kernel);
      size_t blocks = div_up(div_up((size_t)c->dst[GD_C], 4), CONVG_BS);
      size_t rows = (size_t)dw_1x1_rows((long)blocks);
      CHECK(rows >= (blocks < DW_1X1_MAX_ROWS ? blocks : DW_1X1_MAX_ROWS) && rows / 2 < blocks,
            "case %zu: %zu rows for %zu blocks", i, rows, blocks);
      CHECK(fused.local[1] == rows && fused.global[1] == plain.global[1] && fused.global[0] == plain.global[0] &&
                fused.global[2] == plain.global[2],
            "case %zu, device %d: group %zu x %zu over the 1x1's grid", i, d, fused.local[0], fused.local[1]);
      size_t lx = fused.local[0], target = select_occupancy_target(devs[d]);
      CHECK(pow2(lx) && lx <= CONVG_LX && lx >= 4 && lx * rows >= 16, "case %zu: LX %zu", i, lx);
      if (lx < CONVG_LX) {
        /* narrowed only while short of the target, each halving adding groups */
        size_t wider = div_up(fused.global[0], 2 * lx) * div_up(fused.global[1], rows) * fused.global[2];
        CHECK(wider < target && groups(&fused) > wider, "case %zu: narrowed to %zu for nothing", i, lx);
        ++narrowed;
      } else {
        CHECK(groups(&fused) >= target || lx / 2 < 4 || (lx / 2) * rows < 16 ||
                  div_up(fused.global[0], lx / 2) == div_up(fused.global[0], lx),
              "case %zu: %zu groups, not narrowed", i, groups(&fused));
      }
      char want[64];
      snprintf(want, sizeof(want), "-DCONVG_LX=%zu -DCONVG_LY=%zu", lx, rows);
      CHECK(strcmp(fused.defines, lx == CONVG_LX && rows == CONVG_LY ? "" : want) == 0, "case %zu: defines %s", i,
            fused.defines);
      ++pairs;
    }
  }
  CHECK(narrowed > 0, "no fused launch was narrowed");
  /* The serial depthwise loads per work-item the fusion rule bounds. */
  CHECK(dw_1x1_item_taps(3, 3, 24, 24) == 4 * 9 * 2, "3x3, 24 -> 24: 3 blocks, 4 rows, 2 K steps");
  CHECK(dw_1x1_item_taps(5, 5, 1152, 192) == 1 * 25 * 72, "5x5, 1152 -> 192: 24 blocks, 16 rows, 72 K steps");
  CHECK(dw_1x1_item_taps(5, 5, 20, 8) == 16 * 25 * 2, "5x5, 20 -> 8: one block, one row");
  CHECK(pairs > 10, "only %d 1x1 cases", pairs);
  free(h200);
  free(small);
  free(tiny);
  free(cpu);
}

/* A 1x1 fused into the depthwise after it (fuse_pw_dw.h), on the 132-unit
 * GPU and the 2-unit one alike: a group of PWDW_WG per band, slice and
 * batch item, the bands as tall as PWDW_LOCAL holds. The shapes are
 * hand_landmark_full's (14x14 and 7x7 blocks) and pose_detection's first
 * (56x56: four bands). */
static void test_pw_dw_groups(void) {
  SelectTarget* h200 = device(132, 1, 48 * 1024, 1024, GD_KSET_GPU);
  SelectTarget* small = device(2, 1, 32 * 1024, 256, GD_KSET_GPU);
  struct {
    int src[4], dst[4], k, stride;
    size_t bands, groups;
  } pairs[] = {
      {{1, 14, 14, 80}, {1, 14, 14, 480}, 5, 1, 1, 120},   /* one band: 196 source values */
      {{1, 14, 14, 112}, {1, 7, 7, 672}, 5, 2, 1, 168},    /* stride 2, still one band */
      {{1, 7, 7, 192}, {1, 7, 7, 1152}, 5, 1, 1, 288},     /* the last blocks: 288 slices */
      {{1, 56, 56, 24}, {1, 56, 56, 144}, 3, 1, 4, 144},   /* 16 rows a band: 18 source rows of 56 */
      {{2, 112, 112, 16}, {2, 56, 56, 64}, 3, 2, 14, 448}, /* 4 rows: 9 source rows of 112, batch 2 */
  };
  SelectTarget* devs[2] = {h200, small};
  for (size_t i = 0; i < sizeof(pairs) / sizeof(pairs[0]); ++i)
    for (int d = 0; d < 2; ++d) {
      Case c = {0, 'd', {0}, {0}, pairs[i].k, pairs[i].stride, 1, 1, 0, 0};
      memcpy(c.src, pairs[i].src, sizeof(c.src));
      memcpy(c.dst, pairs[i].dst, sizeof(c.dst));
      OneNode o;
      conv_node(&c, &o);
      o.n.op = GOP_PW_DEPTHWISE;
      o.n.p.conv.mean_of = -1;
      KernelVariant v;
      select_pw_depthwise(devs[d], &o.g, &o.n, &v);
      CHECK(strcmp(v.kernel, "pw_depthwise_gpu") == 0 && v.form == CONV_ARGS_PW_DW && v.dims == 2,
            "pair %zu: %s", i, v.kernel);
      CHECK(v.local[0] == PWDW_WG && v.local[1] == 1 && !v.defines[0], "pair %zu: group %zu", i, v.local[0]);
      CHECK(v.global[0] == PWDW_WG * pairs[i].bands && groups(&v) == pairs[i].groups,
            "pair %zu: %zu bands, %zu groups", i, v.global[0] / PWDW_WG, groups(&v));
      int h = pairs[i].dst[GD_H], sh = pairs[i].src[GD_H], sw = pairs[i].src[GD_W];
      int rows = pw_dw_band_rows(h, sh, sw, pairs[i].stride, pairs[i].k, 1);
      CHECK(pw_dw_band_src_rows(rows, sh, pairs[i].stride, pairs[i].k, 1) * sw <= PWDW_LOCAL &&
                (rows == h || pw_dw_band_src_rows(rows + 1, sh, pairs[i].stride, pairs[i].k, 1) * sw > PWDW_LOCAL),
            "pair %zu: %d rows a band, not the most that fit", i, rows);
    }
  /* A 5x5 over rows of 300: five source rows are 1,500 float4s. */
  CHECK(pw_dw_band_rows(6, 6, 300, 1, 5, 1) == 0, "no band of a 300-wide 5x5");
  CHECK(pw_dw_band_rows(6, 6, 300, 1, 3, 1) == 1, "one row a band of a 300-wide 3x3");
  free(h200);
  free(small);
}

/* FULLY_CONNECTED and MEAN (hand_landmark_full: 1152 -> 63 and 1, the
 * 7x7x1152 global average): one work-group per output float4 whatever the
 * group size, so the rule has nothing to shrink there (a split reduction
 * would need new kernels); the variants are the same on every GPU. */
static void test_reductions_unchanged(void) {
  SelectTarget* h200 = device(132, 1, 48 * 1024, 1024, GD_KSET_GPU);
  SelectTarget* off = device(0, 1, 48 * 1024, 1024, GD_KSET_GPU);
  struct {
    int src[4], dst[4];
    int mean;
    size_t groups;
  } rs[] = {{{1, 1, 1, 1152}, {1, 1, 1, 63}, 0, 16},
            {{1, 1, 1, 1152}, {1, 1, 1, 1}, 0, 1},
            {{1, 7, 7, 1152}, {1, 1, 1, 1152}, 1, 288}};
  for (size_t i = 0; i < sizeof(rs) / sizeof(rs[0]); ++i) {
    GTensor t[2] = {{.rank = 4}, {.rank = 4}};
    memcpy(t[0].shape, rs[i].src, sizeof(rs[i].src));
    memcpy(t[1].shape, rs[i].dst, sizeof(rs[i].dst));
    GNode n = {.inputs = {0}, .num_inputs = 1, .outputs = {1}, .num_outputs = 1};
    n.p.reduce.op = REDUCE_MEAN;
    n.p.reduce.axes[GD_H] = n.p.reduce.axes[GD_W] = rs[i].mean;
    Graph g = {.tensors = t, .num_tensors = 2, .cap_tensors = 2, .nodes = &n, .num_nodes = 1, .cap_nodes = 1};
    KernelVariant a, b;
    if (rs[i].mean) {
      select_reduce(h200, &g, &n, &a);
      select_reduce(off, &g, &n, &b);
    } else {
      select_fully_connected(h200, &g, &n, &a);
      select_fully_connected(off, &g, &n, &b);
    }
    CHECK(same_variant(&a, &b), "reduction %zu changed", i);
    CHECK(a.global_in_groups && a.global[0] / a.local[0] == rs[i].groups, "reduction %zu: %zu groups, want %zu", i,
          a.global[0] / (a.local[0] ? a.local[0] : 1), rs[i].groups);
  }
  free(h200);
  free(off);
}

/* The VM's splits of long reductions (select_conv_split, select_fc_split):
 * on an H200-like GPU in the VM modes, a conv or FULLY_CONNECTED of few
 * output items and VM_SPLIT_MIN_STEPS (128) reduction steps or more splits into chunks of about
 * sqrt(steps); a full grid's worth of items, a short reduction, kernels
 * mode and a CPU (register tiles, no fine bodies) keep one pass. */
static void test_vm_splits(void) {
  SelectTarget* h200 = device(132, 1, 48 * 1024, 1024, GD_KSET_CPU);
  SelectTarget* cpu = device(2, 0, 48 * 1024, 4096, GD_KSET_CPU);
  h200->pol.v[POL_EXECUTION] = cpu->pol.v[POL_EXECUTION] = GD_EXEC_PERSISTENT;
  static const struct {
    Case c;
    int chunk;
  } convs[] = {
      /* pose_landmark_full's 2x2 heads on a 1x1 output: 4 x 72 steps, 49 tiles. */
      {{PL, 'c', {1, 2, 2, 288}, {1, 1, 1, 195}, 2, 1, 0, 1, 0, 0}, 17},
      {{PL, 'c', {1, 2, 2, 288}, {1, 1, 1, 1}, 2, 1, 0, 1, 0, 0}, 17},
      /* face_detection_short_range's 1x1 heads: 22 steps. */
      {{FD, 'c', {1, 16, 16, 88}, {1, 16, 16, 2}, 1, 1, 0, 1, 0, 0}, 0},
      /* 1,536 tiles of 144 steps: more than an eighth of the grid. */
      {{PL, 'c', {1, 16, 16, 576}, {1, 16, 16, 96}, 1, 1, 0, 1, 0, 0}, 0},
      /* 1x1 at 8x8, 256 -> 64: 64 steps. */
      {{FD, 'c', {1, 8, 8, 256}, {1, 8, 8, 64}, 1, 1, 0, 1, 0, 0}, 0},
      /* 3x3 at 8x8, 96 -> 96: 384 tiles of 216 steps. */
      {{FD, 'c', {1, 8, 8, 96}, {1, 8, 8, 96}, 3, 1, 1, 1, 0, 0}, 15},
  };
  for (size_t i = 0; i < sizeof(convs) / sizeof(convs[0]); ++i) {
    OneNode o;
    conv_node(&convs[i].c, &o);
    int got = select_conv_split(h200, &o.g, &o.n);
    CHECK(got == convs[i].chunk, "conv %zu: chunk %d, want %d", i, got, convs[i].chunk);
    CHECK(select_conv_split(cpu, &o.g, &o.n) == 0, "conv %zu split on a CPU", i);
  }
  /* hand_landmark_full's heads: 288 slices, 16 and 1 output float4s;
   * with the group bodies off (on, fully_connected_gpu takes them whole). */
  static const int fcs[][3] = {{1152, 63, 17}, {1152, 1, 17}, {600, 63, 13}, {400, 8, 0}, {1152, 8448, 0}};
  for (size_t i = 0; i < sizeof(fcs) / sizeof(fcs[0]); ++i) {
    h200->pol.v[POL_VM_GROUP_BODIES] = 0;
    GTensor t[2] = {{.rank = 4, .shape = {1, 1, 1, fcs[i][0]}}, {.rank = 4, .shape = {1, 1, 1, fcs[i][1]}}};
    GNode n = {.inputs = {0}, .num_inputs = 1, .outputs = {1}, .num_outputs = 1};
    Graph g = {.tensors = t, .num_tensors = 2, .cap_tensors = 2, .nodes = &n, .num_nodes = 1, .cap_nodes = 1};
    int got = select_fc_split(h200, &g, &n);
    CHECK(got == fcs[i][2], "fc %zu: chunk %d, want %d", i, got, fcs[i][2]);
    CHECK(select_fc_split(cpu, &g, &n) == 0, "fc %zu split on a CPU", i);
    h200->pol.v[POL_EXECUTION] = GD_EXEC_KERNELS;
    CHECK(select_fc_split(h200, &g, &n) == 0, "fc %zu split in kernels mode", i);
    h200->pol.v[POL_EXECUTION] = GD_EXEC_PERSISTENT;
    h200->pol.v[POL_VM_GROUP_BODIES] = 1;
    CHECK(select_fc_split(h200, &g, &n) == 0, "fc %zu split beside the group bodies", i);
  }
  free(h200);
  free(cpu);
}

int main(int argc, char** argv) {
  unsetenv("TFLITE_GPU_COMPUTE_UNITS");
  test_h200_replay(argc > 1 && strcmp(argv[1], "-v") == 0);
  test_cpu_unchanged();
  test_small_gpu();
  test_reductions_unchanged();
  test_fused_pair_groups();
  test_pw_dw_groups();
  test_vm_splits();
  printf("%d checks, %d failures\n", g_checks, g_failures);
  return g_failures ? 1 : 0;
}
