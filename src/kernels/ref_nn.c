/* --------------------------------------------------- reference kernels: nn -- */
/* reductions, log-softmax, layer / instance / group normalization, einsum */
