/* ============================================================================= ONNX == */
/* A protobuf wire-format reader with a bounds check on every byte, then a walk over the
   GraphProto that builds the graph with the public builders (so every shape check of the
   builders applies to what a file says). Field numbers are those of onnx.proto. */
#ifndef FUSE_NO_ONNX

/* An unnamed constant whose values the caller writes (straight from a file). */
static fuse_value fuse__constant_uninit(fuse_graph *g, int rank, const int64_t *shape) {
  return fuse__leaf(g, FUSE__OP_CONST, NULL, FUSE_FLOAT32, rank, shape, NULL, 1);
}

/* A constant whose values stay in the model file the graph maps (fuse__const_read): raw is
   its little-endian float32 bytes, of its transpose when transposed. */
static fuse_value fuse__constant_borrowed(fuse_graph *g, int rank, const int64_t *shape,
                                          const unsigned char *raw, int transposed) {
  fuse_value v = fuse__leaf(g, FUSE__OP_CONST, NULL, FUSE_FLOAT32, rank, shape, NULL, 2);
  if (v != FUSE_NONE) g->nodes[v].raw = raw, g->nodes[v].raw_transposed = transposed;
  return v;
}

/* Initializers smaller than this are copied: borrowing is for weights. */
#define FUSE__BORROW_MIN_BYTES 256

typedef struct fuse__pb {
  const unsigned char *p, *end;
} fuse__pb;

typedef struct fuse__slice {
  const unsigned char *p;
  size_t n;
} fuse__slice;

/* The readers below leave b->p where it was when they fail, so that a caller that stops at
   the first failure sees b->p != b->end: a field cut off by the end of the data is an error,
   never a quiet end of the message. */
static int fuse__proto_varint(fuse__pb *b, uint64_t *v) {
  uint64_t r = 0;
  int shift;
  const unsigned char *p = b->p;
  for (shift = 0; shift < 64; shift += 7) {
    unsigned char c;
    if (p >= b->end) return 0;
    c = *p++;
    r |= (uint64_t)(c & 0x7f) << shift;
    if (!(c & 0x80)) {
      *v = r;
      b->p = p;
      return 1;
    }
  }
  return 0; /* more than 10 bytes */
}

/* Reads a field's tag; 0 at the end of the message or on a malformed tag. */
static int fuse__proto_tag(fuse__pb *b, uint32_t *field, uint32_t *wire) {
  uint64_t t;
  const unsigned char *at = b->p;
  if (b->p >= b->end || !fuse__proto_varint(b, &t)) return 0;
  if ((t >> 3) == 0 || (t >> 3) > 0x1fffffff) {
    b->p = at;
    return 0;
  }
  *field = (uint32_t)(t >> 3);
  *wire = (uint32_t)(t & 7);
  return 1;
}

static int fuse__proto_bytes(fuse__pb *b, fuse__slice *out) {
  uint64_t n;
  const unsigned char *at = b->p;
  if (!fuse__proto_varint(b, &n)) return 0;
  if (n > (uint64_t)(b->end - b->p)) {
    b->p = at;
    return 0;
  }
  out->p = b->p;
  out->n = (size_t)n;
  b->p += n;
  return 1;
}

