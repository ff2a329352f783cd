/* uses: model/sparse_densify.c */
/* Standalone test for delegate_c/model/sparse_densify.c.
 *
 *   gcc -std=c11 -Wall -Wextra -Werror -fsanitize=address,undefined -I delegate_c \
 *       tests/c/test_sparse_densify.c delegate_c/model/sparse_densify.c -lm && ./a.out
 */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/sparse_densify.h"
#include "check.h"


/* ---- helpers to build ABI structs on the heap (so ASan sees exact sizes) ---- */

#define MAX_ARRAYS 256
static TfLiteIntArray* g_arrays[MAX_ARRAYS];
static int g_narrays = 0;

static TfLiteIntArray* ia(int n, const int* v) {
  TfLiteIntArray* a = malloc(sizeof(TfLiteIntArray) + sizeof(int) * (size_t)(n > 0 ? n : 0));
  a->size = n;
  for (int i = 0; i < n; i++) a->data[i] = v[i];
  if (g_narrays < MAX_ARRAYS) g_arrays[g_narrays++] = a;
  return a;
}
#define IA(...) ia((int)(sizeof((int[]){__VA_ARGS__}) / sizeof(int)), (int[]){__VA_ARGS__})

static void free_arrays(void) {
  for (int i = 0; i < g_narrays; i++) free(g_arrays[i]);
  g_narrays = 0;
}

static TfLiteDimensionMetadata dense(int n) {
  TfLiteDimensionMetadata m;
  memset(&m, 0, sizeof m);
  m.format = kTfLiteDimDense;
  m.dense_size = n;
  return m;
}

static TfLiteDimensionMetadata csr(TfLiteIntArray* seg, TfLiteIntArray* idx) {
  TfLiteDimensionMetadata m;
  memset(&m, 0, sizeof m);
  m.format = kTfLiteDimSparseCSR;
  m.array_segments = seg;
  m.array_indices = idx;
  return m;
}

/* Builds a tensor whose value buffer is a heap copy of `vals` (exactly
 * `bytes` long) so that any overread is caught by ASan. */
static TfLiteTensor make_tensor(TfLiteType type, const void* vals, size_t bytes, TfLiteSparsity* sp) {
  TfLiteTensor t;
  memset(&t, 0, sizeof t);
  t.type = type;
  t.bytes = bytes;
  t.data.raw = malloc(bytes ? bytes : 1);
  if (bytes) memcpy(t.data.raw, vals, bytes);
  t.sparsity = sp;
  t.allocation_type = kTfLiteMmapRo;
  return t;
}

static void free_tensor(TfLiteTensor* t) {
  free(t->data.raw);
  t->data.raw = NULL;
}

static int expect_dense(const char* name, const TfLiteTensor* t, const int* dims, int rank, const float* want) {
  size_t n = 1;
  for (int i = 0; i < rank; i++) n *= (size_t)dims[i];
  float* out = malloc(sizeof(float) * (n ? n : 1));
  for (size_t i = 0; i < n; i++) out[i] = -12345.0f; /* must be overwritten */
  char err[256];
  int rc = tflite_gpu_densify(t, dims, rank, out, err, sizeof err);
  CHECK(rc == 0, "%s: densify failed: %s", name, err);
  CHECK(tflite_gpu_densify_check(t, dims, rank, err, sizeof err) == 0, "%s: densify_check refused: %s", name, err);
  int bad = 0;
  if (rc == 0) {
    for (size_t i = 0; i < n; i++) {
      if (memcmp(&out[i], &want[i], sizeof(float)) != 0) {
        if (bad < 5) fprintf(stderr, "  %s[%zu]: got %g want %g\n", name, i, out[i], want[i]);
        bad++;
      }
    }
    CHECK(bad == 0, "%s: %d mismatching elements", name, bad);
  }
  free(out);
  return rc == 0 && bad == 0;
}

static void expect_fail(const char* name, const TfLiteTensor* t, const int* dims, int rank) {
  size_t n = 1;
  for (int i = 0; i < rank && i < 8; i++) n *= (size_t)(dims[i] > 0 ? dims[i] : 1);
  float* out = malloc(sizeof(float) * n);
  char err[128];
  err[0] = 'x';
  err[1] = '\0';
  int rc = tflite_gpu_densify(t, dims, rank, out, err, sizeof err);
  CHECK(rc == -1, "%s: expected failure, got rc=%d", name, rc);
  /* The check the delegate runs when choosing nodes refuses it too, with
   * the same reason. */
  char why[128];
  CHECK(tflite_gpu_densify_check(t, dims, rank, why, sizeof why) == -1 && strcmp(why, err) == 0,
        "%s: densify_check disagrees ('%s' vs '%s')", name, why, err);
  CHECK(rc != -1 || (strlen(err) > 0 && strchr(err, '\n') == NULL), "%s: bad error text '%s'", name, err);
  if (rc == -1 && getenv("VERBOSE")) printf("  %-28s -> %s\n", name, err);
  free(out);
}

