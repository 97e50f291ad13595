/* ------------------------------------------------------------ pattern parser -- */
/* A pattern compiles to a small tree of fuse__pat nodes held in one fuse__pattern. */

#define FUSE__PAT_MAX_NODES 256
#define FUSE__PAT_MAX_CAPTURES 16
#define FUSE__PAT_MAX_ATTRS 16
#define FUSE__MATCH_MAX FUSE__PAT_MAX_NODES /* ops in one match */

enum { FUSE__PAT_ANY, FUSE__PAT_CONST, FUSE__PAT_OP, FUSE__PAT_ALT };

typedef struct fuse__pat {
  uint64_t ops;           /* FUSE__PAT_OP: bit per fuse__op (first: no padding around it) */
  int kind;
  int optional, ellipsis; /* op?(...), trailing ... */
  int capture;            /* slot, or -1 */
  int first_arg, num_args;   /* into pattern->args (ALT: two entries: left, right) */
  int first_attr, num_attrs; /* into pattern->attrs */
} fuse__pat;

typedef struct fuse__pat_attr {
  char name[24];
  double v[FUSE_MAX_RANK];
  int count, is_list;
} fuse__pat_attr;

typedef struct fuse__pattern {
  fuse__pat nodes[FUSE__PAT_MAX_NODES];
  int args[FUSE__PAT_MAX_NODES];
  fuse__pat_attr attrs[FUSE__PAT_MAX_ATTRS];
  const char *captures[FUSE__PAT_MAX_CAPTURES]; /* names: slices of the pattern text */
  size_t capture_len[FUSE__PAT_MAX_CAPTURES];
  int num_nodes, num_args, num_attrs, num_captures, root, depth;
  const char *text, *p;
  char error[160];
} fuse__pattern;

static int fuse__pattern_fail(fuse__pattern *pt, const char *expected) {
  fuse__out o;
  char got[16];
  size_t i;
  for (i = 0; i < 10 && pt->p[i]; i++) got[i] = pt->p[i];
  got[i] = 0;
  o.buf = pt->error;
  o.len = 0;
  o.cap = sizeof pt->error;
  o.write = NULL;
  o.user = NULL;
  pt->error[0] = 0;
  fuse__puts(&o, "position ");
  fuse__put_int(&o, (int64_t)(pt->p - pt->text) + 1);
  fuse__puts(&o, ": expected ");
  fuse__puts(&o, expected);
  fuse__puts(&o, *pt->p ? ", found '" : ", found the end of the pattern");
  if (*pt->p) {
    fuse__puts(&o, got);
    fuse__puts(&o, i == 10 ? "...'" : "'");
  }
  return -1;
}

static void fuse__pattern_skip(fuse__pattern *pt) {
  while (*pt->p == ' ' || *pt->p == '\t' || *pt->p == '\n' || *pt->p == '\r') pt->p++;
}

static int fuse__pattern_accept(fuse__pattern *pt, char c) {
  fuse__pattern_skip(pt);
  if (*pt->p != c) return 0;
  pt->p++;
  return 1;
}

static int fuse__pattern_ident(fuse__pattern *pt, char *out, size_t cap) {
  fuse__pattern_skip(pt);
  return fuse__scan_ident(&pt->p, out, cap);
}

static int fuse__pattern_new(fuse__pattern *pt, int kind) {
  fuse__pat *n;
  if (pt->num_nodes == FUSE__PAT_MAX_NODES) return fuse__pattern_fail(pt, "a smaller pattern");
  n = &pt->nodes[pt->num_nodes];
  memset(n, 0, sizeof *n);
  n->kind = kind;
  n->capture = -1;
  return pt->num_nodes++;
}

static int fuse__pattern_op_bit(fuse__pattern *pt, const char *name, uint64_t *mask) {
  int op;
  for (op = FUSE__OP_CONV2D; op < FUSE__OP_COPY; op++)
    if (strcmp(name, fuse__ops[op].name) == 0) {
      *mask |= (uint64_t)1 << op;
      return 1;
    }
  return fuse__pattern_fail(pt, "an op name (conv2d, matmul, add, relu, clip, reshape, ...)"), 0;
}

static int fuse__pattern_alt(fuse__pattern *pt);

