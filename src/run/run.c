/* ------------------------------------------------------------------ execute -- */

/* The fast paths tried before the reference (run/chain_run.c): a contiguous axis, rows of
   whole operands, on the plan's ISA */
static void fuse__run_softmax(const fuse__run *r, const fuse__step *s) {
  if (!fuse__rows_softmax(r, s)) fuse__kernel_softmax(r, s);
}
static void fuse__run_log_softmax(const fuse__run *r, const fuse__step *s) {
  if (!fuse__rows_softmax(r, s)) fuse__kernel_log_softmax(r, s);
}
static void fuse__run_global_avg_pool(const fuse__run *r, const fuse__step *s) {
  if (!fuse__rows_global_avg_pool(r, s)) fuse__kernel_global_avg_pool(r, s);
}
static void fuse__run_reduce(const fuse__run *r, const fuse__step *s) {
  if (!fuse__rows_reduce(r, s)) fuse__kernel_reduce(r, s);
}
static void fuse__run_norm(const fuse__run *r, const fuse__step *s) {
  if (!fuse__rows_norm(r, s)) fuse__kernel_norm(r, s);
}

/* What a step runs, by its op row's `run` kind (graph/ops.c), one row per fuse__run_kind in
   its order: the count is checked when this compiles, the order whenever a step runs. A kind
   this build leaves out (FUSE_NO_RUN_*, config.h) has no function: fuse_plan_load refuses a
   plan with such a step. */
typedef struct fuse__run_kernel {
  int kind;
  void (*run)(const fuse__run *r, const fuse__step *s);
} fuse__run_kernel;
#define FUSE__RUN_ROW(kind, fn) {FUSE__RUN_##kind, FUSE__IF(FUSE__HAS_RUN(FUSE__RUN_##kind), fn)}
static const fuse__run_kernel fuse__run_kernels[] = {
    FUSE__RUN_ROW(UNARY, fuse__kernel_unary), /* relu, clip, sigmoid; input, const and the copies */
    FUSE__RUN_ROW(CONV2D, fuse__kernel_conv2d),
    FUSE__RUN_ROW(MATMUL, fuse__kernel_matmul),
    FUSE__RUN_ROW(BINARY, fuse__kernel_binary),
    FUSE__RUN_ROW(CONCAT, fuse__kernel_concat),
    FUSE__RUN_ROW(TRANSPOSE, fuse__kernel_transpose),
    FUSE__RUN_ROW(SOFTMAX, fuse__run_softmax),
    FUSE__RUN_ROW(BATCH_NORM, fuse__kernel_batch_norm),
    FUSE__RUN_ROW(POOL, fuse__kernel_pool),
    FUSE__RUN_ROW(GLOBAL_AVG_POOL, fuse__run_global_avg_pool),
    FUSE__RUN_ROW(LAYOUT, fuse__kernel_layout),
    FUSE__RUN_ROW(CHAIN, fuse__kernel_chain),
    FUSE__RUN_ROW(MATH_UNARY, fuse__kernel_math_unary), /* run/reference_math.c */
    FUSE__RUN_ROW(MATH_BROADCAST, fuse__kernel_math_broadcast),
    FUSE__RUN_ROW(GATHER, fuse__kernel_gather), /* run/reference_shape.c */
    FUSE__RUN_ROW(EXPAND, fuse__kernel_expand),
    FUSE__RUN_ROW(TILE, fuse__kernel_tile),
    FUSE__RUN_ROW(PAD, fuse__kernel_pad),
    FUSE__RUN_ROW(RESIZE, fuse__kernel_resize),
    FUSE__RUN_ROW(REDUCE, fuse__run_reduce), /* run/reference_nn.c */
    FUSE__RUN_ROW(LOG_SOFTMAX, fuse__run_log_softmax),
    FUSE__RUN_ROW(NORM, fuse__run_norm),
    FUSE__RUN_ROW(SLICE, fuse__kernel_slice), /* run/reference_layers.c */
    FUSE__RUN_ROW(CONV_TRANSPOSE2D, fuse__kernel_conv_transpose2d),
    FUSE__RUN_ROW(QUANT, fuse__kernel_quant), /* run/reference_quant.c */
    FUSE__RUN_ROW(QINT, fuse__kernel_qint), /* run/quant_run.c */
};
#undef FUSE__RUN_ROW
typedef char fuse__run_kernels_cover_the_kinds[sizeof fuse__run_kernels /
                                                           sizeof fuse__run_kernels[0] ==
                                                       FUSE__RUN_COUNT
                                                   ? 1
                                                   : -1];

FUSE_API int fuse_plan_input_count(const fuse_plan *p) { return p ? p->num_inputs : 0; }
FUSE_API int fuse_plan_output_count(const fuse_plan *p) { return p ? p->num_outputs : 0; }