/* ---- half precision ---- */

static float half_ref(uint16_t h) {
  int s = h >> 15, e = (h >> 10) & 31, m = h & 1023;
  float v;
  if (e == 0)
    v = ldexpf((float)m, -24);
  else if (e == 31)
    v = m ? NAN : INFINITY;
  else
    v = ldexpf((float)(m + 1024), e - 25);
  return s ? -v : v;
}

static void test_half(void) {
  int bad = 0;
  for (uint32_t h = 0; h < 65536; h++) {
    float got = tflite_gpu_half_to_float((uint16_t)h), want = half_ref((uint16_t)h);
    int ok;
    if (isnan(want)) {
      uint32_t gb;
      memcpy(&gb, &got, 4);
      /* NaN with sign and payload preserved in the top mantissa bits. */
      ok = isnan(got) && ((gb >> 31) == (h >> 15)) && (((gb >> 13) & 1023u) == (h & 1023u));
    } else {
      ok = memcmp(&got, &want, 4) == 0; /* also distinguishes -0 from +0 */
    }
    if (!ok) {
      if (bad < 5) fprintf(stderr, "  half 0x%04x: got %a want %a\n", h, got, want);
      bad++;
    }
  }
  CHECK(bad == 0, "half_to_float: %d mismatches", bad);
  CHECK(tflite_gpu_half_to_float(0x3c00) == 1.0f, "half 1.0");
  CHECK(tflite_gpu_half_to_float(0xc000) == -2.0f, "half -2.0");
  CHECK(tflite_gpu_half_to_float(0x7bff) == 65504.0f, "half max");
  CHECK(tflite_gpu_half_to_float(0x0001) == ldexpf(1.0f, -24), "half min subnormal");
  CHECK(tflite_gpu_half_to_float(0x03ff) == ldexpf(1023.0f, -24), "half max subnormal");
  CHECK(isinf(tflite_gpu_half_to_float(0xfc00)) && tflite_gpu_half_to_float(0xfc00) < 0, "half -inf");
}

/* ---- 2-D CSR ---- */

/* [[1,0,0,2],
 *  [0,0,0,0],
 *  [0,3,4,0]] */
static const float kMat34[12] = {1, 0, 0, 2, 0, 0, 0, 0, 0, 3, 4, 0};

