/* ------------------------------------------------------------ onnx: the loader -- */

static int fuse__onnx_known(fuse__slice op) {
  static const char *const ops[] = {
      "Conv",    "Relu",    "Clip",   "Add",     "Sub",          "Mul",       "Max",
      "Min",     "Reshape", "Flatten", "Gemm",   "MatMul",       "MaxPool",   "AveragePool",
      "Concat",  "Sigmoid", "Softmax", "Identity", "Constant",    "Dropout",   "Transpose",
      "BatchNormalization", "GlobalAveragePool", NULL};
  const char *const *lists[8];
  int i, k;
  lists[0] = ops, lists[1] = fuse__onnx_math_ops, lists[2] = fuse__onnx_shape_ops;
  lists[3] = fuse__onnx_nn_ops, lists[4] = fuse__onnx_layers_ops;
  lists[5] = fuse__onnx_fold_only_ops, lists[6] = fuse__onnx_fold_also_ops;
  lists[7] = fuse__onnx_quant_ops;
  if (fuse__onnx_row_op(op) >= 0) return 1;
  for (k = 0; k < 8; k++)
    for (i = 0; lists[k][i]; i++)
      if (fuse__slice_is(op, lists[k][i])) return 1;
  return 0;
}

/* A Cast of a run-time value: to a float type, a float32 value is itself and a uint8 / int8 /
   int32 one dequantized with scale 1 (its values exactly, int32 within 2^24); to uint8,
   int8 or int32, a value of that type is itself, and a float32 one whose values are whole
   numbers by construction (made by Round, Floor or Ceil: the truncation Cast does changes
   nothing) is quantized with scale 1 (saturating where ONNX leaves the result undefined).
   Anything else is refused, saying why. */
static fuse_value fuse__onnx_cast(fuse__onnx *ld, const fuse__onode *n) {
  fuse_graph *g = ld->g;
  int to = (int)fuse__onnx_attr_int(n, "to", 0), type = fuse__dt_fuse_type(to), from, whole;
  fuse_value x = fuse__onnx_value(ld, n->in[0]), zero;
  if (x == FUSE_NONE) return FUSE_NONE;
  from = g->nodes[x].type;
  whole = ld->vals[fuse__onnx_find(ld, n->in[0])].whole;
  if (fuse__dt_is_float(to))
    return from == FUSE_FLOAT32 ? x : fuse_dequantize(g, x, fuse_scalar(g, 1.0f), FUSE_NONE, 1);
  if (type == from) return x;
  if (type > FUSE_FLOAT32 && from == FUSE_FLOAT32 && whole) {
    zero = fuse_typed_constant(g, NULL, (fuse_type)type, 0, NULL, NULL);
    return fuse_quantize(g, x, fuse_scalar(g, 1.0f), zero, 1);
  }
  if (type < 0)
    return fuse__onnx_failf(ld, FUSE_ERROR_UNSUPPORTED,
                            "a Cast of a run-time value to %s (fuse.h's tensors are float32, "
                            "uint8, int8 and int32)", fuse__dt_name(to)),
           FUSE_NONE;
  return fuse__onnx_failf(ld, FUSE_ERROR_UNSUPPORTED,
                          "a Cast of run-time value %V (%s %S) to %s: fuse.h casts float32 to "
                          "uint8, int8 or int32 only where the values are whole numbers (made "
                          "by Round, Floor or Ceil), and those types to float32",
                          x, fuse__dt_name(fuse__dt_of_type(from)), g->nodes[x].rank,
                          g->nodes[x].shape, fuse__dt_name(to)),
         FUSE_NONE;
}

/* An operator that exists only as load-time folding, met on a run-time value: Cast
   (fuse__onnx_cast); anything else is refused, saying why. */
static fuse_value fuse__onnx_run_time(fuse__onnx *ld, const fuse__onode *n) {
  if (fuse__slice_is(n->op, "Cast") && n->num_in == 1) return fuse__onnx_cast(ld, n);
  return fuse__onnx_fail(ld, FUSE_ERROR_UNSUPPORTED,
                         "this operator is folded at load time only, and an input is a run-time "
                         "value (it depends on a graph input)"),
         FUSE_NONE;
}

/* The operators that take uint8 / int8 / int32 run-time values (the graph's reshape keeps its
   operand's type; the quantization ops check theirs). */
static const char *const fuse__onnx_typed_ops[] = {
    "Reshape", "Flatten", "Squeeze", "Unsqueeze", "Identity", "Dropout", "Cast", NULL};

/* A run-time uint8 / int8 / int32 value among the inputs of an operator that takes float32
   only: refused, naming it (the builders would refuse it too, as an invalid argument; a
   model that adds uint8 tensors is valid ONNX that fuse.h does not support). */
