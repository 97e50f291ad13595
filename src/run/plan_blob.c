/* ------------------------------------------------------------- plan blobs -- */
/* fuse_plan_save and fuse_plan_load: a compiled plan as bytes, loaded without the graph, the
   passes or the compiler (the only way a FUSE_RUNTIME_ONLY build gets a plan).

   The blob, in the byte order of the machine that wrote it (a loader of the other order
   refuses it):
     header, 64 bytes: "FUSEPLAN", u32 format version, u32 0x01020304 (byte order), u32 ISA,
       u32 word size of the writer, u64 structure bytes, u64 weights offset (a multiple of 64),
       u64 weights bytes, u32 structure checksum, u32 weights checksum, 8 bytes of zeros;
     the structure, from byte 64: the plan's sizes, its tensors, operands and steps, field by
       field in fixed-width words (so 32-bit targets read what 64-bit hosts wrote, whatever
       their structs' padding and enum sizes), then its description;
     zeros to the weights offset (counted in the structure's bytes), then the weights: the constants the steps read, then each
       step's packed weights, every block 64-byte aligned.
   The structure checksum covers the header (but for itself) and the structure,
   and is verified at every load; the weights' only when the caller asks, so loading in
   place reads per step, not per weight. Every count, index, offset and length is checked
   against the blob and the plan's own regions before anything is allocated or used; a blob
   whose weights alone are damaged (and not verified) runs with wrong numbers but reads
   nothing outside the blob. The checksum finds damage, not forgery: a blob made by hand
   with matching checksums is checked for its bounds, not for every kernel's invariants. */

#define FUSE__BLOB_VERSION 2u /* 2: tensors carry their element type */
#define FUSE__BLOB_HEADER 64
#define FUSE__BLOB_ORDER 0x01020304u
#define FUSE__BLOB_ATTR_WORDS ((int)(sizeof(fuse__attrs) / 4))
typedef char fuse__attrs_are_words[sizeof(fuse__attrs) % 4 == 0 ? 1 : -1];

/* The checksum: four lanes of murmur3's 32-bit block step over 32-bit words (each word
   multiplied, rotated, multiplied into its lane, which is rotated and stepped again: a bit
   anywhere in a word reaches every bit of the lane, which a plain multiply-xor, carrying only
   upward, does not), folded the same way with the length, finished with murmur3's mixer;
   streams over pieces of any length. */
typedef struct fuse__sum {
  uint32_t h[4];
  uint64_t n;
  unsigned char tail[16];
  int t;
} fuse__sum;

static uint32_t fuse__rotl32(uint32_t x, int r) { return (x << r) | (x >> (32 - r)); }
static uint32_t fuse__sum_step(uint32_t h, uint32_t k) {
  k *= 0xcc9e2d51u, k = fuse__rotl32(k, 15), k *= 0x1b873593u;
  h ^= k, h = fuse__rotl32(h, 13);
  return h * 5 + 0xe6546b64u;
}

static void fuse__sum_start(fuse__sum *s) {
  memset(s, 0, sizeof *s);
  s->h[0] = 0x9747b28cu, s->h[1] = 0x9e3779b9u, s->h[2] = 0x85ebca6bu, s->h[3] = 0xc2b2ae35u;
}

static void fuse__sum_block(fuse__sum *s, const unsigned char *b) {
  uint32_t w[4];
  int k;
  memcpy(w, b, 16);
  for (k = 0; k < 4; k++) s->h[k] = fuse__sum_step(s->h[k], w[k]);
}

static void fuse__sum_add(fuse__sum *s, const void *data, size_t len) {
  const unsigned char *b = (const unsigned char *)data;
  s->n += len;
  while (len && s->t) { /* fill a started block first */
    s->tail[s->t++] = *b++, len--;
    if (s->t == 16) fuse__sum_block(s, s->tail), s->t = 0;
  }
  for (; len >= 16; b += 16, len -= 16) fuse__sum_block(s, b);
  while (len) s->tail[s->t++] = *b++, len--;
}

static uint32_t fuse__sum_end(fuse__sum *s) {
  uint32_t h = fuse__sum_step((uint32_t)s->n, (uint32_t)(s->n >> 32));
  int k;
  if (s->t) {
    memset(s->tail + s->t, 0, (size_t)(16 - s->t));
    fuse__sum_block(s, s->tail);
  }
  for (k = 0; k < 4; k++) h = fuse__sum_step(h, s->h[k]);
  h ^= h >> 16, h *= 0x85ebca6bu, h ^= h >> 13, h *= 0xc2b2ae35u, h ^= h >> 16;
  return h;
}

/* The structure's checksum: over the header but for itself (bytes 48..51; the weights'
   checksum at 52 is covered), then the structure. */
static uint32_t fuse__blob_struct_sum(const unsigned char *header, const unsigned char *structure,
                                      size_t bytes) {
  fuse__sum s;
  fuse__sum_start(&s);
  fuse__sum_add(&s, header, 48);
  fuse__sum_add(&s, header + 52, 12);
  fuse__sum_add(&s, structure, bytes);
  return fuse__sum_end(&s);
}

/* The attributes a step keeps outside the union's raw words: its op's scalar attributes
   ('i', 'E', 'f'), which sit at different offsets where enums are shorter (resize's, on
   bare-metal ARM). The raw words carry the rest: ints, floats and int64_t arrays that start
   their members, at the same offsets on every ABI the library builds for. */
#define FUSE__AT_ATTRS(spec) ((size_t)(spec)->at - offsetof(fuse__node, a))
static int fuse__blob_attr_scalar(const fuse__attr_spec *spec) {
  return (spec->store == 'i' || spec->store == 'E' || spec->store == 'f') &&
         spec->at >= (int)offsetof(fuse__node, a) &&
         FUSE__AT_ATTRS(spec) + sizeof(int) <= sizeof(fuse__attrs);
}

/* ------------------------------------------------------------------ writing -- */

typedef struct fuse__bytes {
  const fuse_allocator *a;
  unsigned char *buf;
  size_t len, cap;
  int failed;
} fuse__bytes;

static void fuse__bytes_put(fuse__bytes *b, const void *data, size_t n) {
  if (b->failed) return;
  if (b->len + n > b->cap) {
    size_t cap = b->cap ? 2 * b->cap : 4096;
    unsigned char *grown;
    while (cap < b->len + n) cap *= 2;
    grown = (unsigned char *)fuse__alloc(b->a, cap, 16);
    if (!grown) {
      b->failed = 1;
      return;
    }
    if (b->len) memcpy(grown, b->buf, b->len);
    fuse__free(b->a, b->buf);
    b->buf = grown, b->cap = cap;
  }
  memcpy(b->buf + b->len, data, n);
  b->len += n;
}
static void fuse__put_u32(fuse__bytes *b, uint32_t v) { fuse__bytes_put(b, &v, 4); }
static void fuse__put_i32(fuse__bytes *b, int v) { fuse__put_u32(b, (uint32_t)v); }
static void fuse__put_u64(fuse__bytes *b, uint64_t v) { fuse__bytes_put(b, &v, 8); }
static void fuse__put_f32(fuse__bytes *b, float v) { fuse__bytes_put(b, &v, 4); }
static void fuse__put_text(fuse__bytes *b, const char *s) {
  uint32_t n = s ? (uint32_t)strlen(s) : 0;
  fuse__put_u32(b, n);
  if (n) fuse__bytes_put(b, s, n);
}

static void fuse__put_post(fuse__bytes *b, const fuse_post_op *q) {
  fuse__put_i32(b, (int)q->kind);
  fuse__put_f32(b, q->lo), fuse__put_f32(b, q->hi);
  fuse__put_i32(b, q->operand);
  fuse__put_f32(b, q->alpha), fuse__put_f32(b, q->beta);
}

