/* -------------------------------------------------------------------- plan -- */
/* A plan is a list of steps over a table of tensors. Each tensor lives in a caller's input or
   output array, in the plan's constants, or at an offset in the workspace, which tensors share
   when their lifetimes do not overlap. reshape / flatten are views: no step, no copy. */

enum { FUSE__LOC_INPUT, FUSE__LOC_OUTPUT, FUSE__LOC_WORK, FUSE__LOC_CONST };

typedef struct fuse__tensor {
  int kind;      /* FUSE__LOC_* */
  int index;     /* input / output position */
  size_t offset; /* bytes into the workspace or the constants */
  int rank;
  int64_t shape[FUSE_MAX_RANK]; /* always the graph's (NCHW) shape */
  int nhwc;      /* the bytes hold an NCHW-shaped tensor in NHWC order */
  int value;     /* the graph value it holds, for the plan's description */
  size_t bytes;  /* > 0: held in a backend's own layout of this size (fuse_backend_layout) */
  int64_t stride; /* > 0: a slice of a concat's output (plan/in_place.c), its rows this many floats
                     apart (NHWC: pixels, NCHW: images); 0: rows packed */
  size_t view_at; /* a view (root[] is another tensor): bytes into its root's where it starts
                     (a channel slice of one image, a concat's slice); else 0 */
} fuse__tensor;

/* A fused step is a conv2d / matmul whose epilogue runs on each finished output element,
   once, before the store. Its operands: x, w, then the bias and residuals it names. */
typedef struct fuse__step {
  int op;
  int out;                 /* tensor */
  int in_first, num_in;    /* into plan->operands */
  fuse__attrs a;
  int bias;                /* operand index of the per-channel bias, or -1 */
  int num_post;
  fuse_post_op post[FUSE_MAX_POST_OPS]; /* ADD: operand set */
  int num_chain;           /* FUSE__OP_CHAIN: its program, applied in order to operand 0 */
  fuse__chain_op chain[FUSE__CHAIN_LENGTH];
  int chain_ops[FUSE__CHAIN_LENGTH]; /* the graph ops it runs, for the description */
  int kernel;              /* FUSE__KERNEL_*: conv2d / matmul on a SIMD kernel or a backend,
                              else the reference */
  float *packed;           /* its weights, packed at compile (or in a loaded blob) */
  size_t packed_floats;    /* how many */
  int mr, nr;              /* the indirect GEMM's tile */
  int igemm;               /* its micro-kernel: index into fuse__igemm_kinds */
  int igemm_last, nr_last; /* the last column block's (NHWC GEMM: maybe narrower, same MR) */
  int rowmode;             /* a tap is a whole kernel row (few input channels) */
  int pointwise;           /* 1x1, stride 1, no padding, or a matmul: a pixel's row is x + pixel*C */
  int cblock;              /* > 0: taps one by one in blocks of this many channels */
  int band;                /* NCHW GEMM: pixel blocks gathered together (>= 1) */
  int winograd;            /* m > 0: an IGEMM conv run as Winograd F(m,3) (winograd.c) */
  int wino_block;          /* its tiles per block */
  int wino_shared;         /* 1: one block at a time, each phase cut among the chunks */
  int wino_merge;          /* groups run as one (block-diagonal weights): 1, or more for few
                              channels per group */
  int gate;                /* > 0: the operand index of a squeeze-excite gate [N or 1, C, 1, 1]
                              the conv's input is multiplied by, applied to its weights per
                              image (fuse__gate_conv); 0: none */
  int shuffle;             /* > 0: a TO_NHWC step that gathers its channels from an NHWC
                              tensor's channel shuffle of this many groups (plan/in_place.c,
                              fuse__shuffle_in_nhwc): output channel b * shuffle + a is input
                              channel a * C / shuffle + shuffle_from + b */
  int64_t shuffle_from;
  const fuse_backend *backend; /* FUSE__KERNEL_BACKEND: who runs it, with this state */
  void *backend_state;
  size_t backend_layout;   /* > 0: it writes its output in the backend's own layout, this many
                              bytes (fuse_backend_layout) */
  char *note;              /* for the description: why a backend declined it, or NULL */
} fuse__step;

/* BACKEND: a fuse_backend runs the step; its operands and output are NCHW, as for REF.
   NCHW_GEMM: conv2d on NCHW in and out (the GEMM with output channels as tile rows).
   FEW_CHANNELS: the same with few input channels, read in place from padded rows
   (fuse__conv_few_channels). GROUPED: conv2d with narrow groups on NHWC (fuse__conv_grouped). */
