/* --------------------------------------------------- reference kernels: math -- */
/* element-wise math: unary functions, div, pow, prelu, where, variadic sum / mean / max / min */
