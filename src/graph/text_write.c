/* ---------------------------------------------------------------- text form -- */


/* Unnamed rank-0 constants (fuse_scalar) print inline as numbers where they are used. */
static int fuse__is_inline_scalar(const fuse__node *n) {
  return n->op == FUSE__OP_CONST && n->rank == 0 && !n->name && n->type == FUSE_FLOAT32;
}

/* A value's type and shape as the text form declares it: "[1, 4, 8, 8]" for float32 (every
   listing before element types), "u8[1, 4, 8, 8]" for the others. */
static void fuse__put_type_dims(fuse__out *o, const fuse__node *n) {
  if (n->type != FUSE_FLOAT32) fuse__puts(o, fuse__type_name(n->type));
  fuse__put_dims(o, n->rank, n->shape, ", ");
}

static void fuse__put_quoted(fuse__out *o, const char *str) {
  const char *s;
  fuse__puts(o, "\"");
  for (s = str; *s; s++) {
    unsigned char c = (unsigned char)*s;
    if (c == '"' || c == '\\') {
      char esc[2];
      esc[0] = '\\';
      esc[1] = (char)c;
      fuse__put(o, esc, 2);
    } else if (c < 0x20 || c == 0x7f) {
      char esc[4];
      esc[0] = '\\';
      esc[1] = 'x';
      esc[2] = "0123456789abcdef"[c >> 4];
      esc[3] = "0123456789abcdef"[c & 15];
      fuse__put(o, esc, 4);
    } else {
      fuse__put(o, s, 1);
    }
  }
  fuse__puts(o, "\"");
}

static void fuse__put_label(fuse__out *o, const fuse_graph *g, fuse_value v, const int *number) {
  const fuse__node *n = &g->nodes[v];
  const char *s;
  if (fuse__is_inline_scalar(n)) {
    fuse__put_float(o, fuse__const_at(n, 0));
    return;
  }
  fuse__puts(o, "%");
  if (!n->name) {
    fuse__put_int(o, number[v]);
    return;
  }
  for (s = n->name; *s && fuse__is_ident_char((unsigned char)*s); s++) {
  }
  if (!*s && fuse__is_ident_start((unsigned char)n->name[0])) {
    fuse__puts(o, n->name);
    return;
  }
  fuse__put_quoted(o, n->name);
}


static void fuse__put_int_list(fuse__out *o, const char *name, const int *v, int n) {
  int64_t d[FUSE_MAX_RANK];
  int i;
  for (i = 0; i < n; i++) d[i] = v[i];
  fuse__puts(o, ", ");
  fuse__puts(o, name);
  fuse__puts(o, "=");
  fuse__put_dims(o, n, d, ", ");
}

static void fuse__put_int_attr(fuse__out *o, const char *name, int64_t v) {
  fuse__puts(o, ", ");
  fuse__puts(o, name);
  fuse__puts(o, "=");
  fuse__put_int(o, v);
}

static void fuse__put_float_attr(fuse__out *o, const char *name, float v) {
  fuse__puts(o, ", ");
  fuse__puts(o, name);
  fuse__puts(o, "=");
  fuse__put_float(o, v);
}

/* The node's attributes as its row lists them (fuse__attr_spec: where the node keeps each,
   and how), each ", name=value". */
static void fuse__put_attrs(fuse__out *o, const fuse__node *n) {
  const fuse__attr_spec *s;
  for (s = fuse__ops[n->op].attrs; s->name; s++) {
    const char *at = (const char *)n + s->at;
    int64_t d[FUSE_MAX_RANK];
    int v[FUSE_MAX_RANK], i, count = 0;
    float f[FUSE_MAX_RANK];
    unsigned bits;
    switch (s->store) {
    case 'i': memcpy(&v[0], at, sizeof(int)); fuse__put_int_attr(o, s->name, v[0]); continue;
    case 'E': { /* an enum of resize's: of fuse_resize_mode's size (graph/ops.c checks) */
      fuse_resize_mode e;
      memcpy(&e, at, sizeof e);
      fuse__put_int_attr(o, s->name, (int)e);
      continue;
    }
    case 'f': memcpy(&f[0], at, sizeof(float)); fuse__put_float_attr(o, s->name, f[0]); continue;
    case 'n': count = s->form - '0'; memcpy(v, at, (size_t)count * sizeof(int)); break;
    case 'r': count = n->rank; memcpy(v, at, (size_t)count * sizeof(int)); break;
    case 'e': count = n->rank; memcpy(v, at + (size_t)count * sizeof(int), (size_t)count * sizeof(int)); break;
    case 'm':
      memcpy(&bits, at, sizeof bits);
      for (i = 0; i < FUSE_MAX_RANK; i++)
        if (bits >> i & 1u) v[count++] = i;
      break;
    case 'L':
      memcpy(d, at, (size_t)n->rank * sizeof(int64_t));
      fuse__puts(o, ", ");
      fuse__puts(o, s->name);
      fuse__puts(o, "=");
      fuse__put_dims(o, n->rank, d, ", ");
      continue;
    case 'F': /* scales: when they are not derived from the sizes */
      memcpy(f, at, (size_t)n->rank * sizeof(float));
      if (!(f[0] > 0)) continue;
      fuse__puts(o, ", ");
      fuse__puts(o, s->name);
      fuse__puts(o, "=[");
      for (i = 0; i < n->rank; i++) {
        if (i) fuse__puts(o, ", ");
        fuse__put_float(o, f[i]);
      }
      fuse__puts(o, "]");
      continue;
    default: continue; /* read by the builder only */
    }
    fuse__put_int_list(o, s->name, v, count);
  }
}

