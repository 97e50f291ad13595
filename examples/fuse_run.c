/* fuse_run.c - run an ONNX model or a plan blob on fuse.h from the command line.

       fuse_run model.onnx|plan.fplan [--save-plan OUT.fplan] [--emit-c NAME] [--print] [--runs N] [--threads N] [--isa auto|avx512|avx2|neon|scalar]
                           [--backend builtin|dnnl] [--input in.bin]... [--output out.bin]...
                           [--expect want.bin]... [--tolerance T] [--no-optimize]
                           [--no-winograd | --winograd M] [--explain] [--dot FILE [--dot-only TEXT]]

   Loads the model with fuse_onnx_load_file, optimizes it with fuse_optimize (unless
   --no-optimize), compiles it and runs it in a workspace of its own (64-byte aligned,
   fuse_plan_workspace_size bytes): one warm-up run, N timed runs of the whole plan with
   fuse_run, then N runs in which every step runs alone with fuse_run_steps(..., i, 1) and is
   timed. Prints the model's inputs and outputs, the op and composite counts before and after
   optimizing, a table of the plan's steps (fuse_plan_write's description, median time, share
   of the total and GFLOP/s of each conv2d / matmul step), the total both as the sum of the
   step medians and as the median of the whole runs, and a few values of each output.

   --explain prints fuse_explain's report on the graph that is compiled (after fuse_optimize,
   or as loaded with --no-optimize): each conv2d / matmul with its composite and fused
   epilogue, each element-wise op that runs on its own and why. --dot FILE writes that graph
   as Graphviz DOT (fuse_graph_write_dot; --dot-only TEXT keeps the ops whose names contain
   TEXT, one block of a large model); `dot -Tsvg FILE -o graph.svg` draws it.

   FLOPs: two per multiply-add of each conv2d and matmul step, counted on the text form of
   the graph that is compiled (fuse.h has no public accessor for an op's operands): a step's
   description ends in "-> %label", the label of the value it writes; the line defining that
   label is the reduction itself, or, for a fused step, one of the lines of a composite block
   that holds exactly one conv2d / matmul. conv2d: numel(y) * (C/groups) * KH * KW from the
   weight [K, C/groups, KH, KW]; matmul: numel(y) * K with K the last dim of a.

   Inputs: raw little-endian float32 files, one --input per model input in order, each exactly
   that input's size; without --input every input is filled from a fixed seed, uniform in
   [-1, 1]. A uint8 / int8 / int32 input (a quantized model's image) takes those values rounded
   and saturated to its type, random ones spread over its range; a typed output is printed,
   compared and written as floats. Outputs: --output writes the model's outputs as raw float32,
   one file each, in order.
   --expect reads reference outputs in the same form and order and prints each output's
   normwise relative error max|got - want| / max|want|; above --tolerance (default 1e-3) the
   exit status is 1.

   Plans: --save-plan OUT.fplan saves the compiled plan as a blob (fuse_plan_save); with --isa
   the plan may be for an ISA this CPU lacks (fuse_compile_options.save_only): it is saved, not
   run. A .fplan file (any file that starts with the blob's magic) runs as a model does: mapped
   into memory and loaded in place with fuse_plan_load, no graph, no compile; the times of
   loading (and for a model of optimizing and compiling) are printed. --emit-c NAME writes the
   plan's blob to standard output as a C array NAME (64-byte aligned) and NAME_size, and runs
   nothing: a build step for firmware that links its plan in.

   Configurations: fuse_run --emit-config BLOB... loads each blob (as a .fplan runs) and writes
   to standard output the C header of #defines that leave out of a build every kind of step,
   family of kernels, post-op and instruction set none of them uses
   (fuse_plan_write_config): with FUSE_RUNTIME_ONLY, the smallest build that runs them. A blob
   for an ISA this build or CPU lacks does not load here (a scalar blob loads anywhere).

   Exit status: 0 success, 1 the model or a file could not be loaded / compiled / run, or an
   output differs from its --expect file by more than the tolerance, 2 bad command line or an
   unavailable backend.

   Build: make tools   (or: cc -std=c99 -O2 -I. examples/fuse_run.c -o fuse_run -lm -lpthread,
   adding -ldnnl where oneDNN's header is installed: fuse_dnnl.h then uses it for --backend dnnl) */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#endif
#define FUSE_IMPLEMENTATION
#include "fuse.h"
#include "fuse_dnnl.h"
#include "job_pool.h"

#include <errno.h>
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>

#define MAX_FILES 64 /* --input / --output files */
#define SHOW_VALUES 8

/* Raw float files are little-endian float32 on every host. */
static int is_big_endian(void) {
  const uint32_t one = 1;
  return *(const unsigned char *)&one == 0;
}

static void swap_if_big_endian(float *v, size_t n) {
  size_t i;
  if (!is_big_endian()) return;
  for (i = 0; i < n; i++) {
    unsigned char *b = (unsigned char *)&v[i], t;
    t = b[0], b[0] = b[3], b[3] = t;
    t = b[1], b[1] = b[2], b[2] = t;
  }
}

static const char *usage_text =
    "usage: fuse_run model.onnx [options]\n"
    "\n"
    "       fuse_run plan.fplan [options]\n"
    "       fuse_run --emit-config plan.fplan...\n"
    "\n"
    "Loads an ONNX model, optimizes it with fuse_optimize, compiles and runs it (or loads a\n"
    "plan blob saved by --save-plan and runs it), and prints\n"
    "a table of the plan's steps with the median time of each (every step timed alone with\n"
    "fuse_run_steps), its share of the total and GFLOP/s, then the total per run.\n"
    "\n"
    "options:\n"
    "  --save-plan FILE    save the compiled plan as a blob (fuse_plan_save); with --isa for\n"
    "                      a CPU other than this one it is saved, not run\n"
    "  --emit-c NAME       write the plan's blob to standard output as a C array NAME,\n"
    "                      64-byte aligned, and NAME_size; runs nothing\n"
    "  --emit-config       every argument is a plan blob: write the #defines that leave out of\n"
    "                      a build what none of them uses (fuse_plan_write_config); runs nothing\n"
    "  --print             print the graph before and after fuse_optimize\n"
    "  --runs N            timed runs after one warm-up run (default 10)\n"
    "  --threads N         threads for the plan, run by a job pool of fuse_run's (default 0 =\n"
    "                      as many as are online)\n"
    "  --isa ISA           auto (default), avx512, avx2, neon or scalar\n"
    "  --backend B         builtin (default) or dnnl (oneDNN, when this build has it)\n"
    "  --input FILE        raw float32 data for the next model input, exactly its size;\n"
    "                      repeat once per input, in order (default: random, fixed seed,\n"
    "                      uniform in [-1, 1])\n"
    "  --output FILE       write the next model output as raw float32; repeat for more\n"
    "  --expect FILE       raw float32 reference for the next model output; repeat for more.\n"
    "                      Prints max|got - want| / max|want|; above the tolerance: exit 1\n"
    "  --tolerance T       the largest relative error --expect accepts (default 1e-3)\n"
    "  --no-optimize       run the graph as loaded, op by op\n"
    "  --no-winograd       3x3 stride-1 convs on the direct kernels, never as Winograd\n"
    "                      (fuse_compile_options.no_winograd = 1)\n"
    "  --winograd M        every 3x3 stride-1 conv that can as Winograd F(M,3), M = 2, 4 or 6\n"
    "                      (no_winograd = -M; to measure the cost rule's choices)\n"
    "  --explain           print what fused and why the rest did not (fuse_explain), for\n"
    "                      the graph that is compiled\n"
    "  --dot FILE          write that graph as Graphviz DOT (dot -Tsvg FILE -o graph.svg)\n"
    "  --dot-only TEXT     with --dot: only the ops whose names contain TEXT (one block)\n"
    "  -h, --help          this text\n"
    "\n"
    "exit status: 0 success, 1 load / compile / run / file error or an output off its\n"
    "--expect file by more than the tolerance, 2 bad command line or backend unavailable\n";