static void test_csr_2d(void) {
  TfLiteDimensionMetadata dm[2] = {dense(3), csr(IA(0, 2, 2, 4), IA(0, 3, 1, 2))};
  TfLiteSparsity sp = {IA(0, 1), NULL, dm, 2};
  const float vals[4] = {1, 2, 3, 4};
  TfLiteTensor t = make_tensor(kTfLiteFloat32, vals, sizeof vals, &sp);
  int dims[2] = {3, 4};
  expect_dense("csr_2d", &t, dims, 2, kMat34);

  /* t->dims present and matching is fine; mismatching is rejected. */
  t.dims = IA(3, 4);
  expect_dense("csr_2d_with_dims", &t, dims, 2, kMat34);
  t.dims = IA(4, 3);
  expect_fail("dims_mismatch", &t, dims, 2);
  t.dims = IA(3, 4, 1);
  expect_fail("dims_rank_mismatch", &t, dims, 2);
  t.dims = NULL;

  /* int8 values: raw cast, no scaling. */
  const int8_t v8[4] = {1, 2, 3, 4};
  TfLiteTensor t8 = make_tensor(kTfLiteInt8, v8, sizeof v8, &sp);
  expect_dense("csr_2d_int8", &t8, dims, 2, kMat34);
  const int8_t n8[4] = {-128, 127, -1, 0};
  free_tensor(&t8);
  t8 = make_tensor(kTfLiteInt8, n8, sizeof n8, &sp);
  const float want8[12] = {-128, 0, 0, 127, 0, 0, 0, 0, 0, -1, 0, 0};
  expect_dense("csr_2d_int8_signed", &t8, dims, 2, want8);
  free_tensor(&t8);

  /* fp16 values. */
  const uint16_t h[4] = {0x3c00 /*1*/, 0xc000 /*-2*/, 0x0001 /*2^-24*/, 0x7bff /*65504*/};
  TfLiteTensor t16 = make_tensor(kTfLiteFloat16, h, sizeof h, &sp);
  float want16[12] = {1, 0, 0, -2, 0, 0, 0, 0, 0, 0, 65504, 0};
  want16[9] = ldexpf(1.0f, -24);
  expect_dense("csr_2d_fp16", &t16, dims, 2, want16);
  free_tensor(&t16);

  /* Column-major traversal (CSC): traversal [1,0], columns dense, rows CSR. */
  TfLiteDimensionMetadata dmc[2] = {dense(4), csr(IA(0, 1, 2, 3, 4), IA(0, 2, 2, 0))};
  TfLiteSparsity spc = {IA(1, 0), NULL, dmc, 2};
  const float valsc[4] = {1, 3, 4, 2};
  TfLiteTensor tc = make_tensor(kTfLiteFloat32, valsc, sizeof valsc, &spc);
  expect_dense("csc_2d", &tc, dims, 2, kMat34);
  free_tensor(&tc);

  /* Both dims sparse (DCSR): only rows 0 and 2 stored. */
  TfLiteDimensionMetadata dmd[2] = {csr(IA(0, 2), IA(0, 2)), csr(IA(0, 2, 4), IA(0, 3, 1, 2))};
  TfLiteSparsity spd = {IA(0, 1), NULL, dmd, 2};
  TfLiteTensor td = make_tensor(kTfLiteFloat32, vals, sizeof vals, &spd);
  expect_dense("dcsr_2d", &td, dims, 2, kMat34);
  free_tensor(&td);

  /* Fully dense encoding (all levels DENSE). */
  TfLiteDimensionMetadata dmf[2] = {dense(3), dense(4)};
  TfLiteSparsity spf = {IA(0, 1), NULL, dmf, 2};
  TfLiteTensor tf = make_tensor(kTfLiteFloat32, kMat34, sizeof kMat34, &spf);
  expect_dense("all_dense_2d", &tf, dims, 2, kMat34);
  free_tensor(&tf);

  free_tensor(&t);
  free_arrays();
}

/* ---- 4-D conv weight [O,H,W,I], traversal 0..3, only I sparse ---- */

/* Generic encoder for the MediaPipe layout: levels 0..2 dense, level 3 CSR.
 * Returns number of values; fills seg (O*H*W+1), idx, vals. */
static int encode_last_dim_csr(const float* dense_v, int outer, int inner, int* seg, int* idx, float* vals) {
  int n = 0;
  seg[0] = 0;
  for (int p = 0; p < outer; p++) {
    for (int i = 0; i < inner; i++) {
      float v = dense_v[p * inner + i];
      if (v != 0.0f) {
        idx[n] = i;
        vals[n] = v;
        n++;
      }
    }
    seg[p + 1] = n;
  }
  return n;
}