static uint32_t fuse__le32(const unsigned char *p) {
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t fuse__le64(const unsigned char *p) {
  return (uint64_t)fuse__le32(p) | (uint64_t)fuse__le32(p + 4) << 32;
}

static float fuse__f32(uint32_t u) {
  float f;
  memcpy(&f, &u, sizeof f);
  return f;
}

/* Skips a field's value; 0 if it runs past the end or uses a group / unknown wire type. */
static int fuse__proto_skip(fuse__pb *b, uint32_t wire) {
  uint64_t v;
  fuse__slice s;
  switch (wire) {
  case 0: return fuse__proto_varint(b, &v);
  case 1:
    if (b->end - b->p < 8) return 0;
    b->p += 8;
    return 1;
  case 2: return fuse__proto_bytes(b, &s);
  case 5:
    if (b->end - b->p < 4) return 0;
    b->p += 4;
    return 1;
  default: return 0;
  }
}

static fuse__pb fuse__proto_of(fuse__slice s) {
  static const unsigned char nothing = 0;
  fuse__pb b;
  b.p = s.p ? s.p : &nothing; /* an absent field reads as an empty message */
  b.end = b.p + (s.p ? s.n : 0);
  return b;
}

static int fuse__slice_is(fuse__slice s, const char *str) {
  size_t n = strlen(str);
  return s.n == n && (n == 0 || memcmp(s.p, str, n) == 0);
}

static int fuse__slice_eq(fuse__slice a, fuse__slice b) { /* an empty slice's p may be NULL */
  return a.n == b.n && (a.n == 0 || memcmp(a.p, b.p, a.n) == 0);
}

/* ---- TensorProto */

enum {
  FUSE__DT_FLOAT = 1, FUSE__DT_UINT8 = 2, FUSE__DT_INT8 = 3, FUSE__DT_UINT16 = 4,
  FUSE__DT_INT16 = 5, FUSE__DT_INT32 = 6, FUSE__DT_INT64 = 7, FUSE__DT_BOOL = 9,
  FUSE__DT_DOUBLE = 11, FUSE__DT_UINT32 = 12, FUSE__DT_UINT64 = 13
};

/* bytes per element in raw_data; 0 for the types the loader does not read (strings, float16) */
static int fuse__dt_size(int dt) {
  switch (dt) {
  case FUSE__DT_UINT8: case FUSE__DT_INT8: case FUSE__DT_BOOL: return 1;
  case FUSE__DT_UINT16: case FUSE__DT_INT16: return 2;
  case FUSE__DT_FLOAT: case FUSE__DT_INT32: case FUSE__DT_UINT32: return 4;
  case FUSE__DT_INT64: case FUSE__DT_DOUBLE: case FUSE__DT_UINT64: return 8;
  default: return 0;
  }
}

static const char *fuse__dt_name(int dt) {
  switch (dt) {
  case FUSE__DT_FLOAT: return "float32";
  case FUSE__DT_UINT8: return "uint8";
  case FUSE__DT_INT8: return "int8";
  case FUSE__DT_UINT16: return "uint16";
  case FUSE__DT_INT16: return "int16";
  case FUSE__DT_INT32: return "int32";
  case FUSE__DT_INT64: return "int64";
  case FUSE__DT_BOOL: return "bool";
  case FUSE__DT_DOUBLE: return "double";
  case FUSE__DT_UINT32: return "uint32";
  case FUSE__DT_UINT64: return "uint64";
  case 8: return "string";
  case 10: return "float16";
  case 16: return "bfloat16";
  case 17: return "float8e4m3fn";
  case 18: return "float8e4m3fnuz";
  case 19: return "float8e5m2";
  case 20: return "float8e5m2fnuz";
  case 21: return "uint4";
  case 22: return "int4";
  default: return "an unknown type";
  }
}

static int fuse__dt_is_float(int dt) { return dt == FUSE__DT_FLOAT || dt == FUSE__DT_DOUBLE; }

/* The fuse_type of a TensorProto data type the graph holds as it is (float32 and the
   quantized types uint8, int8, int32); -1 for the others. */
static int fuse__dt_fuse_type(int dt) {
  switch (dt) {
  case FUSE__DT_FLOAT: return FUSE_FLOAT32;
  case FUSE__DT_UINT8: return FUSE_UINT8;
  case FUSE__DT_INT8: return FUSE_INT8;
  case FUSE__DT_INT32: return FUSE_INT32;
  default: return -1;
  }
}

/* The TensorProto data type of a fuse_type. */
static int fuse__dt_of_type(int type) {
  static const int dtypes[4] = {FUSE__DT_FLOAT, FUSE__DT_UINT8, FUSE__DT_INT8, FUSE__DT_INT32};
  return type >= FUSE_FLOAT32 && type <= FUSE_INT32 ? dtypes[type] : 0;
}

typedef struct fuse__otensor {
  fuse__slice msg, name;
  int dtype, rank, external;
  int64_t dims[FUSE_MAX_RANK];
  fuse__slice location;    /* external data: the file, relative to the model's directory */
  uint64_t offset, length; /* where in it (length 0: not given, to the end) */
} fuse__otensor;

/* A decimal number of an external_data entry (at most 19 digits); 0 if it is not one. */
static int fuse__onnx_decimal(fuse__slice s, uint64_t *v) {
  size_t i;
  *v = 0;
  if (!s.n || s.n > 19) return 0;
  for (i = 0; i < s.n; i++) {
    if (s.p[i] < '0' || s.p[i] > '9') return 0;
    *v = *v * 10 + (uint64_t)(s.p[i] - '0');
  }
  return 1;
}

/* One external_data entry (StringStringEntryProto: key 1, value 2) into t. */
static int fuse__onnx_external_entry(fuse__slice msg, fuse__otensor *t) {
  fuse__pb b = fuse__proto_of(msg);
  fuse__slice key = {NULL, 0}, value = {NULL, 0};
  uint32_t f, w;
  while (fuse__proto_tag(&b, &f, &w)) {
    if ((f == 1 || f == 2) && w == 2) {
      if (!fuse__proto_bytes(&b, f == 1 ? &key : &value)) return 0;
    } else if (!fuse__proto_skip(&b, w)) {
      return 0;
    }
  }
  if (b.p != b.end) return 0;
  if (key.n == 8 && !memcmp(key.p, "location", 8)) t->location = value;
  else if (key.n == 6 && !memcmp(key.p, "offset", 6)) return fuse__onnx_decimal(value, &t->offset);
  else if (key.n == 6 && !memcmp(key.p, "length", 6)) return fuse__onnx_decimal(value, &t->length);
  return 1; /* checksum and others: not needed */
}

/* Reads a tensor's header (name, dims, type, where its data is). */
static int fuse__onnx_tensor_meta(fuse__slice msg, fuse__otensor *t, char *why, size_t why_n) {
  fuse__pb b = fuse__proto_of(msg);
  uint32_t f, w;
  memset(t, 0, sizeof *t);
  t->msg = msg;
  while (fuse__proto_tag(&b, &f, &w)) {
    uint64_t v;
    if (f == 1 && (w == 0 || w == 2)) { /* dims, plain or packed */
      fuse__pb dims = b;
      fuse__slice packed;
      if (w == 2) {
        if (!fuse__proto_bytes(&b, &packed)) return 0;
        dims = fuse__proto_of(packed);
        if (!packed.n) continue;
      }
      do {
        if (!fuse__proto_varint(&dims, &v)) return 0;
        if (t->rank == FUSE_MAX_RANK) {
          if (why) memcpy(why, "more than 8 dimensions", why_n < 23 ? why_n : 23);
          return 0;
        }
        t->dims[t->rank++] = (int64_t)v;
      } while (w == 2 && dims.p < dims.end);
      if (w == 0) b = dims;
    } else if (f == 2 && w == 0) {
      if (!fuse__proto_varint(&b, &v)) return 0;
      t->dtype = (int)v;
    } else if (f == 8 && w == 2) {
      if (!fuse__proto_bytes(&b, &t->name)) return 0;
    } else if (f == 14 && w == 0) {
      if (!fuse__proto_varint(&b, &v)) return 0;
      t->external = v == 1;
    } else if (f == 13 && w == 2) {
      fuse__slice entry;
      t->external = 1;
      if (!fuse__proto_bytes(&b, &entry) || !fuse__onnx_external_entry(entry, t)) return 0;
    } else if (!fuse__proto_skip(&b, w)) {
      return 0;
    }
  }
  return b.p == b.end;
}

static int fuse__little_endian(void) {
  const uint32_t one = 1;
  unsigned char c;
  memcpy(&c, &one, 1);
  return c == 1;
}

/* One raw_data element of type dt at q, as a double (exact for every integer up to 2^53) and
   as an int64. */
static void fuse__raw_value(int dt, const unsigned char *q, double *d, int64_t *i) {
  switch (dt) {
  case FUSE__DT_UINT8: case FUSE__DT_BOOL: *i = q[0]; *d = (double)*i; return;
  case FUSE__DT_INT8: *i = (int8_t)q[0]; *d = (double)*i; return;
  case FUSE__DT_UINT16: *i = (int64_t)(q[0] | q[1] << 8); *d = (double)*i; return;
  case FUSE__DT_INT16: *i = (int16_t)(uint16_t)(q[0] | q[1] << 8); *d = (double)*i; return;
  case FUSE__DT_INT32: *i = (int32_t)fuse__le32(q); *d = (double)*i; return;
  case FUSE__DT_UINT32: *i = (int64_t)fuse__le32(q); *d = (double)*i; return;
  case FUSE__DT_INT64: case FUSE__DT_UINT64: *i = (int64_t)fuse__le64(q); *d = (double)*i; return;
  case FUSE__DT_FLOAT: *d = fuse__f32(fuse__le32(q)); break;
  default: {
    uint64_t u = fuse__le64(q);
    memcpy(d, &u, sizeof *d);
  }
  }
  /* float to integer only where it fits (Cast truncates, as C does) */
  *i = *d != *d ? 0 : *d >= 9.2e18 ? INT64_MAX : *d <= -9.2e18 ? INT64_MIN : (int64_t)*d;
}

/* Decodes a tensor's values (any readable type) into out_f (as float) and / or out_i (as
   int64), at most `count` of them; either may be NULL (counting only). Returns the number the
   message holds, or -1 if it is malformed. raw_data is the common case: counted without a
   walk, and float32 copied in one go on little-endian machines. */
static int64_t fuse__onnx_tensor_values(const fuse__otensor *t, float *out_f, int64_t *out_i,
                                        int64_t count) {
  fuse__pb b = fuse__proto_of(t->msg);
  uint32_t f, w;
  int64_t got = 0;
  int size = fuse__dt_size(t->dtype);
#define FUSE__PUT(dv, iv)                             \
  do {                                                \
    if (got < count) {                                \
      if (out_f) out_f[got] = (float)(dv);            \
      if (out_i) out_i[got] = (iv);                   \
    }                                                 \
    got++;                                            \
  } while (0)
  while (fuse__proto_tag(&b, &f, &w)) {
    fuse__slice s;
    uint64_t v;
    if (f == 9 && w == 2) { /* raw_data, little-endian */
      size_t i, n;
      if (!fuse__proto_bytes(&b, &s) || !size || s.n % (size_t)size) return -1;
      n = s.n / (size_t)size;
      if (!out_f && !out_i) {
        got += (int64_t)n;
        continue;
      }
      if (t->dtype == FUSE__DT_FLOAT && out_f && !out_i && fuse__little_endian()) {
        int64_t room = count - got < 0 ? 0 : count - got;
        size_t take = (uint64_t)room < (uint64_t)n ? (size_t)room : n;
        if (take) memcpy(out_f + got, s.p, take * sizeof(float));
        got += (int64_t)n;
        continue;
      }
      for (i = 0; i < n; i++) {
        double d;
        int64_t iv;
        fuse__raw_value(t->dtype, s.p + i * (size_t)size, &d, &iv);
        FUSE__PUT(d, iv);
      }
    } else if ((f == 4 && (w == 5 || w == 2)) || (f == 10 && (w == 1 || w == 2))) {
      /* float_data (fixed32) / double_data (fixed64), packed or not */
      size_t sz = f == 4 ? 4 : 8, i;
      if (w == 2) {
        if (!fuse__proto_bytes(&b, &s) || s.n % sz) return -1;
      } else {
        if ((size_t)(b.end - b.p) < sz) return -1;
        s.p = b.p;
        s.n = sz;
        b.p += sz;
      }
      for (i = 0; i < s.n; i += sz) {
        double d;
        int64_t iv;
        fuse__raw_value(sz == 4 ? FUSE__DT_FLOAT : FUSE__DT_DOUBLE, s.p + i, &d, &iv);
        FUSE__PUT(d, iv);
      }
    } else if ((f == 5 || f == 7 || f == 11) && (w == 0 || w == 2)) {
      /* int32_data (also the small types and bool) / int64_data / uint64_data */
      fuse__pb vals = b;
      if (w == 2) {
        if (!fuse__proto_bytes(&b, &s)) return -1;
        vals = fuse__proto_of(s);
        if (!s.n) continue;
      }
      do {
        int64_t iv;
        if (!fuse__proto_varint(&vals, &v)) return -1;
        iv = f == 5 ? (int64_t)(int32_t)(uint32_t)v : (int64_t)v;
        if (t->dtype == FUSE__DT_UINT8 || t->dtype == FUSE__DT_UINT16 || t->dtype == FUSE__DT_BOOL)
          iv = (int64_t)(uint32_t)v;
        FUSE__PUT((double)iv, iv);
      } while (w == 2 && vals.p < vals.end);
      if (w == 0) b = vals;
    } else if (!fuse__proto_skip(&b, w)) {
      return -1;
    }
  }
#undef FUSE__PUT
  return b.p == b.end ? got : -1;
}
