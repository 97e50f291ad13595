/* ============================================================================= ONNX == */
/* A protobuf wire-format reader with a bounds check on every byte, then a walk over the
   GraphProto that builds the graph with the public builders (so every shape check of the
   builders applies to what a file says). Field numbers are those of onnx.proto. */
#ifndef FUSE_NO_ONNX

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

/* ---- TensorProto */

enum { FUSE__DT_FLOAT = 1, FUSE__DT_INT32 = 6, FUSE__DT_INT64 = 7, FUSE__DT_DOUBLE = 11 };

typedef struct fuse__otensor {
  fuse__slice msg, name;
  int dtype, rank, external;
  int64_t dims[FUSE_MAX_RANK];
} fuse__otensor;

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
      t->external = 1;
      if (!fuse__proto_skip(&b, w)) return 0;
    } else if (!fuse__proto_skip(&b, w)) {
      return 0;
    }
  }
  return b.p == b.end;
}

/* Decodes a tensor's values as doubles (float, double, int32, int64 storage), exactly
   `count` of them. Returns the number found, or -1 if the message is malformed. */
static int64_t fuse__onnx_tensor_values(const fuse__otensor *t, double *out_d, float *out_f,
                                     int64_t *out_i, int64_t count) {
  fuse__pb b = fuse__proto_of(t->msg);
  uint32_t f, w;
  int64_t got = 0;
#define FUSE__PUT(val)                                \
  do {                                                \
    if (got < count) {                                \
      double v_ = (double)(val);                      \
      if (out_d) out_d[got] = v_;                     \
      if (out_f) out_f[got] = (float)(val);           \
      if (out_i) out_i[got] = (int64_t)(val);         \
    }                                                 \
    got++;                                            \
  } while (0)
  while (fuse__proto_tag(&b, &f, &w)) {
    fuse__slice s;
    uint64_t v;
    if (f == 9 && w == 2) { /* raw_data, little-endian */
      size_t i, size = t->dtype == FUSE__DT_FLOAT || t->dtype == FUSE__DT_INT32 ? 4 : 8;
      if (!fuse__proto_bytes(&b, &s)) return -1;
      if (s.n % size) return -1;
      for (i = 0; i < s.n; i += size) {
        const unsigned char *q = s.p + i;
        switch (t->dtype) {
        case FUSE__DT_FLOAT: FUSE__PUT(fuse__f32(fuse__le32(q))); break;
        case FUSE__DT_INT32: FUSE__PUT((int32_t)fuse__le32(q)); break;
        case FUSE__DT_INT64: FUSE__PUT((int64_t)fuse__le64(q)); break;
        default: {
          uint64_t u = fuse__le64(q);
          double d;
          memcpy(&d, &u, sizeof d);
          FUSE__PUT(d);
        }
        }
      }
    } else if ((f == 4 && (w == 5 || w == 2)) || (f == 10 && (w == 1 || w == 2))) {
      /* float_data (fixed32) / double_data (fixed64), packed or not */
      size_t size = f == 4 ? 4 : 8, i;
      fuse__slice one;
      if (w == 2) {
        if (!fuse__proto_bytes(&b, &s) || s.n % size) return -1;
      } else {
        if ((size_t)(b.end - b.p) < size) return -1;
        one.p = b.p;
        one.n = size;
        b.p += size;
        s = one;
      }
      for (i = 0; i < s.n; i += size) {
        if (size == 4) {
          FUSE__PUT(fuse__f32(fuse__le32(s.p + i)));
        } else {
          uint64_t u = fuse__le64(s.p + i);
          double d;
          memcpy(&d, &u, sizeof d);
          FUSE__PUT(d);
        }
      }
    } else if ((f == 5 || f == 7) && (w == 0 || w == 2)) { /* int32_data / int64_data */
      fuse__pb vals = b;
      if (w == 2) {
        if (!fuse__proto_bytes(&b, &s)) return -1;
        vals = fuse__proto_of(s);
      }
      do {
        if (!fuse__proto_varint(&vals, &v)) return -1;
        if (f == 5) FUSE__PUT((int32_t)(uint32_t)v);
        else FUSE__PUT((int64_t)v);
      } while (w == 2 && vals.p < vals.end);
      if (w == 0) b = vals;
    } else if (!fuse__proto_skip(&b, w)) {
      return -1;
    }
  }
#undef FUSE__PUT
  return b.p == b.end ? got : -1;
}

