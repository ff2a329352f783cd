/* The fuse stage (fuse.h): the table of passes and the loop that runs
 * them. A pass that adds a fused node adds its row here; its kernel set,
 * hook and order are decided here and nowhere else. */
#include "passes/fuse.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/env_hooks.h"
#include "passes/fold_affine.h"
#include "passes/fold_pad.h"
#include "passes/fuse_conv_source.h"
#include "passes/fuse_dw_conv.h"
#include "passes/fuse_epilogue.h"
#include "passes/fuse_fc_heads.h"
#include "passes/fuse_fc_pair.h"
#include "passes/fuse_layer_norm.h"
#include "passes/fuse_prelu_source.h"
#include "passes/fuse_pw_dw.h"
#include "passes/fuse_summed_reduce.h"
#include "passes/input_direct.h"
#include "passes/output_assembly.h"
#include "passes/output_direct.h"
#include "select/selectors.h"

static int run_layer_norm(FuseStage* s) { return fuse_layer_norm(s->g, s->outputs, s->num_outputs, s->dead); }
static int run_pad(FuseStage* s) { return fold_pads(s->g, s->outputs, s->num_outputs, s->dead); }
static int run_channel_affine(FuseStage* s) { return fold_channel_affine(s->g, s->outputs, s->num_outputs, s->dead); }
static int run_hoist(FuseStage* s) { return fuse_hoist_residuals(s->g, s->outputs, s->num_outputs, s->dead); }
static int run_epilogues(FuseStage* s) {
  return fuse_epilogues(s->g, s->outputs, s->num_outputs, s->dead,
                        (s->passes & FUSE_PASS_BIT(PASS_POOLED_RESIDUAL)) != 0, &s->counts[PASS_POOLED_RESIDUAL]);
}
static int run_dw_1x1(FuseStage* s) {
  return fuse_dw_conv(s->g, s->outputs, s->num_outputs, s->dead, select_vm_fine(s->target),
                      s->target->pol.v[POL_DW_1X1_MAX_TAPS]);
}
static int run_pw_dw(FuseStage* s) {
  return fuse_pw_dw(s->g, s->outputs, s->num_outputs, s->dead, s->target->pol.v[POL_PW_DW_MAX_LOADS]);
}
static int run_channel_scale(FuseStage* s) { return fuse_channel_scale(s->g, s->outputs, s->num_outputs, s->dead); }
static int run_upsampled(FuseStage* s) { return fuse_upsampled_source(s->g, s->outputs, s->num_outputs, s->dead); }
static int run_summed_reduce(FuseStage* s) { return fuse_summed_reduce(s->g, s->outputs, s->num_outputs, s->dead); }
static int run_fc_pair(FuseStage* s) { return fuse_fc_pair(s->g, s->outputs, s->num_outputs, s->dead); }
static int run_fc_heads(FuseStage* s) { return fuse_fc_heads(s->g, s->dead); }
static int run_prelu_source(FuseStage* s) { return fuse_prelu_source(s->g, s->outputs, s->num_outputs, s->dead); }
static int run_input_direct(FuseStage* s) { return input_direct_mark(s->g); }
static int run_mixed_storage(FuseStage* s) {
  if (!s->fp16) return 0;
  if (mixed_storage_apply(s->g, s->outputs, s->num_outputs, s->float_outputs, policy_vm(&s->target->pol), &s->mixed) < 0)
    return -1;
  return s->mixed.float_nodes;
}
/* Every partition output, the sequence ops' states included, is marked
 * is_output first: the assembly never takes such a tensor apart. */
static int run_output_assembly(FuseStage* s) {
  Graph* g = s->g;
  for (int k = 0; k < s->num_outputs; ++k) g->tensors[s->outputs[k]].is_output = 1;
  for (int t = 0; t < g->num_tensors; ++t)
    if (g->tensors[t].write_back >= 0 && graph_writer(g, t) >= 0) g->tensors[t].is_output = 1;
  return output_assembly_plan(g, s->outputs, s->num_outputs);
}
static int run_output_direct(FuseStage* s) { return output_direct_mark(s->g, s->outputs, s->num_outputs, s->fp16); }

