/* ------------------------------------------- onnx: the loader's records and values -- */

typedef struct fuse__oattr {
  fuse__slice msg, name, s, t, g; /* g: a GraphProto (If's branches) */
  int type;
  float f;
  int64_t i;
  int has_f, has_i;
} fuse__oattr;

/* A NodeProto: in / out point into the loader's slots (any number of each). */
typedef struct fuse__onode {
  fuse__slice msg, op, name, domain;
  fuse__slice *in, *out;
  int num_in, num_out;
} fuse__onode;

/* A tensor the loader knows the values of: an initializer or Constant once read, or what a
   node computed at load (shape arithmetic). Floating-point values are float32, every other
   type (integers, bool) int64; the arrays belong to the loader. */
typedef struct fuse__known {
  int dtype; /* FUSE__DT_FLOAT: values in f; else in i (dtype says which integer type) */
  int rank;
  int64_t dims[FUSE_MAX_RANK];
  int64_t count;
  float *f;
  int64_t *i;
} fuse__known;

/* What an ONNX name stands for. */
enum { FUSE__OV_NONE, FUSE__OV_VALUE, FUSE__OV_TENSOR, FUSE__OV_KNOWN };
typedef struct fuse__oval {
  fuse__slice name;
  int kind;
  fuse_value v;     /* FUSE__OV_VALUE */
  fuse__otensor t;  /* FUSE__OV_TENSOR: an initializer or Constant not yet read */
  fuse__known k;    /* FUSE__OV_KNOWN */
  int whole;        /* FUSE__OV_VALUE: whole numbers by construction (made by Round, Floor or
                       Ceil: a Cast to an integer type leaves them as they are) */
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
  fuse__slice *slots; /* the nodes' inputs and outputs (fuse__onode in / out) */
  int num_slots, cap_slots;
  int depth;    /* If branches being read, one inside the other */
  const char *dir; /* the model's directory ("" or ending in '/'), for external data; NULL:
                      loaded from memory, external data cannot be found */
  int borrow;      /* the data is a file mapping the graph may keep: large float32
                      initializers stay in it (fuse__constant_borrowed) */
  void **owned; /* the known tensors' arrays, freed with the loader */
  int num_owned, cap_owned;
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
    if (fuse__slice_eq(o->name, name))
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

static void fuse__copy_slice(char *dst, size_t cap, fuse__slice s) {
  size_t n = s.n < cap - 1 ? s.n : cap - 1;
  if (n) memcpy(dst, s.p, n);
  dst[n] = 0;
}

static fuse_result fuse__onnx_fail(fuse__onnx *ld, fuse_result r, const char *what) {
  char name[128], op[64];
  if (ld->node) {
    fuse__copy_slice(op, sizeof op, ld->node->op);
    if (!ld->node->name.n && ld->node->num_out && ld->node->out[0].n) { /* most are unnamed */
      fuse__copy_slice(name, sizeof name, ld->node->out[0]);
      fuse__fail(ld->g, r, "onnx: node %d (%s, output '%s'): %s", ld->node_index, op, name, what);
    } else {
      fuse__copy_slice(name, sizeof name, ld->node->name);
      fuse__fail(ld->g, r, "onnx: node %d '%s' (%s): %s", ld->node_index, name, op, what);
    }
  } else {
    fuse__fail(ld->g, r, "onnx: %s", what);
  }
  return ld->g->status;
}

/* fuse__onnx_fail with a formatted message (fuse__vformat's directives). */
static fuse_result fuse__onnx_failf(fuse__onnx *ld, fuse_result r, const char *fmt, ...) {
  char what[400];
  va_list ap;
  fuse__out o;
  o.buf = what;
  o.len = 0;
  o.cap = sizeof what;
  o.write = NULL;
  o.user = NULL;
  va_start(ap, fmt);
  fuse__vformat(&o, ld->g, fmt, ap);
  va_end(ap);
  return fuse__onnx_fail(ld, r, what);
}

/* Adds (or replaces) what `name` stands for. */
static int fuse__onnx_bind(fuse__onnx *ld, fuse__slice name, const fuse__oval *val) {
  int k, i;
  uint32_t h;
  if (!name.n) return 1; /* an optional output left unnamed: nothing reads it */
  k = fuse__onnx_find(ld, name);
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

static int fuse__onnx_bind_known(fuse__onnx *ld, fuse__slice name, const fuse__known *k) {
  fuse__oval o;
  memset(&o, 0, sizeof o);
  o.kind = FUSE__OV_KNOWN;
  o.k = *k;
  if (!fuse__onnx_bind(ld, name, &o)) return fuse__onnx_fail(ld, FUSE_ERROR_OUT_OF_MEMORY, "out of memory"), 0;
  return 1;
}

/* Names of initializers, inputs and outputs: present and without NUL bytes (node inputs may
   be empty: an optional input left out). */
static int fuse__onnx_name_ok(fuse__onnx *ld, fuse__slice s) {
  if (s.n && memchr(s.p, 0, s.n))
    return fuse__onnx_fail(ld, FUSE_ERROR_PARSE, "a name contains a NUL byte"), 0;
  return 1;
}

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

/* Checks a tensor's dims, type and storage before its data is read; fills count. */
static int fuse__onnx_check_tensor(fuse__onnx *ld, const fuse__otensor *t, int64_t *count) {
  int i;
  char name[200];
  fuse__copy_slice(name, sizeof name, t->name);
  *count = 1;
  if (t->external && !ld->dir)
    return fuse__onnx_failf(ld, FUSE_ERROR_UNSUPPORTED,
                            "tensor '%s' keeps its data in an external file: load the model "
                            "with fuse_onnx_load_file, so that its directory is known", name), 0;
  if ((i = fuse__onnx_tensor_count(t, count)) >= 0)
    return fuse__onnx_failf(ld, t->dims[i] == 0 ? FUSE_ERROR_UNSUPPORTED : FUSE_ERROR_PARSE,
                            "tensor '%s' has dimension %D%s", name, t->dims[i],
                            t->dims[i] == 0 ? " (zero-sized tensors are not supported)"
                                            : " (out of range)"), 0;
  if (!fuse__dt_size(t->dtype))
    return fuse__onnx_failf(ld, FUSE_ERROR_UNSUPPORTED,
                            "tensor '%s' has data type %d (%s), which this loader does not read",
                            name, t->dtype, fuse__dt_name(t->dtype)), 0;
  return 1;
}

/* Reads an external tensor's `count` values from its file (location, relative to the model's
   directory, inside it: no absolute path, no "..") into out_f (as float) and / or out_i (as
   int64), as fuse__onnx_tensor_values does for raw_data. float32 goes straight into out_f. */
static int fuse__onnx_external_read(fuse__onnx *ld, const fuse__otensor *t, int64_t count,
                                    float *out_f, int64_t *out_i) {
  char name[200], path[1024];
  size_t dl = strlen(ld->dir), i, size = (size_t)fuse__dt_size(t->dtype);
  uint64_t bytes = (uint64_t)count * size;
  fuse__copy_slice(name, sizeof name, t->name);
  if (!t->location.n || memchr(t->location.p, 0, t->location.n) || t->location.p[0] == '/' ||
      t->location.p[0] == '\\' || dl + t->location.n >= sizeof path)
    return fuse__onnx_failf(ld, FUSE_ERROR_PARSE, "tensor '%s': its external data has no usable "
                            "location", name), 0;
  for (i = 0; i + 1 < t->location.n; i++)
    if (t->location.p[i] == '.' && t->location.p[i + 1] == '.' &&
        (i == 0 || t->location.p[i - 1] == '/') &&
        (i + 2 == t->location.n || t->location.p[i + 2] == '/'))
      return fuse__onnx_failf(ld, FUSE_ERROR_PARSE, "tensor '%s': its external data location "
                              "leaves the model's directory", name), 0;
  memcpy(path, ld->dir, dl);
  memcpy(path + dl, t->location.p, t->location.n);
  path[dl + t->location.n] = 0;
  if (t->length && t->length != bytes)
    return fuse__onnx_failf(ld, FUSE_ERROR_PARSE, "tensor '%s': its external data is %D bytes, "
                            "its shape %S of %s needs %D", name, (int64_t)t->length, t->rank,
                            t->dims, fuse__dt_name(t->dtype), (int64_t)bytes), 0;
#ifndef FUSE_NO_STDIO
  {
    FILE *f = fopen(path, "rb");
    long end;
    int ok = f && fseek(f, 0, SEEK_END) == 0 && (end = ftell(f)) >= 0 &&
             t->offset <= (uint64_t)end && bytes <= (uint64_t)end - t->offset &&
             t->offset <= (uint64_t)LONG_MAX && fseek(f, (long)t->offset, SEEK_SET) == 0;
    if (ok && t->dtype == FUSE__DT_FLOAT && out_f && !out_i && fuse__little_endian()) {
      ok = fread(out_f, 1, (size_t)bytes, f) == (size_t)bytes; /* straight into the constant */
    } else if (ok) { /* other types: a block at a time through the raw_data conversion */
      unsigned char buf[4096];
      int64_t e = 0;
      while (ok && e < count) {
        size_t n = (size_t)(count - e) < sizeof buf / size ? (size_t)(count - e) : sizeof buf / size;
        ok = fread(buf, size, n, f) == n;
        for (i = 0; ok && i < n; i++, e++) {
          double d;
          int64_t iv;
          fuse__raw_value(t->dtype, buf + i * size, &d, &iv);
          if (out_f) out_f[e] = (float)d;
          if (out_i) out_i[e] = iv;
        }
      }
    }
    if (f) fclose(f);
    if (!ok)
      return fuse__onnx_failf(ld, FUSE_ERROR_IO, "tensor '%s': cannot read %D bytes at offset %D "
                              "of its external data '%s'", name, (int64_t)bytes,
                              (int64_t)t->offset, path), 0;
    return 1;
  }
#else
  (void)out_f, (void)out_i;
  return fuse__onnx_failf(ld, FUSE_ERROR_UNSUPPORTED, "tensor '%s': external data needs stdio "
                          "(FUSE_NO_STDIO is set)", name), 0;
#endif
}

/* Memory the loader frees when it is done (the known tensors' values). */
static void *fuse__onnx_own(fuse__onnx *ld, size_t bytes) {
  void *p, **owned;
  owned = (void **)fuse__grow(&ld->g->alloc, ld->owned, ld->num_owned, &ld->cap_owned,
                              ld->num_owned + 1, sizeof(void *));
  if (!owned) return NULL;
  ld->owned = owned;
  if (!(p = fuse__alloc(&ld->g->alloc, bytes ? bytes : 1, 16))) return NULL;
  ld->owned[ld->num_owned++] = p;
  return p;
}

/* The largest tensor folded at load (elements): shape arithmetic is tiny; this bounds what a
   hostile file can make the loader compute. */
#define FUSE__MAX_FOLD ((int64_t)1 << 24)

/* Gives k room for its values: float32 for dtype FLOAT, else int64. 0 (and the error) when
   it is too large or memory runs out. */
static int fuse__known_alloc(fuse__onnx *ld, fuse__known *k, int dtype, int rank,
                             const int64_t *dims) {
  int d;
  memset(k, 0, sizeof *k);
  k->dtype = dtype == FUSE__DT_DOUBLE ? FUSE__DT_FLOAT : dtype;
  k->rank = rank;
  k->count = 1;
  for (d = 0; d < rank; d++) { /* zero-sized ones are fine here (an empty shape, no scales) */
    if (dims[d] < 0 || dims[d] > FUSE__MAX_FOLD || k->count * dims[d] > FUSE__MAX_FOLD)
      return fuse__onnx_failf(ld, FUSE_ERROR_INVALID_ARGUMENT,
                              "a tensor computed at load time would have shape %S (%s)", rank,
                              dims, dims[d] < 0 ? "a negative dimension" : "more than 2^24 elements"), 0;
    k->dims[d] = dims[d];
    k->count *= dims[d];
  }
  if (k->dtype == FUSE__DT_FLOAT) k->f = (float *)fuse__onnx_own(ld, (size_t)k->count * sizeof(float));
  else k->i = (int64_t *)fuse__onnx_own(ld, (size_t)k->count * sizeof(int64_t));
  if (!k->f && !k->i) return fuse__onnx_fail(ld, FUSE_ERROR_OUT_OF_MEMORY, "out of memory"), 0;
  return 1;
}

/* The values of `name` when the loader knows them (an initializer, a Constant or a folded
   node): 1 with *k filled; 0 when the name is a run-time value (or unknown, or the error is
   set: check g->status). An initializer is read here once and remembered. */
static int fuse__onnx_known_of(fuse__onnx *ld, fuse__slice name, fuse__known *k) {
  int idx = fuse__onnx_find(ld, name);
  fuse__otensor t;
  int64_t count;
  if (idx < 0) return 0;
  if (ld->vals[idx].kind == FUSE__OV_KNOWN) {
    *k = ld->vals[idx].k;
    return 1;
  }
  if (ld->vals[idx].kind == FUSE__OV_VALUE) { /* a typed constant made of a tensor (a zero
                                                  point, fuse__onnx_typed_value) is still known */
    const fuse__node *c = &ld->g->nodes[ld->vals[idx].v];
    int64_t i;
    if (c->op != FUSE__OP_CONST || c->type == FUSE_FLOAT32 || !c->data ||
        fuse__numel(c->rank, c->shape) > FUSE__MAX_FOLD ||
        !fuse__known_alloc(ld, k, fuse__dt_of_type(c->type), c->rank, c->shape))
      return 0;
    for (i = 0; i < k->count; i++) k->i[i] = (int64_t)fuse__const_value(c, i);
    return 1;
  }
  if (ld->vals[idx].kind != FUSE__OV_TENSOR) return 0;
  t = ld->vals[idx].t;
  if (fuse__onnx_tensor_count(&t, &count) >= 0) { /* an empty tensor (no scales, say) */
    int d;
    for (d = 0; d < t.rank && t.dims[d] != 0; d++) {
    }
    if (d < t.rank && !t.external && fuse__dt_size(t.dtype)) count = 0;
  }
  if (count && !fuse__onnx_check_tensor(ld, &t, &count)) return 0;
  if (!fuse__known_alloc(ld, k, fuse__dt_is_float(t.dtype) ? FUSE__DT_FLOAT : t.dtype, t.rank,
                         t.dims))
    return 0;
  if (t.external) {
    if (!fuse__onnx_external_read(ld, &t, count, k->f, k->i)) return 0;
  } else if (fuse__onnx_tensor_values(&t, k->f, k->i, count) != count) {
    char nm[200];
    fuse__copy_slice(nm, sizeof nm, t.name);
    return fuse__onnx_failf(ld, FUSE_ERROR_PARSE, "tensor '%s': its data %s", nm,
                            "is malformed or does not match its dimensions"), 0;
  }
  idx = fuse__onnx_find(ld, name);
  ld->vals[idx].kind = FUSE__OV_KNOWN;
  ld->vals[idx].k = *k;
  return 1;
}

/* The shape of whatever `name` stands for; 0 if it stands for nothing. */
static int fuse__onnx_shape_of(fuse__onnx *ld, fuse__slice name, int *rank, int64_t *dims) {
  int idx = fuse__onnx_find(ld, name);
  const fuse__oval *o;
  if (idx < 0) return 0;
  o = &ld->vals[idx];
  switch (o->kind) {
  case FUSE__OV_VALUE:
    *rank = ld->g->nodes[o->v].rank;
    memcpy(dims, ld->g->nodes[o->v].shape, sizeof(int64_t) * FUSE_MAX_RANK);
    return 1;
  case FUSE__OV_TENSOR:
    *rank = o->t.rank;
    memcpy(dims, o->t.dims, sizeof(int64_t) * FUSE_MAX_RANK);
    return 1;
  case FUSE__OV_KNOWN:
    *rank = o->k.rank;
    memcpy(dims, o->k.dims, sizeof(int64_t) * FUSE_MAX_RANK);
    return 1;
  default: return 0;
  }
}

/* The raw_data of tensor t when that one field holds all its `count` values (no float_data,
   int32_data, ... beside it): a slice of the file. 0 otherwise. */
static int fuse__onnx_raw_only(const fuse__otensor *t, int64_t count, fuse__slice *raw) {
  fuse__pb b = fuse__proto_of(t->msg);
  uint32_t f, w;
  raw->p = NULL;
  raw->n = 0;
  if (t->external || !fuse__dt_size(t->dtype)) return 0;
  while (fuse__proto_tag(&b, &f, &w)) {
    if (f == 9 && w == 2) {
      if (raw->p || !fuse__proto_bytes(&b, raw)) return 0;
    } else if ((f >= 4 && f <= 7) || f == 10 || f == 11 || !fuse__proto_skip(&b, w)) {
      return 0;
    }
  }
  return b.p == b.end && raw->p && raw->n == (size_t)count * (size_t)fuse__dt_size(t->dtype);
}

/* The raw_data of float32 tensor t when that one field holds all its `count` values: a slice
   of the file, on a little-endian host (its bytes are then the floats). 0 otherwise. */
static int fuse__onnx_raw_floats(const fuse__otensor *t, int64_t count, fuse__slice *raw) {
  if (t->dtype != FUSE__DT_FLOAT || !fuse__little_endian()) {
    raw->p = NULL;
    raw->n = 0;
    return 0;
  }
  return fuse__onnx_raw_only(t, count, raw);
}

/* A float constant of the graph from a tensor: a large float32 initializer of a mapped file
   stays in the file (borrowed); otherwise raw float32 data is copied straight from the file
   into the constant (no zeroing, no per-element conversion). */
static fuse_value fuse__onnx_constant_of(fuse__onnx *ld, const fuse__otensor *t) {
  int64_t count, got;
  fuse_value v;
  fuse__slice raw;
  char nm[200];
  if (!fuse__onnx_check_tensor(ld, t, &count)) return FUSE_NONE;
  if (ld->borrow && (uint64_t)count * sizeof(float) >= FUSE__BORROW_MIN_BYTES &&
      fuse__onnx_raw_floats(t, count, &raw))
    return fuse__constant_borrowed(ld->g, t->rank, t->dims, raw.p, 0);
  fuse__copy_slice(nm, sizeof nm, t->name);
  if (!fuse__dt_is_float(t->dtype))
    return fuse__onnx_failf(ld, FUSE_ERROR_UNSUPPORTED,
                            "tensor '%s' (%s, shape %S) is used as float32 data; fuse.h "
                            "computes in float32 and reads integer tensors only as shapes, "
                            "axes and indices, and as the quantized operands of the "
                            "quantization ops", nm, fuse__dt_name(t->dtype), t->rank, t->dims),
           FUSE_NONE;
  if (t->external) {
    v = fuse__constant_uninit(ld->g, t->rank, t->dims);
    if (v == FUSE_NONE) return FUSE_NONE;
    return fuse__onnx_external_read(ld, t, count, ld->g->nodes[v].data, NULL) ? v : FUSE_NONE;
  }
  got = fuse__onnx_tensor_values(t, NULL, NULL, 0); /* count first: allocate what is there */
  if (got != count)
    return fuse__onnx_failf(ld, FUSE_ERROR_PARSE, "tensor '%s': its data %s", nm,
                            got < 0 ? "is malformed" : "does not match its dimensions"),
           FUSE_NONE;
  v = fuse__constant_uninit(ld->g, t->rank, t->dims);
  if (v == FUSE_NONE) return FUSE_NONE;
  fuse__onnx_tensor_values(t, ld->g->nodes[v].data, NULL, count); /* counted above: it fits */
  return v;
}

/* y[c][r] = x[r][c] * scale for an R x C matrix x, in blocks that stay in cache (a 25088 x
   4096 classifier weight element by element would miss on every store). x may be unaligned
   bytes straight from a file (little-endian float32). */
static void fuse__transpose_tiles(float *y, const unsigned char *xb, int64_t R, int64_t C,
                                  int64_t r0, int64_t r1) {
  const int64_t T = 16; /* a 16 x 16 tile: 16 cache lines read, 16 written */
  float tile[16][16];
  int64_t rt, c0, r, c;
  for (c0 = 0; c0 < C; c0 += T)
    for (rt = r0; rt < r1; rt += T) {
      int64_t nr = r1 - rt < T ? r1 - rt : (int64_t)T, nc = C - c0 < T ? C - c0 : (int64_t)T;
      for (r = 0; r < nr; r++)
        memcpy(tile[r], xb + (size_t)((rt + r) * C + c0) * sizeof(float), (size_t)nc * sizeof(float));
      for (c = 0; c < nc; c++) {
        float *dst = y + (c0 + c) * R + rt;
        for (r = 0; r < nr; r++) dst[r] = tile[r][c];
      }
    }
}

static void fuse__transpose_scaled(float *y, const void *x, int64_t R, int64_t C, float scale,
                                   const fuse_allocator *alloc) {
  const unsigned char *xb = (const unsigned char *)x;
  int64_t r0, i, band = 64;
  float *tmp = NULL;
#if defined(FUSE__SIMD) && !defined(FUSE_NO_AVX2)
  /* bands of rows copied to an aligned buffer, then the layout conversions' AVX2 transpose */
  if (fuse_cpu_isa() >= FUSE_ISA_AVX2)
    tmp = (float *)fuse__alloc(alloc, (size_t)(band * C) * sizeof(float), FUSE__ALIGN);
#else
  (void)alloc;
#endif
  for (r0 = 0; r0 < R; r0 += band) {
    int64_t rows = R - r0 < band ? R - r0 : band;
#if defined(FUSE__SIMD) && !defined(FUSE_NO_AVX2)
    if (tmp) {
      memcpy(tmp, xb + (size_t)(r0 * C) * sizeof(float), (size_t)(rows * C) * sizeof(float));
      fuse__transpose_avx2(tmp, C, y + r0, R, rows, C);
      continue;
    }
#endif
    fuse__transpose_tiles(y, xb, R, C, r0, r0 + rows);
  }
  fuse__free(alloc, tmp);
  if (scale != 1)
    for (i = 0; i < R * C; i++) y[i] *= scale;
}

/* The transpose of a 2-D float initializer (times scale) as a constant, read from the file
   directly: Gemm's transB weights never exist twice. Unscaled from a mapped file, it stays
   there, transposed when the plan packs it. FUSE_NONE without an error when `name` is not
   such an initializer (the caller transposes the graph value). */
static fuse_value fuse__onnx_transposed_tensor(fuse__onnx *ld, fuse__slice name, float scale) {
  int k = fuse__onnx_find(ld, name);
  fuse__otensor t;
  fuse__slice raw = {NULL, 0};
  int64_t count, dims[2];
  fuse_value v;
  if (k < 0 || ld->vals[k].kind != FUSE__OV_TENSOR) return FUSE_NONE;
  t = ld->vals[k].t;
  if (t.rank != 2 || fuse__onnx_tensor_count(&t, &count) >= 0 ||
      !fuse__onnx_raw_floats(&t, count, &raw))
    return FUSE_NONE;
  dims[0] = t.dims[1];
  dims[1] = t.dims[0];
  if (ld->borrow && scale == 1 && raw.n >= FUSE__BORROW_MIN_BYTES) /* packed from the file */
    return fuse__constant_borrowed(ld->g, 2, dims, raw.p, 1);
  if ((v = fuse__constant_uninit(ld->g, 2, dims)) == FUSE_NONE) return FUSE_NONE;
  fuse__transpose_scaled(ld->g->nodes[v].data, raw.p, t.dims[0], t.dims[1], scale, &ld->g->alloc);
  return v;
}

/* Names `name` in the graph (when the graph has no value of that name yet) and binds it to
   v: a tensor is made a graph constant once. */
static fuse_value fuse__onnx_bind_constant(fuse__onnx *ld, fuse__slice name, fuse_value v) {
  int k;
  if (name.n && fuse__onnx_name_ok(ld, name) && fuse__find(ld->g, fuse__onnx_cstr(ld, name)) == FUSE_NONE &&
      fuse_value_set_name(ld->g, v, fuse__onnx_cstr(ld, name)) != FUSE_OK)
    return FUSE_NONE;
  k = fuse__onnx_find(ld, name); /* the table may have moved */
  ld->vals[k].kind = FUSE__OV_VALUE;
  ld->vals[k].v = v;
  return v;
}

/* The graph value for an ONNX name: initializers, Constants and folded float tensors become
   constants on first use. An integer or bool tensor cannot be float data: that is an error
   naming it. */
static fuse_value fuse__onnx_value(fuse__onnx *ld, fuse__slice name) {
  int k = fuse__onnx_find(ld, name);
  fuse__oval *o;
  fuse_value v;
  if (k < 0 || ld->vals[k].kind == FUSE__OV_NONE)
    return fuse__onnx_failf(ld, FUSE_ERROR_PARSE,
                            "input '%s' is not produced by an earlier node, an initializer or a "
                            "graph input", fuse__onnx_cstr(ld, name)),
           FUSE_NONE;
  o = &ld->vals[k];
  if (o->kind == FUSE__OV_VALUE) return o->v;
  if (o->kind == FUSE__OV_TENSOR) {
    fuse__otensor t = o->t;
    if ((v = fuse__onnx_constant_of(ld, &t)) == FUSE_NONE) return FUSE_NONE;
  } else {
    fuse__known kn = o->k;
    if (kn.count == 0)
      return fuse__onnx_failf(ld, FUSE_ERROR_UNSUPPORTED,
                              "input '%s' is an empty tensor of shape %S (computed at load time; "
                              "zero-sized tensors are not supported as data)",
                              fuse__onnx_cstr(ld, name), kn.rank, kn.dims),
             FUSE_NONE;
    if (kn.dtype != FUSE__DT_FLOAT)
      return fuse__onnx_failf(ld, FUSE_ERROR_UNSUPPORTED,
                              "input '%s' (%s, shape %S) is computed at load time and used as "
                              "float32 data (fuse.h computes in float32; integer tensors serve "
                              "only as shapes, axes and indices, and as the quantized operands "
                              "of the quantization ops)",
                              fuse__onnx_cstr(ld, name), fuse__dt_name(kn.dtype), kn.rank, kn.dims),
             FUSE_NONE;
    v = fuse_constant(ld->g, NULL, kn.rank, kn.dims, kn.f);
    if (v == FUSE_NONE) return FUSE_NONE;
  }
  return fuse__onnx_bind_constant(ld, name, v);
}

/* Element i of a typed constant's data into its type from an int64 (in range: checked by
   the caller's type). */
static void fuse__typed_put(void *data, int type, int64_t i, int64_t v) {
  if (type == FUSE_UINT8) ((uint8_t *)data)[i] = (uint8_t)v;
  else if (type == FUSE_INT8) ((int8_t *)data)[i] = (int8_t)v;
  else ((int32_t *)data)[i] = (int32_t)v;
}

/* A uint8 / int8 / int32 tensor of the file (an initializer or a Constant's value) as a typed
   constant: raw_data copied as it is (int32 from little-endian bytes), other encodings
   through int64. */
static fuse_value fuse__onnx_typed_constant_of(fuse__onnx *ld, const fuse__otensor *t, int type) {
  fuse_graph *g = ld->g;
  int64_t count, i, got;
  fuse__slice raw;
  fuse_value v;
  int64_t *wide;
  char nm[200];
  if (!fuse__onnx_check_tensor(ld, t, &count)) return FUSE_NONE;
  fuse__copy_slice(nm, sizeof nm, t->name);
  v = fuse_typed_constant(g, NULL, (fuse_type)type, t->rank, t->dims, NULL);
  if (v == FUSE_NONE) return FUSE_NONE;
  if (fuse__onnx_raw_only(t, count, &raw)) {
    if (type != FUSE_INT32) memcpy(g->nodes[v].data, raw.p, (size_t)count);
    else
      for (i = 0; i < count; i++)
        ((int32_t *)g->nodes[v].data)[i] = (int32_t)fuse__le32(raw.p + 4 * i);
    return v;
  }
  got = t->external ? count : fuse__onnx_tensor_values(t, NULL, NULL, 0);
  if (got != count)
    return fuse__onnx_failf(ld, FUSE_ERROR_PARSE, "tensor '%s': its data %s", nm,
                            got < 0 ? "is malformed" : "does not match its dimensions"),
           FUSE_NONE;
  wide = (int64_t *)fuse__alloc(&g->alloc, (size_t)count * sizeof(int64_t), 16);
  if (!wide) return fuse__onnx_fail(ld, FUSE_ERROR_OUT_OF_MEMORY, "out of memory"), FUSE_NONE;
  if (t->external ? !fuse__onnx_external_read(ld, t, count, NULL, wide)
                  : fuse__onnx_tensor_values(t, NULL, wide, count) != count) {
    fuse__free(&g->alloc, wide);
    return FUSE_NONE;
  }
  for (i = 0; i < count; i++) fuse__typed_put(g->nodes[v].data, type, i, wide[i]);
  fuse__free(&g->alloc, wide);
  return v;
}

/* The graph value for an ONNX name whatever its element type (the operands of the
   quantization ops): a float32 one as fuse__onnx_value gives it; a uint8 / int8 / int32
   initializer, Constant or tensor folded at load made a typed constant on first use (integer
   tensors of other ops stay shape data: fuse__onnx_ints reads them). `what` names the
   operand in messages ("x_zero_point"). */
static fuse_value fuse__onnx_typed_value(fuse__onnx *ld, fuse__slice name, const char *what) {
  int k = fuse__onnx_find(ld, name), type, dtype, rank;
  fuse__known kn;
  fuse_value v;
  int64_t dims[FUSE_MAX_RANK], i;
  if (k < 0 || ld->vals[k].kind == FUSE__OV_NONE || ld->vals[k].kind == FUSE__OV_VALUE)
    return fuse__onnx_value(ld, name);
  if (ld->vals[k].kind == FUSE__OV_TENSOR) {
    dtype = ld->vals[k].t.dtype, rank = ld->vals[k].t.rank;
    memcpy(dims, ld->vals[k].t.dims, sizeof dims);
  } else {
    dtype = ld->vals[k].k.dtype, rank = ld->vals[k].k.rank;
    memcpy(dims, ld->vals[k].k.dims, sizeof dims);
  }
  if (fuse__dt_is_float(dtype)) return fuse__onnx_value(ld, name);
  type = fuse__dt_fuse_type(dtype);
  if (type < 0)
    return fuse__onnx_failf(ld, FUSE_ERROR_UNSUPPORTED,
                            "%s '%s' is %s (shape %S); the quantization ops take uint8, int8 or "
                            "int32 tensors", what, fuse__onnx_cstr(ld, name), fuse__dt_name(dtype),
                            rank, dims),
           FUSE_NONE;
  if (ld->vals[k].kind == FUSE__OV_TENSOR) {
    fuse__otensor t = ld->vals[k].t;
    v = fuse__onnx_typed_constant_of(ld, &t, type);
  } else {
    kn = ld->vals[k].k;
    if (kn.count == 0)
      return fuse__onnx_failf(ld, FUSE_ERROR_UNSUPPORTED,
                              "%s '%s' is an empty tensor of shape %S (zero-sized tensors are "
                              "not supported as data)", what, fuse__onnx_cstr(ld, name), kn.rank,
                              kn.dims),
             FUSE_NONE;
    v = fuse_typed_constant(ld->g, NULL, (fuse_type)type, kn.rank, kn.dims, NULL);
    if (v != FUSE_NONE)
      for (i = 0; i < kn.count; i++) fuse__typed_put(ld->g->nodes[v].data, type, i, kn.i[i]);
  }
  return v == FUSE_NONE ? FUSE_NONE : fuse__onnx_bind_constant(ld, name, v);
}

/* An integer tensor known at load of at most `max` values and rank <= 1, e.g. a Reshape
   target; 0 if `name` is not one. */
static int fuse__onnx_ints(fuse__onnx *ld, fuse__slice name, int64_t *out, int max, int *count) {
  fuse__known k;
  if (!fuse__onnx_known_of(ld, name, &k) || k.dtype == FUSE__DT_FLOAT || k.rank > 1 ||
      k.count > max)
    return 0;
  memcpy(out, k.i, (size_t)k.count * sizeof(int64_t));
  *count = (int)k.count;
  return 1;
}

/* A float tensor known at load of at most `max` values and rank <= 1 (Resize's scales); 0 if
   `name` is not one. */
static int fuse__onnx_floats(fuse__onnx *ld, fuse__slice name, float *out, int max, int *count) {
  fuse__known k;
  if (!fuse__onnx_known_of(ld, name, &k) || k.dtype != FUSE__DT_FLOAT || k.rank > 1 ||
      k.count > max)
    return 0;
  memcpy(out, k.f, (size_t)k.count * sizeof(float));
  *count = (int)k.count;
  return 1;
}

/* A scalar float constant (one element): an initializer, a Constant, a folded value or a
   one-element constant of the graph. */
static int fuse__onnx_scalar(fuse__onnx *ld, fuse__slice name, float *out) {
  int idx = fuse__onnx_find(ld, name);
  fuse__known k;
  if (idx < 0) return 0;
  if (ld->vals[idx].kind == FUSE__OV_VALUE) {
    const fuse__node *n = &ld->g->nodes[ld->vals[idx].v];
    if (n->op != FUSE__OP_CONST || fuse__numel(n->rank, n->shape) != 1) return 0;
    *out = fuse__const_at(n, 0);
    return 1;
  }
  if (ld->vals[idx].kind == FUSE__OV_TENSOR &&
      (!fuse__dt_is_float(ld->vals[idx].t.dtype) || ld->vals[idx].t.external ||
       fuse__numel(ld->vals[idx].t.rank, ld->vals[idx].t.dims) != 1))
    return 0;
  if (!fuse__onnx_known_of(ld, name, &k) || k.dtype != FUSE__DT_FLOAT || k.count != 1) return 0;
  *out = k.f[0];
  return 1;
}

/* An integer (int64, int32 or bool) tensor known at load time: its rank, dims and values as
   int64 (loader-owned, valid while the loader runs), or 0 when `name` is not one. */
static int fuse__onnx_int_tensor(fuse__onnx *ld, fuse__slice name, int *rank, int64_t *dims,
                                 const int64_t **values) {
  fuse__known k;
  if (!fuse__onnx_known_of(ld, name, &k) || k.dtype == FUSE__DT_FLOAT) return 0;
  *rank = k.rank;
  memcpy(dims, k.dims, sizeof k.dims);
  *values = k.i;
  return 1;
}

/* The graph value of an operand that may be an integer or bool tensor known at load (Pow's
   exponent 2 as int64, Where's condition): a float graph value as it is, such a tensor made a
   float constant of its values (as_mask: of 0 and 1). */
static fuse_value fuse__onnx_float_operand(fuse__onnx *ld, fuse__slice name, int as_mask) {
  fuse__known k;
  int64_t i;
  fuse_value c;
  float *f;
  if (!fuse__onnx_known_of(ld, name, &k) || k.dtype == FUSE__DT_FLOAT)
    return ld->g->status == FUSE_OK ? fuse__onnx_value(ld, name) : FUSE_NONE;
  c = fuse__constant_uninit(ld->g, k.rank, k.dims);
  if (c == FUSE_NONE) return FUSE_NONE;
  f = ld->g->nodes[c].data;
  for (i = 0; i < k.count; i++) f[i] = as_mask ? (float)(k.i[i] != 0) : (float)k.i[i];
  return c;
}

/* A Where condition: a float graph value, or a known bool / integer tensor as 0 and 1. */
static fuse_value fuse__onnx_mask(fuse__onnx *ld, fuse__slice name) {
  return fuse__onnx_float_operand(ld, name, 1);
}
