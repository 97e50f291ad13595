/* ---------------------------------------------------------------- merge -- */

/* Merging works on groups of composites: union-find over composites, each group's composites
   in a linked list, and per node a visit stamp so no check clears an array. */
typedef struct fuse__merge {
  const fuse_graph *g;
  int *parent, *next, *tail, *lo, *hi; /* per composite; tail, lo, hi valid at a group's root */
  int *members_first, *members;   /* composite c's ops: members[members_first[c] ..] */
  int *stamp, *stack, cur;        /* per node */
} fuse__merge;

static int fuse__merge_find(fuse__merge *m, int c) {
  while (m->parent[c] != c) c = m->parent[c] = m->parent[m->parent[c]];
  return c;
}

static int fuse__merge_group(fuse__merge *m, fuse_value v) {
  int c = m->g->nodes[v].composite;
  return c < 0 ? -1 : fuse__merge_find(m, c);
}

/* Is there a path from group x into group y through ops outside both? Walks back from what y
   reads from outside. A path needs a member of y after a member of x (nodes only read earlier
   ones), so most checks end at once; in a chain the big producer group is never scanned. */
static int fuse__merge_path(fuse__merge *m, int x, int y) {
  const fuse_graph *g = m->g;
  int top = 0, c, j, k;
  if (m->hi[y] <= m->lo[x]) return 0;
  m->cur++;
  for (c = y; c >= 0; c = m->next[c])
    for (j = m->members_first[c]; j < m->members_first[c + 1]; j++) {
      const fuse__node *mn = &g->nodes[m->members[j]];
      for (k = 0; k < mn->num_in; k++) {
        int e = mn->in[k], ge = fuse__merge_group(m, e);
        if (ge == x) continue; /* a direct edge: what merging is for */
        if (ge != y && e > m->lo[x] && m->stamp[e] != m->cur) {
          m->stamp[e] = m->cur;
          m->stack[top++] = e;
        }
      }
    }
  while (top) {
    const fuse__node *n = &g->nodes[m->stack[--top]];
    for (k = 0; k < n->num_in; k++) {
      int e = n->in[k], ge;
      if (e < m->lo[x] || m->stamp[e] == m->cur) continue; /* no member of x lies before lo */
      ge = fuse__merge_group(m, e);
      if (ge == x) return 1;
      if (ge == y) continue;
      m->stamp[e] = m->cur;
      m->stack[top++] = e;
    }
  }
  return 0;
}

/* Would joining groups ra and rb make a cycle: a path that leaves one, passes outside both
   and enters the other? */
static int fuse__merge_cycles(fuse__merge *m, int ra, int rb) {
  return fuse__merge_path(m, ra, rb) || fuse__merge_path(m, rb, ra);
}

/* Each composite a group of its own, its members listed in graph order; order[] the
   composites in graph order of their roots. */
static void fuse__merge_start(fuse__merge *m, int *order) {
  const fuse_graph *g = m->g;
  int nc = g->num_composites, n = g->num_nodes, c, j, k;
  memset(m->stamp, 0, (size_t)n * sizeof(int));
  memset(m->members_first, 0, (size_t)(nc + 2) * sizeof(int));
  for (k = 0; k < n; k++)
    if (g->nodes[k].composite >= 0) m->members_first[g->nodes[k].composite + 2]++;
  for (c = 0; c < nc; c++) m->members_first[c + 2] += m->members_first[c + 1];
  for (k = 0; k < n; k++)
    if (g->nodes[k].composite >= 0) m->members[m->members_first[g->nodes[k].composite + 1]++] = k;
  for (c = 0; c < nc; c++) {
    m->parent[c] = m->tail[c] = order[c] = c;
    m->next[c] = -1;
    m->lo[c] = m->members[m->members_first[c]]; /* members are in graph order */
    m->hi[c] = m->members[m->members_first[c + 1] - 1];
  }
  for (c = 1; c < nc; c++) { /* visit composites in graph order of their roots */
    int t = order[c];
    for (j = c; j > 0 && g->composites[order[j - 1]].root > g->composites[t].root; j--)
      order[j] = order[j - 1];
    order[j] = t;
  }
}

/* Joins composite cc's group with the group of each producer composite of the same codegen,
   unless a cycle follows. */
