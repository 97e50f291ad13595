/* test_fuzz_regress.c - replays what the fuzzers found, and their seed corpora, through the
   fuzz targets themselves (fuzz/fuzz_*.c, included here with FUZZ_REPLAY so that each is a
   plain function instead of LLVMFuzzerTestOneInput).

   Inputs, per target (text, pattern, onnx, builder, plan):
     tests/data/fuzz-regress/<target>/   every input a fuzzer once crashed on (kept for good;
                                         see fuzz/README.md), may be empty
     fuzz/corpus/<target>/               the seed corpus (onnx: the .onnx files in
                                         tests/data/onnx/)
   A replay passes when the target returns without crashing (the sanitizers watch in
   `make test SANITIZE=1`) and, for the builder and plan targets, none of their own checks
   failed (fused vs unfused results, text round trip, step-by-step runs, sticky errors; damage
   refused, intact structures loaded; see fuzz/fuzz_builder.c, fuzz/fuzz_plan.c). Each target is one test; it fails when it found no input at all.

   Usage: build/test_fuzz_regress [-v]   (run from the repository root; -v names each file) */
#define _POSIX_C_SOURCE 200809L
#define FUZZ_REPLAY
#include "../fuzz/fuzz_text.c"
#include "../fuzz/fuzz_pattern.c"
#include "../fuzz/fuzz_onnx.c"
#include "../fuzz/fuzz_builder.c"
#include "../fuzz/fuzz_plan.c"
#include "runner.h"

#include <dirent.h>
#include <stdio.h>

static int replay_verbose;

typedef int (*replay_fn)(const unsigned char *data, size_t size);

static unsigned char *replay_read(const char *path, size_t *size) {
  FILE *f = fopen(path, "rb");
  unsigned char *buf = NULL;
  size_t cap = 0, n = 0;
  if (!f) return NULL;
  for (;;) {
    size_t got;
    if (n == cap) {
      unsigned char *bigger = (unsigned char *)realloc(buf, cap = cap ? cap * 2 : 4096);
      if (!bigger) {
        free(buf);
        fclose(f);
        return NULL;
      }
      buf = bigger;
    }
    got = fread(buf + n, 1, cap - n, f);
    n += got;
    if (got == 0) break;
  }
  fclose(f);
  *size = n;
  return buf;
}

/* Runs fn on every regular file in dir whose name ends in suffix (NULL: any); returns the
   count, -1 when the directory cannot be opened. */
static int replay_dir(const char *dir, const char *suffix, replay_fn fn) {
  DIR *d = opendir(dir);
  struct dirent *e;
  int count = 0;
  if (!d) return -1;
  while ((e = readdir(d)) != NULL) {
    char path[1024];
    unsigned char *data;
    size_t size = 0, len = strlen(e->d_name);
    if (e->d_name[0] == '.' || strcmp(e->d_name, "README.md") == 0) continue;
    if (suffix && (len < strlen(suffix) || strcmp(e->d_name + len - strlen(suffix), suffix) != 0))
      continue;
    snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
    if (!(data = replay_read(path, &size))) continue;
    if (replay_verbose) printf("  %s (%lu bytes)\n", path, (unsigned long)size);
    fflush(stdout); /* a crash names the file */
    fn(data, size);
    free(data);
    count++;
  }
  closedir(d);
  return count;
}

static void replay_target(const char *target, replay_fn fn, const char *corpus,
                          const char *suffix) {
  char dir[256];
  int regress, seeds;
  long failures = fuzz_builder_failures + fuzz_plan_failures;
  snprintf(dir, sizeof dir, "tests/data/fuzz-regress/%s", target);
  regress = replay_dir(dir, NULL, fn);
  seeds = replay_dir(corpus, suffix, fn);
  printf("  %s: %d regression inputs, %d corpus inputs replayed\n", target,
         regress < 0 ? 0 : regress, seeds < 0 ? 0 : seeds);
  CHECK((regress < 0 ? 0 : regress) + (seeds < 0 ? 0 : seeds) > 0);
  CHECK_EQ_INT(fuzz_builder_failures + fuzz_plan_failures - failures, 0);
}

TEST(text) { replay_target("text", fuzz_text, "fuzz/corpus/text", NULL); }
TEST(pattern) { replay_target("pattern", fuzz_pattern, "fuzz/corpus/pattern", NULL); }
TEST(onnx) { replay_target("onnx", fuzz_onnx, "tests/data/onnx", ".onnx"); }
TEST(builder) { replay_target("builder", fuzz_builder, "fuzz/corpus/builder", NULL); }
TEST(plan) { replay_target("plan", fuzz_plan, "fuzz/corpus/plan", NULL); }

int main(int argc, char **argv) {
  replay_verbose = argc > 1 && strcmp(argv[1], "-v") == 0;
  RUN(text);
  RUN(pattern);
  RUN(onnx);
  RUN(builder);
  RUN(plan);
  return runner_finish("fuzz-regress");
}
