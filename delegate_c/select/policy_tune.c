/* What the tuner (delegate/tuner.c) times and how it picks: the candidate
 * policies of a partition and the choice among their times. Pure
 * functions of the policy, unit-tested alone (tests/c/test_policy.c). */
#include "select/policy.h"

#include <string.h>

/* The fields a candidate may vary: the others are the resolved policy's. */
static const PolicyField kVaried[] = {POL_EXECUTION, POL_VM_FINE, POL_VM_GROUP_BODIES, POL_VM_TILES,
                                      POL_VM_GROUPS_PER_UNIT};
enum { NUM_VARIED = sizeof(kVaried) / sizeof(kVaried[0]) };

static int fixed(const Policy* p, PolicyField f) { return p->src[f] >= POL_SRC_OPTION; }

/* base with these fields set, unless the options or an override fixed one
 * of them to something else: 0 when the candidate cannot be. */
static int variant(const Policy* base, Policy* out, long execution, long fine, long group_bodies, long tiles,
                   long per_unit) {
  *out = *base;
  const long want[NUM_VARIED] = {execution, fine, group_bodies, tiles, per_unit};
  for (int i = 0; i < NUM_VARIED; ++i) {
    if (want[i] < 0) continue;
    if (fixed(base, kVaried[i]) && base->v[kVaried[i]] != want[i]) return 0;
    out->v[kVaried[i]] = want[i];
  }
  return 1;
}

int policy_candidates(const Policy* base, int min_memory, PolicyCandidate* out, int max) {
  Policy c[6];
  const char* names[6] = {"as resolved", "kernels", "persistent", "persistent, fine bodies", "persistent, tiles",
                          "persistent, 2 groups a unit"};
  int ok[6];
  const long P = GD_EXEC_PERSISTENT;
  c[0] = *base, ok[0] = 1;
  ok[1] = variant(base, &c[1], GD_EXEC_KERNELS, -1, -1, -1, -1);
  ok[2] = !min_memory && variant(base, &c[2], P, -1, -1, -1, 1);
  ok[3] = !min_memory && variant(base, &c[3], P, 1, -1, 0, 1);
  ok[4] = !min_memory && variant(base, &c[4], P, 1, 1, 1, 1);
  ok[5] = !min_memory && variant(base, &c[5], P, -1, -1, -1, 2);
  int n = 0;
  for (int i = 0; i < 6 && n < max; ++i) {
    if (!ok[i]) continue;
    int same = 0;
    for (int j = 0; j < n && !same; ++j) same = !memcmp(out[j].policy.v, c[i].v, sizeof(c[i].v));
    if (same) continue;
    out[n].name = names[i];
    out[n].policy = c[i];
    ++n;
  }
  return n;
}

int policy_choose(const double* us, int n, double margin) {
  int best = -1;
  for (int c = 0; c < n; ++c)
    if (us[c] >= 0 && (best < 0 || us[c] < us[best])) best = c;
  if (best < 0) return 0;     /* nothing timed */
  if (us[0] < 0) return best; /* the first was not timed: the fastest of the rest */
  return best != 0 && us[best] < us[0] * (1.0 - margin) ? best : 0;
}

void policy_mark_measured(Policy* p) {
  for (int i = 0; i < NUM_VARIED; ++i)
    if (!fixed(p, kVaried[i])) p->src[kVaried[i]] = POL_SRC_MEASURED;
}
