/* fuse.h - v0.1.0 - fused conv / matmul epilogues for small neural-network graphs.
   Public domain-style single header (MIT, see the end of the file).

   THIS FILE IS GENERATED from the source tree in src/ by tools/amalgamate.sh; the markers
   "==== begin src/..." name the file each part comes from. Edit src/, then run `make fuse.h`
   and commit both (`make test` fails while they differ).

   fuse.h takes a neural-network graph (built in C, read from its text form, or loaded from
   an ONNX file), finds the chains a fused kernel can run in one pass - conv2d ->
   reshape(bias) -> add -> relu, matmul -> clip - wraps each into a named composite, analyzes
   its epilogue (bias, residual add, clamps in any operand order), and runs the graph with
   the epilogue applied once per output. One file, C99, no dependencies.

   QUICK START

       #define FUSE_IMPLEMENTATION       // in exactly one .c file
       #include "fuse.h"

       int64_t xs[4] = {1, 3, 32, 32}, ws[4] = {16, 3, 3, 3}, bs[1] = {16};
       fuse_graph *g = fuse_graph_create(NULL);
       fuse_value x = fuse_input(g, "image", 4, xs);
       fuse_value w = fuse_constant(g, "weight", 4, ws, weight_data);
       fuse_value b = fuse_constant(g, "bias", 1, bs, bias_data);
       fuse_conv2d_attrs conv = {{1, 1}, {1, 1, 1, 1}, {1, 1}, 1};   // zero = defaults
       int64_t bshape[4] = {1, 16, 1, 1};
       fuse_value y = fuse_relu(g, fuse_add(g, fuse_conv2d(g, x, w, &conv),
                                            fuse_reshape(g, b, 4, bshape)));
       fuse_output(g, y);
       if (fuse_graph_status(g) != FUSE_OK) puts(fuse_graph_error(g));
       fuse_optimize(g, "fuse");        // the chain becomes one composite: one fused step

       fuse_plan *plan;
       if (fuse_compile(g, NULL, &plan) == FUSE_OK) {        // the graph may go now
         const float *in[1] = {image};  float *out[1] = {result};
         fuse_run(plan, in, out, NULL);                      // allocates nothing
         fuse_plan_destroy(plan);
       }
       fuse_graph_destroy(g);

   Or load a model: fuse_onnx_load_file("model.onnx", NULL, &g), then the same steps.
   Patterns of your own: fuse_ops_by_pattern(g, rules, n, NULL) with rules such as
   {"dnnl.conv2d_reshape_add_relu", "relu(add(conv2d($x, $w), reshape($b, *)))"}.

   Errors are values: every function returns a fuse_result or FUSE_NONE, and the graph keeps
   the first error as a message that names the op, its operands and their shapes.

   SECTIONS  public API: basics, graph, text form, patterns and passes, epilogue, compile and
   run, ONNX. Implementation: utilities, graph and shape inference, builders, pattern parser
   and matcher, passes (fuse_ops_by_pattern, merge, epilogue analyzer, batch-norm folding,
   rules), text printer and parser, the fusion report and the DOT writer, cpu, plan, reference
   kernels, executor, ONNX reader.

   CONFIGURATION (define before including)

     FUSE_IMPLEMENTATION   compile the implementation into this translation unit
     FUSE_STATIC           make every function static (one private copy per unit)
     FUSE_API              the linkage of public functions (default: extern, or static)
     FUSE_MALLOC(size) / FUSE_FREE(ptr)   the default allocator (both or neither)
     FUSE_ASSERT(cond)     checks of the library's own invariants (default: assert)
     FUSE_NO_STDIO         no FILE* functions (fuse_graph_print, fuse_explain, fuse_write_dot,
                           fuse_onnx_load_file)
     FUSE_NO_ONNX          leave the ONNX reader out
     FUSE_NO_SIMD, FUSE_NO_AVX2, FUSE_NO_AVX512, FUSE_NO_NEON   compile the AVX-512 / AVX2
                           / NEON kernels out (the x86 paths are chosen at run time from
                           cpuid; NEON is built in on aarch64, and on armv7 with
                           -mfpu=neon-vfpv4)
     FUSE_RUNTIME_ONLY     only what loads and runs plan blobs (fuse_plan_load, fuse_run,
                           fuse_run_steps, fuse_plan_destroy, the plan queries, fuse_plan_save,
                           fuse_plan_write_config, fuse_cpu_isa, fuse_result_string) and the
                           kernels: no graph, builders, text form, passes, compiler, ONNX, DOT
                           or explain, whose declarations it hides; define it in every unit
     FUSE_NO_RUN_<KIND>, FUSE_NO_KERNEL_<FAMILY>, FUSE_NO_POST_<KIND>   leave out a kind of
                           step, a family of micro-kernels, a post-op kind (src/config.h lists
                           them); fuse_run --emit-config (fuse_plan_write_config) writes those a
                           set of plans does not use. A plan that needs one is refused, naming it
     FUSE_NO_MESSAGES      fuse_plan_load's refusals without their text (for firmware)

   VERSION  0.1.0 - see CHANGELOG.md
*/
#include "api.h"

