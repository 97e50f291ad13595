/* ------------------------------------------------------------ builders: shape -- */
/* data movement: slice, gather, expand, tile, split, squeeze / unsqueeze, depth / space, pad, resize */

/* Gather along `axis` (normalized) with the indices in the constant idx, whose values in
   range are checked here (a parsed constant's values may still change: the kernel clamps). */
static fuse_value fuse__gather_node(fuse_graph *g, fuse_value x, fuse_value idx, int axis) {
  fuse_value in[2];
  fuse__node *nx, *ni, *n;
  int64_t out[FUSE_MAX_RANK], count, i, dim;
  int ax, rank;
  in[0] = x;
  in[1] = idx;
  if (!fuse__begin(g, "gather", 2, in)) return FUSE_NONE;
  nx = fuse__node_of(g, x);
  ni = fuse__node_of(g, idx);
  if (nx->rank < 1) return fuse__fail(g, FUSE_ERROR_SHAPE, "gather: input %V is a scalar", x);
  if (ni->op != FUSE__OP_CONST)
    return fuse__fail(g, FUSE_ERROR_UNSUPPORTED, "gather: indices %V must be a constant, not a %s",
                      idx, fuse__ops[ni->op].name);
  if (!fuse__axis(g, "gather", axis, nx->rank, 0, nx, &ax)) return FUSE_NONE;
  rank = nx->rank - 1 + ni->rank;
  if (rank > FUSE_MAX_RANK)
    return fuse__fail(g, FUSE_ERROR_SHAPE,
                      "gather: input %S with indices %S gives rank %d, more than %d", nx->rank,
                      nx->shape, ni->rank, ni->shape, rank, FUSE_MAX_RANK);
  dim = nx->shape[ax];
  count = fuse__numel(ni->rank, ni->shape);
  for (i = 0; i < count; i++) {
    float v = fuse__const_at(ni, i);
    if (!(v >= (float)-dim && v < (float)dim) || v != floorf(v))
      return fuse__fail(g, FUSE_ERROR_INVALID_ARGUMENT,
                        "gather: index %f (entry %D of %V) is not a whole number in %D..%D for "
                        "axis %d of %S",
                        (double)v, i, idx, -dim, dim - 1, ax, nx->rank, nx->shape);
  }
  memcpy(out, nx->shape, (size_t)ax * sizeof(int64_t));
  if (ni->rank) memcpy(out + ax, ni->shape, (size_t)ni->rank * sizeof(int64_t));
  for (i = ax + 1; i < nx->rank; i++) out[i - 1 + ni->rank] = nx->shape[i];
  if (!fuse__check_shape(g, "gather", rank, out)) return FUSE_NONE;
  if (!(n = fuse__new_node(g, FUSE__OP_GATHER, 2, in, rank, out))) return FUSE_NONE;
  n->a.axis = ax;
  return fuse__id(g, n);
}

FUSE_API fuse_value fuse_gather(fuse_graph *g, fuse_value x, int axis, int index_rank,
                                const int64_t *index_shape, const int64_t *indices) {
  fuse__node *nx;
  fuse_value idx;
  float *data;
  int64_t count, i, dim;
  int ax;
  if (!fuse__begin(g, "gather", 1, &x)) return FUSE_NONE;
  nx = fuse__node_of(g, x);
  if (nx->rank < 1) return fuse__fail(g, FUSE_ERROR_SHAPE, "gather: input %V is a scalar", x);
  if (!fuse__axis(g, "gather", axis, nx->rank, 0, nx, &ax)) return FUSE_NONE;
  if (!fuse__check_shape(g, "gather: indices", index_rank, index_shape)) return FUSE_NONE;
  count = fuse__numel(index_rank, index_shape);
  if (!indices)
    return fuse__fail(g, FUSE_ERROR_INVALID_ARGUMENT, "gather: indices are NULL (%D expected)",
                      count);
  dim = nx->shape[ax];
  for (i = 0; i < count; i++)
    if (indices[i] < -dim || indices[i] >= dim)
      return fuse__fail(g, FUSE_ERROR_INVALID_ARGUMENT,
                        "gather: index %D (entry %D) is outside %D..%D for axis %d of %S",
                        indices[i], i, -dim, dim - 1, ax, nx->rank, nx->shape);
  if (dim > 16777216)
    return fuse__fail(g, FUSE_ERROR_UNSUPPORTED,
                      "gather: axis %d of %S is longer than 2^24: its indices do not fit a float",
                      ax, nx->rank, nx->shape);
  if ((idx = fuse_constant(g, NULL, index_rank, index_shape, NULL)) == FUSE_NONE) return FUSE_NONE;
  data = g->nodes[idx].data;
  for (i = 0; i < count; i++) data[i] = (float)(indices[i] < 0 ? indices[i] + dim : indices[i]);
  return fuse__gather_node(g, x, idx, ax);
}