static int fuse__onnx_float_inputs(fuse__onnx *ld, const fuse__onode *n) {
  int k, i;
  if (fuse__onnx_in_list(n->op, fuse__onnx_quant_ops) || fuse__onnx_in_list(n->op, fuse__onnx_typed_ops))
    return 1;
  for (k = 0; k < n->num_in; k++) {
    const fuse__node *v;
    if (!fuse__onnx_has_in(n, k) || (i = fuse__onnx_find(ld, n->in[k])) < 0 ||
        ld->vals[i].kind != FUSE__OV_VALUE)
      continue;
    v = &ld->g->nodes[ld->vals[i].v];
    if (v->type != FUSE_FLOAT32)
      return fuse__onnx_failf(ld, FUSE_ERROR_UNSUPPORTED,
                              "input %d ('%s') is %s %S; fuse.h runs this operator on float32 "
                              "only (uint8, int8 and int32 tensors go through the quantization "
                              "ops, Reshape, Flatten, Squeeze, Unsqueeze and Cast)",
                              k, fuse__onnx_cstr(ld, n->in[k]), fuse__dt_name(fuse__dt_of_type(v->type)),
                              v->rank, v->shape),
             0;
  }
  return 1;
}

/* Converts one node; returns its first output's value, -2 when it bound its outputs itself. */
static fuse_value fuse__onnx_convert(fuse__onnx *ld, const fuse__onode *n) {
  fuse_graph *g = ld->g;
  static const char *const binary[] = {"Add", "Sub", "Mul"};
  static const int binary_op[] = {FUSE__OP_ADD, FUSE__OP_SUB, FUSE__OP_MUL};
  fuse_value x;
  int k;
  if (fuse__slice_is(n->op, "Constant")) return fuse__onnx_constant(ld, n);
  if ((k = fuse__onnx_fold(ld, n)) != 0) return k > 0 ? -2 : FUSE_NONE;
  if (!fuse__onnx_float_inputs(ld, n)) return FUSE_NONE;
  if (fuse__onnx_in_list(n->op, fuse__onnx_fold_only_ops)) return fuse__onnx_run_time(ld, n);
  if ((x = fuse__onnx_convert_math(ld, n)) != -3 || (x = fuse__onnx_convert_shape(ld, n)) != -3 ||
      (x = fuse__onnx_convert_nn(ld, n)) != -3 || (x = fuse__onnx_convert_layers(ld, n)) != -3 ||
      (x = fuse__onnx_convert_quant(ld, n)) != -3)
    return x;
  if (n->num_in < 1 || !n->in[0].n)
    return fuse__onnx_fail(ld, FUSE_ERROR_PARSE, "the node has no input"), FUSE_NONE;
  if (fuse__slice_is(n->op, "Conv")) return fuse__onnx_conv(ld, n);
  if (fuse__slice_is(n->op, "Gemm")) return fuse__onnx_gemm(ld, n);
  if (fuse__slice_is(n->op, "Clip")) return fuse__onnx_clip(ld, n);
  if (fuse__slice_is(n->op, "Reshape")) return fuse__onnx_reshape(ld, n);
  if (fuse__slice_is(n->op, "Softmax")) return fuse__onnx_softmax(ld, n);
  if (fuse__slice_is(n->op, "MaxPool")) return fuse__onnx_pool(ld, n, FUSE__OP_MAX_POOL2D);
  if (fuse__slice_is(n->op, "AveragePool")) return fuse__onnx_pool(ld, n, FUSE__OP_AVG_POOL2D);
  if (fuse__slice_is(n->op, "Concat")) return fuse__onnx_concat(ld, n);
  if (fuse__slice_is(n->op, "BatchNormalization")) return fuse__onnx_batch_norm(ld, n);
  for (k = 0; k < 3; k++)
    if (fuse__slice_is(n->op, binary[k])) {
      fuse_value a, b;
      if (n->num_in != 2) return fuse__onnx_fail(ld, FUSE_ERROR_PARSE, "it needs two inputs"), FUSE_NONE;
      a = fuse__onnx_value(ld, n->in[0]);
      b = a == FUSE_NONE ? FUSE_NONE : fuse__onnx_value(ld, n->in[1]);
      return b == FUSE_NONE ? FUSE_NONE : fuse__binary(g, binary_op[k], a, b);
    }
  if (fuse__slice_is(n->op, "Max") || fuse__slice_is(n->op, "Min")) {
    int op = n->op.p[1] == 'a' ? FUSE__OP_MAXIMUM : FUSE__OP_MINIMUM;
    x = fuse__onnx_value(ld, n->in[0]);
    for (k = 1; k < n->num_in && x != FUSE_NONE; k++) {
      fuse_value b = fuse__onnx_value(ld, n->in[k]);
      x = b == FUSE_NONE ? FUSE_NONE : fuse__binary(g, op, x, b);
    }
    return x;
  }
  x = fuse__onnx_value(ld, n->in[0]);
  if (x == FUSE_NONE) return FUSE_NONE;
  if (fuse__slice_is(n->op, "Relu")) return fuse_relu(g, x);
  if (fuse__slice_is(n->op, "Sigmoid")) return fuse_sigmoid(g, x);
  if (fuse__slice_is(n->op, "MatMul")) {
    fuse_value b = n->num_in == 2 ? fuse__onnx_value(ld, n->in[1]) : FUSE_NONE;
    return b == FUSE_NONE ? fuse__onnx_fail(ld, FUSE_ERROR_PARSE, "MatMul needs two inputs"), FUSE_NONE
                          : fuse_matmul(g, x, b);
  }
  if (fuse__slice_is(n->op, "Flatten")) return fuse_flatten(g, x, (int)fuse__onnx_attr_int(n, "axis", 1));
  if (fuse__slice_is(n->op, "GlobalAveragePool")) return fuse_global_avg_pool2d(g, x);
  if (fuse__slice_is(n->op, "Identity")) return x;
  if (fuse__slice_is(n->op, "Transpose")) return fuse__onnx_transpose(ld, n, x);
  if (fuse__slice_is(n->op, "Dropout")) return fuse__onnx_dropout(ld, n, x);
  return fuse__onnx_fail(ld, FUSE_ERROR_UNSUPPORTED, "this operator is not supported"), FUSE_NONE;
}