/* The GEMM kernels' micro-kernel by what it is (ISA, MR, NR), not by its row in this
   build's table; zeros for the other kernels. */
static int fuse__blob_gemm(const fuse__step *s) {
  return s->kernel == FUSE__KERNEL_IGEMM || s->kernel == FUSE__KERNEL_NCHW_GEMM;
}
static void fuse__put_igemm(fuse__bytes *b, const fuse__step *s, int kind) {
  const fuse__igemm_kind *k = &fuse__igemm_kinds[kind];
  int gemm = fuse__blob_gemm(s);
  fuse__put_i32(b, gemm ? (int)k->isa : 0);
  fuse__put_i32(b, gemm ? k->mr : 0), fuse__put_i32(b, gemm ? k->nr : 0);
}

static void fuse__put_step(fuse__bytes *b, const fuse__step *s, const int *operands,
                           uint64_t packed_at) {
  const fuse__attr_spec *spec;
  uint32_t words[sizeof(fuse__attrs) / 4];
  int k;
  fuse__put_i32(b, s->op), fuse__put_i32(b, s->out), fuse__put_i32(b, s->num_in);
  for (k = 0; k < s->num_in; k++) fuse__put_i32(b, operands[s->in_first + k]);
  memcpy(words, &s->a, sizeof words);
  for (k = 0; k < FUSE__BLOB_ATTR_WORDS; k++) fuse__put_u32(b, words[k]);
  for (spec = fuse__ops[s->op].attrs; spec->name; spec++)
    if (fuse__blob_attr_scalar(spec)) {
      const char *at = (const char *)&s->a + FUSE__AT_ATTRS(spec);
      int v = 0;
      if (spec->store == 'E') {
        fuse_resize_mode e;
        memcpy(&e, at, sizeof e);
        v = (int)e;
      } else {
        memcpy(&v, at, 4); /* an int or a float's bits */
      }
      fuse__put_i32(b, v);
    }
  fuse__put_i32(b, s->bias);
  fuse__put_i32(b, s->num_post);
  for (k = 0; k < s->num_post; k++) fuse__put_post(b, &s->post[k]);
  fuse__put_i32(b, s->num_chain);
  for (k = 0; k < s->num_chain; k++) {
    const fuse__chain_op *c = &s->chain[k];
    fuse__put_i32(b, c->kind), fuse__put_i32(b, c->operand), fuse__put_i32(b, c->swap);
    fuse__put_f32(b, c->imm);
    fuse__put_post(b, &c->post);
    fuse__put_i32(b, s->chain_ops[k]);
  }
  fuse__put_i32(b, s->kernel);
  fuse__put_u64(b, packed_at), fuse__put_u64(b, (uint64_t)s->packed_floats);
  fuse__put_igemm(b, s, s->igemm), fuse__put_igemm(b, s, s->igemm_last);
  fuse__put_i32(b, s->mr), fuse__put_i32(b, s->nr), fuse__put_i32(b, s->nr_last);
  fuse__put_i32(b, s->rowmode), fuse__put_i32(b, s->pointwise), fuse__put_i32(b, s->cblock);
  fuse__put_i32(b, s->band), fuse__put_i32(b, s->winograd), fuse__put_i32(b, s->wino_block);
  fuse__put_i32(b, s->wino_shared), fuse__put_i32(b, s->wino_merge), fuse__put_i32(b, s->gate);
  fuse__put_i32(b, s->shuffle), fuse__put_u64(b, (uint64_t)s->shuffle_from);
  fuse__put_text(b, s->note);
}

static size_t fuse__blob_align(size_t n) { return (n + 63) & ~(size_t)63; }

/* The weights: the constants, then each step's packed weights, each block 64-aligned; `at`
   receives each step's offset (NULL: just the size). */
static size_t fuse__blob_weights_layout(const fuse_plan *p, uint64_t *at) {
  size_t end = fuse__blob_align(p->const_bytes);
  int i;
  for (i = 0; i < p->num_steps; i++) {
    if (at) at[i] = p->steps[i].packed ? (uint64_t)end : 0;
    if (p->steps[i].packed) end = fuse__blob_align(end + p->steps[i].packed_floats * 4);
  }
  return end;
}

/* Passes the weights, zero-padded as laid out, to `sink` (a checksum, or the writer). */
static void fuse__blob_weights_walk(const fuse_plan *p, void (*sink)(void *, const void *, size_t),
                                    void *user) {
  static const unsigned char zeros[64] = {0};
  size_t end = p->const_bytes;
  int i;
  if (p->const_bytes) sink(user, p->consts, p->const_bytes);
  for (i = 0; i <= p->num_steps; i++) {
    const fuse__step *s = i < p->num_steps ? &p->steps[i] : NULL;
    if (s && !s->packed) continue;
    if (fuse__blob_align(end) > end) sink(user, zeros, fuse__blob_align(end) - end);
    end = fuse__blob_align(end);
    if (!s) break;
    sink(user, s->packed, s->packed_floats * 4);
    end += s->packed_floats * 4;
  }
}
static void fuse__blob_sum_sink(void *user, const void *data, size_t n) {
  fuse__sum_add((fuse__sum *)user, data, n);
}
typedef struct fuse__blob_writer {
  fuse_write_fn write;
  void *user;
} fuse__blob_writer;
static void fuse__blob_write_sink(void *user, const void *data, size_t n) {
  const fuse__blob_writer *w = (const fuse__blob_writer *)user;
  const char *c = (const char *)data;
  while (n) { /* fuse_write_fn takes text: pieces of at most 1 MB */
    size_t piece = n < ((size_t)1 << 20) ? n : ((size_t)1 << 20);
    w->write(w->user, c, piece);
    c += piece, n -= piece;
  }
}

