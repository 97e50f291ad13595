/* ------------------------------------------------------------ builders: layers -- */
/* transposed convolution, 1-D convolution and pools, LSTM / GRU */
