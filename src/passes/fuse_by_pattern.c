/* ------------------------------------------------------------ composites -- */

/* users[first[v] .. first[v+1]) lists the nodes that use v (once per use). */
typedef struct fuse__users {
  int *first, *list;
} fuse__users;

static int fuse__users_build(const fuse_graph *g, fuse__users *u) {
  int n = g->num_nodes, i, k, total = 0;
  u->list = NULL;
  u->first = (int *)fuse__alloc(&g->alloc, (size_t)(n + 2) * sizeof(int), 16);
  if (!u->first) return 0;
  memset(u->first, 0, (size_t)(n + 2) * sizeof(int));
  for (i = 0; i < n; i++)
    for (k = 0; k < g->nodes[i].num_in; k++) u->first[g->nodes[i].in[k] + 2]++, total++;
  for (i = 0; i < n; i++) u->first[i + 2] += u->first[i + 1];
  u->list = (int *)fuse__alloc(&g->alloc, (size_t)(total + 1) * sizeof(int), 16);
  if (!u->list) {
    fuse__free(&g->alloc, u->first);
    u->first = NULL;
    return 0;
  }
  for (i = 0; i < n; i++)
    for (k = 0; k < g->nodes[i].num_in; k++) u->list[u->first[g->nodes[i].in[k] + 1]++] = i;
  return 1;
}

static void fuse__users_free(const fuse_graph *g, fuse__users *u) {
  fuse__free(&g->alloc, u->first);
  fuse__free(&g->alloc, u->list);
}

static int fuse__is_output(const fuse_graph *g, fuse_value v) {
  int i;
  for (i = 0; i < g->num_outputs; i++)
    if (g->outputs[i] == v) return 1;
  return 0;
}

/* The first member of composite ci other than its root that is a graph output or read
   outside it, or FUSE_NONE: such a composite cannot run as one fused step (fuse_compile), and
   fuse_explain says so naming this member. */
static fuse_value fuse__escaping_member(const fuse_graph *g, const fuse__users *u, int ci) {
  const fuse__composite *c = &g->composites[ci];
  fuse_value v;
  int k;
  for (v = c->first; v < c->root; v++) {
    if (g->nodes[v].composite != ci) continue;
    if (fuse__is_output(g, v)) return v;
    for (k = u->first[v]; k < u->first[v + 1]; k++)
      if (g->nodes[u->list[k]].composite != ci) return v;
  }
  return FUSE_NONE;
}

/* With escaping allowed, a match must still be convex: no path may leave it and come back,
   or the composite would depend on itself. `in_match` marks the members. */
static int fuse__convex(const fuse_match *m, const fuse__users *u, unsigned char *in_match,
                        int *stack) {
  int i, k, top = 0, ok = 1, lo = m->root;
  for (i = 0; i < m->num_members; i++)
    if (m->members[i] < lo) lo = m->members[i];
  /* walk forward from the members' outside users (up to the root); reaching a member closes
     a cycle. Nodes are marked 2 when pushed, so each is pushed once. */
  for (i = 0; i < m->num_members && ok; i++)
    for (k = u->first[m->members[i]]; k < u->first[m->members[i] + 1]; k++) {
      int w = u->list[k];
      if (!in_match[w] && w < m->root) {
        in_match[w] = 2;
        stack[top++] = w;
      }
    }
  while (top && ok) {
    int v = stack[--top];
    for (k = u->first[v]; k < u->first[v + 1] && ok; k++) {
      int w = u->list[k];
      if (w > m->root || in_match[w] == 2) continue;
      if (in_match[w] == 1) ok = 0;
      else {
        in_match[w] = 2;
        stack[top++] = w;
      }
    }
  }
  for (i = lo; i <= m->root; i++)
    if (in_match[i] == 2) in_match[i] = 0;
  return ok;
}

typedef struct fuse__candidate {
  fuse_value root;
  int first, count; /* members in the pool */
  fuse_value captures[FUSE__PAT_MAX_CAPTURES];
} fuse__candidate;

/* What fuse_ops_by_pattern's pieces share: the graph's users, which nodes a composite has
   claimed, and one rule's candidate matches. */