/* op spec already read into mask; reads [attrs], ?, (args) */
static int fuse__pattern_op(fuse__pattern *pt, uint64_t mask) {
  int id = fuse__pattern_new(pt, FUSE__PAT_OP), args[FUSE__PAT_MAX_NODES], n = 0, i;
  if (id < 0) return -1;
  pt->nodes[id].ops = mask;
  pt->nodes[id].first_attr = pt->num_attrs;
  if (fuse__pattern_accept(pt, '[')) {
    do {
      fuse__pat_attr *a;
      double v;
      size_t used;
      if (pt->num_attrs == FUSE__PAT_MAX_ATTRS) return fuse__pattern_fail(pt, "fewer attributes");
      a = &pt->attrs[pt->num_attrs];
      memset(a, 0, sizeof *a);
      if (!fuse__pattern_ident(pt, a->name, sizeof a->name)) return fuse__pattern_fail(pt, "an attribute name");
      if (!fuse__pattern_accept(pt, '=')) return fuse__pattern_fail(pt, "'=' after the attribute name");
      if (fuse__pattern_accept(pt, '[')) {
        a->is_list = 1;
        if (!fuse__pattern_accept(pt, ']')) {
          do {
            fuse__pattern_skip(pt);
            if (a->count == FUSE_MAX_RANK) return fuse__pattern_fail(pt, "at most 8 list entries");
            if (!(used = fuse__parse_number(pt->p, &v))) return fuse__pattern_fail(pt, "a number");
            pt->p += used;
            a->v[a->count++] = v;
          } while (fuse__pattern_accept(pt, ','));
          if (!fuse__pattern_accept(pt, ']')) return fuse__pattern_fail(pt, "',' or ']'");
        }
      } else {
        fuse__pattern_skip(pt);
        if (!(used = fuse__parse_number(pt->p, &v))) return fuse__pattern_fail(pt, "a number or [list]");
        pt->p += used;
        a->v[0] = v;
        a->count = 1;
      }
      pt->num_attrs++;
      pt->nodes[id].num_attrs++;
    } while (fuse__pattern_accept(pt, ','));
    if (!fuse__pattern_accept(pt, ']')) return fuse__pattern_fail(pt, "',' or ']' closing the attributes");
  }
  if (fuse__pattern_accept(pt, '?')) pt->nodes[id].optional = 1;
  if (!fuse__pattern_accept(pt, '(')) return fuse__pattern_fail(pt, "'(' and the op's operands");
  if (!fuse__pattern_accept(pt, ')')) {
    do {
      fuse__pattern_skip(pt);
      if (strncmp(pt->p, "...", 3) == 0) {
        pt->p += 3;
        pt->nodes[id].ellipsis = 1;
        break;
      }
      if (n == FUSE__PAT_MAX_NODES) return fuse__pattern_fail(pt, "fewer operands");
      if ((args[n++] = fuse__pattern_alt(pt)) < 0) return -1;
    } while (fuse__pattern_accept(pt, ','));
    if (!fuse__pattern_accept(pt, ')')) return fuse__pattern_fail(pt, "',' or ')' after an operand pattern");
  }
  if (pt->nodes[id].optional && n == 0)
    return fuse__pattern_fail(pt, "an operand: op?(P, ...) stands for P when the op is absent");
  if (pt->num_args + n > FUSE__PAT_MAX_NODES) return fuse__pattern_fail(pt, "a smaller pattern");
  pt->nodes[id].first_arg = pt->num_args;
  pt->nodes[id].num_args = n;
  for (i = 0; i < n; i++) pt->args[pt->num_args++] = args[i];
  return id;
}

static int fuse__pattern_primary1(fuse__pattern *pt);

/* Nesting is bounded, so no pattern text can exhaust the stack. */
static int fuse__pattern_primary(fuse__pattern *pt) {
  int id;
  if (++pt->depth > FUSE__PAT_MAX_NODES)
    return fuse__pattern_fail(pt, "a pattern nested at most 256 deep");
  id = fuse__pattern_primary1(pt);
  pt->depth--;
  return id;
}

