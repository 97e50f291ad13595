/* fuse_dnnl.h - v0.1.0 - the oneDNN backend for fuse.h (a stub in this version).

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
       fuse_compile(graph, &opt, &plan);

   FUSE_DNNL_AVAILABLE is 1 when oneDNN's header (<oneapi/dnnl/dnnl.h> or <dnnl.h>) was
   found through __has_include, else 0. Predefine it to 0 to leave oneDNN out where it is
   installed, or to 1 where the compiler has no __has_include.

   v0.1: fuse_dnnl_backend() returns NULL, so every op runs on fuse.h's own kernels. A later
   version routes fused composites (conv2d / matmul with bias, residual add and clamps) to
   oneDNN primitives; programs that use it will then link with -ldnnl.

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

/* The oneDNN backend for fuse_compile_options.backends, or NULL when it is not available
   (always NULL in v0.1). */
FUSE_API FUSE__DNNL_MAYBE_UNUSED const fuse_backend *fuse_dnnl_backend(void);

#ifdef __cplusplus
}
#endif

#undef FUSE__DNNL_MAYBE_UNUSED
#endif /* FUSE_DNNL_H */

/* ================================================================ implementation == */
#if defined(FUSE_IMPLEMENTATION) && !defined(FUSE_DNNL_IMPLEMENTATION_DONE)
#define FUSE_DNNL_IMPLEMENTATION_DONE

#ifdef __cplusplus
extern "C" {
#endif

FUSE_API const fuse_backend *fuse_dnnl_backend(void) { return NULL; }

#ifdef __cplusplus
}
#endif

#endif /* FUSE_IMPLEMENTATION */