/* ---- the loader */

typedef struct fuse__oattr {
  fuse__slice msg, name, s, t;
  int type;
  float f;
  int64_t i;
  int has_f, has_i;
} fuse__oattr;

typedef struct fuse__onode {
  fuse__slice msg, op, name;
  fuse__slice in[16], out[4];
  int num_in, num_out;
} fuse__onode;

/* What an ONNX name stands for. */
enum { FUSE__OV_NONE, FUSE__OV_VALUE, FUSE__OV_TENSOR };
typedef struct fuse__oval {
  fuse__slice name;
  int kind;
  fuse_value v;     /* FUSE__OV_VALUE */
  fuse__otensor t;  /* FUSE__OV_TENSOR: an initializer or Constant not yet a graph value */
} fuse__oval;

typedef struct fuse__onnx {
  fuse_graph *g;
  int opset;
  fuse__oval *vals;
  int num_vals, cap_vals;
  int *table; /* open addressing over vals by name; -1 empty */
  int table_cap;
  const fuse__onode *node; /* the node being converted, for messages */
  int node_index;
  char name_buf[512];
  int64_t *scratch; /* fuse__onnx_int_tensor's values */
} fuse__onnx;

static uint32_t fuse__slice_hash(fuse__slice s) {
  uint32_t h = 2166136261u;
  size_t i;
  for (i = 0; i < s.n; i++) h = (h ^ s.p[i]) * 16777619u;
  return h;
}

static int fuse__onnx_find(const fuse__onnx *ld, fuse__slice name) {
  uint32_t i;
  if (!ld->table_cap) return -1;
  for (i = fuse__slice_hash(name) & (uint32_t)(ld->table_cap - 1); ld->table[i] >= 0;
       i = (i + 1) & (uint32_t)(ld->table_cap - 1)) {
    const fuse__oval *o = &ld->vals[ld->table[i]];
    if (o->name.n == name.n && (name.n == 0 || memcmp(o->name.p, name.p, name.n) == 0))
      return ld->table[i];
  }
  return -1;
}

/* A NUL-terminated copy of a name for messages and fuse names (truncated to 511 bytes). */
static const char *fuse__onnx_cstr(fuse__onnx *ld, fuse__slice s) {
  size_t n = s.n < sizeof ld->name_buf - 1 ? s.n : sizeof ld->name_buf - 1;
  if (n) memcpy(ld->name_buf, s.p, n);
  ld->name_buf[n] = 0;
  return ld->name_buf;
}

static fuse_result fuse__onnx_fail(fuse__onnx *ld, fuse_result r, const char *what) {
  char name[128], op[64];
  size_t n;
  if (ld->node) {
    n = ld->node->name.n < sizeof name - 1 ? ld->node->name.n : sizeof name - 1;
    if (n) memcpy(name, ld->node->name.p, n);
    name[n] = 0;
    n = ld->node->op.n < sizeof op - 1 ? ld->node->op.n : sizeof op - 1;
    if (n) memcpy(op, ld->node->op.p, n);
    op[n] = 0;
    if (!ld->node->name.n && ld->node->num_out && ld->node->out[0].n) { /* most are unnamed */
      n = ld->node->out[0].n < sizeof name - 1 ? ld->node->out[0].n : sizeof name - 1;
      memcpy(name, ld->node->out[0].p, n);
      name[n] = 0;
      fuse__fail(ld->g, r, "onnx: node %d (%s, output '%s'): %s", ld->node_index, op, name, what);
    } else {
      fuse__fail(ld->g, r, "onnx: node %d '%s' (%s): %s", ld->node_index, name, op, what);
    }
  } else {
    fuse__fail(ld->g, r, "onnx: %s", what);
  }
  return ld->g->status;
}