FUSE_API fuse_value fuse_expand(fuse_graph *g, fuse_value x, int rank, const int64_t *shape) {
  fuse__node *nx, *n;
  int64_t out[FUSE_MAX_RANK];
  int r, i;
  if (!fuse__begin(g, "expand", 1, &x)) return FUSE_NONE;
  nx = fuse__node_of(g, x);
  if (!fuse__check_shape(g, "expand: shape", rank, shape)) return FUSE_NONE;
  if (!fuse__broadcast(nx->rank, nx->shape, rank, shape, &r, out)) {
    for (i = 0; i < rank; i++) out[i] = shape[i];
    return fuse__fail(g, FUSE_ERROR_SHAPE, "expand: %V %S does not broadcast with shape %S", x,
                      nx->rank, nx->shape, rank, out);
  }
  if (!fuse__check_shape(g, "expand", r, out)) return FUSE_NONE;
  n = fuse__new_node(g, FUSE__OP_EXPAND, 1, &x, r, out);
  return n ? fuse__id(g, n) : FUSE_NONE;
}

FUSE_API fuse_value fuse_tile(fuse_graph *g, fuse_value x, const int64_t *repeats) {
  fuse__node *nx, *n;
  int64_t out[FUSE_MAX_RANK];
  int i;
  if (!fuse__begin(g, "tile", 1, &x)) return FUSE_NONE;
  nx = fuse__node_of(g, x);
  if (nx->rank > 0 && !repeats)
    return fuse__fail(g, FUSE_ERROR_INVALID_ARGUMENT, "tile: repeats are NULL for %S (%V)",
                      nx->rank, nx->shape, x);
  for (i = 0; i < nx->rank; i++) {
    if (repeats[i] < 1 || repeats[i] > FUSE__MAX_DIM)
      return fuse__fail(g, FUSE_ERROR_INVALID_ARGUMENT,
                        "tile: repeats %S for %S: entry %d is %D (must be 1..2147483647)",
                        nx->rank, repeats, nx->rank, nx->shape, i, repeats[i]);
    out[i] = nx->shape[i] * repeats[i]; /* < 2^62: checked below */
  }
  if (!fuse__check_shape(g, "tile", nx->rank, out)) return FUSE_NONE;
  if (!(n = fuse__new_node(g, FUSE__OP_TILE, 1, &x, nx->rank, out))) return FUSE_NONE;
  for (i = 0; i < n->rank; i++) n->a.slice.step[i] = n->shape[i] / fuse__node_of(g, x)->shape[i];
  return fuse__id(g, n); /* tile keeps its repeats in slice's per-axis list (the text form's) */
}

