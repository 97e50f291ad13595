/* ------------------------------------------------------ text form: statements -- */

/* A builder failed: put the line in front of its message, keep its code. */
static void fuse__text_locate_error(fuse__parser *ps) {
  char msg[sizeof ps->g->error];
  fuse__out o;
  memcpy(msg, ps->g->error, sizeof msg);
  o.buf = ps->g->error;
  o.len = 0;
  o.cap = sizeof ps->g->error;
  o.write = NULL;
  o.user = NULL;
  fuse__puts(&o, "line ");
  fuse__put_int(&o, ps->at_line);
  fuse__puts(&o, ", column ");
  fuse__put_int(&o, ps->at_col);
  fuse__puts(&o, ": ");
  fuse__puts(&o, msg);
}

/* An operand: a label or a number (which becomes a scalar constant). */
static int fuse__text_operand(fuse__parser *ps, fuse_value *out) {
  fuse__text_skip(ps);
  if (*ps->p != '%') {
    float v = 0;
    if (!fuse__text_float(ps, &v)) return 0;
    *out = fuse_scalar(ps->g, v);
    return *out != FUSE_NONE;
  }
  {
    int line = ps->line, col = fuse__text_col(ps);
    if (!fuse__text_label(ps)) return 0;
    if ((*out = fuse__text_lookup(ps)) == FUSE_NONE)
      return fuse__fail(ps->g, FUSE_ERROR_PARSE,
                        "line %d, column %d: %%%s is not defined before its use", line, col,
                        ps->name),
             0;
  }
  return 1;
}

/* "const" after "%label: shape =": the constant, with at most 4 values inline in braces.
   FUSE_NONE: it failed (the graph says why). */
static fuse_value fuse__text_const(fuse__parser *ps, const char *label, int numbered, int type,
                                   int declared_rank, const int64_t *declared) {
  fuse_graph *g = ps->g;
  float vals[FUSE__INLINE_CONST_MAX];
  int count = 0, k;
  if (declared_rank < 0) {
    fuse__fail(g, FUSE_ERROR_PARSE, "line %d, column %d: a constant needs its shape: %%%s: [...] = const",
               ps->at_line, ps->at_col, label);
    return FUSE_NONE;
  }
  if (fuse__text_accept(ps, '{')) {
    do {
      if (count == FUSE__INLINE_CONST_MAX) {
        fuse__text_fail(ps, "at most 4 inline values (fill larger constants by name)");
        return FUSE_NONE;
      }
      if (!fuse__text_float(ps, &vals[count++])) return FUSE_NONE;
    } while (fuse__text_accept(ps, ','));
    if (!fuse__text_expect(ps, '}', "',' or '}' after constant values")) return FUSE_NONE;
    if (!fuse__check_shape(g, "const", declared_rank, declared)) return FUSE_NONE;
    if (count != fuse__numel(declared_rank, declared)) {
      fuse__fail(g, FUSE_ERROR_PARSE, "line %d, column %d: constant %S has %D elements but %d values",
                 ps->at_line, ps->at_col, declared_rank, declared, fuse__numel(declared_rank, declared), count);
      return FUSE_NONE;
    }
  }
  if (type != FUSE_FLOAT32) { /* whole numbers in the type's range, stored as the type */
    int32_t i32[FUSE__INLINE_CONST_MAX];
    uint8_t u8[FUSE__INLINE_CONST_MAX];
    double lo, hi;
    fuse__type_range(type, &lo, &hi);
    for (k = 0; k < count; k++) {
      if (vals[k] != floorf(vals[k]) || vals[k] < lo || vals[k] > hi) {
        fuse__fail(g, FUSE_ERROR_PARSE, "line %d, column %d: %f is not a %s value", ps->at_line,
                   ps->at_col, (double)vals[k], fuse__type_name(type));
        return FUSE_NONE;
      }
      i32[k] = (int32_t)vals[k];
      u8[k] = (uint8_t)(i32[k] & 0xff); /* u8 / i8: the byte */
    }
    return fuse_typed_constant(g, numbered ? NULL : label, (fuse_type)type, declared_rank,
                               declared, !count ? NULL : type == FUSE_INT32 ? (const void *)i32 : u8);
  }
  return fuse_constant(g, numbered ? NULL : label, declared_rank, declared, count ? vals : NULL);
}