/* A graph input's element type (a TensorProto data type) and shape from its ValueInfoProto:
   1 for a fixed-size float32, uint8, int8 or int32 tensor; 0 malformed, -1 another type,
   -2 no fixed shape, -3 more than 8 dimensions. */
static int fuse__onnx_input_shape(fuse__slice vi, fuse__slice *name, int *elem_type, int *rank,
                                  int64_t *shape) {
  fuse__pb b = fuse__proto_of(vi), tb, tt, sb;
  uint32_t f, w;
  fuse__slice type = {NULL, 0}, tensor = {NULL, 0}, shp = {NULL, 0};
  int64_t elem = 0;
  int has_shape = 0;
  uint64_t v;
  name->n = 0;
  while (fuse__proto_tag(&b, &f, &w)) {
    if (f == 1 && w == 2) {
      if (!fuse__proto_bytes(&b, name)) return 0;
    } else if (f == 2 && w == 2) {
      if (!fuse__proto_bytes(&b, &type)) return 0;
    } else if (!fuse__proto_skip(&b, w)) {
      return 0;
    }
  }
  tb = fuse__proto_of(type);
  while (fuse__proto_tag(&tb, &f, &w)) {
    if (f == 1 && w == 2) {
      if (!fuse__proto_bytes(&tb, &tensor)) return 0;
    } else if (!fuse__proto_skip(&tb, w)) {
      return 0;
    }
  }
  tt = fuse__proto_of(tensor);
  while (fuse__proto_tag(&tt, &f, &w)) {
    if (f == 1 && w == 0) {
      if (!fuse__proto_varint(&tt, &v)) return 0;
      elem = (int64_t)v;
    } else if (f == 2 && w == 2) {
      if (!fuse__proto_bytes(&tt, &shp)) return 0;
      has_shape = 1;
    } else if (!fuse__proto_skip(&tt, w)) {
      return 0;
    }
  }
  *elem_type = (int)elem;
  if (fuse__dt_fuse_type((int)elem) < 0) return -1;
  if (!has_shape) return -2;
  *rank = 0;
  sb = fuse__proto_of(shp);
  while (fuse__proto_tag(&sb, &f, &w)) {
    if (f == 1 && w == 2) {
      fuse__slice dim;
      fuse__pb db;
      uint32_t df, dw;
      int known = 0;
      if (!fuse__proto_bytes(&sb, &dim)) return 0;
      if (*rank == FUSE_MAX_RANK) return -3;
      db = fuse__proto_of(dim);
      while (fuse__proto_tag(&db, &df, &dw)) {
        if (df == 1 && dw == 0) {
          if (!fuse__proto_varint(&db, &v)) return 0;
          shape[*rank] = (int64_t)v;
          known = 1;
        } else if (!fuse__proto_skip(&db, dw)) {
          return 0;
        }
      }
      if (!known) return -2;
      (*rank)++;
    } else if (!fuse__proto_skip(&sb, w)) {
      return 0;
    }
  }
  return 1;
}

/* OperatorSetIdProto (domain = 1, version = 2): the opset of the default domain sets
   ld->opset. 0: it does not fit. */
static int fuse__onnx_opset_import(fuse__onnx *ld, fuse__slice s) {
  fuse__pb ob = fuse__proto_of(s);
  fuse__slice domain = {NULL, 0};
  int64_t version = -1;
  uint32_t of, ow;
  uint64_t v;
  int fits = 1;
  while (fits && ob.p < ob.end) {
    if (!fuse__proto_tag(&ob, &of, &ow)) fits = 0;
    else if (of == 1 && ow == 2) fits = fuse__proto_bytes(&ob, &domain);
    else if (of == 2 && ow == 0) {
      if ((fits = fuse__proto_varint(&ob, &v)) != 0) version = (int64_t)v;
    } else fits = fuse__proto_skip(&ob, ow);
  }
  if (fits && (domain.n == 0 || fuse__slice_is(domain, "ai.onnx")) && version > 0)
    ld->opset = (int)(version > 1000 ? 1000 : version);
  return fits;
}

/* ModelProto: opset_import = 8, graph = 7. A field that does not fit stops the loop with
   b->p at its start (the file was cut inside it), so b->p != b->end after it. */
static void fuse__onnx_read_model(fuse__onnx *ld, fuse__pb *b, fuse__slice *graph) {
  uint32_t f, w;
  fuse__slice s;
  for (;;) {
    const unsigned char *field = b->p;
    int fits = 1;
    if (!fuse__proto_tag(b, &f, &w)) break;
    if (f == 7 && w == 2) {
      fits = fuse__proto_bytes(b, graph);
    } else if (f == 8 && w == 2) {
      if ((fits = fuse__proto_bytes(b, &s)) != 0) fits = fuse__onnx_opset_import(ld, s);
    } else {
      fits = fuse__proto_skip(b, w);
    }
    if (!fits) {
      b->p = field;
      break;
    }
  }
}

