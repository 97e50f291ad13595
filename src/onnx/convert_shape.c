/* ------------------------------------------------------------ onnx operators: shape -- */
/* data movement: slice, gather, expand, tile, split, squeeze / unsqueeze, depth / space, pad, resize.
   fuse__onnx_convert_shape: the node converted (its first output, or -2 when it bound its
   outputs itself), FUSE_NONE on failure, or -3 when the operator is not one of this file. */

/* An int64 list `name`: from input k when the node has it (the input form), else from the
   attribute when `attr` (the older opsets' form). 1: *count values (0 when neither is given),
   0: failed. */
static int fuse__onnx_list(fuse__onnx *ld, const fuse__onode *n, int k, const char *name,
                           int attr, int64_t *out, int max, int *count) {
  *count = 0;
  if (fuse__onnx_has_in(n, k)) {
    if (!fuse__onnx_ints(ld, n->in[k], out, max, count)) {
      char what[120];
      fuse__out o;
      o.buf = what, o.len = 0, o.cap = sizeof what, o.write = NULL, o.user = NULL;
      fuse__puts(&o, "its ");
      fuse__puts(&o, name);
      fuse__puts(&o, " must be a constant 1-D integer tensor (of at most 2 x 8 values)");
      return fuse__onnx_fail(ld, FUSE_ERROR_UNSUPPORTED, what), 0;
    }
    return 1;
  }
  if (attr && (*count = fuse__onnx_attr_ints(n, name, out, max)) < 0) *count = 0;
  return 1;
}

static fuse_value fuse__onnx_gather(fuse__onnx *ld, const fuse__onode *n, fuse_value x) {
  int64_t dims[FUSE_MAX_RANK];
  const int64_t *values;
  int rank;
  if (n->num_in < 2 || !fuse__onnx_int_tensor(ld, n->in[1], &rank, dims, &values))
    return fuse__onnx_fail(ld, FUSE_ERROR_UNSUPPORTED,
                           "Gather's indices must be an integer tensor known at load"),
           FUSE_NONE;
  return fuse_gather(ld->g, x, (int)fuse__onnx_attr_int(n, "axis", 0), rank, dims, values);
}

/* Squeeze / Unsqueeze: axes as an attribute before opset 13, an input from 13. */
static fuse_value fuse__onnx_squeeze(fuse__onnx *ld, const fuse__onode *n, fuse_value x,
                                     int unsqueeze) {
  int64_t axes[FUSE_MAX_RANK];
  int ax[FUSE_MAX_RANK], count, i;
  if (!fuse__onnx_list(ld, n, 1, "axes", ld->opset < 13, axes, FUSE_MAX_RANK, &count))
    return FUSE_NONE;
  for (i = 0; i < count; i++) ax[i] = axes[i] < -64 || axes[i] > 64 ? 64 : (int)axes[i];
  if (unsqueeze) return fuse_unsqueeze(ld->g, x, count, ax);
  return fuse_squeeze(ld->g, x, count, count ? ax : NULL);
}