/* Adds (or replaces) what `name` stands for. */
static int fuse__onnx_bind(fuse__onnx *ld, fuse__slice name, const fuse__oval *val) {
  int k = fuse__onnx_find(ld, name), i;
  uint32_t h;
  if (k >= 0) {
    ld->vals[k] = *val;
    ld->vals[k].name = name;
    return 1;
  }
  if ((ld->num_vals + 1) * 2 > ld->table_cap) {
    int cap = ld->table_cap ? ld->table_cap * 2 : 256;
    int *table = (int *)fuse__alloc(&ld->g->alloc, (size_t)cap * sizeof(int), 16);
    if (!table) return 0;
    for (i = 0; i < cap; i++) table[i] = -1;
    for (i = 0; i < ld->num_vals; i++) {
      for (h = fuse__slice_hash(ld->vals[i].name) & (uint32_t)(cap - 1); table[h] >= 0;
           h = (h + 1) & (uint32_t)(cap - 1)) {
      }
      table[h] = i;
    }
    fuse__free(&ld->g->alloc, ld->table);
    ld->table = table;
    ld->table_cap = cap;
  }
  {
    fuse__oval *vals = (fuse__oval *)fuse__grow(&ld->g->alloc, ld->vals, ld->num_vals,
                                                &ld->cap_vals, ld->num_vals + 1, sizeof(fuse__oval));
    if (!vals) return 0;
    ld->vals = vals;
  }
  ld->vals[ld->num_vals] = *val;
  ld->vals[ld->num_vals].name = name;
  for (h = fuse__slice_hash(name) & (uint32_t)(ld->table_cap - 1); ld->table[h] >= 0;
       h = (h + 1) & (uint32_t)(ld->table_cap - 1)) {
  }
  ld->table[h] = ld->num_vals++;
  return 1;
}

static int fuse__onnx_bind_value(fuse__onnx *ld, fuse__slice name, fuse_value v) {
  fuse__oval o;
  memset(&o, 0, sizeof o);
  o.kind = FUSE__OV_VALUE;
  o.v = v;
  return fuse__onnx_bind(ld, name, &o);
}

/* Names of initializers, inputs and outputs: present and without NUL bytes (node inputs may
   be empty: an optional input left out). */
static int fuse__onnx_name_ok(fuse__onnx *ld, fuse__slice s) {
  if (s.n && memchr(s.p, 0, s.n))
    return fuse__onnx_fail(ld, FUSE_ERROR_PARSE, "a name contains a NUL byte"), 0;
  return 1;
}

/* Checks a tensor's dims and type for use as float data; fills count. */
/* A tensor's element count; returns the index of a dimension that is zero or out of range,
   or -1 when they are all fine. */
static int fuse__onnx_tensor_count(const fuse__otensor *t, int64_t *count) {
  int i;
  *count = 1;
  for (i = 0; i < t->rank; i++) {
    if (t->dims[i] < 1 || t->dims[i] > FUSE__MAX_DIM || *count > ((int64_t)1 << 48) / t->dims[i])
      return i;
    *count *= t->dims[i];
  }
  return -1;
}