/* ============================================================================
   IMPLEMENTATION
   ============================================================================ */
#if defined(FUSE_IMPLEMENTATION) && !defined(FUSE_IMPLEMENTATION_DONE)
#define FUSE_IMPLEMENTATION_DONE

#include "base.c"
#include "graph/ops.c"
#include "config.h"
/* the graph, its builders, passes and text form: not in a runtime-only build */
#ifndef FUSE_RUNTIME_ONLY
#include "graph/graph.c"
#include "graph/builders.c"
#include "graph/builders_math.c"
#include "graph/builders_shape.c"
#include "graph/builders_nn.c"
#include "graph/builders_layers.c"
#include "graph/builders_quant.c"
#include "passes/composites.c"
#include "passes/pattern.c"
#include "passes/fuse_by_pattern.c"
#include "passes/epilogue.c"
#include "passes/merge.c"
#include "passes/rules.c"
#include "passes/quant.c"
#include "graph/text_write.c"
#include "graph/text_lex.c"
#include "graph/text_build.c"
#include "graph/text_read.c"
#include "passes/explain.c"
#include "graph/dot.c"
#endif
#include "plan/cpu.c"
#include "kernels/common.c"
#include "kernels/gemm.c"
#include "kernels/depthwise.c"
#include "kernels/grouped.c"
#include "kernels/pool_eltwise.c"
#include "kernels/chain_rows.c"
#include "kernels/winograd.c"
#include "kernels/qconv.c"
#include "kernels/qwino3.c"
#include "kernels/qeltwise.c"
#include "kernels/qglobal_pool.c"
#include "kernels/isa_avx512.c"
#include "kernels/isa_avx2.c"
#include "kernels/isa_neon.c"
#include "kernels/isa_scalar.c"
#include "kernels/table.c"
#include "plan/plan.c"
#include "plan/needs.c"
/* the compiler: not in a runtime-only build */
#ifndef FUSE_RUNTIME_ONLY
#include "plan/compile_parts.c"
#include "plan/layouts.c"
#include "plan/winograd_choice.c"
#include "plan/listing.c"
#include "plan/chains.c"
#include "plan/in_place.c"
#include "plan/backends.c"
#include "plan/quant_pack.c"
#include "plan/compile.c"
#endif
#include "run/reference.c"
#include "run/conv_run.c"
#include "run/winograd_run.c"
#include "run/grouped_run.c"
#include "run/steps.c"
#include "run/reference_math.c"
#include "run/reference_shape.c"
#include "run/reference_nn.c"
#include "run/reference_layers.c"
#include "run/reference_quant.c"
#include "run/quant_run.c"
#include "run/chain_run.c"
#include "run/run.c"
#include "run/plan_blob.c"
/* the ONNX reader: not in a runtime-only build */
#ifndef FUSE_RUNTIME_ONLY
#include "onnx/wire.c"
#include "onnx/values.c"
#include "onnx/convert.c"
#include "onnx/fold.c"
#include "onnx/convert_math.c"
#include "onnx/convert_shape.c"
#include "onnx/convert_nn.c"
#include "onnx/convert_layers.c"
#include "onnx/convert_quant.c"
#include "onnx/load.c"
#endif
#include "undefs.h"
#endif /* FUSE_IMPLEMENTATION */

/*
------------------------------------------------------------------------------
MIT License

Copyright (c) 2026 the fuse.h authors

Permission is hereby granted, free of charge, to any person obtaining a copy of
this software and associated documentation files (the "Software"), to deal in
the Software without restriction, including without limitation the rights to
use, copy, modify, merge, publish, distribute, sublicense, and/or sell copies
of the Software, and to permit persons to whom the Software is furnished to do
so, subject to the following conditions:

The above copyright notice and this permission notice shall be included in all
copies or substantial portions of the Software.

THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND, EXPRESS OR
IMPLIED, INCLUDING BUT NOT LIMITED TO THE WARRANTIES OF MERCHANTABILITY,
FITNESS FOR A PARTICULAR PURPOSE AND NONINFRINGEMENT. IN NO EVENT SHALL THE
AUTHORS OR COPYRIGHT HOLDERS BE LIABLE FOR ANY CLAIM, DAMAGES OR OTHER
LIABILITY, WHETHER IN AN ACTION OF CONTRACT, TORT OR OTHERWISE, ARISING FROM,
OUT OF OR IN CONNECTION WITH THE SOFTWARE OR THE USE OR OTHER DEALINGS IN THE
SOFTWARE.
------------------------------------------------------------------------------
*/
