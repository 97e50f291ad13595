/* test_golden.c - fuse.h against PyTorch reference outputs.

   Every tests/data/<case>.golden file (written by tools/gen_golden.py) is one case: the graph
   in fuse.h's text form, then binary records with the constants, the inputs and the expected
   outputs. For each case this test

     1. parses the text with fuse_graph_parse and fills the constants with
        fuse_graph_set_constant,
     2. checks the input / output counts and shapes against the records,
     3. compiles, runs, and compares every output with the reference - for the default ISA,
        then for each kernel path the CPU has (scalar, avx2, avx512), the scalar one also
        with a caller's workspace,
     4. round-trips the text form: p1 = print(parsed), p2 = print(parse(p1)) must be equal
        byte for byte, and the re-parsed graph (constants filled again) must give the same
        outputs.

   Four cases are also built directly through the C builder API (api_* tests below) and
   compared with the same reference outputs and with the printed form of the parsed graph.

   TOLERANCE: each output must have a normwise relative error
   max_i |got_i - want_i| / max_i |want_i| <= 1e-4 (GOLDEN_TOL; runner.h's CHECK_NEAR_ARRAY).
   The references are computed in float64 and rounded to float32 once, so the error measured
   is fuse.h's own.

   FILE FORMAT (see also the top of tools/gen_golden.py)

       # <case>: <description>
       graph(...) {
         ...                       fuse.h text form; ops carry no shape annotations
       }
       %%
       <records, little-endian, until the end of the file>

   The text ends at the first "\n%%\n"; records follow it directly:

       u8   kind      'C' constant (by name, fill with fuse_graph_set_constant),
                      'I' input (in header order), 'O' output (in return order)
       u32  name_len, then name_len bytes of name (raw, not quoted)
       u32  rank, then rank x i64 dims
       u64  count (product of dims, 1 for rank 0), then count x f32

   Usage: build/test_golden [data_dir]      (run from the repository root; default tests/data)
   The test fails when the directory cannot be read or holds no case. */
#define FUSE_IMPLEMENTATION
#include "fuse.h"
#include "runner.h"
#include "blob_buffer.h"

#include <dirent.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define GOLDEN_TOL 1e-4

/* ============================================================ reading a .golden file */

typedef struct golden_record {
  char kind; /* 'C', 'I' or 'O' */
  char *name;
  int rank;
  int64_t dims[FUSE_MAX_RANK];
  size_t count;
  float *data;
} golden_record;

typedef struct golden_case {
  char *text; /* the graph text, NUL-terminated */
  golden_record *recs;
  int num_recs;
} golden_case;

static void golden_free(golden_case *gc) {
  int i;
  for (i = 0; i < gc->num_recs; i++) {
    free(gc->recs[i].name);
    free(gc->recs[i].data);
  }
  free(gc->recs);
  free(gc->text);
  memset(gc, 0, sizeof *gc);
}