static fuse_value fuse__onnx_pad(fuse__onnx *ld, const fuse__onode *n, fuse_value x) {
  int64_t given[2 * FUSE_MAX_RANK], axes[FUSE_MAX_RANK], pads[2 * FUSE_MAX_RANK];
  int rank = fuse_value_rank(ld->g, x), count, num_axes = rank, i;
  fuse_pad_mode mode = FUSE_PAD_CONSTANT;
  float value = 0;
  fuse__oattr a;
  if (fuse__onnx_attr(n, "mode", &a) && a.s.n) {
    if (fuse__slice_is(a.s, "reflect")) mode = FUSE_PAD_REFLECT;
    else if (fuse__slice_is(a.s, "edge")) mode = FUSE_PAD_EDGE;
    else if (!fuse__slice_is(a.s, "constant"))
      return fuse__onnx_fail(ld, FUSE_ERROR_UNSUPPORTED,
                             "Pad mode is not constant, reflect or edge (wrap is not supported)"),
             FUSE_NONE;
  }
  if (ld->opset < 11) {
    count = fuse__onnx_attr_ints(n, ld->opset < 2 ? "paddings" : "pads", given, 2 * FUSE_MAX_RANK);
    value = fuse__onnx_attr_float(n, "value", 0);
  } else {
    if (!fuse__onnx_list(ld, n, 1, "pads", 0, given, 2 * FUSE_MAX_RANK, &count)) return FUSE_NONE;
    if (fuse__onnx_has_in(n, 2) && !fuse__onnx_scalar(ld, n->in[2], &value))
      return fuse__onnx_fail(ld, FUSE_ERROR_UNSUPPORTED,
                             "Pad's constant_value must be a float constant known at load"),
             FUSE_NONE;
    if (fuse__onnx_has_in(n, 3) &&
        !fuse__onnx_list(ld, n, 3, "axes", 0, axes, FUSE_MAX_RANK, &num_axes))
      return FUSE_NONE;
  }
  if (count != 2 * num_axes)
    return fuse__onnx_fail(ld, FUSE_ERROR_PARSE, "Pad's pads do not have 2 entries per axis"),
           FUSE_NONE;
  memset(pads, 0, sizeof pads);
  for (i = 0; i < num_axes; i++) {
    int64_t ax = num_axes == rank && !fuse__onnx_has_in(n, 3) ? i : axes[i];
    if (ax < -rank || ax >= rank)
      return fuse__onnx_fail(ld, FUSE_ERROR_PARSE, "Pad's axes are out of range"), FUSE_NONE;
    if (ax < 0) ax += rank;
    pads[ax] = given[i];
    pads[ax + rank] = given[i + num_axes];
  }
  for (i = 0; i < 2 * rank && !pads[i]; i++) {
  }
  if (i == 2 * rank) return x; /* no padding (densenet's exports before each average pool): a
                                  copy step that held the pool on the NCHW reference kernel */
  return fuse_pad(ld->g, x, pads, mode, value);
}

/* Resize (opset 10: x, scales; 11+: x, roi, scales, sizes) and Upsample (7: attribute scales;
   9: input scales). Opset 10 Resize and Upsample map coordinates as `asymmetric` with
   nearest `floor` (PyTorch's nearest; ONNX's reference only defines whole scales there), and
   their output sizes forgive a float32 scale's rounding error. */