/* ---------------------------------------------------------------- utilities -- */

static void fail_usage(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, "fuse_run: ");
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fprintf(stderr, "\n(fuse_run --help for the usage)\n");
}

static double now_ms(void) {
#if defined(CLOCK_MONOTONIC)
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
#else
  return (double)clock() * 1e3 / CLOCKS_PER_SEC;
#endif
}

static int compare_doubles(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static uint32_t rng_state = 20240601u;

/* A uint8 / int8 / int32 input's float values (a file's, or uniform ones) as that type, in
   place (the elements are no wider than a float): each rounded and saturated; uniform values
   in [-1, 1] spread over the type's range first. */
static void floats_to_type(float *v, size_t n, int type, int spread) {
  double lo = type == FUSE_UINT8 ? 0 : type == FUSE_INT8 ? -128 : -2147483648.0;
  double hi = type == FUSE_UINT8 ? 255 : type == FUSE_INT8 ? 127 : 2147483647.0;
  size_t j;
  for (j = 0; j < n; j++) {
    double x = spread ? lo + (v[j] + 1.0) / 2.0 * (hi - lo) : v[j];
    x = x != x ? 0 : x < lo ? lo : x > hi ? hi : floor(x + 0.5);
    if (type == FUSE_UINT8) ((unsigned char *)v)[j] = (unsigned char)x;
    else if (type == FUSE_INT8) ((signed char *)v)[j] = (signed char)x;
    else ((int32_t *)(void *)v)[j] = (int32_t)x;
  }
}

/* A typed output's elements as floats, in place (from the last, so nothing is overwritten
   before it is read). */
static void type_to_floats(float *v, size_t n, int type) {
  size_t j;
  for (j = n; j-- > 0;) {
    float x = type == FUSE_UINT8 ? (float)((unsigned char *)v)[j]
              : type == FUSE_INT8 ? (float)((signed char *)v)[j]
                                  : (float)((int32_t *)(void *)v)[j];
    v[j] = x;
  }
}

static float uniform(void) { /* xorshift32 -> [-1, 1] */
  rng_state ^= rng_state << 13;
  rng_state ^= rng_state >> 17;
  rng_state ^= rng_state << 5;
  return (float)((double)(rng_state >> 8) / 8388607.5 - 1.0);
}

/* A whole number in [lo, hi], all of the text; 0 on failure. */
static int parse_int(const char *s, long lo, long hi, long *out) {
  char *end;
  long v;
  if (!s || !*s) return 0;
  errno = 0;
  v = strtol(s, &end, 10);
  if (errno || *end || end == s || v < lo || v > hi) return 0;
  *out = v;
  return 1;
}

static const char *value_label(const fuse_graph *g, fuse_value v) {
  const char *name = fuse_value_name(g, v);
  return name ? name : "(unnamed)";
}

typedef struct text_buffer {
  char *buf;
  size_t len, cap;
  int failed;
} text_buffer;

static void text_write(void *user, const char *s, size_t n) {
  text_buffer *t = (text_buffer *)user;
  if (t->failed) return;
  if (t->len + n + 1 > t->cap) {
    size_t cap = t->cap ? t->cap * 2 : 4096;
    char *bigger;
    while (cap < t->len + n + 1) cap *= 2;
    bigger = (char *)realloc(t->buf, cap);
    if (!bigger) {
      t->failed = 1;
      return;
    }
    t->buf = bigger;
    t->cap = cap;
  }
  memcpy(t->buf + t->len, s, n);
  t->len += n;
  t->buf[t->len] = 0;
}

/* ------------------------------------------------------------ flop counting -- */
/* fuse.h has no public accessor for a value's op or operands, so the multiply-adds are
   counted on the text form of the graph that is compiled: every "%label: [shape]" gives a
   shape, every "%y: [...] = conv2d(%x, %w, ...)" / "= matmul(%a, %b)" line a reduction, and
   every `composite ... {` ... `}` block groups the lines of one composite. conv2d:
   numel(y) * (C/groups) * KH * KW from the weight [K, C/groups, KH, KW]; matmul:
   numel(y) * K with K the last dim of a (numpy rules, 1-D operands included). A plan step
   names the value it writes ("-> %label"); its multiply-adds are those of that value's line
   when the line is a conv2d / matmul, else those of the one reduction in its composite. */

typedef struct label_def {
  const char *label; /* points into the text; ends where the label ends */
  size_t len;
  int rank;
  int64_t shape[FUSE_MAX_RANK];
  int block;     /* the composite block whose line defines it, or -1 */
  int reduction; /* its line is a conv2d / matmul */
  double macs;   /* that reduction's multiply-adds; < 0: an operand's shape was not found */
} label_def;

typedef struct composite_block {
  int reductions; /* conv2d / matmul lines in the block */
  double macs;    /* theirs, summed; < 0 when one was not counted */
} composite_block;

typedef struct graph_scan {
  label_def *defs;
  int n, cap;
  const label_def **by_label; /* defs sorted by label, for lookups */
  composite_block *blocks;
  int n_blocks, cap_blocks;
} graph_scan;

/* A %label at s (s[0] == '%'): returns its length including '%', 0 if none. */
static size_t scan_label(const char *s) {
  size_t i = 1;
  if (s[0] != '%') return 0;
  if (s[1] == '"') {
    for (i = 2; s[i] && s[i] != '"' && s[i] != '\n'; i++)
      if (s[i] == '\\' && s[i + 1]) i++;
    return s[i] == '"' ? i + 1 : 0;
  }
  while ((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') ||
         (s[i] >= '0' && s[i] <= '9') || s[i] == '_' || s[i] == '.')
    i++;
  return i > 1 ? i : 0;
}

static const char *skip_spaces(const char *s) {
  while (*s == ' ' || *s == '\t') s++;
  return s;
}

/* ": [d0, d1, ...]" at s; returns the end or NULL. */
static const char *scan_shape(const char *s, int *rank, int64_t *shape) {
  s = skip_spaces(s);
  if (*s != ':') return NULL;
  s = skip_spaces(s + 1);
  if (*s != '[') return NULL;
  s = skip_spaces(s + 1);
  *rank = 0;
  if (*s == ']') return s + 1;
  for (;;) {
    char *end;
    long long d;
    errno = 0;
    d = strtoll(s, &end, 10);
    if (end == s || errno || *rank >= FUSE_MAX_RANK) return NULL;
    shape[(*rank)++] = (int64_t)d;
    s = skip_spaces(end);
    if (*s == ']') return s + 1;
    if (*s != ',') return NULL;
    s = skip_spaces(s + 1);
  }
}

static int compare_labels(const char *a, size_t a_len, const char *b, size_t b_len) {
  int c = memcmp(a, b, a_len < b_len ? a_len : b_len);
  if (c) return c;
  return (a_len > b_len) - (a_len < b_len);
}

static int compare_defs(const void *x, const void *y) {
  const label_def *a = *(const label_def *const *)x, *b = *(const label_def *const *)y;
  return compare_labels(a->label, a->len, b->label, b->len);
}

static label_def *find_label(const graph_scan *gs, const char *label, size_t len) {
  int lo = 0, hi = gs->n - 1;
  while (lo <= hi) {
    int mid = lo + (hi - lo) / 2;
    const label_def *d = gs->by_label[mid];
    int c = compare_labels(label, len, d->label, d->len);
    if (c == 0) return (label_def *)d;
    if (c < 0) hi = mid - 1;
    else lo = mid + 1;
  }
  return NULL;
}

static double shape_numel(int rank, const int64_t *shape) {
  double n = 1;
  int i;
  for (i = 0; i < rank; i++) n *= (double)shape[i];
  return n;
}

static int starts_with(const char *s, const char *prefix) {
  return strncmp(s, prefix, strlen(prefix)) == 0;
}

static void free_scan(graph_scan *gs) {
  free(gs->defs);
  free((void *)gs->by_label);
  free(gs->blocks);
  memset(gs, 0, sizeof *gs);
}

/* Pass 1 collects every label's shape; pass 2 finds the reductions and composite blocks.
   0: out of memory. */
static int scan_graph_text(const char *text, graph_scan *gs) {
  int pass, i, block = -1;
  memset(gs, 0, sizeof *gs);
  for (pass = 0; pass < 2; pass++) {
    const char *line = text;
    while (*line) {
      const char *end = strchr(line, '\n'), *s = skip_spaces(line);
      if (!end) end = line + strlen(line);
      if (starts_with(s, "composite ")) { /* its strings are names, not labels */
        if (pass == 1) {
          if (gs->n_blocks == gs->cap_blocks) {
            composite_block *bigger;
            gs->cap_blocks = gs->cap_blocks ? gs->cap_blocks * 2 : 64;
            bigger = (composite_block *)realloc(gs->blocks,
                                                (size_t)gs->cap_blocks * sizeof *gs->blocks);
            if (!bigger) return 0;
            gs->blocks = bigger;
          }
          block = gs->n_blocks++;
          gs->blocks[block].reductions = 0;
          gs->blocks[block].macs = 0;
        }
      } else if (*s == '}' && skip_spaces(s + 1) >= end) {
        block = -1;
      } else if (pass == 0) {
        while (s < end && *s != '#') { /* a comment ends the line; labels may quote a '#' */
          size_t len = *s == '%' ? scan_label(s) : 0;
          if (len && s + len <= end) {
            int rank;
            int64_t shape[FUSE_MAX_RANK];
            const char *after = scan_shape(s + len, &rank, shape);
            if (after && after <= end) {
              if (gs->n == gs->cap) {
                label_def *bigger;
                gs->cap = gs->cap ? gs->cap * 2 : 256;
                bigger = (label_def *)realloc(gs->defs, (size_t)gs->cap * sizeof *gs->defs);
                if (!bigger) return 0;
                gs->defs = bigger;
              }
              memset(&gs->defs[gs->n], 0, sizeof *gs->defs);
              gs->defs[gs->n].label = s;
              gs->defs[gs->n].len = len;
              gs->defs[gs->n].rank = rank;
              gs->defs[gs->n].block = -1;
              memcpy(gs->defs[gs->n].shape, shape, sizeof shape);
              gs->n++;
              s = after;
              continue;
            }
            s += len;
            continue;
          }
          s++;
        }
      } else if (*s == '%') { /* "%y: [...] = op(" defines %y */
        size_t len = scan_label(s);
        int rank;
        int64_t shape[FUSE_MAX_RANK];
        const char *after = len ? scan_shape(s + len, &rank, shape) : NULL;
        label_def *d = after && after <= end ? find_label(gs, s, len) : NULL;
        if (d) {
          const char *p = skip_spaces(after), *op = NULL;
          int is_conv = 0;
          d->block = block;
          if (*p == '=') {
            p = skip_spaces(p + 1);
            if (starts_with(p, "conv2d(")) is_conv = 1, op = p + 7;
            else if (starts_with(p, "matmul(")) op = p + 7;
          }
          if (op) { /* operands: "%a, %b" */
            const char *a = skip_spaces(op), *b;
            size_t a_len = scan_label(a), b_len = 0;
            const label_def *sa = NULL, *sb = NULL;
            b = a_len ? skip_spaces(a + a_len) : NULL;
            if (b && *b == ',') {
              b = skip_spaces(b + 1);
              b_len = scan_label(b);
            }
            if (a_len) sa = find_label(gs, a, a_len);
            if (b_len) sb = find_label(gs, b, b_len);
            d->reduction = 1;
            if (is_conv && sb && sb->rank == 4)
              d->macs = shape_numel(rank, shape) * shape_numel(3, sb->shape + 1);
            else if (!is_conv && sa && sa->rank >= 1)
              d->macs = shape_numel(rank, shape) * (double)sa->shape[sa->rank - 1];
            else
              d->macs = -1;
            if (block >= 0) {
              composite_block *cb = &gs->blocks[block];
              cb->reductions++;
              cb->macs = cb->macs < 0 || d->macs < 0 ? -1 : cb->macs + d->macs;
            }
          }
        }
      }
      line = *end ? end + 1 : end;
    }
    if (pass == 0) {
      gs->by_label = (const label_def **)malloc(((size_t)gs->n + 1) * sizeof *gs->by_label);
      if (!gs->by_label) return 0;
      for (i = 0; i < gs->n; i++) gs->by_label[i] = &gs->defs[i];
      qsort((void *)gs->by_label, (size_t)gs->n, sizeof *gs->by_label, compare_defs);
    }
  }
  return 1;
}

/* One step of the plan: its line from fuse_plan_write without "step N: ", and its
   multiply-adds when it is a conv2d / matmul (< 0: not counted). */
typedef struct step_row {
  const char *desc;
  int reduction;
  double macs;
} step_row;

/* Splits the plan's description (one line per step, NUL-terminated in place) and counts each
   step's multiply-adds. A line that does not look as expected keeps its text, uncounted. */
static void describe_steps(char *plan_text, int n_steps, const graph_scan *gs, step_row *rows) {
  char *line = plan_text;
  int i;
  for (i = 0; i < n_steps; i++) {
    char *end, *arrow;
    const char *desc;
    rows[i].desc = "(no description)";
    rows[i].reduction = 0;
    rows[i].macs = 0;
    if (!line || !*line) continue;
    end = strchr(line, '\n');
    if (end) *end = 0;
    desc = line;
    if (starts_with(desc, "step ")) { /* "step N: " */
      const char *colon = strchr(desc, ':');
      if (colon) desc = skip_spaces(colon + 1);
    }
    rows[i].desc = desc;
    line = end ? end + 1 : NULL;
    if (!starts_with(desc, "conv2d") && !starts_with(desc, "matmul")) continue;
    if (desc[6] != ' ' && desc[6] != 0) continue;
    rows[i].reduction = 1;
    rows[i].macs = -1;
    arrow = strstr(desc, " -> %");
    if (arrow) {
      size_t len = scan_label(arrow + 4);
      const label_def *d = len ? find_label(gs, arrow + 4, len) : NULL;
      if (d && d->reduction) rows[i].macs = d->macs;
      else if (d && d->block >= 0 && gs->blocks[d->block].reductions == 1)
        rows[i].macs = gs->blocks[d->block].macs;
    }
  }
}

/* ------------------------------------------------------------------- files -- */

/* kind: "input" (a model input) or "expected output" (an --expect file); the messages name it. */
static float *read_float_file(const char *path, size_t want, const char *kind, int *exit_code) {
  const char *whose = strcmp(kind, "input") == 0 ? "input" : "output";
  FILE *f = fopen(path, "rb");
  float *data;
  long size;
  *exit_code = 1;
  if (!f) {
    fprintf(stderr, "fuse_run: cannot open %s '%s': %s\n", kind, path, strerror(errno));
    return NULL;
  }
  if (fseek(f, 0, SEEK_END) != 0 || (size = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) != 0) {
    fprintf(stderr, "fuse_run: cannot read %s '%s': %s\n", kind, path, strerror(errno));
    fclose(f);
    return NULL;
  }
  if ((unsigned long)size != want * sizeof(float)) {
    fprintf(stderr,
            "fuse_run: %s '%s' has %ld bytes; the model %s needs %lu floats = %lu bytes\n",
            kind, path, size, whose, (unsigned long)want, (unsigned long)(want * sizeof(float)));
    fclose(f);
    return NULL;
  }
  data = (float *)malloc(want * sizeof(float) + 1);
  if (!data) {
    fprintf(stderr, "fuse_run: out of memory reading '%s'\n", path);
    fclose(f);
    return NULL;
  }
  if (fread(data, sizeof(float), want, f) != want) {
    fprintf(stderr, "fuse_run: cannot read %s '%s': %s\n", kind, path,
            ferror(f) ? strerror(errno) : "file ended early");
    free(data);
    fclose(f);
    return NULL;
  }
  fclose(f);
  swap_if_big_endian(data, want);
  *exit_code = 0;
  return data;
}

static int write_output_file(const char *path, const float *data, size_t n) {
  FILE *f;
  size_t i;
  if (is_big_endian()) { /* the file is little-endian: write byte-swapped copies */
    f = fopen(path, "wb");
    if (!f) {
      fprintf(stderr, "fuse_run: cannot create output '%s': %s\n", path, strerror(errno));
      return 0;
    }
    for (i = 0; i < n; i++) {
      float v = data[i];
      swap_if_big_endian(&v, 1);
      if (fwrite(&v, sizeof v, 1, f) != 1) break;
    }
    if (i < n || fclose(f) != 0) {
      fprintf(stderr, "fuse_run: cannot write output '%s': %s\n", path, strerror(errno));
      return 0;
    }
    return 1;
  }
  f = fopen(path, "wb");
  if (!f) {
    fprintf(stderr, "fuse_run: cannot create output '%s': %s\n", path, strerror(errno));
    return 0;
  }
  if (fwrite(data, sizeof(float), n, f) != n || fclose(f) != 0) {
    fprintf(stderr, "fuse_run: cannot write output '%s': %s\n", path, strerror(errno));
    return 0;
  }
  return 1;
}

/* -------------------------------------------------------------------- main -- */

typedef struct options {
  const char *model;
  int print, optimize, dnnl, explain, no_winograd;
  const char *dot, *dot_only; /* --dot FILE, --dot-only TEXT */
  const char *save_plan, *emit_c; /* --save-plan FILE, --emit-c NAME */
  int emit_config;                /* --emit-config: the blobs are model and more[] */
  const char *more[MAX_FILES];
  int num_more;
  long runs, threads;
  fuse_isa isa;
  const char *isa_name;
  const char *inputs[MAX_FILES], *outputs[MAX_FILES], *expects[MAX_FILES];
  int num_inputs, num_outputs, num_expects;
  double tolerance; /* for --expect */
} options;

/* 0: run; 1: --help printed; 2: bad command line (message printed) */
static int parse_args(int argc, char **argv, options *o) {
  int i;
  memset(o, 0, sizeof *o);
  o->optimize = 1;
  o->runs = 10;
  o->isa = FUSE_ISA_AUTO;
  o->isa_name = "auto";
  o->tolerance = 1e-3;
  for (i = 1; i < argc; i++) {
    const char *a = argv[i];
    const char *value = i + 1 < argc ? argv[i + 1] : NULL;
    if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
      fputs(usage_text, stdout);
      return 1;
    } else if (strcmp(a, "--print") == 0) {
      o->print = 1;
    } else if (strcmp(a, "--no-optimize") == 0) {
      o->optimize = 0;
    } else if (strcmp(a, "--no-winograd") == 0) {
      o->no_winograd = 1;
    } else if (strcmp(a, "--winograd") == 0) {
      if (!value || (strcmp(value, "2") && strcmp(value, "4") && strcmp(value, "6"))) {
        fail_usage("--winograd expects 2, 4 or 6, got '%s'", value ? value : "nothing");
        return 2;
      }
      o->no_winograd = -atoi(value);
      i++;
    } else if (strcmp(a, "--explain") == 0) {
      o->explain = 1;
    } else if (strcmp(a, "--emit-config") == 0) {
      o->emit_config = 1;
    } else if (strcmp(a, "--save-plan") == 0 || strcmp(a, "--emit-c") == 0) {
      if (!value) {
        fail_usage("%s needs a value", a);
        return 2;
      }
      i++;
      if (strcmp(a, "--save-plan") == 0) o->save_plan = value;
      else o->emit_c = value;
    } else if (strcmp(a, "--dot") == 0 || strcmp(a, "--dot-only") == 0) {
      if (!value) {
        fail_usage("%s needs a value", a);
        return 2;
      }
      i++;
      if (strcmp(a, "--dot") == 0) o->dot = value;
      else o->dot_only = value;
    } else if (strcmp(a, "--runs") == 0 || strcmp(a, "--threads") == 0 ||
               strcmp(a, "--isa") == 0 || strcmp(a, "--backend") == 0 ||
               strcmp(a, "--input") == 0 || strcmp(a, "--output") == 0 ||
               strcmp(a, "--expect") == 0 || strcmp(a, "--tolerance") == 0) {
      if (!value) {
        fail_usage("%s needs a value", a);
        return 2;
      }
      i++;
      if (strcmp(a, "--runs") == 0) {
        if (!parse_int(value, 1, 1000000, &o->runs)) {
          fail_usage("--runs expects a whole number from 1 to 1000000, got '%s'", value);
          return 2;
        }
      } else if (strcmp(a, "--threads") == 0) {
        if (!parse_int(value, 0, 4096, &o->threads)) {
          fail_usage("--threads expects a whole number from 0 to 4096, got '%s'", value);
          return 2;
        }
      } else if (strcmp(a, "--isa") == 0) {
        o->isa_name = value;
        if (strcmp(value, "auto") == 0) o->isa = FUSE_ISA_AUTO;
        else if (strcmp(value, "avx512") == 0) o->isa = FUSE_ISA_AVX512;
        else if (strcmp(value, "avx2") == 0) o->isa = FUSE_ISA_AVX2;
        else if (strcmp(value, "neon") == 0) o->isa = FUSE_ISA_NEON;
        else if (strcmp(value, "scalar") == 0) o->isa = FUSE_ISA_SCALAR;
        else {
          fail_usage("--isa expects auto, avx512, avx2, neon or scalar, got '%s'", value);
          return 2;
        }
      } else if (strcmp(a, "--backend") == 0) {
        if (strcmp(value, "builtin") == 0) o->dnnl = 0;
        else if (strcmp(value, "dnnl") == 0) o->dnnl = 1;
        else {
          fail_usage("--backend expects builtin or dnnl, got '%s'", value);
          return 2;
        }
      } else if (strcmp(a, "--input") == 0) {
        if (o->num_inputs == MAX_FILES) {
          fail_usage("too many --input files (at most %d)", MAX_FILES);
          return 2;
        }
        o->inputs[o->num_inputs++] = value;
      } else if (strcmp(a, "--expect") == 0) {
        if (o->num_expects == MAX_FILES) {
          fail_usage("too many --expect files (at most %d)", MAX_FILES);
          return 2;
        }
        o->expects[o->num_expects++] = value;
      } else if (strcmp(a, "--tolerance") == 0) {
        char *end;
        errno = 0;
        o->tolerance = strtod(value, &end);
        if (errno || end == value || *end || !(o->tolerance >= 0) || o->tolerance > DBL_MAX) {
          fail_usage("--tolerance expects a number >= 0, got '%s'", value);
          return 2;
        }
      } else {
        if (o->num_outputs == MAX_FILES) {
          fail_usage("too many --output files (at most %d)", MAX_FILES);
          return 2;
        }
        o->outputs[o->num_outputs++] = value;
      }
    } else if (a[0] == '-' && a[1] != 0) {
      fail_usage("unknown option '%s'", a);
      return 2;
    } else if (o->model && o->num_more < MAX_FILES) {
      o->more[o->num_more++] = a; /* more blobs for --emit-config, else an error below */
    } else if (o->model) {
      fail_usage("too many files (at most %d)", MAX_FILES + 1);
      return 2;
    } else {
      o->model = a;
    }
  }
  if (!o->model) {
    fputs(usage_text, stderr);
    return 2;
  }
  if (o->num_more && !o->emit_config) {
    fail_usage("one model at a time: got '%s' and '%s'", o->model, o->more[0]);
    return 2;
  }
  if (o->dot_only && !o->dot) {
    fail_usage("--dot-only needs --dot FILE");
    return 2;
  }
  return 0;
}

static void file_write(void *user, const char *text, size_t len) {
  fwrite(text, 1, len, (FILE *)user);
}

/* --dot: the graph as Graphviz DOT into o->dot. 0: the file could not be written. */
static int write_dot(const options *o, const fuse_graph *g) {
  fuse_dot_options dot;
  fuse_result r;
  int bad;
  FILE *f = fopen(o->dot, "w");
  if (!f) {
    fprintf(stderr, "fuse_run: cannot create '%s': %s\n", o->dot, strerror(errno));
    return 0;
  }
  memset(&dot, 0, sizeof dot);
  dot.only = o->dot_only;
  r = fuse_graph_write_dot(g, &dot, file_write, f);
  bad = ferror(f) != 0;
  if (fclose(f) != 0) bad = 1;
  if (bad || r != FUSE_OK) {
    fprintf(stderr, "fuse_run: cannot write '%s': %s\n", o->dot,
            r != FUSE_OK ? fuse_result_string(r) : strerror(errno));
    return 0;
  }
  printf("\nwrote the graph%s%s%s as Graphviz DOT to %s (dot -Tsvg %s -o graph.svg)\n",
         o->dot_only ? " (ops named *" : "", o->dot_only ? o->dot_only : "",
         o->dot_only ? "*)" : "", o->dot, o->dot);
  return 1;
}

/* A plan's input or output: its label (the graph's name, or "input N" for a blob's), shape
   and size. */
typedef struct port {
  const char *label;
  int rank;
  int64_t dims[FUSE_MAX_RANK];
  size_t n;
} port;

static void print_port_shape(FILE *f, const port *q) {
  int i;
  fputc('[', f);
  for (i = 0; i < q->rank; i++) fprintf(f, "%s%lld", i ? ", " : "", (long long)q->dims[i]);
  fputc(']', f);
}

/* The plan's ports; labels from the graph when there is one. 0: out of memory. */
static port *plan_ports(const fuse_plan *plan, const fuse_graph *g, int outputs, int count) {
  static char names[2 * MAX_FILES][24];
  port *q = (port *)calloc((size_t)count + 1, sizeof *q);
  int i, k;
  for (i = 0; q && i < count; i++) {
    q[i].rank = outputs ? fuse_plan_output_shape(plan, i, q[i].dims)
                        : fuse_plan_input_shape(plan, i, q[i].dims);
    if (q[i].rank < 0) q[i].rank = 0;
    for (q[i].n = 1, k = 0; k < q[i].rank; k++) q[i].n *= (size_t)q[i].dims[k];
    if (g) {
      q[i].label = value_label(g, outputs ? fuse_graph_output(g, i) : fuse_graph_input(g, i));
    } else if (i < MAX_FILES) {
      snprintf(names[outputs * MAX_FILES + i], sizeof names[0], "%s %d",
               outputs ? "output" : "input", i);
      q[i].label = names[outputs * MAX_FILES + i];
    } else {
      q[i].label = outputs ? "output" : "input";
    }
  }
  return q;
}

static void print_values(const port *q, const float *data) {
  size_t n = q->n, i, best = 0;
  double sum = 0, lo = INFINITY, hi = -INFINITY;
  printf("  %s ", q->label);
  print_port_shape(stdout, q);
  printf(":");
  for (i = 0; i < n && i < SHOW_VALUES; i++) printf(" %.6g", (double)data[i]);
  if (n > SHOW_VALUES) printf(" ...");
  for (i = 0; i < n; i++) {
    sum += data[i];
    if (data[i] < lo) lo = data[i];
    if (data[i] > hi) hi = data[i], best = i;
  }
  printf("\n    min %.6g  max %.6g  mean %.6g", lo, hi, sum / (double)n);
  if (n > 1) printf("  argmax %lu", (unsigned long)best);
  printf("\n");
}

/* ------------------------------------------------------------- plan blobs -- */

/* Whether the file starts with a plan blob's magic. */
static int file_is_blob(const char *path) {
  char magic[8];
  FILE *f = fopen(path, "rb");
  int yes = f && fread(magic, 1, 8, f) == 8 && memcmp(magic, "FUSEPLAN", 8) == 0;
  if (f) fclose(f);
  return yes;
}

/* The file mapped read-only (page-aligned, so a blob's weights load in place); NULL with a
   message on failure. */
static void *map_file(const char *path, size_t *size) {
  struct stat st;
  void *m;
  int fd = open(path, O_RDONLY);
  if (fd < 0 || fstat(fd, &st) != 0 || st.st_size <= 0) {
    fprintf(stderr, "fuse_run: cannot read plan '%s': %s\n", path,
            fd < 0 || errno ? strerror(errno) : "empty");
    if (fd >= 0) close(fd);
    return NULL;
  }
  *size = (size_t)st.st_size;
  m = mmap(NULL, *size, PROT_READ, MAP_PRIVATE, fd, 0);
  close(fd);
  if (m == MAP_FAILED) {
    fprintf(stderr, "fuse_run: cannot map plan '%s': %s\n", path, strerror(errno));
    return NULL;
  }
  return m;
}

/* fuse_plan_save's sink into a FILE, or a C array's text (--emit-c) */
typedef struct blob_sink {
  FILE *f;
  int c_array; /* as "0x..," text, 16 per line */
  size_t bytes;
} blob_sink;
static void blob_write(void *user, const char *text, size_t len) {
  blob_sink *b = (blob_sink *)user;
  size_t i;
  if (!b->c_array) {
    fwrite(text, 1, len, b->f);
  } else {
    for (i = 0; i < len; i++)
      fprintf(b->f, "%s0x%02x,", (b->bytes + i) % 16 ? " " : "\n  ",
              (unsigned)(unsigned char)text[i]);
  }
  b->bytes += len;
}

/* --emit-c NAME: the blob as a C array on standard output; from the plan, or the bytes of a
   blob file as they are. */
static int emit_c(const char *name, const fuse_plan *plan, const unsigned char *blob,
                  size_t blob_size) {
  blob_sink b = {NULL, 1, 0};
  b.f = stdout;
  printf("/* generated by fuse_run --emit-c: a fuse.h plan blob (fuse_plan_load) */\n"
         "#include <stddef.h>\n"
         "#if defined(__GNUC__) || defined(__clang__)\n"
         "__attribute__((aligned(64)))\n"
         "#elif defined(_MSC_VER)\n"
         "__declspec(align(64))\n"
         "#endif\n"
         "const unsigned char %s[] = {", name);
  if (blob) blob_write(&b, (const char *)blob, blob_size);
  else if (fuse_plan_save(plan, blob_write, &b) != FUSE_OK) return 0;
  printf("\n};\nconst size_t %s_size = %lu;\n", name, (unsigned long)b.bytes);
  return fflush(stdout) == 0;
}

/* --emit-config BLOB...: each blob loaded as a .fplan runs, then the defines none of them needs */
static int emit_config(const options *o) {
  fuse_plan *plans[MAX_FILES + 1];
  void *blobs[MAX_FILES + 1];
  size_t sizes[MAX_FILES + 1];
  char why[512];
  int n = 0, i, ok = 1;
  for (i = 0; i <= o->num_more && ok; i++) {
    const char *path = i ? o->more[i - 1] : o->model;
    fuse_plan_load_options lo;
    fuse_result r;
    if (!file_is_blob(path)) {
      fprintf(stderr, "fuse_run: --emit-config: '%s' is not a plan blob (fuse_run --save-plan "
                      "makes one)\n", path);
      ok = 0;
      break;
    }
    if (!(blobs[n] = map_file(path, &sizes[n]))) {
      ok = 0;
      break;
    }
    memset(&lo, 0, sizeof lo);
    lo.error = why;
    lo.error_size = sizeof why;
    r = fuse_plan_load(blobs[n], sizes[n], &lo, &plans[n]);
    if (r != FUSE_OK) {
      fprintf(stderr, "fuse_run: cannot load '%s': %s: %s\n", path, fuse_result_string(r), why);
      munmap(blobs[n], sizes[n]);
      ok = 0;
      break;
    }
    n++;
  }
  if (ok && fuse_plan_write_config((const fuse_plan *const *)plans, n, file_write, stdout) != FUSE_OK)
    ok = 0;
  for (i = 0; i < n; i++) {
    fuse_plan_destroy(plans[i]);
    munmap(blobs[i], sizes[i]);
  }
  return ok && fflush(stdout) == 0;
}

/* --save-plan FILE */
static int save_plan(const char *path, const fuse_plan *plan) {
  blob_sink b = {NULL, 0, 0};
  fuse_result r;
  int bad;
  b.f = fopen(path, "wb");
  if (!b.f) {
    fprintf(stderr, "fuse_run: cannot create '%s': %s\n", path, strerror(errno));
    return 0;
  }
  r = fuse_plan_save(plan, blob_write, &b);
  bad = ferror(b.f) != 0;
  if (fclose(b.f) != 0) bad = 1;
  if (r != FUSE_OK || bad) {
    fprintf(stderr, "fuse_run: cannot save the plan to '%s': %s\n", path,
            r != FUSE_OK ? fuse_result_string(r) : strerror(errno));
    return 0;
  }
  printf("saved the plan to %s: %lu bytes (weights %lu bytes, %+.2f%%)\n", path,
         (unsigned long)b.bytes, (unsigned long)fuse_plan_weights_size(plan),
         fuse_plan_weights_size(plan)
             ? 100.0 * ((double)b.bytes / (double)fuse_plan_weights_size(plan) - 1.0)
             : 0.0);
  return 1;
}

/* Whether this CPU runs a plan of that ISA (the library's rule: scalar anywhere, AVX2 where
   AVX-512 runs). */
static int isa_runs_here(fuse_isa isa) {
  fuse_isa cpu = fuse_cpu_isa();
  return isa == FUSE_ISA_AUTO || isa == FUSE_ISA_SCALAR || isa == cpu ||
         (isa == FUSE_ISA_AVX2 && cpu == FUSE_ISA_AVX512);
}

/* The median of v[0..n-1] (sorts v). */
static double median_of(double *v, size_t n) {
  qsort(v, n, sizeof *v, compare_doubles);
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* Normwise relative error max|got - want| / max|want| (max|got - want| itself when want is
   all zeros); NaN when a value differs by NaN (a NaN or an infinity on one side only). */
static double relative_error(const float *got, const float *want, size_t n, double *max_diff,
                             double *max_want) {
  size_t i;
  int nan = 0;
  *max_diff = 0;
  *max_want = 0;
  for (i = 0; i < n; i++) {
    double d, w = fabs((double)want[i]);
    if (w > *max_want) *max_want = w;
    if (got[i] == want[i] || (isnan(got[i]) && isnan(want[i]))) continue;
    d = fabs((double)got[i] - (double)want[i]);
    if (isnan(d) || isinf(d)) nan = 1;
    else if (d > *max_diff) *max_diff = d;
  }
  if (nan) return NAN;
  return *max_want > 0 ? *max_diff / *max_want : *max_diff;
}

static void print_gflops(double macs, double ms) {
  if (macs > 0 && ms > 0) printf(" %8.2f", 2.0 * macs / (ms * 1e6));
  else printf(" %8s", macs < 0 ? "?" : "");
}

int main(int argc, char **argv) {
  options o;
  fuse_graph *g = NULL;
  fuse_plan *plan = NULL;
  fuse_result r;
  fuse_compile_options copt;
  pool jobs;
  pool_worker *workers = NULL;
  const fuse_backend *backends[2] = {NULL, NULL};
  char compile_error[512];
  text_buffer text, compiled_text, plan_text;
  graph_scan scan;
  step_row *rows = NULL;
  int exit_code = 1, i, n_in = 0, n_out = 0, n_steps = 0, ops_before = 0, ops_after = 0;
  int composites = 0;
  int reductions = 0, uncounted = 0;
  float **in = NULL, **out = NULL, **want = NULL;
  double *times = NULL, *step_times = NULL, *step_median = NULL, *sample = NULL;
  double median, fastest, steps_total = 0, macs_total = 0;
  void *workspace_block = NULL, *workspace;
  size_t workspace_size;
  FILE *probe;
  long k;
  int is_blob;
  void *blob = NULL;
  size_t blob_size = 0;
  port *ins = NULL, *outs = NULL;
  double t_load = 0, t_optimize = 0, t_compile = 0, t0;

  memset(&text, 0, sizeof text);
  memset(&compiled_text, 0, sizeof compiled_text);
  memset(&plan_text, 0, sizeof plan_text);
  memset(&scan, 0, sizeof scan);
  switch (parse_args(argc, argv, &o)) {
  case 0: break;
  case 1: return 0;
  default: return 2;
  }
  if (o.emit_config) return emit_config(&o) ? 0 : 1;

  if (o.dnnl) {
    backends[0] = fuse_dnnl_backend();
    if (!backends[0]) {
      fprintf(stderr, "fuse_run: oneDNN backend unavailable in this build\n");
      return 2;
    }
  }

  /* load: the loader's own message says what is wrong with the file */
  probe = fopen(o.model, "rb");
  if (!probe) {
    fprintf(stderr, "fuse_run: cannot open model '%s': %s\n", o.model, strerror(errno));
    return 1;
  }
  errno = 0;
  if (fgetc(probe) == EOF && ferror(probe)) { /* a directory opens but does not read */
    fprintf(stderr, "fuse_run: cannot read model '%s': %s\n", o.model,
            errno ? strerror(errno) : "read error");
    fclose(probe);
    return 1;
  }
  fclose(probe);
  is_blob = file_is_blob(o.model);
  if (is_blob && (o.print || o.explain || o.dot || !o.optimize || o.no_winograd || o.dnnl ||
                  o.isa != FUSE_ISA_AUTO || o.save_plan)) {
    fail_usage("'%s' is a plan blob: --print, --explain, --dot, --no-optimize, --winograd, "
               "--isa, --backend and --save-plan need a model", o.model);
    return 2;
  }
  {
    long online = sysconf(_SC_NPROCESSORS_ONLN);
    if (o.threads == 0) o.threads = online < 1 ? 1 : online > 64 ? 64 : online;
    else if (online >= 1 && o.threads > online)
      fprintf(stderr, "fuse_run: note: --threads %ld is more than the %ld CPUs online: the job "
                      "pool's workers wait by spinning, so its steps take far longer\n",
              o.threads, online);
  }
  if (o.threads > 1 && !o.dnnl) /* the library runs no threads: the host's job pool does */
    workers = pool_start(&jobs, (int)o.threads);
  if (is_blob) { /* mapped, loaded in place: no graph, no compile */
    fuse_plan_load_options lo;
    blob = map_file(o.model, &blob_size);
    if (!blob) goto done;
    if (o.emit_c) {
      exit_code = emit_c(o.emit_c, NULL, (const unsigned char *)blob, blob_size) ? 0 : 1;
      goto done;
    }
    memset(&lo, 0, sizeof lo);
    lo.error = compile_error;
    lo.error_size = sizeof compile_error;
    lo.num_threads = (int)o.threads;
    if (workers) lo.parallel_for = pool_parallel_for, lo.parallel_user = &jobs;
    t0 = now_ms();
    r = fuse_plan_load(blob, blob_size, &lo, &plan);
    t_load = now_ms() - t0;
    if (r != FUSE_OK) {
      fprintf(stderr, "fuse_run: cannot load '%s': %s: %s\n", o.model, fuse_result_string(r),
              compile_error);
      goto done;
    }
    goto have_plan;
  }
  t0 = now_ms();
  r = fuse_onnx_load_file(o.model, NULL, &g);
  t_load = now_ms() - t0;
  if (r != FUSE_OK) {
    const char *why = g ? fuse_graph_error(g) : "out of memory";
    fprintf(stderr, "fuse_run: cannot load '%s': %s: %s\n", o.model, fuse_result_string(r),
            why && *why ? why : "(no message)");
    goto done;
  }

  if (o.print) {
    if (fuse_graph_write(g, text_write, &text) != FUSE_OK || text.failed || !text.buf) {
      fprintf(stderr, "fuse_run: out of memory writing the graph\n");
      goto done;
    }
    printf("\ngraph as loaded:\n");
    fputs(text.buf, stdout);
  }
  ops_before = fuse_graph_op_count(g);

  if (o.optimize) {
    t0 = now_ms();
    r = fuse_optimize(g, o.dnnl ? "dnnl" : "fuse");
    t_optimize = now_ms() - t0;
    if (r != FUSE_OK) {
      if (fuse_graph_status(g) != FUSE_OK) {
        fprintf(stderr, "fuse_run: fuse_optimize failed: %s: %s\n", fuse_result_string(r),
                fuse_graph_error(g));
        goto done;
      }
      fprintf(stderr, "fuse_run: warning: fuse_optimize failed (%s: %s); running the graph as "
                      "loaded\n", fuse_result_string(r), fuse_graph_error(g));
    }
    if (o.print) {
      printf("\ngraph after fuse_optimize:\n");
      fuse_graph_print(g, stdout);
    }
  }
  if (o.explain) {
    printf("\nwhat fused and why (fuse_explain%s):\n", o.optimize ? "" : ", --no-optimize");
    if (fuse_explain(g, stdout) != FUSE_OK) {
      fprintf(stderr, "fuse_run: out of memory explaining the graph\n");
      goto done;
    }
  }
  if (o.dot && !write_dot(&o, g)) goto done;
  ops_after = fuse_graph_op_count(g);
  composites = fuse_composite_count(g);

  /* the multiply-adds, from the text form of the graph that is compiled */
  if (fuse_graph_write(g, text_write, &compiled_text) != FUSE_OK || compiled_text.failed ||
      !compiled_text.buf || !scan_graph_text(compiled_text.buf, &scan)) {
    fprintf(stderr, "fuse_run: out of memory writing the graph\n");
    goto done;
  }

  /* compile */
  memset(&copt, 0, sizeof copt);
  copt.isa = o.isa;
  copt.num_threads = (int)o.threads;
  copt.no_winograd = o.no_winograd;
  copt.backends = o.dnnl ? backends : NULL;
  copt.error = compile_error;
  copt.error_size = sizeof compile_error;
  copt.save_only = o.save_plan || o.emit_c; /* --isa may name another machine's */
  compile_error[0] = 0;
  if (workers) copt.parallel_for = pool_parallel_for, copt.parallel_user = &jobs;
  t0 = now_ms();
  r = fuse_compile(g, &copt, &plan);
  t_compile = now_ms() - t0;
  if (r != FUSE_OK) {
    fprintf(stderr, "fuse_run: cannot compile '%s': %s: %s\n", o.model, fuse_result_string(r),
            compile_error[0] ? compile_error : fuse_graph_error(g));
    goto done;
  }
  if (o.emit_c) {
    exit_code = emit_c(o.emit_c, plan, NULL, 0) ? 0 : 1;
    goto done;
  }

have_plan:
  n_in = fuse_plan_input_count(plan);
  n_out = fuse_plan_output_count(plan);
  ins = plan_ports(plan, g, 0, n_in);
  outs = plan_ports(plan, g, 1, n_out);
  if (!ins || !outs) {
    fprintf(stderr, "fuse_run: out of memory\n");
    goto done;
  }
  if (o.num_inputs && o.num_inputs != n_in) {
    fprintf(stderr, "fuse_run: %d --input file%s given; the model has %d input%s (", o.num_inputs,
            o.num_inputs == 1 ? "" : "s", n_in, n_in == 1 ? "" : "s");
    for (i = 0; i < n_in; i++) {
      fprintf(stderr, "%s%s ", i ? ", " : "", ins[i].label);
      print_port_shape(stderr, &ins[i]);
    }
    fprintf(stderr, ")\n");
    exit_code = 2;
    goto done;
  }
  if (o.num_outputs > n_out || o.num_expects > n_out) {
    fprintf(stderr, "fuse_run: %d --%s files given; the model has %d output%s\n",
            o.num_outputs > n_out ? o.num_outputs : o.num_expects,
            o.num_outputs > n_out ? "output" : "expect", n_out, n_out == 1 ? "" : "s");
    exit_code = 2;
    goto done;
  }
  printf("%s: %s\n", is_blob ? "plan" : "model", o.model);
  for (i = 0; i < n_in; i++) {
    printf("  input %d: %s ", i, ins[i].label);
    print_port_shape(stdout, &ins[i]);
    if (fuse_plan_input_type(plan, i) != FUSE_FLOAT32)
      printf(" %s", fuse_plan_input_type(plan, i) == FUSE_UINT8  ? "uint8"
                    : fuse_plan_input_type(plan, i) == FUSE_INT8 ? "int8"
                                                                 : "int32");
    if (o.num_inputs) printf(" from %s\n", o.inputs[i]);
    else if (i == 0) printf(" random: uniform in [-1, 1]%s, seed %lu\n",
                            fuse_plan_input_type(plan, i) != FUSE_FLOAT32 ? " over its range" : "",
                            (unsigned long)rng_state);
    else printf(" random: the same stream, continued\n");
  }
  for (i = 0; i < n_out; i++) {
    printf("  output %d: %s ", i, outs[i].label);
    print_port_shape(stdout, &outs[i]);
    printf("\n");
  }
  if (is_blob)
    printf("load: fuse_plan_load %.3f ms (in place from the mapped file, %lu bytes)\n", t_load,
           (unsigned long)blob_size);
  else
    printf("load: ONNX %.1f ms, fuse_optimize %.1f ms, fuse_compile %.1f ms\n", t_load,
           t_optimize, t_compile);
  if (o.save_plan) {
    if (!save_plan(o.save_plan, plan)) goto done;
    if (!isa_runs_here(o.isa)) {
      printf("(a plan for --isa %s: saved, not run on this CPU)\n", o.isa_name);
      exit_code = 0;
      goto done;
    }
  }

  /* the steps: their descriptions and multiply-adds */
  n_steps = fuse_plan_step_count(plan);
  rows = (step_row *)calloc((size_t)n_steps + 1, sizeof *rows);
  if (!rows || fuse_plan_write(plan, text_write, &plan_text) != FUSE_OK || plan_text.failed) {
    fprintf(stderr, "fuse_run: out of memory\n");
    goto done;
  }
  describe_steps(plan_text.buf ? plan_text.buf : (char *)"", n_steps, &scan, rows);
  for (i = 0; i < n_steps; i++)
    if (rows[i].reduction) {
      reductions++;
      if (rows[i].macs < 0) uncounted++;
      else macs_total += rows[i].macs;
    }

  /* inputs, outputs, expected outputs, timings and the workspace (our own, so that the
     values one fuse_run_steps call leaves there are the next one's operands) */
  in = (float **)calloc((size_t)n_in + 1, sizeof *in);
  out = (float **)calloc((size_t)n_out + 1, sizeof *out);
  want = (float **)calloc((size_t)n_out + 1, sizeof *want);
  times = (double *)malloc((size_t)o.runs * sizeof *times);
  sample = (double *)malloc((size_t)o.runs * sizeof *sample);
  step_median = (double *)calloc((size_t)n_steps + 1, sizeof *step_median);
  if ((size_t)n_steps <= ((size_t)-1) / sizeof(double) / (size_t)o.runs)
    step_times = (double *)malloc((size_t)n_steps * (size_t)o.runs * sizeof *step_times + 1);
  workspace_size = fuse_plan_workspace_size(plan);
  if (workspace_size <= ((size_t)-1) - 128)
    workspace_block = malloc(workspace_size + 64);
  if (!in || !out || !want || !times || !sample || !step_median || !step_times ||
      !workspace_block) {
    fprintf(stderr, "fuse_run: out of memory\n");
    goto done;
  }
  workspace = (void *)(((uintptr_t)workspace_block + 63) & ~(uintptr_t)63);
  for (i = 0; i < n_in; i++) {
    size_t n = ins[i].n, j;
    if (o.num_inputs) {
      int code;
      in[i] = read_float_file(o.inputs[i], n, "input", &code);
      if (!in[i]) {
        exit_code = code;
        goto done;
      }
    } else {
      in[i] = (float *)malloc(n * sizeof(float) + 1);
      if (!in[i]) {
        fprintf(stderr, "fuse_run: out of memory for input %d\n", i);
        goto done;
      }
      for (j = 0; j < n; j++) in[i][j] = uniform();
    }
    /* a uint8 / int8 / int32 input (a quantized model's image): its values as that type,
       which fuse_run_steps reads through the input's tensor (fuse_run_typed) */
    if (fuse_plan_input_type(plan, i) != FUSE_FLOAT32)
      floats_to_type(in[i], n, fuse_plan_input_type(plan, i), !o.num_inputs);
  }
  for (i = 0; i < n_out; i++) {
    out[i] = (float *)malloc(outs[i].n * sizeof(float) + 1);
    if (!out[i]) {
      fprintf(stderr, "fuse_run: out of memory for output %d\n", i);
      goto done;
    }
  }
  for (i = 0; i < o.num_expects; i++) {
    int code;
    want[i] = read_float_file(o.expects[i], outs[i].n,
                              "expected output", &code);
    if (!want[i]) {
      exit_code = code;
      goto done;
    }
  }

  /* run: one warm-up, the timed whole runs, then the runs timed step by step */
  for (k = -1; k < o.runs; k++) {
    double t0 = now_ms();
    r = fuse_run(plan, (const float *const *)in, out, workspace);
    if (r != FUSE_OK) {
      fprintf(stderr, "fuse_run: run failed: %s\n", fuse_result_string(r));
      goto done;
    }
    if (k >= 0) times[k] = now_ms() - t0;
  }
  for (k = 0; k < o.runs; k++)
    for (i = 0; i < n_steps; i++) {
      double t0 = now_ms();
      r = fuse_run_steps(plan, (const float *const *)in, out, workspace, i, 1);
      if (r != FUSE_OK) {
        fprintf(stderr, "fuse_run: run failed: %s (step %d)\n", fuse_result_string(r), i);
        goto done;
      }
      step_times[(size_t)i * (size_t)o.runs + (size_t)k] = now_ms() - t0;
    }
  fastest = times[0];
  for (k = 1; k < o.runs; k++)
    if (times[k] < fastest) fastest = times[k];
  median = median_of(times, (size_t)o.runs);
  for (i = 0; i < n_steps; i++) {
    memcpy(sample, step_times + (size_t)i * (size_t)o.runs, (size_t)o.runs * sizeof *sample);
    step_median[i] = median_of(sample, (size_t)o.runs);
    steps_total += step_median[i];
  }

  /* report */
  if (is_blob)
    printf("\nops: (a plan blob: no graph)\n");
  else if (o.optimize)
    printf("\nops: %d as loaded, %d after fuse_optimize, %d composite%s\n", ops_before,
           ops_after, composites, composites == 1 ? "" : "s");
  else
    printf("\nops: %d as loaded (not optimized: --no-optimize), %d composite%s\n", ops_after,
           composites, composites == 1 ? "" : "s");
  printf("workspace: %lu bytes (fuse_run_steps carries the values between steps in it)\n",
         (unsigned long)workspace_size);
  printf("weights: %lu bytes (constants and weights packed at compile)\n",
         (unsigned long)fuse_plan_weights_size(plan));
  {
    fuse_isa best = fuse_cpu_isa();
    printf("isa: %s (this cpu: %s), backend: %s, threads: ", o.isa_name,
           best == FUSE_ISA_AVX512 ? "avx512" : best == FUSE_ISA_AVX2 ? "avx2"
           : best == FUSE_ISA_NEON ? "neon" : "scalar",
           o.dnnl ? "dnnl" : "builtin");
    printf("%ld\n", o.threads);
  }

  printf("\nplan: %d step%s, each timed alone with fuse_run_steps; median of %ld run%s after "
         "one warm-up\n", n_steps, n_steps == 1 ? "" : "s", o.runs, o.runs == 1 ? "" : "s");
  printf("  %5s %11s %8s %8s  %s\n", "step", "median ms", "share %", "GFLOP/s", "description");
  for (i = 0; i < n_steps; i++) {
    printf("  %5d %11.4f", i, step_median[i]);
    if (steps_total > 0) printf(" %8.1f", 100.0 * step_median[i] / steps_total);
    else printf(" %8s", "-");
    print_gflops(rows[i].reduction ? rows[i].macs : 0, step_median[i]);
    printf("  %s\n", rows[i].desc);
  }
  printf("  %5s %11.4f %8s", "sum", steps_total, steps_total > 0 ? "100.0" : "-");
  print_gflops(macs_total, steps_total);
  printf("  total: the step medians added up\n");
  printf("  %5s %11.4f %8s", "run", median, "");
  print_gflops(macs_total, median);
  printf("  total: the whole plan with fuse_run, median (fastest %.4f ms)\n", fastest);
  if (macs_total > 0 && median > 0) {
    printf("GFLOP/s: %.2f at the median, %.2f at the fastest (%.4g GFLOP per run: 2 x "
           "multiply-adds of %d conv2d / matmul step%s)\n",
           2.0 * macs_total / (median * 1e6), 2.0 * macs_total / (fastest * 1e6),
           2.0 * macs_total * 1e-9, reductions - uncounted,
           reductions - uncounted == 1 ? "" : "s");
  } else if (!reductions) {
    printf("GFLOP/s: n/a (no conv2d or matmul in the graph)\n");
  }
  if (uncounted)
    printf("  (%d conv2d / matmul step%s not counted: operand shapes not found)\n", uncounted,
           uncounted == 1 ? "" : "s");

  printf("\noutputs:\n");
  for (i = 0; i < n_out; i++) /* a typed output's values as floats from here on */
    if (fuse_plan_output_type(plan, i) != FUSE_FLOAT32)
      type_to_floats(out[i], outs[i].n, fuse_plan_output_type(plan, i));
  for (i = 0; i < n_out; i++) print_values(&outs[i], out[i]);
  for (i = 0; i < o.num_outputs; i++) {
    size_t n = outs[i].n;
    if (!write_output_file(o.outputs[i], out[i], n)) goto done;
    printf("wrote output %d (%lu floats) to %s\n", i, (unsigned long)n, o.outputs[i]);
  }
  exit_code = 0;

  if (o.num_expects) {
    printf("\nexpected outputs (normwise relative error max|got - want| / max|want|, "
           "tolerance %g):\n", o.tolerance);
    for (i = 0; i < o.num_expects; i++) {
      double max_diff, max_want, err;
      err = relative_error(out[i], want[i], outs[i].n, &max_diff,
                           &max_want);
      printf("  output %d vs %s: %.3g (max|got - want| %.3g, max|want| %.3g%s): %s\n", i,
             o.expects[i], err, max_diff, max_want, max_want > 0 ? "" : "; want is all zeros",
             err <= o.tolerance ? "ok" : "FAILED");
      if (!(err <= o.tolerance)) {
        fprintf(stderr, "fuse_run: output %d differs from '%s': relative error %.3g > "
                        "tolerance %g\n", i, o.expects[i], err, o.tolerance);
        exit_code = 1;
      }
    }
  }

done:
  if (in)
    for (i = 0; i < n_in; i++) free(in[i]);
  if (out)
    for (i = 0; i < n_out; i++) free(out[i]);
  if (want)
    for (i = 0; i < n_out; i++) free(want[i]);
  free(in);
  free(out);
  free(want);
  free(times);
  free(sample);
  free(step_times);
  free(step_median);
  free(workspace_block);
  free(rows);
  free(text.buf);
  free(compiled_text.buf);
  free(plan_text.buf);
  free_scan(&scan);
  fuse_plan_destroy(plan);
  fuse_graph_destroy(g);
  free(ins);
  free(outs);
  if (blob) munmap(blob, blob_size);
  if (workers) pool_stop(&jobs, workers);
  return exit_code;
}
