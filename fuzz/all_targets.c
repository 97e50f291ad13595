/* all_targets.c - the five fuzz targets in one libFuzzer program (what `make fuzz` builds):
   fuse.h's implementation is compiled once, not once per target (each build with ASan, UBSan
   and libFuzzer's coverage takes clang about 100 s). The program runs the target its name says:
   build/fuzz-text, fuzz-pattern, fuzz-onnx, fuzz-builder and fuzz-plan are links to build/fuzz-all, or
   FUZZ_TARGET_NAME=text (pattern, onnx, builder, plan) picks one for any name. Each target file
   still builds alone (see its first lines). */
#define FUZZ_MANY
#include "fuzz_text.c"
#include "fuzz_pattern.c"
#include "fuzz_onnx.c"
#include "fuzz_builder.c"
#include "fuzz_plan.c"

#include <stdio.h>

static const struct {
  const char *name;
  int (*fn)(const unsigned char *, size_t);
} fuzz_targets[] = {
    {"text", fuzz_text}, {"pattern", fuzz_pattern}, {"onnx", fuzz_onnx}, {"builder", fuzz_builder},
    {"plan", fuzz_plan}};
static int (*fuzz_chosen)(const unsigned char *, size_t);

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerInitialize(int *argc, char ***argv) {
  const char *name = getenv("FUZZ_TARGET_NAME"), *base;
  size_t i;
  if (!name) { /* .../fuzz-NAME */
    base = strrchr((*argv)[0], '/');
    base = base ? base + 1 : (*argv)[0];
    name = strncmp(base, "fuzz-", 5) ? base : base + 5;
  }
  (void)argc;
  for (i = 0; i < sizeof fuzz_targets / sizeof fuzz_targets[0]; i++)
    if (!strcmp(name, fuzz_targets[i].name)) fuzz_chosen = fuzz_targets[i].fn;
  if (!fuzz_chosen) {
    fprintf(stderr, "fuzz: no target '%s' (run as fuzz-text, fuzz-pattern, fuzz-onnx, "
                    "fuzz-builder or fuzz-plan, or set FUZZ_TARGET_NAME)\n", name);
    exit(2);
  }
  return 0;
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);
int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size) {
  return fuzz_chosen(data, size);
}