FUSE_API fuse_value fuse_squeeze(fuse_graph *g, fuse_value x, int count, const int *axes) {
  fuse__node *nx;
  int64_t out[FUSE_MAX_RANK];
  int drop[FUSE_MAX_RANK], i, ax, rank = 0;
  if (!fuse__begin(g, "squeeze", 1, &x)) return FUSE_NONE;
  nx = fuse__node_of(g, x);
  memset(drop, 0, sizeof drop);
  if (count < 0 || count > nx->rank || (count > 0 && !axes))
    return fuse__fail(g, FUSE_ERROR_INVALID_ARGUMENT,
                      "squeeze: %d axes (%s) for %S: 0..%d axes with a list", count,
                      axes ? "given" : "NULL", nx->rank, nx->shape, nx->rank);
  for (i = 0; i < count; i++) {
    if (!fuse__axis(g, "squeeze", axes[i], nx->rank, 0, nx, &ax)) return FUSE_NONE;
    if (nx->shape[ax] != 1)
      return fuse__fail(g, FUSE_ERROR_SHAPE, "squeeze: axis %d of %S (%V) has size %D, not 1",
                        axes[i], nx->rank, nx->shape, x, nx->shape[ax]);
    drop[ax] = 1;
  }
  for (i = 0; i < nx->rank; i++)
    if (!(count ? drop[i] : nx->shape[i] == 1)) out[rank++] = nx->shape[i];
  return fuse_reshape(g, x, rank, out);
}

FUSE_API fuse_value fuse_unsqueeze(fuse_graph *g, fuse_value x, int count, const int *axes) {
  fuse__node *nx;
  int64_t out[FUSE_MAX_RANK];
  int added[FUSE_MAX_RANK], i, k, ax, rank;
  if (!fuse__begin(g, "unsqueeze", 1, &x)) return FUSE_NONE;
  nx = fuse__node_of(g, x);
  rank = nx->rank + count;
  if (count < 1 || !axes || rank > FUSE_MAX_RANK)
    return fuse__fail(g, FUSE_ERROR_INVALID_ARGUMENT,
                      "unsqueeze: %d axes (%s) for %S: 1..%d axes with a list", count,
                      axes ? "given" : "NULL", nx->rank, nx->shape, FUSE_MAX_RANK - nx->rank);
  memset(added, 0, sizeof added);
  for (i = 0; i < count; i++) {
    if (axes[i] < -rank || axes[i] >= rank)
      return fuse__fail(g, FUSE_ERROR_INVALID_ARGUMENT,
                        "unsqueeze: axis %d is outside %d..%d for %S gaining %d axes", axes[i],
                        -rank, rank - 1, nx->rank, nx->shape, count);
    ax = axes[i] < 0 ? axes[i] + rank : axes[i];
    if (added[ax]++)
      return fuse__fail(g, FUSE_ERROR_INVALID_ARGUMENT, "unsqueeze: axis %d is given twice",
                        ax);
  }
  for (i = 0, k = 0; i < rank; i++) out[i] = added[i] ? 1 : nx->shape[k++];
  return fuse_reshape(g, x, rank, out);
}

/* Checks a 4-D input and a block size; 0 with the graph's error. */
static int fuse__block_input(fuse_graph *g, const char *who, fuse_value x, int block) {
  const fuse__node *nx;
  if (!fuse__begin(g, who, 1, &x)) return 0;
  nx = fuse__node_of(g, x);
  if (nx->rank != 4)
    return fuse__fail(g, FUSE_ERROR_SHAPE, "%s: input %S (%V) must be 4-D [N,C,H,W]", who,
                      nx->rank, nx->shape, x),
           0;
  if (block < 1)
    return fuse__fail(g, FUSE_ERROR_INVALID_ARGUMENT, "%s: block size %d must be >= 1", who,
                      block),
           0;
  return 1;
}