FUSE_API fuse_result fuse_plan_save(const fuse_plan *p, fuse_write_fn write, void *user) {
  static const unsigned char zeros[64] = {0};
  fuse__bytes b;
  fuse__sum sum;
  fuse__blob_writer w;
  unsigned char header[FUSE__BLOB_HEADER];
  uint64_t *packed_at, u;
  uint32_t v;
  size_t weights_bytes, weights_at;
  int i, num_operands = 0;
  if (!p || !write) return FUSE_ERROR_INVALID_ARGUMENT;
  for (i = 0; i < p->num_steps; i++) { /* each step's operands, packed one after another */
    if (p->steps[i].kernel == FUSE__KERNEL_BACKEND) return FUSE_ERROR_UNSUPPORTED;
    num_operands += p->steps[i].num_in;
  }
  memset(&b, 0, sizeof b);
  b.a = &p->alloc;
  packed_at = (uint64_t *)fuse__alloc(&p->alloc, ((size_t)p->num_steps + 1) * sizeof *packed_at, 16);
  if (!packed_at) return FUSE_ERROR_OUT_OF_MEMORY;
  weights_bytes = fuse__blob_weights_layout(p, packed_at);
  /* the structure */
  fuse__put_i32(&b, p->num_tensors), fuse__put_i32(&b, p->num_steps);
  fuse__put_i32(&b, p->num_inputs), fuse__put_i32(&b, p->num_outputs);
  fuse__put_i32(&b, num_operands), fuse__put_i32(&b, p->chunks);
  fuse__put_i32(&b, p->no_winograd), fuse__put_i32(&b, FUSE__BLOB_ATTR_WORDS);
  fuse__put_u64(&b, p->tensors_size), fuse__put_u64(&b, p->zeros_floats);
  fuse__put_u64(&b, p->scratch_slot), fuse__put_u64(&b, p->gate_bytes);
  fuse__put_u64(&b, p->const_bytes), fuse__put_u64(&b, p->weights_size);
  for (i = 0; i < p->num_tensors; i++) {
    const fuse__tensor *t = &p->tensors[i];
    int d;
    fuse__put_i32(&b, t->kind), fuse__put_i32(&b, t->index), fuse__put_u64(&b, t->offset);
    fuse__put_i32(&b, t->rank);
    for (d = 0; d < t->rank; d++) fuse__put_u64(&b, (uint64_t)t->shape[d]);
    fuse__put_i32(&b, t->nhwc), fuse__put_i32(&b, t->value), fuse__put_i32(&b, t->type);
    fuse__put_u64(&b, (uint64_t)t->stride), fuse__put_u64(&b, t->view_at);
  }
  for (i = 0; i < p->num_steps; i++) fuse__put_step(&b, &p->steps[i], p->operands, packed_at[i]);
  fuse__put_text(&b, p->description);
  fuse__free(&p->alloc, packed_at);
  if (b.failed) {
    fuse__free(&p->alloc, b.buf);
    return FUSE_ERROR_OUT_OF_MEMORY;
  }
  /* zeros to the weights, in the structure (so its checksum covers every byte before them) */
  weights_at = fuse__blob_align(FUSE__BLOB_HEADER + b.len);
  if (weights_at > FUSE__BLOB_HEADER + b.len)
    fuse__bytes_put(&b, zeros, weights_at - FUSE__BLOB_HEADER - b.len);
  if (b.failed) {
    fuse__free(&p->alloc, b.buf);
    return FUSE_ERROR_OUT_OF_MEMORY;
  }
  /* the header */
  memset(header, 0, sizeof header);
  memcpy(header, "FUSEPLAN", 8);
  v = FUSE__BLOB_VERSION, memcpy(header + 8, &v, 4);
  v = FUSE__BLOB_ORDER, memcpy(header + 12, &v, 4);
  v = (uint32_t)p->isa, memcpy(header + 16, &v, 4);
  v = (uint32_t)sizeof(void *), memcpy(header + 20, &v, 4);
  u = b.len, memcpy(header + 24, &u, 8);
  u = weights_at, memcpy(header + 32, &u, 8);
  u = weights_bytes, memcpy(header + 40, &u, 8);
  fuse__sum_start(&sum); /* the weights' first: the structure's covers it */
  fuse__blob_weights_walk(p, fuse__blob_sum_sink, &sum);
  v = fuse__sum_end(&sum), memcpy(header + 52, &v, 4);
  v = fuse__blob_struct_sum(header, b.buf, b.len), memcpy(header + 48, &v, 4);
  /* out: header, structure, zeros to the weights, weights */
  w.write = write, w.user = user;
  fuse__blob_write_sink(&w, header, sizeof header);
  fuse__blob_write_sink(&w, b.buf, b.len);
  fuse__blob_weights_walk(p, fuse__blob_write_sink, &w);
  fuse__free(&p->alloc, b.buf);
  return FUSE_OK;
}

/* ------------------------------------------------------------------ loading -- */

typedef struct fuse__blob_reader {
  const unsigned char *at, *end;
  int failed;
} fuse__blob_reader;

static uint32_t fuse__get_u32(fuse__blob_reader *r) {
  uint32_t v = 0;
  if (r->end - r->at < 4) r->failed = 1, r->at = r->end;
  else memcpy(&v, r->at, 4), r->at += 4;
  return v;
}
static int fuse__get_i32(fuse__blob_reader *r) { return (int)fuse__get_u32(r); }
static uint64_t fuse__get_u64(fuse__blob_reader *r) {
  uint64_t v = 0;
  if (r->end - r->at < 8) r->failed = 1, r->at = r->end;
  else memcpy(&v, r->at, 8), r->at += 8;
  return v;
}
/* A size, an offset: one this build's size_t holds with room to add two (a 32-bit target
   reading a 64-bit host's blob); else the structure is damaged. */
static size_t fuse__get_size(fuse__blob_reader *r) {
  uint64_t v = fuse__get_u64(r);
  if (v > (uint64_t)((size_t)-1 >> 2)) r->failed = 1, v = 0;
  return (size_t)v;
}
static float fuse__get_f32(fuse__blob_reader *r) {
  uint32_t v = fuse__get_u32(r);
  float f;
  memcpy(&f, &v, 4);
  return f;
}
/* A text of the structure into the plan's allocation (NULL when empty). */
static char *fuse__get_text(fuse__blob_reader *r, const fuse_allocator *a, int *oom) {
  uint32_t n = fuse__get_u32(r);
  char *s;
  if (r->failed || n == 0) return NULL;
  if ((size_t)(r->end - r->at) < n) {
    r->failed = 1;
    return NULL;
  }
  s = (char *)fuse__alloc(a, (size_t)n + 1, 1);
  if (!s) {
    *oom = 1;
    return NULL;
  }
  memcpy(s, r->at, n);
  s[n] = 0;
  r->at += n;
  return s;
}

typedef struct fuse__loader {
  const fuse_plan_load_options *opt;
  fuse_plan *p;
  fuse__blob_reader r;
  int num_operands, operands_used, oom;
  int lacks; /* a step needs what this build left out (FUSE_NO_*) or this CPU lacks (VNNI,
                dotprod): FUSE_ERROR_UNSUPPORTED */
  size_t weights_bytes;
} fuse__loader;

static fuse_result fuse__blob_refuse(fuse__loader *l, fuse_result rc, const char *fmt, ...) {
  va_list ap;
  fuse__out o;
  if (l->opt && l->opt->error && l->opt->error_size) {
    o.buf = l->opt->error, o.len = 0, o.cap = l->opt->error_size;
    o.write = NULL, o.user = NULL;
    o.buf[0] = 0;
    fuse__puts(&o, "plan blob: ");
    va_start(ap, fmt);
    fuse__vformat(&o, NULL, fmt, ap);
    va_end(ap);
  }
  return rc;
}
/* without messages (FUSE_NO_MESSAGES), a refusal is its code: the call and its arguments, the
   format strings included, are dead code */
#define fuse__blob_refuse(l, rc, ...)                                                            \
  (FUSE__MESSAGES ? fuse__blob_refuse(l, rc, __VA_ARGS__) : fuse__unexplained(rc))

/* Bytes a tensor spans from its offset: its elements, or rows `stride` elements apart. */
static int fuse__blob_extent(const fuse__tensor *t, uint64_t *bytes) {
  uint64_t n = 1, rows, row, size = fuse__type_size(t->type);
  int d;
  for (d = 0; d < t->rank; d++) {
    if (t->shape[d] < 0 || (t->shape[d] && n > FUSE__MAX_BYTES / 4 / (uint64_t)t->shape[d]))
      return 0;
    n *= (uint64_t)t->shape[d];
  }
  if (t->stride <= 0 || n == 0) {
    *bytes = n * size;
    return t->stride >= 0;
  }
  if (t->rank < 2) return 0;
  row = t->nhwc ? (uint64_t)t->shape[1] : n / (uint64_t)t->shape[0];
  rows = n / row;
  if ((uint64_t)t->stride < row || (uint64_t)t->stride > FUSE__MAX_BYTES / 4 / rows) return 0;
  *bytes = ((rows - 1) * (uint64_t)t->stride + row) * size;
  return 1;
}

/* Whether tensor t lies inside its region: the workspace's tensors or the constants (the
   caller's inputs and outputs are sized by their shapes). */
