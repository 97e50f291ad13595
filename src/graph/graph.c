/* ---------------------------------------------------------------- the graph -- */

/* A composite is a group of ops tagged in place: values keep their ids after fusion. */
typedef struct fuse__composite {
  char *name, *function, *codegen; /* codegen may be NULL */
  fuse_value root, first;          /* members lie in [first, root] (root is the last) */
  int region, num_ops, bind_constants;
} fuse__composite;

struct fuse_graph {
  fuse_allocator alloc;
  fuse__node *nodes;
  int num_nodes, cap_nodes;
  fuse_value *inputs, *outputs;
  int num_inputs, cap_inputs, num_outputs, cap_outputs;
  fuse_value *name_slots; /* open-addressing hash of named values; FUSE_NONE = empty */
  int name_cap, num_named;
  fuse__composite *composites;
  int num_composites, cap_composites;
  void *mapped; /* the model file fuse_onnx_load_file mapped, while constants are in it */
  size_t mapped_size;
  fuse_result status;
  char error[512];
};

/* ------------------------------------------------- what the graph-side stages share -- */
/* Growing arrays, mapped model files and the identifiers of the text form and the patterns:
   the graph, its passes, its text form and the ONNX reader use them, the runtime does not. */

/* Grows an array to hold at least `need` elements; returns the new block (old contents
   copied, old block freed) or NULL with the old block untouched. */
static void *fuse__grow(const fuse_allocator *a, void *old, int count, int *cap, int need,
                        size_t elem) {
  int new_cap;
  void *p;
  if (need <= *cap) return old;
  if (need > 0x3fffffff) return NULL;
  new_cap = *cap ? *cap : 8;
  while (new_cap < need) new_cap *= 2;
  if ((uint64_t)new_cap * elem > FUSE__MAX_BYTES) return NULL;
  p = fuse__alloc(a, (size_t)new_cap * elem, 16);
  if (!p) return NULL;
  if (old) {
    memcpy(p, old, (size_t)count * elem);
    fuse__free(a, old);
  }
  *cap = new_cap;
  return p;
}

/* Asks the kernel to back [p, p + size) with written pages in one call, before a writer
   fills all of it: a fresh buffer otherwise takes one page fault per 4 KB as it is written,
   and on a 500 MB model those faults cost as much as the copy itself. Only a hint: where the
   call is missing (not Linux, a kernel before 5.14) the pages fault in as they are written. */
static void fuse__prefault(void *p, size_t size) {
#if defined(__linux__) && !defined(FUSE_NO_MMAP)
  const uintptr_t page = 4096;
  uintptr_t a = ((uintptr_t)p + page - 1) & ~(page - 1), b = ((uintptr_t)p + size) & ~(page - 1);
  if (size >= ((size_t)1 << 20) && b > a) (void)madvise((void *)a, (size_t)(b - a), 23);
#else
  (void)p, (void)size;
#endif
}

/* Releases a model file fuse_onnx_load_file mapped (the graph keeps it while constants are
   borrowed from it). */
static void fuse__unmap(void *p, size_t size) {
#if (defined(__linux__) || defined(__APPLE__)) && !defined(FUSE_NO_MMAP)
  if (p) munmap(p, size);
#else
  (void)p, (void)size;
#endif
}

static int fuse__is_ident_start(int c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}
static int fuse__is_ident_char(int c) {
  return fuse__is_ident_start(c) || (c >= '0' && c <= '9') || c == '.';
}

/* Reads an identifier at *p into out (at most cap - 1 characters, the rest skipped). */
static int fuse__scan_ident(const char **p, char *out, size_t cap) {
  size_t n = 0;
  if (!fuse__is_ident_start((unsigned char)**p)) return 0;
  for (; fuse__is_ident_char((unsigned char)**p); (*p)++)
    if (n + 1 < cap) out[n++] = **p;
  out[n] = 0;
  return 1;
}

static int fuse__valid(const fuse_graph *g, fuse_value v) {
  return g && v >= 0 && v < g->num_nodes;
}

static uint32_t fuse__hash(const char *s) {
  uint32_t h = 2166136261u;
  while (*s) h = (h ^ (unsigned char)*s++) * 16777619u;
  return h;
}

static fuse_value fuse__find(const fuse_graph *g, const char *name) {
  uint32_t i;
  if (!g->name_cap) return FUSE_NONE;
  for (i = fuse__hash(name) & (uint32_t)(g->name_cap - 1);; i = (i + 1) & (uint32_t)(g->name_cap - 1)) {
    fuse_value v = g->name_slots[i];
    if (v == FUSE_NONE) return FUSE_NONE;
    if (v >= 0 && strcmp(g->nodes[v].name, name) == 0) return v;
  }
}

static const char *fuse__value_name(const fuse_graph *g, fuse_value v) {
  return fuse__valid(g, v) ? g->nodes[v].name : NULL;
}

