/* Sparse constant -> dense float32 (see sparse_densify.h for the format).
 *
 * Plan: validate the metadata completely first (level extents, segment
 * arrays, index ranges, number of packed values), computing for every
 * traversal level how many positions it has; only then walk the levels and
 * scatter the values. The flat output offset is linear in the per-level
 * coordinates, so each level carries a precomputed coefficient. */
#include "model/sparse_densify.h"

#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#define MAX_RANK TFLITE_GPU_DENSIFY_MAX_RANK
#define MAX_LEVELS (2 * TFLITE_GPU_DENSIFY_MAX_RANK)

float tflite_gpu_half_to_float(uint16_t h) {
  uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1fu;
  uint32_t mant = h & 0x3ffu;
  uint32_t bits;
  if (exp == 0) {
    if (mant == 0) {
      bits = sign; /* +-0 */
    } else {
      /* Subnormal half: value = mant * 2^-24; normalise into a float. */
      uint32_t e = 127 - 15 + 1;
      while ((mant & 0x400u) == 0) {
        mant <<= 1;
        e--;
      }
      mant &= 0x3ffu;
      bits = sign | (e << 23) | (mant << 13);
    }
  } else if (exp == 31) {
    bits = sign | 0x7f800000u | (mant << 13); /* inf, or nan keeping payload */
  } else {
    bits = sign | ((exp + 127 - 15) << 23) | (mant << 13);
  }
  float f;
  memcpy(&f, &bits, sizeof f);
  return f;
}

typedef struct {
  int nlev;
  int format[MAX_LEVELS];
  int extent[MAX_LEVELS];     /* coordinate range of the level */
  int64_t coef[MAX_LEVELS];   /* contribution of one step to the flat offset */
  const int* seg[MAX_LEVELS]; /* CSR only */
  const int* idx[MAX_LEVELS]; /* CSR only */
  const unsigned char* vals;
  size_t nvals;
  size_t esize;
  TfLiteType type;
  size_t consumed;
  float* out;
  uint64_t out_count;
} Walk;

static int fail(char* err, size_t errlen, const char* fmt, ...) {
  if (err && errlen > 0) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
  }
  return -1;
}

static float load_value(const Walk* w, size_t i) {
  const unsigned char* p = w->vals + i * w->esize;
  switch (w->type) {
    case kTfLiteFloat32: {
      float f;
      memcpy(&f, p, sizeof f);
      return f;
    }
    case kTfLiteFloat16: {
      uint16_t h;
      memcpy(&h, p, sizeof h);
      return tflite_gpu_half_to_float(h);
    }
    default: /* kTfLiteInt8 */
      return (float)(int8_t)p[0];
  }
}

/* All bounds were validated beforehand; the checks here are a second line of
 * defence and cannot fire for metadata that passed validation. */
static int walk(Walk* w, int level, int64_t pos, int64_t flat) {
  if (level == w->nlev) {
    if (w->consumed >= w->nvals || flat < 0 || (uint64_t)flat >= w->out_count) return -1;
    w->out[flat] = load_value(w, w->consumed);
    w->consumed++;
    return 0;
  }
  const int64_t coef = w->coef[level];
  if (w->format[level] == kTfLiteDimDense) {
    const int n = w->extent[level];
    for (int i = 0; i < n; i++) {
      if (walk(w, level + 1, pos * n + i, flat + (int64_t)i * coef) != 0) return -1;
    }
  } else {
    const int* seg = w->seg[level];
    const int* idx = w->idx[level];
    for (int j = seg[pos]; j < seg[pos + 1]; j++) {
      if (walk(w, level + 1, j, flat + (int64_t)idx[j] * coef) != 0) return -1;
    }
  }
  return 0;
}

static size_t type_size(TfLiteType type) {
  switch (type) {
    case kTfLiteFloat32:
      return 4;
    case kTfLiteFloat16:
      return 2;
    case kTfLiteInt8:
      return 1;
    default:
      return 0;
  }
}

/* Validates everything about t's encoding against the dense shape and fills
 * w's per-level plan (extents, coefficients, CSR arrays) and value fields;
 * w->out is left for the caller. After it succeeds, walk() stays in bounds. */