static int fuse__blob_region_ok(const fuse_plan *p, const fuse__tensor *t) {
  uint64_t extent = 0, limit = t->kind == FUSE__LOC_WORK ? p->tensors_size : p->const_bytes;
  if (!fuse__blob_extent(t, &extent)) return 0;
  if (t->kind != FUSE__LOC_WORK && t->kind != FUSE__LOC_CONST) return 1;
  return extent <= limit && t->offset <= limit - extent &&
         !(t->offset & (fuse__type_size(t->type) - 1));
}

/* The tensors: kinds, positions and shapes here; their regions where a step reads or writes
   them (a constant whose weights a kernel packed has no bytes of its own). */
static int fuse__blob_tensors(fuse__loader *l) {
  fuse_plan *p = l->p;
  int i, d;
  for (i = 0; i < p->num_tensors; i++) {
    fuse__tensor *t = &p->tensors[i];
    uint64_t extent;
    t->kind = fuse__get_i32(&l->r), t->index = fuse__get_i32(&l->r);
    t->offset = fuse__get_size(&l->r);
    t->rank = fuse__get_i32(&l->r);
    if (l->r.failed || t->rank < 0 || t->rank > FUSE_MAX_RANK)
      return fuse__blob_refuse(l, FUSE_ERROR_PARSE, "tensor %d: rank %d", i, t->rank), 0;
    for (d = 0; d < t->rank; d++) t->shape[d] = (int64_t)fuse__get_u64(&l->r);
    t->nhwc = fuse__get_i32(&l->r) != 0, t->value = fuse__get_i32(&l->r);
    t->type = fuse__get_i32(&l->r);
    t->stride = (int64_t)fuse__get_u64(&l->r), t->view_at = fuse__get_size(&l->r);
    t->bytes = 0;
    if (l->r.failed) break;
    if ((t->kind == FUSE__LOC_INPUT && (t->index < 0 || t->index >= p->num_inputs)) ||
        (t->kind == FUSE__LOC_OUTPUT && (t->index < 0 || t->index >= p->num_outputs)) ||
        t->kind < FUSE__LOC_INPUT || t->kind > FUSE__LOC_CONST || t->type < FUSE_FLOAT32 ||
        t->type > FUSE_INT32 || !fuse__blob_extent(t, &extent))
      return fuse__blob_refuse(l, FUSE_ERROR_PARSE,
                               "tensor %d: kind %d, position %d, type %d, shape %S", i, t->kind,
                               t->index, t->type, t->rank, t->shape),
             0;
  }
  return !l->r.failed;
}

/* A GEMM micro-kernel's row in this build's table; 0 for none (the other kernels), -1 when
   this build has no such tile. */
static int fuse__get_igemm(fuse__blob_reader *r) {
  int isa = fuse__get_i32(r), mr = fuse__get_i32(r), nr = fuse__get_i32(r), i;
  if (!isa && !mr && !nr) return 0;
  for (i = 0; fuse__igemm_kinds[i].fn; i++)
    if ((int)fuse__igemm_kinds[i].isa == isa && fuse__igemm_kinds[i].mr == mr &&
        fuse__igemm_kinds[i].nr == nr)
      return i;
  return -1;
}

static int fuse__get_post(fuse__blob_reader *r, fuse_post_op *q, int num_in) {
  int kind = fuse__get_i32(r);
  q->lo = fuse__get_f32(r), q->hi = fuse__get_f32(r);
  q->operand = fuse__get_i32(r);
  q->alpha = fuse__get_f32(r), q->beta = fuse__get_f32(r);
  q->tensor = FUSE_NONE;
  if (kind < FUSE_POST_CLAMP || kind > FUSE_POST_PRELU) return 0;
  q->kind = (fuse_post_kind)kind;
  return q->operand >= -1 && q->operand < num_in &&
         (q->operand >= 0 || !(kind == FUSE_POST_ADD || kind == FUSE_POST_SCALE ||
                               kind == FUSE_POST_SHIFT || kind == FUSE_POST_PRELU));
}

/* A step's kernel: one of ours that this build has for the plan's ISA, its tile the one the
   kernel's table gives (the GEMMs' by identity, the few-channel and grouped kernels' by ISA). */
static int fuse__blob_kernel(const fuse_plan *p, const fuse__step *s) {
  const fuse__igemm_kind *k = &fuse__igemm_kinds[s->igemm], *l = &fuse__igemm_kinds[s->igemm_last];
  const fuse__few_channels_kind *f;
  const fuse__grouped_kind *g;
  if (s->kernel < FUSE__KERNEL_REF || s->kernel > FUSE__KERNEL_GROUPED ||
      s->kernel == FUSE__KERNEL_BACKEND || s->igemm < 0 || s->igemm_last < 0 || s->band < 0 ||
      s->cblock < 0 || s->wino_block < 0 || s->wino_merge < 0 || s->gate < 0 ||
      s->gate >= s->num_in || s->shuffle < 0 || (s->winograd && !fuse__wino_pick(p->isa, s->winograd)))
    return 0;
  if (s->kernel == FUSE__KERNEL_REF) return !s->winograd;
  if (p->isa == FUSE_ISA_AUTO) return 0; /* the reference kernels' plan has no other */
  switch (s->kernel) {
  case FUSE__KERNEL_IGEMM:
  case FUSE__KERNEL_NCHW_GEMM:
    return k->isa == p->isa && l->isa == p->isa && s->mr == k->mr && s->nr == k->nr &&
           s->nr_last == l->nr && l->mr == k->mr;
  case FUSE__KERNEL_FEW_CHANNELS:
    f = fuse__few_channels_pick(p->isa, 1);
    return f && s->mr == f->mr && fuse__few_channels_pick(p->isa, 2);
  case FUSE__KERNEL_GROUPED:
    g = fuse__grouped_pick(p->isa);
    return g && s->mr == 8 && s->nr == g->width;
  default: /* depthwise, on its input's layout */
    return fuse__dw_pick(p->isa, p->tensors[p->operands[s->in_first]].nhwc) != NULL;
  }
}

/* Whether this CPU runs a qconv2d / qmatmul of h->K outputs in the pairs or quads layout:
   its main tile and its last block's (1; -1 not). */
static int fuse__blob_qtiles_ok(const fuse_plan *p, const fuse__qhead *h) {
  int nb, mr, rest;
  if (!fuse__qtile_plan(p->isa, h->layout, p->vnni, h->K, &nb, &mr)) return -1;
  rest = (int)(h->K % (nb * FUSE__QNR));
  if (h->K > nb * FUSE__QNR && rest &&
      !fuse__qtile_get(p->isa, h->layout, p->vnni, (rest + FUSE__QNR - 1) / FUSE__QNR, mr))
    return -1;
  return 1;
}

/* Whether an integer step's packed header (fuse__qhead) agrees with its tensors and its
   packed bytes hold what the header says: what run/quant_run.c reads stays inside. -1: a
   VNNI layout on a CPU without it. */
