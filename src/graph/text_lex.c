/* --------------------------------------------------------------- text parser -- */

#define FUSE__MAX_PARSE_ATTRS 8

typedef struct fuse__parse_attr {
  char name[24];
  double v[FUSE_MAX_RANK];
  int count, is_list, line, col;
} fuse__parse_attr;

typedef struct fuse__parser {
  const char *p, *line_start;
  int line;
  fuse_graph *g;
  char *name;             /* the last label's text (NUL-terminated) */
  size_t name_cap;
  int name_numbered;      /* the label was %N: parser-local, the value stays unnamed */
  int at_line, at_col;    /* where the statement or operand being read starts */
  int64_t *num_keys;      /* %N labels: open-addressing table N -> value */
  fuse_value *num_vals;
  int num_cap, num_count;
} fuse__parser;

static int fuse__text_col(const fuse__parser *ps) { return (int)(ps->p - ps->line_start) + 1; }

/* Records a parse error at the current position; returns 0. */
static int fuse__text_fail(fuse__parser *ps, const char *what) {
  char got[24];
  size_t i;
  for (i = 0; i < 12 && ps->p[i] && ps->p[i] != '\n'; i++) got[i] = ps->p[i];
  got[i] = 0;
  fuse__fail(ps->g, FUSE_ERROR_PARSE, "line %d, column %d: expected %s, found %s%s%s", ps->line,
             fuse__text_col(ps), what, *ps->p ? "'" : "the end of the text", got,
             *ps->p ? (i == 12 ? "...'" : "'") : "");
  return 0;
}

static void fuse__text_skip(fuse__parser *ps) {
  for (;;) {
    char c = *ps->p;
    if (c == '\n') {
      ps->line++;
      ps->line_start = ++ps->p;
    } else if (c == ' ' || c == '\t' || c == '\r') {
      ps->p++;
    } else if (c == '#') {
      while (*ps->p && *ps->p != '\n') ps->p++;
    } else {
      return;
    }
  }
}

static int fuse__text_accept(fuse__parser *ps, char c) {
  fuse__text_skip(ps);
  if (*ps->p != c) return 0;
  ps->p++;
  return 1;
}

static int fuse__text_expect(fuse__parser *ps, char c, const char *what) {
  return fuse__text_accept(ps, c) ? 1 : fuse__text_fail(ps, what);
}

static int fuse__text_word(fuse__parser *ps, char *out, size_t cap) {
  fuse__text_skip(ps);
  return fuse__scan_ident(&ps->p, out, cap);
}

static int fuse__text_name_char(fuse__parser *ps, size_t at, char c) {
  if (at + 1 >= ps->name_cap) {
    size_t cap = ps->name_cap * 2;
    char *bigger = (char *)fuse__alloc(&ps->g->alloc, cap, 1);
    if (!bigger) return fuse__oom(ps->g, "parse");
    memcpy(bigger, ps->name, at);
    fuse__free(&ps->g->alloc, ps->name);
    ps->name = bigger;
    ps->name_cap = cap;
  }
  ps->name[at] = c;
  ps->name[at + 1] = 0;
  return 1;
}