/* GraphProto's initializer (pass 0): a named constant tensor, bound to its name. 0: stop the
   pass (the graph holds the error). */
static int fuse__onnx_initializer(fuse__onnx *ld, fuse__slice s) {
  fuse__oval o;
  char why[32];
  memset(&o, 0, sizeof o);
  o.kind = FUSE__OV_TENSOR;
  if (!fuse__onnx_tensor_meta(s, &o.t, why, sizeof why)) {
    fuse__onnx_fail(ld, FUSE_ERROR_PARSE, "an initializer is malformed");
    return 0;
  }
  if (!fuse__onnx_name_ok(ld, o.t.name)) return 0;
  if (!o.t.name.n) {
    fuse__onnx_fail(ld, FUSE_ERROR_PARSE, "an initializer has no name");
    return 0;
  }
  if (!fuse__onnx_bind(ld, o.t.name, &o)) fuse__onnx_fail(ld, FUSE_ERROR_OUT_OF_MEMORY, "out of memory");
  return 1;
}

/* GraphProto's input (pass 1): a graph input of fixed shape, float32 or (a quantized model's)
   uint8 / int8 / int32, unless an initializer has its name. 0: stop the pass (the graph holds
   the error). */
static int fuse__onnx_graph_input(fuse__onnx *ld, fuse__slice s) {
  fuse_graph *g = ld->g;
  fuse__slice name;
  int64_t shape[FUSE_MAX_RANK];
  int rank = 0, r, i, elem = 0;
  fuse_value x;
  r = fuse__onnx_input_shape(s, &name, &elem, &rank, shape);
  if (!name.n) {
    fuse__onnx_fail(ld, FUSE_ERROR_PARSE, "a graph input has no name");
    return 0;
  }
  if ((i = fuse__onnx_find(ld, name)) >= 0) {
    if (ld->vals[i].kind == FUSE__OV_TENSOR) return 1; /* an initializer listed as input */
    fuse__fail(g, FUSE_ERROR_PARSE, "onnx: graph input '%s' is listed twice",
               fuse__onnx_cstr(ld, name));
    return 0;
  }
  if (!fuse__onnx_name_ok(ld, name)) return 0;
  if (r <= 0) {
    if (r == -1 && elem)
      fuse__fail(g, FUSE_ERROR_UNSUPPORTED,
                 "onnx: graph input '%s' is a tensor of %s; fuse.h takes float32, uint8, int8 "
                 "and int32 inputs", fuse__onnx_cstr(ld, name), fuse__dt_name(elem));
    else
      fuse__fail(g, r == 0 ? FUSE_ERROR_PARSE : FUSE_ERROR_UNSUPPORTED,
                 "onnx: graph input '%s' %s", fuse__onnx_cstr(ld, name),
                 r == 0    ? "is malformed"
                 : r == -1 ? "is not a tensor (or has no element type)"
                 : r == -2 ? "has no fixed shape (symbolic or missing dimensions)"
                           : "has more than 8 dimensions");
    return 0;
  }
  for (i = 0; i < rank && shape[i] > 0; i++) {
  }
  if (i < rank) {
    fuse__fail(g, shape[i] == 0 ? FUSE_ERROR_UNSUPPORTED : FUSE_ERROR_PARSE,
               "onnx: graph input '%s' has dimension %d = %D (%s)",
               fuse__onnx_cstr(ld, name), i, shape[i],
               shape[i] == 0 ? "zero-sized tensors are not supported" : "negative");
    return 0;
  }
  x = fuse_typed_input(g, fuse__onnx_cstr(ld, name), (fuse_type)fuse__dt_fuse_type(elem), rank,
                       shape);
  if (x == FUSE_NONE || !fuse__onnx_bind_value(ld, name, x)) {
    if (g->status == FUSE_OK) fuse__onnx_fail(ld, FUSE_ERROR_OUT_OF_MEMORY, "out of memory");
    return 0;
  }
  return 1;
}

/* A node's conversion failed: say which node, keeping a builder's message and status. */
static void fuse__onnx_convert_failed(fuse__onnx *ld) {
  fuse_graph *g = ld->g;
  if (g->status == FUSE_OK) fuse__onnx_fail(ld, FUSE_ERROR_PARSE, "it could not be converted");
  else if (strncmp(g->error, "onnx:", 5) != 0) { /* a builder's message: say where */
    char msg[sizeof g->error];
    fuse_result builder_status = g->status; /* keep it: out of memory stays that */
    memcpy(msg, g->error, sizeof msg);
    g->status = FUSE_OK;
    fuse__onnx_fail(ld, builder_status, msg);
  }
}

/* GraphProto's node (pass 2), parsed, converted and bound to its first output's name (ld->node
   points at it for the messages while it is converted). 0: stop the pass (the graph holds
   the error). */
