/* ------------------------------------------------ what a plan needs of the build -- */
/* The pieces a plan's steps run, as config.h counts them: kinds of step (fuse__run_kind),
   families of micro-kernels (FUSE__FAMILY_*), post-op kinds, instruction sets. fuse_plan_load
   and fuse_compile check every step against what this build has, so a plan that needs a piece
   a FUSE_NO_* macro left out is refused with the macro's name, never run; and
   fuse_plan_write_config writes, for a set of plans, the macros that leave out everything else
   (fuse_run --emit-config): an automatic analogue of ONNX Runtime's reduced-operator builds and
   of TFLite Micro's op resolver. */

typedef struct fuse__needs {
  unsigned long runs;     /* bit: a fuse__run_kind */
  unsigned long families; /* bit: a FUSE__FAMILY_* */
  unsigned long posts;    /* bit: a fuse_post_kind */
  unsigned isas;          /* bit: a fuse_isa */
} fuse__needs;

/* The macros' names, FUSE_NO_RUN_ + run name, ...: in the order of their enums */
static const char *const fuse__run_names[] = {
    "UNARY", "CONV2D", "MATMUL", "BINARY", "CONCAT", "TRANSPOSE", "SOFTMAX", "BATCH_NORM",
    "POOL", "GLOBAL_AVG_POOL", "LAYOUT", "CHAIN", "MATH_UNARY", "MATH_BROADCAST", "GATHER",
    "EXPAND", "TILE", "PAD", "RESIZE", "REDUCE", "LOG_SOFTMAX", "NORM", "SLICE",
    "CONV_TRANSPOSE2D", "QUANT", "QINT"};
typedef char fuse__run_names_cover_the_kinds[sizeof fuse__run_names / sizeof *fuse__run_names ==
                                                     FUSE__RUN_COUNT
                                                 ? 1
                                                 : -1];
static const char *const fuse__family_names[] = {
    "REFERENCE", "IGEMM", "NCHW_GEMM", "FEW_CHANNELS", "DW_NHWC", "DW_NCHW", "GROUPED",
    "WINOGRAD", "POOL", "ELTWISE", "CHAIN", "ROWS", "MATMUL_ROWS", "QDIRECT", "QTILES", "QDW",
    "QPOOL", "QMATMUL", "QGLOBAL_AVG_POOL"};
typedef char fuse__family_names_cover_the_families
    [sizeof fuse__family_names / sizeof *fuse__family_names == FUSE__FAMILY_COUNT ? 1 : -1];
static const char *const fuse__post_macro_names[] = {
    NULL, "CLAMP", "ADD", "LINEAR", "SIGMOID", "TANH", "SILU", "HARDSIGMOID", "HARDSWISH",
    "LEAKY_RELU", "ELU", "SELU", "SOFTPLUS", "MISH", "GELU", "GELU_TANH", "EXP", "SCALE",
    "SHIFT", "PRELU"};
typedef char fuse__post_macro_names_cover_the_kinds
    [sizeof fuse__post_macro_names / sizeof *fuse__post_macro_names == FUSE_POST_PRELU + 1 ? 1 : -1];

/* A qadd's element-wise ops, in its packed words (plan/quant_pack.c): it applies clamps inline
   (run/quant_run.c), and when any other op is among them, every one of them through the post-op
   functions, whose kinds the build must then keep. (A loaded step's packed bytes are read
   after the loader has checked them: s->packed is NULL before.) */
static void fuse__qadd_needs(const fuse__step *s, fuse__needs *n) {
  const fuse__qhead *h = (const fuse__qhead *)(const void *)s->packed;
  unsigned long kinds = 0;
  int k;
  if (!h || s->packed_floats * 4 < sizeof *h || h->num_post < 0 || h->num_post > 4 ||
      s->packed_floats * 4 < sizeof *h + (size_t)h->num_post * FUSE__QPOST_WORDS * 4)
    return;
  for (k = 0; k < h->num_post; k++) {
    int32_t kind = ((const int32_t *)(const void *)(h + 1))[k * FUSE__QPOST_WORDS];
    if (kind > 0 && kind <= FUSE_POST_PRELU) kinds |= 1ul << kind;
  }
  if (kinds & ~(1ul << FUSE_POST_CLAMP)) n->posts |= kinds;
}

/* What step s of plan p runs: its kind; its kernel's family; the row kernels its kind calls on
   the plan's instruction set (the reference plan, FUSE_ISA_AUTO, calls none); its post-ops,
   its chain's and a qadd's. Values out of range (a damaged blob's, checked after this) add
   nothing. */
