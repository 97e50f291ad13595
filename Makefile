# fuse.h - tests, header checks and the demo. GNU make.
#
#   make test               build and run tests/test_*.c and the header checks;
#                           the last line is "total: N passed, N failed"
#   make test SANITIZE=1    the same with AddressSanitizer + UBSan, in build-san/
#   make demo               build and run examples/demo.c, the seed examples (--short), then
#                           fuse_run on the committed ONNX network (tests/data/onnx/tinynet_bn.onnx),
#                           then game_loop --short (a network across frames under a budget)
#   make examples           build every examples/*.c into $(BUILD)/
#   make test-cross         the test programs for aarch64, armhf and i386 under qemu-user
#                           (CROSS_ARCHES=s390x / ppc: big-endian); see "cross tests" below
#   make test-m7            examples/embedded.c (a float plan) and embedded_int8.c (an int8
#                           plan) for a bare-metal Cortex-M7: the --emit-config header, -Werror,
#                           links, size, the libc / libm calls, runs under qemu-arm; see "Cortex-M7"
#   make neon-mca           the NEON GEMM micro-kernels' inner loops through llvm-mca
#                           (FMAs per cycle on Cortex-A76, Neoverse-N1, Apple M1): estimates
#   make test-cmake         tests/cmake: a consumer project built against CMakeLists.txt with
#                           add_subdirectory, FetchContent, find_package, pkg-config (build-cmake/)
#   make test-tsan          the multi-threaded tests under ThreadSanitizer (build-tsan/)
#   make test-matrix        compilers x standards x configuration macros (tests/matrix.sh)
#   make test-vmath         the vector math functions (exp, log, tanh, erf, ...) on all 2^32
#                           float inputs per instruction set, against libm; see "vmath" below
#   make fuzz               each libFuzzer target for FUZZ_SECONDS (default 60; clang)
#   make pictures           README's pictures (docs/*.png) with Graphviz's dot
#   make fuse.h             regenerate fuse.h from src/ (tools/amalgamate.sh); commit both.
#                           `make test` fails while the committed fuse.h differs from src/
#   make clean

SHELL := /bin/bash
# Builds use every core unless the command line says otherwise (make -j1, -j4): `make test` as
# typed builds its programs two at a time on two cores (a full build of the implementation at
# -O2 takes about a minute, and the self-contained tests and header checks build it again).
ifeq ($(filter -j%,$(MAKEFLAGS)),)
MAKEFLAGS += -j$(shell nproc 2>/dev/null || echo 2)
endif
CC ?= cc
CXX ?= c++
# make predefines CXX as g++; take c++ unless the user chose one.
ifeq ($(origin CXX),default)
CXX := c++
endif

WARN := -std=c99 -Wall -Wextra -Wpedantic -Werror
CXXWARN := -x c++ -std=c++11 -Wall -Wextra -Werror
LDLIBS := -lm -lpthread
# oneDNN (fuse_dnnl.h): 1 when its header is found; then every program that includes
# fuse_dnnl.h links $(DNNL_LIBS), and build/test_dnnl runs the routed tests (else it skips them)
DNNL_FOUND := $(shell printf '\043include <oneapi/dnnl/dnnl.h>\n' | $(CC) -E -x c - >/dev/null 2>&1 && echo 1 || echo 0)
DNNL_LIBS := $(if $(filter 1,$(DNNL_FOUND)),-ldnnl)

ifeq ($(SANITIZE),1)
BUILD := build-san
OPT := -O1
SAN := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer -g
else
BUILD := build
OPT := -O2
SAN :=
endif

# CFLAGS given by the user are added last.
ALL_CFLAGS = $(WARN) $(OPT) $(SAN) -I. $(CFLAGS)
ALL_CXXFLAGS = $(CXXWARN) $(OPT) $(SAN) -I. $(CXXFLAGS)
# Builds of the whole implementation take about a minute at -O2 on the 2-core machines, 35 s at
# -O1, 6 s at -O0, so `make test` builds it at -O2 only where that is the point: in $(IMPL)
# (gcc: what the linked tests and examples run, with gcc's flow-analysis warnings), in
# test_kernels (the micro-kernels against the reference, as users build them) and in
# check-clang (clang's). The C++ build (check-cxx) and the header checks of further
# configurations (fuse_dnnl.h, the exported symbols, the quick start) build at -O1, still
# with the warnings that need the optimizer's flow analysis. At -O0: the checks of how the
# header is included (twice in one unit, FUSE_STATIC in C, C++ and clang) and the host builds
# of the firmware examples, which ask only the compiler's front end (redefinitions, linkage,
# -Wunused-function), and the other self-contained tests (see SELF_CONTAINED_QUICK).
CHECK_OPT := $(if $(filter 1,$(SANITIZE)),$(OPT),-O1)
CHECK_CFLAGS = $(WARN) $(CHECK_OPT) $(SAN) -I. $(CFLAGS)
CHECK_CXXFLAGS = $(CXXWARN) $(CHECK_OPT) $(SAN) -I. $(CXXFLAGS)
QUICK_OPT := $(if $(filter 1,$(SANITIZE)),$(OPT),-O0)
QUICK_CFLAGS = $(WARN) $(QUICK_OPT) $(SAN) -I. $(CFLAGS)
QUICK_CXXFLAGS = $(CXXWARN) $(QUICK_OPT) $(SAN) -I. $(CXXFLAGS)
HB := $(BUILD)/header