static int fuse__blob_qint_ok(const fuse_plan *p, const fuse__step *s) {
  const fuse__qhead *h = (const fuse__qhead *)(const void *)s->packed;
  const fuse__tensor *tx, *ty;
  uint64_t need = sizeof *h, n;
  int G = s->a.conv.groups, k;
  if (s->op == FUSE__OP_QTO_NHWC || s->op == FUSE__OP_QTO_NCHW) { /* bytes of the same shape */
    const fuse__tensor *cx = &p->tensors[p->operands[s->in_first]], *cy = &p->tensors[s->out];
    return s->num_in == 1 && cx->rank == 4 && cy->rank == 4 && cx->type != FUSE_FLOAT32 &&
           cx->type != FUSE_INT32 && cy->type == cx->type &&
           memcmp(cx->shape, cy->shape, 4 * sizeof cx->shape[0]) == 0;
  }
  if (!s->packed || s->packed_floats * 4 < sizeof *h || s->num_in != (s->op == FUSE__OP_QADD ? 2 : 1))
    return 0;
  tx = &p->tensors[p->operands[s->in_first]], ty = &p->tensors[s->out];
  n = (uint64_t)fuse__numel(ty->rank, ty->shape);
  if ((tx->type != FUSE_UINT8 && tx->type != FUSE_INT8) ||
      (ty->type != FUSE_UINT8 && ty->type != FUSE_INT8) || h->lo > h->hi ||
      h->lo < (ty->type == FUSE_UINT8 ? 0 : -128) || h->hi > (ty->type == FUSE_UINT8 ? 255 : 127))
    return 0;
  if (FUSE__HAS_OP_QGLOBAL_AVG_POOL2D && s->op == FUSE__OP_QGLOBAL_AVG_POOL2D) { /* x [N, C, H, W]
      (NCHW or NHWC) -> y [N, C, 1, 1] of its type; nothing after the header */
    int32_t lo = tx->type == FUSE_INT8 ? -128 : 0, hi = lo + 255;
    return FUSE__HAS_KERNEL(QGLOBAL_AVG_POOL) && /* (refused before, saying so: plan/needs.c) */
           tx->rank == 4 && ty->rank == 4 && ty->type == tx->type && tx->shape[0] == ty->shape[0] &&
           tx->shape[1] == ty->shape[1] && ty->shape[2] == 1 && ty->shape[3] == 1 &&
           h->C == tx->shape[1] && h->x_zero >= lo && h->x_zero <= hi && h->y_zero >= lo &&
           h->y_zero <= hi && h->y_signed == (ty->type == FUSE_INT8) &&
           fuse__qgap_in_range(h->x_scale, h->y_scale, tx->shape[2] * tx->shape[3]);
  }
  switch (s->op) {
  case FUSE__OP_QCONV2D:
    if (tx->rank != 4 || ty->rank != 4 || tx->type != FUSE_UINT8 || tx->shape[0] != ty->shape[0] ||
        h->K != ty->shape[1] || h->C != tx->shape[1] || G < 1 || h->C % G || h->K % G ||
        h->KH < 1 || h->KW < 1 || h->KH > 4096 || h->KW > 4096 || h->x_zero < 0 ||
        h->x_zero > 255 || h->layout < FUSE__QL_DIRECT || h->layout > FUSE__QL_WINDOW ||
        (h->layout == FUSE__QL_PAIRS && G != 1) || (h->layout == FUSE__QL_QUADS && G != 1) ||
        (h->layout == FUSE__QL_SQUADS && G != 1) ||
#ifdef FUSE__SIMD /* (Winograd: x86 builds; elsewhere no tile takes it, below) */
        (h->layout == FUSE__QL_WINO && G != 1) || (h->layout == FUSE__QL_WINO3 && G != 1) ||
#endif
#ifdef FUSE__HAVE_QWINDOW
        (h->layout == FUSE__QL_WINDOW &&
         (G != 1 || !fuse__qconv_window(h->C, h->KH, h->KW, s->a.conv.dilation[1]))) ||
#endif
        (h->layout == FUSE__QL_DW && (!h->depthwise || G != h->C || G != h->K)))
      return 0;
    if (h->layout != FUSE__QL_DIRECT) { /* a kernel this CPU runs; the output's geometry, the
                                            scratch */
      const fuse_conv2d_attrs *a = &s->a.conv;
      int64_t Kp, taps = (int64_t)h->KH * h->KW, d;
      for (d = 0; d < 2; d++) {
        int64_t in = tx->shape[2 + d] + a->padding[d] + a->padding[2 + d];
        int64_t span = (int64_t)((d ? h->KW : h->KH) - 1) * a->dilation[d] + 1;
        if (a->strides[d] < 1 || a->dilation[d] < 1 || a->padding[d] < 0 || a->padding[2 + d] < 0 ||
            a->padding[d] > 4096 || a->padding[2 + d] > 4096 || a->strides[d] > 4096 ||
            a->dilation[d] > 4096 || in < span || ty->shape[2 + d] != (in - span) / a->strides[d] + 1)
          return 0;
      }
      if (h->layout == FUSE__QL_DW) {
        if (!fuse__qdw_pick(p->isa, p->vnni)) return -1;
      } else if (h->layout == FUSE__QL_WINO || h->layout == FUSE__QL_WINO3) { /* its geometry; AVX2's pairs tile (F(2x2)),
                                                   AVX-512 VNNI (F(3x3)) */
        fuse_conv2d_attrs b = *a;
        b.strides[0] = b.strides[1] = b.dilation[0] = b.dilation[1] = 1;
        b.padding[0] = b.padding[1] = b.padding[2] = b.padding[3] = 1;
        if (h->KH != 3 || h->KW != 3 || h->C > 1024 || memcmp(&b, a, sizeof b)) return 0;
        if (h->layout == FUSE__QL_WINO ? !fuse__qwino_fits(p->isa, p->vnni, h->C, h->K, 3, 3, a)
                                       : !fuse__qwino3_fits(p->isa, p->vnni, h->C, 3, 3, a))
          return -1;
      } else if (fuse__blob_qtiles_ok(p, h) < 0) {
        return -1;
      }
      need += (uint64_t)fuse__qconv_weight_bytes(h->layout, h->K, h->layout == FUSE__QL_DW ? 1 : h->C,
                                                 taps, &Kp) + (uint64_t)Kp * 8;
      if (fuse__qconv_scratch(h->layout, tx->shape[0], tx->shape[1], tx->shape[2], tx->shape[3],
                              a->padding[1] + a->padding[3], taps, ty->shape[2] * ty->shape[3], Kp) > p->scratch_slot)
        return 0;
      break;
    }
    need += (uint64_t)h->K * 8 + (uint64_t)h->K * (uint64_t)(h->C / G) * (uint64_t)h->KH * (uint64_t)h->KW;
    break;
  case FUSE__OP_QMATMUL: { /* x [..., C] -> y [..., K], as many rows; a 1x1 qconv2d's bytes */
    int64_t rows, Kp;
    if (!FUSE__HAS_KERNEL(QMATMUL)) return 0; /* (refused before, saying so: plan/needs.c) */
    if (tx->type != FUSE_UINT8 || tx->rank < 1 || ty->rank < 1 || tx->nhwc || ty->nhwc ||
        h->C < 1 || h->K < 1 ||
        tx->shape[tx->rank - 1] != h->C || ty->shape[ty->rank - 1] != h->K || h->KH != 1 ||
        h->KW != 1 || h->x_zero < 0 || h->x_zero > 255 || h->depthwise ||
        (h->layout != FUSE__QL_DIRECT && h->layout != FUSE__QL_PAIRS &&
         h->layout != FUSE__QL_QUADS && h->layout != FUSE__QL_SQUADS))
      return 0;
    rows = fuse__numel(tx->rank, tx->shape) / h->C;
    if ((uint64_t)rows * (uint64_t)h->K != n || rows * h->C != fuse__numel(tx->rank, tx->shape))
      return 0;
    need += (uint64_t)fuse__qconv_weight_bytes(h->layout, h->K, h->C, 1, &Kp) + (uint64_t)Kp * 8;
    if (h->layout != FUSE__QL_DIRECT) { /* a tile this CPU runs, the scratch */
      if (fuse__blob_qtiles_ok(p, h) < 0) return -1;
      if (fuse__qmatmul_scratch(h->layout, rows, h->C, Kp) > p->scratch_slot) return 0;
    }
    break;
  }
  case FUSE__OP_QADD: {
    const fuse__tensor *tb = &p->tensors[p->operands[s->in_first + 1]];
    if (h->num_post < 0 || h->num_post > 4 || h->K < 0 || h->K > 1 ||
        (tb->type != FUSE_UINT8 && tb->type != FUSE_INT8) ||
        (uint64_t)fuse__numel(tx->rank, tx->shape) != n || (uint64_t)fuse__numel(tb->rank, tb->shape) != n)
      return 0;
    need += (uint64_t)h->num_post * FUSE__QPOST_WORDS * 4 + (h->K ? 256u : 0u);
    for (k = 0; k < h->num_post && need <= (uint64_t)s->packed_floats * 4; k++) {
      int32_t kind = ((const int32_t *)(const void *)(h + 1))[k * FUSE__QPOST_WORDS];
      if (kind < FUSE_POST_CLAMP || kind > FUSE_POST_EXP || kind == FUSE_POST_ADD) return 0;
    }
    break;
  }
  case FUSE__OP_QMAX_POOL2D:
    if (tx->rank != 4 || ty->rank != 4 || tx->shape[0] != ty->shape[0] || tx->shape[1] != ty->shape[1])
      return 0;
    need += 256;
    break;
  default: /* qlut */
    if ((uint64_t)fuse__numel(tx->rank, tx->shape) != n) return 0;
    need += 256;
  }
  return need <= (uint64_t)s->packed_floats * 4;
}