static void test_conv_4d(void) {
  /* Hand-written case: [O=3,H=2,W=1,I=4]. */
  float w[24] = {0};
  w[0 * 8 + 0 * 4 + 1] = 1.5f;  /* o0 h0 i1 */
  w[0 * 8 + 1 * 4 + 3] = -2.0f; /* o0 h1 i3 */
  w[2 * 8 + 0 * 4 + 0] = 3.0f;  /* o2 h0 i0 */
  w[2 * 8 + 0 * 4 + 2] = 4.0f;  /* o2 h0 i2 */
  w[2 * 8 + 1 * 4 + 0] = 5.0f;  /* o2 h1 i0 */
  TfLiteDimensionMetadata dm[4] = {dense(3), dense(2), dense(1),
                                   csr(IA(0, 1, 2, 2, 2, 4, 5), IA(1, 3, 0, 2, 0))};
  TfLiteSparsity sp = {IA(0, 1, 2, 3), NULL, dm, 4};
  const float vals[5] = {1.5f, -2.0f, 3.0f, 4.0f, 5.0f};
  TfLiteTensor t = make_tensor(kTfLiteFloat32, vals, sizeof vals, &sp);
  int dims[4] = {3, 2, 1, 4};
  expect_dense("conv_4d", &t, dims, 4, w);
  free_tensor(&t);

  /* Same with fp16 values, as in face_detection_full_range_sparse.tflite. */
  const uint16_t h[5] = {0x3e00 /*1.5*/, 0xc000, 0x4200 /*3*/, 0x4400 /*4*/, 0x4500 /*5*/};
  TfLiteTensor t16 = make_tensor(kTfLiteFloat16, h, sizeof h, &sp);
  expect_dense("conv_4d_fp16", &t16, dims, 4, w);
  free_tensor(&t16);
  free_arrays();

  /* Randomised round trip, shapes like the model's 1x1 convs and a 3x3 one. */
  const int shapes[][4] = {{8, 1, 1, 32}, {32, 1, 1, 8}, {192, 1, 1, 48}, {16, 3, 3, 24}, {1, 1, 1, 1}, {5, 2, 3, 7}};
  srand(1234);
  for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
    const int* d = shapes[s];
    int outer = d[0] * d[1] * d[2], inner = d[3], n = outer * inner;
    float* dv = calloc((size_t)n, sizeof(float));
    for (int i = 0; i < n; i++)
      if (rand() % 4 == 0) dv[i] = (float)(rand() % 2001 - 1000) / 8.0f; /* exact in fp16 too */
    int* seg = malloc(sizeof(int) * (size_t)(outer + 1));
    int* idx = malloc(sizeof(int) * (size_t)(n ? n : 1));
    float* vals_f = malloc(sizeof(float) * (size_t)(n ? n : 1));
    int nv = encode_last_dim_csr(dv, outer, inner, seg, idx, vals_f);
    TfLiteDimensionMetadata m[4] = {dense(d[0]), dense(d[1]), dense(d[2]), csr(ia(outer + 1, seg), ia(nv, idx))};
    TfLiteSparsity sp2 = {IA(0, 1, 2, 3), NULL, m, 4};
    TfLiteTensor tr = make_tensor(kTfLiteFloat32, vals_f, sizeof(float) * (size_t)nv, &sp2);
    char name[64];
    snprintf(name, sizeof name, "conv_rand_%dx%dx%dx%d", d[0], d[1], d[2], d[3]);
    expect_dense(name, &tr, d, 4, dv);
    free_tensor(&tr);
    free(seg);
    free(idx);
    free(vals_f);
    free(dv);
    free_arrays();
  }
}

/* ---- block sparsity ---- */