TEST_SOURCES := $(sort $(wildcard tests/test_*.c))
TEST_PROGRAMS := $(patsubst tests/%.c,$(BUILD)/%,$(TEST_SOURCES))
EXAMPLE_SOURCES := $(sort $(wildcard examples/*.c))
EXAMPLE_PROGRAMS := $(patsubst examples/%.c,$(BUILD)/%,$(EXAMPLE_SOURCES))
# the examples that walk through the seed scenarios; `make demo` runs them after the demo
SEED_EXAMPLES := conv2d_reshape_add_relu fuse_by_pattern clip_epilogue

# Each check counts as one test in the total; see the check-* targets below. Under the
# sanitizers (SANITIZE=1) only those that run library code of their own beyond what the test
# programs run: the header checks are compile-time checks of configurations, each a build of
# the whole implementation (about a minute, two under ASan), which `make test` and `make
# test-matrix` have made already; `twice` and `quickstart` (the README's example) build it
# once more each to run a few calls that the test programs make under the sanitizers anyway.
ifeq ($(SANITIZE),1)
HEADER_CHECKS := two-units examples map runtime-only
else
HEADER_CHECKS := generated map twice cxx static two-units symbols quickstart dnnl examples \
  runtime-only
endif
# the clang build of the header: with the sanitizers (SANITIZE=1) it is left to the fuzz
# targets, which build the whole header with clang, ASan and UBSan anyway (clang takes minutes
# per unit there)
ifneq ($(shell command -v clang 2>/dev/null),)
ifneq ($(SANITIZE),1)
HEADER_CHECKS += clang
endif
endif

.PHONY: all test test-programs demo examples bench fuzz clean $(addprefix check-,$(HEADER_CHECKS) clang)

all: test-programs examples

# A program that does not build counts as one failure in run.sh, so the build goes on (-k)
# and run.sh prints the total last whatever happened.
# The header checks run two at a time, each its own make: the programs more than one of them
# runs (fuse_run for examples and runtime-only) are built here first, or two makes link the same
# file while the other runs it ("Text file busy", CI of 2026-11-28 under SANITIZE=1).
test:
	@$(MAKE) --no-print-directory -k test-programs $(EXAMPLE_PROGRAMS) || true
	@MAKE="$(MAKE)" bash tests/run.sh $(addprefix --check ,$(HEADER_CHECKS)) $(TEST_PROGRAMS)

test-programs: $(TEST_PROGRAMS)

$(BUILD) $(HB):
	@mkdir -p $@

# The implementation is compiled once per configuration, into $(IMPL); the test programs and
# examples that use only the public API link it, compiled with -DFUSE_IMPLEMENTATION_DONE
# (fuse.h's implementation guard: their own `#define FUSE_IMPLEMENTATION` then compiles
# nothing, and each source still builds alone as users would build it). Self-contained, with
# the implementation in their own unit: test_kernels and test_vmath (internal tables and
# functions; test_qkernels: the integer conv tiles), test_run and test_fuzz_regress (their own
# FUSE_MALLOC; the fuzz targets' ONNX
# entry point), test_config (pieces left out: FUSE_NO_POST_SIGMOID, ...), and the firmware
# examples (embedded.c, embedded_int8.c: their own allocator and configuration). Each is a
# build of the whole implementation (about a minute at -O2, 35 s at -O1): a test that can use
# the public API alone links $(IMPL).
IMPL := $(BUILD)/fuse.o
SELF_CONTAINED_TESTS := $(addprefix $(BUILD)/test_,kernels run fuzz_regress vmath config qkernels)
LINKED_TESTS := $(filter-out $(SELF_CONTAINED_TESTS),$(TEST_PROGRAMS))
LINK_FLAGS := -DFUSE_IMPLEMENTATION_DONE
# Of the self-contained tests only test_kernels builds at -O2 as users build; test_run,
# test_fuzz_regress, test_vmath and test_config test semantics (allocation, replays, accuracy
# against libm, what a build without some pieces refuses)
# that do not depend on the optimizer, run in under two seconds at -O0 (0.1, 0.05, 1.3 s) and
# build in 6 s instead of 60; the -O2 build of the implementation is $(IMPL), which every
# linked test runs on every ISA. test_dnnl links $(IMPL) too: its unit compiles fuse_dnnl.h's
# implementation alone (FUSE_IMPLEMENTATION_DONE, which fuse_dnnl.h supports).
SELF_CONTAINED_QUICK := $(addprefix $(BUILD)/test_,run fuzz_regress vmath config qkernels)
$(SELF_CONTAINED_QUICK): OPT := $(QUICK_OPT)

# With gcc 10 or later (not under the sanitizers) $(IMPL) is built in parallel: the unit's back
# end, nine tenths of the minute it takes (-ftime-report: expansion to RTL and register
# allocation), runs as link-time partitions on every core (-flto=N), linked into one relocatable
# object of machine code (-flinker-output=nolto-rel) whose symbols the partitions shared
# (statics made hidden globals) are made local again (objcopy --localize-hidden), so the object
# links and exports as the plain build's does. 2 cores: 63 s -> 36 s; the programs that link it
# run within noise of the plain build's. IMPL_LTO=0 turns it off. The cross builds' implementation
# objects are built the same way, with the cross binutils' objcopy.
GCC_MAJOR := $(shell $(CC) -v 2>&1 | sed -n 's/^gcc version \([0-9]*\).*/\1/p')
IMPL_LTO ?= $(if $(filter 1,$(SANITIZE)),0,$(if $(GCC_MAJOR),$(shell test $(GCC_MAJOR) -ge 10 && echo 1 || echo 0),0))
LTO_JOBS := $(shell nproc 2>/dev/null || echo 2)
# $(call impl_object,compiler and flags,objcopy): the recipe that builds tests/header/impl.c
# into $@, in parallel partitions when IMPL_LTO is 1
impl_object = $(if $(filter 1,$(IMPL_LTO)),\
  $(1) -flto -c $< -o $@.lto.o && \
  $(1) -flto=$(LTO_JOBS) -r -nostdlib -flinker-output=nolto-rel $@.lto.o -o $@.r.o && \
  $(2) --localize-hidden $@.r.o $@ && rm -f $@.lto.o $@.r.o,\
  $(1) -c $< -o $@)

$(IMPL): tests/header/impl.c fuse.h | $(BUILD)
	$(call impl_object,$(CC) $(ALL_CFLAGS),objcopy)

# rm first: a failed build must not leave an old program behind for run.sh to run.
$(SELF_CONTAINED_TESTS): $(BUILD)/test_%: tests/test_%.c | $(BUILD)
	@rm -f $@
	$(CC) $(ALL_CFLAGS) -MMD -MP $< -o $@ $(LDLIBS)

$(LINKED_TESTS): $(BUILD)/test_%: tests/test_%.c $(IMPL) | $(BUILD)
	@rm -f $@
	$(CC) $(ALL_CFLAGS) $(LINK_FLAGS) -MMD -MP $< $(IMPL) -o $@ $(LDLIBS)

-include $(TEST_PROGRAMS:=.d)

# fuse_dnnl.h's tests: told whether oneDNN is there (a cross build sees the host's header but
# has no library, so the test skips unless the Makefile says so)
$(BUILD)/test_dnnl: ALL_CFLAGS += -DFUSE_DNNL_AVAILABLE=$(DNNL_FOUND)
$(BUILD)/test_dnnl: LDLIBS += $(DNNL_LIBS)

# ---------------------------------------------------------------- header checks --
# run.sh calls each as `make -s check-NAME`; exit status 0 = passed.

# fuse.h is generated from src/ and committed; it is rewritten only when asked for by name
# (`make fuse.h`), never as a side effect of a build, so this check sees the committed file.
SRC_FILES := $(shell find src -type f 2>/dev/null | sort)
ifneq ($(filter fuse.h,$(MAKECMDGOALS)),)
.PHONY: fuse.h
fuse.h:
	@sh tools/amalgamate.sh src/fuse.h > fuse.h.tmp && mv fuse.h.tmp fuse.h
	@echo "fuse.h: $$(wc -l < fuse.h) lines from $(words $(SRC_FILES)) files in src/"
endif

# (0) the committed fuse.h is what src/ generates
check-generated: | $(HB)
	@sh tools/amalgamate.sh src/fuse.h > $(HB)/fuse.h.generated
	@cmp -s fuse.h $(HB)/fuse.h.generated || { \
	  echo "fuse.h differs from what src/ generates: edit src/, then run 'make fuse.h'"; \
	  diff -u fuse.h $(HB)/fuse.h.generated | head -n 40; exit 1; }

# (0b) every file in src/ is named in the source map (docs/source-map.md), and the map names no
# file that is gone
check-map:
	@status=0; \
	for f in $(SRC_FILES); do \
	  grep -q -- "- \`$$f\` " docs/source-map.md || { echo "$$f is not in docs/source-map.md"; status=1; }; \
	done; \
	for f in $$(grep -o '^- `src/[^`]*`' docs/source-map.md | tr -d '`' | cut -c3-); do \
	  [ -f "$$f" ] || { echo "docs/source-map.md names $$f, which is not in src/"; status=1; }; \
	done; \
	exit $$status

# (a) the implementation included twice in one unit, C99, -Werror
check-twice: | $(HB)
	$(CC) $(QUICK_CFLAGS) tests/header/twice.c -o $(HB)/twice $(LDLIBS)
	$(HB)/twice

# (b) the same unit as C++11; a C++ caller links against the C-built implementation
check-cxx: $(IMPL) | $(HB)
	$(CXX) $(CHECK_CXXFLAGS) tests/header/twice.c -o $(HB)/twice_cxx $(LDLIBS)
	$(HB)/twice_cxx
	$(CXX) $(ALL_CXXFLAGS) -c tests/header/user.c -o $(HB)/user_cxx.o
	$(CXX) $(SAN) $(IMPL) $(HB)/user_cxx.o -o $(HB)/two_units_cxx $(LDLIBS)
	$(HB)/two_units_cxx

# (c) clang, when it is installed (the check is left out of the list otherwise)
check-clang: | $(HB)
	clang $(ALL_CFLAGS) tests/header/twice.c -o $(HB)/twice_clang $(LDLIBS)
	$(HB)/twice_clang
	clang $(QUICK_CFLAGS) tests/header/static.c -o $(HB)/static_clang $(LDLIBS)
	$(HB)/static_clang

# (d) FUSE_STATIC: every function static, most of them unused, still no warning; the C build
# with fuse_dnnl.h along (its functions unused too), C++ without
check-static: | $(HB)
	$(CC) $(QUICK_CFLAGS) -DFUSE_TEST_WITH_DNNL tests/header/static.c -o $(HB)/static $(DNNL_LIBS) $(LDLIBS)
	$(HB)/static
	$(CXX) $(QUICK_CXXFLAGS) tests/header/static.c -o $(HB)/static_cxx $(LDLIBS)
	$(HB)/static_cxx

# (e) one unit with the implementation, one with the declarations only, one program
check-two-units: $(IMPL) | $(HB)
	$(CC) $(ALL_CFLAGS) -c tests/header/user.c -o $(HB)/user.o
	$(CC) $(SAN) $(IMPL) $(HB)/user.o -o $(HB)/two_units $(LDLIBS)
	$(HB)/two_units

# (f) every exported symbol starts with fuse_ (built without sanitizers, whose
# instrumentation adds symbols of its own): fuse.h's implementation ($(IMPL)) and fuse_dnnl.h's
# (its unit built with FUSE_IMPLEMENTATION_DONE, as a program linking $(IMPL) builds it)
check-symbols: $(IMPL) | $(HB)
	$(CC) $(WARN) $(CHECK_OPT) -I. $(CFLAGS) $(LINK_FLAGS) -DFUSE_TEST_WITH_DNNL -c tests/header/impl.c -o $(HB)/impl_dnnl.o
	@syms=$$(nm -g --defined-only $(IMPL) $(HB)/impl_dnnl.o | awk 'NF == 3 {print $$3}'); \
	bad=$$(printf '%s\n' "$$syms" | grep -v '^fuse_' | grep -v '^$$' | sort -u); \
	if [ -n "$$bad" ]; then echo "exported symbols without the fuse_ prefix:"; echo "$$bad"; exit 1; fi; \
	for s in fuse_graph_create fuse_run fuse_dnnl_backend; do \
	  printf '%s\n' "$$syms" | grep -qx "$$s" || { echo "$$s is not defined"; exit 1; }; \
	done

# (g) the quick start in README.md compiles warning-free and runs
check-quickstart: $(IMPL) | $(HB)
	bash tests/header/extract_quickstart.sh README.md $(BUILD)/quickstart.c
	$(CC) $(CHECK_CFLAGS) $(LINK_FLAGS) $(BUILD)/quickstart.c $(IMPL) -o $(BUILD)/quickstart $(LDLIBS)
	$(BUILD)/quickstart

# fuse_dnnl.h: C99 and C++11, oneDNN detected or switched off (C++), included twice; its unit
# compiles its own implementation (FUSE_IMPLEMENTATION_DONE) and links fuse.h's, $(IMPL), built
# as C (FUSE_STATIC with fuse_dnnl.h: check-static)
check-dnnl: $(IMPL) | $(HB)
	$(CC) $(CHECK_CFLAGS) $(LINK_FLAGS) tests/header/dnnl.c $(IMPL) -o $(HB)/dnnl $(DNNL_LIBS) $(LDLIBS)
	$(HB)/dnnl
	$(CXX) $(CHECK_CXXFLAGS) $(LINK_FLAGS) -c tests/header/dnnl.c -o $(HB)/dnnl_cxx.o
	$(CXX) $(SAN) $(HB)/dnnl_cxx.o $(IMPL) -o $(HB)/dnnl_cxx $(DNNL_LIBS) $(LDLIBS)
	$(HB)/dnnl_cxx
	$(CXX) $(CHECK_CXXFLAGS) $(LINK_FLAGS) -DFUSE_DNNL_AVAILABLE=0 -c tests/header/dnnl.c -o $(HB)/dnnl_off_cxx.o
	$(CXX) $(SAN) $(HB)/dnnl_off_cxx.o $(IMPL) -o $(HB)/dnnl_off_cxx $(LDLIBS)
	$(HB)/dnnl_off_cxx

# every example builds warning-free, and the seed examples run: each exits non-zero when its
# fused and unfused results differ (their output is shown only then); the firmware examples'
# host builds run their plan blobs (embedded_plan's, float and int8) and check them against
# their direct loops; fuse_run runs the committed network on two threads of its job pool
# against PyTorch's output, then saves its plan (--save-plan) and runs the .fplan against the
# same output and bit for bit against the plan it came from, and the same for the committed
# QDQ model (tinynet_qdq: integer steps in the blob) on its input, against ONNX Runtime's
# output (.ort.bin), and runs the int8 embedded plan (uint8 in, int8 out: its printed values
# must be int8's); game_loop runs its built-in network and the committed one
# for 30 frames under a 2 ms budget on two threads, each inference (fuse_run_steps, a few
# steps a frame) bit for bit against a plain fuse_run on the same snapshot
check-examples: $(EXAMPLE_PROGRAMS)
	@for e in $(SEED_EXAMPLES); do \
	  out=$$(./$(BUILD)/$$e --short 2>&1) || { printf '%s\n' "$$out"; echo "example $$e failed"; exit 1; }; \
	done
	@./$(BUILD)/embedded || { echo "example embedded failed (exit status $$?)"; exit 1; }
	@./$(BUILD)/embedded_int8 || { echo "example embedded_int8 failed (exit status $$?)"; exit 1; }
	@out=$$(./$(BUILD)/fuse_run tests/data/onnx/tinynet_bn.onnx --threads 2 --runs 2 \
	  --input tests/data/onnx/tinynet.input.bin --expect tests/data/onnx/tinynet.output.bin 2>&1) || \
	  { printf '%s\n' "$$out"; echo "fuse_run --threads 2 failed"; exit 1; }
	@out=$$(./$(BUILD)/fuse_run tests/data/onnx/tinynet_bn.onnx --runs 1 --save-plan $(BUILD)/tinynet.fplan \
	  --output $(BUILD)/tinynet.onnx-out.bin 2>&1 && \
	  ./$(BUILD)/fuse_run $(BUILD)/tinynet.fplan --runs 1 --input tests/data/onnx/tinynet.input.bin \
	  --expect tests/data/onnx/tinynet.output.bin 2>&1 && \
	  ./$(BUILD)/fuse_run $(BUILD)/tinynet.fplan --runs 1 --output $(BUILD)/tinynet.fplan-out.bin 2>&1 && \
	  cmp $(BUILD)/tinynet.onnx-out.bin $(BUILD)/tinynet.fplan-out.bin 2>&1) || \
	  { printf '%s\n' "$$out"; echo "fuse_run --save-plan, then the .fplan: failed or not bit for bit"; exit 1; }
	@out=$$(./$(BUILD)/fuse_run tests/data/onnx/tinynet_qdq.onnx --runs 1 --save-plan $(BUILD)/tinynet_qdq.fplan \
	  --input tests/data/onnx/tinynet_qdq.input.bin --output $(BUILD)/tinynet_qdq.onnx-out.bin 2>&1 && \
	  ./$(BUILD)/fuse_run $(BUILD)/tinynet_qdq.fplan --runs 1 --input tests/data/onnx/tinynet_qdq.input.bin \
	  --expect tests/data/onnx/tinynet_qdq.ort.bin --output $(BUILD)/tinynet_qdq.fplan-out.bin 2>&1 && \
	  cmp $(BUILD)/tinynet_qdq.onnx-out.bin $(BUILD)/tinynet_qdq.fplan-out.bin 2>&1) || \
	  { printf '%s\n' "$$out"; echo "fuse_run --save-plan of the QDQ model, then the .fplan: failed, off ONNX Runtime's output or not bit for bit"; exit 1; }
	@out=$$(./$(BUILD)/fuse_run $(EMB)/int8.fplan --runs 1 2>&1) && \
	  printf '%s\n' "$$out" | awk '/^    min / { seen = 1; if ($$2 != int($$2) || $$4 != int($$4) || \
	    $$2 < -128 || $$4 > 127) bad = 1 } END { exit !(seen && !bad) }' || \
	  { printf '%s\n' "$$out"; echo "fuse_run on the int8 plan (uint8 in, int8 out): its output is not int8 values"; exit 1; }
	@for model in "" tests/data/onnx/tinynet_bn.onnx; do \
	  out=$$(./$(BUILD)/game_loop $$model --short --threads 2 --frames 30 2>&1) || \
	  { printf '%s\n' "$$out"; echo "game_loop $$model failed (or an inference across frames is not fuse_run's)"; exit 1; }; \
	done

# (h) FUSE_RUNTIME_ONLY: a unit with only loading, running and the kernels (no graph, passes,
# compiler or ONNX) builds warning-free and runs a blob as the full build does, bit for bit:
# fuse_run saves the committed network's plan (and the same network unfused), runs the blob
# for the output to compare with, and writes the header of what the plan does not use
# (--emit-config). The C build (gcc at -O1, for the flow warnings) includes that header, runs
# the blob and must refuse the unfused one, naming a FUSE_NO_ define; C++ builds with nothing
# left out; clang (when installed) with the header, FUSE_STATIC and FUSE_NO_MESSAGES (refusal
# without its text). Under the sanitizers the C build only.
RO := $(HB)/runtime_only
RO_RUN = $(RO)/tiny.fplan tests/data/onnx/tinynet.input.bin $(RO)/tiny.out.bin $(RO)/unfused.fplan
check-runtime-only: $(BUILD)/fuse_run | $(HB)
	@mkdir -p $(RO)
	@./$(BUILD)/fuse_run tests/data/onnx/tinynet_bn.onnx --runs 1 --save-plan $(RO)/tiny.fplan >/dev/null
	@./$(BUILD)/fuse_run tests/data/onnx/tinynet_bn.onnx --runs 1 --no-optimize \
	  --save-plan $(RO)/unfused.fplan >/dev/null
	@./$(BUILD)/fuse_run $(RO)/tiny.fplan --runs 1 --input tests/data/onnx/tinynet.input.bin \
	  --output $(RO)/tiny.out.bin >/dev/null
	./$(BUILD)/fuse_run --emit-config $(RO)/tiny.fplan > $(RO)/tiny_config.h
	$(CC) $(CHECK_CFLAGS) -I$(RO) '-DRUNTIME_ONLY_CONFIG="tiny_config.h"' \
	  tests/header/runtime_only.c -o $(RO)/c $(LDLIBS)
	$(RO)/c $(RO_RUN)
ifneq ($(SANITIZE),1)
	$(CXX) $(QUICK_CXXFLAGS) tests/header/runtime_only.c -o $(RO)/cxx $(LDLIBS)
	$(RO)/cxx $(RO_RUN)
	@if command -v clang >/dev/null; then \
	  echo "clang $(QUICK_CFLAGS) -DFUSE_STATIC -DFUSE_NO_MESSAGES ... runtime_only.c"; \
	  clang $(QUICK_CFLAGS) -I$(RO) '-DRUNTIME_ONLY_CONFIG="tiny_config.h"' -DFUSE_STATIC \
	    -DFUSE_NO_MESSAGES tests/header/runtime_only.c -o $(RO)/clang $(LDLIBS) && \
	  $(RO)/clang $(RO_RUN); fi
endif

# ------------------------------------------------------------- demo, examples --

demo: $(BUILD)/demo $(addprefix $(BUILD)/,$(SEED_EXAMPLES)) $(BUILD)/fuse_run
	./$(BUILD)/demo
	@for e in $(SEED_EXAMPLES); do \
	  echo; echo "== $$e (./$(BUILD)/$$e for the full listings)"; \
	  ./$(BUILD)/$$e --short || exit 1; \
	done
	@echo; echo "== fuse_run: the committed ONNX network, checked against PyTorch's output"
	./$(BUILD)/fuse_run tests/data/onnx/tinynet_bn.onnx --input tests/data/onnx/tinynet.input.bin --expect tests/data/onnx/tinynet.output.bin --runs 5
	@echo; echo "== a frame loop: make build/game_loop && ./build/game_loop (check-examples runs it)"

examples: $(EXAMPLE_PROGRAMS)

# the examples link $(IMPL) as the tests do (see above); the firmware examples, embedded.c and
# embedded_int8.c, configure the library their own way (runtime-only, no malloc, no stdio) and
# build it into their own unit, each with the plan blob that embedded_plan makes as a C array
# and the header of what it leaves out (fuse_run --emit-c, --emit-config), in $(EMB)
FIRMWARE_EXAMPLES := $(BUILD)/embedded $(BUILD)/embedded_int8
LINKED_EXAMPLES := $(filter-out $(FIRMWARE_EXAMPLES),$(EXAMPLE_PROGRAMS))
EMB := $(BUILD)/embedded-plan
$(LINKED_EXAMPLES): $(BUILD)/%: examples/%.c fuse.h $(IMPL) | $(BUILD)
	@rm -f $@
	$(CC) $(ALL_CFLAGS) $(LINK_FLAGS) $< $(IMPL) -o $@ $(LDLIBS)

$(BUILD)/fuse_run $(BUILD)/game_loop: examples/job_pool.h # their job pool for --threads

$(BUILD)/embedded_plan: examples/embedded_model.h examples/embedded_int8_model.h

$(EMB):
	@mkdir -p $@
$(EMB)/plan.fplan: $(BUILD)/embedded_plan | $(EMB)
	./$(BUILD)/embedded_plan $@ >/dev/null
$(EMB)/int8.fplan: $(BUILD)/embedded_plan | $(EMB)
	./$(BUILD)/embedded_plan --int8 $@ >/dev/null
$(EMB)/embedded_blob.h: $(EMB)/plan.fplan $(BUILD)/fuse_run
	./$(BUILD)/fuse_run $< --emit-c embedded_blob > $@.tmp && mv $@.tmp $@
$(EMB)/embedded_config.h: $(EMB)/plan.fplan $(BUILD)/fuse_run
	./$(BUILD)/fuse_run --emit-config $< > $@.tmp && mv $@.tmp $@
$(EMB)/embedded_int8_blob.h: $(EMB)/int8.fplan $(BUILD)/fuse_run
	./$(BUILD)/fuse_run $< --emit-c embedded_int8_blob > $@.tmp && mv $@.tmp $@
$(EMB)/embedded_int8_config.h: $(EMB)/int8.fplan $(BUILD)/fuse_run
	./$(BUILD)/fuse_run --emit-config $< > $@.tmp && mv $@.tmp $@

$(BUILD)/embedded: examples/embedded_model.h $(EMB)/embedded_blob.h $(EMB)/embedded_config.h
$(BUILD)/embedded_int8: examples/embedded_int8_model.h $(EMB)/embedded_int8_blob.h \
    $(EMB)/embedded_int8_config.h
$(FIRMWARE_EXAMPLES): $(BUILD)/%: examples/%.c examples/embedded_arena.h fuse.h | $(BUILD)
	@rm -f $@
	$(CC) $(QUICK_CFLAGS) -I$(EMB) $< -o $@ $(LDLIBS)

# ----------------------------------------------------------------- bench, fuzz --
# make bench: the pattern-pass timings on a 10,000-op graph, then bench/layers: the conv layer
# suite (fuse.h fused / unfused / per isa against oneDNN and the measured FMA peak), which
# writes bench/results/layers.{md,csv,png}. oneDNN is used when its header is found (then
# -ldnnl); otherwise its column says n/a. BENCH_ARGS go to bench/layers, e.g.
#   make bench BENCH_ARGS="--threads 2"   or   BENCH_ARGS="--isa avx2" (oneDNN limited to AVX2)
BENCH_DNNL := $(DNNL_FOUND)
ifeq ($(BENCH_DNNL),1)
BENCH_DNNL_LIBS := -ldnnl -ldl
endif
BENCH_ARGS ?=

bench: $(BUILD)/fuse_ops_bench $(BUILD)/layers
	./$(BUILD)/fuse_ops_bench
	@mkdir -p bench/results
	@echo; echo "== bench/layers (load: $$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null))"
	./$(BUILD)/layers $(BENCH_ARGS)

$(BUILD)/fuse_ops_bench: bench/fuse_ops_bench.c fuse.h | $(BUILD)
	$(CC) $(WARN) -O2 -I. $< -o $@ $(LDLIBS)

# make bench-load: bench/load - load + optimize + compile against reading the file, in fresh
# processes, alternating (BENCH_LOAD_MODELS; default resnet18, resnet50 and vgg16 as
# tools/export_zoo.py writes them into build/zoo; REPEAT=n runs of each, default 5)
BENCH_LOAD_MODELS ?= $(wildcard build/zoo/resnet18.op13.onnx build/zoo/resnet50.op13.onnx build/zoo/vgg16.op13.onnx)
.PHONY: bench-load
bench-load: $(BUILD)/bench_load
	@if [ -z "$(BENCH_LOAD_MODELS)" ]; then echo "bench-load: no models; export them with"; \
	  echo "  /usr/bin/python3 tools/export_zoo.py --only resnet18,resnet50,vgg16 --opset 13"; exit 1; fi
	@echo "== bench/load (load: $$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null))"
	./$(BUILD)/bench_load $(BENCH_LOAD_MODELS)

$(BUILD)/bench_load: bench/load.c fuse.h | $(BUILD)
	$(CC) $(WARN) -O2 -I. $< -o $@ $(LDLIBS)

$(BUILD)/layers: bench/layers.c bench/peak.h bench/pool.h examples/job_pool.h fuse.h fuse_dnnl.h | $(BUILD)
	@rm -f $@
	$(CC) $(WARN) -O2 -I. -DBENCH_DNNL=$(BENCH_DNNL) $< -o $@ $(BENCH_DNNL_LIBS) $(LDLIBS)

# make bench-nets: bench/nets - resnet18, resnet50, mobilenet_v2 (build/models, exported by
# tools/export_torchvision.py) through fuse_run with 1 and 2 threads against ONNX Runtime
# (bench/nets_ort.js with node and onnxruntime-node: make bench-ort-setup, or --ort DIR) and
# PyTorch (bench/nets_torch.py with /usr/bin/python3, when torch is installed), and routed to
# oneDNN by fuse_dnnl.h when its header is found (then -ldnnl); writes
# bench/results/nets.{md,csv}. BENCH_NETS_ARGS go to bench/nets, e.g. "--runs 5 resnet18" or
# "--dir build/zoo --python none resnet18.op13 convnext_base.op13" (names are file stems).
# make bench-ort-setup: onnxruntime-node $(ORT_VERSION) (its libonnxruntime.so comes in the
# package; --ignore-scripts: no install script runs) into build/ort, where nets_ort.js looks.
# Never part of make test.
.PHONY: bench-nets bench-ort-setup
BENCH_NETS_ARGS ?=
ORT_VERSION ?= 1.30.0
bench-nets: $(BUILD)/nets
	@mkdir -p bench/results
	@case " $(BENCH_NETS_ARGS) " in *" --dir "*) ;; *) \
	  if [ ! -f build/models/resnet18.onnx ]; then \
	  echo "bench-nets: no models in build/models; export them first with"; \
	  echo "  /usr/bin/python3 tools/export_torchvision.py"; exit 1; fi;; esac
	@echo "== bench/nets (load: $$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null))"
	./$(BUILD)/nets $(BENCH_NETS_ARGS)