/* One step, checked: its op, tensors, operands, post-ops and chain, its kernel and tile
   (looked up in this build's tables by what they are), its packed weights' place. */
static int fuse__blob_step(fuse__loader *l, int i, const unsigned char *weights) {
  fuse_plan *p = l->p;
  fuse__step *s = &p->steps[i];
  fuse__blob_reader *r = &l->r;
  const fuse__attr_spec *spec;
  uint32_t words[sizeof(fuse__attrs) / 4];
  uint64_t packed_at, packed_floats;
  int k, ok = 1, lack;
  s->op = fuse__get_i32(r), s->out = fuse__get_i32(r), s->num_in = fuse__get_i32(r);
  s->in_first = l->operands_used;
  if (r->failed || s->op <= FUSE__OP_CONST || s->op >= FUSE__OP_ROWS || s->num_in < 0 ||
      s->num_in > l->num_operands - l->operands_used)
    return fuse__blob_refuse(l, FUSE_ERROR_PARSE, "step %d: op %d with %d operands", i, s->op,
                             s->num_in),
           0;
  for (k = 0; k < s->num_in; k++) {
    int t = p->operands[s->in_first + k] = fuse__get_i32(r);
    if (t < 0 || t >= p->num_tensors)
      return fuse__blob_refuse(l, FUSE_ERROR_PARSE, "step %d (%s): operand %d names tensor %d of %d",
                               i, fuse__ops[s->op].name, k, t, p->num_tensors),
             0;
  }
  l->operands_used += s->num_in;
  for (k = 0; k < FUSE__BLOB_ATTR_WORDS; k++) words[k] = fuse__get_u32(r);
  memcpy(&s->a, words, sizeof words);
  for (spec = fuse__ops[s->op].attrs; spec->name; spec++)
    if (fuse__blob_attr_scalar(spec)) {
      char *at = (char *)&s->a + FUSE__AT_ATTRS(spec);
      int v = fuse__get_i32(r);
      if (spec->store == 'E') {
        fuse_resize_mode e = (fuse_resize_mode)v;
        memcpy(at, &e, sizeof e);
      } else {
        memcpy(at, &v, 4);
      }
    }
  s->bias = fuse__get_i32(r);
  s->num_post = fuse__get_i32(r);
  if (r->failed || s->out < 0 || s->out >= p->num_tensors ||
      s->num_in > FUSE_BACKEND_MAX_OPERANDS || s->num_in < fuse__ops[s->op].min_in || s->bias < -1 || s->bias >= s->num_in ||
      s->num_post < 0 || s->num_post > FUSE_MAX_POST_OPS)
    return fuse__blob_refuse(l, FUSE_ERROR_PARSE, "step %d (%s): operands", i,
                             fuse__ops[s->op].name),
           0;
  if ((p->tensors[s->out].kind != FUSE__LOC_WORK && p->tensors[s->out].kind != FUSE__LOC_OUTPUT) ||
      !fuse__blob_region_ok(p, &p->tensors[s->out]))
    return fuse__blob_refuse(l, FUSE_ERROR_PARSE,
                             "step %d (%s) writes an input, a constant or outside the workspace",
                             i, fuse__ops[s->op].name),
           0;
  for (k = 0; k < s->num_post; k++) ok &= fuse__get_post(r, &s->post[k], s->num_in);
  s->num_chain = fuse__get_i32(r);
  if (s->num_chain < 0 || s->num_chain > FUSE__CHAIN_LENGTH) ok = 0, s->num_chain = 0;
  for (k = 0; k < s->num_chain; k++) {
    fuse__chain_op *c = &s->chain[k];
    c->kind = fuse__get_i32(r), c->operand = fuse__get_i32(r), c->swap = fuse__get_i32(r);
    c->imm = fuse__get_f32(r);
    ok &= fuse__get_post(r, &c->post, s->num_in) || c->kind != FUSE__CHAIN_POST;
    s->chain_ops[k] = fuse__get_i32(r);
    ok &= c->kind >= FUSE__CHAIN_POST && c->kind <= FUSE__CHAIN_SHRINK &&
          c->operand >= FUSE__CHAIN_SELF && c->operand < s->num_in && s->chain_ops[k] >= 0 &&
          s->chain_ops[k] < FUSE__OP_ROWS;
  }
  s->kernel = fuse__get_i32(r);
  packed_at = fuse__get_u64(r), packed_floats = fuse__get_u64(r);
  s->igemm = fuse__get_igemm(r), s->igemm_last = fuse__get_igemm(r);
  s->mr = fuse__get_i32(r), s->nr = fuse__get_i32(r), s->nr_last = fuse__get_i32(r);
  s->rowmode = fuse__get_i32(r), s->pointwise = fuse__get_i32(r), s->cblock = fuse__get_i32(r);
  s->band = fuse__get_i32(r), s->winograd = fuse__get_i32(r), s->wino_block = fuse__get_i32(r);
  s->wino_shared = fuse__get_i32(r), s->wino_merge = fuse__get_i32(r), s->gate = fuse__get_i32(r);
  s->shuffle = fuse__get_i32(r), s->shuffle_from = (int64_t)fuse__get_u64(r);
  s->note = fuse__get_text(r, &p->alloc, &l->oom);
  if (r->failed || l->oom) return 0;
  if (!ok)
    return fuse__blob_refuse(l, FUSE_ERROR_PARSE, "step %d (%s): its epilogue or chain", i,
                             fuse__ops[s->op].name),
           0;
  for (k = 0; k < s->num_in; k++) { /* what it reads (a kernel reads packed weights instead) */
    const fuse__tensor *t = &p->tensors[p->operands[s->in_first + k]];
    if (!(k == 1 && s->kernel != FUSE__KERNEL_REF) && !fuse__blob_region_ok(p, t))
      return fuse__blob_refuse(l, FUSE_ERROR_PARSE,
                               "step %d (%s): operand %d (shape %S) lies outside its region", i,
                               fuse__ops[s->op].name, k, t->rank, t->shape),
             0;
  }
  if ((lack = fuse__step_lacks(p, s)) != 0) { /* a FUSE_NO_* define (config.h) left it out */
    l->lacks = 1;
    return fuse__blob_refuse(l, FUSE_ERROR_UNSUPPORTED, FUSE__LACKS_FORMAT, i,
                             fuse__ops[s->op].name, fuse__lack_kind(lack), fuse__lack_name(lack)),
           0;
  }
  if (!fuse__blob_kernel(p, s))
    return fuse__blob_refuse(l, FUSE_ERROR_PARSE,
                             "step %d (%s): kernel %d, tile %dx%d unknown to this build for %s",
                             i, fuse__ops[s->op].name, s->kernel, s->mr, s->nr,
                             fuse__isa_name(p->isa)),
           0;
  /* its packed weights: inside the weights, 64-aligned */
  if (packed_floats) {
    if ((packed_at & 63) || packed_at > l->weights_bytes ||
        packed_floats > (l->weights_bytes - packed_at) / 4)
      return fuse__blob_refuse(l, FUSE_ERROR_PARSE,
                               "step %d (%s): packed weights outside the blob's weights", i,
                               fuse__ops[s->op].name),
             0;
    s->packed = (float *)(uintptr_t)(weights + packed_at); /* read only */
    s->packed_floats = (size_t)packed_floats;
  }
  if (FUSE__HAS_RUN(FUSE__RUN_QINT) && fuse__ops[s->op].run == FUSE__RUN_QINT &&
      (ok = fuse__blob_qint_ok(p, s)) != 1) { /* (a build without the kind refused it above) */
    if (ok < 0) { /* this CPU lacks it: FUSE_ERROR_UNSUPPORTED, not a parse error */
      l->lacks = 1;
      return fuse__blob_refuse(l, FUSE_ERROR_UNSUPPORTED,
                               "step %d (%s) was packed for %s, which this CPU or build lacks", i,
                               fuse__ops[s->op].name,
                               ((const fuse__qhead *)(const void *)s->packed)->layout ==
                                       FUSE__QL_SQUADS
                                   ? "dotprod (sdot)"
                               : ((const fuse__qhead *)(const void *)s->packed)->layout ==
                                       FUSE__QL_WINO
                                   ? "AVX2's integer Winograd kernels"
                               : ((const fuse__qhead *)(const void *)s->packed)->layout ==
                                       FUSE__QL_WINO3
                                   ? "AVX-512 VNNI's integer Winograd F(3x3) kernels"
                                   : "VNNI (vpdpbusd)"),
             0;
    }
    return fuse__blob_refuse(l, FUSE_ERROR_PARSE,
                             "step %d (%s): its packed header does not fit its tensors", i,
                             fuse__ops[s->op].name),
           0;
  }
  if (FUSE__HAS_RUN(FUSE__RUN_QINT) && fuse__ops[s->op].run == FUSE__RUN_QINT &&
      (lack = fuse__step_lacks(p, s)) != 0) {
    l->lacks = 1; /* (a qadd's element-wise ops, read from its packed bytes checked above) */
    return fuse__blob_refuse(l, FUSE_ERROR_UNSUPPORTED, FUSE__LACKS_FORMAT, i,
                             fuse__ops[s->op].name, fuse__lack_kind(lack), fuse__lack_name(lack)),
           0;
  }
  return 1;
}