/* One attribute "name=value" of op, at ps->p, into attrs[*n_at]. 0: failed. */
static int fuse__text_attribute(fuse__parser *ps, int op, fuse__parse_attr *attrs, int *n_at) {
  if (*n_at == FUSE__MAX_PARSE_ATTRS) {
    fuse__text_fail(ps, "fewer attributes");
    return 0;
  }
  if (!fuse__text_attr(ps, &attrs[*n_at]) || !fuse__text_check_attr(ps, op, &attrs[*n_at]))
    return 0;
  if (fuse__text_find_attr(attrs, *n_at, attrs[*n_at].name)) {
    fuse__fail(ps->g, FUSE_ERROR_PARSE, "line %d, column %d: attribute '%s' is given twice",
               ps->at_line, ps->at_col, attrs[*n_at].name);
    return 0;
  }
  (*n_at)++;
  return 1;
}

/* "(operands, name=value, ...)" after an op name: the operands into *in (grown here, the
   caller frees it), the attributes into attrs. 0: failed. */
static int fuse__text_arguments(fuse__parser *ps, int op, fuse_value **in, int *n_in,
                                fuse__parse_attr *attrs, int *n_at) {
  fuse_graph *g = ps->g;
  int cap_in = 0;
  if (!fuse__text_expect(ps, '(', "'(' after the op name")) return 0;
  if (fuse__text_accept(ps, ')')) return 1;
  do {
    fuse__text_skip(ps);
    if (fuse__is_ident_start((unsigned char)*ps->p)) {
      const char *q = ps->p;
      while (fuse__is_ident_char((unsigned char)*q)) q++;
      while (*q == ' ' || *q == '\t') q++;
      if (*q == '=') { /* an attribute */
        if (!fuse__text_attribute(ps, op, attrs, n_at)) return 0;
        continue;
      }
    }
    if (*n_at) {
      fuse__text_fail(ps, "an attribute (operands come first)");
      return 0;
    }
    if (*n_in == cap_in) {
      fuse_value *bigger = (fuse_value *)fuse__grow(&g->alloc, *in, *n_in, &cap_in, *n_in + 1,
                                                    sizeof(fuse_value));
      if (!bigger) {
        fuse__oom(g, "parse");
        return 0;
      }
      *in = bigger;
    }
    if (!fuse__text_operand(ps, &(*in)[(*n_in)++])) return 0;
  } while (fuse__text_accept(ps, ','));
  return fuse__text_expect(ps, ')', "',' or ')' after an operand");
}

/* "op(operands, attrs)" after "%label[: shape] =": the op built, its shape checked against
   the declared one. FUSE_NONE: it failed (the graph says why). */
static fuse_value fuse__text_op(fuse__parser *ps, int op, const char *word, const char *label,
                                int type, int declared_rank, const int64_t *declared) {
  fuse_graph *g = ps->g;
  fuse__parse_attr attrs[FUSE__MAX_PARSE_ATTRS];
  fuse_value v = FUSE_NONE, *in = NULL;
  int n_in = 0, n_at = 0;
  if (!fuse__text_arguments(ps, op, &in, &n_in, attrs, &n_at)) goto done;
  v = fuse__text_build(ps, op, in, n_in, attrs, n_at);
  if (v == FUSE_NONE) {
    if (strncmp(g->error, "line ", 5) != 0) fuse__text_locate_error(ps);
    goto done;
  }
  if (declared_rank >= 0 &&
      (declared_rank != g->nodes[v].rank ||
       memcmp(declared, g->nodes[v].shape, (size_t)declared_rank * sizeof(int64_t)) != 0)) {
    fuse__fail(g, FUSE_ERROR_PARSE, "line %d, column %d: %%%s is declared %S but %s gives %S", ps->at_line, ps->at_col, label,
               declared_rank, declared, word, g->nodes[v].rank, g->nodes[v].shape);
    v = FUSE_NONE;
  } else if (declared_rank >= 0 && type != g->nodes[v].type) {
    fuse__fail(g, FUSE_ERROR_PARSE, "line %d, column %d: %%%s is declared %s but %s gives %s",
               ps->at_line, ps->at_col, label, fuse__type_name(type), word,
               fuse__type_name(g->nodes[v].type));
    v = FUSE_NONE;
  }
done:
  fuse__free(&g->alloc, in);
  return v;
}

