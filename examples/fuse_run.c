/* fuse_run.c - run an ONNX model on fuse.h from the command line.

       fuse_run model.onnx [--print] [--runs N] [--threads N] [--isa auto|avx512|avx2|scalar]
                           [--backend builtin|dnnl] [--input in.bin]... [--output out.bin]...
                           [--no-optimize]

   Loads the model with fuse_onnx_load_file, optimizes it with fuse_optimize (unless
   --no-optimize), compiles it and runs it: one warm-up run, then N timed runs. Prints the
   model's inputs and outputs, the op and composite counts before and after optimizing, the
   plan's steps, the median and fastest time of the whole plan, GFLOP/s (two flops per
   multiply-add of every conv2d and matmul, counted on the graph as loaded) and a few values
   of each output.

   Inputs: raw little-endian float32 files, one --input per model input in order, each exactly
   that input's size; without --input every input is filled from a fixed seed, uniform in
   [-1, 1]. Outputs: --output writes the model's outputs as raw float32, one file each, in order.

   Exit status: 0 success, 1 the model or a file could not be loaded / compiled / run,
   2 bad command line or an unavailable backend.

   Build: make tools   (or: cc -std=c99 -O2 -I. examples/fuse_run.c -o fuse_run -lm -lpthread) */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#endif
#define FUSE_IMPLEMENTATION
#include "fuse.h"
#include "fuse_dnnl.h"

#include <errno.h>
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_FILES 64 /* --input / --output files */
#define SHOW_VALUES 8

static const char *usage_text =
    "usage: fuse_run model.onnx [options]\n"
    "\n"
    "Loads an ONNX model, optimizes it with fuse_optimize, compiles and runs it, and prints\n"
    "the plan's steps, the time per run and GFLOP/s.\n"
    "\n"
    "options:\n"
    "  --print             print the graph before and after fuse_optimize\n"
    "  --runs N            timed runs after one warm-up run (default 10)\n"
    "  --threads N         threads for the plan (default 0 = as many as available)\n"
    "  --isa ISA           auto (default), avx512, avx2 or scalar\n"
    "  --backend B         builtin (default) or dnnl (oneDNN, when this build has it)\n"
    "  --input FILE        raw float32 data for the next model input, exactly its size;\n"
    "                      repeat once per input, in order (default: random, fixed seed,\n"
    "                      uniform in [-1, 1])\n"
    "  --output FILE       write the next model output as raw float32; repeat for more\n"
    "  --no-optimize       run the graph as loaded, op by op\n"
    "  -h, --help          this text\n"
    "\n"
    "exit status: 0 success, 1 load / compile / run / file error, 2 bad command line or\n"
    "backend unavailable\n";

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

static size_t numel(const fuse_graph *g, fuse_value v) {
  const int64_t *shape = fuse_value_shape(g, v);
  int r = fuse_value_rank(g, v), i;
  size_t n = 1;
  for (i = 0; i < r; i++) n *= (size_t)shape[i];
  return n;
}

