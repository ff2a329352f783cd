#include "util/flexbuffer.h"

#include <string.h>

/* Unsigned little-endian integer of `width` bytes at pos, bounds-checked. */
static int read_uint(const uint8_t* buf, size_t size, size_t pos, int width, uint64_t* out) {
  if (width != 1 && width != 2 && width != 4 && width != 8) return -1;
  if (pos > size || size - pos < (size_t)width) return -1;
  uint64_t v = 0;
  for (int i = width - 1; i >= 0; --i) v = (v << 8) | buf[pos + (size_t)i];
  *out = v;
  return 0;
}

static int read_int(const uint8_t* buf, size_t size, size_t pos, int width, int64_t* out) {
  uint64_t u;
  if (read_uint(buf, size, pos, width, &u)) return -1;
  if (width < 8 && (u >> (width * 8 - 1)) & 1) u |= ~((UINT64_C(1) << (width * 8)) - 1); /* sign-extend */
  *out = (int64_t)u;
  return 0;
}

static int read_float(const uint8_t* buf, size_t size, size_t pos, int width, double* out) {
  uint64_t u;
  if ((width != 4 && width != 8) || read_uint(buf, size, pos, width, &u)) return -1;
  if (width == 4) {
    uint32_t b = (uint32_t)u;
    float f;
    memcpy(&f, &b, sizeof(f));
    *out = f;
  } else {
    memcpy(out, &u, sizeof(*out));
  }
  return 0;
}

/* Follows the offset stored at r->pos to the position it points back to. */
static int target(const FlexRef* r, size_t* out) {
  uint64_t off;
  if (read_uint(r->buf, r->size, r->pos, r->parent_width, &off)) return -1;
  if (off > r->pos) return -1;
  *out = r->pos - (size_t)off;
  return 0;
}

static FlexRef make_ref(const FlexRef* parent, size_t pos, int parent_width, uint8_t packed) {
  FlexRef r = {parent->buf, parent->size, pos, parent_width, 1 << (packed & 3), packed >> 2};
  return r;
}

int flex_root(const void* data, size_t size, FlexRef* out) {
  const uint8_t* b = data;
  if (!b || size < 3) return -1;
  int width = b[size - 1];
  if (width != 1 && width != 2 && width != 4 && width != 8) return -1;
  if (size < (size_t)width + 2) return -1;
  FlexRef base = {b, size, 0, 0, 0, 0};
  *out = make_ref(&base, size - 2 - (size_t)width, width, b[size - 2]);
  return 0;
}

int flex_as_int64(const FlexRef* r, int64_t* out) {
  size_t t;
  double d;
  uint64_t u;
  switch (r->type) {
    case FLEX_INT: return read_int(r->buf, r->size, r->pos, r->parent_width, out);
    case FLEX_UINT:
    case FLEX_BOOL:
      if (read_uint(r->buf, r->size, r->pos, r->parent_width, &u)) return -1;
      *out = (int64_t)u;
      return 0;
    case FLEX_FLOAT:
      if (read_float(r->buf, r->size, r->pos, r->parent_width, &d)) return -1;
      *out = (int64_t)d;
      return 0;
    case FLEX_INDIRECT_INT: return target(r, &t) ? -1 : read_int(r->buf, r->size, t, r->byte_width, out);
    case FLEX_INDIRECT_UINT:
      if (target(r, &t) || read_uint(r->buf, r->size, t, r->byte_width, &u)) return -1;
      *out = (int64_t)u;
      return 0;
    case FLEX_INDIRECT_FLOAT:
      if (target(r, &t) || read_float(r->buf, r->size, t, r->byte_width, &d)) return -1;
      *out = (int64_t)d;
      return 0;
  }
  return -1;
}

int flex_as_double(const FlexRef* r, double* out) {
  size_t t;
  if (r->type == FLEX_FLOAT) return read_float(r->buf, r->size, r->pos, r->parent_width, out);
  if (r->type == FLEX_INDIRECT_FLOAT) return target(r, &t) ? -1 : read_float(r->buf, r->size, t, r->byte_width, out);
  int64_t i;
  if (flex_as_int64(r, &i)) return -1;
  *out = (double)i;
  return 0;
}