/* Records the graph's first error; returns FUSE_NONE so builders can `return fuse__fail(...)`. */
static fuse_value fuse__fail(fuse_graph *g, fuse_result r, const char *fmt, ...) {
  va_list ap;
  fuse__out o;
  if (!g || g->status != FUSE_OK) return FUSE_NONE;
  g->status = r;
  o.buf = g->error;
  o.len = 0;
  o.cap = sizeof g->error;
  o.write = NULL;
  o.user = NULL;
  va_start(ap, fmt);
  fuse__vformat(&o, g, fmt, ap);
  va_end(ap);
  return FUSE_NONE;
}

static int fuse__oom(fuse_graph *g, const char *what) {
  fuse__fail(g, FUSE_ERROR_OUT_OF_MEMORY, "%s: out of memory", what);
  return 0;
}

/* Constants borrowed from the model file. fuse_onnx_load_file maps the file and leaves a large
   float32 initializer where it is: node->raw points at its little-endian bytes (at whatever
   byte offset the file has them, so read with memcpy; set on little-endian hosts only), data
   is NULL, and the graph keeps the mapping until it is destroyed. A Gemm's transB weight is
   borrowed untransposed (raw_transposed). fuse_compile packs straight from those bytes, so a
   weight crosses fresh memory once, into the plan; a pass that needs the floats (batch-norm
   folding, fuse_graph_set_constant, ...) copies them out first with fuse__const_floats. */

/* count values of constant n from element `first` (row-major) into dst. */
static void fuse__const_read(const fuse__node *n, int64_t first, int64_t count, float *dst) {
  int64_t i, R, C;
  if (count <= 0) return;
  if (n->data || !n->raw) { /* (a typed constant's elements as they are, into dst's bytes) */
    size_t size = fuse__type_size(n->type);
    if (n->data) memcpy(dst, (const char *)n->data + (size_t)first * size, (size_t)count * size);
    else memset(dst, 0, (size_t)count * size);
    return;
  }
  if (!n->raw_transposed) {
    memcpy(dst, n->raw + (size_t)first * sizeof(float), (size_t)count * sizeof(float));
    return;
  }
  R = n->shape[0], C = n->shape[1]; /* element (r, c) is at (c, r) of the [C][R] bytes */
  for (i = 0; i < count; i++) {
    int64_t e = first + i;
    memcpy(dst + i, n->raw + (size_t)((e % C) * R + e / C) * sizeof(float), sizeof(float));
  }
}

static float fuse__const_at(const fuse__node *n, int64_t i) {
  float v;
  fuse__const_read(n, i, 1, &v);
  return v;
}

/* Constant v's values as floats the caller may read and write: a borrowed constant is copied
   out of the file first. NULL (and the graph's error) when out of memory. */
static float *fuse__const_floats(fuse_graph *g, fuse_value v) {
  fuse__node *n = &g->nodes[v];
  size_t bytes;
  float *data;
  if (n->data || !n->raw) return n->data;
  bytes = (size_t)fuse__numel(n->rank, n->shape) * sizeof(float);
  data = (float *)fuse__alloc(&g->alloc, bytes, FUSE__ALIGN);
  if (!data) {
    fuse__fail(g, FUSE_ERROR_OUT_OF_MEMORY, "out of memory copying constant %V out of the file", v);
    return NULL;
  }
  fuse__prefault(data, bytes);
  fuse__const_read(n, 0, fuse__numel(n->rank, n->shape), data);
  n->data = data;
  n->raw = NULL;
  n->raw_transposed = 0;
  return data;
}

static int fuse__name_insert(fuse_graph *g, fuse_value v) {
  uint32_t i;
  if ((g->num_named + 1) * 2 > g->name_cap) { /* keep the table at most half full */
    int cap = g->name_cap ? g->name_cap * 2 : 64, k;
    fuse_value *slots = (fuse_value *)fuse__alloc(&g->alloc, (size_t)cap * sizeof(fuse_value), 16);
    if (!slots) return 0;
    for (k = 0; k < cap; k++) slots[k] = FUSE_NONE;
    for (k = 0; k < g->name_cap; k++) {
      fuse_value u = g->name_slots[k];
      if (u < 0) continue;
      for (i = fuse__hash(g->nodes[u].name) & (uint32_t)(cap - 1); slots[i] != FUSE_NONE;
           i = (i + 1) & (uint32_t)(cap - 1)) {
      }
      slots[i] = u;
    }
    fuse__free(&g->alloc, g->name_slots);
    g->name_slots = slots;
    g->name_cap = cap;
  }
  for (i = fuse__hash(g->nodes[v].name) & (uint32_t)(g->name_cap - 1); g->name_slots[i] >= 0;
       i = (i + 1) & (uint32_t)(g->name_cap - 1)) {
  }
  g->name_slots[i] = v;
  g->num_named++;
  return 1;
}