bench-ort-setup:
	@mkdir -p build/ort
	npm install --prefix build/ort --ignore-scripts --no-audit --no-fund onnxruntime-node@$(ORT_VERSION)
	node -e "console.log('onnxruntime-node', require('./build/ort/node_modules/onnxruntime-node').env.versions.node)"

$(BUILD)/nets: bench/nets.c bench/pool.h examples/job_pool.h fuse.h fuse_dnnl.h | $(BUILD)
	@rm -f $@
	$(CC) $(WARN) -O2 -I. -DBENCH_DNNL=$(BENCH_DNNL) $< -o $@ $(BENCH_DNNL_LIBS) $(LDLIBS)

# make fuzz: each libFuzzer target in fuzz/ for FUZZ_SECONDS (clang), from its seed corpus
# (fuzz/corpus/<name>, plus every input once found, tests/data/fuzz-regress/<name>; the text
# target also starts from the graphs of tests/data/*.golden, the ONNX target from the ONNX test
# suite's models, tests/data/onnx and tests/data/onnx_quant). UBSan reports stop the run like
# crashes. A finding prints the log's end and fails; the input is kept as
# $(BUILD)/fuzz-crashes/<name>-crash-*
# (copy it to tests/data/fuzz-regress/<name>/, see fuzz/README.md).
#   make fuzz FUZZ_SECONDS=600            make fuzz FUZZ_TARGETS=builder
# FUZZ_SEED=N fixes libFuzzer's seed (CI does: a run there replays the mutations a developer
# can replay here with the same seed; new ground is for long runs with random seeds).
# FUZZ_JOBS targets run at once (default: the CPUs; fuzz/run.sh).
FUZZ_SECONDS ?= 60
FUZZ_SEED ?=
FUZZ_TARGETS ?= $(patsubst fuzz/fuzz_%.c,%,$(wildcard fuzz/fuzz_*.c))
ONNX_DATA ?= /usr/share/libonnx-testdata/data
FUZZ_FLAGS := -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all