static int plan(const TfLiteTensor* t, const int* dense_dims, int rank, Walk* w, char* err, size_t errlen) {
  if (err && errlen > 0) err[0] = '\0';
  if (!t) return fail(err, errlen, "densify: null tensor");
  if (!dense_dims && rank > 0) return fail(err, errlen, "densify: null dense_dims");
  if (rank < 1 || rank > MAX_RANK)
    return fail(err, errlen, "densify: rank %d outside 1..%d", rank, MAX_RANK);

  /* Dense shape and element count. */
  uint64_t count = 1;
  for (int d = 0; d < rank; d++) {
    if (dense_dims[d] < 0) return fail(err, errlen, "densify: negative dense dim %d", d);
    if (dense_dims[d] != 0 && count > (uint64_t)INT64_MAX / sizeof(float) / (uint64_t)dense_dims[d])
      return fail(err, errlen, "densify: dense shape too large");
    count *= (uint64_t)dense_dims[d];
  }
  if (count > SIZE_MAX / sizeof(float)) return fail(err, errlen, "densify: dense shape too large");
  if (t->dims) {
    if (t->dims->size != rank)
      return fail(err, errlen, "densify: tensor rank %d != dense rank %d", t->dims->size, rank);
    for (int d = 0; d < rank; d++)
      if (t->dims->data[d] != dense_dims[d])
        return fail(err, errlen, "densify: tensor dim %d is %d, dense shape says %d", d, t->dims->data[d],
                    dense_dims[d]);
  }

  /* Values. */
  const size_t esize = type_size(t->type);
  if (esize == 0) return fail(err, errlen, "densify: unsupported value type %d", (int)t->type);
  if (t->bytes % esize != 0)
    return fail(err, errlen, "densify: %zu value bytes not a multiple of %zu", t->bytes, esize);
  const size_t nvals = t->bytes / esize;
  if (nvals > 0 && !t->data.raw_const) return fail(err, errlen, "densify: null value data");

  /* Sparsity header. */
  const TfLiteSparsity* sp = t->sparsity;
  if (!sp) return fail(err, errlen, "densify: tensor has no sparsity metadata");
  const TfLiteIntArray* trav = sp->traversal_order;
  const TfLiteIntArray* bmap = sp->block_map;
  if (!trav) return fail(err, errlen, "densify: missing traversal_order");
  const int nblock = bmap ? bmap->size : 0;
  if (nblock < 0 || nblock > rank)
    return fail(err, errlen, "densify: block_map size %d invalid for rank %d", nblock, rank);
  const int nlev = rank + nblock;
  if (trav->size != nlev)
    return fail(err, errlen, "densify: traversal_order size %d, expected %d", trav->size, nlev);
  if (sp->dim_metadata_size != nlev)
    return fail(err, errlen, "densify: dim_metadata size %d, expected %d", sp->dim_metadata_size, nlev);
  if (!sp->dim_metadata) return fail(err, errlen, "densify: missing dim_metadata");

  /* block_map: strictly increasing original dims. */
  int block_of_dim[MAX_RANK];
  for (int d = 0; d < rank; d++) block_of_dim[d] = -1;
  for (int k = 0; k < nblock; k++) {
    const int d = bmap->data[k];
    if (d < 0 || d >= rank) return fail(err, errlen, "densify: block_map[%d]=%d out of range", k, d);
    if (k > 0 && d <= bmap->data[k - 1])
      return fail(err, errlen, "densify: block_map not strictly increasing");
    block_of_dim[d] = k;
  }

  /* traversal_order: first `rank` levels permute the original dims, the rest
   * permute the block dims. level_of[] maps a (original or block) dim to its
   * level. */
  int level_of[MAX_LEVELS];
  for (int i = 0; i < nlev; i++) level_of[i] = -1;
  for (int l = 0; l < nlev; l++) {
    const int v = trav->data[l];
    const int lo = l < rank ? 0 : rank;
    const int hi = l < rank ? rank : nlev;
    if (v < lo || v >= hi)
      return fail(err, errlen, "densify: traversal_order[%d]=%d out of range [%d,%d)", l, v, lo, hi);
    if (level_of[v] != -1) return fail(err, errlen, "densify: traversal_order repeats %d", v);
    level_of[v] = l;
  }

  /* Block sizes (from the DENSE block levels) and level extents. */
  memset(w, 0, sizeof *w);
  w->nlev = nlev;
  int block_size[MAX_RANK];
  for (int k = 0; k < nblock; k++) {
    const int l = level_of[rank + k];
    const TfLiteDimensionMetadata* m = &sp->dim_metadata[l];
    if (m->format != kTfLiteDimDense)
      return fail(err, errlen, "densify: sparse block dimension (level %d) unsupported", l);
    if (m->dense_size <= 0)
      return fail(err, errlen, "densify: block size %d at level %d invalid", m->dense_size, l);
    const int d = bmap->data[k];
    if (dense_dims[d] % m->dense_size != 0)
      return fail(err, errlen, "densify: dim %d (%d) not divisible by block size %d", d, dense_dims[d],
                  m->dense_size);
    block_size[k] = m->dense_size;
  }

  /* Row-major strides of the dense output. */
  int64_t stride[MAX_RANK];
  {
    int64_t s = 1;
    for (int d = rank - 1; d >= 0; d--) {
      stride[d] = s;
      s *= dense_dims[d]; /* fits: count was checked against INT64_MAX/4 */
    }
  }
  for (int l = 0; l < nlev; l++) {
    const int v = trav->data[l];
    if (l < rank) {
      const int k = block_of_dim[v];
      w->extent[l] = k >= 0 ? dense_dims[v] / block_size[k] : dense_dims[v];
      w->coef[l] = k >= 0 ? stride[v] * block_size[k] : stride[v];
    } else {
      const int k = v - rank;
      w->extent[l] = block_size[k];
      w->coef[l] = stride[bmap->data[k]];
    }
  }

  /* Levels: check formats, segments and indices; count positions. */
  int64_t positions = 1; /* positions in the levels above the current one */
  for (int l = 0; l < nlev; l++) {
    const TfLiteDimensionMetadata* m = &sp->dim_metadata[l];
    w->format[l] = m->format;
    if (m->format == kTfLiteDimDense) {
      if (m->dense_size != w->extent[l])
        return fail(err, errlen, "densify: level %d dense_size %d, expected %d", l, m->dense_size,
                    w->extent[l]);
      if (w->extent[l] != 0 && positions > INT64_MAX / w->extent[l])
        return fail(err, errlen, "densify: position count overflow at level %d", l);
      positions *= w->extent[l];
    } else if (m->format == kTfLiteDimSparseCSR) {
      const TfLiteIntArray* seg = m->array_segments;
      const TfLiteIntArray* idx = m->array_indices;
      if (!seg || !idx) return fail(err, errlen, "densify: level %d CSR arrays missing", l);
      if (seg->size < 1 || idx->size < 0 || (int64_t)seg->size - 1 != positions)
        return fail(err, errlen, "densify: level %d has %d segments, expected %lld", l, seg->size,
                    (long long)positions + 1);
      if (seg->data[0] != 0) return fail(err, errlen, "densify: level %d segments do not start at 0", l);
      for (int i = 1; i < seg->size; i++)
        if (seg->data[i] < seg->data[i - 1])
          return fail(err, errlen, "densify: level %d segments decrease at %d", l, i);
      if (seg->data[seg->size - 1] != idx->size)
        return fail(err, errlen, "densify: level %d segments end at %d, %d indices", l,
                    seg->data[seg->size - 1], idx->size);
      for (int i = 0; i < idx->size; i++)
        if (idx->data[i] < 0 || idx->data[i] >= w->extent[l])
          return fail(err, errlen, "densify: level %d index %d out of range [0,%d)", l, idx->data[i],
                      w->extent[l]);
      /* CSR stores each segment's coordinates sorted and unique: a repeat
       * would write one element twice, an unsorted one means a corrupt array. */
      for (int p = 0; p + 1 < seg->size; p++)
        for (int j = seg->data[p] + 1; j < seg->data[p + 1]; j++)
          if (idx->data[j] <= idx->data[j - 1])
            return fail(err, errlen, "densify: level %d indices not increasing in segment %d (%d then %d)", l, p,
                        idx->data[j - 1], idx->data[j]);
      w->seg[l] = seg->data;
      w->idx[l] = idx->data;
      positions = idx->size;
    } else {
      return fail(err, errlen, "densify: level %d unknown format %d", l, (int)m->format);
    }
  }
  if ((uint64_t)positions != (uint64_t)nvals)
    return fail(err, errlen, "densify: metadata describes %lld values, buffer holds %zu", (long long)positions,
                nvals);
  w->vals = (const unsigned char*)t->data.raw_const;
  w->nvals = nvals;
  w->esize = esize;
  w->type = t->type;
  w->out_count = count;
  return 0;
}

int tflite_gpu_densify_check(const TfLiteTensor* t, const int* dense_dims, int rank, char* err, size_t errlen) {
  Walk w;
  return plan(t, dense_dims, rank, &w, err, errlen);
}

int tflite_gpu_densify(const TfLiteTensor* t, const int* dense_dims, int rank, float* out, char* err,
                       size_t errlen) {
  Walk w;
  if (plan(t, dense_dims, rank, &w, err, errlen)) return -1;
  if (w.out_count > 0 && !out) return fail(err, errlen, "densify: null output buffer");

  /* Scatter. */
  for (uint64_t i = 0; i < w.out_count; i++) out[i] = 0.0f;
  w.out = out;
  if (walk(&w, 0, 0, 0) != 0 || w.consumed != w.nvals)
    return fail(err, errlen, "densify: internal bounds check failed");
  return 0;
}
