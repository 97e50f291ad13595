/* fuse_dnnl.h - v0.2.0 - the oneDNN backend for fuse.h.

   Include it after fuse.h. Its implementation is compiled where FUSE_IMPLEMENTATION is
   defined, so one switch covers both headers:

       #define FUSE_IMPLEMENTATION
       #include "fuse.h"
       #include "fuse_dnnl.h"

       const fuse_backend *backends[2];
       fuse_compile_options opt;
       memset(&opt, 0, sizeof opt);
       backends[0] = fuse_dnnl_backend();   // NULL ends the list: no oneDNN, no backend
       backends[1] = NULL;
       opt.backends = backends;
       fuse_optimize(graph, "dnnl");        // composites named "dnnl.*": codegen "dnnl"
       fuse_compile(graph, &opt, &plan);

   and link with -ldnnl. FUSE_DNNL_AVAILABLE is 1 when oneDNN's header (<oneapi/dnnl/dnnl.h>
   or <dnnl.h>) was found through __has_include, else 0: the header still compiles, nothing
   needs -ldnnl, and fuse_dnnl_backend() returns NULL. Predefine it to 0 to leave oneDNN out
   where it is installed, or to 1 where the compiler has no __has_include.

   WHAT RUNS ON oneDNN. fuse_compile offers the backend every fused step of a composite whose
   codegen is "dnnl": a conv2d or matmul with its analyzed epilogue (fuse_analyze_epilogue),
   never its name. oneDNN gets
     conv2d   a forward convolution (direct algorithm): groups, depthwise, stride, padding
              (top/left, bottom/right), dilation (oneDNN counts it from 0: d - 1);
     matmul   a matmul of x [..., M, K] (the batch dims folded into M) by constant w [K, N];
   the bias as the primitive's bias, and the post-ops in the epilogue's order: clamp[0, inf]
   as eltwise_relu, any other clamp as eltwise_clip(lo, hi), the first residual add as a sum
   post-op (the residual is first placed in the destination), further ones as binary_add.
   Weights must be constants. A step oneDNN cannot take (weights that are an input, a matmul
   whose weights are not [K, N], a primitive oneDNN has no implementation for) runs on fuse.h's
   own kernels and the plan's description (fuse_plan_write) says why: "(dnnl declined: ...)";
   a step oneDNN took ends in "(dnnl)".

   DONE ONCE, AT fuse_compile: the primitive descriptor and primitive (oneDNN JIT-compiles its
   kernel then), the weights reordered into the layout the primitive chose (format_tag any),
   the reorders between NCHW and the primitive's activation layout where it needs them, and,
   per step, four sets of the memory handles and streams runs use. fuse_run creates no
   primitive and allocates no buffer: the primitive's scratchpad (user scratchpad mode) and
   the activations in oneDNN's layout are carved from the caller's workspace
   (fuse_plan_workspace_size counts them), so one plan may run from several threads at once,
   each with its own workspace. Up to four concurrent runs of one step use the handles made at
   compile; beyond that a run makes its own (small oneDNN objects, no tensor memory).

   LAYOUTS BETWEEN oneDNN STEPS. When fuse_compile says every reader of a conv2d's output is a
   step offered to this backend (fuse_backend_step.output_layout), the step writes its output
   in the destination layout its primitive chose (e.g. acdb = NHWC for brgconv on AVX-512,
   aBcd8b on AVX2, whose padded channels make it larger than NCHW) and declares that memory
   descriptor and its size; the plan keeps the tensor there, sized as oneDNN says. A reader
   gets the descriptor as operands[k].layout: its input is used as it is when the primitive
   chose the same source layout, else reordered from it (oneDNN layout to oneDNN layout); a
   residual in the destination's layout is copied into the destination for the sum post-op,
   another one reordered into it; a binary_add residual is read in its layout. So reorders
   from and to NCHW happen only where a run of oneDNN steps is entered or left (graph inputs
   and outputs, pools and other ops on fuse.h's kernels, reshapes). matmul reads and writes
   NCHW: offered an operand in oneDNN's layout it declines, and fuse_compile offers the steps
   again with that tensor NCHW.

   THREADS. The Debian build of oneDNN uses OpenMP: a step uses omp_get_max_threads() threads
   of the calling thread (OMP_NUM_THREADS, or omp_set_num_threads before the run); called from
   inside an OpenMP parallel region it runs on one thread. fuse_compile_options.num_threads and
   parallel_for apply to fuse.h's own kernels only.

   oneDNN 3.x. Written against 2.6 (Debian 12); a port to 3.x changes this file only
   (fuse_backend stays):
     - operation descriptors are gone: each *_desc_init + dnnl_primitive_desc_create pair
       becomes one call that also takes the engine and attributes,
       dnnl_convolution_forward_primitive_desc_create / dnnl_matmul_primitive_desc_create
       (matmul still takes its bias descriptor there; bias is not a post-op);
     - memory descriptors are opaque handles: dnnl_memory_desc_create_with_tag and
       dnnl_memory_desc_destroy instead of dnnl_memory_desc_init_by_tag into a struct, so
       fuse__dnnl keeps handles (and destroys them) instead of holding descriptors by value;
     - post-ops: dnnl_post_ops_append_eltwise loses its scale argument, and
       dnnl_post_ops_append_sum takes (scale, zero_point, data_type);
     - dnnl_memory_set_data_handle_v2 is gone: dnnl_memory_set_data_handle takes no stream;
     - output scales are replaced by per-argument scales (not used here).
   The execution arguments (DNNL_ARG_*, DNNL_ARG_ATTR_MULTIPLE_POST_OP), user scratchpad mode
   and the reorder calls are as used here.

   License: MIT, as fuse.h (see the end of fuse.h and LICENSE). */
#ifndef FUSE_DNNL_H
#define FUSE_DNNL_H