static void print_shape(FILE *f, const fuse_graph *g, fuse_value v) {
  const int64_t *shape = fuse_value_shape(g, v);
  int r = fuse_value_rank(g, v), i;
  fputc('[', f);
  for (i = 0; i < r; i++) fprintf(f, "%s%lld", i ? ", " : "", (long long)shape[i]);
  fputc(']', f);
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

static void file_write(void *user, const char *s, size_t n) { fwrite(s, 1, n, (FILE *)user); }

/* ------------------------------------------------------------ flop counting -- */
/* fuse.h has no public accessor for a value's op, so the multiply-adds are counted on the
   text form of the graph as loaded: every "%label: [shape]" gives a shape, and every
   "%y: [...] = conv2d(%x, %w, ...)" / "= matmul(%a, %b)" line a reduction. conv2d:
   numel(y) * (C/groups) * KH * KW from the weight [K, C/groups, KH, KW]; matmul:
   numel(y) * K with K the last dim of a (numpy rules, 1-D operands included). */

typedef struct label_shape {
  const char *label; /* points into the text; ends where the label ends */
  size_t len;
  int rank;
  int64_t shape[FUSE_MAX_RANK];
} label_shape;

typedef struct flop_count {
  double macs;
  int reductions; /* conv2d and matmul ops seen */
  int unknown;    /* of those, how many had an operand shape we could not find */
} flop_count;

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

static const label_shape *find_label(const label_shape *ls, int n, const char *label, size_t len) {
  int i;
  for (i = 0; i < n; i++)
    if (ls[i].len == len && memcmp(ls[i].label, label, len) == 0) return &ls[i];
  return NULL;
}

static double shape_numel(int rank, const int64_t *shape) {
  double n = 1;
  int i;
  for (i = 0; i < rank; i++) n *= (double)shape[i];
  return n;
}

/* Pass 1 collects every label's shape; pass 2 counts the reductions. 0: out of memory. */
static int count_flops(const char *text, flop_count *out) {
  label_shape *ls = NULL;
  int n = 0, cap = 0, pass;
  memset(out, 0, sizeof *out);
  for (pass = 0; pass < 2; pass++) {
    const char *line = text;
    while (*line) {
      const char *end = strchr(line, '\n'), *s = line;
      const char *first_label = NULL, *first_end = NULL, *op = NULL;
      int first_rank = 0;
      int64_t first_shape[FUSE_MAX_RANK];
      if (!end) end = line + strlen(line);
      while (s < end && *s != '#') { /* a comment ends the line; labels may quote a '#' */
        size_t len = *s == '%' ? scan_label(s) : 0;
        if (len && s + len <= end) {
          int rank;
          int64_t shape[FUSE_MAX_RANK];
          const char *after = scan_shape(s + len, &rank, shape);
          if (after && after <= end) {
            if (pass == 0) { /* each label is defined (with its shape) once */
              if (n == cap) {
                label_shape *bigger;
                cap = cap ? cap * 2 : 256;
                bigger = (label_shape *)realloc(ls, (size_t)cap * sizeof *ls);
                if (!bigger) {
                  free(ls);
                  return 0;
                }
                ls = bigger;
              }
              ls[n].label = s;
              ls[n].len = len;
              ls[n].rank = rank;
              memcpy(ls[n].shape, shape, sizeof shape);
              n++;
            }
            if (!first_label) {
              first_label = s;
              first_end = after;
              first_rank = rank;
              memcpy(first_shape, shape, sizeof shape);
            }
            s = after;
            continue;
          }
          s += len;
          continue;
        }
        s++;
      }
      /* "%y: [...] = conv2d(" right after the first label's shape */
      if (pass == 1 && first_label && first_label == skip_spaces(line)) {
        const char *p = skip_spaces(first_end);
        int is_conv = 0;
        if (*p == '=') {
          p = skip_spaces(p + 1);
          if (strncmp(p, "conv2d(", 7) == 0) is_conv = 1, op = p + 7;
          else if (strncmp(p, "matmul(", 7) == 0) op = p + 7;
        }
        if (op) { /* operands: "%a, %b" */
          const char *a = skip_spaces(op), *b;
          size_t a_len = scan_label(a), b_len = 0;
          const label_shape *sa = NULL, *sb = NULL;
          b = a_len ? skip_spaces(a + a_len) : NULL;
          if (b && *b == ',') {
            b = skip_spaces(b + 1);
            b_len = scan_label(b);
          }
          if (a_len) sa = find_label(ls, n, a, a_len);
          if (b_len) sb = find_label(ls, n, b, b_len);
          out->reductions++;
          if (is_conv && sb && sb->rank == 4)
            out->macs += shape_numel(first_rank, first_shape) *
                         shape_numel(3, sb->shape + 1);
          else if (!is_conv && sa && sa->rank >= 1)
            out->macs += shape_numel(first_rank, first_shape) * (double)sa->shape[sa->rank - 1];
          else
            out->unknown++;
        }
      }
      line = *end ? end + 1 : end;
    }
  }
  free(ls);
  return 1;
}

/* ------------------------------------------------------------------- files -- */

static float *read_input_file(const char *path, size_t want, int *exit_code) {
  FILE *f = fopen(path, "rb");
  float *data;
  long size;
  *exit_code = 1;
  if (!f) {
    fprintf(stderr, "fuse_run: cannot open input '%s': %s\n", path, strerror(errno));
    return NULL;
  }
  if (fseek(f, 0, SEEK_END) != 0 || (size = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) != 0) {
    fprintf(stderr, "fuse_run: cannot read input '%s': %s\n", path, strerror(errno));
    fclose(f);
    return NULL;
  }
  if ((unsigned long)size != want * sizeof(float)) {
    fprintf(stderr,
            "fuse_run: input '%s' has %ld bytes; the model input needs %lu floats = %lu bytes\n",
            path, size, (unsigned long)want, (unsigned long)(want * sizeof(float)));
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
    fprintf(stderr, "fuse_run: cannot read input '%s': %s\n", path,
            ferror(f) ? strerror(errno) : "file ended early");
    free(data);
    fclose(f);
    return NULL;
  }
  fclose(f);
  *exit_code = 0;
  return data;
}

static int write_output_file(const char *path, const float *data, size_t n) {
  FILE *f = fopen(path, "wb");
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
  int print, optimize, dnnl;
  long runs, threads;
  fuse_isa isa;
  const char *isa_name;
  const char *inputs[MAX_FILES], *outputs[MAX_FILES];
  int num_inputs, num_outputs;
} options;

/* 0: run; 1: --help printed; 2: bad command line (message printed) */
static int parse_args(int argc, char **argv, options *o) {
  int i;
  memset(o, 0, sizeof *o);
  o->optimize = 1;
  o->runs = 10;
  o->isa = FUSE_ISA_AUTO;
  o->isa_name = "auto";
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
    } else if (strcmp(a, "--runs") == 0 || strcmp(a, "--threads") == 0 ||
               strcmp(a, "--isa") == 0 || strcmp(a, "--backend") == 0 ||
               strcmp(a, "--input") == 0 || strcmp(a, "--output") == 0) {
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
        else if (strcmp(value, "scalar") == 0) o->isa = FUSE_ISA_SCALAR;
        else {
          fail_usage("--isa expects auto, avx512, avx2 or scalar, got '%s'", value);
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
    } else if (o->model) {
      fail_usage("one model at a time: got '%s' and '%s'", o->model, a);
      return 2;
    } else {
      o->model = a;
    }
  }
  if (!o->model) {
    fputs(usage_text, stderr);
    return 2;
  }
  return 0;
}