fuzz: $(addprefix $(BUILD)/fuzz-,$(FUZZ_TARGETS))
	@bash fuzz/run.sh $(BUILD) $(FUZZ_SECONDS) "$(FUZZ_SEED)" $(ONNX_DATA) $(FUZZ_TARGETS)

# one program holds every target (fuzz/all_targets.c: the implementation built once, not five
# times); build/fuzz-<target> is a link to it, and its name picks the target
$(BUILD)/fuzz-all: fuzz/all_targets.c $(wildcard fuzz/fuzz_*.c) fuzz/fuzz_common.h fuse.h | $(BUILD)
	clang $(FUZZ_FLAGS) -I. $< -o $@ -lm

$(addprefix $(BUILD)/fuzz-,$(FUZZ_TARGETS)): $(BUILD)/fuzz-%: $(BUILD)/fuzz-all
	ln -f $< $@

# -------------------------------------------------------------------- vmath --
# make test-vmath: tests/test_vmath.c --exhaustive - exp, expm1, log, log1p, tanh, sigmoid and
# erf of src/kernels/vmath.inc on every one of the 2^32 floats, on each instruction set compiled
# in and supported by this CPU, against libm in double: the ulp bounds of README.md ("Math
# functions") and the special values. VMATH_THREADS threads (default 2). `make test` runs the
# quick part of the same program (edge cases and a few million random inputs) from its -O0
# build; the exhaustive run (and `--bench`) takes an -O2 build of its own, the code users get.
.PHONY: test-vmath
VMATH_THREADS ?= 2
$(BUILD)/test_vmath_O2: tests/test_vmath.c fuse.h | $(BUILD)
	@rm -f $@
	$(CC) $(ALL_CFLAGS) $< -o $@ $(LDLIBS)
