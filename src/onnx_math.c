/* ------------------------------------------------------------ onnx operators: math -- */
/* element-wise math: unary functions, div, pow, prelu, where, variadic sum / mean / max / min.
   fuse__onnx_convert_math: the node converted (its first output, or -2 when it bound its
   outputs itself), FUSE_NONE on failure, or -3 when the operator is not one of this file. */
static fuse_value fuse__onnx_convert_math(fuse__onnx *ld, const fuse__onode *n) {
  (void)fuse__onnx_mask; /* Where's condition (the math family takes it) */
  (void)ld;
  (void)n;
  return -3;
}

/* the ONNX operators this file converts (the loader lists the others as unsupported) */
static const char *const fuse__onnx_math_ops[] = {NULL};
