/* ------------------------------------------------------------ onnx operators: shape -- */
/* data movement: slice, gather, expand, tile, split, squeeze / unsqueeze, depth / space, pad, resize.
   fuse__onnx_convert_shape: the node converted (its first output, or -2 when it bound its
   outputs itself), FUSE_NONE on failure, or -3 when the operator is not one of this file. */
static fuse_value fuse__onnx_convert_shape(fuse__onnx *ld, const fuse__onode *n) {
  (void)fuse__onnx_int_tensor; /* Gather's indices (the shape family takes it) */
  (void)fuse__onnx_floats;     /* Resize's scales */
  (void)ld;
  (void)n;
  return -3;
}

/* the ONNX operators this file converts (the loader lists the others as unsupported) */
static const char *const fuse__onnx_shape_ops[] = {NULL};