enum {
  FUSE__KERNEL_REF,
  FUSE__KERNEL_IGEMM,
  FUSE__KERNEL_DW,
  FUSE__KERNEL_BACKEND,
  FUSE__KERNEL_NCHW_GEMM,
  FUSE__KERNEL_FEW_CHANNELS,
  FUSE__KERNEL_GROUPED
};

struct fuse_plan {
  fuse_allocator alloc;
  fuse__tensor *tensors;
  fuse__step *steps;
  int *operands; /* tensor ids of the steps' operands */
  int num_tensors, num_steps, num_inputs, num_outputs;
  float *consts;
  size_t const_bytes;    /* of consts */
  int borrowed;          /* consts and packed weights lie in a loaded blob (fuse_plan_load in
                            place) or in weights_block: not freed one by one */
  void *weights_block;   /* a loaded blob's weights, copied (fuse_plan_load_options.copy) */
  size_t workspace_size;
  size_t tensors_size;   /* the workspace's tensors, before the scratch that follows them */
  void *own_workspace; /* used when fuse_run is given none */
  fuse_isa isa;
  int elsewhere;       /* made (fuse_compile_options.save_only) for an ISA this CPU lacks */
  char *description;   /* one line per step, for fuse_plan_write */
  float *zeros;          /* a row of zeros for the SIMD conv's padding taps */
  size_t zeros_floats;   /* its length */
  size_t weights_size;   /* bytes of consts and packed weights (fuse_plan_weights_size) */
  size_t scratch_offset; /* the SIMD conv's scratch, one slot per chunk, at the end */
  size_t scratch_slot;   /* bytes of one slot */
  int chunks;            /* how many pieces a parallel step is cut into (1 = serial) */
  int no_winograd;       /* fuse_compile_options.no_winograd */
  size_t backend_offset, backend_scratch; /* the backends' scratch (one step at a time) */
  size_t gate_offset;    /* a gated conv's weights scaled for one image (one step at a time) */
  size_t gate_bytes;     /* its size */
  fuse_parallel_for_fn parallel_for;
  void *parallel_user;
};

/* threads: the host's parallel_for, else OpenMP, else none. A parallel step is cut into
   exactly `chunks` pieces, each with its own packing buffer, whichever thread runs it. */
static void fuse__plan_threads(fuse_plan *p, int num_threads, fuse_parallel_for_fn parallel_for,
                               void *parallel_user) {
  p->chunks = 1;
  if (parallel_for) {
    p->parallel_for = parallel_for;
    p->parallel_user = parallel_user;
    p->chunks = num_threads > 0 ? num_threads : 8;
  }
#ifdef _OPENMP
  else
    p->chunks = num_threads > 0 ? num_threads : omp_get_max_threads();
#endif
  if (p->chunks > 64) p->chunks = 64;
  if (p->chunks < 1) p->chunks = 1;
}

/* Whether this CPU and build run a plan of `isa`: scalar and the reference kernels anywhere,
   AVX2 where AVX-512 runs, NEON only on ARM. */
static int fuse__isa_runs_here(fuse_isa isa) {
  fuse_isa cpu = fuse_cpu_isa();
  return isa == FUSE_ISA_AUTO || isa == FUSE_ISA_SCALAR || isa == cpu ||
         (isa == FUSE_ISA_AVX2 && cpu == FUSE_ISA_AVX512);
}

/* Whether this build has kernels of `isa` (a row of the GEMM table), whatever the CPU. */
static int fuse__isa_built(fuse_isa isa) {
  int i;
  for (i = 0; fuse__igemm_kinds[i].fn; i++)
    if (fuse__igemm_kinds[i].isa == isa) return 1;
  return 0;
}

static size_t fuse__tensor_bytes(const fuse__tensor *t) {
  size_t b = (size_t)fuse__numel(t->rank, t->shape) * sizeof(float);
  if (t->bytes > b) b = t->bytes;
  return (b + FUSE__ALIGN - 1) & ~(size_t)(FUSE__ALIGN - 1);
}

static int fuse__is_view(int op) { return op == FUSE__OP_RESHAPE || op == FUSE__OP_FLATTEN; }

