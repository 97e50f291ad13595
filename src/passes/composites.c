/* --------------------------------------------------------------- composites -- */

/* A pass that fails leaves the graph intact: the message goes to fuse_graph_error, the
   graph's status stays FUSE_OK. */
static fuse_result fuse__pass_error(fuse_graph *g, fuse_result r, const char *fmt, ...) {
  va_list ap;
  fuse__out o;
  if (g->status != FUSE_OK) return g->status;
  o.buf = g->error;
  o.len = 0;
  o.cap = sizeof g->error;
  o.write = NULL;
  o.user = NULL;
  va_start(ap, fmt);
  fuse__vformat(&o, g, fmt, ap);
  va_end(ap);
  return r;
}

static void fuse__pass_begin(fuse_graph *g) {
  if (g->status == FUSE_OK) g->error[0] = 0;
}

/* Records a composite over `members` (the pattern's post-order; the last is the root). */
static int fuse__composite_add(fuse_graph *g, const char *name, const char *function,
                               const char *codegen, int bind_constants, const fuse_value *members,
                               int count) {
  fuse__composite *c, *grown;
  int k;
  grown = (fuse__composite *)fuse__grow(&g->alloc, g->composites, g->num_composites,
                                        &g->cap_composites, g->num_composites + 1,
                                        sizeof(fuse__composite));
  if (!grown) return 0;
  g->composites = grown;
  c = &g->composites[g->num_composites];
  memset(c, 0, sizeof *c);
  c->name = fuse__strdup(g, name);
  c->function = fuse__strdup(g, function);
  c->codegen = codegen ? fuse__strdup(g, codegen) : NULL;
  if (!c->name || !c->function || (codegen && !c->codegen)) {
    fuse__composite_free(g, c);
    return 0;
  }
  c->root = c->first = members[count - 1];
  for (k = 0; k < count; k++)
    if (members[k] < c->first) c->first = members[k];
  c->region = -1;
  c->num_ops = count;
  c->bind_constants = bind_constants;
  for (k = 0; k < count; k++) g->nodes[members[k]].composite = g->num_composites;
  g->num_composites++;
  return 1;
}

/* The composite a rule makes: function "fused_" + the ops in the pattern's post-order, and
   codegen the name's prefix before '.'. */
static int fuse__composite_from_rule(fuse_graph *g, const fuse_rule *rule,
                                     const fuse_pattern_options *o, const fuse_value *members,
                                     int count) {
  const char *dot = strchr(rule->name, '.');
  size_t len = 6, at, k;
  char *function, *codegen = NULL;
  int i, ok;
  for (i = 0; i < count; i++) len += 1 + strlen(fuse__ops[g->nodes[members[i]].op].name);
  function = (char *)fuse__alloc(&g->alloc, len, 1);
  if (dot && !o->no_codegen_annotation && dot > rule->name) {
    codegen = (char *)fuse__alloc(&g->alloc, (size_t)(dot - rule->name) + 1, 1);
    if (codegen) {
      memcpy(codegen, rule->name, (size_t)(dot - rule->name));
      codegen[dot - rule->name] = 0;
    }
  }
  ok = function && (codegen || !dot || o->no_codegen_annotation || dot == rule->name);
  if (ok) {
    memcpy(function, "fused", 5);
    at = 5;
    for (i = 0; i < count; i++) {
      const char *op = fuse__ops[g->nodes[members[i]].op].name;
      function[at++] = '_';
      for (k = 0; op[k]; k++) function[at++] = op[k];
    }
    function[at] = 0;
    ok = fuse__composite_add(g, rule->name, function, codegen, !o->keep_constants_as_params,
                             members, count);
  }
  fuse__free(&g->alloc, function);
  fuse__free(&g->alloc, codegen);
  return ok;
}

FUSE_API int fuse_composite_count(const fuse_graph *g) { return g ? g->num_composites : 0; }

FUSE_API int fuse_value_composite(const fuse_graph *g, fuse_value v) {
  return fuse__valid(g, v) ? g->nodes[v].composite : -1;
}

FUSE_API fuse_result fuse_composite_get(const fuse_graph *g, int i, fuse_composite_info *out) {
  const fuse__composite *c;
  if (!g || !out || i < 0 || i >= g->num_composites) return FUSE_ERROR_INVALID_ARGUMENT;
  c = &g->composites[i];
  memset(out, 0, sizeof *out);
  out->name = c->name;
  out->function = c->function;
  out->codegen = c->codegen;
  out->num_ops = c->num_ops;
  out->region = c->region;
  out->root = c->root;
  out->has_epilogue = fuse_analyze_epilogue(g, c->root, &out->epilogue) == FUSE_OK;
  return FUSE_OK;
}


