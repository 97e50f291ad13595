/* ------------------------------------------------------------ onnx operators: layers -- */
/* transposed convolution, 1-D convolution and pools, LSTM / GRU.
   fuse__onnx_convert_layers: as fuse__onnx_convert_math. */
static fuse_value fuse__onnx_convert_layers(fuse__onnx *ld, const fuse__onode *n) {
  (void)ld;
  (void)n;
  return -3;
}

/* the ONNX operators this file converts (the loader lists the others as unsupported) */
static const char *const fuse__onnx_layers_ops[] = {NULL};