test-vmath: $(BUILD)/test_vmath_O2
	@./$(BUILD)/test_vmath_O2 --exhaustive --threads $(VMATH_THREADS) | tee $(BUILD)/test_vmath.log; \
	rc=$${PIPESTATUS[0]}; \
	last=$$(tail -n 1 $(BUILD)/test_vmath.log); \
	p=$$(printf '%s\n' "$$last" | sed -n 's/^vmath: \([0-9]*\) passed, \([0-9]*\) failed$$/\1/p'); \
	f=$$(printf '%s\n' "$$last" | sed -n 's/^vmath: \([0-9]*\) passed, \([0-9]*\) failed$$/\2/p'); \
	if [ -z "$$p" ]; then p=0; f=1; fi; \
	if [ $$rc -ne 0 ] && [ $$f -eq 0 ]; then f=1; fi; \
	echo "total: $$p passed, $$f failed"; \
	test $$f -eq 0

# ------------------------------------------------------------ tsan, matrix --
# make test-tsan: the tests that run one plan from several threads - test_threads (4 callers x
# 50 runs, nested job-system threads, concurrent loads and compiles), test_kernels (each
# kernel's chunks on host threads) -
# built with ThreadSanitizer into build-tsan/ and run by tests/run.sh; a data race stops the
# program (halt_on_error), which counts as a failure. Last line: "total: N passed, N failed".
.PHONY: test-tsan test-matrix
TSAN_TESTS := threads kernels
TSAN_PROGRAMS := $(addprefix build-tsan/test_,$(TSAN_TESTS))

build-tsan:
	@mkdir -p $@

TSAN_FLAGS = $(WARN) -O2 -g -fsanitize=thread -I. $(CFLAGS)
build-tsan/fuse.o: tests/header/impl.c fuse.h | build-tsan
	$(CC) $(TSAN_FLAGS) -c $< -o $@

# (test_threads links the implementation object, as in `make test`; the others build their own)
build-tsan/test_threads: tests/test_threads.c build-tsan/fuse.o tests/runner.h tests/host_threads.h | build-tsan
	@rm -f $@
	$(CC) $(TSAN_FLAGS) $(LINK_FLAGS) $< build-tsan/fuse.o -o $@ $(LDLIBS)

build-tsan/test_%: tests/test_%.c fuse.h tests/runner.h tests/host_threads.h | build-tsan
	@rm -f $@
	$(CC) $(TSAN_FLAGS) $< -o $@ $(LDLIBS)