static fuse_value fuse__onnx_resize(fuse__onnx *ld, const fuse__onode *n, fuse_value x) {
  fuse_graph *g = ld->g;
  fuse_resize_attrs ra;
  fuse__oattr a;
  float scales[FUSE_MAX_RANK];
  int64_t sizes[FUSE_MAX_RANK];
  const int64_t *shape = fuse_value_shape(g, x);
  int rank = fuse_value_rank(g, x), count = 0, i, has_sizes = 0;
  int legacy = fuse__slice_is(n->op, "Upsample") || ld->opset < 11;
  memset(&ra, 0, sizeof ra);
  if (fuse__onnx_attr(n, "mode", &a) && a.s.n) {
    if (fuse__slice_is(a.s, "linear") || fuse__slice_is(a.s, "bilinear")) ra.mode = FUSE_RESIZE_LINEAR;
    else if (fuse__slice_is(a.s, "cubic") && !legacy) ra.mode = FUSE_RESIZE_CUBIC;
    else if (!fuse__slice_is(a.s, "nearest"))
      return fuse__onnx_fail(ld, FUSE_ERROR_UNSUPPORTED, "its mode is not nearest, linear or cubic"),
             FUSE_NONE;
  }
  if (legacy) {
    ra.coordinates = FUSE_RESIZE_ASYMMETRIC;
    ra.nearest = FUSE_RESIZE_FLOOR;
  } else {
    static const char *const coords[] = {"half_pixel", "asymmetric", "pytorch_half_pixel",
                                         "align_corners", "half_pixel_symmetric"};
    static const char *const nearest[] = {"round_prefer_floor", "round_prefer_ceil", "floor",
                                          "ceil"};
    if (fuse__onnx_attr(n, "coordinate_transformation_mode", &a) && a.s.n) {
      for (i = 0; i < 5 && !fuse__slice_is(a.s, coords[i]); i++) {
      }
      if (i == 5)
        return fuse__onnx_fail(ld, FUSE_ERROR_UNSUPPORTED,
                               fuse__slice_is(a.s, "tf_crop_and_resize")
                                   ? "coordinate_transformation_mode tf_crop_and_resize is not supported"
                                   : "its coordinate_transformation_mode is not supported"),
               FUSE_NONE;
      ra.coordinates = (fuse_resize_coordinates)i;
    }
    if (fuse__onnx_attr(n, "nearest_mode", &a) && a.s.n) {
      for (i = 0; i < 4 && !fuse__slice_is(a.s, nearest[i]); i++) {
      }
      if (i == 4)
        return fuse__onnx_fail(ld, FUSE_ERROR_UNSUPPORTED, "its nearest_mode is not supported"),
               FUSE_NONE;
      ra.nearest = (fuse_resize_nearest)i;
    }
    ra.cubic_coeff_a = fuse__onnx_attr_float(n, "cubic_coeff_a", -0.75f);
    if (ra.cubic_coeff_a == 0) ra.cubic_coeff_a = 1e-30f; /* 0 means -0.75 to fuse_resize */
    ra.exclude_outside = (int)fuse__onnx_attr_int(n, "exclude_outside", 0);
    if (fuse__onnx_attr_int(n, "antialias", 0) != 0)
      return fuse__onnx_fail(ld, FUSE_ERROR_UNSUPPORTED, "antialias=1 is not supported"), FUSE_NONE;
    if (fuse__onnx_attr(n, "keep_aspect_ratio_policy", &a) && a.s.n && !fuse__slice_is(a.s, "stretch"))
      return fuse__onnx_fail(ld, FUSE_ERROR_UNSUPPORTED, "keep_aspect_ratio_policy is not supported"),
             FUSE_NONE;
    if (fuse__onnx_attr(n, "axes", &a))
      return fuse__onnx_fail(ld, FUSE_ERROR_UNSUPPORTED, "the axes attribute is not supported"), FUSE_NONE;
  }
  if (!legacy && fuse__onnx_has_in(n, 3) && /* sizes (then scales are empty), unless empty */
      !(fuse__onnx_ints(ld, n->in[3], sizes, FUSE_MAX_RANK, &count) && count == 0)) {
    if (count != rank)
      return fuse__onnx_fail(ld, FUSE_ERROR_UNSUPPORTED,
                             "its sizes must be an integer tensor known at load with one entry "
                             "per axis"),
             FUSE_NONE;
    has_sizes = 1;
  } else if (fuse__slice_is(n->op, "Upsample") && ld->opset < 9) {
    if (!fuse__onnx_attr(n, "scales", &a))
      return fuse__onnx_fail(ld, FUSE_ERROR_PARSE, "Upsample needs scales"), FUSE_NONE;
    { /* a list of floats: field 7, packed or not */
      fuse__pb b = fuse__proto_of(a.msg);
      uint32_t f, w;
      while (fuse__proto_tag(&b, &f, &w)) {
        if (f == 7 && w == 5 && count < FUSE_MAX_RANK && b.end - b.p >= 4) {
          scales[count++] = fuse__f32(fuse__le32(b.p));
          b.p += 4;
        } else if (f == 7 && w == 2) {
          fuse__slice s;
          size_t k;
          if (!fuse__proto_bytes(&b, &s) || s.n % 4 || s.n / 4 + (size_t)count > FUSE_MAX_RANK)
            break;
          for (k = 0; k < s.n; k += 4) scales[count++] = fuse__f32(fuse__le32(s.p + k));
        } else if (!fuse__proto_skip(&b, w)) {
          break;
        }
      }
    }
    if (count != rank)
      return fuse__onnx_fail(ld, FUSE_ERROR_PARSE, "Upsample's scales do not have one entry per axis"),
             FUSE_NONE;
  } else {
    int k = legacy ? 1 : 2;
    if (!fuse__onnx_has_in(n, k) ||
        !fuse__onnx_floats(ld, n->in[k], scales, FUSE_MAX_RANK, &count) || count != rank)
      return fuse__onnx_fail(ld, FUSE_ERROR_UNSUPPORTED,
                             "its scales (or sizes) must be known at load with one entry per axis"),
             FUSE_NONE;
  }
  if (!has_sizes)
    for (i = 0; i < rank; i++) {
      double s = (double)shape[i] * (double)scales[i];
      if (!(scales[i] > 0 && s < 4e18))
        return fuse__onnx_fail(ld, FUSE_ERROR_PARSE, "its scales must be positive numbers"), FUSE_NONE;
      sizes[i] = (int64_t)floor(s);
      /* the legacy forms: a float32 scale meant as size / input size (PyTorch's opset-9
         export of interpolate(size=...)) may land a rounding error below that size */
      if (legacy && (double)(sizes[i] + 1) - s <= s * 2.5e-7) sizes[i]++;
    }
  return fuse_resize(g, x, sizes, has_sizes ? NULL : scales, &ra);
}