static void print_values(const fuse_graph *g, fuse_value v, const float *data) {
  size_t n = numel(g, v), i, best = 0;
  double sum = 0, lo = INFINITY, hi = -INFINITY;
  printf("  %s ", value_label(g, v));
  print_shape(stdout, g, v);
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

int main(int argc, char **argv) {
  options o;
  fuse_graph *g = NULL;
  fuse_plan *plan = NULL;
  fuse_result r;
  fuse_compile_options copt;
  const fuse_backend *backends[2] = {NULL, NULL};
  char compile_error[512];
  text_buffer text;
  flop_count flops;
  int exit_code = 1, i, n_in = 0, n_out = 0, ops_before, ops_after, composites;
  float **in = NULL, **out = NULL;
  double *times = NULL, median, fastest;
  FILE *probe;
  long k;

  memset(&text, 0, sizeof text);
  switch (parse_args(argc, argv, &o)) {
  case 0: break;
  case 1: return 0;
  default: return 2;
  }

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
  r = fuse_onnx_load_file(o.model, NULL, &g);
  if (r != FUSE_OK) {
    const char *why = g ? fuse_graph_error(g) : "out of memory";
    fprintf(stderr, "fuse_run: cannot load '%s': %s: %s\n", o.model, fuse_result_string(r),
            why && *why ? why : "(no message)");
    goto done;
  }
  n_in = fuse_graph_input_count(g);
  n_out = fuse_graph_output_count(g);
  if (o.num_inputs && o.num_inputs != n_in) {
    fprintf(stderr, "fuse_run: %d --input file%s given; the model has %d input%s (", o.num_inputs,
            o.num_inputs == 1 ? "" : "s", n_in, n_in == 1 ? "" : "s");
    for (i = 0; i < n_in; i++) {
      fprintf(stderr, "%s%s ", i ? ", " : "", value_label(g, fuse_graph_input(g, i)));
      print_shape(stderr, g, fuse_graph_input(g, i));
    }
    fprintf(stderr, ")\n");
    exit_code = 2;
    goto done;
  }
  if (o.num_outputs > n_out) {
    fprintf(stderr, "fuse_run: %d --output files given; the model has %d output%s\n",
            o.num_outputs, n_out, n_out == 1 ? "" : "s");
    exit_code = 2;
    goto done;
  }

  printf("model: %s\n", o.model);
  for (i = 0; i < n_in; i++) {
    printf("  input %d: %s ", i, value_label(g, fuse_graph_input(g, i)));
    print_shape(stdout, g, fuse_graph_input(g, i));
    if (o.num_inputs) printf(" from %s\n", o.inputs[i]);
    else if (i == 0) printf(" random: uniform in [-1, 1], seed %lu\n", (unsigned long)rng_state);
    else printf(" random: the same stream, continued\n");
  }
  for (i = 0; i < n_out; i++) {
    printf("  output %d: %s ", i, value_label(g, fuse_graph_output(g, i)));
    print_shape(stdout, g, fuse_graph_output(g, i));
    printf("\n");
  }

  /* the multiply-adds, from the graph as loaded */
  if (fuse_graph_write(g, text_write, &text) != FUSE_OK || text.failed || !text.buf ||
      !count_flops(text.buf, &flops)) {
    fprintf(stderr, "fuse_run: out of memory writing the graph\n");
    goto done;
  }
  if (o.print) {
    printf("\ngraph as loaded:\n");
    fputs(text.buf, stdout);
  }
  ops_before = fuse_graph_op_count(g);

  if (o.optimize) {
    r = fuse_optimize(g, o.dnnl ? "dnnl" : "fuse");
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
  ops_after = fuse_graph_op_count(g);
  composites = fuse_composite_count(g);

  /* compile */
  memset(&copt, 0, sizeof copt);
  copt.isa = o.isa;
  copt.num_threads = (int)o.threads;
  copt.backends = o.dnnl ? backends : NULL;
  copt.error = compile_error;
  copt.error_size = sizeof compile_error;
  compile_error[0] = 0;
  if (o.threads > 1)
    fprintf(stderr, "fuse_run: note: fuse.h %s runs plans single-threaded; --threads %ld has no "
                    "effect yet\n", FUSE_VERSION_STRING, o.threads);
  r = fuse_compile(g, &copt, &plan);
  if (r != FUSE_OK) {
    fprintf(stderr, "fuse_run: cannot compile '%s': %s: %s\n", o.model, fuse_result_string(r),
            compile_error[0] ? compile_error : fuse_graph_error(g));
    goto done;
  }

  /* inputs and outputs */
  in = (float **)calloc((size_t)n_in + 1, sizeof *in);
  out = (float **)calloc((size_t)n_out + 1, sizeof *out);
  times = (double *)malloc((size_t)o.runs * sizeof *times);
  if (!in || !out || !times) {
    fprintf(stderr, "fuse_run: out of memory\n");
    goto done;
  }
  for (i = 0; i < n_in; i++) {
    size_t n = numel(g, fuse_graph_input(g, i)), j;
    if (o.num_inputs) {
      int code;
      in[i] = read_input_file(o.inputs[i], n, &code);
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
  }
  for (i = 0; i < n_out; i++) {
    out[i] = (float *)malloc(numel(g, fuse_graph_output(g, i)) * sizeof(float) + 1);
    if (!out[i]) {
      fprintf(stderr, "fuse_run: out of memory for output %d\n", i);
      goto done;
    }
  }

  /* run: one warm-up, then the timed runs */
  for (k = -1; k < o.runs; k++) {
    double t0 = now_ms();
    r = fuse_run(plan, (const float *const *)in, out, NULL);
    if (r != FUSE_OK) {
      fprintf(stderr, "fuse_run: run failed: %s\n", fuse_result_string(r));
      goto done;
    }
    if (k >= 0) times[k] = now_ms() - t0;
  }
  fastest = times[0];
  for (k = 1; k < o.runs; k++)
    if (times[k] < fastest) fastest = times[k];
  qsort(times, (size_t)o.runs, sizeof *times, compare_doubles);
  median = o.runs % 2 ? times[o.runs / 2] : 0.5 * (times[o.runs / 2 - 1] + times[o.runs / 2]);

  /* report */
  if (o.optimize)
    printf("\nops: %d as loaded, %d after fuse_optimize, %d composite%s\n", ops_before,
           ops_after, composites, composites == 1 ? "" : "s");
  else
    printf("\nops: %d as loaded (not optimized: --no-optimize), %d composite%s\n", ops_after,
           composites, composites == 1 ? "" : "s");
  printf("workspace: %lu bytes\n", (unsigned long)fuse_plan_workspace_size(plan));
  {
    fuse_isa best = fuse_cpu_isa();
    printf("isa: %s (this cpu: %s), backend: %s, threads: ", o.isa_name,
           best == FUSE_ISA_AVX512 ? "avx512" : best == FUSE_ISA_AVX2 ? "avx2" : "scalar",
           o.dnnl ? "dnnl" : "builtin");
    if (o.threads) printf("%ld\n", o.threads);
    else printf("default\n");
  }
  printf("\nplan: %d step%s\n", fuse_plan_step_count(plan),
         fuse_plan_step_count(plan) == 1 ? "" : "s");
  fuse_plan_write(plan, file_write, stdout);

  printf("\ntime over %ld run%s after one warm-up (fuse.h %s cannot time single steps yet, so "
         "the table has one row):\n", o.runs, o.runs == 1 ? "" : "s", FUSE_VERSION_STRING);
  printf("  %-16s %12s %12s\n", "", "median ms", "min ms");
  printf("  %-16s %12.4g %12.4g\n", "whole plan", median, fastest);
  if (flops.macs > 0 && median > 0) {
    printf("GFLOP/s: %.2f at the median, %.2f at the fastest (%.4g GFLOP per run: 2 x "
           "multiply-adds of %d conv2d / matmul op%s)\n",
           2.0 * flops.macs / (median * 1e6), 2.0 * flops.macs / (fastest * 1e6),
           2.0 * flops.macs * 1e-9, flops.reductions, flops.reductions == 1 ? "" : "s");
  } else {
    printf("GFLOP/s: n/a (no conv2d or matmul in the graph)\n");
  }
  if (flops.unknown)
    printf("  (%d conv2d / matmul op%s not counted: operand shapes not found)\n", flops.unknown,
           flops.unknown == 1 ? "" : "s");

  printf("\noutputs:\n");
  for (i = 0; i < n_out; i++) print_values(g, fuse_graph_output(g, i), out[i]);
  for (i = 0; i < o.num_outputs; i++) {
    size_t n = numel(g, fuse_graph_output(g, i));
    if (!write_output_file(o.outputs[i], out[i], n)) goto done;
    printf("wrote output %d (%lu floats) to %s\n", i, (unsigned long)n, o.outputs[i]);
  }
  exit_code = 0;

done:
  if (in)
    for (i = 0; i < n_in; i++) free(in[i]);
  if (out)
    for (i = 0; i < n_out; i++) free(out[i]);
  free(in);
  free(out);
  free(times);
  free(text.buf);
  fuse_plan_destroy(plan);
  fuse_graph_destroy(g);
  return exit_code;
}