FUSE_API fuse_value fuse_depth_to_space(fuse_graph *g, fuse_value x, int block, int crd) {
  static const int dcr_perm[6] = {0, 3, 4, 1, 5, 2}, crd_perm[6] = {0, 1, 4, 2, 5, 3};
  const fuse__node *nx;
  int64_t s6[6], s4[4], N, C, H, W, b = block;
  fuse_value t;
  if (!fuse__block_input(g, "depth_to_space", x, block)) return FUSE_NONE;
  nx = fuse__node_of(g, x);
  N = nx->shape[0], C = nx->shape[1], H = nx->shape[2], W = nx->shape[3];
  if (C % (b * b))
    return fuse__fail(g, FUSE_ERROR_SHAPE,
                      "depth_to_space: %D channels of %S are not divisible by block^2 = %D", C,
                      nx->rank, nx->shape, b * b);
  s6[0] = N;
  if (crd) s6[1] = C / (b * b), s6[2] = b, s6[3] = b;
  else s6[1] = b, s6[2] = b, s6[3] = C / (b * b);
  s6[4] = H, s6[5] = W;
  s4[0] = N, s4[1] = C / (b * b), s4[2] = H * b, s4[3] = W * b;
  if (!fuse__check_shape(g, "depth_to_space", 4, s4)) return FUSE_NONE;
  t = fuse_transpose(g, fuse_reshape(g, x, 6, s6), crd ? crd_perm : dcr_perm);
  return fuse_reshape(g, t, 4, s4);
}

FUSE_API fuse_value fuse_space_to_depth(fuse_graph *g, fuse_value x, int block) {
  static const int perm[6] = {0, 3, 5, 1, 2, 4};
  const fuse__node *nx;
  int64_t s6[6], s4[4], N, C, H, W, b = block;
  fuse_value t;
  if (!fuse__block_input(g, "space_to_depth", x, block)) return FUSE_NONE;
  nx = fuse__node_of(g, x);
  N = nx->shape[0], C = nx->shape[1], H = nx->shape[2], W = nx->shape[3];
  if (H % b || W % b)
    return fuse__fail(g, FUSE_ERROR_SHAPE,
                      "space_to_depth: height and width of %S are not divisible by block %D",
                      nx->rank, nx->shape, b);
  s6[0] = N, s6[1] = C, s6[2] = H / b, s6[3] = b, s6[4] = W / b, s6[5] = b;
  s4[0] = N, s4[1] = C * b * b, s4[2] = H / b, s4[3] = W / b;
  if (!fuse__check_shape(g, "space_to_depth", 4, s4)) return FUSE_NONE;
  t = fuse_transpose(g, fuse_reshape(g, x, 6, s6), perm);
  return fuse_reshape(g, t, 4, s4);
}

FUSE_API fuse_value fuse_pad(fuse_graph *g, fuse_value x, const int64_t *pads, fuse_pad_mode mode,
                             float value) {
  static const char *const mode_names[3] = {"constant", "reflect", "edge"};
  fuse__node *nx, *n;
  int64_t out[FUSE_MAX_RANK];
  int i;
  if (!fuse__begin(g, "pad", 1, &x)) return FUSE_NONE;
  nx = fuse__node_of(g, x);
  if (nx->rank < 1) return fuse__fail(g, FUSE_ERROR_SHAPE, "pad: input %V is a scalar", x);
  if (!pads) return fuse__fail(g, FUSE_ERROR_INVALID_ARGUMENT, "pad: pads are NULL");
  if (!fuse__enum_in((int)mode, FUSE_PAD_CONSTANT, FUSE_PAD_EDGE))
    return fuse__fail(g, FUSE_ERROR_INVALID_ARGUMENT,
                      "pad: mode %d is not constant (0), reflect (1) or edge (2)", (int)mode);
  for (i = 0; i < nx->rank; i++) {
    int64_t b = pads[i], e = pads[i + nx->rank], d = nx->shape[i];
    if (b < -d || e < -d || b > FUSE__MAX_DIM || e > FUSE__MAX_DIM || d + b + e < 1)
      return fuse__fail(g, FUSE_ERROR_INVALID_ARGUMENT,
                        "pad: pads %D, %D on axis %d of %S leave no element or are out of range",
                        b, e, i, nx->rank, nx->shape);
    if (mode == FUSE_PAD_REFLECT && (b >= d || e >= d))
      return fuse__fail(g, FUSE_ERROR_INVALID_ARGUMENT,
                        "pad: %s pads %D, %D on axis %d of %S must be smaller than its size %D",
                        mode_names[mode], b, e, i, nx->rank, nx->shape, d);
    out[i] = d + b + e;
  }
  if (!fuse__check_shape(g, "pad", nx->rank, out)) return FUSE_NONE;
  if (!(n = fuse__new_node(g, FUSE__OP_PAD, 1, &x, nx->rank, out))) return FUSE_NONE;
  for (i = 0; i < 2 * n->rank; i++) n->a.pad.pads[i] = (int)pads[i]; /* nx may have moved */
  n->a.pad.value = value;
  n->a.pad.mode = (int)mode;
  return fuse__id(g, n);
}