static void fuse__step_needs(const fuse_plan *p, const fuse__step *s, fuse__needs *n) {
  int run = s->op >= 0 && s->op < FUSE__OP_ROWS ? fuse__ops[s->op].run : -1, k;
  int simd = p->isa != FUSE_ISA_AUTO, family = -1;
  if (run < 0) return;
  n->runs |= 1ul << run;
  n->isas |= 1u << (unsigned)p->isa;
  for (k = 0; k < s->num_post && k < FUSE_MAX_POST_OPS; k++)
    if (s->post[k].kind > 0 && s->post[k].kind <= FUSE_POST_PRELU) n->posts |= 1ul << s->post[k].kind;
  for (k = 0; k < s->num_chain && k < FUSE__CHAIN_LENGTH; k++)
    if (s->chain[k].kind == FUSE__CHAIN_POST && s->chain[k].post.kind > 0 &&
        s->chain[k].post.kind <= FUSE_POST_PRELU)
      n->posts |= 1ul << s->chain[k].post.kind;
  if (FUSE__HAS_RUN(FUSE__RUN_QINT) && s->op == FUSE__OP_QADD) fuse__qadd_needs(s, n);
  if (s->op == FUSE__OP_QMAX_POOL2D) n->families |= 1ul << FUSE__FAMILY_QPOOL;
  if (s->op == FUSE__OP_QMATMUL) n->families |= 1ul << FUSE__FAMILY_QMATMUL;
  if (FUSE__HAS_OP_QGLOBAL_AVG_POOL2D && s->op == FUSE__OP_QGLOBAL_AVG_POOL2D)
    n->families |= 1ul << FUSE__FAMILY_QGLOBAL_AVG_POOL;
  if ((s->op == FUSE__OP_QCONV2D || s->op == FUSE__OP_QMATMUL) && s->packed &&
      s->packed_floats * 4 >= sizeof(fuse__qhead)) {
    int layout = ((const fuse__qhead *)(const void *)s->packed)->layout; /* (plan/quant_pack.c) */
    n->families |= 1ul << (layout == FUSE__QL_DW ? FUSE__FAMILY_QDW
                           : layout == FUSE__QL_PAIRS || layout == FUSE__QL_QUADS ||
                                     layout == FUSE__QL_SQUADS || layout == FUSE__QL_WINO ||
                                     layout == FUSE__QL_WINO3
#ifdef FUSE__HAVE_QWINDOW
                                     || layout == FUSE__QL_WINDOW
#endif
                               ? FUSE__FAMILY_QTILES
                               : FUSE__FAMILY_QDIRECT);
  }
  switch (s->kernel) { /* conv2d and matmul: the family of their kernel */
  case FUSE__KERNEL_REF:
    if (run == FUSE__RUN_CONV2D || run == FUSE__RUN_MATMUL) family = FUSE__FAMILY_REFERENCE;
    if (run == FUSE__RUN_MATMUL && simd) n->families |= 1ul << FUSE__FAMILY_MATMUL_ROWS;
    break;
  case FUSE__KERNEL_IGEMM: family = s->winograd ? FUSE__FAMILY_WINOGRAD : FUSE__FAMILY_IGEMM; break;
  case FUSE__KERNEL_NCHW_GEMM: family = FUSE__FAMILY_NCHW_GEMM; break;
  case FUSE__KERNEL_FEW_CHANNELS: family = FUSE__FAMILY_FEW_CHANNELS; break;
  case FUSE__KERNEL_GROUPED: family = FUSE__FAMILY_GROUPED; break;
  case FUSE__KERNEL_DW: /* by its input's layout (run/conv_run.c, fuse__conv_dw) */
    family = s->num_in > 0 && p->tensors[p->operands[s->in_first]].nhwc ? FUSE__FAMILY_DW_NHWC
                                                                        : FUSE__FAMILY_DW_NCHW;
    break;
  default: break;
  }
  if (family >= 0) n->families |= 1ul << family;
  if (!simd) return;
  switch (run) { /* the row kernels a kind's reference calls on an instruction set's plan */
  case FUSE__RUN_UNARY: /* relu, clip (run/reference.c, fuse__kernel_unary) */
    if (fuse__ops[s->op].post == FUSE_POST_CLAMP) n->families |= 1ul << FUSE__FAMILY_ELTWISE;
    break;
  case FUSE__RUN_BINARY: n->families |= 1ul << FUSE__FAMILY_ELTWISE; break;
  case FUSE__RUN_POOL: /* on NHWC (run/steps.c, fuse__kernel_pool_nhwc) */
    if (s->num_in > 0 && p->tensors[p->operands[s->in_first]].nhwc)
      n->families |= 1ul << FUSE__FAMILY_POOL;
    break;
  case FUSE__RUN_CHAIN: n->families |= 1ul << FUSE__FAMILY_CHAIN; break;
  case FUSE__RUN_SOFTMAX: /* run/chain_run.c's fast paths */
  case FUSE__RUN_LOG_SOFTMAX:
  case FUSE__RUN_NORM:
  case FUSE__RUN_REDUCE:
  case FUSE__RUN_GLOBAL_AVG_POOL: n->families |= 1ul << FUSE__FAMILY_ROWS; break;
  default: break;
  }
}

/* The first piece step s needs that this build leaves out, as a code for fuse__lack_kind and
   fuse__lack_name (the define that left it out is FUSE_NO_<kind>_<name>); 0 when the build has
   everything. (A code, not the names: a build without messages, FUSE_NO_MESSAGES, then has no
   names either.) */