static void fuse__name_remove(fuse_graph *g, fuse_value v) {
  uint32_t i;
  for (i = fuse__hash(g->nodes[v].name) & (uint32_t)(g->name_cap - 1); g->name_slots[i] != v;
       i = (i + 1) & (uint32_t)(g->name_cap - 1)) {
  }
  g->name_slots[i] = -2; /* tombstone: lookups continue past it */
}

static char *fuse__strdup(fuse_graph *g, const char *s) {
  size_t n = strlen(s) + 1;
  char *p = (char *)fuse__alloc(&g->alloc, n, 1);
  if (p) memcpy(p, s, n);
  return p;
}

/* Gives v the name; `who` names the caller in messages. */
static int fuse__set_name(fuse_graph *g, fuse_value v, const char *name, const char *who) {
  fuse_value other;
  char *copy;
  if (!name) return 1;
  if (!*name) return fuse__fail(g, FUSE_ERROR_INVALID_ARGUMENT, "%s: a name may not be empty", who), 0;
  other = fuse__find(g, name);
  if (other != FUSE_NONE && other != v)
    return fuse__fail(g, FUSE_ERROR_INVALID_ARGUMENT, "%s: name '%s' is already used by %s %%%d",
                      who, name, fuse__ops[g->nodes[other].op].name, other),
           0;
  if (other == v) return 1;
  if (!(copy = fuse__strdup(g, name))) return fuse__oom(g, who);
  if (g->nodes[v].name) {
    fuse__name_remove(g, v);
    fuse__free(&g->alloc, g->nodes[v].name);
  }
  g->nodes[v].name = copy;
  if (!fuse__name_insert(g, v)) {
    g->nodes[v].name = NULL;
    fuse__free(&g->alloc, copy);
    return fuse__oom(g, who);
  }
  return 1;
}

/* A fuse_type's name in the text form and messages. */
static const char *fuse__type_name(int type) {
  static const char *const names[] = {"f32", "u8", "i8", "i32"};
  return type >= 0 && type <= FUSE_INT32 ? names[type] : "?";
}

/* Appends a node with its operands and shape; NULL (and the graph's error) when out of memory
   or when an operand is not float32 and the op takes only float32 (FUSE__OPF_TYPED: its
   builder checks the types, and the node takes its first operand's type until it says else). */
static fuse__node *fuse__new_node(fuse_graph *g, int op, int num_in, const fuse_value *in,
                                  int rank, const int64_t *shape) {
  fuse__node *n, *nodes;
  int64_t dims[FUSE_MAX_RANK];
  int k, type = FUSE_FLOAT32;
  for (k = 0; k < num_in; k++)
    if (in[k] >= 0 && in[k] < g->num_nodes && g->nodes[in[k]].type != FUSE_FLOAT32 &&
        !(fuse__ops[op].flags & FUSE__OPF_TYPED))
      return fuse__fail(g, FUSE_ERROR_INVALID_ARGUMENT,
                        "%s: operand %d (%V) is %s; %s takes float32 (dequantize it first)",
                        fuse__ops[op].name, k, in[k], fuse__type_name(g->nodes[in[k]].type),
                        fuse__ops[op].name),
             (fuse__node *)NULL;
  if (num_in && (fuse__ops[op].flags & FUSE__OPF_TYPED) && in[0] >= 0 && in[0] < g->num_nodes)
    type = g->nodes[in[0]].type;
  if (rank) memcpy(dims, shape, (size_t)rank * sizeof(int64_t)); /* shape may be in g->nodes */
  nodes = (fuse__node *)fuse__grow(&g->alloc, g->nodes, g->num_nodes, &g->cap_nodes,
                                   g->num_nodes + 1, sizeof(fuse__node));
  if (!nodes) return fuse__oom(g, fuse__ops[op].name), (fuse__node *)NULL;
  g->nodes = nodes;
  n = &g->nodes[g->num_nodes];
  memset(n, 0, sizeof *n);
  n->op = op;
  n->type = type;
  n->rank = rank;
  n->composite = -1;
  if (rank) memcpy(n->shape, dims, (size_t)rank * sizeof(int64_t));
  if (num_in) {
    n->in = (fuse_value *)fuse__alloc(&g->alloc, (size_t)num_in * sizeof(fuse_value), 16);
    if (!n->in) return fuse__oom(g, fuse__ops[op].name), (fuse__node *)NULL;
    memcpy(n->in, in, (size_t)num_in * sizeof(fuse_value));
    n->num_in = num_in;
  }
  g->num_nodes++;
  return n;
}

static fuse_value fuse__id(const fuse_graph *g, const fuse__node *n) {
  return (fuse_value)(n - g->nodes);
}

