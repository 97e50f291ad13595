/* ------------------------------------------- element-wise chains, row kernels -- */
/* A chain step (FUSE__OP_CHAIN) runs a run of element-wise ops as one pass over memory: a
   small program of fuse__chain_op applied on registers to each vector of its first operand,
   the other operands (tensors broadcast along the row, or immediates) loaded as it goes. The
   activations are the epilogue's kinds (fuse_post_op, applied by fuse__post_apply, the code
   every fused conv runs); the rest are the kinds below. chain.inc is the template, matmul_rows.inc
   the run-time matmul's; the instance files (isa_avx512.c, ...) instantiate both per vector
   layer, and table.c lists them per ISA (fuse__row_ops_table, fuse__rows_of). */
#define FUSE__CHAIN_LENGTH 8       /* ops per chain step; a longer run is cut */
#define FUSE__CHAIN_OPERANDS 8     /* tensor operands per chain step */
/* the kinds (FUSE__CHAIN_*): graph/ops.c, beside the operator table that names them */
enum { FUSE__CHAIN_IMM = -1, FUSE__CHAIN_SELF = -2 }; /* fuse__chain_op.operand */
typedef struct fuse__chain_op {
  int kind;     /* FUSE__CHAIN_* */
  int operand;  /* binary kinds: the step's operand, FUSE__CHAIN_IMM (imm) or _SELF (v) */
  int swap;     /* binary kinds: o op v */
  float imm;
  fuse_post_op post; /* FUSE__CHAIN_POST */
} fuse__chain_op;

typedef void (*fuse__chain_fn)(const fuse__chain_op *ops, int num_ops, float *y,
                               const float *const *src, const int64_t *inc,
                               const int64_t *row_stride, int64_t rows, int64_t n);
typedef struct fuse__row_ops {
  fuse_isa isa;
  fuse__chain_fn chain;
  double (*sum)(const float *x, int64_t n, int mode, float c);
  float (*max)(const float *x, int64_t n, int is_min);
  void (*softmax)(float *y, const float *x, int64_t n, int is_log);
  void (*norm)(float *y, const float *x, int64_t n, float mean, float inv, const float *scale,
               int ss, const float *bias, int sb);
  void (*col_sum)(float *y, const float *x, int64_t rows, int64_t ld, int64_t n, double scale);
  void (*matmul)(float *y, int64_t ldy, const float *a, int64_t lda, const float *b, int64_t ldb,
                 int64_t M, int64_t K, int64_t N);
} fuse__row_ops;