static int fuse__onnx_graph_node(fuse__onnx *ld, fuse__slice s) {
  fuse_graph *g = ld->g;
  fuse__onode node;
  fuse_value y;
  int i, ok = 0;
  ld->node = NULL;
  if (!fuse__onnx_node(ld, s, &node)) {
    if (g->status == FUSE_OK) fuse__onnx_fail(ld, FUSE_ERROR_PARSE, "a node is malformed");
    fuse__onnx_node_free(ld, &node);
    return 0;
  }
  ld->node = &node;
  ld->node_index++;
  for (i = 0; i < node.num_in; i++)
    if (!fuse__onnx_name_ok(ld, node.in[i])) break;
  for (i = 0; i < node.num_out; i++)
    if (!fuse__onnx_name_ok(ld, node.out[i])) break;
  if (g->status != FUSE_OK) goto done;
  if (!fuse__onnx_known(node.op)) {
    fuse__onnx_fail(ld, FUSE_ERROR_UNSUPPORTED, "this operator is not supported");
    goto done;
  }
  for (i = 0; i < node.num_out && !node.out[i].n; i++) { /* an optional output may be unnamed */
  }
  if (i == node.num_out) {
    fuse__onnx_fail(ld, FUSE_ERROR_PARSE, "the node has no output");
    goto done;
  }
  for (i = 0; i < node.num_out; i++)
    if (node.out[i].n && fuse__onnx_find(ld, node.out[i]) >= 0) { /* SSA: one name, one maker */
      fuse__onnx_failf(ld, FUSE_ERROR_PARSE,
                       "its output '%s' is already made by an earlier node, an initializer or "
                       "a graph input", fuse__onnx_cstr(ld, node.out[i]));
      goto done;
    }
  y = fuse__onnx_convert(ld, &node);
  if (y == FUSE_NONE) {
    fuse__onnx_convert_failed(ld);
    goto done;
  }
  if (y != -2 && node.out[0].n) { /* -2: it bound its outputs itself (a Constant, a folded
                                      node, a Split) */
    if (!g->nodes[y].name && g->nodes[y].op > FUSE__OP_CONST &&
        fuse__find(g, fuse__onnx_cstr(ld, node.out[0])) == FUSE_NONE)
      fuse_value_set_name(g, y, fuse__onnx_cstr(ld, node.out[0]));
    if (!fuse__onnx_bind_value(ld, node.out[0], y)) {
      fuse__onnx_fail(ld, FUSE_ERROR_OUT_OF_MEMORY, "out of memory");
      goto done;
    }
    if (fuse__slice_is(node.op, "Round") || fuse__slice_is(node.op, "Floor") ||
        fuse__slice_is(node.op, "Ceil"))
      ld->vals[fuse__onnx_find(ld, node.out[0])].whole = 1;
  }
  ok = 1;
done:
  fuse__onnx_node_free(ld, &node);
  ld->node = NULL;
  return ok;
}

/* GraphProto's output (pass 3): ValueInfoProto's name = 1, made a graph output; when it
   declares float32, uint8, int8 or int32, the value must be of that type. 0: stop the pass
   (the graph holds the error). */
static int fuse__onnx_graph_output(fuse__onnx *ld, fuse__slice s) {
  fuse_graph *g = ld->g;
  fuse__slice name = {NULL, 0}, same;
  fuse__pb ob = fuse__proto_of(s);
  uint32_t of, ow;
  fuse_value y;
  int elem = 0, rank, type;
  int64_t dims[FUSE_MAX_RANK];
  while (fuse__proto_tag(&ob, &of, &ow)) {
    if (of == 1 && ow == 2) {
      if (!fuse__proto_bytes(&ob, &name)) break;
    } else if (!fuse__proto_skip(&ob, ow)) {
      break;
    }
  }
  ld->node = NULL;
  if (!name.n) {
    fuse__onnx_fail(ld, FUSE_ERROR_PARSE, "a graph output has no name");
    return 0;
  }
  if (fuse__onnx_find(ld, name) < 0) { /* say which end is missing */
    fuse__fail(g, FUSE_ERROR_PARSE,
               "onnx: graph output '%s' is made by no node, initializer or graph input",
               fuse__onnx_cstr(ld, name));
    return 0;
  }
  fuse__onnx_input_shape(s, &same, &elem, &rank, dims); /* for its element type only */
  type = fuse__dt_fuse_type(elem);
  y = type > FUSE_FLOAT32 ? fuse__onnx_typed_value(ld, name, "graph output") : fuse__onnx_value(ld, name);
  if (y != FUSE_NONE && type >= 0 && type != (int)fuse_value_type(g, y)) {
    fuse__fail(g, FUSE_ERROR_PARSE, "onnx: graph output '%s' is declared %s, but the graph "
               "computes it as %s", fuse__onnx_cstr(ld, name), fuse__dt_name(elem),
               fuse__dt_name(fuse__dt_of_type((int)fuse_value_type(g, y))));
    return 0;
  }
  return !(y == FUSE_NONE || fuse_output(g, y) != FUSE_OK);
}

/* Every operator of the graph (its top level) that the loader does not know, counted by
   name, in one message: "unsupported: NonMaxSuppression (1 node), TopK (2 nodes)". 0 (and
   the error) when there is one; 1 when all are known or the graph is malformed (the node
   pass reports that, at the node). */