# (setarch -R: without address-space randomization, as some kernels' ASLR range is more than
# this TSan's shadow-memory layout allows)
test-tsan:
	@$(MAKE) --no-print-directory -k $(TSAN_PROGRAMS) || true
	@norand=; if setarch $$(uname -m) -R true 2>/dev/null; then norand="setarch $$(uname -m) -R"; fi; \
	TSAN_OPTIONS="halt_on_error=1 $${TSAN_OPTIONS:-}" $$norand bash tests/run.sh $(TSAN_PROGRAMS)

# make test-matrix: tests/matrix.sh - gcc and clang; C99, C11, C++11, C++17; FUSE_STATIC,
# FUSE_NO_SIMD, FUSE_NO_AVX512, FUSE_NO_AVX2, FUSE_NO_STDIO, FUSE_NO_ONNX, -fopenmp, two
# translation units; each -Werror, each running test_golden and, where they apply,
# test_networks, test_badinput and test_threads (build-matrix/). MATRIX_JOBS=2 builds two
# configurations at once; MATRIX=name... runs only those (tests/matrix.sh --list).
MATRIX ?=
MATRIX_JOBS ?= 1
test-matrix:
	@MATRIX_JOBS=$(MATRIX_JOBS) bash tests/matrix.sh $(MATRIX)

clean:
	rm -rf build build-san build-tsan build-matrix build-cmake

# ------------------------------------------------------------------------ tools --
# fuse_run, the command-line runner for ONNX models: make tools -> $(BUILD)/fuse_run
.PHONY: tools
tools: $(BUILD)/fuse_run

# make pictures: README's pictures (docs/*.png) from fuse_run --dot, drawn by Graphviz's dot
# (tools/make_pictures.sh; the mobilenet_v3_small block needs build/zoo's export or torchvision)
.PHONY: pictures
pictures: $(BUILD)/fuse_run
	@BUILD=$(BUILD) sh tools/make_pictures.sh

# (--backend dnnl needs oneDNN: then it links $(DNNL_LIBS))
ifeq ($(filter $(BUILD)/fuse_run,$(EXAMPLE_PROGRAMS)),)
$(BUILD)/fuse_run: examples/fuse_run.c fuse.h fuse_dnnl.h $(IMPL) | $(BUILD)
	@rm -f $@
	$(CC) $(ALL_CFLAGS) $(LINK_FLAGS) $< $(IMPL) -o $@ $(DNNL_LIBS) -lm -lpthread
else
$(BUILD)/fuse_run: fuse_dnnl.h # built by the examples rule above
$(BUILD)/fuse_run: LDLIBS += $(DNNL_LIBS)
endif

# ------------------------------------------------------------------ cross tests --
# make test-cross: every tests/test_*.c built for each of CROSS_ARCHES with its Debian cross
# compiler (static, so qemu-user needs no sysroot) into build-cross/<arch>/, run by
# tests/run.sh under qemu-user from the repository root (tests/data and
# /usr/share/libonnx-testdata are read from the host). Prints each arch's total and times,
# then "total: N passed, N failed" over all of them.
#   Debian: gcc-aarch64-linux-gnu gcc-arm-linux-gnueabihf gcc-i686-linux-gnu qemu-user
#   (gcc-i686-linux-gnu, not gcc-multilib, which conflicts with the cross compilers)
#   make test-cross CROSS_ARCHES=aarch64    one arch
#   make test-cross CROSS_ARCHES=s390x      big-endian (gcc-s390x-linux-gnu); ppc: 32-bit BE
# test_networks runs the committed networks only: the torchvision models in build/models take
# minutes per run under emulation (CROSS_MODELS=build/models to include them).
# The output of each arch's run is also kept in build-cross/<arch>/run.log.
# Each build-cross/<arch>/test_x is a script, written by test-cross, that runs test_x.elf
# under qemu; a program that did not build has no script (run.sh: "did not build").
.PHONY: test-cross
CROSS_ARCHES ?= aarch64 armhf i386
CROSS_OPT ?= -O2
# 32-bit readdir under qemu-user fails with EOVERFLOW (the host's 64-bit directory offsets):
# the test programs that list tests/data need the 64-bit file interface there
CROSS_DEFS := -D_FILE_OFFSET_BITS=64
CROSS_MODELS ?= build-cross/no-models
CROSS_CC_aarch64 ?= aarch64-linux-gnu-gcc
CROSS_CC_armhf ?= arm-linux-gnueabihf-gcc
CROSS_CC_i386 ?= i686-linux-gnu-gcc
CROSS_CC_s390x ?= s390x-linux-gnu-gcc
CROSS_CC_ppc ?= powerpc-linux-gnu-gcc
# per-arch flags: armhf with NEON and fused multiply-add, so that its NEON kernels are built
# (Debian's armhf default is VFPv3-D16 without NEON, where only the scalar kernels exist)
CROSS_ARCH_CFLAGS_armhf ?= -mfpu=neon-vfpv4 -mfloat-abi=hard
CROSS_QEMU_aarch64 ?= qemu-aarch64
CROSS_QEMU_armhf ?= qemu-arm
CROSS_QEMU_i386 ?= qemu-i386
CROSS_QEMU_s390x ?= qemu-s390x
CROSS_QEMU_ppc ?= qemu-ppc
# test_dnnl is left out: oneDNN is an x86 library here (the cross build would compile the
# whole implementation to skip it). CROSS_SKIP_<arch> leaves more out for one arch (CI: the
# self-contained programs on armhf, each a build of the whole implementation; test_golden and
# the networks run its NEON kernels there).
CROSS_TEST_NAMES := $(filter-out test_dnnl,$(patsubst tests/%.c,%,$(TEST_SOURCES)))
cross_names = $(filter-out $(CROSS_SKIP_$(1)),$(CROSS_TEST_NAMES))
CROSS_ARGS_test_networks = tests/data/onnx $(CROSS_MODELS)
CROSS_ARGS_test_zoo = tests/data/zoo $(CROSS_MODELS)
cross_rparen := )
cross_qemu_cases = $(foreach a,$(CROSS_ARCHES),$(a)$(cross_rparen) qemu='$(CROSS_QEMU_$(a))';;)
cross_cc_cases = $(foreach a,$(CROSS_ARCHES),$(a)$(cross_rparen) cc='$(CROSS_CC_$(a))';;)
cross_args_cases = $(foreach t,$(CROSS_TEST_NAMES),$(t)$(cross_rparen) args='$(CROSS_ARGS_$(t))';;)
cross_skip_cases = $(foreach a,$(CROSS_ARCHES),$(a)$(cross_rparen) skip='$(CROSS_SKIP_$(a))';;)

define FUSE_CROSS_ARCH
build-cross/$(1):
	@mkdir -p $$@

build-cross/$(1)/fuse.o: tests/header/impl.c fuse.h | build-cross/$(1)
	$$(call impl_object,$$(CROSS_CC_$(1)) $$(WARN) $$(CROSS_OPT) $$(CROSS_DEFS) -I. $$(CROSS_ARCH_CFLAGS_$(1)) $$(CROSS_CFLAGS),$$(patsubst %gcc,%objcopy,$$(CROSS_CC_$(1))))

# the same split as `make test`: public-API tests link the arch's implementation object
$(addprefix build-cross/$(1)/,$(addsuffix .elf,$(filter-out $(SELF_CONTAINED_TESTS:$(BUILD)/%=%),$(CROSS_TEST_NAMES)))): build-cross/$(1)/%.elf: tests/%.c build-cross/$(1)/fuse.o tests/runner.h tests/host_threads.h
	@rm -f $$@
	$$(CROSS_CC_$(1)) $$(WARN) $$(CROSS_OPT) $$(CROSS_DEFS) -I. $$(CROSS_ARCH_CFLAGS_$(1)) $$(CROSS_CFLAGS) $$(LINK_FLAGS) -static $$< build-cross/$(1)/fuse.o -o $$@ $$(LDLIBS)

build-cross/$(1)/test_%.elf: tests/test_%.c fuse.h tests/runner.h tests/host_threads.h | build-cross/$(1)
	@rm -f $$@
	$$(CROSS_CC_$(1)) $$(WARN) $$(CROSS_OPT) $$(CROSS_DEFS) -I. $$(CROSS_ARCH_CFLAGS_$(1)) $$(CROSS_CFLAGS) -static $$< -o $$@ $$(LDLIBS)

