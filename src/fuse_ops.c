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

FUSE_API fuse_result fuse_ops_by_pattern(fuse_graph *g, const fuse_rule *rules, int n_rules,
                                         const fuse_pattern_options *opt) {
  fuse_pattern_options o;
  fuse__pattern *pats = NULL;
  fuse__users users;
  int *claimed = NULL, *stack = NULL, r, v, i, k, n, pool_cap = 0, pool_len;
  fuse_value *pool = NULL; /* members of every candidate match */
  fuse__candidate *cands = NULL;
  unsigned char *in_match = NULL;
  int cand_cap = 0, n_cands;
  fuse_result status = FUSE_ERROR_OUT_OF_MEMORY;
  if (!g) return FUSE_ERROR_INVALID_ARGUMENT;
  if (g->status != FUSE_OK) return g->status;
  fuse__pass_begin(g);
  memset(&o, 0, sizeof o);
  if (opt) o = *opt;
  if (n_rules < 0 || (n_rules > 0 && !rules))
    return fuse__pass_error(g, FUSE_ERROR_INVALID_ARGUMENT,
                            "fuse_ops_by_pattern: %d rules at %s", n_rules, rules ? "rules" : "NULL");
  n = g->num_nodes;
  memset(&users, 0, sizeof users);
  /* parse every rule first: a bad one leaves the graph untouched */
  pats = (fuse__pattern *)fuse__alloc(&g->alloc, sizeof(fuse__pattern) * (size_t)(n_rules + 1), 16);
  if (!pats) goto done;
  for (r = 0; r < n_rules; r++) {
    const char *name = rules[r].name;
    if (!name || !*name) {
      status = fuse__pass_error(g, FUSE_ERROR_INVALID_ARGUMENT, "fuse_ops_by_pattern: rule %d has no name", r);
      goto done;
    }
    if (!fuse__pattern_parse(&pats[r], rules[r].pattern)) {
      status = fuse__pass_error(g, FUSE_ERROR_PARSE, "pattern of rule '%s', %s", name, pats[r].error);
      goto done;
    }
  }
  claimed = (int *)fuse__alloc(&g->alloc, (size_t)(n + 1) * sizeof(int), 16);
  in_match = (unsigned char *)fuse__alloc(&g->alloc, (size_t)(n + 1), 16);
  stack = (int *)fuse__alloc(&g->alloc, (size_t)(n + 1) * sizeof(int) * 2 + 64, 16);
  if (!claimed || !in_match || !stack || !fuse__users_build(g, &users)) goto done;
  for (v = 0; v < n; v++) claimed[v] = g->nodes[v].composite >= 0;
  memset(in_match, 0, (size_t)n);
  for (r = 0; r < n_rules; r++) {
    fuse_match m;
    /* every match of this rule, then the largest first */
    n_cands = 0;
    pool_len = 0;
    memset(&m, 0, sizeof m);
    m.g = g;
    m.pt = &pats[r];
    m.claimed = claimed;
    if (!o.allow_escaping) m.use_first = users.first, m.use_list = users.list;
    for (v = 0; v < n; v++) {
      if (g->nodes[v].op <= FUSE__OP_CONST || claimed[v]) continue;
      m.num_members = 0;
      for (k = 0; k < FUSE__PAT_MAX_CAPTURES; k++) m.captures[k] = FUSE_NONE;
      if (!fuse__match(&m, pats[r].root, v) || m.num_members == 0) continue;
      if (m.members[m.num_members - 1] != v) continue; /* the root must be an op of the pattern */
      if (n_cands == cand_cap) {
        fuse__candidate *bigger = (fuse__candidate *)fuse__grow(
            &g->alloc, cands, n_cands, &cand_cap, n_cands + 1, sizeof(fuse__candidate));
        if (!bigger) goto done;
        cands = bigger;
      }
      if (pool_len + m.num_members > pool_cap) {
        fuse_value *bigger = (fuse_value *)fuse__grow(&g->alloc, pool, pool_len, &pool_cap,
                                                      pool_len + m.num_members, sizeof(fuse_value));
        if (!bigger) goto done;
        pool = bigger;
      }
      cands[n_cands].root = v;
      cands[n_cands].first = pool_len;
      cands[n_cands].count = m.num_members;
      memcpy(cands[n_cands].captures, m.captures, sizeof m.captures);
      memcpy(pool + pool_len, m.members, (size_t)m.num_members * sizeof(fuse_value));
      pool_len += m.num_members;
      n_cands++;
    }
    /* largest first; equal sizes keep graph order (a stable bucket pass by size) */
    {
      int *order = stack, max_count = 0;
      for (i = 0; i < n_cands; i++)
        if (cands[i].count > max_count) max_count = cands[i].count;
      for (k = max_count, v = 0; k >= 1 && v < n_cands; k--)
        for (i = 0; i < n_cands; i++)
          if (cands[i].count == k) order[v++] = i;
      for (i = 0; i < n_cands; i++) {
        fuse__candidate *c = &cands[order[i]];
        const fuse_value *mem = pool + c->first;
        int ok = 1;
        for (k = 0; k < c->count && ok; k++) ok = !claimed[mem[k]];
        if (!ok) continue;
        for (k = 0; k < c->count; k++) in_match[mem[k]] = 1;
        /* intermediates used outside, or graph outputs, escape */
        if (!o.allow_escaping) {
          for (k = 0; k < c->count && ok; k++) {
            int j, val = mem[k];
            if (val == c->root) continue;
            if (fuse__is_output(g, val)) ok = 0;
            for (j = users.first[val]; j < users.first[val + 1] && ok; j++)
              ok = in_match[users.list[j]] != 0;
          }
        } else {
          m.root = c->root;
          m.num_members = c->count;
          memcpy(m.members, mem, (size_t)c->count * sizeof(fuse_value));
          ok = fuse__convex(&m, &users, in_match, stack + n + 1);
        }
        if (ok && rules[r].check) {
          m.root = c->root;
          m.num_members = c->count;
          memcpy(m.members, mem, (size_t)c->count * sizeof(fuse_value));
          memcpy(m.captures, c->captures, sizeof m.captures);
          ok = rules[r].check(g, &m, rules[r].user) != 0;
        }
        for (k = 0; k < c->count; k++) in_match[mem[k]] = 0;
        if (!ok) continue;
        if (!fuse__composite_from_rule(g, &rules[r], &o, mem, c->count)) goto done;
        for (k = 0; k < c->count; k++) claimed[mem[k]] = 1;
      }
    }
  }
  status = FUSE_OK;
done:
  if (status == FUSE_ERROR_OUT_OF_MEMORY) fuse__pass_error(g, status, "fuse_ops_by_pattern: out of memory");
  fuse__users_free(g, &users);
  fuse__free(&g->alloc, pats);
  fuse__free(&g->alloc, claimed);
  fuse__free(&g->alloc, in_match);
  fuse__free(&g->alloc, stack);
  fuse__free(&g->alloc, pool);
  fuse__free(&g->alloc, cands);
  return status;
}
