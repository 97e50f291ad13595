# fuse.h - tests, header checks and the demo. GNU make.
#
#   make test               build and run tests/test_*.c and the header checks;
#                           the last line is "total: N passed, N failed"
#   make test SANITIZE=1    the same with AddressSanitizer + UBSan, in build-san/
#   make demo               build and run examples/demo.c, the seed examples (--short), then
#                           fuse_run on the committed ONNX network (tests/data/onnx/tinynet_bn.onnx)
#   make examples           build every examples/*.c into $(BUILD)/
#   make clean

SHELL := /bin/bash
CC ?= cc
CXX ?= c++
# make predefines CXX as g++; take c++ unless the user chose one.
ifeq ($(origin CXX),default)
CXX := c++
endif

WARN := -std=c99 -Wall -Wextra -Wpedantic -Werror
CXXWARN := -x c++ -std=c++11 -Wall -Wextra -Werror
LDLIBS := -lm -lpthread

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
HB := $(BUILD)/header

TEST_SOURCES := $(sort $(wildcard tests/test_*.c))
TEST_PROGRAMS := $(patsubst tests/%.c,$(BUILD)/%,$(TEST_SOURCES))
EXAMPLE_SOURCES := $(sort $(wildcard examples/*.c))
EXAMPLE_PROGRAMS := $(patsubst examples/%.c,$(BUILD)/%,$(EXAMPLE_SOURCES))
# the examples that walk through the seed scenarios; `make demo` runs them after the demo
SEED_EXAMPLES := conv2d_reshape_add_relu fuse_by_pattern clip_epilogue

# Each check counts as one test in the total; see the check-* targets below.
HEADER_CHECKS := twice cxx static two-units symbols quickstart dnnl examples
ifneq ($(shell command -v clang 2>/dev/null),)
HEADER_CHECKS += clang
endif

.PHONY: all test test-programs demo examples bench fuzz clean $(addprefix check-,$(HEADER_CHECKS) clang)

all: test-programs examples

# A program that does not build counts as one failure in run.sh, so the build goes on (-k)
# and run.sh prints the total last whatever happened.
test:
	@$(MAKE) --no-print-directory -k test-programs || true
	@MAKE="$(MAKE)" bash tests/run.sh $(addprefix --check ,$(HEADER_CHECKS)) $(TEST_PROGRAMS)

test-programs: $(TEST_PROGRAMS)

$(BUILD) $(HB):
	@mkdir -p $@

# rm first: a failed build must not leave an old program behind for run.sh to run.
$(BUILD)/test_%: tests/test_%.c | $(BUILD)
	@rm -f $@
	$(CC) $(ALL_CFLAGS) -MMD -MP $< -o $@ $(LDLIBS)

-include $(TEST_PROGRAMS:=.d)

# ---------------------------------------------------------------- header checks --
# run.sh calls each as `make -s check-NAME`; exit status 0 = passed.

# (a) the implementation included twice in one unit, C99, -Werror
check-twice: | $(HB)
	$(CC) $(ALL_CFLAGS) tests/header/twice.c -o $(HB)/twice $(LDLIBS)
	$(HB)/twice

# (b) the same unit as C++11; a C++ caller links against the C-built implementation
check-cxx: | $(HB)
	$(CXX) $(ALL_CXXFLAGS) tests/header/twice.c -o $(HB)/twice_cxx $(LDLIBS)
	$(HB)/twice_cxx
	$(CC) $(ALL_CFLAGS) -c tests/header/impl.c -o $(HB)/impl_for_cxx.o
	$(CXX) $(ALL_CXXFLAGS) -c tests/header/user.c -o $(HB)/user_cxx.o
	$(CXX) $(SAN) $(HB)/impl_for_cxx.o $(HB)/user_cxx.o -o $(HB)/two_units_cxx $(LDLIBS)
	$(HB)/two_units_cxx

# (c) clang, when it is installed (the check is left out of the list otherwise)
check-clang: | $(HB)
	clang $(ALL_CFLAGS) tests/header/twice.c -o $(HB)/twice_clang $(LDLIBS)
	$(HB)/twice_clang
	clang $(ALL_CFLAGS) tests/header/static.c -o $(HB)/static_clang $(LDLIBS)
	$(HB)/static_clang

# (d) FUSE_STATIC: every function static, most of them unused, still no warning
check-static: | $(HB)
	$(CC) $(ALL_CFLAGS) tests/header/static.c -o $(HB)/static $(LDLIBS)
	$(HB)/static
	$(CXX) $(ALL_CXXFLAGS) tests/header/static.c -o $(HB)/static_cxx $(LDLIBS)
	$(HB)/static_cxx

# (e) one unit with the implementation, one with the declarations only, one program
check-two-units: | $(HB)
	$(CC) $(ALL_CFLAGS) -c tests/header/impl.c -o $(HB)/impl.o
	$(CC) $(ALL_CFLAGS) -c tests/header/user.c -o $(HB)/user.o
	$(CC) $(SAN) $(HB)/impl.o $(HB)/user.o -o $(HB)/two_units $(LDLIBS)
	$(HB)/two_units

# (f) every exported symbol starts with fuse_ (built without sanitizers, whose
# instrumentation adds symbols of its own)
check-symbols: | $(HB)
	$(CC) $(WARN) $(OPT) -I. $(CFLAGS) -c tests/header/impl.c -o $(HB)/impl_plain.o
	$(CC) $(WARN) $(OPT) -I. $(CFLAGS) -DFUSE_TEST_WITH_DNNL -c tests/header/impl.c -o $(HB)/impl_dnnl.o
	@syms=$$(nm -g --defined-only $(HB)/impl_plain.o $(HB)/impl_dnnl.o | awk 'NF == 3 {print $$3}'); \
	bad=$$(printf '%s\n' "$$syms" | grep -v '^fuse_' | grep -v '^$$' | sort -u); \
	if [ -n "$$bad" ]; then echo "exported symbols without the fuse_ prefix:"; echo "$$bad"; exit 1; fi; \
	for s in fuse_graph_create fuse_run fuse_dnnl_backend; do \
	  printf '%s\n' "$$syms" | grep -qx "$$s" || { echo "$$s is not defined"; exit 1; }; \
	done

# (g) the quick start in README.md compiles warning-free and runs
check-quickstart: | $(HB)
	bash tests/header/extract_quickstart.sh README.md $(BUILD)/quickstart.c
	$(CC) $(ALL_CFLAGS) $(BUILD)/quickstart.c -o $(BUILD)/quickstart $(LDLIBS)
	$(BUILD)/quickstart

# fuse_dnnl.h: C99 and C++11, oneDNN detected or switched off, included twice, FUSE_STATIC
check-dnnl: | $(HB)
	$(CC) $(ALL_CFLAGS) tests/header/dnnl.c -o $(HB)/dnnl $(LDLIBS)
	$(HB)/dnnl
	$(CXX) $(ALL_CXXFLAGS) tests/header/dnnl.c -o $(HB)/dnnl_cxx $(LDLIBS)
	$(HB)/dnnl_cxx
	$(CC) $(ALL_CFLAGS) -DFUSE_DNNL_AVAILABLE=0 tests/header/dnnl.c -o $(HB)/dnnl_off $(LDLIBS)
	$(HB)/dnnl_off
	$(CXX) $(ALL_CXXFLAGS) -DFUSE_DNNL_AVAILABLE=0 tests/header/dnnl.c -o $(HB)/dnnl_off_cxx $(LDLIBS)
	$(HB)/dnnl_off_cxx
	$(CC) $(ALL_CFLAGS) -DFUSE_TEST_WITH_DNNL tests/header/static.c -o $(HB)/static_dnnl $(LDLIBS)
	$(HB)/static_dnnl

# every example builds warning-free, and the seed examples run: each exits non-zero when its
# fused and unfused results differ (their output is shown only then)
check-examples: $(EXAMPLE_PROGRAMS)
	@for e in $(SEED_EXAMPLES); do \
	  out=$$(./$(BUILD)/$$e --short 2>&1) || { printf '%s\n' "$$out"; echo "example $$e failed"; exit 1; }; \
	done

# ------------------------------------------------------------- demo, examples --

demo: $(BUILD)/demo $(addprefix $(BUILD)/,$(SEED_EXAMPLES)) $(BUILD)/fuse_run
	./$(BUILD)/demo
	@for e in $(SEED_EXAMPLES); do \
	  echo; echo "== $$e (./$(BUILD)/$$e for the full listings)"; \
	  ./$(BUILD)/$$e --short || exit 1; \
	done
	@echo; echo "== fuse_run: the committed ONNX network, checked against PyTorch's output"
	./$(BUILD)/fuse_run tests/data/onnx/tinynet_bn.onnx --input tests/data/onnx/tinynet.input.bin --expect tests/data/onnx/tinynet.output.bin --runs 5

examples: $(EXAMPLE_PROGRAMS)

$(EXAMPLE_PROGRAMS): $(BUILD)/%: examples/%.c fuse.h | $(BUILD)
	@rm -f $@
	$(CC) $(ALL_CFLAGS) $< -o $@ $(LDLIBS)

# ----------------------------------------------------------------- bench, fuzz --
# make bench: the pattern-pass timings on a 10,000-op graph, then bench/layers: the conv layer
# suite (fuse.h fused / unfused / per isa against oneDNN and the measured FMA peak), which
# writes bench/results/layers.{md,csv,png}. oneDNN is used when its header is found (then
# -ldnnl); otherwise its column says n/a. BENCH_ARGS go to bench/layers, e.g.
#   make bench BENCH_ARGS="--threads 2"   or   BENCH_ARGS="--isa avx2" (oneDNN limited to AVX2)
BENCH_DNNL := $(shell printf '\043include <oneapi/dnnl/dnnl.h>\n' | $(CC) -E -x c - >/dev/null 2>&1 && echo 1 || echo 0)
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

$(BUILD)/layers: bench/layers.c bench/peak.h fuse.h | $(BUILD)
	@rm -f $@
	$(CC) $(WARN) -O2 -I. -DBENCH_DNNL=$(BENCH_DNNL) $< -o $@ $(BENCH_DNNL_LIBS) $(LDLIBS)

# make fuzz: each libFuzzer target in fuzz/ for FUZZ_SECONDS (clang), from its seed corpus
# (fuzz/corpus/<name>; the ONNX target also starts from the ONNX test suite's models).
FUZZ_SECONDS ?= 60
FUZZ_TARGETS := $(patsubst fuzz/fuzz_%.c,%,$(wildcard fuzz/fuzz_*.c))
ONNX_DATA ?= /usr/share/libonnx-testdata/data

fuzz: $(addprefix $(BUILD)/fuzz-,$(FUZZ_TARGETS))
	@for t in $(FUZZ_TARGETS); do \
	  mkdir -p $(BUILD)/corpus-$$t; \
	  if [ -d fuzz/corpus/$$t ]; then cp -n fuzz/corpus/$$t/* $(BUILD)/corpus-$$t/ 2>/dev/null || true; fi; \
	  if [ $$t = onnx ] && [ -d $(ONNX_DATA)/node ]; then \
	    for m in $(ONNX_DATA)/node/*/model.onnx $(ONNX_DATA)/pytorch-converted/*/model.onnx; do \
	      cp -n $$m $(BUILD)/corpus-$$t/$$(basename $$(dirname $$m)).onnx 2>/dev/null || true; done; \
	    cp -n tests/data/onnx/*.onnx $(BUILD)/corpus-$$t/ 2>/dev/null || true; fi; \
	  echo "fuzz: $$t for $(FUZZ_SECONDS) s"; \
	  ./$(BUILD)/fuzz-$$t -max_total_time=$(FUZZ_SECONDS) -timeout=10 -rss_limit_mb=4096 \
	    -print_final_stats=1 $(BUILD)/corpus-$$t 2>&1 | grep -E 'stat::number_of_executed_units|ERROR|SUMMARY|Done' ; \
	  test $${PIPESTATUS[0]} -eq 0 || exit 1; \
	done

$(BUILD)/fuzz-%: fuzz/fuzz_%.c fuse.h | $(BUILD)
	clang -g -O1 -fsanitize=fuzzer,address,undefined -I. $< -o $@ -lm

clean:
	rm -rf build build-san

# ------------------------------------------------------------------------ tools --
# fuse_run, the command-line runner for ONNX models: make tools -> $(BUILD)/fuse_run
.PHONY: tools
tools: $(BUILD)/fuse_run

ifeq ($(filter $(BUILD)/fuse_run,$(EXAMPLE_PROGRAMS)),)
$(BUILD)/fuse_run: examples/fuse_run.c fuse.h fuse_dnnl.h | $(BUILD)
	@rm -f $@
	$(CC) $(ALL_CFLAGS) $< -o $@ -lm -lpthread
else
$(BUILD)/fuse_run: fuse_dnnl.h # built by the examples rule above
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
CROSS_QEMU_aarch64 ?= qemu-aarch64
CROSS_QEMU_armhf ?= qemu-arm
CROSS_QEMU_i386 ?= qemu-i386
CROSS_QEMU_s390x ?= qemu-s390x
CROSS_QEMU_ppc ?= qemu-ppc
CROSS_TEST_NAMES := $(patsubst tests/%.c,%,$(TEST_SOURCES))
CROSS_ARGS_test_networks = tests/data/onnx $(CROSS_MODELS)
cross_rparen := )
cross_qemu_cases = $(foreach a,$(CROSS_ARCHES),$(a)$(cross_rparen) qemu='$(CROSS_QEMU_$(a))';;)
cross_cc_cases = $(foreach a,$(CROSS_ARCHES),$(a)$(cross_rparen) cc='$(CROSS_CC_$(a))';;)
cross_args_cases = $(foreach t,$(CROSS_TEST_NAMES),$(t)$(cross_rparen) args='$(CROSS_ARGS_$(t))';;)

define FUSE_CROSS_ARCH
build-cross/$(1):
	@mkdir -p $$@

build-cross/$(1)/test_%.elf: tests/test_%.c fuse.h tests/runner.h | build-cross/$(1)
	@rm -f $$@
	$$(CROSS_CC_$(1)) $$(WARN) $$(CROSS_OPT) $$(CROSS_DEFS) -I. $$(CROSS_CFLAGS) -static $$< -o $$@ $$(LDLIBS)

.PHONY: test-cross-programs-$(1)
test-cross-programs-$(1): $(addprefix build-cross/$(1)/,$(addsuffix .elf,$(CROSS_TEST_NAMES)))
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
	  for t in $(CROSS_TEST_NAMES); do \
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