static void test_block(void) {
  /* 4x4 with 2x2 blocks; blocks (0,0) and (1,1) present.
   * [[1,0,0,0],
   *  [2,3,0,0],
   *  [0,0,0,0],
   *  [0,0,4,5]] */
  const float want[16] = {1, 0, 0, 0, 2, 3, 0, 0, 0, 0, 0, 0, 0, 0, 4, 5};
  const float vals[8] = {1, 0, 2, 3, 0, 0, 4, 5};
  int dims[2] = {4, 4};
  {
    TfLiteDimensionMetadata dm[4] = {dense(2), csr(IA(0, 1, 2), IA(0, 1)), dense(2), dense(2)};
    TfLiteSparsity sp = {IA(0, 1, 2, 3), IA(0, 1), dm, 4};
    TfLiteTensor t = make_tensor(kTfLiteFloat32, vals, sizeof vals, &sp);
    expect_dense("block_2x2", &t, dims, 2, want);
    free_tensor(&t);
  }
  {
    /* Blocks traversed column-major (traversal [1,0,2,3]). */
    TfLiteDimensionMetadata dm[4] = {dense(2), csr(IA(0, 1, 2), IA(0, 1)), dense(2), dense(2)};
    TfLiteSparsity sp = {IA(1, 0, 2, 3), IA(0, 1), dm, 4};
    TfLiteTensor t = make_tensor(kTfLiteFloat32, vals, sizeof vals, &sp);
    expect_dense("block_2x2_colmajor", &t, dims, 2, want);
    free_tensor(&t);
  }
  {
    /* Inner block elements traversed column-major (traversal [0,1,3,2]). */
    const float valsT[8] = {1, 2, 0, 3, 0, 4, 0, 5};
    TfLiteDimensionMetadata dm[4] = {dense(2), csr(IA(0, 1, 2), IA(0, 1)), dense(2), dense(2)};
    TfLiteSparsity sp = {IA(0, 1, 3, 2), IA(0, 1), dm, 4};
    TfLiteTensor t = make_tensor(kTfLiteFloat32, valsT, sizeof valsT, &sp);
    expect_dense("block_2x2_inner_transposed", &t, dims, 2, want);
    free_tensor(&t);
  }
  {
    /* 1x2 blocks along dim 1 only (block_map [1]), 2x4 matrix, fp16.
     * [[1,2,0,0],
     *  [0,0,3,4]] */
    const float want2[8] = {1, 2, 0, 0, 0, 0, 3, 4};
    const uint16_t h[4] = {0x3c00, 0x4000, 0x4200, 0x4400};
    TfLiteDimensionMetadata dm[3] = {dense(2), csr(IA(0, 1, 2), IA(0, 1)), dense(2)};
    TfLiteSparsity sp = {IA(0, 1, 2), IA(1), dm, 3};
    TfLiteTensor t = make_tensor(kTfLiteFloat16, h, sizeof h, &sp);
    int d2[2] = {2, 4};
    expect_dense("block_1x2_fp16", &t, d2, 2, want2);

    /* Malformed block variants. */
    dm[2] = dense(3); /* 4 not divisible by 3 */
    expect_fail("block_not_divisible", &t, d2, 2);
    dm[2] = dense(0);
    expect_fail("block_size_zero", &t, d2, 2);
    dm[2] = csr(IA(0, 1, 2), IA(0, 1));
    expect_fail("block_level_sparse", &t, d2, 2);
    dm[2] = dense(2);
    sp.block_map = IA(2);
    expect_fail("block_map_out_of_range", &t, d2, 2);
    sp.block_map = IA(1);
    sp.traversal_order = IA(0, 2, 1);
    expect_fail("block_dim_in_orig_levels", &t, d2, 2);
    sp.traversal_order = IA(0, 1, 2);
    expect_dense("block_1x2_fp16_restored", &t, d2, 2, want2);
    free_tensor(&t);
  }
  {
    /* block_map must be strictly increasing. */
    TfLiteDimensionMetadata dm[4] = {dense(2), csr(IA(0, 1, 2), IA(0, 1)), dense(2), dense(2)};
    TfLiteSparsity sp = {IA(0, 1, 2, 3), IA(1, 0), dm, 4};
    TfLiteTensor t = make_tensor(kTfLiteFloat32, vals, sizeof vals, &sp);
    expect_fail("block_map_unsorted", &t, dims, 2);
    sp.block_map = IA(0, 0);
    expect_fail("block_map_repeat", &t, dims, 2);
    free_tensor(&t);
  }
  free_arrays();
}

/* ---- malformed inputs ---- */