.PHONY: test-cross-programs-$(1)
test-cross-programs-$(1): $(addprefix build-cross/$(1)/,$(addsuffix .elf,$(call cross_names,$(1))))
endef
$(foreach a,$(CROSS_ARCHES),$(eval $(call FUSE_CROSS_ARCH,$(a))))

test-cross:
	@sum_p=0; sum_f=0; summary=""; \
	for a in $(CROSS_ARCHES); do \
	  echo "== test-cross: $$a"; start=$$(date +%s); \
	  qemu=; cc=; case $$a in $(cross_qemu_cases) esac; case $$a in $(cross_cc_cases) esac; \
	  if ! command -v "$$cc" >/dev/null || ! command -v "$$qemu" >/dev/null; then \
	    echo "test-cross: $$a needs '$$cc' and '$$qemu' (see the Makefile's comment)"; \
	    sum_f=$$((sum_f + 1)); summary="$$summary$$a: not run, no toolchain\n"; continue; fi; \
	  $(MAKE) --no-print-directory -k CROSS_ARCHES="$(CROSS_ARCHES)" test-cross-programs-$$a || true; \
	  built=$$(date +%s); progs=""; \
	  skip=; case $$a in $(cross_skip_cases) esac; \
	  for t in $(CROSS_TEST_NAMES); do \
	    case " $$skip " in *" $$t "*) continue ;; esac; \
	    rm -f build-cross/$$a/$$t; progs="$$progs build-cross/$$a/$$t"; \
	    args=; case $$t in $(cross_args_cases) esac; \
	    if [ -f build-cross/$$a/$$t.elf ]; then \
	      printf '#!/bin/sh\nexec %s "$$0.elf" %s "$$@"\n' "$$qemu" "$$args" > build-cross/$$a/$$t; \
	      chmod +x build-cross/$$a/$$t; fi; \
	  done; \
	  bash tests/run.sh $$progs | tee build-cross/$$a/run.log; \
	  last=$$(tail -n 1 build-cross/$$a/run.log); \
	  end=$$(date +%s); \
	  p=$$(printf '%s\n' "$$last" | sed -n 's/^total: \([0-9]*\) passed, \([0-9]*\) failed$$/\1/p'); \
	  f=$$(printf '%s\n' "$$last" | sed -n 's/^total: \([0-9]*\) passed, \([0-9]*\) failed$$/\2/p'); \
	  if [ -z "$$p" ]; then p=0; f=1; fi; \
	  sum_p=$$((sum_p + p)); sum_f=$$((sum_f + f)); \
	  summary="$$summary$$a: $$p passed, $$f failed (build $$((built - start)) s, run $$((end - built)) s)\n"; \
	done; \
	printf "$$summary"; \
	echo "total: $$sum_p passed, $$sum_f failed"; \
	test $$sum_f -eq 0

# make neon-mca: the NEON GEMM micro-kernels' inner loops through llvm-mca for Cortex-A76,
# Neoverse-N1 and Apple M1 (and the AVX-512 tiles for comparison): FMAs per cycle against each
# core's peak, instructions per FMA, as README's table (tools/neon_mca.py; needs clang and
# llvm-mca, Debian: clang llvm-19). Estimates from LLVM's scheduling models, not measurements.
.PHONY: neon-mca
neon-mca:
	@python3 tools/neon_mca.py --markdown

# -------------------------------------------------------------------- Cortex-M7 --
# make test-m7: the two firmware examples, each running a plan blob linked in as a const array
# (FUSE_RUNTIME_ONLY, FUSE_NO_MESSAGES, a static arena: no malloc, no stdio; the result checked
# against a direct loop), for a bare-metal Cortex-M7 with Debian's gcc-arm-none-eabi and
# libnewlib-arm-none-eabi, into build-cross/m7/:
#   examples/embedded.c       a float plan: conv -> bias -> relu6, one fused step
#   examples/embedded_int8.c  an int8 plan: a uint8 image through qconv2d (relu6), qconv2d and
#                             qadd (relu) to int8, fuse_run_typed; exactly the direct loop's
#                             integers (checks named "int8 ...")
# The host makes each plan first (embedded_plan [--int8]: compiled for FUSE_ISA_SCALAR, saved)
# and with fuse_run its C array (--emit-c) and the header of what the firmware leaves out
# (--emit-config), in $(EMB). Per firmware six checks:
#   config   that header keeps the steps the plan runs and leaves the others out: the float
#            plan's keeps conv2d and leaves out the integer steps (FUSE_NO_RUN_QINT), the int8
#            plan's keeps them and leaves out the float conv2d, quantize / dequantize steps
#   build    the example compiles warning-free (-Werror) with M7_FLAGS and that header
#   link     its ELF links against newlib-nano with no system calls (nosys.specs); its size
#            (arm-none-eabi-size) and link map (build-cross/m7/NAME.map) are printed / kept
#   size     its text without the blob (the array NAME_blob) is at most M7_TEXT_MAX bytes
#            (16 KiB) for the float firmware, M7_INT8_TEXT_MAX (21 KiB) for the int8 one
#   symbols  what its object calls from outside (arm-none-eabi-nm -u) is in M7_LIBC, the list
#            in README.md (Supported targets), or libgcc's __aeabi_* helpers
#   run      when qemu-arm is installed: the same object linked with tests/embedded/qemu_start.c
#            runs under qemu-user and exits 0 (else "not run")
# and two for the whole library with FUSE_NO_STDIO only (ONNX reader included): it compiles
# ("library"), and what it calls is in that list too ("library symbols"). Then "total: N
# passed, N failed".
# make m7-size M7_PLAN=plan.fplan: the same firmware's text for any plan blob
# (tests/embedded/plan_size.c: loads it, runs it on zeros), without the blob, and under qemu-arm
# whether it runs; M7_ARENA bytes of arena (default 64 MB, for the workspace of a network).
.PHONY: test-m7 m7-size
M7_CC ?= arm-none-eabi-gcc
M7_FLAGS := -mcpu=cortex-m7 -mfpu=fpv5-d16 -mfloat-abi=hard -mthumb -Os -ffunction-sections \
  -fdata-sections
M7_LDFLAGS := -Wl,--gc-sections --specs=nano.specs --specs=nosys.specs
M7_SIZE ?= arm-none-eabi-size
M7_NM ?= arm-none-eabi-nm
M7_QEMU ?= qemu-arm
M7_TEXT_MAX ?= 16384
# libc / libm functions fuse.h may call with FUSE_NO_STDIO (malloc / free unless FUSE_MALLOC /
# FUSE_FREE are defined, __assert_func (assert) unless FUSE_ASSERT is)
M7_LIBC := memcpy memset memcmp memchr strlen strcmp strncmp strchr strcpy \
  expf sqrt log10 floor fabs fabsf malloc free __assert_func \
  sqrtf logf powf tanhf erff erfcf expm1f log1pf exp log fmod
M7 := build-cross/m7
# The int8 firmware's text budget. Measured: 20,576 bytes without the blob (2026-11-29), over
# the float one's 16 KiB: the packed integer conv driver (its input rows from NCHW or NHWC,
# its tiles and NCHW output as work units the plan's threads share) and the scalar tile,
# qadd's rows and table, the requantization, and the loader's checks of integer steps
# (1.1 KB); the integer kernels this plan does not run are families --emit-config leaves out
# (FUSE_NO_KERNEL_QDIRECT, ...). README.md, Bare metal.
M7_INT8_TEXT_MAX ?= 21504
# the firmware examples; per example: the FUSE_NO_RUN_ kinds its config header must keep
# (not define) and must leave out (define), its text budget
M7_FIRMWARE := embedded embedded_int8
M7_KEEP_embedded := CONV2D
M7_LEAVE_embedded := QINT
M7_MAX_embedded = $(M7_TEXT_MAX)
M7_KEEP_embedded_int8 := QINT
M7_LEAVE_embedded_int8 := CONV2D QUANT
M7_MAX_embedded_int8 = $(M7_INT8_TEXT_MAX)
m7_cases = $(foreach e,$(M7_FIRMWARE),$(e)$(cross_rparen) keep='$(M7_KEEP_$(e))'; \
  leave='$(M7_LEAVE_$(e))'; max='$(M7_MAX_$(e))';;)