static int fuse__pattern_primary1(fuse__pattern *pt) {
  char word[32];
  fuse__pattern_skip(pt);
  if (*pt->p == '*') {
    pt->p++;
    return fuse__pattern_new(pt, FUSE__PAT_ANY);
  }
  if (*pt->p == '$') {
    int slot, id;
    const char *name;
    size_t len;
    pt->p++;
    if (!fuse__is_ident_start((unsigned char)*pt->p))
      return fuse__pattern_fail(pt, "a capture name after '$'");
    name = pt->p;
    while (fuse__is_ident_char((unsigned char)*pt->p)) pt->p++;
    len = (size_t)(pt->p - name);
    for (slot = 0; slot < pt->num_captures; slot++)
      if (pt->capture_len[slot] == len && memcmp(pt->captures[slot], name, len) == 0) break;
    if (slot == pt->num_captures) {
      if (slot == FUSE__PAT_MAX_CAPTURES) return fuse__pattern_fail(pt, "at most 16 capture names");
      pt->captures[slot] = name;
      pt->capture_len[slot] = len;
      pt->num_captures++;
    }
    if (fuse__pattern_accept(pt, ':')) {
      if ((id = fuse__pattern_primary(pt)) < 0) return -1;
      if (pt->nodes[id].capture >= 0) return fuse__pattern_fail(pt, "one capture name per pattern");
    } else if ((id = fuse__pattern_new(pt, FUSE__PAT_ANY)) < 0) {
      return -1;
    }
    pt->nodes[id].capture = slot;
    return id;
  }
  if (*pt->p == '(') { /* (relu|clip)(...) or a grouped pattern */
    const char *save = pt->p;
    uint64_t mask = 0;
    pt->p++;
    if (fuse__pattern_ident(pt, word, sizeof word) && strcmp(word, "const") != 0) {
      for (;;) {
        if (!fuse__pattern_op_bit(pt, word, &mask)) return -1;
        if (fuse__pattern_accept(pt, ')')) break;
        if (!fuse__pattern_accept(pt, '|') || !fuse__pattern_ident(pt, word, sizeof word)) {
          mask = 0;
          break;
        }
      }
      fuse__pattern_skip(pt);
      if (mask && (*pt->p == '(' || *pt->p == '?' || *pt->p == '[')) return fuse__pattern_op(pt, mask);
    }
    pt->p = save + 1; /* a grouped pattern */
    {
      int id = fuse__pattern_alt(pt);
      if (id < 0) return -1;
      if (!fuse__pattern_accept(pt, ')')) return fuse__pattern_fail(pt, "')' closing the group");
      return id;
    }
  }
  if (!fuse__pattern_ident(pt, word, sizeof word)) return fuse__pattern_fail(pt, "a pattern: *, $x, const or op(...)");
  if (strcmp(word, "const") == 0) return fuse__pattern_new(pt, FUSE__PAT_CONST);
  {
    uint64_t mask = 0;
    const char *at = pt->p - strlen(word);
    if (!fuse__pattern_op_bit(pt, word, &mask)) {
      pt->p = at;
      return fuse__pattern_fail(pt, "an op name (conv2d, matmul, add, relu, clip, reshape, ...)");
    }
    return fuse__pattern_op(pt, mask);
  }
}

static int fuse__pattern_alt(fuse__pattern *pt) {
  int left = fuse__pattern_primary(pt);
  while (left >= 0 && fuse__pattern_accept(pt, '|')) {
    int right = fuse__pattern_primary(pt), id;
    if (right < 0) return -1;
    if ((id = fuse__pattern_new(pt, FUSE__PAT_ALT)) < 0) return -1;
    if (pt->num_args + 2 > FUSE__PAT_MAX_NODES) return fuse__pattern_fail(pt, "a smaller pattern");
    pt->nodes[id].first_arg = pt->num_args;
    pt->nodes[id].num_args = 2;
    pt->args[pt->num_args++] = left;
    pt->args[pt->num_args++] = right;
    left = id;
  }
  return left;
}

static int fuse__pattern_parse(fuse__pattern *pt, const char *text) {
  pt->num_nodes = pt->num_args = pt->num_attrs = pt->num_captures = pt->depth = 0;
  pt->error[0] = 0;
  pt->text = pt->p = text ? text : "";
  if (!text) return fuse__pattern_fail(pt, "a pattern (it is NULL)"), 0;
  pt->root = fuse__pattern_alt(pt);
  if (pt->root < 0) return 0;
  fuse__pattern_skip(pt);
  if (*pt->p) return fuse__pattern_fail(pt, "the end of the pattern"), 0;
  return 1;
}

/* ------------------------------------------------------------------ matcher -- */

struct fuse_match {
  const fuse_graph *g;
  const fuse__pattern *pt;
  fuse_value root;
  fuse_value captures[FUSE__PAT_MAX_CAPTURES];
  int num_members;
  fuse_value members[FUSE__MATCH_MAX]; /* matched ops in the pattern's post-order */
  const int *claimed;                  /* per node: 1 if already in a composite */
  const int *use_first, *use_list;     /* users of each node (fuse__users), or NULL: then no
                                          operand order is preferred for escaping */
};