static fuse_value fuse__onnx_convert_shape(fuse__onnx *ld, const fuse__onode *n) {
  static const char *const mine[] = {"Gather", "Expand", "Tile", "Squeeze", "Unsqueeze",
                                     "DepthToSpace", "SpaceToDepth", "Pad", "Resize", "Upsample"};
  fuse_graph *g = ld->g;
  int64_t list[FUSE_MAX_RANK];
  int count, k;
  fuse_value x;
  for (k = 0; k < 10 && !fuse__slice_is(n->op, mine[k]); k++) {
  }
  if (k == 10) return -3;
  if (n->num_in < 1 || !n->in[0].n)
    return fuse__onnx_fail(ld, FUSE_ERROR_PARSE, "the node has no input"), FUSE_NONE;
  if ((x = fuse__onnx_value(ld, n->in[0])) == FUSE_NONE) return FUSE_NONE;
  switch (k) {
  case 0: return fuse__onnx_gather(ld, n, x);
  case 1:
  case 2:
    if (n->num_in < 2 || !fuse__onnx_list(ld, n, 1, k == 1 ? "shape" : "repeats", 0, list,
                                          FUSE_MAX_RANK, &count))
      return n->num_in < 2 ? fuse__onnx_fail(ld, FUSE_ERROR_PARSE, "it needs two inputs"), FUSE_NONE
                           : FUSE_NONE;
    if (k == 1) return fuse_expand(g, x, count, list);
    if (count != fuse_value_rank(g, x))
      return fuse__onnx_fail(ld, FUSE_ERROR_PARSE, "Tile's repeats do not have one entry per axis"),
             FUSE_NONE;
    return fuse_tile(g, x, list);
  case 3:
  case 4: return fuse__onnx_squeeze(ld, n, x, k == 4);
  case 5:
  case 6: {
    int64_t block = fuse__onnx_attr_int(n, "blocksize", 0);
    fuse__oattr a;
    int crd = 0;
    if (block < 1 || block > 0x7fffffff)
      return fuse__onnx_fail(ld, FUSE_ERROR_PARSE, "blocksize must be >= 1"), FUSE_NONE;
    if (k == 6) return fuse_space_to_depth(g, x, (int)block);
    if (fuse__onnx_attr(n, "mode", &a) && a.s.n) {
      crd = fuse__slice_is(a.s, "CRD");
      if (!crd && !fuse__slice_is(a.s, "DCR"))
        return fuse__onnx_fail(ld, FUSE_ERROR_PARSE, "DepthToSpace mode is not DCR or CRD"), FUSE_NONE;
    }
    return fuse_depth_to_space(g, x, (int)block, crd);
  }
  case 7: return fuse__onnx_pad(ld, n, x);
  default: return fuse__onnx_resize(ld, n, x);
  }
}

/* the ONNX operators this file converts (the loader lists the others as unsupported) */
static const char *const fuse__onnx_shape_ops[] = {
    "Gather", "Expand", "Tile", "Squeeze", "Unsqueeze", "DepthToSpace", "SpaceToDepth", "Pad",
    "Resize", "Upsample", NULL};
