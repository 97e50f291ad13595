/* ------------------------------------------------------------------ execute -- */

FUSE_API fuse_result fuse_run(fuse_plan *p, const float *const *inputs, float *const *outputs,
                              void *workspace) {
  return fuse_run_steps(p, inputs, outputs, workspace, 0, p ? p->num_steps : 0);
}

FUSE_API fuse_result fuse_run_steps(fuse_plan *p, const float *const *inputs,
                                    float *const *outputs, void *workspace, int first, int count) {
  fuse__run r;
  int i;
  if (!p || (p->num_inputs && !inputs) || !outputs) return FUSE_ERROR_INVALID_ARGUMENT;
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
    if (s->kernel == FUSE__KERNEL_BACKEND) { /* NCHW in and out; constant weights: NULL */
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
    switch (s->op) {
    case FUSE__OP_CONV2D: fuse__kernel_conv2d(&r, s); break;
    case FUSE__OP_MATMUL: fuse__kernel_matmul(&r, s); break;
    case FUSE__OP_ADD:
    case FUSE__OP_SUB:
    case FUSE__OP_MUL:
    case FUSE__OP_MAXIMUM:
    case FUSE__OP_MINIMUM: fuse__kernel_binary(&r, s); break;
    case FUSE__OP_CONCAT: fuse__kernel_concat(&r, s); break;
    case FUSE__OP_TRANSPOSE: fuse__kernel_transpose(&r, s); break;
    case FUSE__OP_SOFTMAX: /* a contiguous axis on the plan's ISA (run/chain_run.c), else here */
      if (!fuse__rows_softmax(&r, s)) fuse__kernel_softmax(&r, s);
      break;
    case FUSE__OP_BATCH_NORM: fuse__kernel_batch_norm(&r, s); break;
    case FUSE__OP_MAX_POOL2D:
    case FUSE__OP_AVG_POOL2D: fuse__kernel_pool(&r, s); break;
    case FUSE__OP_GLOBAL_AVG_POOL2D:
      if (!fuse__rows_global_avg_pool(&r, s)) fuse__kernel_global_avg_pool(&r, s);
      break;
    case FUSE__OP_TO_NHWC:
    case FUSE__OP_TO_NCHW: fuse__kernel_layout(&r, s); break;
    case FUSE__OP_CHAIN: fuse__kernel_chain(&r, s); break;
    /* element-wise math (run/reference_math.c) */
    case FUSE__OP_SQRT: case FUSE__OP_RECIPROCAL: case FUSE__OP_EXP: case FUSE__OP_LOG:
    case FUSE__OP_NEG: case FUSE__OP_ABS: case FUSE__OP_FLOOR: case FUSE__OP_CEIL:
    case FUSE__OP_ERF: case FUSE__OP_TANH: case FUSE__OP_SOFTPLUS: case FUSE__OP_HARDSWISH:
    case FUSE__OP_HARDSIGMOID: case FUSE__OP_LEAKY_RELU: case FUSE__OP_ELU: case FUSE__OP_SELU:
    case FUSE__OP_GELU: fuse__kernel_math_unary(&r, s); break;
    case FUSE__OP_DIV: case FUSE__OP_POW: case FUSE__OP_PRELU:
    case FUSE__OP_WHERE: fuse__kernel_math_broadcast(&r, s); break;

    /* data movement (run/reference_shape.c) */
    case FUSE__OP_GATHER: fuse__kernel_gather(&r, s); break;
    case FUSE__OP_EXPAND: fuse__kernel_expand(&r, s); break;
    case FUSE__OP_TILE: fuse__kernel_tile(&r, s); break;
    case FUSE__OP_PAD: fuse__kernel_pad(&r, s); break;
    case FUSE__OP_RESIZE: fuse__kernel_resize(&r, s); break;

    /* reductions, normalizations (run/reference_nn.c) */
    case FUSE__OP_REDUCE_MEAN:
    case FUSE__OP_REDUCE_SUM:
    case FUSE__OP_REDUCE_MAX:
    case FUSE__OP_REDUCE_MIN:
    case FUSE__OP_REDUCE_L2:
    case FUSE__OP_REDUCE_PROD:
    case FUSE__OP_REDUCE_SUM_SQUARE:
      if (!fuse__rows_reduce(&r, s)) fuse__kernel_reduce(&r, s);
      break;
    case FUSE__OP_LOG_SOFTMAX:
      if (!fuse__rows_softmax(&r, s)) fuse__kernel_log_softmax(&r, s);
      break;
    case FUSE__OP_LAYER_NORM:
    case FUSE__OP_INSTANCE_NORM:
    case FUSE__OP_GROUP_NORM:
      if (!fuse__rows_norm(&r, s)) fuse__kernel_norm(&r, s);
      break;

    /* transposed convolution (run/reference_layers.c) */
    case FUSE__OP_SLICE: fuse__kernel_slice(&r, s); break;
    case FUSE__OP_CONV_TRANSPOSE2D: fuse__kernel_conv_transpose2d(&r, s); break;

    default: fuse__kernel_unary(&r, s); break; /* relu, clip, sigmoid, copies */
    }
  }
  return FUSE_OK;
}