/* In the order they run: each sees what the ones before it left. */
const FusePass kFusePasses[FUSE_NUM_PASSES] = {
    [PASS_LAYER_NORM] = {"layer_norm", "MEAN, SQUARED_DIFFERENCE, MEAN, ADD eps, RSQRT -> one statistics kernel",
                         FUSE_KSETS_ALL, NULL, -1, NULL, run_layer_norm},
    [PASS_PAD] = {"pad", "a zero PAD of H and W read only by convolutions -> their padding", FUSE_KSETS_ALL, NULL,
                  -1, NULL, run_pad},
    [PASS_CHANNEL_AFFINE] = {"channel_affine",
                             "a 1x1 depthwise (x * s + t) read only by a CONV_2D with no padding taps -> its constants",
                             FUSE_KSETS_ALL, "TFLITE_GPU_FOLD_AFFINE", -1, NULL, run_channel_affine},
    [PASS_HOIST_RESIDUALS] = {"hoist_residuals",
                              "a residual ADD's shortcut, or another binary op's runtime operand (a gate), computed "
                              "after the conv of the other operand -> moved ahead of it (so the op can fuse)",
                              FUSE_KSETS_ALL, NULL, -1, NULL, run_hoist},
    [PASS_EPILOGUES] = {"epilogues",
                        "a chain of up to " GD_STRINGIFY(GD_MAX_EPILOGUE) " of: PRELU, any float unary op, any arithmetic binary op with a "
                        "constant per channel or scalar, QUANTIZE, and one runtime operand (residual ADD, or "
                        "another op with a tensor of the output's shape or one value per channel) after a conv "
                        "or depthwise (after a fully connected or a transpose conv: an activation) -> its epilogue",
                        FUSE_KSETS_ALL, NULL, -1, NULL, run_epilogues},
    [PASS_POOLED_RESIDUAL] = {"pooled_residual",
                              "a residual that is a 2x2 max pool, a 2x bilinear upsampling or a channel prefix -> "
                              "read through it by the conv (epilogues)",
                              FUSE_KSETS_ALL, "TFLITE_GPU_FUSE_POOLED_RESIDUAL", -1, NULL, NULL},
    [PASS_DW_1X1] = {"dw_1x1",
                     "a depthwise read only by a 1x1 CONV_2D -> one launch (dw_conv2d_1x1_gpu; the VM's fine "
                     "bodies on a GPU: conv2d_x4_dw)",
                     FUSE_KSETS_GPU_VM, NULL, POL_FUSE_DW_1X1, NULL, run_dw_1x1},
    [PASS_PW_DW] = {"pw_dw", "a 1x1 CONV_2D read only by a depthwise -> one launch (pw_depthwise_gpu)",
                    FUSE_KSETS_GPU_VM_GROUP, NULL, POL_FUSE_PW_DW, select_pw_depthwise_fits, run_pw_dw},
    [PASS_CHANNEL_SCALE] = {"channel_scale",
                            "a MUL by a per-channel scale (maybe then an ADD) read only by a 1x1 -> its source",
                            FUSE_KSETS_ALL, "TFLITE_GPU_FUSE_CHANNEL_SCALE", -1, NULL, run_channel_scale},
    [PASS_UPSAMPLED_SOURCE] = {"upsampled_source", "a 2x RESIZE_BILINEAR read only by a 1x1 -> its source",
                               FUSE_KSETS_ALL, "TFLITE_GPU_FUSE_UPSAMPLED_SOURCE", -1, NULL, run_upsampled},
    [PASS_SUMMED_REDUCE] = {"summed_reduce",
                            "an ADD of two runtime tensors of one shape read only by a reduction (a global pool) "
                            "-> the reduction adds them as it reads",
                            FUSE_KSETS_ALL, "TFLITE_GPU_FUSE_SUMMED_REDUCE", -1, NULL, run_summed_reduce},
    [PASS_FC_PAIR] = {"fc_pair", "two 1x1s on one pixel, the first read only by the second -> one launch",
                      FUSE_KSETS_GPU_VM_GROUP, "TFLITE_GPU_FUSE_FC_PAIR", -1, NULL, run_fc_pair},
    [PASS_FC_HEADS] = {"fc_heads", "up to 4 FULLY_CONNECTED heads of one source row -> one launch",
                       FUSE_KSETS_GPU_VM_GROUP, "TFLITE_GPU_FUSE_FC_HEADS", -1, NULL, run_fc_heads},
    [PASS_PRELU_SOURCE] = {"prelu_source",
                           "a PRELU of per-channel constant alpha read only by a CONV_2D -> read through it by the "
                           "conv (the VM's fine bodies: conv2d_x4_prelu)",
                           FUSE_KSETS_VM, "TFLITE_GPU_FUSE_PRELU_SOURCE", -1, NULL, run_prelu_source},
    [PASS_INPUT_DIRECT] = {"input_direct",
                           "a float input only convolutions read -> read as BHWC (no conversion launch)",
                           FUSE_KSETS_GPU, "TFLITE_GPU_BHWC_INPUT", -1, NULL, run_input_direct},
    [PASS_MIXED_STORAGE] = {"mixed_storage",
                            "FP16 partitions: the nodes the float outputs depend on -> float storage, with casts",
                            FUSE_KSETS_ALL, NULL, -1, NULL, run_mixed_storage},
    [PASS_OUTPUT_ASSEMBLY] = {"output_assembly",
                              "RESHAPE / CONCATENATION nodes that only lay out an output -> each part converted "
                              "into place",
                              FUSE_KSETS_ALL, NULL, -1, NULL, run_output_assembly},
    [PASS_OUTPUT_DIRECT] = {"output_direct",
                            "a float output (or part) a conv writes and nothing reads -> stored by it as BHWC",
                            FUSE_KSETS_GPU, "TFLITE_GPU_BHWC_OUTPUT", -1, NULL, run_output_direct},
};

