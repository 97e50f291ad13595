/* ----------------------------------------------------------------- Graphviz DOT -- */
/* fuse_graph_write_dot: the graph as a Graphviz digraph. One box per op, labeled with the op
   (kernel size, stride, groups, bounds), its shape and its constant operands (constants are
   folded into their users' labels, so a large graph stays readable); graph inputs and output
   markers as ellipses; each composite a `subgraph cluster_N` labeled with its name (filled
   when it runs fused, dashed when op by op). conv2d / matmul are amber, element-wise ops that
   run on their own (fuse_explain says why) red. Full value names are in the tooltips. */

/* A name in a label: whole when short, else its last characters (where ONNX names say
   what they are: ".../block.2/fc1/Conv_output_0"). */
#define FUSE__DOT_NAME_MAX 28

static void fuse__dot_name(fuse__out *o, const fuse_graph *g, fuse_value v) {
  const char *name = g->nodes[v].name;
  size_t len;
  if (!name) {
    fuse__format(o, g, "%V", v);
    return;
  }
  len = strlen(name);
  if (len > FUSE__DOT_NAME_MAX) {
    name += len - (FUSE__DOT_NAME_MAX - 3);
    while (((unsigned char)*name & 0xc0) == 0x80) name++; /* not inside a UTF-8 character */
    fuse__puts(o, "...");
  }
  fuse__puts(o, name);
}

/* The length of the valid UTF-8 sequence at s (n bytes left), or 0. */
static size_t fuse__utf8_length(const unsigned char *s, size_t n) {
  size_t len, k;
  unsigned char lo = 0x80, hi = 0xbf;
  if (s[0] < 0x80) return 1;
  if (s[0] >= 0xc2 && s[0] <= 0xdf) len = 2;
  else if (s[0] >= 0xe0 && s[0] <= 0xef) len = 3;
  else if (s[0] >= 0xf0 && s[0] <= 0xf4) len = 4;
  else return 0;
  if (s[0] == 0xe0) lo = 0xa0; /* no overlong forms, no surrogates, nothing past U+10FFFF */
  if (s[0] == 0xed) hi = 0x9f;
  if (s[0] == 0xf0) lo = 0x90;
  if (s[0] == 0xf4) hi = 0x8f;
  if (len > n || s[1] < lo || s[1] > hi) return 0;
  for (k = 2; k < len; k++)
    if (s[k] < 0x80 || s[k] > 0xbf) return 0;
  return len;
}

/* text as a DOT string: quotes and backslashes escaped, '\n' a centered line break, other
   control characters a space, bytes that are not UTF-8 '?'. */
static void fuse__dot_string(fuse__out *o, const char *text, size_t n) {
  const unsigned char *s = (const unsigned char *)text;
  size_t i = 0;
  fuse__puts(o, "\"");
  while (i < n) {
    size_t len = fuse__utf8_length(s + i, n - i);
    if (s[i] == '"' || s[i] == '\\') {
      fuse__puts(o, s[i] == '"' ? "\\\"" : "\\\\");
    } else if (s[i] == '\n') {
      fuse__puts(o, "\\n");
    } else if (s[i] < 0x20 || s[i] == 0x7f) {
      fuse__puts(o, " ");
    } else if (len == 0) {
      fuse__puts(o, "?");
      len = 1;
    } else {
      fuse__put(o, text + i, len);
      i += len;
      continue;
    }
    i += len ? len : 1;
  }
  fuse__puts(o, "\"");
}

/* A label or tooltip built with the fuse__out helpers, then written as a DOT string. */
typedef struct fuse__dot_text {
  char buf[1024];
  fuse__out o;
} fuse__dot_text;

static fuse__out *fuse__dot_begin(fuse__dot_text *t) {
  t->o.buf = t->buf;
  t->o.len = 0;
  t->o.cap = sizeof t->buf;
  t->o.write = NULL;
  t->o.user = NULL;
  return &t->o;
}

static void fuse__dot_end(fuse__out *o, const char *attr, fuse__dot_text *t) {
  fuse__puts(o, attr);
  fuse__puts(o, "=");
  fuse__dot_string(o, t->buf, t->o.len);
}

/* Where node n keeps its attribute `name`, as its row's specs say; NULL when it has none. */
static const char *fuse__dot_attr(const fuse__node *n, const char *name) {
  const fuse__attr_spec *s;
  for (s = fuse__ops[n->op].attrs; s->name; s++)
    if (s->at >= 0 && strcmp(s->name, name) == 0) return (const char *)n + s->at;
  return NULL;
}