static void fuse__compile_error(const fuse_compile_options *opt, const fuse_graph *g,
                                const char *fmt, ...) {
  va_list ap;
  fuse__out o;
  if (!opt || !opt->error || !opt->error_size) return;
  o.buf = opt->error;
  o.len = 0;
  o.cap = opt->error_size;
  o.write = NULL;
  o.user = NULL;
  o.buf[0] = 0;
  va_start(ap, fmt);
  fuse__vformat(&o, g, fmt, ap);
  va_end(ap);
}

/* Places workspace tensors: largest first, each at the lowest offset that does not overlap a
   placed tensor whose lifetime [first, last] (in steps) meets its own. */
static int fuse__place(fuse_plan *p, const int *first, const int *last, int *order, int n_work,
                       size_t *ranges) {
  int i, j, k;
  size_t total = 0;
  for (i = 1; i < n_work; i++) { /* insertion sort by size, largest first */
    int t = order[i];
    size_t bt = fuse__tensor_bytes(&p->tensors[t]);
    for (j = i; j > 0 && fuse__tensor_bytes(&p->tensors[order[j - 1]]) < bt; j--)
      order[j] = order[j - 1];
    order[j] = t;
  }
  for (i = 0; i < n_work; i++) {
    int t = order[i], n_conf = 0;
    size_t size = fuse__tensor_bytes(&p->tensors[t]), at = 0;
    for (j = 0; j < i; j++) { /* busy ranges [start, end) of placed tensors alive meanwhile */
      int u = order[j];
      if (first[u] <= last[t] && first[t] <= last[u]) {
        size_t start = p->tensors[u].offset, end = start + fuse__tensor_bytes(&p->tensors[u]);
        for (k = n_conf; k > 0 && ranges[2 * (k - 1)] > start; k--) {
          ranges[2 * k] = ranges[2 * (k - 1)];
          ranges[2 * k + 1] = ranges[2 * (k - 1) + 1];
        }
        ranges[2 * k] = start;
        ranges[2 * k + 1] = end;
        n_conf++;
      }
    }
    for (k = 0; k < n_conf; k++) {
      if (ranges[2 * k] >= at + size) break; /* the gap before this range fits */
      if (ranges[2 * k + 1] > at) at = ranges[2 * k + 1];
    }
    p->tensors[t].offset = at;
    if (at + size > total) total = at + size;
  }
  p->workspace_size = total;
  return 1;
}

FUSE_API void fuse_plan_destroy(fuse_plan *p) {
  fuse_allocator a;
  int i;
  if (!p) return;
  a = p->alloc;
  fuse__free(&a, p->tensors);
  for (i = 0; p->steps && i < p->num_steps; i++) {
    fuse__step *s = &p->steps[i];
    if (!p->borrowed) fuse__free(&a, s->packed);
    fuse__free(&a, s->note);
    if (s->backend && s->backend->destroy) s->backend->destroy(s->backend_state);
  }
  fuse__free(&a, p->steps);
  fuse__free(&a, p->operands);
  if (!p->borrowed) fuse__free(&a, p->consts);
  fuse__free(&a, p->weights_block);
  fuse__free(&a, p->zeros);
  fuse__free(&a, p->own_workspace);
  fuse__free(&a, p->description);
  fuse__free(&a, p);
}

/* How a composite runs: fused (one step, its epilogue on registers) when the analyzer accepts
   it and no op inside it but the root is read from outside; else op by op. */
typedef struct fuse__fusion {
  fuse_epilogue e;
  int fused;
} fuse__fusion;

/* The operands a node's step reads: its own, or, for a fused root, x, w, bias, residuals. */
static int fuse__step_inputs(const fuse_graph *g, const fuse__fusion *fz, fuse_value v,
                             fuse_value *out) {
  const fuse__node *n = &g->nodes[v];
  int k, count = 0;
  if (n->composite >= 0 && fz[n->composite].fused && g->composites[n->composite].root == v) {
    const fuse_epilogue *e = &fz[n->composite].e;
    const fuse__node *red = &g->nodes[e->reduction];
    if (out) out[0] = red->in[0], out[1] = red->in[1];
    count = 2;
    if (e->bias != FUSE_NONE) {
      if (out) out[count] = e->bias;
      count++;
    }
    for (k = 0; k < e->num_post; k++)
      if (fuse__post_has_tensor(e->post[k].kind)) {
        if (out) out[count] = e->post[k].tensor;
        count++;
      }
    return count;
  }
  if (out && n->num_in) memcpy(out, n->in, (size_t)n->num_in * sizeof(fuse_value));
  return n->num_in;
}