#ifndef FUSE_H
#error "fuse_dnnl.h: include fuse.h first"
#endif

#ifndef FUSE_DNNL_AVAILABLE
#if defined(__has_include)
#if __has_include(<oneapi/dnnl/dnnl.h>) || __has_include(<dnnl.h>)
#define FUSE_DNNL_AVAILABLE 1
#else
#define FUSE_DNNL_AVAILABLE 0
#endif
#else
#define FUSE_DNNL_AVAILABLE 0
#endif
#endif

/* With FUSE_STATIC the function below is static; a unit that includes this header without
   calling it must still build without -Wunused-function warnings. */
#if defined(FUSE_STATIC) && (defined(__GNUC__) || defined(__clang__))
#define FUSE__DNNL_MAYBE_UNUSED __attribute__((unused))
#else
#define FUSE__DNNL_MAYBE_UNUSED
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* The oneDNN backend for fuse_compile_options.backends (name "dnnl"), or NULL when oneDNN is
   not available. The object is static: it outlives every plan. */
FUSE_API FUSE__DNNL_MAYBE_UNUSED const fuse_backend *fuse_dnnl_backend(void);

#ifdef __cplusplus
}
#endif

#undef FUSE__DNNL_MAYBE_UNUSED
#endif /* FUSE_DNNL_H */

/* ================================================================ implementation == */
#if defined(FUSE_IMPLEMENTATION) && !defined(FUSE_DNNL_IMPLEMENTATION_DONE)
#define FUSE_DNNL_IMPLEMENTATION_DONE

#ifndef FUSE_IMPLEMENTATION_DONE
#error "fuse_dnnl.h: needs fuse.h's implementation in this unit (FUSE_IMPLEMENTATION before fuse.h)"
#endif
/* fuse.h's implementation may live in another unit (this one built with
   FUSE_IMPLEMENTATION_DONE, as the Makefile does): then the allocator defaults are set here */
#if defined(FUSE_MALLOC) != defined(FUSE_FREE)
#error "fuse_dnnl.h: define both FUSE_MALLOC and FUSE_FREE, or neither"
#endif
#ifndef FUSE_MALLOC
#include <stdlib.h>
#define FUSE_MALLOC(size) malloc(size)
#define FUSE_FREE(ptr) free(ptr)
#endif
#ifndef FUSE_ASSERT
#include <assert.h>
#define FUSE_ASSERT(cond) assert(cond)
#endif

#if FUSE_DNNL_AVAILABLE
#if defined(__has_include)
#if __has_include(<oneapi/dnnl/dnnl.h>)
#include <oneapi/dnnl/dnnl.h>
#include <oneapi/dnnl/dnnl_debug.h>
#else
#include <dnnl.h>
#include <dnnl_debug.h>
#endif
#else
#include <oneapi/dnnl/dnnl.h>
#include <oneapi/dnnl/dnnl_debug.h>
#endif
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* A run claims one of the step's handle sets with an atomic exchange; without atomics every
   run makes its own. */
#define FUSE__DNNL_SLOTS 4 /* handle sets per step */
#if defined(__GNUC__) || defined(__clang__)
typedef int fuse__dnnl_flag;
#define FUSE__DNNL_ATOMICS 1
#define FUSE__DNNL_CLAIM(f) (__atomic_exchange_n((f), 1, __ATOMIC_ACQUIRE) == 0)
#define FUSE__DNNL_RELEASE(f) __atomic_store_n((f), 0, __ATOMIC_RELEASE)
#elif defined(_MSC_VER)
#include <intrin.h>
typedef long fuse__dnnl_flag;
#define FUSE__DNNL_ATOMICS 1
#define FUSE__DNNL_CLAIM(f) (_InterlockedExchange((f), 1) == 0)
#define FUSE__DNNL_RELEASE(f) ((void)_InterlockedExchange((f), 0))
#else
typedef int fuse__dnnl_flag;
#define FUSE__DNNL_ATOMICS 0
#define FUSE__DNNL_CLAIM(f) ((void)(f), 0)
#define FUSE__DNNL_RELEASE(f) ((void)(f))
#endif
#endif /* FUSE_DNNL_AVAILABLE */