/* The workspace for this load's threads: the tensors, then the kernels' scratch, one slot
   per chunk, then the gated convs' block. A slot was sized for the saved chunk count; a
   Winograd step that shares its blocks among chunks needs more per slot with fewer chunks,
   at most the saved need times saved / new chunks. */
static void fuse__blob_workspace(fuse_plan *p, int saved_chunks) {
  p->workspace_size = p->tensors_size;
  if (p->scratch_slot) {
    int i, shared = 0;
    for (i = 0; i < p->num_steps; i++) shared |= p->steps[i].wino_shared;
    if (shared && p->chunks < saved_chunks)
      p->scratch_slot *= (size_t)((saved_chunks + p->chunks - 1) / p->chunks);
    p->scratch_offset = fuse__blob_align(p->workspace_size);
    p->workspace_size = p->scratch_offset + p->scratch_slot * (size_t)p->chunks;
  }
  if (p->gate_bytes) {
    p->gate_offset = fuse__blob_align(p->workspace_size);
    p->workspace_size = p->gate_offset + p->gate_bytes;
  }
}

/* The header's checks, in the order a user needs them said: not a blob, another format,
   another machine, then damage. */
static fuse_result fuse__blob_header(fuse__loader *l, const unsigned char *b, size_t size,
                                     uint64_t *struct_bytes, uint64_t *weights_at) {
  uint32_t version, order, isa, word, sum;
  if (size < FUSE__BLOB_HEADER || memcmp(b, "FUSEPLAN", 8) != 0)
    return fuse__blob_refuse(l, FUSE_ERROR_PARSE, "not a plan blob (%D bytes, no FUSEPLAN magic)",
                             (int64_t)size);
  memcpy(&version, b + 8, 4), memcpy(&order, b + 12, 4), memcpy(&isa, b + 16, 4);
  memcpy(&word, b + 20, 4), memcpy(struct_bytes, b + 24, 8), memcpy(weights_at, b + 32, 8);
  if (order != FUSE__BLOB_ORDER)
    return order == 0x04030201u
               ? fuse__blob_refuse(l, FUSE_ERROR_UNSUPPORTED,
                                   "written on a machine of the other byte order")
               : fuse__blob_refuse(l, FUSE_ERROR_PARSE, "damaged: byte-order mark %D",
                                   (int64_t)order);
  if (version != FUSE__BLOB_VERSION)
    return fuse__blob_refuse(l, FUSE_ERROR_UNSUPPORTED,
                             "format version %d; this build reads version %d", (int)version,
                             (int)FUSE__BLOB_VERSION);
  if (word < sizeof(void *))
    return fuse__blob_refuse(l, FUSE_ERROR_UNSUPPORTED,
                             "made on a %d-bit host for %d-bit pointers; this is a %d-bit build "
                             "(save the plan on a host of at least this word size)",
                             (int)word * 8, (int)word * 8, (int)sizeof(void *) * 8);
  if (isa > (uint32_t)FUSE_ISA_NEON)
    return fuse__blob_refuse(l, FUSE_ERROR_PARSE, "damaged: ISA %D", (int64_t)isa);
  if (!fuse__isa_runs_here((fuse_isa)isa))
    return fuse__blob_refuse(l, FUSE_ERROR_UNSUPPORTED,
                             "a plan for %s; this CPU and build run %s (and scalar)",
                             fuse__isa_name((fuse_isa)isa), fuse__isa_name(fuse_cpu_isa()));
  {
    uint64_t w8;
    memcpy(&w8, b + 40, 8);
    if (*struct_bytes > size - FUSE__BLOB_HEADER || (*weights_at & 63) ||
        *weights_at < FUSE__BLOB_HEADER + *struct_bytes || *weights_at > size ||
        w8 > size - *weights_at)
      return fuse__blob_refuse(l, FUSE_ERROR_PARSE,
                               "truncated or damaged: structure %D bytes, weights %D bytes at %D, "
                               "blob %D bytes",
                               (int64_t)*struct_bytes, (int64_t)w8, (int64_t)*weights_at,
                               (int64_t)size);
    l->weights_bytes = (size_t)w8;
  }
  memcpy(&sum, b + 48, 4);
  if (sum != fuse__blob_struct_sum(b, b + FUSE__BLOB_HEADER, (size_t)*struct_bytes))
    return fuse__blob_refuse(l, FUSE_ERROR_PARSE, "damaged: the structure's checksum differs");
  if (l->opt && l->opt->verify_weights) {
    fuse__sum s;
    fuse__sum_start(&s);
    fuse__sum_add(&s, b + *weights_at, l->weights_bytes);
    memcpy(&sum, b + 52, 4);
    if (sum != fuse__sum_end(&s))
      return fuse__blob_refuse(l, FUSE_ERROR_PARSE, "damaged: the weights' checksum differs");
  }
  l->p->isa = (fuse_isa)isa;
  l->p->vnni = fuse__cpu_vnni(); /* (read once: cpuid costs, more so in a VM) */
  return FUSE_OK;
}