FUSE_API fuse_value fuse_match_capture(const fuse_match *m, const char *name) {
  int i;
  if (!m || !name) return FUSE_NONE;
  for (i = 0; i < m->pt->num_captures; i++)
    if (m->pt->capture_len[i] == strlen(name) &&
        memcmp(m->pt->captures[i], name, m->pt->capture_len[i]) == 0)
      return m->captures[i];
  return FUSE_NONE;
}

FUSE_API fuse_value fuse_match_root(const fuse_match *m) { return m ? m->root : FUSE_NONE; }

/* A node attribute in the text form's terms, as numbers. */
static int fuse__node_attr(const fuse__node *n, const char *name, double *v) {
  const fuse__attrs *a = &n->a;
  const int *list = NULL;
  int count = 0, i;
  if (n->op == FUSE__OP_CONV2D) {
    if (!strcmp(name, "strides")) list = a->conv.strides, count = 2;
    else if (!strcmp(name, "padding")) list = a->conv.padding, count = 4;
    else if (!strcmp(name, "dilation")) list = a->conv.dilation, count = 2;
    else if (!strcmp(name, "groups")) list = &a->conv.groups, count = 1;
  } else if (n->op == FUSE__OP_MAX_POOL2D || n->op == FUSE__OP_AVG_POOL2D) {
    if (!strcmp(name, "kernel")) list = a->pool.kernel, count = 2;
    else if (!strcmp(name, "strides")) list = a->pool.strides, count = 2;
    else if (!strcmp(name, "padding")) list = a->pool.padding, count = 4;
    else if (!strcmp(name, "dilation")) list = a->pool.dilation, count = 2;
    else if (!strcmp(name, "ceil_mode")) list = &a->pool.ceil_mode, count = 1;
    else if (!strcmp(name, "count_include_pad")) list = &a->pool.count_include_pad, count = 1;
  } else if (n->op == FUSE__OP_CLIP && (!strcmp(name, "lo") || !strcmp(name, "hi"))) {
    v[0] = name[0] == 'l' ? a->clip.lo : a->clip.hi;
    return 1;
  } else if (n->op == FUSE__OP_BATCH_NORM && !strcmp(name, "eps")) {
    v[0] = a->eps;
    return 1;
  } else if ((n->op == FUSE__OP_FLATTEN || n->op == FUSE__OP_CONCAT || n->op == FUSE__OP_SOFTMAX) &&
             !strcmp(name, "axis")) {
    v[0] = a->axis;
    return 1;
  } else if (n->op == FUSE__OP_TRANSPOSE && !strcmp(name, "perm")) {
    list = a->perm, count = n->rank;
  } else if (n->op == FUSE__OP_RESHAPE && !strcmp(name, "shape")) {
    for (i = 0; i < n->rank; i++) v[i] = (double)n->shape[i];
    return n->rank ? n->rank : -1;
  }
  for (i = 0; i < count; i++) v[i] = list[i];
  return count;
}

static int fuse__attrs_match(const fuse__pattern *pt, const fuse__pat *p, const fuse__node *n) {
  int i, k;
  for (i = 0; i < p->num_attrs; i++) {
    const fuse__pat_attr *a = &pt->attrs[p->first_attr + i];
    double v[FUSE_MAX_RANK];
    int count = fuse__node_attr(n, a->name, v);
    if (count < 0) count = 0; /* reshape to rank 0 */
    else if (count == 0) return 0;
    if (count != a->count) return 0;
    for (k = 0; k < count; k++)
      if (v[k] != a->v[k] && !(n->op == FUSE__OP_CLIP && (float)v[k] == (float)a->v[k])) return 0;
  }
  return 1;
}

static int fuse__is_commutative(int op) {
  return op == FUSE__OP_ADD || op == FUSE__OP_MUL || op == FUSE__OP_MAXIMUM || op == FUSE__OP_MINIMUM;
}

typedef struct fuse__mark {
  int num_members;
  fuse_value captures[FUSE__PAT_MAX_CAPTURES];
} fuse__mark;

static void fuse__save(const fuse_match *m, fuse__mark *k) {
  k->num_members = m->num_members;
  memcpy(k->captures, m->captures, sizeof k->captures);
}
static void fuse__restore(fuse_match *m, const fuse__mark *k) {
  m->num_members = k->num_members;
  memcpy(m->captures, k->captures, sizeof k->captures);
}

static int fuse__match(fuse_match *m, int pi, fuse_value v);