static int fuse__onnx_check_ops(fuse__onnx *ld, fuse__slice graph) {
  enum { MAX_NAMES = 24 };
  fuse__slice names[MAX_NAMES], domains[MAX_NAMES];
  int counts[MAX_NAMES], n_names = 0, more = 0, i, detection = 0;
  fuse__pb b = fuse__proto_of(graph);
  uint32_t f, w;
  char msg[sizeof ld->g->error];
  fuse__out o;
  while (fuse__proto_tag(&b, &f, &w)) {
    fuse__slice s, op = {NULL, 0}, domain = {NULL, 0};
    fuse__pb nb;
    uint32_t nf, nw;
    if (w != 2 || f != 1) {
      if (!fuse__proto_skip(&b, w)) return 1;
      continue;
    }
    if (!fuse__proto_bytes(&b, &s)) return 1;
    nb = fuse__proto_of(s);
    while (fuse__proto_tag(&nb, &nf, &nw)) {
      if (nw == 2 && (nf == 4 || nf == 7)) {
        if (!fuse__proto_bytes(&nb, nf == 4 ? &op : &domain)) return 1;
      } else if (!fuse__proto_skip(&nb, nw)) {
        return 1;
      }
    }
    if (domain.n && !fuse__slice_is(domain, "ai.onnx")) {
      /* another domain's operator is unknown whatever its name */
    } else if (!op.n || fuse__onnx_known(op) || fuse__slice_is(op, "Constant")) {
      continue;
    }
    for (i = 0; i < n_names; i++)
      if (fuse__slice_eq(names[i], op) && fuse__slice_eq(domains[i], domain)) break;
    if (i < n_names) counts[i]++;
    else if (n_names < MAX_NAMES) names[n_names] = op, domains[n_names] = domain, counts[n_names++] = 1;
    else more++;
  }
  if (!n_names) return 1;
  o.buf = msg;
  o.len = 0;
  o.cap = sizeof msg;
  o.write = NULL;
  o.user = NULL;
  fuse__puts(&o, "unsupported: ");
  for (i = 0; i < n_names; i++) {
    char name[64];
    static const char *const heads[] = {"NonMaxSuppression", "RoiAlign", NULL};
    int k;
    for (k = 0; heads[k]; k++) detection |= fuse__slice_is(names[i], heads[k]);
    if (i) fuse__puts(&o, ", ");
    if (domains[i].n) {
      fuse__copy_slice(name, sizeof name, domains[i]);
      fuse__puts(&o, name);
      fuse__puts(&o, ":");
    }
    fuse__copy_slice(name, sizeof name, names[i]);
    fuse__puts(&o, name);
    fuse__puts(&o, " (");
    fuse__put_int(&o, counts[i]);
    fuse__puts(&o, counts[i] == 1 ? " node)" : " nodes)");
  }
  if (more) {
    fuse__puts(&o, " and ");
    fuse__put_int(&o, more);
    fuse__puts(&o, " more nodes");
  }
  if (detection)
    fuse__puts(&o, "; detection post-processing is out of scope: cut the model before its heads");
  ld->node = NULL;
  fuse__onnx_fail(ld, FUSE_ERROR_UNSUPPORTED, msg);
  return 0;
}

/* GraphProto, pass 0: initializer = 5; pass 1: input = 11; pass 2: node = 1;
   pass 3: output = 12. Fields may come in any order, so one pass each. `data` is the file,
   for the byte offset of a malformed field. */
static void fuse__onnx_read_graph(fuse__onnx *ld, fuse__slice graph, const void *data) {
  fuse_graph *g = ld->g;
  fuse__pb b;
  fuse__slice s;
  uint32_t f, w;
  int pass;
  if (!fuse__onnx_check_ops(ld, graph)) return;
  for (pass = 0; pass < 4 && g->status == FUSE_OK; pass++) {
    b = fuse__proto_of(graph);
    const unsigned char *field = b.p;
    while (g->status == FUSE_OK && (field = b.p, fuse__proto_tag(&b, &f, &w))) {
      int more;
      if (w != 2 || !((pass == 0 && f == 5) || (pass == 1 && f == 11) || (pass == 2 && f == 1) ||
                      (pass == 3 && f == 12))) {
        if (!fuse__proto_skip(&b, w)) {
          b.p = field; /* cut off: malformed, reported below */
          break;
        }
        continue;
      }
      if (!fuse__proto_bytes(&b, &s)) {
        b.p = field;
        break;
      }
      more = pass == 0   ? fuse__onnx_initializer(ld, s)
             : pass == 1 ? fuse__onnx_graph_input(ld, s)
             : pass == 2 ? fuse__onnx_graph_node(ld, s)
                         : fuse__onnx_graph_output(ld, s);
      if (!more) break;
    }
    if (g->status == FUSE_OK && b.p != b.end)
      fuse__fail(g, FUSE_ERROR_PARSE, "onnx: the graph is malformed at byte %D",
                 (int64_t)(b.p - (const unsigned char *)data));
  }
}

/* Loads a model from memory; dir is the directory its external data is in (NULL: none);
   borrow: data is a file mapping the graph may keep (fuse__constant_borrowed). */