#ifdef __cplusplus
extern "C" {
#endif

#if FUSE_DNNL_AVAILABLE

#define FUSE__DNNL_EXECS 4  /* primitives it runs: reorder in, residual into dst, op, reorder out */
/* memory objects of one step: x, y, their oneDNN-layout copies, weights, bias, residuals, one
   scratchpad per primitive */
#define FUSE__DNNL_MEMS (6 + FUSE_MAX_POST_OPS + FUSE__DNNL_EXECS)
#define FUSE__DNNL_ARGS (6 + FUSE_MAX_POST_OPS) /* arguments of one primitive */

/* Where a memory object's bytes are at run. */
enum {
  FUSE__DNNL_OPERAND,
  FUSE__DNNL_OUTPUT,
  FUSE__DNNL_SCRATCH,
  FUSE__DNNL_PAD,
  FUSE__DNNL_WEIGHTS
};

typedef struct fuse__dnnl_mem {
  dnnl_memory_desc_t md;
  int from;      /* FUSE__DNNL_* */
  int operand;   /* OPERAND: which */
  size_t offset; /* SCRATCH: bytes into the scratch (PAD: the shared scratchpad block) */
} fuse__dnnl_mem;

typedef struct fuse__dnnl_exec {
  dnnl_primitive_t prim;
  int nargs;
  int arg[FUSE__DNNL_ARGS]; /* DNNL_ARG_* */
  int mem[FUSE__DNNL_ARGS]; /* index into fuse__dnnl.mems */
} fuse__dnnl_exec;

typedef struct fuse__dnnl_slot { /* what one run needs besides the primitives */
  dnnl_stream_t stream;
  dnnl_memory_t mem[FUSE__DNNL_MEMS];
} fuse__dnnl_slot;

typedef struct fuse__dnnl {
  dnnl_engine_t engine;
  dnnl_memory_t weights; /* in the primitive's layout */
  int num_mems, num_execs;
  fuse__dnnl_mem mems[FUSE__DNNL_MEMS];
  fuse__dnnl_exec execs[FUSE__DNNL_EXECS];
  int copy_operand;      /* a sum whose residual is in the destination's layout: this residual */
  int copy_to;           /* is copied into mems[copy_to] first (copy_bytes); or -1 */
  size_t copy_bytes;
  dnnl_memory_desc_t out_md; /* the output's layout when it stays in oneDNN's (output_layout) */
  size_t scratch, pad;   /* bytes: activation buffers, then one block for every scratchpad */
  int num_slots;
  fuse__dnnl_slot slots[FUSE__DNNL_SLOTS];
  fuse__dnnl_flag busy[FUSE__DNNL_SLOTS];
} fuse__dnnl;

static fuse_result fuse__dnnl_why(char *why, size_t size, fuse_result r, const char *fmt, ...) {
  va_list ap;
  if (!why || !size) return r;
  va_start(ap, fmt);
  vsnprintf(why, size, fmt, ap);
  va_end(ap);
  return r;
}

static dnnl_status_t fuse__dnnl_md(dnnl_memory_desc_t *md, int rank, const dnnl_dims_t dims,
                                   dnnl_format_tag_t tag) {
  return dnnl_memory_desc_init_by_tag(md, rank, dims, dnnl_f32, tag);
}

static void fuse__dnnl_destroy(void *state) {
  fuse__dnnl *s = (fuse__dnnl *)state;
  int i, j;
  if (!s) return;
  for (i = 0; i < s->num_execs; i++)
    if (s->execs[i].prim) dnnl_primitive_destroy(s->execs[i].prim);
  for (j = 0; j < s->num_slots; j++) {
    for (i = 0; i < s->num_mems; i++)
      if (s->slots[j].mem[i] && s->mems[i].from != FUSE__DNNL_WEIGHTS)
        dnnl_memory_destroy(s->slots[j].mem[i]);
    if (s->slots[j].stream) dnnl_stream_destroy(s->slots[j].stream);
  }
  if (s->weights) dnnl_memory_destroy(s->weights);
  if (s->engine) dnnl_engine_destroy(s->engine);
  FUSE_FREE(s);
}

static int fuse__dnnl_add_mem(fuse__dnnl *s, const dnnl_memory_desc_t *md, int from, int operand) {
  fuse__dnnl_mem *m = &s->mems[s->num_mems];
  size_t bytes = dnnl_memory_desc_get_size(md);
  FUSE_ASSERT(s->num_mems < FUSE__DNNL_MEMS);
  m->md = *md;
  m->from = from;
  m->operand = operand;
  m->offset = 0;
  if (from == FUSE__DNNL_SCRATCH) { /* activations in oneDNN's layout, 64-byte aligned */
    m->offset = s->scratch;
    s->scratch += (bytes + 63) & ~(size_t)63;
  } else if (from == FUSE__DNNL_PAD && bytes > s->pad) {
    s->pad = bytes; /* one primitive runs at a time: the scratchpads share one block */
  }
  return s->num_mems++;
}

static fuse__dnnl_exec *fuse__dnnl_add_exec(fuse__dnnl *s, dnnl_primitive_desc_t pd,
                                            dnnl_status_t *st) {
  fuse__dnnl_exec *e = &s->execs[s->num_execs];
  const dnnl_memory_desc_t *pad = dnnl_primitive_desc_query_md(pd, dnnl_query_scratchpad_md, 0);
  FUSE_ASSERT(s->num_execs < FUSE__DNNL_EXECS);
  e->nargs = 0;
  *st = dnnl_primitive_create(&e->prim, pd);
  if (*st != dnnl_success) {
    e->prim = NULL;
    return NULL;
  }
  s->num_execs++;
  if (pad && dnnl_memory_desc_get_size(pad) > 0) {
    e->arg[e->nargs] = DNNL_ARG_SCRATCHPAD;
    e->mem[e->nargs++] = fuse__dnnl_add_mem(s, pad, FUSE__DNNL_PAD, 0);
  }
  return e;
}

static void fuse__dnnl_arg(fuse__dnnl_exec *e, int arg, int mem) {
  FUSE_ASSERT(e->nargs < FUSE__DNNL_ARGS);
  e->arg[e->nargs] = arg;
  e->mem[e->nargs++] = mem;
}

static dnnl_status_t fuse__dnnl_user_attr(dnnl_primitive_attr_t *attr) {
  dnnl_status_t st = dnnl_primitive_attr_create(attr);
  if (st != dnnl_success) return st;
  return dnnl_primitive_attr_set_scratchpad_mode(*attr, dnnl_scratchpad_mode_user);
}

/* A reorder run at each run, mems[from] to mems[to], its scratchpad in the workspace. */
static dnnl_status_t fuse__dnnl_reorder(fuse__dnnl *s, int from, int to) {
  dnnl_primitive_attr_t attr = NULL;
  dnnl_primitive_desc_t pd = NULL;
  fuse__dnnl_exec *e;
  dnnl_status_t st = fuse__dnnl_user_attr(&attr);
  if (st == dnnl_success)
    st = dnnl_reorder_primitive_desc_create(&pd, &s->mems[from].md, s->engine, &s->mems[to].md,
                                            s->engine, attr);
  if (st == dnnl_success && (e = fuse__dnnl_add_exec(s, pd, &st)) != NULL) {
    fuse__dnnl_arg(e, DNNL_ARG_FROM, from);
    fuse__dnnl_arg(e, DNNL_ARG_TO, to);
  }
  if (pd) dnnl_primitive_desc_destroy(pd);
  if (attr) dnnl_primitive_attr_destroy(attr);
  return st;
}

/* The weights, once: the constant in its user layout reordered into the primitive's. */
static dnnl_status_t fuse__dnnl_weights(fuse__dnnl *s, const dnnl_memory_desc_t *user_md,
                                        const float *data, const dnnl_memory_desc_t *md) {
  dnnl_memory_t user = NULL;
  dnnl_primitive_desc_t pd = NULL;
  dnnl_primitive_t r = NULL;
  dnnl_stream_t stream = NULL;
  dnnl_exec_arg_t args[2];
  dnnl_status_t st = dnnl_memory_create(&s->weights, md, s->engine, DNNL_MEMORY_ALLOCATE);
  if (st != dnnl_success) s->weights = NULL;
  if (st == dnnl_success)
    st = dnnl_memory_create(&user, user_md, s->engine, (void *)(uintptr_t)data);
  if (st == dnnl_success)
    st = dnnl_reorder_primitive_desc_create(&pd, user_md, s->engine, md, s->engine, NULL);
  if (st == dnnl_success) st = dnnl_primitive_create(&r, pd);
  if (st == dnnl_success) st = dnnl_stream_create(&stream, s->engine, dnnl_stream_default_flags);
  if (st == dnnl_success) {
    args[0].arg = DNNL_ARG_FROM, args[0].memory = user;
    args[1].arg = DNNL_ARG_TO, args[1].memory = s->weights;
    st = dnnl_primitive_execute(r, stream, 2, args);
  }
  if (st == dnnl_success) st = dnnl_stream_wait(stream);
  if (stream) dnnl_stream_destroy(stream);
  if (r) dnnl_primitive_destroy(r);
  if (pd) dnnl_primitive_desc_destroy(pd);
  if (user) dnnl_memory_destroy(user);
  return st;
}

typedef struct fuse__dnnl_epi {
  dnnl_post_ops_t po;
  dnnl_primitive_attr_t attr;
  int sum_operand;              /* the residual the sum post-op adds, or -1 */
  int num_binary;
  int binary_index[FUSE_MAX_POST_OPS], binary_operand[FUSE_MAX_POST_OPS];
} fuse__dnnl_epi;

/* The layout an operand arrives in: the one its producer declared (another step of this
   backend kept it in oneDNN's layout), else plain. */
static const dnnl_memory_desc_t *fuse__dnnl_in_md(const fuse_backend_step *d, int operand,
                                                  const dnnl_memory_desc_t *plain) {
  const void *id = d->operands[operand].layout.id;
  return id ? (const dnnl_memory_desc_t *)id : plain;
}

/* An element-wise post-op as oneDNN 2.6's eltwise post-ops (one or two of them: it has no
   hardsigmoid, which is linear then clip, and selu is elu then linear). */
static dnnl_status_t fuse__dnnl_eltwise(dnnl_post_ops_t po, const fuse_backend_post *q) {
  dnnl_status_t st;
  switch (q->kind) {
  case FUSE_POST_LINEAR: return dnnl_post_ops_append_eltwise(po, 1.0f, dnnl_eltwise_linear, q->alpha, q->beta);
  case FUSE_POST_SIGMOID: return dnnl_post_ops_append_eltwise(po, 1.0f, dnnl_eltwise_logistic, 0, 0);
  case FUSE_POST_TANH: return dnnl_post_ops_append_eltwise(po, 1.0f, dnnl_eltwise_tanh, 0, 0);
  case FUSE_POST_SILU: return dnnl_post_ops_append_eltwise(po, 1.0f, dnnl_eltwise_swish, q->alpha, 0);
  case FUSE_POST_HARDSWISH: return dnnl_post_ops_append_eltwise(po, 1.0f, dnnl_eltwise_hardswish, 0, 0);
  case FUSE_POST_LEAKY_RELU: return dnnl_post_ops_append_eltwise(po, 1.0f, dnnl_eltwise_relu, q->alpha, 0);
  case FUSE_POST_ELU: return dnnl_post_ops_append_eltwise(po, 1.0f, dnnl_eltwise_elu, q->alpha, 0);
  case FUSE_POST_SOFTPLUS: return dnnl_post_ops_append_eltwise(po, 1.0f, dnnl_eltwise_soft_relu, 0, 0);
  case FUSE_POST_MISH: return dnnl_post_ops_append_eltwise(po, 1.0f, dnnl_eltwise_mish, 0, 0);
  case FUSE_POST_GELU: return dnnl_post_ops_append_eltwise(po, 1.0f, dnnl_eltwise_gelu_erf, 0, 0);
  case FUSE_POST_GELU_TANH: return dnnl_post_ops_append_eltwise(po, 1.0f, dnnl_eltwise_gelu_tanh, 0, 0);
  case FUSE_POST_EXP: return dnnl_post_ops_append_eltwise(po, 1.0f, dnnl_eltwise_exp, 0, 0);
  case FUSE_POST_HARDSIGMOID:
    st = dnnl_post_ops_append_eltwise(po, 1.0f, dnnl_eltwise_linear, q->alpha, q->beta);
    return st == dnnl_success ? dnnl_post_ops_append_eltwise(po, 1.0f, dnnl_eltwise_clip, 0, 1) : st;
  case FUSE_POST_SELU:
    st = dnnl_post_ops_append_eltwise(po, 1.0f, dnnl_eltwise_elu, q->alpha, 0);
    return st == dnnl_success ? dnnl_post_ops_append_eltwise(po, 1.0f, dnnl_eltwise_linear, q->beta, 0) : st;
  default: return dnnl_unimplemented; /* no oneDNN mapping: the step declines */
  }
}

/* The epilogue's post-ops, in order; residuals (shaped as the output, plain layout out_md or
   the layout they arrive in): the first as sum, the others as binary_add. */
static dnnl_status_t fuse__dnnl_post_ops(const fuse_backend_step *d,
                                         const dnnl_memory_desc_t *out_md, fuse__dnnl_epi *ep) {
  dnnl_status_t st = dnnl_post_ops_create(&ep->po);
  int k;
  ep->attr = NULL;
  ep->sum_operand = -1;
  ep->num_binary = 0;
  if (st != dnnl_success) {
    ep->po = NULL;
    return st;
  }
  for (k = 0; k < d->num_post && st == dnnl_success; k++) {
    const fuse_backend_post *q = &d->post[k];
    if (q->kind == FUSE_POST_CLAMP) {
      if (q->lo == 0.0f && q->hi > 3.4e38f)
        st = dnnl_post_ops_append_eltwise(ep->po, 1.0f, dnnl_eltwise_relu, 0.0f, 0.0f);
      else
        st = dnnl_post_ops_append_eltwise(ep->po, 1.0f, dnnl_eltwise_clip, q->lo, q->hi);
    } else if (q->kind != FUSE_POST_ADD) {
      st = fuse__dnnl_eltwise(ep->po, q);
    } else if (ep->sum_operand < 0) {
      ep->sum_operand = q->operand;
      st = dnnl_post_ops_append_sum(ep->po, 1.0f);
    } else {
      ep->binary_index[ep->num_binary] = k;
      ep->binary_operand[ep->num_binary++] = q->operand;
      st = dnnl_post_ops_append_binary(ep->po, dnnl_binary_add,
                                       fuse__dnnl_in_md(d, q->operand, out_md));
    }
  }
  if (st == dnnl_success) st = fuse__dnnl_user_attr(&ep->attr);
  if (st == dnnl_success) st = dnnl_primitive_attr_set_post_ops(ep->attr, ep->po);
  return st;
}

static void fuse__dnnl_epi_free(fuse__dnnl_epi *ep) {
  if (ep->attr) dnnl_primitive_attr_destroy(ep->attr);
  if (ep->po) dnnl_post_ops_destroy(ep->po);
}

/* The primitive's own arguments after SRC / WEIGHTS / DST: bias and binary residuals. */
static void fuse__dnnl_op_args(fuse__dnnl *s, fuse__dnnl_exec *e, const fuse_backend_step *d,
                               const fuse__dnnl_epi *ep, const dnnl_memory_desc_t *bias_md,
                               const dnnl_memory_desc_t *out_md) {
  int k;
  if (d->bias >= 0)
    fuse__dnnl_arg(e, DNNL_ARG_BIAS, fuse__dnnl_add_mem(s, bias_md, FUSE__DNNL_OPERAND, d->bias));
  for (k = 0; k < ep->num_binary; k++)
    fuse__dnnl_arg(e, DNNL_ARG_ATTR_MULTIPLE_POST_OP(ep->binary_index[k]) | DNNL_ARG_SRC_1,
                   fuse__dnnl_add_mem(s, fuse__dnnl_in_md(d, ep->binary_operand[k], out_md),
                                      FUSE__DNNL_OPERAND, ep->binary_operand[k]));
}

static fuse_result fuse__dnnl_fail(char *why, size_t size, const char *what, dnnl_status_t st) {
  const char *name = dnnl_status2str(st);
  if (st == dnnl_out_of_memory) return FUSE_ERROR_OUT_OF_MEMORY;
  return fuse__dnnl_why(why, size,
                        st == dnnl_unimplemented ? FUSE_ERROR_UNSUPPORTED : FUSE_ERROR_BACKEND,
                        "oneDNN %s: %s", what, name ? name : "error");
}

static fuse_result fuse__dnnl_conv(fuse__dnnl *s, const fuse_backend_step *d, char *why,
                                   size_t why_size) {
  const int64_t *xs = d->operands[0].shape, *ws = d->operands[1].shape, *ys = d->output.shape;
  const fuse_conv2d_attrs *a = &d->conv;
  int64_t G = a->groups;
  dnnl_dims_t xd, yd, wd, bd, strides, dil, pl, pr;
  dnnl_memory_desc_t x_md, y_md, w_md, b_md, src_any, dst_any, w_any;
  const dnnl_memory_desc_t *src_md, *dst_md, *wei_md, *in_md;
  dnnl_convolution_desc_t cd;
  dnnl_primitive_desc_t pd = NULL;
  fuse__dnnl_epi ep;
  fuse__dnnl_exec *e;
  dnnl_status_t st;
  fuse_result r = FUSE_OK;
  int mx, msrc, my, mdst, mw, k, keep;
  if (d->operands[0].rank != 4 || d->operands[1].rank != 4 || d->output.rank != 4)
    return fuse__dnnl_why(why, why_size, FUSE_ERROR_UNSUPPORTED, "conv2d operands are not 4-D");
  for (k = 0; k < 4; k++) xd[k] = xs[k], yd[k] = ys[k];
  bd[0] = ys[1];
  if (G == 1) {
    for (k = 0; k < 4; k++) wd[k] = ws[k];
  } else { /* [groups, K / groups, C / groups, KH, KW] */
    wd[0] = G, wd[1] = ws[0] / G, wd[2] = ws[1], wd[3] = ws[2], wd[4] = ws[3];
  }
  strides[0] = a->strides[0], strides[1] = a->strides[1];
  dil[0] = a->dilation[0] - 1, dil[1] = a->dilation[1] - 1; /* oneDNN: 0 = no dilation */
  pl[0] = a->padding[0], pl[1] = a->padding[1];
  pr[0] = a->padding[2], pr[1] = a->padding[3];
  st = fuse__dnnl_md(&x_md, 4, xd, dnnl_nchw);
  if (st == dnnl_success) st = fuse__dnnl_md(&y_md, 4, yd, dnnl_nchw);
  if (st == dnnl_success) st = fuse__dnnl_md(&b_md, 1, bd, dnnl_x);
  if (st == dnnl_success)
    st = fuse__dnnl_md(&w_md, G == 1 ? 4 : 5, wd, G == 1 ? dnnl_oihw : dnnl_goihw);
  if (st == dnnl_success) st = fuse__dnnl_md(&src_any, 4, xd, dnnl_format_tag_any);
  if (st == dnnl_success) st = fuse__dnnl_md(&dst_any, 4, yd, dnnl_format_tag_any);
  if (st == dnnl_success) st = fuse__dnnl_md(&w_any, G == 1 ? 4 : 5, wd, dnnl_format_tag_any);
  if (st != dnnl_success) return fuse__dnnl_fail(why, why_size, "memory descriptor", st);
  st = fuse__dnnl_post_ops(d, &y_md, &ep);
  if (st != dnnl_success) {
    fuse__dnnl_epi_free(&ep);
    return fuse__dnnl_fail(why, why_size, "post-ops", st);
  }
  st = dnnl_dilated_convolution_forward_desc_init(&cd, dnnl_forward_inference,
                                                  dnnl_convolution_direct, &src_any, &w_any,
                                                  d->bias >= 0 ? &b_md : NULL, &dst_any, strides,
                                                  dil, pl, pr);
  if (st == dnnl_success) st = dnnl_primitive_desc_create(&pd, &cd, ep.attr, s->engine, NULL);
  if (st != dnnl_success) {
    pd = NULL;
    r = fuse__dnnl_fail(why, why_size, "convolution", st);
    goto done;
  }
  src_md = dnnl_primitive_desc_query_md(pd, dnnl_query_src_md, 0);
  wei_md = dnnl_primitive_desc_query_md(pd, dnnl_query_weights_md, 0);
  dst_md = dnnl_primitive_desc_query_md(pd, dnnl_query_dst_md, 0);
  st = fuse__dnnl_weights(s, &w_md, d->operands[1].data, wei_md);
  if (st != dnnl_success) {
    r = fuse__dnnl_fail(why, why_size, "weights reorder", st);
    goto done;
  }
  /* x (NCHW, or the layout its producer kept) -> the primitive's source layout; the residual
     of a sum into its destination; the op; its destination -> y, unless y stays in it */
  in_md = fuse__dnnl_in_md(d, 0, &x_md);
  mx = fuse__dnnl_add_mem(s, in_md, FUSE__DNNL_OPERAND, 0);
  msrc = mx;
  if (!dnnl_memory_desc_equal(src_md, in_md))
    msrc = fuse__dnnl_add_mem(s, src_md, FUSE__DNNL_SCRATCH, 0);
  keep = d->output_layout && !dnnl_memory_desc_equal(dst_md, &y_md);
  my = fuse__dnnl_add_mem(s, keep ? dst_md : &y_md, FUSE__DNNL_OUTPUT, 0);
  mdst = my;
  if (!keep && !dnnl_memory_desc_equal(dst_md, &y_md))
    mdst = fuse__dnnl_add_mem(s, dst_md, FUSE__DNNL_SCRATCH, 0);
  if (keep) { /* the readers of y are steps of this backend: they get dst_md */
    s->out_md = *dst_md;
    d->output_layout->id = &s->out_md;
    d->output_layout->bytes = dnnl_memory_desc_get_size(dst_md);
  }
  mw = fuse__dnnl_add_mem(s, wei_md, FUSE__DNNL_WEIGHTS, 0);
  if (msrc != mx) st = fuse__dnnl_reorder(s, mx, msrc);
  if (st == dnnl_success && ep.sum_operand >= 0) {
    const dnnl_memory_desc_t *r_md = fuse__dnnl_in_md(d, ep.sum_operand, &y_md);
    if (dnnl_memory_desc_equal(r_md, dst_md)) { /* already in the destination's layout */
      s->copy_operand = ep.sum_operand;
      s->copy_to = mdst;
      s->copy_bytes = dnnl_memory_desc_get_size(dst_md);
    } else {
      st = fuse__dnnl_reorder(s, fuse__dnnl_add_mem(s, r_md, FUSE__DNNL_OPERAND, ep.sum_operand),
                              mdst);
    }
  }
  if (st == dnnl_success && (e = fuse__dnnl_add_exec(s, pd, &st)) != NULL) {
    fuse__dnnl_arg(e, DNNL_ARG_SRC, msrc);
    fuse__dnnl_arg(e, DNNL_ARG_WEIGHTS, mw);
    fuse__dnnl_arg(e, DNNL_ARG_DST, mdst);
    fuse__dnnl_op_args(s, e, d, &ep, &b_md, &y_md);
  }
  if (st == dnnl_success && mdst != my) st = fuse__dnnl_reorder(s, mdst, my);
  if (st != dnnl_success) r = fuse__dnnl_fail(why, why_size, "convolution primitive", st);
done:
  if (pd) dnnl_primitive_desc_destroy(pd);
  fuse__dnnl_epi_free(&ep);
  return r;
}

static fuse_result fuse__dnnl_matmul(fuse__dnnl *s, const fuse_backend_step *d, char *why,
                                     size_t why_size) {
  const fuse_backend_tensor *x = &d->operands[0], *w = &d->operands[1];
  int64_t K, N, M = 1;
  dnnl_dims_t xd, yd, wd, bd;
  dnnl_memory_desc_t x_md, y_md, w_md, b_md, w_any;
  const dnnl_memory_desc_t *wei_md;
  dnnl_matmul_desc_t md;
  dnnl_primitive_desc_t pd = NULL;
  fuse__dnnl_epi ep;
  fuse__dnnl_exec *e;
  dnnl_status_t st;
  fuse_result r = FUSE_OK;
  int k, mw;
  if (w->rank != 2 || x->rank < 1 || x->shape[x->rank - 1] != w->shape[0])
    return fuse__dnnl_why(why, why_size, FUSE_ERROR_UNSUPPORTED,
                          "matmul weights are not a [K, N] matrix");
  for (k = 0; k < d->num_operands; k++) /* fuse_compile then offers it again with NCHW */
    if (d->operands[k].layout.id)
      return fuse__dnnl_why(why, why_size, FUSE_ERROR_UNSUPPORTED,
                            "matmul reads NCHW, not an operand in oneDNN's layout");
  K = w->shape[0], N = w->shape[1];
  for (k = 0; k < x->rank - 1; k++) M *= x->shape[k]; /* x's rows, batch dims folded in */
  xd[0] = M, xd[1] = K;
  wd[0] = K, wd[1] = N;
  yd[0] = M, yd[1] = N;
  bd[0] = 1, bd[1] = N;
  st = fuse__dnnl_md(&x_md, 2, xd, dnnl_ab);
  if (st == dnnl_success) st = fuse__dnnl_md(&y_md, 2, yd, dnnl_ab);
  if (st == dnnl_success) st = fuse__dnnl_md(&w_md, 2, wd, dnnl_ab);
  if (st == dnnl_success) st = fuse__dnnl_md(&b_md, 2, bd, dnnl_ab);
  if (st == dnnl_success) st = fuse__dnnl_md(&w_any, 2, wd, dnnl_format_tag_any);
  if (st != dnnl_success) return fuse__dnnl_fail(why, why_size, "memory descriptor", st);
  st = fuse__dnnl_post_ops(d, &y_md, &ep);
  if (st != dnnl_success) {
    fuse__dnnl_epi_free(&ep);
    return fuse__dnnl_fail(why, why_size, "post-ops", st);
  }
  st = dnnl_matmul_desc_init(&md, &x_md, &w_any, d->bias >= 0 ? &b_md : NULL, &y_md);
  if (st == dnnl_success) st = dnnl_primitive_desc_create(&pd, &md, ep.attr, s->engine, NULL);
  if (st != dnnl_success) {
    pd = NULL;
    r = fuse__dnnl_fail(why, why_size, "matmul", st);
    goto done;
  }
  wei_md = dnnl_primitive_desc_query_md(pd, dnnl_query_weights_md, 0);
  st = fuse__dnnl_weights(s, &w_md, w->data, wei_md);
  if (st != dnnl_success) {
    r = fuse__dnnl_fail(why, why_size, "weights reorder", st);
    goto done;
  }
  mw = fuse__dnnl_add_mem(s, wei_md, FUSE__DNNL_WEIGHTS, 0);
  if (ep.sum_operand >= 0) { /* the destination is y itself */
    s->copy_operand = ep.sum_operand;
    s->copy_to = fuse__dnnl_add_mem(s, &y_md, FUSE__DNNL_OUTPUT, 0);
    s->copy_bytes = dnnl_memory_desc_get_size(&y_md);
  }
  if ((e = fuse__dnnl_add_exec(s, pd, &st)) != NULL) {
    fuse__dnnl_arg(e, DNNL_ARG_SRC, fuse__dnnl_add_mem(s, &x_md, FUSE__DNNL_OPERAND, 0));
    fuse__dnnl_arg(e, DNNL_ARG_WEIGHTS, mw);
    fuse__dnnl_arg(e, DNNL_ARG_DST, fuse__dnnl_add_mem(s, &y_md, FUSE__DNNL_OUTPUT, 0));
    fuse__dnnl_op_args(s, e, d, &ep, &b_md, &y_md);
  } else {
    r = fuse__dnnl_fail(why, why_size, "matmul primitive", st);
  }
done:
  if (pd) dnnl_primitive_desc_destroy(pd);
  fuse__dnnl_epi_free(&ep);
  return r;
}

static void *fuse__dnnl_ptr(const fuse__dnnl *s, int i, const float *const *operands,
                            float *output, void *scratch) {
  const fuse__dnnl_mem *m = &s->mems[i];
  switch (m->from) {
  case FUSE__DNNL_OPERAND: return (void *)(uintptr_t)operands[m->operand]; /* read only */
  case FUSE__DNNL_OUTPUT: return output;
  case FUSE__DNNL_SCRATCH: return (char *)scratch + m->offset;
  default: return (char *)scratch + s->scratch; /* PAD */
  }
}

/* A handle set: a stream and one memory object per mems[i] (the weights' is shared), with
   the given data handles (NULL: set at run). 0 on failure (what was made is kept, for
   fuse__dnnl_destroy or fuse__dnnl_slot_free). */
static int fuse__dnnl_slot_make(fuse__dnnl *s, fuse__dnnl_slot *slot, void *const *ptr) {
  int i;
  memset(slot, 0, sizeof *slot);
  if (dnnl_stream_create(&slot->stream, s->engine, dnnl_stream_default_flags) != dnnl_success) {
    slot->stream = NULL;
    return 0;
  }
  for (i = 0; i < s->num_mems; i++) {
    if (s->mems[i].from == FUSE__DNNL_WEIGHTS) {
      slot->mem[i] = s->weights;
    } else if (dnnl_memory_create(&slot->mem[i], &s->mems[i].md, s->engine,
                                  ptr ? ptr[i] : DNNL_MEMORY_NONE) != dnnl_success) {
      slot->mem[i] = NULL;
      return 0;
    }
  }
  return 1;
}

static void fuse__dnnl_slot_free(fuse__dnnl *s, fuse__dnnl_slot *slot) {
  int i;
  for (i = 0; i < s->num_mems; i++)
    if (slot->mem[i] && s->mems[i].from != FUSE__DNNL_WEIGHTS) dnnl_memory_destroy(slot->mem[i]);
  if (slot->stream) dnnl_stream_destroy(slot->stream);
}

static fuse_result fuse__dnnl_prepare(const fuse_backend *self, const fuse_backend_step *d,
                                      void **state, size_t *scratch_size, char *why,
                                      size_t why_size) {
  fuse__dnnl *s;
  fuse_result r;
  int k;
  (void)self;
  *state = NULL;
  *scratch_size = 0;
  if (d->op != FUSE_BACKEND_CONV2D && d->op != FUSE_BACKEND_MATMUL)
    return fuse__dnnl_why(why, why_size, FUSE_ERROR_UNSUPPORTED, "not a conv2d or matmul");
  if (!d->operands[1].data)
    return fuse__dnnl_why(why, why_size, FUSE_ERROR_UNSUPPORTED, "the weights are not a constant");
  for (k = 0; k < d->num_post; k++)
    if (d->post[k].kind == FUSE_POST_ADD) {
      const fuse_backend_tensor *t = &d->operands[d->post[k].operand];
      int64_t n = 1, m = 1;
      int j;
      for (j = 0; j < t->rank; j++) n *= t->shape[j];
      for (j = 0; j < d->output.rank; j++) m *= d->output.shape[j];
      if (n != m)
        return fuse__dnnl_why(why, why_size, FUSE_ERROR_UNSUPPORTED,
                              "a residual is not shaped as the output");
    }
  s = (fuse__dnnl *)FUSE_MALLOC(sizeof *s);
  if (!s) return FUSE_ERROR_OUT_OF_MEMORY;
  memset(s, 0, sizeof *s);
  s->copy_operand = -1;
  s->copy_to = -1;
  if (dnnl_engine_create(&s->engine, dnnl_cpu, 0) != dnnl_success) {
    s->engine = NULL;
    fuse__dnnl_destroy(s);
    return fuse__dnnl_why(why, why_size, FUSE_ERROR_BACKEND, "oneDNN has no CPU engine");
  }
  r = d->op == FUSE_BACKEND_CONV2D ? fuse__dnnl_conv(s, d, why, why_size)
                                   : fuse__dnnl_matmul(s, d, why, why_size);
  if (r != FUSE_OK) {
    fuse__dnnl_destroy(s);
    return r;
  }
  /* handle sets for concurrent runs; with none, each run makes its own */
  while (FUSE__DNNL_ATOMICS && s->num_slots < FUSE__DNNL_SLOTS) {
    if (!fuse__dnnl_slot_make(s, &s->slots[s->num_slots], NULL)) {
      fuse__dnnl_slot_free(s, &s->slots[s->num_slots]);
      break;
    }
    s->num_slots++;
  }
  *state = s;
  *scratch_size = s->scratch + s->pad;
  return FUSE_OK;
}

static fuse_result fuse__dnnl_run(void *state, const float *const *operands, float *output,
                                  void *scratch) {
  fuse__dnnl *s = (fuse__dnnl *)state;
  fuse__dnnl_slot own, *slot = NULL;
  void *ptr[FUSE__DNNL_MEMS];
  dnnl_exec_arg_t args[FUSE__DNNL_ARGS];
  dnnl_status_t st = dnnl_success;
  int i, j, claimed = -1;
  for (i = 0; i < s->num_mems; i++) ptr[i] = fuse__dnnl_ptr(s, i, operands, output, scratch);
  for (j = 0; j < s->num_slots && claimed < 0; j++)
    if (FUSE__DNNL_CLAIM(&s->busy[j])) claimed = j;
  if (claimed >= 0) {
    slot = &s->slots[claimed];
    for (i = 0; i < s->num_mems && st == dnnl_success; i++)
      if (s->mems[i].from != FUSE__DNNL_WEIGHTS)
        st = dnnl_memory_set_data_handle_v2(slot->mem[i], ptr[i], slot->stream);
  } else if (fuse__dnnl_slot_make(s, &own, ptr)) { /* every set is in use */
    slot = &own;
  } else {
    fuse__dnnl_slot_free(s, &own);
    return FUSE_ERROR_OUT_OF_MEMORY;
  }
  if (s->copy_operand >= 0) /* the sum post-op adds the destination's contents */
    memcpy(ptr[s->copy_to], operands[s->copy_operand], s->copy_bytes);
  for (j = 0; j < s->num_execs && st == dnnl_success; j++) {
    const fuse__dnnl_exec *e = &s->execs[j];
    for (i = 0; i < e->nargs; i++) {
      args[i].arg = e->arg[i];
      args[i].memory = slot->mem[e->mem[i]];
    }
    st = dnnl_primitive_execute(e->prim, slot->stream, e->nargs, args);
  }
  if (st == dnnl_success) st = dnnl_stream_wait(slot->stream);
  if (claimed >= 0) FUSE__DNNL_RELEASE(&s->busy[claimed]);
  else fuse__dnnl_slot_free(s, &own);
  return st == dnnl_success ? FUSE_OK : FUSE_ERROR_BACKEND;
}

FUSE_API const fuse_backend *fuse_dnnl_backend(void) {
  static const fuse_backend backend = {"dnnl", NULL, fuse__dnnl_prepare, fuse__dnnl_run,
                                       fuse__dnnl_destroy};
  return &backend;
}

#else /* no oneDNN */

FUSE_API const fuse_backend *fuse_dnnl_backend(void) { return NULL; }

#endif /* FUSE_DNNL_AVAILABLE */

#ifdef __cplusplus
}
#endif

#if FUSE_DNNL_AVAILABLE
#undef FUSE__DNNL_CLAIM
#undef FUSE__DNNL_RELEASE
#undef FUSE__DNNL_SLOTS
#undef FUSE__DNNL_ATOMICS
#undef FUSE__DNNL_MEMS
#undef FUSE__DNNL_EXECS
#undef FUSE__DNNL_ARGS
#endif
#endif /* FUSE_IMPLEMENTATION */