typedef struct fuse__pattern_pass {
  fuse_graph *g;
  fuse_pattern_options o;
  fuse__users users;
  int n;                 /* the graph's nodes */
  int *claimed;          /* per node: 1 once in a composite */
  unsigned char *in_match; /* per node: 1 in the candidate being checked (fuse__convex: 2) */
  int *stack;            /* the candidates' order, then fuse__convex's stack */
  fuse_value *pool;      /* members of every candidate match */
  int pool_cap, pool_len;
  fuse__candidate *cands;
  int cand_cap, n_cands;
} fuse__pattern_pass;

/* Parses every rule's pattern into pats, before anything changes: a bad one leaves the graph
   untouched. */
static fuse_result fuse__parse_rules(fuse_graph *g, const fuse_rule *rules, int n_rules,
                                     fuse__pattern *pats) {
  int r;
  for (r = 0; r < n_rules; r++) {
    const char *name = rules[r].name;
    if (!name || !*name)
      return fuse__pass_error(g, FUSE_ERROR_INVALID_ARGUMENT,
                              "fuse_ops_by_pattern: rule %d has no name", r);
    if (!fuse__pattern_parse(&pats[r], rules[r].pattern))
      return fuse__pass_error(g, FUSE_ERROR_PARSE, "pattern of rule '%s', %s", name, pats[r].error);
  }
  return FUSE_OK;
}

/* Every match of m's pattern rooted at an unclaimed op, in graph order, into s->cands (their
   members into s->pool). 0: out of memory. */
static int fuse__find_candidates(fuse__pattern_pass *s, fuse_match *m) {
  fuse_graph *g = s->g;
  int v, k;
  s->n_cands = 0;
  s->pool_len = 0;
  for (v = 0; v < s->n; v++) {
    fuse__candidate *c;
    if (g->nodes[v].op <= FUSE__OP_CONST || s->claimed[v]) continue;
    m->num_members = 0;
    for (k = 0; k < FUSE__PAT_MAX_CAPTURES; k++) m->captures[k] = FUSE_NONE;
    if (!fuse__match(m, m->pt->root, v) || m->num_members == 0) continue;
    if (m->members[m->num_members - 1] != v) continue; /* the root must be an op of the pattern */
    if (s->n_cands == s->cand_cap) {
      fuse__candidate *bigger = (fuse__candidate *)fuse__grow(
          &g->alloc, s->cands, s->n_cands, &s->cand_cap, s->n_cands + 1, sizeof(fuse__candidate));
      if (!bigger) return 0;
      s->cands = bigger;
    }
    if (s->pool_len + m->num_members > s->pool_cap) {
      fuse_value *bigger = (fuse_value *)fuse__grow(&g->alloc, s->pool, s->pool_len, &s->pool_cap,
                                                    s->pool_len + m->num_members,
                                                    sizeof(fuse_value));
      if (!bigger) return 0;
      s->pool = bigger;
    }
    c = &s->cands[s->n_cands];
    c->root = v;
    c->first = s->pool_len;
    c->count = m->num_members;
    memcpy(c->captures, m->captures, sizeof m->captures);
    memcpy(s->pool + s->pool_len, m->members, (size_t)m->num_members * sizeof(fuse_value));
    s->pool_len += m->num_members;
    s->n_cands++;
  }
  return 1;
}

/* Whether candidate c may become a composite of rule: none of its members claimed, no
   intermediate read outside it or a graph output (with allow_escaping: convex instead), and
   the rule's check accepts it. */
static int fuse__candidate_fits(fuse__pattern_pass *s, const fuse_rule *rule, fuse_match *m,
                                const fuse__candidate *c) {
  const fuse_value *mem = s->pool + c->first;
  int k, ok = 1;
  for (k = 0; k < c->count && ok; k++) ok = !s->claimed[mem[k]];
  if (!ok) return 0;
  for (k = 0; k < c->count; k++) s->in_match[mem[k]] = 1;
  /* intermediates used outside, or graph outputs, escape */
  if (!s->o.allow_escaping) {
    for (k = 0; k < c->count && ok; k++) {
      int j, val = mem[k];
      if (val == c->root) continue;
      if (fuse__is_output(s->g, val)) ok = 0;
      for (j = s->users.first[val]; j < s->users.first[val + 1] && ok; j++)
        ok = s->in_match[s->users.list[j]] != 0;
    }
  } else {
    m->root = c->root;
    m->num_members = c->count;
    memcpy(m->members, mem, (size_t)c->count * sizeof(fuse_value));
    ok = fuse__convex(m, &s->users, s->in_match, s->stack + s->n + 1);
  }
  if (ok && rule->check) {
    m->root = c->root;
    m->num_members = c->count;
    memcpy(m->members, mem, (size_t)c->count * sizeof(fuse_value));
    memcpy(m->captures, c->captures, sizeof m->captures);
    ok = rule->check(s->g, m, rule->user) != 0;
  }
  for (k = 0; k < c->count; k++) s->in_match[mem[k]] = 0;
  return ok;
}