static fuse_result fuse__onnx_load(const void *data, size_t size, const fuse_allocator *alloc,
                                   const char *dir, int borrow, fuse_graph **out) {
  fuse__onnx ld;
  fuse__pb b;
  fuse__slice graph = {NULL, 0};
  fuse_graph *g;
  int i;
  if (!out) return FUSE_ERROR_INVALID_ARGUMENT;
  *out = g = fuse_graph_create(alloc);
  if (!g) return FUSE_ERROR_OUT_OF_MEMORY;
  memset(&ld, 0, sizeof ld);
  ld.g = g;
  ld.opset = 13;
  ld.node_index = -1; /* counts from 0 */
  ld.dir = dir;
  ld.borrow = borrow;
  if (!data && size)
    return fuse__fail(g, FUSE_ERROR_INVALID_ARGUMENT, "onnx: data is NULL"), g->status;
  b.p = (const unsigned char *)data;
  b.end = b.p + size;
  fuse__onnx_read_model(&ld, &b, &graph);
  if (b.p != b.end)
    return fuse__fail(g, FUSE_ERROR_PARSE,
                      "onnx: the file is truncated or corrupt: a field at byte %D of %D does "
                      "not fit (not an ONNX model?)",
                      (int64_t)(b.p - (const unsigned char *)data), (int64_t)size),
           g->status;
  if (!graph.p)
    return fuse__fail(g, FUSE_ERROR_PARSE, "onnx: not an ONNX model: it has no graph (%D bytes)",
                      (int64_t)size),
           g->status;
  fuse__onnx_read_graph(&ld, graph, data);
  if (g->status == FUSE_OK && g->num_outputs == 0) /* nothing to compute: a damaged file */
    fuse__fail(g, FUSE_ERROR_PARSE, "onnx: the graph has no outputs");
  for (i = 0; i < ld.num_owned; i++) fuse__free(&g->alloc, ld.owned[i]);
  fuse__free(&g->alloc, ld.owned);
  fuse__free(&g->alloc, ld.vals);
  fuse__free(&g->alloc, ld.table);
  return g->status;
}

FUSE_API fuse_result fuse_onnx_load_memory(const void *data, size_t size,
                                           const fuse_allocator *alloc, fuse_graph **out) {
  return fuse__onnx_load(data, size, alloc, NULL, 0, out);
}

#ifndef FUSE_NO_STDIO
#if (defined(__linux__) || defined(__APPLE__)) && !defined(FUSE_NO_MMAP)
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
/* Maps the file read-only and loads from the mapping: the large float32 initializers stay in
   it, borrowed by the graph (which unmaps the file when it is destroyed), the rest is copied
   out of the page cache; no copy of the whole file is made. The weights first cross fresh
   memory when fuse_compile packs them: on a 500 MB model, zeroing fresh pages costs as much
   as reading the file. The file must stay as it is while the graph lives (as with any
   mapping, truncating it would fault a later read). 1 when it did the load (its result in
   *r); 0 when the file cannot be mapped (the caller reads it). */
static int fuse__onnx_load_mapped(const char *path, const char *dir, const fuse_allocator *alloc,
                                  fuse_graph **out, fuse_result *r) {
  struct stat st;
  void *map;
  int fd = open(path, O_RDONLY);
  if (fd < 0) return 0;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size <= 0 ||
      (uint64_t)st.st_size > FUSE__MAX_BYTES || (uint64_t)st.st_size > (size_t)-1) {
    close(fd);
    return 0;
  }
#ifdef MAP_POPULATE /* the whole file is read: map its pages in one call, not a fault each */
  map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
#else
  map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
#endif
  close(fd);
  if (map == MAP_FAILED) return 0;
  *r = fuse__onnx_load(map, (size_t)st.st_size, alloc, dir, 1, out);
  if (*out) {
    fuse_graph *g = *out;
    int i;
    for (i = 0; i < g->num_nodes && !g->nodes[i].raw; i++) {
    }
    if (i < g->num_nodes) { /* a constant is still in the file: the graph keeps it */
      g->mapped = map;
      g->mapped_size = (size_t)st.st_size;
      return 1;
    }
  }
  munmap(map, (size_t)st.st_size);
  return 1;
}
#else
static int fuse__onnx_load_mapped(const char *path, const char *dir, const fuse_allocator *alloc,
                                  fuse_graph **out, fuse_result *r) {
  (void)path, (void)dir, (void)alloc, (void)out, (void)r;
  return 0;
}
#endif