/* One body statement: %label[: shape] = const{...} | op(operands, attrs). */
static int fuse__text_statement(fuse__parser *ps) {
  int64_t declared[FUSE_MAX_RANK];
  int declared_rank = -1, type = FUSE_FLOAT32, op, ok = 0;
  char word[32];
  fuse_value v;
  fuse_graph *g = ps->g;
  char *label;
  int numbered;
  fuse__text_skip(ps);
  ps->at_line = ps->line;
  ps->at_col = fuse__text_col(ps);
  if (!fuse__text_label(ps)) return 0;
  if (fuse__text_lookup(ps) != FUSE_NONE)
    return fuse__fail(g, FUSE_ERROR_PARSE, "line %d, column %d: %%%s is defined twice", ps->at_line, ps->at_col, ps->name), 0;
  if (!(label = fuse__strdup(g, ps->name))) return fuse__oom(g, "parse");
  numbered = ps->name_numbered;
  if (fuse__text_accept(ps, ':') && !fuse__text_type_shape(ps, &type, &declared_rank, declared))
    goto done;
  if (!fuse__text_expect(ps, '=', "'=' after the value") || !fuse__text_word(ps, word, sizeof word)) {
    if (g->status == FUSE_OK) fuse__text_fail(ps, "an op name");
    goto done;
  }
  for (op = FUSE__OP_CONST; op < FUSE__OP_COPY; op++)
    if (strcmp(word, fuse__ops[op].name) == 0) break;
  if (op == FUSE__OP_COPY) {
    fuse__fail(g, FUSE_ERROR_PARSE, "line %d, column %d: unknown op '%s'", ps->at_line, ps->at_col, word);
    goto done;
  }
  v = op == FUSE__OP_CONST ? fuse__text_const(ps, label, numbered, type, declared_rank, declared)
                           : fuse__text_op(ps, op, word, label, type, declared_rank, declared);
  if (v == FUSE_NONE) goto done;
  /* bind the statement's own label (operands reused ps->name; it only ever grows) */
  ps->name_numbered = numbered;
  strcpy(ps->name, label);
  if (!fuse__text_bind(ps, v)) {
    if (strncmp(g->error, "line ", 5) != 0) fuse__text_locate_error(ps);
    goto done;
  }
  ok = 1;
done:
  fuse__free(&g->alloc, label);
  return ok;
}

/* composite "name" "function" codegen="x"|none region=N bind_constants=B { statements } */
static int fuse__text_composite(fuse__parser *ps) {
  fuse_graph *g = ps->g;
  char *text[3] = {NULL, NULL, NULL}, word[32];
  int region = -1, bind = 1, first, v, count = 0, ok = 0, i;
  fuse_value *members = NULL;
  ps->at_line = ps->line;
  ps->at_col = fuse__text_col(ps);
  ps->p += 9;
  for (i = 0; i < 2; i++) { /* name, function */
    fuse__text_skip(ps);
    if (*ps->p != '"') {
      fuse__text_fail(ps, i ? "the composite's function name in quotes" : "the composite's name in quotes");
      goto done;
    }
    if (!fuse__text_quoted(ps)) goto done;
    if (!(text[i] = fuse__strdup(g, ps->name))) {
      fuse__oom(g, "parse"); /* not a syntax error */
      goto done;
    }
  }
  while (fuse__text_word(ps, word, sizeof word)) {
    double num;
    if (!fuse__text_expect(ps, '=', "'=' after the composite attribute")) goto done;
    if (strcmp(word, "codegen") == 0) {
      fuse__text_skip(ps);
      if (*ps->p == '"') {
        if (!fuse__text_quoted(ps)) goto done;
        if (!(text[2] = fuse__strdup(g, ps->name))) {
          fuse__oom(g, "parse");
          goto done;
        }
      } else if (!fuse__text_word(ps, word, sizeof word) || strcmp(word, "none") != 0) {
        fuse__text_fail(ps, "codegen=\"name\" or codegen=none");
        goto done;
      }
    } else if (strcmp(word, "region") == 0 || strcmp(word, "bind_constants") == 0) {
      if (!fuse__text_number(ps, &num)) goto done;
      if (num != floor(num) || num < -1 || num > 2147483647.0) {
        fuse__text_fail(ps, "a whole number");
        goto done;
      }
      if (word[0] == 'r') region = (int)num;
      else bind = num != 0;
    } else {
      fuse__fail(g, FUSE_ERROR_PARSE, "line %d, column %d: a composite has no attribute '%s'",
                 ps->at_line, ps->at_col, word);
      goto done;
    }
  }
  if (!fuse__text_expect(ps, '{', "'{' opening the composite's body")) goto done;
  first = g->num_nodes;
  for (;;) {
    fuse__text_skip(ps);
    if (*ps->p == '}') break;
    if (*ps->p != '%') {
      fuse__text_fail(ps, "a statement '%x = op(...)' or '}' closing the composite");
      goto done;
    }
    if (!fuse__text_statement(ps)) goto done;
  }
  ps->p++;
  for (v = first; v < g->num_nodes; v++) count += g->nodes[v].op > FUSE__OP_CONST;
  if (!count) {
    fuse__fail(g, FUSE_ERROR_PARSE, "line %d: composite \"%s\" has no ops", ps->line, text[0]);
    goto done;
  }
  members = (fuse_value *)fuse__alloc(&g->alloc, (size_t)count * sizeof(fuse_value), 16);
  if (!members) {
    fuse__oom(g, "parse");
    goto done;
  }
  for (count = 0, v = first; v < g->num_nodes; v++)
    if (g->nodes[v].op > FUSE__OP_CONST) members[count++] = v;
  if (!fuse__composite_add(g, text[0], text[1], text[2], bind, members, count)) {
    fuse__oom(g, "parse");
    goto done;
  }
  g->composites[g->num_composites - 1].region = region;
  ok = 1;
done:
  for (i = 0; i < 3; i++) fuse__free(&g->alloc, text[i]);
  fuse__free(&g->alloc, members);
  return ok;
}