/* "3x3 s2 dw": the window of an op with strides (a convolution, a pool): its kernel (a
   convolution's from its weights), stride (when not 1), groups, dilation. */
static void fuse__dot_window(fuse__out *o, const fuse_graph *g, const fuse__node *n) {
  const char *kernel_at = fuse__dot_attr(n, "kernel"), *groups_at = fuse__dot_attr(n, "groups");
  const char *dilation_at = fuse__dot_attr(n, "dilation");
  int kernel[2] = {1, 1}, strides[2], dilation[2] = {1, 1}, groups = 1;
  if (kernel_at) {
    memcpy(kernel, kernel_at, sizeof kernel);
  } else {
    const fuse__node *w = &g->nodes[n->in[1]];
    if (w->rank == 4) kernel[0] = (int)w->shape[2];
    if (w->rank >= 3) kernel[1] = (int)w->shape[w->rank - 1];
  }
  memcpy(strides, fuse__dot_attr(n, "strides"), sizeof strides);
  if (dilation_at) memcpy(dilation, dilation_at, sizeof dilation);
  if (groups_at) memcpy(&groups, groups_at, sizeof groups);
  fuse__format(o, g, " %dx%d", kernel[0], kernel[1]);
  if (strides[0] != 1 || strides[1] != 1) {
    if (strides[0] == strides[1]) fuse__format(o, g, " s%d", strides[0]);
    else fuse__format(o, g, " s%dx%d", strides[0], strides[1]);
  }
  if (groups > 1) {
    const fuse__node *x = &g->nodes[n->in[0]];
    if (n->op == FUSE__OP_CONV2D && x->rank >= 2 && groups == x->shape[1] &&
        g->nodes[n->in[1]].shape[1] == 1)
      fuse__puts(o, " dw");
    else
      fuse__format(o, g, " g%d", groups);
  }
  if (dilation[0] > 1 || dilation[1] > 1) fuse__format(o, g, " d%d", dilation[0]);
}

/* The first line of an op's label: the op and the attributes that tell ops apart at a glance,
   found through its row: a window (fuse__dot_window), bounds (clip's lo and hi), or the axis
   of an op whose one attribute it is (flatten, concat, softmax, log_softmax; not gather,
   whose label shows its indices). */
static void fuse__dot_op(fuse__out *o, const fuse_graph *g, const fuse__node *n) {
  const fuse__attr_spec *s = fuse__ops[n->op].attrs;
  const char *lo = fuse__dot_attr(n, "lo"), *hi = fuse__dot_attr(n, "hi");
  fuse__puts(o, fuse__ops[n->op].name);
  if (fuse__dot_attr(n, "strides")) {
    fuse__dot_window(o, g, n);
  } else if (lo && hi) {
    float b[2];
    memcpy(&b[0], lo, sizeof(float));
    memcpy(&b[1], hi, sizeof(float));
    fuse__format(o, g, " [%f, %f]", b[0], b[1]);
  } else if (s->name && !s[1].name && strcmp(s->name, "axis") == 0 && s->at >= 0 &&
             n->op != FUSE__OP_GATHER) {
    int axis;
    memcpy(&axis, (const char *)n + s->at, sizeof axis);
    fuse__format(o, g, " axis=%d", axis);
  }
}

/* What the picture draws. Arrays from the graph's allocator. */
typedef struct fuse__dot {
  fuse__explainer x;
  unsigned char *drawn; /* per node: 1 drawn, 2 drawn as a boundary (read by what is drawn) */
} fuse__dot;

/* Is v drawn as a node of its own (constants are folded into their users' labels, unless
   they are graph outputs)? */
static int fuse__dot_own_node(const fuse_graph *g, fuse_value v) {
  return g->nodes[v].op != FUSE__OP_CONST || fuse__is_output(g, v);
}

/* Does s contain text? (strstr, which the bare-metal builds' libc list leaves out) */
static int fuse__contains(const char *s, const char *text) {
  size_t n = strlen(text);
  for (; *s; s++)
    if (*s == *text && strncmp(s, text, n) == 0) return 1;
  return n == 0;
}

/* Which values are drawn: all, or (only != NULL) those whose names contain `only`, the
   unnamed ops whose users all are (an ONNX conv's unnamed output feeding its named bias
   add), every member of a composite whose root is; and as boundaries what they read. */