static void fuse__merge_producers(fuse__merge *m, int cc) {
  const fuse_graph *g = m->g;
  int q, k;
  for (q = m->members_first[cc]; q < m->members_first[cc + 1]; q++) {
    const fuse__node *mn = &g->nodes[m->members[q]];
    for (k = 0; k < mn->num_in; k++) {
      int pc = g->nodes[mn->in[k]].composite, ra, rb;
      if (pc < 0 || !g->composites[pc].codegen ||
          strcmp(g->composites[pc].codegen, g->composites[cc].codegen) != 0)
        continue;
      ra = fuse__merge_find(m, pc);
      rb = fuse__merge_find(m, cc);
      if (ra == rb || fuse__merge_cycles(m, ra, rb)) continue;
      m->parent[rb] = ra; /* rb's list follows ra's */
      m->next[m->tail[ra]] = rb;
      m->tail[ra] = m->tail[rb];
      if (m->lo[rb] < m->lo[ra]) m->lo[ra] = m->lo[rb];
      if (m->hi[rb] > m->hi[ra]) m->hi[ra] = m->hi[rb];
    }
  }
}

FUSE_API fuse_result fuse_merge_composites(fuse_graph *g) {
  fuse__merge m;
  int nc, n, c, j, *order = NULL, *region_of = NULL, next_region = 0;
  fuse_result status = FUSE_ERROR_OUT_OF_MEMORY;
  if (!g) return FUSE_ERROR_INVALID_ARGUMENT;
  if (g->status != FUSE_OK) return g->status;
  fuse__pass_begin(g);
  nc = g->num_composites;
  n = g->num_nodes;
  memset(&m, 0, sizeof m);
  m.g = g;
  m.parent = (int *)fuse__alloc(&g->alloc, (size_t)(nc + 1) * sizeof(int), 16);
  m.next = (int *)fuse__alloc(&g->alloc, (size_t)(nc + 1) * sizeof(int), 16);
  m.tail = (int *)fuse__alloc(&g->alloc, (size_t)(nc + 1) * sizeof(int), 16);
  m.lo = (int *)fuse__alloc(&g->alloc, (size_t)(nc + 1) * sizeof(int), 16);
  m.hi = (int *)fuse__alloc(&g->alloc, (size_t)(nc + 1) * sizeof(int), 16);
  m.members_first = (int *)fuse__alloc(&g->alloc, (size_t)(nc + 2) * sizeof(int), 16);
  m.members = (int *)fuse__alloc(&g->alloc, (size_t)(n + 1) * sizeof(int), 16);
  m.stamp = (int *)fuse__alloc(&g->alloc, (size_t)(n + 1) * sizeof(int), 16);
  m.stack = (int *)fuse__alloc(&g->alloc, (size_t)(n + 1) * sizeof(int), 16);
  order = (int *)fuse__alloc(&g->alloc, (size_t)(nc + 1) * sizeof(int), 16);
  region_of = (int *)fuse__alloc(&g->alloc, (size_t)(nc + 1) * sizeof(int), 16);
  if (!m.parent || !m.next || !m.tail || !m.lo || !m.hi || !m.members_first || !m.members || !m.stamp ||
      !m.stack || !order || !region_of)
    goto done;
  fuse__merge_start(&m, order);
  for (j = 0; j < nc; j++)
    if (g->composites[order[j]].codegen) fuse__merge_producers(&m, order[j]);
  /* number the groups 0, 1, ... in graph order; composites without codegen stay -1 */
  for (c = 0; c < nc; c++) region_of[c] = -1;
  for (j = 0; j < nc; j++) {
    int cc = order[j], root = fuse__merge_find(&m, cc);
    if (!g->composites[cc].codegen) {
      g->composites[cc].region = -1;
      continue;
    }
    if (region_of[root] < 0) region_of[root] = next_region++;
    g->composites[cc].region = region_of[root];
  }
  status = FUSE_OK;
done:
  if (status != FUSE_OK) fuse__pass_error(g, status, "fuse_merge_composites: out of memory");
  fuse__free(&g->alloc, m.parent);
  fuse__free(&g->alloc, m.next);
  fuse__free(&g->alloc, m.tail);
  fuse__free(&g->alloc, m.lo);
  fuse__free(&g->alloc, m.hi);
  fuse__free(&g->alloc, m.members_first);
  fuse__free(&g->alloc, m.members);
  fuse__free(&g->alloc, m.stamp);
  fuse__free(&g->alloc, m.stack);
  fuse__free(&g->alloc, order);
  fuse__free(&g->alloc, region_of);
  return status;
}