/* Stored scales: the caller's, or 0 where they follow from the sizes (the kernel then maps
   coordinates with sizes / input sizes in double, as ONNX's reference does). */
FUSE_API fuse_value fuse_resize(fuse_graph *g, fuse_value x, const int64_t *sizes,
                                const float *scales, const fuse_resize_attrs *attrs) {
  fuse__node *nx, *n;
  fuse_resize_attrs a;
  int i;
  if (!fuse__begin(g, "resize", 1, &x)) return FUSE_NONE;
  nx = fuse__node_of(g, x);
  if (nx->rank < 1) return fuse__fail(g, FUSE_ERROR_SHAPE, "resize: input %V is a scalar", x);
  if (!fuse__check_shape(g, "resize: sizes", nx->rank, sizes)) return FUSE_NONE;
  memset(&a, 0, sizeof a);
  if (attrs) a = *attrs;
  if (!fuse__enum_in((int)a.mode, FUSE_RESIZE_NEAREST, FUSE_RESIZE_CUBIC))
    return fuse__fail(g, FUSE_ERROR_INVALID_ARGUMENT,
                      "resize: mode %d is not nearest (0), linear (1) or cubic (2)", (int)a.mode);
  if (!fuse__enum_in((int)a.coordinates, FUSE_RESIZE_HALF_PIXEL, FUSE_RESIZE_HALF_PIXEL_SYMMETRIC))
    return fuse__fail(g, FUSE_ERROR_INVALID_ARGUMENT,
                      "resize: coordinate mode %d is not 0..4 (half_pixel, asymmetric, "
                      "pytorch_half_pixel, align_corners, half_pixel_symmetric)",
                      (int)a.coordinates);
  if (!fuse__enum_in((int)a.nearest, FUSE_RESIZE_ROUND_PREFER_FLOOR, FUSE_RESIZE_CEIL))
    return fuse__fail(g, FUSE_ERROR_INVALID_ARGUMENT,
                      "resize: nearest mode %d is not 0..3 (round_prefer_floor, "
                      "round_prefer_ceil, floor, ceil)",
                      (int)a.nearest);
  if (a.cubic_coeff_a == 0) a.cubic_coeff_a = -0.75f;
  if (!(a.cubic_coeff_a > -1e6f && a.cubic_coeff_a < 1e6f))
    return fuse__fail(g, FUSE_ERROR_INVALID_ARGUMENT, "resize: cubic_coeff_a %f is not a number",
                      (double)a.cubic_coeff_a);
  a.exclude_outside = a.exclude_outside != 0;
  for (i = 0; scales && i < nx->rank; i++)
    if (!(scales[i] > 0 && scales[i] < 1e30f))
      return fuse__fail(g, FUSE_ERROR_INVALID_ARGUMENT,
                        "resize: scale %f of axis %d must be a positive number", (double)scales[i],
                        i);
  if (!(n = fuse__new_node(g, FUSE__OP_RESIZE, 1, &x, nx->rank, sizes))) return FUSE_NONE;
  for (i = 0; i < n->rank; i++) n->a.resize.scales[i] = scales ? scales[i] : 0.0f;
  n->a.resize.r = a;
  return fuse__id(g, n);
}