static void fuse__dot_select(fuse__dot *d, const fuse_graph *g, const char *only) {
  int v, k;
  for (v = 0; v < g->num_nodes; v++) {
    const fuse__node *n = &g->nodes[v];
    d->drawn[v] = fuse__dot_own_node(g, v) && (!only || (n->name && fuse__contains(n->name, only)));
  }
  if (!only) return;
  for (v = g->num_nodes - 1; v >= 0; v--) { /* users come after their operands */
    const fuse__node *n = &g->nodes[v];
    int all = 1, any = 0;
    if (d->drawn[v] || n->name || n->op == FUSE__OP_CONST || n->op == FUSE__OP_INPUT) continue;
    for (k = d->x.users.first[v]; k < d->x.users.first[v + 1]; k++) {
      any = 1;
      if (d->drawn[d->x.users.list[k]] != 1) all = 0;
    }
    if (any && all) d->drawn[v] = 1;
  }
  for (v = 0; v < g->num_nodes; v++)
    if (g->nodes[v].composite >= 0)
      d->drawn[v] = d->drawn[g->composites[g->nodes[v].composite].root];
  for (v = 0; v < g->num_nodes; v++) {
    const fuse__node *n = &g->nodes[v];
    if (d->drawn[v] != 1) continue;
    for (k = 0; k < n->num_in; k++)
      if (!d->drawn[n->in[k]] && fuse__dot_own_node(g, n->in[k])) d->drawn[n->in[k]] = 2;
  }
}

static void fuse__dot_node(fuse__out *o, const fuse__dot *d, fuse_value v, const char *indent) {
  const fuse_graph *g = d->x.g;
  const fuse__node *n = &g->nodes[v];
  fuse__dot_text t;
  fuse__out *l = fuse__dot_begin(&t);
  int k;
  fuse__format(o, g, "%sv%d [", indent, v);
  if (n->op == FUSE__OP_INPUT) {
    fuse__puts(l, "input ");
    fuse__dot_name(l, g, v);
    fuse__puts(l, "\n");
  } else if (n->op == FUSE__OP_CONST) {
    fuse__puts(l, "const ");
    fuse__dot_name(l, g, v);
    fuse__puts(l, "\n");
  } else {
    fuse__dot_op(l, g, n);
    fuse__puts(l, "\n");
  }
  fuse__put_dims(l, n->rank, n->shape, ", ");
  for (k = 0; k < n->num_in; k++) { /* constant operands, folded in */
    const fuse__node *c = &g->nodes[n->in[k]];
    int64_t j, count = fuse__numel(c->rank, c->shape);
    if (c->op != FUSE__OP_CONST) continue;
    fuse__puts(l, "\n");
    if (count <= FUSE__INLINE_CONST_MAX && !c->name && c->rank == 0) {
      fuse__put_float(l, fuse__const_at(c, 0));
      continue;
    }
    if (c->name) fuse__dot_name(l, g, n->in[k]);
    else fuse__puts(l, "const");
    fuse__puts(l, " ");
    if (count <= FUSE__INLINE_CONST_MAX) {
      fuse__puts(l, "{");
      for (j = 0; j < count; j++) {
        if (j) fuse__puts(l, ", ");
        fuse__put_float(l, fuse__const_at(c, j));
      }
      fuse__puts(l, "}");
    } else {
      fuse__put_dims(l, c->rank, c->shape, ", ");
    }
  }
  fuse__dot_end(o, "label", &t);
  l = fuse__dot_begin(&t);
  fuse__format(l, g, "%V = %s", v, fuse__ops[n->op].name);
  fuse__puts(o, ", ");
  fuse__dot_end(o, "tooltip", &t);
  if (d->drawn[v] == 2)
    fuse__puts(o, ", style=\"rounded,dashed\", color=\"#9ca3af\", fontcolor=\"#6b7280\"");
  else if (n->op == FUSE__OP_INPUT)
    fuse__puts(o, ", shape=ellipse, fillcolor=\"#dbeafe\"");
  else if (n->op == FUSE__OP_CONST)
    fuse__puts(o, ", fillcolor=\"#e5e7eb\", fontcolor=\"#4b5563\"");
  else if (fuse__is_reduction(n->op))
    fuse__puts(o, ", fillcolor=\"#fde68a\"");
  else if (fuse__is_elementwise(n->op) && !fuse__explain_fused(&d->x, v))
    fuse__puts(o, ", fillcolor=\"#fecaca\"");
  fuse__puts(o, "];\n");
}