# the text of an ELF without its blob: m7_text ELF SYMBOL -> "text blob"
m7_text = $(M7_SIZE) $(1) | awk 'NR == 2 {print $$1}'; \
  printf '%d\n' 0x$$($(M7_NM) -S $(1) | awk -v blob="$(2)" '$$4 == blob {print $$2}')
# the symbols objects call that are not in M7_LIBC nor libgcc's __aeabi_*
m7_extra = $(M7_NM) -u $(1) | awk '{print $$2}' | sort -u | grep -v '^__aeabi_' | \
  grep -vxF -e "$$(printf '%s\n' $(M7_LIBC))"

test-m7: $(foreach e,$(M7_FIRMWARE),$(EMB)/$(e)_blob.h $(EMB)/$(e)_config.h)
	@mkdir -p $(M7); p=0; f=0; \
	ok() { echo "ok   m7 $$1"; p=$$((p + 1)); }; \
	bad() { echo "FAIL m7 $$1"; f=$$((f + 1)); }; \
	if ! command -v $(M7_CC) >/dev/null; then \
	  echo "test-m7: needs $(M7_CC) (Debian: gcc-arm-none-eabi libnewlib-arm-none-eabi)"; \
	  echo "total: 0 passed, 1 failed"; exit 1; fi; \
	for e in $(M7_FIRMWARE); do \
	  t=$${e#embedded}; t=$${t#_}; t=$${t:+$$t }; \
	  case $$e in $(m7_cases) esac; \
	  echo "== $$e.c"; \
	  rm -f $(M7)/$$e.o $(M7)/$$e.elf $(M7)/$$e-qemu.elf; \
	  wrong=; for k in $$keep; do \
	    grep -qx "#define FUSE_NO_RUN_$$k" $(EMB)/$${e}_config.h && wrong="$$wrong FUSE_NO_RUN_$$k"; done; \
	  for k in $$leave; do \
	    grep -qx "#define FUSE_NO_RUN_$$k" $(EMB)/$${e}_config.h || wrong="$$wrong (no FUSE_NO_RUN_$$k)"; done; \
	  msg="$${t}config (keeps$$(printf ' %s' $$keep), leaves out$$(printf ' %s' $$leave))"; \
	  if [ -z "$$wrong" ]; then ok "$$msg"; else bad "$$msg:$$wrong"; fi; \
	  if $(M7_CC) $(WARN) $(M7_FLAGS) -I. -I$(EMB) -c examples/$$e.c -o $(M7)/$$e.o; \
	  then ok "$${t}build"; else bad "$${t}build"; fi; \
	  if [ -f $(M7)/$$e.o ] && $(M7_CC) $(M7_FLAGS) $(M7_LDFLAGS) \
	      -Wl,-Map=$(M7)/$$e.map $(M7)/$$e.o -o $(M7)/$$e.elf -lm; then \
	    ok "$${t}link"; $(M7_SIZE) $(M7)/$$e.elf; else bad "$${t}link"; fi; \
	  if [ -f $(M7)/$$e.elf ]; then \
	    set -- $$($(call m7_text,$(M7)/$$e.elf,$${e}_blob)); \
	    msg="$${t}size (text $$1 bytes; without the $$2-byte blob $$(($$1 - $$2)), at most $$max)"; \
	    if [ $$(($$1 - $$2)) -le $$max ]; then ok "$$msg"; else bad "$$msg"; fi; \
	  else bad "$${t}size"; fi; \
	  if [ -f $(M7)/$$e.o ]; then \
	    echo "$$e.o calls: $$($(M7_NM) -u $(M7)/$$e.o | awk '{print $$2}' | tr '\n' ' ')"; \
	    extra=$$($(call m7_extra,$(M7)/$$e.o)); \
	    if [ -z "$$extra" ]; then ok "$${t}symbols"; \
	    else echo "not in M7_LIBC (README.md's list):" $$extra; bad "$${t}symbols"; fi; \
	  else bad "$${t}symbols"; fi; \
	  if ! command -v $(M7_QEMU) >/dev/null; then echo "m7 $${t}run: not run, no $(M7_QEMU)"; \
	  elif [ -f $(M7)/$$e.o ] && $(M7_CC) $(M7_FLAGS) -nostartfiles $(M7_LDFLAGS) \
	      tests/embedded/qemu_start.c $(M7)/$$e.o -o $(M7)/$$e-qemu.elf -lm && \
	      $(M7_QEMU) $(M7)/$$e-qemu.elf; then ok "$${t}run ($(M7_QEMU): plan's result = direct loop)"; \
	  else bad "$${t}run (exit status $$?)"; fi; \
	done; \
	echo "== the library with FUSE_NO_STDIO"; \
	rm -f $(M7)/library.o; \
	printf '#define FUSE_NO_STDIO\n#define FUSE_IMPLEMENTATION\n#include "fuse.h"\n' > $(M7)/library.c; \
	if $(M7_CC) $(WARN) $(M7_FLAGS) -I. -c $(M7)/library.c -o $(M7)/library.o; \
	then ok library; else bad library; fi; \
	if [ -f $(M7)/library.o ]; then \
	  echo "library.o calls:  $$($(M7_NM) -u $(M7)/library.o | awk '{print $$2}' | tr '\n' ' ')"; \
	  extra=$$($(call m7_extra,$(M7)/library.o)); \
	  if [ -z "$$extra" ]; then ok "library symbols"; \
	  else echo "not in M7_LIBC (README.md's list):" $$extra; bad "library symbols"; fi; \
	else bad "library symbols"; fi; \
	echo "total: $$p passed, $$f failed"; \
	test $$f -eq 0

M7_PLAN ?=
M7_ARENA ?= 67108864
m7-size: $(BUILD)/fuse_run
	@if [ -z "$(M7_PLAN)" ]; then echo "m7-size: M7_PLAN=plan.fplan (fuse_run --save-plan)"; exit 2; fi
	@mkdir -p $(M7)/size
	./$(BUILD)/fuse_run $(M7_PLAN) --emit-c embedded_blob > $(M7)/size/embedded_blob.h
	./$(BUILD)/fuse_run --emit-config $(M7_PLAN) > $(M7)/size/embedded_config.h
	$(M7_CC) $(WARN) $(M7_FLAGS) -I. -I$(M7)/size -DARENA_BYTES=$(M7_ARENA) -c \
	  tests/embedded/plan_size.c -o $(M7)/size/plan.o
	$(M7_CC) $(M7_FLAGS) $(M7_LDFLAGS) -Wl,-Map=$(M7)/size/plan.map $(M7)/size/plan.o \
	  -o $(M7)/size/plan.elf -lm
	@$(M7_SIZE) $(M7)/size/plan.elf; set -- $$($(call m7_text,$(M7)/size/plan.elf,embedded_blob)); \
	echo "m7-size: text $$1 bytes; without the $$2-byte blob $$(($$1 - $$2))"
	@if command -v $(M7_QEMU) >/dev/null; then \
	  $(M7_CC) $(M7_FLAGS) -nostartfiles $(M7_LDFLAGS) tests/embedded/qemu_start.c \
	    $(M7)/size/plan.o -o $(M7)/size/plan-qemu.elf -lm && \
	  $(M7_QEMU) $(M7)/size/plan-qemu.elf && echo "m7-size: it runs under $(M7_QEMU)"; fi

# ------------------------------------------------------------------------ CMake --
# make test-cmake: tests/cmake/run.sh - the consumer project in tests/cmake (main.c + check.c)
# built against CMakeLists.txt each way a project takes fuse.h: add_subdirectory, FetchContent
# (a file:// tarball), `cmake --install` (shared) into build-cmake/prefix, then find_package,
# pkg-config + $(CC), and fuse::dnnl when oneDNN is found; into build-cmake/. The libraries
# are built at FUSE_CMAKE_CFLAGS (default -O1). Last line "total: N passed, N failed".
.PHONY: test-cmake
FUSE_CMAKE_CFLAGS ?= -O1
test-cmake:
	@CC="$(CC)" FUSE_CMAKE_CFLAGS="$(FUSE_CMAKE_CFLAGS)" bash tests/cmake/run.sh build-cmake