enum { FUSE__LACK_RUN = 1 << 8, FUSE__LACK_KERNEL = 2 << 8, FUSE__LACK_POST = 3 << 8 };
static int fuse__step_lacks(const fuse_plan *p, const fuse__step *s) {
  fuse__needs n;
  int k;
  memset(&n, 0, sizeof n);
  fuse__step_needs(p, s, &n);
  for (k = 0; k < FUSE__RUN_COUNT; k++)
    if ((n.runs >> k & 1ul) && !FUSE__HAS_RUN(k)) return FUSE__LACK_RUN | k;
  for (k = 0; k < FUSE__FAMILY_COUNT; k++)
    if ((n.families >> k & 1ul) && !(FUSE__FAMILIES_BUILT >> k & 1ul)) return FUSE__LACK_KERNEL | k;
  for (k = FUSE_POST_CLAMP; k <= FUSE_POST_PRELU; k++)
    if ((n.posts >> k & 1ul) && !FUSE__HAS_POST(k)) return FUSE__LACK_POST | k;
  return 0;
}
static const char *fuse__lack_kind(int lack) {
  return (lack & ~0xff) == FUSE__LACK_RUN      ? "RUN"
         : (lack & ~0xff) == FUSE__LACK_KERNEL ? "KERNEL"
                                               : "POST";
}
static const char *fuse__lack_name(int lack) {
  return (lack & ~0xff) == FUSE__LACK_RUN      ? fuse__run_names[lack & 0xff]
         : (lack & ~0xff) == FUSE__LACK_KERNEL ? fuse__family_names[lack & 0xff]
                                               : fuse__post_macro_names[lack & 0xff];
}

/* The message of a plan refused for a step that needs a piece left out: step, op, kind, name */
#define FUSE__LACKS_FORMAT                                                                    \
  "step %d (%s) needs what this build leaves out: FUSE_NO_%s_%s is defined (fuse_run "          \
  "--emit-config writes the defines a set of plans allows)"

/* One "#define FUSE_NO_<kind><name>" line, guarded (the user may define it too). */
static void fuse__config_define(fuse__out *o, const char *kind, const char *name) {
  fuse__puts(o, "#ifndef FUSE_NO_");
  fuse__puts(o, kind);
  fuse__puts(o, name);
  fuse__puts(o, "\n#define FUSE_NO_");
  fuse__puts(o, kind);
  fuse__puts(o, name);
  fuse__puts(o, "\n#endif\n");
}

FUSE_API fuse_result fuse_plan_write_config(const fuse_plan *const *plans, int count,
                                            fuse_write_fn write, void *user) {
  char buf[512];
  fuse__out o;
  fuse__needs n;
  int i, k, steps = 0;
  if (count < 0 || (count && !plans) || !write) return FUSE_ERROR_INVALID_ARGUMENT;
  memset(&n, 0, sizeof n);
  for (i = 0; i < count; i++) {
    if (!plans[i]) return FUSE_ERROR_INVALID_ARGUMENT;
    for (k = 0; k < plans[i]->num_steps; k++) fuse__step_needs(plans[i], &plans[i]->steps[k], &n);
    steps += plans[i]->num_steps;
  }
  o.buf = buf, o.len = 0, o.cap = sizeof buf, o.write = write, o.user = user;
  fuse__format(&o, NULL,
               "/* fuse_plan_write_config (fuse_run --emit-config), for %d plan%s of %d step%s:\n"
               "   defined before fuse.h's implementation, these leave out of the build every\n"
               "   kind of step, family of kernels, post-op and instruction set none of them\n"
               "   uses. fuse_plan_load refuses a plan that needs one, naming it. */\n",
               count, count == 1 ? "" : "s", steps, steps == 1 ? "" : "s");
  /* the instruction sets: an AVX-512 plan keeps AVX2 too (its transposes and zips run there) */
  if (!(n.isas >> FUSE_ISA_AVX512 & 1u)) fuse__config_define(&o, "", "AVX512");
  if (!(n.isas >> FUSE_ISA_AVX2 & 1u) && !(n.isas >> FUSE_ISA_AVX512 & 1u))
    fuse__config_define(&o, "", "AVX2");
  if (!(n.isas >> FUSE_ISA_NEON & 1u)) fuse__config_define(&o, "", "NEON");
  for (k = 0; k < FUSE__RUN_COUNT; k++)
    if (!(n.runs >> k & 1ul)) fuse__config_define(&o, "RUN_", fuse__run_names[k]);
  for (k = 0; k < FUSE__FAMILY_COUNT; k++)
    if (!(n.families >> k & 1ul)) fuse__config_define(&o, "KERNEL_", fuse__family_names[k]);
  for (k = FUSE_POST_CLAMP; k <= FUSE_POST_PRELU; k++)
    if (!(n.posts >> k & 1ul)) fuse__config_define(&o, "POST_", fuse__post_macro_names[k]);
  fuse__flush(&o);
  return FUSE_OK;
}