/* Element count of fixed-size typed vectors (INT2..FLOAT4), else 0. */
static int fixed_length(int type) {
  if (type >= FLEX_VECTOR_INT2 && type <= FLEX_VECTOR_FLOAT4) return (type - FLEX_VECTOR_INT2) / 3 + 2;
  return 0;
}

static int is_typed(int type) {
  return (type >= FLEX_VECTOR_INT && type <= FLEX_VECTOR_KEY) || type == FLEX_VECTOR_BOOL || fixed_length(type);
}

int flex_vector_size(const FlexRef* r, int* out) {
  if (r->type != FLEX_VECTOR && r->type != FLEX_MAP && !is_typed(r->type)) return -1;
  size_t t;
  if (target(r, &t)) return -1;
  if (fixed_length(r->type)) {
    *out = fixed_length(r->type);
    return 0;
  }
  uint64_t n;
  if (t < (size_t)r->byte_width || read_uint(r->buf, r->size, t - (size_t)r->byte_width, r->byte_width, &n))
    return -1;
  if (n > (uint64_t)(r->size / (size_t)r->byte_width)) return -1; /* cannot fit */
  *out = (int)n;
  return 0;
}

int flex_vector_at(const FlexRef* r, int i, FlexRef* out) {
  int n;
  size_t t;
  if (flex_vector_size(r, &n) || target(r, &t) || i < 0 || i >= n) return -1;
  size_t w = (size_t)r->byte_width;
  size_t pos = t + (size_t)i * w;
  if (pos > r->size || r->size - pos < w) return -1;
  if (r->type == FLEX_VECTOR || r->type == FLEX_MAP) {
    /* Untyped: one packed type byte per element after the elements. */
    size_t types = t + (size_t)n * w + (size_t)i;
    if (types >= r->size) return -1;
    *out = make_ref(r, pos, r->byte_width, r->buf[types]);
    return 0;
  }
  int elem;
  if (fixed_length(r->type))
    elem = FLEX_INT + (r->type - FLEX_VECTOR_INT2) % 3;
  else if (r->type == FLEX_VECTOR_BOOL)
    elem = FLEX_BOOL;
  else
    elem = FLEX_INT + (r->type - FLEX_VECTOR_INT);
  FlexRef e = {r->buf, r->size, pos, r->byte_width, r->byte_width, elem};
  *out = e;
  return 0;
}

int flex_as_string(const FlexRef* r, const char** s, size_t* len) {
  size_t t;
  if (target(r, &t)) return -1;
  if (r->type == FLEX_STRING) {
    uint64_t n;
    if (t < (size_t)r->byte_width || read_uint(r->buf, r->size, t - (size_t)r->byte_width, r->byte_width, &n))
      return -1;
    if (t > r->size || n > r->size - t) return -1;
    *s = (const char*)r->buf + t;
    *len = (size_t)n;
    return 0;
  }
  if (r->type == FLEX_KEY) {
    if (t >= r->size) return -1;
    const uint8_t* end = memchr(r->buf + t, 0, r->size - t);
    if (!end) return -1;
    *s = (const char*)r->buf + t;
    *len = (size_t)(end - (r->buf + t));
    return 0;
  }
  return -1;
}

int flex_map_get(const FlexRef* map, const char* key, FlexRef* out) {
  if (map->type != FLEX_MAP) return -1;
  int n;
  size_t t;
  if (flex_vector_size(map, &n) || target(map, &t)) return -1;
  /* The keys vector's offset and byte width sit before the map's size. */
  size_t w = (size_t)map->byte_width;
  if (t < 3 * w) return -1;
  uint64_t key_width;
  if (read_uint(map->buf, map->size, t - 2 * w, (int)w, &key_width)) return -1;
  FlexRef keys = {map->buf, map->size, t - 3 * w, (int)w, (int)key_width, FLEX_VECTOR_KEY};
  int nk;
  if (flex_vector_size(&keys, &nk) || nk != n) return -1;
  size_t klen = strlen(key);
  for (int i = 0; i < n; ++i) {
    FlexRef k;
    const char* s;
    size_t len;
    if (flex_vector_at(&keys, i, &k)) return -1;
    k.type = FLEX_KEY;
    if (flex_as_string(&k, &s, &len)) return -1;
    if (len == klen && memcmp(s, key, len) == 0) return flex_vector_at(map, i, out);
  }
  return 1;
}