static void test_malformed(void) {
  int dims[2] = {3, 4};
  const float vals[4] = {1, 2, 3, 4};
  TfLiteDimensionMetadata dm[2] = {dense(3), csr(IA(0, 2, 2, 4), IA(0, 3, 1, 2))};
  TfLiteSparsity sp = {IA(0, 1), NULL, dm, 2};
  TfLiteTensor t = make_tensor(kTfLiteFloat32, vals, sizeof vals, &sp);
  expect_dense("baseline", &t, dims, 2, kMat34);

  dm[1].array_indices = IA(0, 4, 1, 2);
  expect_fail("index_out_of_range", &t, dims, 2);
  dm[1].array_indices = IA(0, -1, 1, 2);
  expect_fail("index_negative", &t, dims, 2);
  dm[1].array_indices = IA(0, 3, 1, 2);

  dm[1].array_segments = IA(0, 2, 2, 5);
  expect_fail("segment_beyond_indices", &t, dims, 2);
  dm[1].array_segments = IA(0, 3, 2, 4);
  expect_fail("segments_decreasing", &t, dims, 2);
  dm[1].array_segments = IA(1, 2, 2, 4);
  expect_fail("segments_not_from_0", &t, dims, 2);
  dm[1].array_segments = IA(0, 2, 4);
  expect_fail("too_few_segments", &t, dims, 2);
  dm[1].array_segments = IA(0, 2, 2, 4, 4);
  expect_fail("too_many_segments", &t, dims, 2);
  dm[1].array_segments = NULL;
  expect_fail("null_segments", &t, dims, 2);
  dm[1].array_segments = IA(0, 2, 2, 4);
  dm[1].array_indices = NULL;
  expect_fail("null_indices", &t, dims, 2);
  dm[1].array_indices = IA(0, 3, 1, 2);

  /* Within a segment CSR indices are sorted and unique. */
  dm[1].array_indices = IA(3, 0, 1, 2);
  expect_fail("indices_unsorted", &t, dims, 2);
  dm[1].array_indices = IA(0, 0, 1, 2);
  expect_fail("indices_repeated", &t, dims, 2);
  dm[1].array_indices = IA(0, 3, 2, 1);
  expect_fail("indices_unsorted_last_row", &t, dims, 2);
  /* Sorted within each segment is enough: a new row may start lower. */
  dm[1].array_indices = IA(0, 3, 1, 2);
  expect_dense("indices_sorted_per_row", &t, dims, 2, kMat34);

  /* Segment values beyond every bound, both signs (as a 1-3 byte mutation
   * of a model's uint8/uint16/int32 arrays produces them). */
  dm[1].array_segments = IA(0, 2, 2, INT_MAX);
  expect_fail("segment_int_max", &t, dims, 2);
  dm[1].array_segments = IA(0, 2, INT_MIN, 4);
  expect_fail("segment_int_min", &t, dims, 2);
  dm[1].array_segments = IA(0, -1, 2, 4);
  expect_fail("segment_negative", &t, dims, 2);
  dm[1].array_segments = IA(0, 240, 2, 4);
  expect_fail("segment_past_indices", &t, dims, 2);
  dm[1].array_segments = IA(0, 2, 2, 4);
  dm[1].array_indices = IA(0, 3, 1, INT_MAX);
  expect_fail("index_int_max", &t, dims, 2);
  dm[1].array_indices = IA(INT_MIN, 3, 1, 2);
  expect_fail("index_int_min", &t, dims, 2);
  dm[1].array_indices = IA(0, 3, 1, 2);

  /* An empty index array with segments that claim entries. */
  dm[1].array_indices = ia(0, NULL);
  expect_fail("indices_empty", &t, dims, 2);
  dm[1].array_indices = IA(0, 3, 1, 2);

  /* Segments + indices claim more values than the buffer holds. */
  dm[1].array_segments = IA(0, 2, 3, 5);
  dm[1].array_indices = IA(0, 3, 0, 1, 2);
  expect_fail("segment_beyond_values", &t, dims, 2);
  dm[1].array_segments = IA(0, 2, 2, 4);
  dm[1].array_indices = IA(0, 3, 1, 2);

  /* Truncated value bytes. */
  free_tensor(&t);
  t = make_tensor(kTfLiteFloat32, vals, 3 * sizeof(float), &sp);
  expect_fail("truncated_values", &t, dims, 2);
  free_tensor(&t);
  t = make_tensor(kTfLiteFloat32, vals, sizeof vals - 1, &sp);
  expect_fail("bytes_not_multiple", &t, dims, 2);
  free_tensor(&t);
  const float more[5] = {1, 2, 3, 4, 5};
  t = make_tensor(kTfLiteFloat32, more, sizeof more, &sp);
  expect_fail("extra_values", &t, dims, 2);
  free_tensor(&t);
  const uint16_t h[4] = {0x3c00, 0x3c00, 0x3c00, 0x3c00};
  t = make_tensor(kTfLiteFloat16, h, 7, &sp);
  expect_fail("fp16_odd_bytes", &t, dims, 2);
  free_tensor(&t);
  t = make_tensor(kTfLiteFloat16, h, 6, &sp);
  expect_fail("fp16_truncated", &t, dims, 2);
  free_tensor(&t);
  t = make_tensor(kTfLiteFloat32, vals, sizeof vals, &sp);
  free(t.data.raw);
  t.data.raw = NULL;
  expect_fail("null_data", &t, dims, 2);
  t.data.raw = malloc(sizeof vals);
  memcpy(t.data.raw, vals, sizeof vals);

  /* Types. */
  t.type = kTfLiteInt32;
  expect_fail("unsupported_type_int32", &t, dims, 2);
  t.type = kTfLiteUInt8;
  expect_fail("unsupported_type_uint8", &t, dims, 2);
  t.type = kTfLiteFloat32;

  /* Dense level size disagreeing with the shape. */
  dm[0] = dense(4);
  expect_fail("dense_size_mismatch", &t, dims, 2);
  dm[0] = dense(-1);
  expect_fail("dense_size_negative", &t, dims, 2);
  dm[0] = dense(3);
  dm[0].format = (TfLiteDimensionType)7;
  expect_fail("unknown_format", &t, dims, 2);
  dm[0] = dense(3);

  /* Traversal order / metadata counts. */
  sp.traversal_order = IA(0, 0);
  expect_fail("traversal_repeat", &t, dims, 2);
  sp.traversal_order = IA(0, 2);
  expect_fail("traversal_out_of_range", &t, dims, 2);
  sp.traversal_order = IA(0, 1, 2);
  expect_fail("traversal_too_long", &t, dims, 2);
  sp.traversal_order = NULL;
  expect_fail("traversal_null", &t, dims, 2);
  sp.traversal_order = IA(0, 1);
  sp.dim_metadata_size = 1;
  expect_fail("dim_metadata_size", &t, dims, 2);
  sp.dim_metadata_size = 2;
  sp.dim_metadata = NULL;
  expect_fail("dim_metadata_null", &t, dims, 2);
  sp.dim_metadata = dm;

  /* Shape / rank. */
  /* (A wider last dim, e.g. {3,5}, is a valid reading of a CSR last level;
   * only a dense level or t->dims can contradict it.) */
  int wrong[2] = {2, 4};
  expect_fail("shape_mismatch", &t, wrong, 2);
  int neg[2] = {-3, 4};
  expect_fail("shape_negative", &t, neg, 2);
  int seven[7] = {1, 1, 1, 1, 1, 3, 4};
  expect_fail("rank_7", &t, seven, 7);
  expect_fail("rank_0", &t, dims, 0);
  t.sparsity = NULL;
  expect_fail("no_sparsity", &t, dims, 2);
  t.sparsity = &sp;
  CHECK(tflite_gpu_densify(NULL, dims, 2, NULL, NULL, 0) == -1, "null tensor with null err");
  float out[12];
  CHECK(tflite_gpu_densify(&t, dims, 2, NULL, NULL, 0) == -1, "null out");
  char tiny[4];
  CHECK(tflite_gpu_densify(&t, wrong, 2, out, tiny, sizeof tiny) == -1 && strlen(tiny) == 3, "err truncated");

  expect_dense("baseline_again", &t, dims, 2, kMat34);
  free_tensor(&t);
  free_arrays();
}