static int fuse__text_graph(fuse__parser *ps) {
  fuse_graph *g = ps->g;
  char word[16];
  const char *start;
  fuse__text_skip(ps);
  start = ps->p;
  if (!fuse__text_word(ps, word, sizeof word) || strcmp(word, "graph") != 0) {
    ps->p = start;
    return fuse__text_fail(ps, "'graph'");
  }
  if (!fuse__text_expect(ps, '(', "'(' after 'graph'")) return 0;
  if (!fuse__text_accept(ps, ')')) {
    do {
      int64_t shape[FUSE_MAX_RANK];
      int rank, type;
      fuse_value v;
      fuse__text_skip(ps);
      ps->at_line = ps->line;
      ps->at_col = fuse__text_col(ps);
      if (!fuse__text_label(ps)) return 0;
      if (fuse__text_lookup(ps) != FUSE_NONE)
        return fuse__fail(g, FUSE_ERROR_PARSE, "line %d, column %d: input %%%s is listed twice", ps->at_line, ps->at_col,
                          ps->name),
               0;
      if (!fuse__text_expect(ps, ':', "':' and the input's shape")) return 0;
      if (!fuse__text_type_shape(ps, &type, &rank, shape)) return 0; /* leaves ps->name */
      v = fuse_typed_input(g, ps->name_numbered ? NULL : ps->name, (fuse_type)type, rank, shape);
      if (v == FUSE_NONE) return fuse__text_locate_error(ps), 0;
      if (ps->name_numbered && !fuse__text_bind(ps, v)) return 0;
    } while (fuse__text_accept(ps, ','));
    if (!fuse__text_expect(ps, ')', "',' or ')' after an input")) return 0;
  }
  if (!fuse__text_expect(ps, '{', "'{' opening the graph body")) return 0;
  for (;;) {
    fuse__text_skip(ps);
    if (strncmp(ps->p, "return", 6) == 0 && !fuse__is_ident_char((unsigned char)ps->p[6])) break;
    if (strncmp(ps->p, "composite", 9) == 0 && !fuse__is_ident_char((unsigned char)ps->p[9])) {
      if (!fuse__text_composite(ps)) return 0;
      continue;
    }
    if (*ps->p != '%') return fuse__text_fail(ps, "a statement '%x = op(...)', a composite or 'return'");
    if (!fuse__text_statement(ps)) return 0;
  }
  ps->p += 6;
  fuse__text_skip(ps);
  if (*ps->p != '}') { /* else a graph without outputs */
    do {
      fuse_value v;
      if (!fuse__text_operand(ps, &v)) return 0;
      if (fuse_output(g, v) != FUSE_OK) return 0;
    } while (fuse__text_accept(ps, ','));
  }
  if (!fuse__text_expect(ps, '}', "'}' closing the graph")) return 0;
  fuse__text_skip(ps);
  if (*ps->p) return fuse__text_fail(ps, "the end of the text after '}'");
  return 1;
}

FUSE_API fuse_result fuse_graph_parse(const char *text, const fuse_allocator *alloc,
                                      fuse_graph **out) {
  fuse__parser ps;
  fuse_graph *g;
  if (!out) return FUSE_ERROR_INVALID_ARGUMENT;
  *out = g = fuse_graph_create(alloc);
  if (!g) return FUSE_ERROR_OUT_OF_MEMORY;
  if (!text) return fuse__fail(g, FUSE_ERROR_INVALID_ARGUMENT, "parse: text is NULL"), g->status;
  memset(&ps, 0, sizeof ps);
  ps.p = ps.line_start = text;
  ps.line = 1;
  ps.g = g;
  ps.name_cap = 64;
  ps.name = (char *)fuse__alloc(&g->alloc, ps.name_cap, 1);
  if (!ps.name) return fuse__oom(g, "parse"), g->status;
  if (!fuse__text_graph(&ps) && g->status == FUSE_OK) fuse__text_fail(&ps, "valid text");
  fuse__free(&g->alloc, ps.name);
  fuse__free(&g->alloc, ps.num_keys);
  fuse__free(&g->alloc, ps.num_vals);
  return g->status;
}