/* The print order: inputs in the header; then constants and ops in graph order, except that
   a composite prints as one block where its root is, and a value is printed before its first
   use (constants made by passes, values of a composite another op reads early). Items:
   v >= 0 a value, -2 - c the start of composite c's block, -1 a block's end. */
typedef struct fuse__writer {
  const fuse_graph *g;
  unsigned char *done;
  int *items, num_items;
} fuse__writer;

static void fuse__writer_value(fuse__writer *w, fuse_value v);

static void fuse__writer_block(fuse__writer *w, int c) {
  const fuse_graph *g = w->g;
  int i, k, lo = g->composites[c].first, hi = g->composites[c].root;
  for (i = lo; i <= hi; i++) { /* members first mark, so they do not recurse */
    if (g->nodes[i].composite == c) w->done[i] = 2;
  }
  for (i = lo; i <= hi; i++) /* what the block reads from outside comes first */
    if (g->nodes[i].composite == c)
      for (k = 0; k < g->nodes[i].num_in; k++) fuse__writer_value(w, g->nodes[i].in[k]);
  w->items[w->num_items++] = -2 - c;
  for (i = lo; i <= hi; i++)
    if (g->nodes[i].composite == c) {
      w->done[i] = 1;
      w->items[w->num_items++] = i;
    }
  w->items[w->num_items++] = -1;
}

static void fuse__writer_value(fuse__writer *w, fuse_value v) {
  const fuse__node *n = &w->g->nodes[v];
  int k;
  if (w->done[v] || n->op == FUSE__OP_INPUT || fuse__is_inline_scalar(n)) return;
  if (n->composite >= 0) {
    fuse__writer_block(w, n->composite);
    return;
  }
  w->done[v] = 1;
  for (k = 0; k < n->num_in; k++) fuse__writer_value(w, n->in[k]);
  w->items[w->num_items++] = v;
}

static void fuse__put_line(fuse__out *o, const fuse_graph *g, fuse_value v, const int *number,
                           const char *indent) {
  const fuse__node *n = &g->nodes[v];
  int k;
  fuse__puts(o, indent);
  fuse__put_label(o, g, v, number);
  fuse__puts(o, ": ");
  fuse__put_type_dims(o, n);
  fuse__puts(o, " = ");
  fuse__puts(o, fuse__ops[n->op].name);
  if (n->op == FUSE__OP_CONST) {
    int64_t count = fuse__numel(n->rank, n->shape);
    if (count <= FUSE__INLINE_CONST_MAX) {
      fuse__puts(o, "{");
      for (k = 0; k < count; k++) {
        if (k) fuse__puts(o, ", ");
        if (n->type == FUSE_FLOAT32) fuse__put_float(o, fuse__const_at(n, k));
        else fuse__put_int(o, (int64_t)fuse__const_value(n, k));
      }
      fuse__puts(o, "}");
    }
  } else {
    fuse__puts(o, "(");
    for (k = 0; k < n->num_in; k++) {
      if (k) fuse__puts(o, ", ");
      fuse__put_label(o, g, n->in[k], number);
    }
    fuse__put_attrs(o, n);
    fuse__puts(o, ")");
  }
  fuse__puts(o, "\n");
}

