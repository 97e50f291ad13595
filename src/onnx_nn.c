/* ------------------------------------------------------------ onnx operators: nn -- */
/* reductions, log-softmax, layer / instance / group normalization, einsum.
   fuse__onnx_convert_nn: the node converted (its first output, or -2 when it bound its
   outputs itself), FUSE_NONE on failure, or -3 when the operator is not one of this file. */
static fuse_value fuse__onnx_convert_nn(fuse__onnx *ld, const fuse__onode *n) {
  (void)ld;
  (void)n;
  return -3;
}

/* the ONNX operators this file converts (the loader lists the others as unsupported) */
static const char *const fuse__onnx_nn_ops[] = {NULL};