FUSE_API fuse_value fuse_op(fuse_graph *g, const char *op, int num_in, const fuse_value *in,
                            const char *attrs) {
  fuse__parser ps;
  fuse__parse_attr at[FUSE__MAX_PARSE_ATTRS];
  int k, n_at = 0;
  if (!g || g->status != FUSE_OK) return FUSE_NONE;
  if (!op || num_in < 0 || (num_in > 0 && !in))
    return fuse__fail(g, FUSE_ERROR_INVALID_ARGUMENT, "fuse_op: %s", !op ? "op is NULL"
                      : num_in < 0 ? "num_in is negative" : "in is NULL");
  for (k = FUSE__OP_CONV2D; k < FUSE__OP_COPY; k++)
    if (strcmp(op, fuse__ops[k].name) == 0) break;
  if (k == FUSE__OP_COPY)
    return fuse__fail(g, FUSE_ERROR_INVALID_ARGUMENT, "fuse_op: unknown op '%s'", op);
  memset(&ps, 0, sizeof ps);
  ps.p = ps.line_start = attrs ? attrs : "";
  ps.line = ps.at_line = ps.at_col = 1;
  ps.g = g;
  fuse__text_skip(&ps);
  while (*ps.p) {
    if (!fuse__text_attribute(&ps, k, at, &n_at)) return FUSE_NONE;
    if (!fuse__text_accept(&ps, ',') && *ps.p) return fuse__text_fail(&ps, "',' between attributes"), FUSE_NONE;
    fuse__text_skip(&ps);
  }
  return fuse__text_build(&ps, k, in, num_in, at, n_at);
}

FUSE_API fuse_result fuse_graph_set_constant(fuse_graph *g, const char *name, const float *data,
                                             size_t n) {
  fuse_value v;
  fuse__node *node;
  int64_t count;
  if (!g) return FUSE_ERROR_INVALID_ARGUMENT;
  if (g->status != FUSE_OK) return g->status;
  if (!name || !data)
    return fuse__fail(g, FUSE_ERROR_INVALID_ARGUMENT, "set_constant: %s is NULL",
                      name ? "data" : "name"),
           g->status;
  v = fuse__find(g, name);
  if (v == FUSE_NONE || g->nodes[v].op != FUSE__OP_CONST)
    return fuse__fail(g, FUSE_ERROR_INVALID_ARGUMENT, "set_constant: '%s' is %s", name,
                      v == FUSE_NONE ? "not a name in the graph" : "not a constant"),
           g->status;
  node = &g->nodes[v];
  count = fuse__numel(node->rank, node->shape);
  if ((uint64_t)count != (uint64_t)n)
    return fuse__fail(g, FUSE_ERROR_SHAPE, "set_constant: '%s' %S has %D elements, not %D", name,
                      node->rank, node->shape, count, (int64_t)n),
           g->status;
  if (node->type != FUSE_FLOAT32) { /* whole numbers in the type's range, stored as the type */
    double lo, hi;
    size_t i;
    fuse__type_range(node->type, &lo, &hi);
    for (i = 0; i < n; i++)
      if (data[i] != floorf(data[i]) || data[i] < lo || data[i] > hi)
        return fuse__fail(g, FUSE_ERROR_INVALID_ARGUMENT,
                          "set_constant: '%s' is %s, and data[%D] = %f is not a %s value", name,
                          fuse__type_name(node->type), (int64_t)i, (double)data[i],
                          fuse__type_name(node->type)),
               g->status;
    for (i = 0; i < n; i++)
      if (node->type == FUSE_INT32) ((int32_t *)(void *)node->data)[i] = (int32_t)data[i];
      else ((uint8_t *)node->data)[i] = (uint8_t)((int32_t)data[i] & 0xff);
    return FUSE_OK;
  }
  if (!fuse__const_floats(g, v)) return g->status; /* borrowed from a file: its own copy now */
  memcpy(g->nodes[v].data, data, n * sizeof(float));
  return FUSE_OK;
}