static int fuse__onnx_check_tensor(fuse__onnx *ld, const fuse__otensor *t, int64_t *count) {
  int i;
  char what[400];
  fuse__out o;
  o.buf = what;
  o.len = 0;
  o.cap = sizeof what;
  o.write = NULL;
  o.user = NULL;
  *count = 1;
  if (t->external) {
    fuse__puts(&o, "tensor '");
    fuse__puts(&o, fuse__onnx_cstr(ld, t->name));
    fuse__puts(&o, "' keeps its data in an external file, which this loader does not read");
    return fuse__onnx_fail(ld, FUSE_ERROR_UNSUPPORTED, what), 0;
  }
  if ((i = fuse__onnx_tensor_count(t, count)) >= 0) {
    fuse__puts(&o, "tensor '");
    fuse__puts(&o, fuse__onnx_cstr(ld, t->name));
    fuse__puts(&o, "' has dimension ");
    fuse__put_int(&o, t->dims[i]);
    fuse__puts(&o, t->dims[i] == 0 ? " (zero-sized tensors are not supported)" : " (out of range)");
    return fuse__onnx_fail(ld, t->dims[i] == 0 ? FUSE_ERROR_UNSUPPORTED : FUSE_ERROR_PARSE, what), 0;
  }
  if (t->dtype != FUSE__DT_FLOAT && t->dtype != FUSE__DT_DOUBLE && t->dtype != FUSE__DT_INT64 &&
      t->dtype != FUSE__DT_INT32) {
    fuse__puts(&o, "tensor '");
    fuse__puts(&o, fuse__onnx_cstr(ld, t->name));
    fuse__puts(&o, "' has data type ");
    fuse__put_int(&o, t->dtype);
    fuse__puts(&o, " (float32, double, int32 and int64 tensors are read)");
    return fuse__onnx_fail(ld, FUSE_ERROR_UNSUPPORTED, what), 0;
  }
  return 1;
}

/* The graph value for an ONNX name: initializers / Constant outputs become constants on
   first use. Int64 tensors only serve as shapes: using one as data is unsupported. */
static fuse_value fuse__onnx_value(fuse__onnx *ld, fuse__slice name) {
  int k = fuse__onnx_find(ld, name);
  fuse__oval *o;
  char what[600];
  if (k < 0 || ld->vals[k].kind == FUSE__OV_NONE) {
    fuse__out out;
    out.buf = what;
    out.len = 0;
    out.cap = sizeof what;
    out.write = NULL;
    out.user = NULL;
    fuse__puts(&out, "input '");
    fuse__puts(&out, fuse__onnx_cstr(ld, name));
    fuse__puts(&out, "' is not produced by an earlier node, an initializer or a graph input");
    return fuse__onnx_fail(ld, FUSE_ERROR_PARSE, what), FUSE_NONE;
  }
  o = &ld->vals[k];
  if (o->kind == FUSE__OV_TENSOR) {
    int64_t count, got;
    float *data;
    fuse_value v;
    fuse__otensor t = o->t;
    if (!fuse__onnx_check_tensor(ld, &t, &count)) return FUSE_NONE;
    if (t.dtype != FUSE__DT_FLOAT && t.dtype != FUSE__DT_DOUBLE) {
      return fuse__onnx_fail(ld, FUSE_ERROR_UNSUPPORTED, "an integer tensor is used as float data"),
             FUSE_NONE;
    }
    got = fuse__onnx_tensor_values(&t, NULL, NULL, NULL, 0); /* count first: allocate what is there */
    if (got != count) {
      fuse__out out;
      out.buf = what;
      out.len = 0;
      out.cap = sizeof what;
      out.write = NULL;
      out.user = NULL;
      fuse__puts(&out, "tensor '");
      fuse__puts(&out, fuse__onnx_cstr(ld, t.name));
      fuse__puts(&out, got < 0 ? "': its data is malformed" : "': its data does not match its dimensions");
      return fuse__onnx_fail(ld, FUSE_ERROR_PARSE, what), FUSE_NONE;
    }
    v = fuse_constant(ld->g, NULL, t.rank, t.dims, NULL);
    if (v == FUSE_NONE) return FUSE_NONE;
    data = ld->g->nodes[v].data;
    fuse__onnx_tensor_values(&t, NULL, data, NULL, count); /* counted above: it fits */
    if (t.name.n && fuse__onnx_name_ok(ld, t.name) &&
        fuse_value_set_name(ld->g, v, fuse__onnx_cstr(ld, t.name)) != FUSE_OK)
      return FUSE_NONE;
    k = fuse__onnx_find(ld, name); /* the table may have moved */
    ld->vals[k].kind = FUSE__OV_VALUE;
    ld->vals[k].v = v;
    return v;
  }
  return o->v;
}