/* The shape of the tensor of kind `kind` at position i (the first such: the plan's others of
   it are views). */
static int fuse__plan_io_shape(const fuse_plan *p, int kind, int i, int64_t *dims) {
  int t;
  for (t = 0; p && dims && t < p->num_tensors; t++)
    if (p->tensors[t].kind == kind && p->tensors[t].index == i) {
      memcpy(dims, p->tensors[t].shape, (size_t)p->tensors[t].rank * sizeof(int64_t));
      return p->tensors[t].rank;
    }
  return -1;
}
FUSE_API int fuse_plan_input_shape(const fuse_plan *p, int i, int64_t *dims) {
  return fuse__plan_io_shape(p, FUSE__LOC_INPUT, i, dims);
}
FUSE_API int fuse_plan_output_shape(const fuse_plan *p, int i, int64_t *dims) {
  return fuse__plan_io_shape(p, FUSE__LOC_OUTPUT, i, dims);
}

/* The element type of the tensor of kind `kind` at position i; -1 for none. */
static int fuse__plan_io_type(const fuse_plan *p, int kind, int i) {
  int t;
  for (t = 0; p && t < p->num_tensors; t++)
    if (p->tensors[t].kind == kind && p->tensors[t].index == i) return p->tensors[t].type;
  return -1;
}
FUSE_API int fuse_plan_input_type(const fuse_plan *p, int i) {
  return fuse__plan_io_type(p, FUSE__LOC_INPUT, i);
}
FUSE_API int fuse_plan_output_type(const fuse_plan *p, int i) {
  return fuse__plan_io_type(p, FUSE__LOC_OUTPUT, i);
}

FUSE_API fuse_result fuse_run(fuse_plan *p, const float *const *inputs, float *const *outputs,
                              void *workspace) {
  return fuse_run_steps(p, inputs, outputs, workspace, 0, p ? p->num_steps : 0);
}

/* The steps read every input and write every output through its tensor's type: a typed
   caller's arrays pass as they are. */
FUSE_API fuse_result fuse_run_typed(fuse_plan *p, const void *const *inputs,
                                    void *const *outputs, void *workspace) {
  return fuse_run_steps(p, (const float *const *)inputs, (float *const *)outputs, workspace, 0,
                        p ? p->num_steps : 0);
}

FUSE_API fuse_result fuse_run_steps(fuse_plan *p, const float *const *inputs,
                                    float *const *outputs, void *workspace, int first, int count) {
  fuse__run r;
  const fuse__run_kernel *kernel;
  int i;
  if (!p || (p->num_inputs && !inputs) || !outputs) return FUSE_ERROR_INVALID_ARGUMENT;
  if (p->elsewhere) return FUSE_ERROR_UNSUPPORTED; /* made for another machine's ISA */
  if (first < 0 || count < 0 || first > p->num_steps || count > p->num_steps - first)
    return FUSE_ERROR_INVALID_ARGUMENT;
  for (i = 0; i < p->num_inputs; i++)
    if (!inputs[i]) return FUSE_ERROR_INVALID_ARGUMENT;
  for (i = 0; i < p->num_outputs; i++)
    if (!outputs[i]) return FUSE_ERROR_INVALID_ARGUMENT;
  if (!workspace) workspace = p->own_workspace;
  if ((uintptr_t)workspace & (FUSE__ALIGN - 1)) return FUSE_ERROR_INVALID_ARGUMENT;
  r.p = p;
  r.inputs = inputs;
  r.outputs = outputs;
  r.work = (unsigned char *)workspace;
  for (i = first; i < first + count; i++) {
    const fuse__step *s = &p->steps[i];
    /* NCHW in and out; constant weights: NULL. (A loaded plan has no backend steps: fuse_plan_save
       refuses them, so a runtime-only build leaves this out.) */
    if (FUSE__HAS_BACKENDS && s->kernel == FUSE__KERNEL_BACKEND) {
      const float *ops[FUSE_BACKEND_MAX_OPERANDS];
      fuse_result rc;
      int k;
      for (k = 0; k < s->num_in && k < FUSE_BACKEND_MAX_OPERANDS; k++)
        ops[k] = k == 1 && fuse__in_t(&r, s, k)->kind == FUSE__LOC_CONST ? NULL : fuse__in(&r, s, k);
      rc = s->backend->run(s->backend_state, ops, fuse__data(&r, s->out),
                           p->backend_scratch ? r.work + p->backend_offset : NULL);
      if (rc != FUSE_OK) return rc;
      continue;
    }
    kernel = &fuse__run_kernels[fuse__ops[s->op].run];
    FUSE_ASSERT(kernel->kind == fuse__ops[s->op].run); /* the table in fuse__run_kind's order */
    FUSE_ASSERT(kernel->run);                          /* loaded: this build has the kind */
    kernel->run(&r, s);
  }
  return FUSE_OK;
}


