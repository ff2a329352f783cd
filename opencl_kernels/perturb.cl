/* A test hook's kernels (TFLITE_GPU_TEST_PERTURB_NODE, delegate_c/runtime/launch_groups.c):
 * add 1 to every value a launch wrote, so that tests can make one node
 * wrong on purpose and check that `tflite-gpu check --bisect` finds it. */

/* A PHWC4 tensor of shape (W, H, C, B); the padded lanes of its last slice
 * stay 0, as every kernel expects. */
#define PERTURB_PHWC4_PARAMS __global storage_t* t, int4 shape, int total
#define PERTURB_PHWC4_ARGS t, shape, total
OUTLINED_KERNEL(perturb_phwc4, PERTURB_PHWC4_PARAMS, PERTURB_PHWC4_ARGS) {
  int i = gid;
  if (i >= total) return;
  int c = ((i / (shape.x * shape.y)) % SLICES(shape)) * 4;
  float4 one = (float4)(c < shape.z ? 1.0f : 0.0f, c + 1 < shape.z ? 1.0f : 0.0f, c + 2 < shape.z ? 1.0f : 0.0f,
                        c + 3 < shape.z ? 1.0f : 0.0f);
  STORE4(LOAD4(t, i) + one, t, i);
}

/* A tensor its conv stored as the runtime's BHWC float32 (output_direct.c),
 * `total` values from element `offset` on. */
#define PERTURB_BHWC_PARAMS __global float* t, int offset, int total
#define PERTURB_BHWC_ARGS t, offset, total
OUTLINED_KERNEL(perturb_bhwc, PERTURB_BHWC_PARAMS, PERTURB_BHWC_ARGS) {
  int i = gid;
  if (i < total) t[offset + i] += 1.0f;
}