/* An int64 (or int32) tensor's values, e.g. a Reshape target; 0 if `name` is not one. */
static int fuse__onnx_ints(fuse__onnx *ld, fuse__slice name, int64_t *out, int max, int *count) {
  int k = fuse__onnx_find(ld, name);
  int64_t n, got;
  const fuse__otensor *t;
  if (k < 0 || ld->vals[k].kind != FUSE__OV_TENSOR) return 0;
  t = &ld->vals[k].t;
  if (t->dtype != FUSE__DT_INT64 && t->dtype != FUSE__DT_INT32) return 0;
  n = fuse__numel(t->rank, t->dims);
  if (t->rank > 1 || n > max || n < 0) return 0;
  got = fuse__onnx_tensor_values(t, NULL, NULL, out, n);
  if (got != n) return 0;
  *count = (int)n;
  return 1;
}

/* A scalar float constant (initializer or Constant with one element). */
static int fuse__onnx_scalar(fuse__onnx *ld, fuse__slice name, float *out) {
  int k = fuse__onnx_find(ld, name);
  const fuse__otensor *t;
  if (k < 0) return 0;
  if (ld->vals[k].kind == FUSE__OV_VALUE) {
    const fuse__node *n = &ld->g->nodes[ld->vals[k].v];
    if (n->op != FUSE__OP_CONST || fuse__numel(n->rank, n->shape) != 1) return 0;
    *out = n->data[0];
    return 1;
  }
  if (ld->vals[k].kind != FUSE__OV_TENSOR) return 0;
  t = &ld->vals[k].t;
  if ((t->dtype != FUSE__DT_FLOAT && t->dtype != FUSE__DT_DOUBLE) || fuse__numel(t->rank, t->dims) != 1 ||
      t->external)
    return 0;
  return fuse__onnx_tensor_values(t, NULL, out, NULL, 1) == 1;
}

/* An integer (int64, int32 or bool) tensor known at load time (an initializer, a Constant or
   a folded node): its rank, dims and values as int64 (loader-owned, valid while the loader
   runs), or 0 when `name` is not one. */
static int fuse__onnx_int_tensor(fuse__onnx *ld, fuse__slice name, int *rank, int64_t *dims,
                                 const int64_t **values) {
  int k = fuse__onnx_find(ld, name);
  const fuse__otensor *t;
  int64_t n, *buf;
  if (k < 0 || ld->vals[k].kind != FUSE__OV_TENSOR) return 0;
  t = &ld->vals[k].t;
  if ((t->dtype != FUSE__DT_INT64 && t->dtype != FUSE__DT_INT32) || t->external) return 0;
  if (fuse__onnx_tensor_count(t, &n) >= 0) return 0;
  buf = (int64_t *)fuse__alloc(&ld->g->alloc, (size_t)n * sizeof(int64_t), 16);
  if (!buf) return 0;
  if (fuse__onnx_tensor_values(t, NULL, NULL, buf, n) != n) {
    fuse__free(&ld->g->alloc, buf);
    return 0;
  }
  fuse__free(&ld->g->alloc, ld->scratch);
  ld->scratch = buf;
  *rank = t->rank;
  memcpy(dims, t->dims, sizeof t->dims);
  *values = buf;
  return 1;
}

/* The graph value of a condition (Where): a float graph value, or a constant boolean / integer
   tensor made a float constant of 0 and 1. */
static fuse_value fuse__onnx_mask(fuse__onnx *ld, fuse__slice name) {
  int rank, i;
  int64_t dims[FUSE_MAX_RANK], n;
  const int64_t *v;
  float *f;
  fuse_value c;
  if (!fuse__onnx_int_tensor(ld, name, &rank, dims, &v)) return fuse__onnx_value(ld, name);
  c = fuse_constant(ld->g, NULL, rank, dims, NULL);
  if (c == FUSE_NONE) return FUSE_NONE;
  f = ld->g->nodes[c].data;
  n = fuse__numel(rank, dims);
  for (i = 0; i < n; i++) f[i] = v[i] != 0;
  return c;
}