FUSE_API fuse_result fuse_plan_load(const void *data, size_t size,
                                    const fuse_plan_load_options *opt, fuse_plan **out) {
  static const fuse_allocator fuse__default = {NULL, NULL, NULL};
  const unsigned char *b = (const unsigned char *)data, *weights;
  const fuse_allocator *a = opt && opt->alloc ? opt->alloc : &fuse__default;
  fuse__loader l;
  fuse_plan plan0, *p;
  fuse_result rc;
  uint64_t struct_bytes = 0, weights_at = 0;
  int i, saved_chunks, attr_words;
  if (opt && opt->error && opt->error_size) opt->error[0] = 0;
  if (out) *out = NULL;
  memset(&l, 0, sizeof l);
  l.opt = opt;
  if (!data || !out) return fuse__blob_refuse(&l, FUSE_ERROR_INVALID_ARGUMENT, "data or out is NULL");
  memset(&plan0, 0, sizeof plan0);
  l.p = &plan0;
  rc = fuse__blob_header(&l, b, size, &struct_bytes, &weights_at);
  if (rc != FUSE_OK) return rc;
  p = l.p = (fuse_plan *)fuse__alloc(a, sizeof *p, 16);
  if (!p) return fuse__blob_refuse(&l, FUSE_ERROR_OUT_OF_MEMORY, "out of memory");
  *p = plan0;
  p->alloc = *a;
  p->borrowed = 1;
  l.r.at = b + FUSE__BLOB_HEADER, l.r.end = l.r.at + struct_bytes;
  p->num_tensors = fuse__get_i32(&l.r), p->num_steps = fuse__get_i32(&l.r);
  p->num_inputs = fuse__get_i32(&l.r), p->num_outputs = fuse__get_i32(&l.r);
  l.num_operands = fuse__get_i32(&l.r), saved_chunks = fuse__get_i32(&l.r);
  p->no_winograd = fuse__get_i32(&l.r), attr_words = fuse__get_i32(&l.r);
  p->tensors_size = fuse__get_size(&l.r), p->zeros_floats = fuse__get_size(&l.r);
  p->scratch_slot = fuse__get_size(&l.r), p->gate_bytes = fuse__get_size(&l.r);
  p->const_bytes = fuse__get_size(&l.r), p->weights_size = fuse__get_size(&l.r);
  /* counts against the structure's bytes (a tensor takes 48 at least, a step 200, an operand
     4), sizes against what a 32-bit build can hold, before anything is allocated */
  rc = FUSE_ERROR_PARSE;
  if (l.r.failed || p->num_tensors < 0 || p->num_steps < 0 || p->num_inputs < 0 ||
      p->num_outputs < 0 || l.num_operands < 0 || saved_chunks < 1 ||
      (uint64_t)p->num_tensors > struct_bytes / 48 || (uint64_t)p->num_steps > struct_bytes / 200 ||
      (uint64_t)l.num_operands > struct_bytes / 4 || p->num_inputs > p->num_tensors ||
      p->num_outputs > p->num_tensors || p->zeros_floats > ((size_t)-1 >> 4) ||
      p->tensors_size > ((size_t)-1 >> 4) || p->scratch_slot > ((size_t)-1 >> 8) ||
      p->gate_bytes > ((size_t)-1 >> 4) || p->const_bytes > l.weights_bytes) {
    fuse__blob_refuse(&l, rc, "damaged counts: %d tensors, %d steps, %d operands in %D bytes",
                      p->num_tensors, p->num_steps, l.num_operands, (int64_t)struct_bytes);
    goto fail;
  }
  if (attr_words != FUSE__BLOB_ATTR_WORDS) {
    rc = fuse__blob_refuse(&l, FUSE_ERROR_UNSUPPORTED,
                           "its attributes take %d words, this build's %d (another version)",
                           attr_words, FUSE__BLOB_ATTR_WORDS);
    goto fail;
  }
  rc = FUSE_ERROR_OUT_OF_MEMORY;
  p->tensors = (fuse__tensor *)fuse__alloc(a, (size_t)p->num_tensors * sizeof *p->tensors + 1, 16);
  p->steps = (fuse__step *)fuse__alloc(a, (size_t)p->num_steps * sizeof *p->steps + 1, 16);
  p->operands = (int *)fuse__alloc(a, (size_t)l.num_operands * sizeof(int) + 1, 16);
  if (p->steps) memset(p->steps, 0, (size_t)p->num_steps * sizeof *p->steps); /* destroy reads them */
  if (!p->tensors || !p->steps || !p->operands) goto fail;
  rc = FUSE_ERROR_PARSE;
  if (!fuse__blob_tensors(&l)) goto fail;
  /* the weights: in place when aligned and allowed, else one copy the plan owns */
  weights = b + weights_at;
  if ((opt && opt->copy) || ((uintptr_t)weights & 63)) {
    rc = FUSE_ERROR_OUT_OF_MEMORY;
    p->weights_block = fuse__alloc(a, l.weights_bytes, FUSE__ALIGN);
    if (!p->weights_block) goto fail;
    if (l.weights_bytes) memcpy(p->weights_block, weights, l.weights_bytes);
    weights = (const unsigned char *)p->weights_block;
    rc = FUSE_ERROR_PARSE;
  }
  p->consts = (float *)(uintptr_t)weights; /* read only */
  for (i = 0; i < p->num_steps; i++)
    if (!fuse__blob_step(&l, i, weights)) {
      if (l.oom) rc = fuse__blob_refuse(&l, FUSE_ERROR_OUT_OF_MEMORY, "out of memory");
      else if (l.lacks) rc = FUSE_ERROR_UNSUPPORTED;
      else if (l.r.failed) fuse__blob_refuse(&l, rc, "step %d: the structure ends early", i);
      goto fail;
    }
  p->description = fuse__get_text(&l.r, a, &l.oom);
  if (l.r.failed || l.oom || l.operands_used != l.num_operands) {
    rc = l.oom ? FUSE_ERROR_OUT_OF_MEMORY : FUSE_ERROR_PARSE;
    fuse__blob_refuse(&l, rc, l.oom ? "out of memory" : "the description is cut");
    goto fail;
  }
  /* this machine's threads, the workspace they need, the row of zeros */
  if (opt) fuse__plan_threads(p, opt->num_threads, opt->parallel_for, opt->parallel_user);
  else fuse__plan_threads(p, 0, NULL, NULL);
  fuse__blob_workspace(p, saved_chunks);
  rc = FUSE_ERROR_OUT_OF_MEMORY;
  if (p->zeros_floats) {
    p->zeros = (float *)fuse__alloc(a, p->zeros_floats * sizeof(float), FUSE__ALIGN);
    if (!p->zeros) goto fail;
    memset(p->zeros, 0, p->zeros_floats * sizeof(float));
  }
  if (p->workspace_size) {
    p->own_workspace = fuse__alloc(a, p->workspace_size, FUSE__ALIGN);
    if (!p->own_workspace) goto fail;
  }
  *out = p;
  return FUSE_OK;
fail:
  if (rc == FUSE_ERROR_OUT_OF_MEMORY && !(opt && opt->error && opt->error[0]))
    fuse__blob_refuse(&l, rc, "out of memory");
  fuse_plan_destroy(p);
  return rc;
}