FUSE_API fuse_result fuse_onnx_load_file(const char *path, const fuse_allocator *alloc,
                                         fuse_graph **out) {
  FILE *f;
  long size;
  void *data;
  fuse_allocator a;
  fuse_result r;
  char dir[768] = "";
  if (!out) return FUSE_ERROR_INVALID_ARGUMENT;
  *out = NULL;
  memset(&a, 0, sizeof a);
  if (alloc) a = *alloc;
  if (!a.alloc != !a.free) return FUSE_ERROR_INVALID_ARGUMENT; /* as fuse_graph_create: no graph */
  if (path) { /* external data lives beside the model */
    const char *slash = strrchr(path, '/');
    size_t n = slash ? (size_t)(slash - path) + 1 : 0;
    if (n >= sizeof dir) n = 0;
    memcpy(dir, path, n);
    dir[n] = 0;
  }
  if (path && fuse__onnx_load_mapped(path, dir, alloc, out, &r)) return r;
  f = path ? fopen(path, "rb") : NULL;
  /* a directory opens on some systems and reports a size near LONG_MAX: not a file to read */
  if (!f || fseek(f, 0, SEEK_END) != 0 || (size = ftell(f)) < 0 ||
      (uint64_t)size > FUSE__MAX_BYTES || fseek(f, 0, SEEK_SET) != 0) {
    if (f) fclose(f);
    *out = fuse_graph_create(alloc);
    if (!*out) return FUSE_ERROR_OUT_OF_MEMORY;
    fuse__fail(*out, FUSE_ERROR_IO, "onnx: cannot read '%s'", path ? path : "(NULL path)");
    return FUSE_ERROR_IO;
  }
  data = fuse__alloc(&a, (size_t)size, 16);
  if (!data || fread(data, 1, (size_t)size, f) != (size_t)size) {
    fclose(f);
    fuse__free(&a, data);
    *out = fuse_graph_create(alloc);
    if (!*out) return FUSE_ERROR_OUT_OF_MEMORY;
    fuse__fail(*out, data ? FUSE_ERROR_IO : FUSE_ERROR_OUT_OF_MEMORY,
               data ? "onnx: cannot read '%s'" : "onnx: out of memory reading '%s'", path);
    return (*out)->status;
  }
  fclose(f);
  r = fuse__onnx_load(data, (size_t)size, alloc, dir, 0, out);
  fuse__free(&a, data);
  return r;
}
#endif

FUSE_API fuse_result fuse_onnx_load_tensor(const void *data, size_t size,
                                           const fuse_allocator *alloc, fuse_onnx_tensor *out) {
  fuse__otensor t;
  fuse__slice msg;
  fuse_allocator a;
  int64_t count = 1;
  int i;
  char why[64];
  fuse__out o;
  if (!out) return FUSE_ERROR_INVALID_ARGUMENT;
  memset(out, 0, sizeof *out);
  memset(&a, 0, sizeof a);
  if (alloc) a = *alloc;
  o.buf = out->error;
  o.len = 0;
  o.cap = sizeof out->error;
  o.write = NULL;
  o.user = NULL;
  if (!a.alloc != !a.free) { /* the data could not be freed */
    fuse__puts(&o, "onnx tensor: the allocator needs both alloc and free (or neither)");
    return FUSE_ERROR_INVALID_ARGUMENT;
  }
  if (!data && size) {
    fuse__puts(&o, "onnx tensor: data is NULL");
    return FUSE_ERROR_INVALID_ARGUMENT;
  }
  msg.p = (const unsigned char *)data;
  msg.n = data ? size : 0;
  why[0] = 0;
  if (!fuse__onnx_tensor_meta(msg, &t, why, sizeof why)) {
    fuse__puts(&o, "onnx tensor: malformed data");
    if (why[0]) { /* e.g. "more than 8 dimensions" */
      why[sizeof why - 1] = 0;
      fuse__puts(&o, " (");
      fuse__puts(&o, why);
      fuse__puts(&o, ")");
    }
    return FUSE_ERROR_PARSE;
  }
  if (fuse__dt_fuse_type(t.dtype) < 0) {
    fuse__puts(&o, "onnx tensor: data type ");
    fuse__put_int(&o, t.dtype);
    fuse__puts(&o, " (");
    fuse__puts(&o, fuse__dt_name(t.dtype));
    fuse__puts(&o, ") is not float32, uint8, int8 or int32");
    return FUSE_ERROR_UNSUPPORTED;
  }
  if (t.external) {
    fuse__puts(&o, "onnx tensor: external data is not supported");
    return FUSE_ERROR_UNSUPPORTED;
  }
  if ((i = fuse__onnx_tensor_count(&t, &count)) >= 0) {
    fuse__puts(&o, "onnx tensor: a dimension is zero or out of range");
    return t.dims[i] == 0 ? FUSE_ERROR_UNSUPPORTED : FUSE_ERROR_PARSE;
  }
  if (fuse__onnx_tensor_values(&t, NULL, NULL, 0) != count) { /* before allocating */
    fuse__puts(&o, "onnx tensor: the data does not match the dimensions");
    return FUSE_ERROR_PARSE;
  }
  out->data = (float *)fuse__alloc(&a, (size_t)count * sizeof(float), FUSE__ALIGN);
  if (!out->data) {
    fuse__puts(&o, "onnx tensor: out of memory");
    return FUSE_ERROR_OUT_OF_MEMORY;
  }
  fuse__onnx_tensor_values(&t, out->data, NULL, count); /* counted above: it fits */
  out->type = (fuse_type)fuse__dt_fuse_type(t.dtype);
  out->rank = t.rank;
  memcpy(out->shape, t.dims, sizeof t.dims);
  i = (int)(t.name.n < sizeof out->name - 1 ? t.name.n : sizeof out->name - 1);
  if (i) memcpy(out->name, t.name.p, (size_t)i);
  out->name[i] = 0;
  return FUSE_OK;
}

FUSE_API void fuse_onnx_tensor_free(fuse_onnx_tensor *t, const fuse_allocator *alloc) {
  fuse_allocator a;
  if (!t) return;
  memset(&a, 0, sizeof a);
  if (alloc) a = *alloc;
  if (!a.alloc != !a.free) return; /* fuse_onnx_load_tensor refuses such an allocator */
  fuse__free(&a, t->data);
  t->data = NULL;
}
#endif /* FUSE_NO_ONNX */