static void fuse__put_block_head(fuse__out *o, const fuse_graph *g, int c, const int *number) {
  const fuse__composite *cp = &g->composites[c];
  fuse_epilogue e;
  int k;
  fuse__puts(o, "  composite ");
  fuse__put_quoted(o, cp->name);
  fuse__puts(o, " ");
  fuse__put_quoted(o, cp->function);
  fuse__puts(o, " codegen=");
  if (cp->codegen) fuse__put_quoted(o, cp->codegen);
  else fuse__puts(o, "none");
  fuse__puts(o, " region=");
  fuse__put_int(o, cp->region);
  fuse__puts(o, " bind_constants=");
  fuse__put_int(o, cp->bind_constants);
  fuse__puts(o, " {\n");
  if (fuse_analyze_epilogue(g, cp->root, &e) != FUSE_OK) { /* fuse_analyze_epilogue says why */
    fuse__puts(o, "    # no fused epilogue: runs op by op\n");
    return;
  }
  fuse__puts(o, "    # epilogue of ");
  fuse__put_label(o, g, e.reduction, number);
  fuse__puts(o, ": bias ");
  if (e.bias == FUSE_NONE) fuse__puts(o, "none");
  else fuse__put_label(o, g, e.bias, number);
  for (k = 0; k < e.num_post; k++) {
    fuse__puts(o, k ? ", " : "; then ");
    fuse__post_write(o, &e.post[k], " ");
    if (fuse__post_has_tensor(e.post[k].kind)) {
      fuse__puts(o, " ");
      fuse__put_label(o, g, e.post[k].tensor, number);
    }
  }
  fuse__puts(o, "\n");
}

/* Lays out the print order in w (its arrays from the graph's allocator; fuse__writer_free)
   and numbers the unnamed values in that order, so a parse numbers them the same way. */
static int fuse__writer_init(fuse__writer *w, const fuse_graph *g, int **number) {
  const fuse_allocator *a = &g->alloc;
  int i, next = 0;
  *number = (int *)fuse__alloc(a, (size_t)(g->num_nodes + 1) * sizeof(int), 16);
  w->g = g;
  w->done = (unsigned char *)fuse__alloc(a, (size_t)g->num_nodes + 1, 16);
  w->items = (int *)fuse__alloc(a, (size_t)(g->num_nodes + 2 * g->num_composites + 1) * sizeof(int), 16);
  w->num_items = 0;
  if (!*number || !w->done || !w->items) return 0;
  memset(w->done, 0, (size_t)g->num_nodes);
  for (i = 0; i < g->num_nodes; i++) fuse__writer_value(w, i);
  for (i = 0; i < g->num_inputs; i++)
    if (!g->nodes[g->inputs[i]].name) (*number)[g->inputs[i]] = next++;
  for (i = 0; i < w->num_items; i++)
    if (w->items[i] >= 0 && !g->nodes[w->items[i]].name) (*number)[w->items[i]] = next++;
  return 1;
}

static void fuse__writer_free(fuse__writer *w, int *number) {
  fuse__free(&w->g->alloc, number);
  fuse__free(&w->g->alloc, w->done);
  fuse__free(&w->g->alloc, w->items);
}

FUSE_API fuse_result fuse_graph_write(const fuse_graph *g, fuse_write_fn write, void *user) {
  char buf[1024];
  fuse__out o;
  fuse__writer w;
  int *number, i, in_block = 0;
  if (!g || !write) return FUSE_ERROR_INVALID_ARGUMENT;
  if (!fuse__writer_init(&w, g, &number)) {
    fuse__writer_free(&w, number);
    return FUSE_ERROR_OUT_OF_MEMORY;
  }
  o.buf = buf;
  o.len = 0;
  o.cap = sizeof buf;
  o.write = write;
  o.user = user;
  fuse__puts(&o, "graph(");
  for (i = 0; i < g->num_inputs; i++) {
    const fuse__node *n = &g->nodes[g->inputs[i]];
    if (i) fuse__puts(&o, ", ");
    fuse__put_label(&o, g, g->inputs[i], number);
    fuse__puts(&o, ": ");
    fuse__put_type_dims(&o, n);
  }
  fuse__puts(&o, ") {\n");
  for (i = 0; i < w.num_items; i++) {
    int it = w.items[i];
    if (it >= 0) {
      fuse__put_line(&o, g, it, number, in_block ? "    " : "  ");
    } else if (it == -1) {
      fuse__puts(&o, "  }\n");
      in_block = 0;
    } else {
      fuse__put_block_head(&o, g, -2 - it, number);
      in_block = 1;
    }
  }
  fuse__puts(&o, "  return");
  for (i = 0; i < g->num_outputs; i++) {
    fuse__puts(&o, i ? ", " : " ");
    fuse__put_label(&o, g, g->outputs[i], number);
  }
  fuse__puts(&o, "\n}\n");
  fuse__flush(&o);
  fuse__writer_free(&w, number);
  return FUSE_OK;
}

#ifndef FUSE_NO_STDIO
static void fuse__write_file(void *user, const char *text, size_t len) {
  fwrite(text, 1, len, (FILE *)user);
}

FUSE_API fuse_result fuse_graph_print(const fuse_graph *g, FILE *f) {
  if (!f) return FUSE_ERROR_INVALID_ARGUMENT;
  return fuse_graph_write(g, fuse__write_file, f);
}
#endif