static void fuse__dot_cluster(fuse__out *o, const fuse__dot *d, int c) {
  const fuse_graph *g = d->x.g;
  const fuse__composite *cp = &g->composites[c];
  fuse__dot_text t;
  fuse__out *l = fuse__dot_begin(&t);
  int v;
  fuse__format(o, g, "  subgraph cluster_%d {\n    ", c);
  fuse__puts(l, cp->name);
  if (!d->x.fused[c]) fuse__puts(l, " (op by op)");
  fuse__dot_end(o, "label", &t);
  fuse__puts(o, ";\n    ");
  l = fuse__dot_begin(&t);
  if (d->x.fused[c]) fuse__explain_epilogue(l, g, &d->x.epi[c]);
  else fuse__explain_composite(l, &d->x, c);
  fuse__dot_end(o, "tooltip", &t);
  if (d->x.fused[c])
    fuse__puts(o, ";\n    style=\"rounded,filled\"; fillcolor=\"#fff7ed\"; color=\"#f59e0b\";\n");
  else
    fuse__puts(o, ";\n    style=\"rounded,dashed\"; color=\"#6b7280\";\n");
  for (v = cp->first; v <= cp->root; v++)
    if (g->nodes[v].composite == c && d->drawn[v] == 1) fuse__dot_node(o, d, v, "    ");
  fuse__puts(o, "  }\n");
}

FUSE_API fuse_result fuse_graph_write_dot(const fuse_graph *g, const fuse_dot_options *opt,
                                          fuse_write_fn write, void *user) {
  char buf[1024];
  fuse__out o;
  fuse__dot d;
  const char *only = opt && opt->only && opt->only[0] ? opt->only : NULL;
  int v, k, c;
  if (!g || !write) return FUSE_ERROR_INVALID_ARGUMENT;
  if (!fuse__explainer_init(&d.x, g)) return FUSE_ERROR_OUT_OF_MEMORY;
  d.drawn = (unsigned char *)fuse__alloc(&g->alloc, (size_t)g->num_nodes + 1, 16);
  if (!d.drawn) {
    fuse__explainer_free(&d.x);
    return FUSE_ERROR_OUT_OF_MEMORY;
  }
  fuse__dot_select(&d, g, only);
  o.buf = buf;
  o.len = 0;
  o.cap = sizeof buf;
  o.write = write;
  o.user = user;
  fuse__puts(&o, "digraph fuse {\n"
                 "  graph [rankdir=TB, fontname=\"Helvetica\", fontsize=11, nodesep=0.2, "
                 "ranksep=0.25];\n"
                 "  node [shape=box, style=\"rounded,filled\", fillcolor=\"#ffffff\", "
                 "fontname=\"Helvetica\", fontsize=10, height=0.3, margin=\"0.08,0.03\"];\n"
                 "  edge [color=\"#6b7280\", arrowsize=0.6];\n");
  for (c = 0; c < g->num_composites; c++)
    if (d.drawn[g->composites[c].root] == 1) fuse__dot_cluster(&o, &d, c);
  for (v = 0; v < g->num_nodes; v++)
    if (d.drawn[v] && !(d.drawn[v] == 1 && g->nodes[v].composite >= 0)) fuse__dot_node(&o, &d, v, "  ");
  for (v = 0; v < g->num_nodes; v++) {
    const fuse__node *n = &g->nodes[v];
    if (d.drawn[v] != 1) continue;
    for (k = 0; k < n->num_in; k++)
      if (d.drawn[n->in[k]]) fuse__format(&o, g, "  v%d -> v%d;\n", n->in[k], v);
  }
  for (k = 0; k < g->num_outputs; k++) {
    fuse__dot_text t;
    fuse__out *l = fuse__dot_begin(&t);
    v = g->outputs[k];
    if (d.drawn[v] != 1) continue;
    fuse__format(&o, g, "  out%d [", k);
    fuse__format(l, g, "output %d", k);
    if (g->nodes[v].name) {
      fuse__puts(l, "\n");
      fuse__dot_name(l, g, v);
    }
    fuse__dot_end(&o, "label", &t);
    fuse__format(&o, g, ", shape=ellipse, fillcolor=\"#bbf7d0\"];\n  v%d -> out%d;\n", v, k);
  }
  fuse__puts(&o, "}\n");
  fuse__flush(&o);
  fuse__free(&g->alloc, d.drawn);
  fuse__explainer_free(&d.x);
  return FUSE_OK;
}

#ifndef FUSE_NO_STDIO
FUSE_API fuse_result fuse_write_dot(const fuse_graph *g, FILE *f) {
  if (!f) return FUSE_ERROR_INVALID_ARGUMENT;
  return fuse_graph_write_dot(g, NULL, fuse__write_file, f);
}
#endif
