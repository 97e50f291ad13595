/* -------------------------------------------------------------------- plan -- */
/* A plan is a list of steps over a table of tensors. Each tensor lives in a caller's input or
   output array, in the plan's constants, or at an offset in the workspace, which tensors share
   when their lifetimes do not overlap. reshape / flatten are views: no step, no copy. */

enum { FUSE__LOC_INPUT, FUSE__LOC_OUTPUT, FUSE__LOC_WORK, FUSE__LOC_CONST };

typedef struct fuse__tensor {
  int kind;      /* FUSE__LOC_* */
  int type;      /* fuse_type of its elements */
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
  int vnni;            /* this CPU's VNNI (fuse__cpu_vnni), read once when made or loaded */
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

/* Where a packed weight goes in an NHWC GEMM's [column block][step][NR] panels (steps: taps x
   channels per block), the last block NR_last wide (fuse__igemm_last): column k of step t. */
static size_t fuse__igemm_at(const fuse__step *st, int64_t cols, int64_t steps, int64_t k,
                             int64_t t) {
  int64_t ob = k / st->nr, obs = (cols + st->nr - 1) / st->nr;
  int64_t w = ob == obs - 1 ? st->nr_last : st->nr;
  return (size_t)(ob * steps * st->nr + t * w + k % st->nr);
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

FUSE_API size_t fuse_plan_workspace_size(const fuse_plan *p) { return p ? p->workspace_size : 0; }

FUSE_API int fuse_plan_step_count(const fuse_plan *p) { return p ? p->num_steps : 0; }

FUSE_API size_t fuse_plan_weights_size(const fuse_plan *p) { return p ? p->weights_size : 0; }

FUSE_API fuse_result fuse_plan_write(const fuse_plan *p, fuse_write_fn write, void *user) {
  if (!p || !write) return FUSE_ERROR_INVALID_ARGUMENT;
  if (p->description) write(user, p->description, strlen(p->description));
  return FUSE_OK;
}