/* ---- counts that overflow ---- */

static void test_overflow(void) {
  /* A 1-D CSR level over a huge extent: the dense count would not fit. */
  TfLiteDimensionMetadata dm[2] = {dense(INT_MAX), csr(IA(0, 1), IA(0))};
  TfLiteSparsity sp = {IA(0, 1), NULL, dm, 2};
  const float v[1] = {1};
  TfLiteTensor t = make_tensor(kTfLiteFloat32, v, sizeof v, &sp);
  int huge[2] = {INT_MAX, INT_MAX};
  char err[128];
  CHECK(tflite_gpu_densify_check(&t, huge, 2, err, sizeof err) == -1 && strstr(err, "too large"),
        "huge dense shape: '%s'", err);
  /* Six dense levels whose positions multiply past 2^63 but whose dense
   * shape passes (it is the same shape): refused before any walk. */
  int six[6] = {65536, 65536, 65536, 65536, 1, 1};
  TfLiteDimensionMetadata dm6[6] = {dense(65536), dense(65536), dense(65536), dense(65536), dense(1), dense(1)};
  TfLiteSparsity sp6 = {IA(0, 1, 2, 3, 4, 5), NULL, dm6, 6};
  t.sparsity = &sp6;
  CHECK(tflite_gpu_densify_check(&t, six, 6, err, sizeof err) == -1, "2^64 positions accepted");
  /* Block size INT_MAX on a dim of INT_MAX: one block, consistent, but the
   * value count (INT_MAX) is not what the buffer holds. */
  TfLiteDimensionMetadata dmb[2] = {dense(1), dense(INT_MAX)};
  TfLiteSparsity spb = {IA(0, 1), IA(0), dmb, 2};
  t.sparsity = &spb;
  int one[1] = {INT_MAX};
  CHECK(tflite_gpu_densify_check(&t, one, 1, err, sizeof err) == -1, "block INT_MAX accepted");
  free_tensor(&t);
  free_arrays();
}

/* ---- random corruption: must never crash or touch memory out of bounds ---- */