unsigned fuse_passes_for(const SelectTarget* t) {
  int gpu = select_gpu_convs_always(t), fine = select_vm_fine(t), group = select_vm_group_bodies(t);
  unsigned on = 0;
  for (int i = 0; i < FUSE_NUM_PASSES; ++i) {
    const FusePass* p = &kFusePasses[i];
    int set = (p->kernel_sets & 1) || ((p->kernel_sets & 2) && gpu) || ((p->kernel_sets & 4) && fine) ||
              ((p->kernel_sets & 8) && group);
    if (!set || (p->device_allows && !p->device_allows(t)) || (p->hook && !env_flag(p->hook, 1)) ||
        (p->policy_field >= 0 && !t->pol.v[p->policy_field]))
      continue;
    on |= FUSE_PASS_BIT(i);
  }
  return on;
}

/* The nodes the passes removed (dead) go; the rest keep their order. */
static void drop_dead(FuseStage* s) {
  Graph* g = s->g;
  int w = 0;
  for (int k = 0; k < g->num_nodes; ++k)
    if (!s->dead[k]) g->nodes[w++] = g->nodes[k];
  g->num_nodes = w;
}

int fuse_graph(FuseStage* s) {
  Graph* g = s->g;
  s->dead = calloc((size_t)g->num_nodes + 1, 1);
  /* Each pass removes nodes it was given: never more merges than nodes. */
  GMerge* merged = realloc(g->merged, ((size_t)g->num_nodes + 1) * sizeof(GMerge));
  if (!s->dead || !merged) {
    free(s->dead);
    s->dead = NULL;
    if (merged) g->merged = merged;
    return -1;
  }
  g->merged = merged;
  g->num_merged = 0;
  g->cap_merged = g->num_nodes + 1;
  memset(s->counts, 0, sizeof(s->counts));
  int total = 0;
  for (int i = 0; i < FUSE_NUM_PASSES; ++i) {
    /* The passes before this one mark removed nodes in dead; from here on
     * they edit the graph themselves (mixed storage adds nodes). */
    if (i == PASS_INPUT_DIRECT) drop_dead(s);
    if (!kFusePasses[i].run || !(s->passes & FUSE_PASS_BIT(i))) continue;
    int n = kFusePasses[i].run(s);
    if (n < 0) {
      free(s->dead);
      s->dead = NULL;
      return -1;
    }
    s->counts[i] = n;
    total += n;
  }
  free(s->dead);
  s->dead = NULL;
  return total; /* pooled residuals are epilogues, already counted */
}

size_t fuse_passes_text(char* buf, size_t size) {
  size_t used = 0;
  for (int i = 0; i < FUSE_NUM_PASSES; ++i) {
    const FusePass* p = &kFusePasses[i];
    char field[64] = "";
    if (p->policy_field >= 0) snprintf(field, sizeof(field), "policy %s", kPolicyFields[p->policy_field].name);
    int n = snprintf(used < size ? buf + used : NULL, used < size ? size - used : 0, "%s\t%s\t%s\t%s\n", p->name,
                     p->kernel_sets == FUSE_KSETS_GPU ? "gpu"
                     : p->kernel_sets == FUSE_KSETS_VM ? "vm"
                     : p->kernel_sets & 1             ? "cpu,gpu"
                                                      : "gpu,vm",
                     p->hook ? p->hook : field, p->matches);
    if (n > 0) used += (size_t)n;
  }
  return used;
}