/* Makes a composite of each candidate that fits, largest first; equal sizes keep graph order
   (a stable bucket pass by size). 0: out of memory. */
static int fuse__claim_candidates(fuse__pattern_pass *s, const fuse_rule *rule, fuse_match *m) {
  int *order = s->stack, max_count = 0, i, k, v;
  for (i = 0; i < s->n_cands; i++)
    if (s->cands[i].count > max_count) max_count = s->cands[i].count;
  for (k = max_count, v = 0; k >= 1 && v < s->n_cands; k--)
    for (i = 0; i < s->n_cands; i++)
      if (s->cands[i].count == k) order[v++] = i;
  for (i = 0; i < s->n_cands; i++) {
    const fuse__candidate *c = &s->cands[order[i]];
    const fuse_value *mem = s->pool + c->first;
    if (!fuse__candidate_fits(s, rule, m, c)) continue;
    if (!fuse__composite_from_rule(s->g, rule, &s->o, mem, c->count)) return 0;
    for (k = 0; k < c->count; k++) s->claimed[mem[k]] = 1;
  }
  return 1;
}

FUSE_API fuse_result fuse_ops_by_pattern(fuse_graph *g, const fuse_rule *rules, int n_rules,
                                         const fuse_pattern_options *opt) {
  fuse__pattern_pass s;
  fuse__pattern *pats = NULL;
  int r, v;
  fuse_result status = FUSE_ERROR_OUT_OF_MEMORY;
  if (!g) return FUSE_ERROR_INVALID_ARGUMENT;
  if (g->status != FUSE_OK) return g->status;
  fuse__pass_begin(g);
  memset(&s, 0, sizeof s);
  if (opt) s.o = *opt;
  if (n_rules < 0 || (n_rules > 0 && !rules))
    return fuse__pass_error(g, FUSE_ERROR_INVALID_ARGUMENT,
                            "fuse_ops_by_pattern: %d rules at %s", n_rules, rules ? "rules" : "NULL");
  s.g = g;
  s.n = g->num_nodes;
  pats = (fuse__pattern *)fuse__alloc(&g->alloc, sizeof(fuse__pattern) * (size_t)(n_rules + 1), 16);
  if (!pats) goto done;
  status = fuse__parse_rules(g, rules, n_rules, pats);
  if (status != FUSE_OK) goto done;
  status = FUSE_ERROR_OUT_OF_MEMORY;
  s.claimed = (int *)fuse__alloc(&g->alloc, (size_t)(s.n + 1) * sizeof(int), 16);
  s.in_match = (unsigned char *)fuse__alloc(&g->alloc, (size_t)(s.n + 1), 16);
  s.stack = (int *)fuse__alloc(&g->alloc, (size_t)(s.n + 1) * sizeof(int) * 2 + 64, 16);
  if (!s.claimed || !s.in_match || !s.stack || !fuse__users_build(g, &s.users)) goto done;
  for (v = 0; v < s.n; v++) s.claimed[v] = g->nodes[v].composite >= 0;
  memset(s.in_match, 0, (size_t)s.n);
  for (r = 0; r < n_rules; r++) { /* every match of this rule, then the largest first */
    fuse_match m;
    memset(&m, 0, sizeof m);
    m.g = g;
    m.pt = &pats[r];
    m.claimed = s.claimed;
    if (!s.o.allow_escaping) m.use_first = s.users.first, m.use_list = s.users.list;
    if (!fuse__find_candidates(&s, &m) || !fuse__claim_candidates(&s, &rules[r], &m)) goto done;
  }
  status = FUSE_OK;
done:
  if (status == FUSE_ERROR_OUT_OF_MEMORY) fuse__pass_error(g, status, "fuse_ops_by_pattern: out of memory");
  fuse__users_free(g, &s.users);
  fuse__free(&g->alloc, pats);
  fuse__free(&g->alloc, s.claimed);
  fuse__free(&g->alloc, s.in_match);
  fuse__free(&g->alloc, s.stack);
  fuse__free(&g->alloc, s.pool);
  fuse__free(&g->alloc, s.cands);
  return status;
}