static int fuse__hex(int c) {
  return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10
                                        : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

/* Reads a "quoted" string (escapes \" \\ \xHH) into ps->name. */
static int fuse__text_quoted(fuse__parser *ps) {
  size_t n = 0;
  ps->name[0] = 0;
  for (ps->p++; *ps->p != '"'; ps->p++) {
    char c = *ps->p;
    if (!c || c == '\n') return fuse__text_fail(ps, "a closing '\"'");
    if (c == '\\') {
      c = *++ps->p;
      if (c == 'x' && fuse__hex(ps->p[1]) >= 0 && fuse__hex(ps->p[2]) >= 0) {
        c = (char)(fuse__hex(ps->p[1]) * 16 + fuse__hex(ps->p[2]));
        ps->p += 2;
      } else if (c != '"' && c != '\\') {
        return fuse__text_fail(ps, "an escape \\\", \\\\ or \\xHH");
      }
      if (c == 0) return fuse__text_fail(ps, "a name without a NUL byte");
    }
    if (!fuse__text_name_char(ps, n++, c)) return 0;
  }
  ps->p++;
  if (n == 0) return fuse__text_fail(ps, "a non-empty name");
  return 1;
}

/* Reads a label: %ident, %"quoted", or %N. */
static int fuse__text_label(fuse__parser *ps) {
  size_t n = 0;
  fuse__text_skip(ps);
  if (*ps->p != '%') return fuse__text_fail(ps, "a value like %x");
  ps->p++;
  ps->name[0] = 0;
  ps->name_numbered = 0;
  if (*ps->p >= '0' && *ps->p <= '9') {
    ps->name_numbered = 1;
    while (*ps->p >= '0' && *ps->p <= '9') {
      if (n > 15) return fuse__text_fail(ps, "a shorter value number");
      if (!fuse__text_name_char(ps, n++, *ps->p++)) return 0;
    }
    return 1;
  }
  if (*ps->p == '"') return fuse__text_quoted(ps);
  if (!fuse__is_ident_start((unsigned char)*ps->p)) return fuse__text_fail(ps, "a value name after '%'");
  while (fuse__is_ident_char((unsigned char)*ps->p))
    if (!fuse__text_name_char(ps, n++, *ps->p++)) return 0;
  return 1;
}

static int64_t fuse__text_label_number(const fuse__parser *ps) {
  int64_t v = 0;
  const char *s;
  for (s = ps->name; *s; s++) v = v * 10 + (*s - '0');
  return v;
}

/* Slot of %N in the parser's table (empty slots hold -1). */
static int fuse__text_num_slot(const fuse__parser *ps, int64_t key) {
  /* unsigned: %1555555555555 times the constant overflows int64 (UBSan, fuzz_text) */
  uint32_t i = (uint32_t)((uint64_t)key * 2654435761u) & (uint32_t)(ps->num_cap - 1);
  while (ps->num_keys[i] != -1 && ps->num_keys[i] != key) i = (i + 1) & (uint32_t)(ps->num_cap - 1);
  return (int)i;
}

static fuse_value fuse__text_lookup(fuse__parser *ps) {
  if (ps->name_numbered) {
    int slot;
    if (!ps->num_cap) return FUSE_NONE;
    slot = fuse__text_num_slot(ps, fuse__text_label_number(ps));
    return ps->num_keys[slot] == -1 ? FUSE_NONE : ps->num_vals[slot];
  }
  return fuse__find(ps->g, ps->name);
}

/* Binds the last label to v (a %N label in the parser's table; a name in the graph). */
static int fuse__text_bind(fuse__parser *ps, fuse_value v) {
  fuse_graph *g = ps->g;
  int slot, i;
  if (!ps->name_numbered) return fuse__set_name(g, v, ps->name, "parse");
  if ((ps->num_count + 1) * 2 > ps->num_cap) {
    int old_cap = ps->num_cap, cap = old_cap ? old_cap * 2 : 64;
    int64_t *keys = (int64_t *)fuse__alloc(&g->alloc, (size_t)cap * sizeof(int64_t), 16);
    fuse_value *vals = (fuse_value *)fuse__alloc(&g->alloc, (size_t)cap * sizeof(fuse_value), 16);
    int64_t *old_keys = ps->num_keys;
    fuse_value *old_vals = ps->num_vals;
    if (!keys || !vals) {
      fuse__free(&g->alloc, keys);
      fuse__free(&g->alloc, vals);
      return fuse__oom(g, "parse");
    }
    for (i = 0; i < cap; i++) keys[i] = -1;
    ps->num_keys = keys;
    ps->num_vals = vals;
    ps->num_cap = cap;
    for (i = 0; i < old_cap; i++) {
      if (old_keys[i] == -1) continue;
      slot = fuse__text_num_slot(ps, old_keys[i]);
      keys[slot] = old_keys[i];
      vals[slot] = old_vals[i];
    }
    fuse__free(&g->alloc, old_keys);
    fuse__free(&g->alloc, old_vals);
  }
  slot = fuse__text_num_slot(ps, fuse__text_label_number(ps));
  ps->num_keys[slot] = fuse__text_label_number(ps);
  ps->num_vals[slot] = v;
  ps->num_count++;
  return 1;
}

static int fuse__text_number(fuse__parser *ps, double *v) {
  size_t used;
  fuse__text_skip(ps);
  used = fuse__parse_number(ps->p, v);
  if (!used || fuse__is_ident_char((unsigned char)ps->p[used])) return fuse__text_fail(ps, "a number");
  ps->p += used;
  return 1;
}

static int fuse__text_float(fuse__parser *ps, float *out) {
  double v;
  if (!fuse__text_number(ps, &v)) return 0;
  if (v == v && fabs(v) >= 3.4028235677973366e38 && fabs(v) != HUGE_VAL) /* FLT_MAX + ulp/2 */
    return fuse__text_fail(ps, "a number within float range");
  *out = (float)v;
  return 1;
}

/* Reads [d0, d1, ...] as a shape (allow_minus_one: reshape targets). */
static int fuse__text_shape(fuse__parser *ps, int *rank, int64_t *dims) {
  *rank = 0;
  if (!fuse__text_expect(ps, '[', "'[' starting a shape")) return 0;
  if (fuse__text_accept(ps, ']')) return 1;
  do {
    double v;
    if (*rank == FUSE_MAX_RANK) return fuse__text_fail(ps, "at most 8 dimensions");
    if (!fuse__text_number(ps, &v)) return 0;
    if (v != floor(v) || v < -1 || v > (double)FUSE__MAX_DIM)
      return fuse__text_fail(ps, "a dimension (a whole number 1..2147483647)");
    dims[(*rank)++] = (int64_t)v;
  } while (fuse__text_accept(ps, ','));
  return fuse__text_expect(ps, ']', "',' or ']' in a shape");
}

/* A declaration's type and shape: "[...]" is float32, "u8[...]" (i8, i32, f32) typed. */
static int fuse__text_type_shape(fuse__parser *ps, int *type, int *rank, int64_t *dims) {
  *type = FUSE_FLOAT32;
  fuse__text_skip(ps);
  if (*ps->p != '[') {
    char word[8];
    const char *start = ps->p;
    for (*type = FUSE_FLOAT32; *type <= FUSE_INT32; (*type)++)
      if (fuse__text_word(ps, word, sizeof word) && strcmp(word, fuse__type_name(*type)) == 0) break;
      else ps->p = start;
    if (*type > FUSE_INT32) return fuse__text_fail(ps, "'[' or an element type (f32, u8, i8, i32)");
  }
  return fuse__text_shape(ps, rank, dims);
}

static int fuse__text_attr(fuse__parser *ps, fuse__parse_attr *a) {
  a->count = 0;
  a->is_list = 0;
  a->line = ps->line;
  a->col = fuse__text_col(ps);
  if (!fuse__text_word(ps, a->name, sizeof a->name)) return fuse__text_fail(ps, "an attribute name");
  if (!fuse__text_expect(ps, '=', "'=' after the attribute name")) return 0;
  if (fuse__text_accept(ps, '[')) {
    a->is_list = 1;
    if (fuse__text_accept(ps, ']')) return 1;
    do {
      if (a->count == FUSE_MAX_RANK) return fuse__text_fail(ps, "at most 8 list entries");
      if (!fuse__text_number(ps, &a->v[a->count++])) return 0;
    } while (fuse__text_accept(ps, ','));
    return fuse__text_expect(ps, ']', "',' or ']' in a list");
  }
  a->count = 1;
  return fuse__text_number(ps, &a->v[0]);
}


/* Checks one parsed attribute against the op's specs; 0 with a parse error if it does not fit. */
static int fuse__text_check_attr(fuse__parser *ps, int op, const fuse__parse_attr *a) {
  const fuse__attr_spec *s = fuse__ops[op].attrs;
  int i, whole = 1;
  for (; s->name; s++)
    if (strcmp(s->name, a->name) == 0) break;
  if (!s->name)
    return fuse__fail(ps->g, FUSE_ERROR_PARSE, "line %d, column %d: %s has no attribute '%s'",
                      a->line, a->col, fuse__ops[op].name, a->name),
           0;
  for (i = 0; i < a->count; i++)
    whole &= a->v[i] == floor(a->v[i]) && fabs(a->v[i]) <= 2147483647.0;
  if ((s->form == 'f' && (a->is_list || a->count != 1)) ||
      (s->form == 'i' && (a->is_list || !whole)) ||
      ((s->form == '2' || s->form == '4') && (!a->is_list || !whole || a->count != s->form - '0')) ||
      (s->form == 'l' && (!a->is_list || !whole)) || (s->form == 'F' && !a->is_list))
    return fuse__fail(ps->g, FUSE_ERROR_PARSE, "line %d, column %d: %s attribute '%s' must be %s",
                      a->line, a->col, fuse__ops[op].name, a->name,
                      s->form == 'f'   ? "a number"
                      : s->form == 'i' ? "a whole number"
                      : s->form == '2' ? "a list of 2 whole numbers"
                      : s->form == '4' ? "a list of 4 whole numbers"
                      : s->form == 'F' ? "a list of numbers"
                                       : "a list of whole numbers"),
           0;
  return 1;
}

static const fuse__parse_attr *fuse__text_find_attr(const fuse__parse_attr *attrs, int n,
                                                 const char *name) {
  int i;
  for (i = 0; i < n; i++)
    if (strcmp(attrs[i].name, name) == 0) return &attrs[i];
  return NULL;
}

static void fuse__text_ints(const fuse__parse_attr *attrs, int n, const char *name, int *out,
                         int count) {
  const fuse__parse_attr *a = fuse__text_find_attr(attrs, n, name);
  int i;
  if (a)
    for (i = 0; i < count; i++) out[i] = (int)a->v[i];
}