static void test_fuzz(void) {
  /* Base: 4-D [3,2,2,5] with a CSR level on dim 1 and dim 3. */
  enum { O = 3, H = 2, W = 2, I = 5 };
  int seg1[O + 1], idx1[O * H], seg3[O * H * W + 1], idx3[O * H * W * I];
  int ok_runs = 0, fail_runs = 0;
  srand(99);
  for (int iter = 0; iter < 20000; iter++) {
    /* Fresh valid encoding. */
    int n1 = 0;
    seg1[0] = 0;
    for (int o = 0; o < O; o++) {
      for (int hh = 0; hh < H; hh++)
        if (rand() % 2) idx1[n1++] = hh;
      seg1[o + 1] = n1;
    }
    int n3 = 0;
    seg3[0] = 0;
    for (int p = 0; p < n1 * W; p++) {
      for (int i = 0; i < I; i++)
        if (rand() % 3 == 0) idx3[n3++] = i;
      seg3[p + 1] = n3;
    }
    int dims[4] = {O, H, W, I};
    TfLiteIntArray* tr = IA(0, 1, 2, 3);
    TfLiteIntArray* s1 = ia(O + 1, seg1);
    TfLiteIntArray* i1 = ia(n1, idx1);
    TfLiteIntArray* s3 = ia(n1 * W + 1, seg3);
    TfLiteIntArray* i3 = ia(n3, idx3);
    TfLiteDimensionMetadata dm[4] = {dense(O), csr(s1, i1), dense(W), csr(s3, i3)};
    TfLiteSparsity sp = {tr, NULL, dm, 4};
    size_t nbytes = sizeof(float) * (size_t)n3;
    const size_t cap = nbytes + 16;
    float* vals = calloc(1, cap);
    for (int i = 0; i < n3 + 4; i++) vals[i] = (float)(i + 1);

    /* Corrupt one or two things. */
    int ncorrupt = iter == 0 ? 0 : 1 + rand() % 2;
    for (int c = 0; c < ncorrupt; c++) {
      int delta = (rand() % 2 ? 1 : -1) * (1 + rand() % (rand() % 4 == 0 ? 1000000 : 3));
      switch (rand() % 9) {
        case 0: if (s1->size) s1->data[rand() % s1->size] += delta; break;
        case 1: if (i1->size) i1->data[rand() % i1->size] += delta; break;
        case 2: if (s3->size) s3->data[rand() % s3->size] += delta; break;
        case 3: if (i3->size) i3->data[rand() % i3->size] += delta; break;
        case 4: dm[rand() % 4].dense_size += delta; break;
        case 5: tr->data[rand() % 4] += delta; break;
        case 6: {
          long nb = (long)nbytes + delta;
          if (nb >= 0 && (size_t)nb <= cap) nbytes = (size_t)nb;
          break;
        }
        case 7: dm[rand() % 4].format ^= 1; break;
        case 8: dims[rand() % 4] += delta; break;
      }
    }
    TfLiteTensor t = make_tensor(kTfLiteFloat32, vals, nbytes, &sp);
    int ok = 1;
    for (int d = 0; d < 4; d++) ok &= dims[d] >= 0 && dims[d] < 64;
    if (ok) {
      size_t n = (size_t)dims[0] * dims[1] * dims[2] * dims[3];
      float* out = malloc(sizeof(float) * (n ? n : 1));
      char err[96];
      int rc = tflite_gpu_densify(&t, dims, 4, out, err, sizeof err);
      char why[96];
      CHECK(tflite_gpu_densify_check(&t, dims, 4, why, sizeof why) == rc, "fuzz iter %d: check says %s", iter,
            rc ? "ok" : why);
      if (rc == 0) {
        ok_runs++;
        /* Values are positive and each is written at most once, so the output
         * sum cannot exceed the value sum; uncorrupted input must match it. */
        double sum = 0, want = 0;
        for (size_t i = 0; i < n; i++) sum += out[i];
        for (size_t i = 0; i < nbytes / 4; i++) want += vals[i];
        if (iter == 0)
          CHECK(sum == want, "fuzz iter 0: sum %g want %g", sum, want);
        else if (sum > want)
          CHECK(sum <= want, "fuzz iter %d: sum %g > %g", iter, sum, want);
      } else {
        fail_runs++;
      }
      free(out);
    }
    free_tensor(&t);
    free(vals);
    free_arrays();
  }
  CHECK(ok_runs > 0 && fail_runs > 0, "fuzz: ok=%d fail=%d", ok_runs, fail_runs);
  printf("fuzz: %d accepted, %d rejected\n", ok_runs, fail_runs);
}

int main(void) {
  test_half();
  test_csr_2d();
  test_conv_4d();
  test_block();
  test_malformed();
  test_overflow();
  test_fuzz();
  printf("%d checks, %d failures\n", g_checks, g_failures);
  return g_failures ? 1 : 0;
}