static uint32_t golden_u32(const unsigned char *p) {
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t golden_u64(const unsigned char *p) {
  return (uint64_t)golden_u32(p) | (uint64_t)golden_u32(p + 4) << 32;
}

static unsigned char *golden_read_file(const char *path, size_t *size) {
  FILE *f = fopen(path, "rb");
  unsigned char *buf = NULL;
  size_t cap = 0, n = 0;
  if (!f) return NULL;
  for (;;) {
    size_t got;
    if (n == cap) {
      unsigned char *nb = (unsigned char *)realloc(buf, cap ? cap * 2 : 65536);
      if (!nb) {
        free(buf);
        fclose(f);
        return NULL;
      }
      buf = nb;
      cap = cap ? cap * 2 : 65536;
    }
    got = fread(buf + n, 1, cap - n, f);
    n += got;
    if (got == 0) break;
  }
  fclose(f);
  *size = n;
  return buf;
}

/* Returns 1 and fills gc, or 0 with a reason in why. */
static int golden_load(const char *path, golden_case *gc, const char **why) {
  size_t size = 0, pos, text_end;
  unsigned char *buf = golden_read_file(path, &size);
  memset(gc, 0, sizeof *gc);
  *why = "cannot read the file";
  if (!buf) return 0;
  *why = "no \"\\n%%\\n\" line after the graph text";
  for (text_end = 0; text_end + 4 <= size; text_end++)
    if (memcmp(buf + text_end, "\n%%\n", 4) == 0) break;
  if (text_end + 4 > size) goto fail;
  *why = "out of memory";
  gc->text = (char *)malloc(text_end + 2);
  if (!gc->text) goto fail;
  memcpy(gc->text, buf, text_end + 1);
  gc->text[text_end + 1] = '\0';
  pos = text_end + 4;
  while (pos < size) {
    golden_record *r, *nr;
    uint32_t name_len, rank, k;
    uint64_t count, prod = 1;
    *why = "truncated record";
    if (size - pos < 1 + 4) goto fail;
    nr = (golden_record *)realloc(gc->recs, sizeof *nr * (size_t)(gc->num_recs + 1));
    if (!nr) goto fail;
    gc->recs = nr;
    r = &gc->recs[gc->num_recs];
    memset(r, 0, sizeof *r);
    gc->num_recs++;
    r->kind = (char)buf[pos];
    *why = "bad record kind";
    if (r->kind != 'C' && r->kind != 'I' && r->kind != 'O') goto fail;
    name_len = golden_u32(buf + pos + 1);
    pos += 5;
    *why = "truncated record";
    if (size - pos < (size_t)name_len + 4) goto fail;
    r->name = (char *)malloc((size_t)name_len + 1);
    if (!r->name) goto fail;
    memcpy(r->name, buf + pos, name_len);
    r->name[name_len] = '\0';
    pos += name_len;
    rank = golden_u32(buf + pos);
    pos += 4;
    *why = "record rank too large";
    if (rank > FUSE_MAX_RANK) goto fail;
    r->rank = (int)rank;
    *why = "truncated record";
    if (size - pos < 8 * (size_t)rank + 8) goto fail;
    for (k = 0; k < rank; k++) {
      r->dims[k] = (int64_t)golden_u64(buf + pos);
      pos += 8;
      if (r->dims[k] <= 0 || r->dims[k] > (1 << 24)) {
        *why = "bad record dimension";
        goto fail;
      }
      prod *= (uint64_t)r->dims[k];
    }
    count = golden_u64(buf + pos);
    pos += 8;
    *why = "record count differs from its shape";
    if (count != prod || prod > (1u << 24)) goto fail;
    r->count = (size_t)count;
    *why = "truncated record data";
    if ((size - pos) / 4 < r->count) goto fail;
    r->data = (float *)malloc(r->count * sizeof(float));
    if (!r->data) goto fail;
    for (k = 0; k < (uint32_t)r->count; k++) {
      uint32_t bits = golden_u32(buf + pos + 4 * (size_t)k);
      memcpy(&r->data[k], &bits, 4);
    }
    pos += 4 * r->count;
  }
  free(buf);
  *why = "";
  return 1;
fail:
  free(buf);
  golden_free(gc);
  return 0;
}

static int golden_count(const golden_case *gc, char kind) {
  int i, n = 0;
  for (i = 0; i < gc->num_recs; i++) n += gc->recs[i].kind == kind;
  return n;
}

static const golden_record *golden_nth(const golden_case *gc, char kind, int nth) {
  int i;
  for (i = 0; i < gc->num_recs; i++)
    if (gc->recs[i].kind == kind && nth-- == 0) return &gc->recs[i];
  return NULL;
}

static const golden_record *golden_find(const golden_case *gc, char kind, const char *name) {
  int i;
  for (i = 0; i < gc->num_recs; i++)
    if (gc->recs[i].kind == kind && strcmp(gc->recs[i].name, name) == 0) return &gc->recs[i];
  return NULL;
}

/* ==================================================================== helpers */

typedef struct golden_strbuf {
  char *p;
  size_t n, cap;
  int oom;
} golden_strbuf;

static void golden_strbuf_write(void *user, const char *text, size_t len) {
  golden_strbuf *sb = (golden_strbuf *)user;
  if (sb->oom) return;
  if (sb->n + len + 1 > sb->cap) {
    size_t cap = sb->cap ? sb->cap : 1024;
    char *np;
    while (sb->n + len + 1 > cap) cap *= 2;
    np = (char *)realloc(sb->p, cap);
    if (!np) {
      sb->oom = 1;
      return;
    }
    sb->p = np;
    sb->cap = cap;
  }
  memcpy(sb->p + sb->n, text, len);
  sb->n += len;
  sb->p[sb->n] = '\0';
}

/* The graph's text form as a malloc'd string, or NULL. */
static char *golden_print(const fuse_graph *g) {
  golden_strbuf sb = {NULL, 0, 0, 0};
  fuse_result r = fuse_graph_write(g, golden_strbuf_write, &sb);
  if (r != FUSE_OK || sb.oom) {
    free(sb.p);
    return NULL;
  }
  if (!sb.p) sb.p = (char *)calloc(1, 1);
  return sb.p;
}

static void golden_shape_string(char *out, size_t cap, int rank, const int64_t *dims) {
  size_t n = 0;
  int i;
  n += (size_t)snprintf(out + n, cap - n, "[");
  for (i = 0; dims && i < rank && n < cap; i++)
    n += (size_t)snprintf(out + n, cap - n, i ? ",%lld" : "%lld", (long long)dims[i]);
  if (n < cap) snprintf(out + n, cap - n, "]");
}

/* Checks that value v has the record's shape; prints the difference. */
static int golden_same_shape(const char *what, const fuse_graph *g, fuse_value v,
                             const golden_record *rec) {
  int rank = fuse_value_rank(g, v), i, ok;
  const int64_t *shape = fuse_value_shape(g, v);
  ok = rank == rec->rank && (rank == 0 || shape != NULL);
  for (i = 0; ok && i < rank; i++) ok = shape[i] == rec->dims[i];
  if (!ok) {
    char a[160], b[160];
    golden_shape_string(a, sizeof a, rank < 0 ? 0 : rank, shape);
    golden_shape_string(b, sizeof b, rec->rank, rec->dims);
    fprintf(stderr, "  %s: %s: %c '%s' has shape %s (rank %d), the reference %s\n",
            runner_current, what, rec->kind, rec->name, a, rank, b);
  }
  return ok;
}

static void golden_fill_constants(const char *what, fuse_graph *g, const golden_case *gc) {
  int i;
  for (i = 0; i < gc->num_recs; i++) {
    const golden_record *rec = &gc->recs[i];
    fuse_result r;
    if (rec->kind != 'C') continue;
    r = fuse_graph_set_constant(g, rec->name, rec->data, rec->count);
    if (r != FUSE_OK)
      fprintf(stderr, "  %s: %s: set_constant '%s' (%lu values): %s / %s\n", runner_current,
              what, rec->name, (unsigned long)rec->count, fuse_result_string(r),
              fuse_graph_error(g));
    CHECK_EQ_INT(r, FUSE_OK);
  }
}

static const char *golden_isa_name(fuse_isa isa) {
  switch (isa) {
  case FUSE_ISA_SCALAR: return "scalar";
  case FUSE_ISA_AVX2: return "avx2";
  case FUSE_ISA_AVX512: return "avx512";
  case FUSE_ISA_NEON: return "neon";
  default: return "auto";
  }
}

/* Compiles g for isa, runs it on the case's inputs (with the plan's own workspace, or with a
   caller's 64-byte aligned block when own_workspace is 0) and compares every output with the
   reference. */
static int golden_blob_cases;
static void golden_blob_round_trip(const char *what, const fuse_plan *plan, const float **in,
                                   float **want, int no, const golden_case *gc) {
  blob b;
  fuse_plan_load_options lo;
  fuse_plan *loaded = NULL;
  float **got = (float **)calloc((size_t)no + 1, sizeof *got);
  char why[256];
  fuse_result r;
  int i, ok = got != NULL;
  memset(&b, 0, sizeof b);
  r = fuse_plan_save(plan, blob_write, &b);
  CHECK_EQ_INT(r, FUSE_OK);
  CHECK(!b.failed && got);
  memset(&lo, 0, sizeof lo);
  lo.error = why, lo.error_size = sizeof why;
  lo.copy = golden_blob_cases & 1;
  lo.verify_weights = 1;
  golden_blob_cases++;
  if (r == FUSE_OK && !b.failed && ok) {
    r = fuse_plan_load(b.data, b.len, &lo, &loaded);
    if (r != FUSE_OK) fprintf(stderr, "  %s: %s: fuse_plan_load: %s\n", runner_current, what, why);
    CHECK_EQ_INT(r, FUSE_OK);
  }
  if (loaded) {
    CHECK_EQ_INT(fuse_plan_step_count(loaded), fuse_plan_step_count(plan));
    CHECK_EQ_INT(fuse_plan_weights_size(loaded), fuse_plan_weights_size(plan));
    for (i = 0; i < no; i++) {
      got[i] = (float *)malloc(golden_nth(gc, 'O', i)->count * sizeof(float) + 1);
      ok &= got[i] != NULL;
    }
    CHECK(ok);
    r = ok ? fuse_run(loaded, in, got, NULL) : FUSE_ERROR_OUT_OF_MEMORY;
    CHECK_EQ_INT(r, FUSE_OK);
    for (i = 0; r == FUSE_OK && i < no; i++)
      if (memcmp(got[i], want[i], golden_nth(gc, 'O', i)->count * sizeof(float)) != 0) {
        fprintf(stderr, "  %s: %s: the loaded plan's output %d differs from the plan's\n",
                runner_current, what, i);
        CHECK(!"a loaded plan gives the plan's bits");
      }
  }
  for (i = 0; got && i < no; i++) free(got[i]);
  free(got);
  fuse_plan_destroy(loaded);
  free(b.raw);
}

static void golden_check_graph_isa(const char *what_base, const fuse_graph *g,
                                   const golden_case *gc, fuse_isa isa, int own_workspace) {
  int ni = golden_count(gc, 'I'), no = golden_count(gc, 'O'), i, shapes_ok = 1;
  fuse_plan *plan = NULL;
  fuse_compile_options opt;
  const float **in;
  float **out;
  fuse_result r;
  void *ws_block = NULL, *ws = NULL;
  char what[96];

  snprintf(what, sizeof what, "%s/%s%s", what_base, golden_isa_name(isa),
           own_workspace ? "" : "/caller-workspace");
  memset(&opt, 0, sizeof opt);
  opt.isa = isa;

  CHECK_EQ_INT(fuse_graph_input_count(g), ni);
  CHECK_EQ_INT(fuse_graph_output_count(g), no);
  if (fuse_graph_input_count(g) != ni || fuse_graph_output_count(g) != no) return;
  for (i = 0; i < ni; i++) {
    const golden_record *rec = golden_nth(gc, 'I', i);
    fuse_value v = fuse_graph_input(g, i);
    const char *name = fuse_value_name(g, v);
    shapes_ok &= golden_same_shape(what, g, v, rec);
    if (!name || strcmp(name, rec->name) != 0) {
      fprintf(stderr, "  %s: %s: input %d is named '%s', expected '%s'\n", runner_current, what,
              i, name ? name : "(none)", rec->name);
      CHECK(!"input names match the reference");
    }
  }
  for (i = 0; i < no; i++) shapes_ok &= golden_same_shape(what, g, fuse_graph_output(g, i),
                                                          golden_nth(gc, 'O', i));
  CHECK(shapes_ok);
  if (!shapes_ok) return;

  r = fuse_compile(g, &opt, &plan);
  if (r != FUSE_OK)
    fprintf(stderr, "  %s: %s: fuse_compile: %s: %s\n", runner_current, what,
            fuse_result_string(r), fuse_graph_error(g));
  CHECK_EQ_INT(r, FUSE_OK);
  if (r != FUSE_OK || !plan) return;

  in = (const float **)calloc((size_t)ni + 1, sizeof *in);
  out = (float **)calloc((size_t)no + 1, sizeof *out);
  CHECK(in && out);
  for (i = 0; in && i < ni; i++) in[i] = golden_nth(gc, 'I', i)->data;
  for (i = 0; out && i < no; i++) {
    const golden_record *rec = golden_nth(gc, 'O', i);
    size_t k;
    out[i] = (float *)malloc(rec->count * sizeof(float));
    CHECK(out[i] != NULL);
    for (k = 0; out[i] && k < rec->count; k++) out[i][k] = NAN; /* unwritten = fails */
  }
  if (!own_workspace) {
    size_t size = fuse_plan_workspace_size(plan);
    ws_block = malloc(size + 64);
    CHECK(ws_block != NULL);
    if (!ws_block) goto done;
    ws = (void *)(((uintptr_t)ws_block + 63) & ~(uintptr_t)63);
  }
  if (in && out) {
    for (i = 0; i < no; i++)
      if (!out[i]) goto done;
    r = fuse_run(plan, in, out, ws);
    if (r != FUSE_OK)
      fprintf(stderr, "  %s: %s: fuse_run: %s\n", runner_current, what, fuse_result_string(r));
    CHECK_EQ_INT(r, FUSE_OK);
    for (i = 0; r == FUSE_OK && i < no; i++) {
      const golden_record *rec = golden_nth(gc, 'O', i);
      double e = runner_rel_error(out[i], rec->data, rec->count);
      if (!(e <= GOLDEN_TOL)) {
        size_t k, worst = 0;
        double wd = -1;
        for (k = 0; k < rec->count; k++) {
          double d = fabs((double)out[i][k] - (double)rec->data[k]);
          if (d != d) d = INFINITY;
          if (d > wd) {
            wd = d;
            worst = k;
          }
        }
        fprintf(stderr,
                "  %s: %s: output %d (%s, %lu values): relative error %.3g; worst at index "
                "%lu: got %.9g, want %.9g\n",
                runner_current, what, i, rec->name, (unsigned long)rec->count, e,
                (unsigned long)worst, (double)out[i][worst], (double)rec->data[worst]);
      }
      CHECK_NEAR_ARRAY(out[i], rec->data, rec->count, GOLDEN_TOL);
    }
  }
  /* the plan through a blob: saved, loaded in place (even cases) or copied (odd), its
     outputs bit for bit the compiled plan's */
  if (in && out && r == FUSE_OK) golden_blob_round_trip(what, plan, in, out, no, gc);
done:
  for (i = 0; out && i < no; i++) free(out[i]);
  free(out);
  free((void *)in);
  free(ws_block);
  fuse_plan_destroy(plan);
}

static void golden_check_graph(const char *what, const fuse_graph *g, const golden_case *gc) {
  golden_check_graph_isa(what, g, gc, FUSE_ISA_AUTO, 1);
}

/* Every kernel path this CPU has: scalar, avx2, avx512 (x86), neon (ARM); the scalar one with
   a caller's workspace too. */
static void golden_check_graph_all_isas(const char *what, const fuse_graph *g,
                                        const golden_case *gc) {
  fuse_isa best = fuse_cpu_isa(), isa;
  golden_check_graph_isa(what, g, gc, FUSE_ISA_AUTO, 1);
  golden_check_graph_isa(what, g, gc, FUSE_ISA_SCALAR, 0);
  for (isa = FUSE_ISA_SCALAR; isa <= FUSE_ISA_NEON; isa = (fuse_isa)(isa + 1))
    if (isa == FUSE_ISA_SCALAR || isa == best || (isa == FUSE_ISA_AVX2 && best == FUSE_ISA_AVX512))
      golden_check_graph_isa(what, g, gc, isa, 1);
}

/* Parses the case's text and fills its constants; NULL (after failed CHECKs) on error. */
static fuse_graph *golden_parse(const char *what, const char *text, const golden_case *gc) {
  fuse_graph *g = NULL;
  fuse_result r = fuse_graph_parse(text, NULL, &g);
  if (r != FUSE_OK)
    fprintf(stderr, "  %s: %s: fuse_graph_parse: %s: %s\n", runner_current, what,
            fuse_result_string(r), g ? fuse_graph_error(g) : "(no graph)");
  CHECK_EQ_INT(r, FUSE_OK);
  CHECK(g != NULL);
  if (r != FUSE_OK || !g) {
    fuse_graph_destroy(g);
    return NULL;
  }
  golden_fill_constants(what, g, gc);
  return g;
}

/* ============================================================= the file cases */

static const char *golden_dir = "tests/data";
static char **golden_names; /* case names (file names without .golden), sorted */
static int golden_num_names;
static int golden_dir_ok;
static char golden_path[4096];

static int golden_cmp(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

static void golden_list(const char *dir) {
  DIR *d = opendir(dir);
  struct dirent *e;
  if (!d) return;
  golden_dir_ok = 1;
  while ((e = readdir(d)) != NULL) {
    size_t n = strlen(e->d_name);
    char **nn;
    if (n <= 7 || strcmp(e->d_name + n - 7, ".golden") != 0) continue;
    nn = (char **)realloc(golden_names, sizeof *nn * (size_t)(golden_num_names + 1));
    if (!nn) break;
    golden_names = nn;
    golden_names[golden_num_names] = (char *)malloc(n - 6);
    if (!golden_names[golden_num_names]) break;
    memcpy(golden_names[golden_num_names], e->d_name, n - 7);
    golden_names[golden_num_names][n - 7] = '\0';
    golden_num_names++;
  }
  closedir(d);
  if (golden_num_names > 1)
    qsort(golden_names, (size_t)golden_num_names, sizeof *golden_names, golden_cmp);
}

TEST(data_dir_has_cases) {
  if (!golden_dir_ok) fprintf(stderr, "  cannot open the data directory '%s'\n", golden_dir);
  CHECK(golden_dir_ok);
  if (golden_dir_ok && golden_num_names == 0)
    fprintf(stderr, "  no *.golden case in '%s'\n", golden_dir);
  CHECK(golden_num_names > 0);
}

/* One golden file: golden_path names it; runner_current is the case name. */
static void golden_file_case(void) {
  golden_case gc;
  const char *why;
  fuse_graph *g, *g2;
  char *p1, *p2;

  if (!golden_load(golden_path, &gc, &why)) {
    fprintf(stderr, "  %s: %s\n", golden_path, why);
    CHECK(!"the golden file is well-formed");
    return;
  }
  CHECK(golden_count(&gc, 'O') > 0);
  g = golden_parse("parsed", gc.text, &gc);
  if (!g) {
    golden_free(&gc);
    return;
  }
  CHECK_EQ_INT(fuse_graph_status(g), FUSE_OK);
  golden_check_graph_all_isas("parsed", g, &gc);

  /* text round trip: print(parse(print(g))) == print(g), and the result still computes */
  p1 = golden_print(g);
  CHECK(p1 != NULL);
  if (p1) {
    g2 = golden_parse("reparsed", p1, &gc);
    if (g2) {
      p2 = golden_print(g2);
      CHECK(p2 != NULL);
      if (p2 && strcmp(p1, p2) != 0) {
        fprintf(stderr, "  %s: print(parse(print(g))) differs from print(g):\n%s---\n%s",
                runner_current, p1, p2);
        CHECK(!"the text form round-trips");
      }
      free(p2);
      golden_check_graph("reparsed", g2, &gc);
      fuse_graph_destroy(g2);
    } else {
      fprintf(stderr, "  %s: the printed text was:\n%s", runner_current, p1);
    }
    free(p1);
  }
  fuse_graph_destroy(g);
  golden_free(&gc);
}

/* ================================================== the same cases through the C API */

/* Each builder makes the graph of tools/gen_golden.py's case of the same name, creating
   inputs, constants and ops in the same order as the text, so that even the printed forms
   agree. Shapes and data come from the case's records. */

static fuse_value api_input(fuse_graph *g, const golden_case *gc, const char *name) {
  const golden_record *rec = golden_find(gc, 'I', name);
  CHECK(rec != NULL);
  if (!rec) return FUSE_NONE;
  return fuse_input(g, name, rec->rank, rec->dims);
}

static fuse_value api_const(fuse_graph *g, const golden_case *gc, const char *name) {
  const golden_record *rec = golden_find(gc, 'C', name);
  CHECK(rec != NULL);
  if (!rec) return FUSE_NONE;
  return fuse_constant(g, name, rec->rank, rec->dims, rec->data);
}

static fuse_graph *build_seed_conv_bias_relu(const golden_case *gc) {
  fuse_graph *g = fuse_graph_create(NULL);
  fuse_conv2d_attrs ca;
  int64_t bshape[4] = {1, 4, 1, 1};
  fuse_value x, w, b, y;
  memset(&ca, 0, sizeof ca);
  ca.padding[0] = ca.padding[1] = ca.padding[2] = ca.padding[3] = 1;
  x = api_input(g, gc, "x");
  w = api_const(g, gc, "w");
  b = api_const(g, gc, "b");
  y = fuse_conv2d(g, x, w, &ca);
  y = fuse_add(g, y, fuse_reshape(g, b, 4, bshape));
  y = fuse_relu(g, y);
  fuse_output(g, y);
  return g;
}

static fuse_graph *build_grouped_conv_bias_relu6(const golden_case *gc) {
  fuse_graph *g = fuse_graph_create(NULL);
  fuse_conv2d_attrs ca;
  fuse_value x, w, b, y;
  memset(&ca, 0, sizeof ca);
  ca.strides[0] = ca.strides[1] = 2;
  ca.padding[0] = 1; /* top */
  ca.padding[3] = 1; /* right */
  ca.groups = 3;
  x = api_input(g, gc, "x");
  w = api_const(g, gc, "w");
  b = api_const(g, gc, "b");
  y = fuse_conv2d(g, x, w, &ca);
  y = fuse_add(g, b, y);
  y = fuse_maximum(g, y, fuse_scalar(g, 0.0f));
  y = fuse_minimum(g, y, fuse_scalar(g, 6.0f));
  fuse_output(g, y);
  return g;
}

static fuse_graph *build_resnet_block(const golden_case *gc) {
  fuse_graph *g = fuse_graph_create(NULL);
  fuse_conv2d_attrs ca;
  fuse_value x, w1, s1, b1, m1, v1, w2, s2, b2, m2, v2, y;
  memset(&ca, 0, sizeof ca);
  ca.padding[0] = ca.padding[1] = ca.padding[2] = ca.padding[3] = 1;
  ca.strides[0] = ca.strides[1] = 1;
  ca.dilation[0] = ca.dilation[1] = 1;
  ca.groups = 1;
  x = api_input(g, gc, "x");
  w1 = api_const(g, gc, "conv1.weight");
  s1 = api_const(g, gc, "bn1.weight");
  b1 = api_const(g, gc, "bn1.bias");
  m1 = api_const(g, gc, "bn1.running_mean");
  v1 = api_const(g, gc, "bn1.running_var");
  w2 = api_const(g, gc, "conv2.weight");
  s2 = api_const(g, gc, "bn2.weight");
  b2 = api_const(g, gc, "bn2.bias");
  m2 = api_const(g, gc, "bn2.running_mean");
  v2 = api_const(g, gc, "bn2.running_var");
  y = fuse_conv2d(g, x, w1, &ca);
  y = fuse_relu(g, fuse_batch_norm(g, y, s1, b1, m1, v1, 1e-5f));
  y = fuse_conv2d(g, y, w2, &ca);
  y = fuse_batch_norm(g, y, s2, b2, m2, v2, 1e-5f);
  y = fuse_relu(g, fuse_add(g, y, x));
  fuse_output(g, y);
  return g;
}

static fuse_graph *build_matmul_bias_clip_seed002(const golden_case *gc) {
  fuse_graph *g = fuse_graph_create(NULL);
  const float lo_v = -0.125f, hi_v = 0.375f; /* inline const{...} in the text */
  const int64_t no_dims[1] = {1};               /* rank 0: not read */
  fuse_value a, w, b, lo, hi, y;
  a = api_input(g, gc, "a");
  w = api_const(g, gc, "w");
  b = api_const(g, gc, "b");
  lo = fuse_constant(g, "lo", 0, no_dims, &lo_v);
  hi = fuse_constant(g, "hi", 0, no_dims, &hi_v);
  y = fuse_add(g, fuse_matmul(g, a, w), b);
  y = fuse_minimum(g, fuse_maximum(g, y, lo), hi);
  fuse_output(g, y);
  return g;
}

static void golden_api_case(const char *case_name, fuse_graph *(*build)(const golden_case *)) {
  golden_case gc;
  const char *why;
  fuse_graph *g, *parsed;
  snprintf(golden_path, sizeof golden_path, "%s/%s.golden", golden_dir, case_name);
  if (!golden_load(golden_path, &gc, &why)) {
    fprintf(stderr, "  %s: %s\n", golden_path, why);
    CHECK(!"the golden file of the API case exists and is well-formed");
    return;
  }
  g = build(&gc);
  CHECK(g != NULL);
  if (g) {
    if (fuse_graph_status(g) != FUSE_OK)
      fprintf(stderr, "  %s: builder error: %s\n", runner_current, fuse_graph_error(g));
    CHECK_EQ_INT(fuse_graph_status(g), FUSE_OK);
    if (fuse_graph_status(g) == FUSE_OK) golden_check_graph("api", g, &gc);
    /* the API graph prints like the parsed text of the same case */
    parsed = golden_parse("parsed", gc.text, &gc);
    if (parsed && fuse_graph_status(g) == FUSE_OK) {
      char *pa = golden_print(g), *pp = golden_print(parsed);
      CHECK(pa != NULL && pp != NULL);
      if (pa && pp && strcmp(pa, pp) != 0) {
        fprintf(stderr, "  %s: the API graph prints differently from the parsed text:\n%s---\n%s",
                runner_current, pa, pp);
        CHECK(!"API graph and parsed graph print the same");
      }
      free(pa);
      free(pp);
    }
    fuse_graph_destroy(parsed);
    fuse_graph_destroy(g);
  }
  golden_free(&gc);
}

TEST(api_seed_conv_bias_relu) {
  golden_api_case("seed_conv_bias_relu", build_seed_conv_bias_relu);
}
TEST(api_grouped_conv_bias_relu6) {
  golden_api_case("grouped_conv_bias_relu6", build_grouped_conv_bias_relu6);
}
TEST(api_resnet_block) { golden_api_case("resnet_block", build_resnet_block); }
TEST(api_matmul_bias_clip_seed002) {
  golden_api_case("matmul_bias_clip_seed002", build_matmul_bias_clip_seed002);
}

int main(int argc, char **argv) {
  int i;
  if (argc > 1) golden_dir = argv[1];
  golden_list(golden_dir);
  RUN(data_dir_has_cases);
  for (i = 0; i < golden_num_names; i++) {
    snprintf(golden_path, sizeof golden_path, "%s/%s.golden", golden_dir, golden_names[i]);
    runner_run(golden_names[i], golden_file_case);
  }
  RUN(api_seed_conv_bias_relu);
  RUN(api_grouped_conv_bias_relu6);
  RUN(api_resnet_block);
  RUN(api_matmul_bias_clip_seed002);
  for (i = 0; i < golden_num_names; i++) free(golden_names[i]);
  free(golden_names);
  printf("golden: %d case files in %s\n", golden_num_names, golden_dir);
  return runner_finish("golden");
}