/* Matches the op pattern's operand patterns against node operands, in the given order. */
static int fuse__match_args(fuse_match *m, const fuse__pat *p, const fuse__node *n, int swap) {
  int i;
  for (i = 0; i < p->num_args; i++) {
    int pa = m->pt->args[p->first_arg + i], k = swap ? 1 - i : i;
    if (k >= n->num_in) { /* reshape's target shape: only * or const stand for it */
      const fuse__pat *q = &m->pt->nodes[pa];
      if (!(q->kind == FUSE__PAT_ANY || q->kind == FUSE__PAT_CONST) || q->capture >= 0) return 0;
      continue;
    }
    if (!fuse__match(m, pa, n->in[k])) return 0;
  }
  return 1;
}

/* Whether an operand of v that the match just took as an op (members past `from`) is also
   read outside v or is a graph output: then the match would escape through it. */
static int fuse__operand_escapes(const fuse_match *m, fuse_value v, int from) {
  const fuse__node *n = &m->g->nodes[v];
  int k, i, j;
  for (k = 0; k < n->num_in; k++) {
    fuse_value u = n->in[k];
    for (i = from; i < m->num_members && m->members[i] != u; i++) {}
    if (i == m->num_members) continue;
    for (j = 0; j < m->g->num_outputs; j++)
      if (m->g->outputs[j] == u) return 1;
    for (j = m->use_first[u]; j < m->use_first[u + 1]; j++)
      if (m->use_list[j] != v) return 1;
  }
  return 0;
}

static int fuse__match_op(fuse_match *m, const fuse__pat *p, fuse_value v) {
  const fuse__node *n = &m->g->nodes[v];
  int arity = n->num_in + (n->op == FUSE__OP_RESHAPE), i;
  int either = fuse__is_commutative(n->op) && p->num_args >= 1 && p->num_args <= 2;
  fuse__mark mark;
  if (n->op > 63 || !(p->ops & ((uint64_t)1 << n->op)) || m->claimed[v]) return 0;
  if (p->ellipsis ? p->num_args > arity : p->num_args != arity) return 0;
  if (!fuse__attrs_match(m->pt, p, n)) return 0;
  fuse__save(m, &mark);
  if (!fuse__match_args(m, p, n, 0)) {
    fuse__restore(m, &mark);
    /* commutative: the other order too (with `...`, the listed operand may be either) */
    if (!(either && fuse__match_args(m, p, n, 1))) {
      fuse__restore(m, &mark);
      return 0;
    }
  } else if (either && m->use_first && fuse__operand_escapes(m, v, mark.num_members)) {
    /* both orders may fit, e.g. add(conv + bias, x) where x is another conv + bias that the
       next block reads too: prefer the order whose ops are read only here */
    fuse__restore(m, &mark);
    if (!fuse__match_args(m, p, n, 1) || fuse__operand_escapes(m, v, mark.num_members)) {
      fuse__restore(m, &mark);
      fuse__match_args(m, p, n, 0); /* the first order again: it matched before */
    }
  }
  for (i = 0; i < m->num_members; i++)
    if (m->members[i] == v) return 1; /* the same op reached twice */
  if (m->num_members == FUSE__MATCH_MAX) return 0;
  m->members[m->num_members++] = v;
  return 1;
}

static int fuse__match(fuse_match *m, int pi, fuse_value v) {
  const fuse__pat *p = &m->pt->nodes[pi];
  const fuse__node *n = &m->g->nodes[v];
  fuse__mark mark;
  int ok;
  if (p->capture >= 0 && m->captures[p->capture] != FUSE_NONE && m->captures[p->capture] != v)
    return 0;
  fuse__save(m, &mark);
  switch (p->kind) {
  case FUSE__PAT_ANY: ok = 1; break;
  case FUSE__PAT_CONST: ok = n->op == FUSE__OP_CONST; break;
  case FUSE__PAT_ALT:
    ok = fuse__match(m, m->pt->args[p->first_arg], v);
    if (!ok) {
      fuse__restore(m, &mark);
      ok = fuse__match(m, m->pt->args[p->first_arg + 1], v);
    }
    break;
  default:
    ok = fuse__match_op(m, p, v);
    if (!ok && p->optional) { /* op?(P, ...): the op absent, P in its place */
      fuse__restore(m, &mark);
      ok = fuse__match(m, m->pt->args[p->first_arg], v);
    }
    break;
  }
  if (!ok) {
    fuse__restore(m, &mark);
    return 0;
  }
  if (p->capture >= 0) m->captures[p->capture] = v;
  return 1;
}

