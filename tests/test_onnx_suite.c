/* test_onnx_suite.c - the ONNX backend test suite (Debian's libonnx-testdata) through fuse.h.

   Data: /usr/share/libonnx-testdata/data/{node,pytorch-converted,pytorch-operator,simple,real}
   (or the directory in the environment variable FUSE_ONNX_TESTDATA). Each test is a directory
   with model.onnx and test_data_set_K/{input_N.pb, output_N.pb}. A missing data directory is a
   failure ("install libonnx-testdata"), never an empty green suite.

   HOW SCOPE IS DECIDED (by this file's own protobuf scan of model.onnx, not by the loader, so
   the loader cannot skip its way to green):

     out of scope, always:
       - no model.onnx in the directory (real/ holds only data.json download links);
       - a node whose op_type is not one of Conv, Relu, Clip, Add, Sub, Mul, Max, Min, Reshape,
         Flatten, Gemm, MatMul, BatchNormalization, MaxPool, AveragePool, GlobalAveragePool,
         Concat, Sigmoid, Softmax, Identity, Constant, Dropout, or of the quantization ops
         QuantizeLinear, DequantizeLinear, QLinearConv, QLinearMatMul, ConvInteger,
         MatMulInteger, DynamicQuantizeLinear, or whose domain is not the default ONNX domain
         (reason: "op <first such op>");
       - a graph input (not an initializer) or a graph output that is not a float32 tensor
         (reason: "type <elem type>" or "non-tensor type"), except that a model with a
         quantization op may have uint8, int8 and int32 ones (fuse.h's other ops take float32
         only: an Add of uint8 tensors stays out, "type uint8");
       - no test_data_set_* directory.
     out of scope only when the loader refuses them with FUSE_ERROR_UNSUPPORTED (otherwise they
     are in scope and must pass like any other):
       - a Conv / MaxPool / AveragePool whose kernel is not 2-D ("1-D Conv", "3-D MaxPool", ...);
       - BatchNormalization in training mode (training_mode=1, is_test=0, more than one output)
         or with spatial=0; Dropout with is_test=0 (opset < 7);
       - a graph input with a symbolic (dim_param) or missing dimension.
     everything else is in scope: any failure of fuse_onnx_load_file (UNSUPPORTED included),
     fuse_optimize(g, "fuse"), fuse_compile, fuse_onnx_load_tensor or fuse_run_typed, an input or
     output count / shape / type mismatch, an integer output that differs in any element, or
     a float32 output with a normwise relative error above 1e-4 (runner_rel_error) is a FAIL.

   Inputs: input_N.pb is the graph's N-th input (initializers excluded), by position, of the
   graph input's element type (a uint8 image is given as uint8: fuse_run_typed).
   Outputs: output_N.pb is compared with the N-th graph output; shapes and element types must
   match (so the element counts do). uint8, int8 and int32 outputs must be equal element by
   element, float32 ones within the normwise relative error below.

   Ops beyond the list: when the loader accepts a model that is out of scope only for its ops
   (its inputs and outputs of the types above), the model is run and checked like an in-scope
   one - a loader that takes an op must also get it right - and counted separately. Otherwise
   the loader must refuse such a model with FUSE_ERROR_UNSUPPORTED naming the op (or, when the
   model also has an input or output of another type, refusing that is as good); anything
   else is printed as a "note:" line, not counted.

   Output: one line per failed test ("FAIL <dir>/<test>: <reason>"), one line per model skipped
   for a conditional reason (with the loader's message), then

     onnx-suite: N in scope: P passed, F failed; [E with ops beyond the list that the loader
     accepts: P passed, F failed;] S out of scope (reason: count, ...)

   and the runner's closing line "onnx: P passed, F failed" (each in-scope test, and each test
   beyond the list the loader accepts, is one runner test). Run with -v (or FUSE_ONNX_VERBOSE=1)
   to list every skipped model with its reason. */
#define _POSIX_C_SOURCE 200809L
#define FUSE_IMPLEMENTATION
#include "fuse.h"
#include "runner.h"

#include <dirent.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>

#define SUITE_TOL 1e-4
#define SUITE_DEFAULT_ROOT "/usr/share/libonnx-testdata/data"

static const char *const suite_groups[] = {"node", "pytorch-converted", "pytorch-operator",
                                           "simple", "real"};
/* the operators in scope, each between spaces */
static const char suite_ops[] = " Conv Relu Clip Add Sub Mul Max Min Reshape Flatten Gemm MatMul "
                                "BatchNormalization MaxPool AveragePool GlobalAveragePool Concat "
                                "Sigmoid Softmax Identity Constant Dropout "
                                "QuantizeLinear DequantizeLinear QLinearConv QLinearMatMul "
                                "ConvInteger MatMulInteger DynamicQuantizeLinear ";
/* the quantization ops (of suite_ops): a model with one of them may have uint8, int8 and
   int32 inputs and outputs */
static const char suite_quant_ops[] = " QuantizeLinear DequantizeLinear QLinearConv QLinearMatMul "
                                      "ConvInteger MatMulInteger DynamicQuantizeLinear ";

static int suite_verbose;

/* ------------------------------------------------------------------ small utilities -- */

static char *suite_strdup(const char *s) {
  size_t n = strlen(s) + 1;
  char *d = (char *)malloc(n);
  if (d) memcpy(d, s, n);
  return d;
}

static int suite_is_dir(const char *path) {
  struct stat st;
  return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

static int suite_is_file(const char *path) {
  struct stat st;
  return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* Whole file into memory; NULL when it cannot be read. */
static unsigned char *suite_read_file(const char *path, size_t *size) {
  FILE *f = fopen(path, "rb");
  unsigned char *buf = NULL, *nb;
  size_t cap = 0, len = 0, got;
  if (!f) return NULL;
  for (;;) {
    if (len == cap) {
      cap = cap ? cap * 2 : 65536;
      nb = (unsigned char *)realloc(buf, cap);
      if (!nb) {
        free(buf);
        fclose(f);
        return NULL;
      }
      buf = nb;
    }
    got = fread(buf + len, 1, cap - len, f);
    len += got;
    if (got == 0) break;
  }
  if (ferror(f)) {
    free(buf);
    fclose(f);
    return NULL;
  }
  fclose(f);
  *size = len;
  return buf;
}

static int suite_cmp_str(const void *a, const void *b) {
  return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Sorted entries of a directory whose names start with prefix; returns the count, -1 on error. */
static int suite_list_dir(const char *path, const char *prefix, char ***out) {
  DIR *d = opendir(path);
  struct dirent *e;
  char **names = NULL, **nn;
  int n = 0, cap = 0;
  *out = NULL;
  if (!d) return -1;
  while ((e = readdir(d)) != NULL) {
    if (strncmp(e->d_name, prefix, strlen(prefix)) != 0) continue;
    if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
    if (n == cap) {
      cap = cap ? cap * 2 : 64;
      nn = (char **)realloc(names, (size_t)cap * sizeof *names);
      if (!nn) break;
      names = nn;
    }
    names[n] = suite_strdup(e->d_name);
    if (names[n]) n++;
  }
  closedir(d);
  if (n) qsort(names, (size_t)n, sizeof *names, suite_cmp_str);
  *out = names;
  return n;
}

static void suite_free_list(char **names, int n) {
  int i;
  for (i = 0; i < n; i++) free(names[i]);
  free(names);
}

static void suite_shape_str(char *buf, size_t size, int rank, const int64_t *shape) {
  size_t len = 0;
  int i;
  buf[0] = 0;
  len += (size_t)snprintf(buf + len, size - len, "[");
  for (i = 0; i < rank && len < size; i++)
    len += (size_t)snprintf(buf + len, size - len, "%s%lld", i ? "," : "", (long long)shape[i]);
  if (len < size) snprintf(buf + len, size - len, "]");
}

static size_t suite_numel(int rank, const int64_t *shape) {
  size_t n = 1;
  int i;
  for (i = 0; i < rank; i++) n *= (size_t)(shape[i] > 0 ? shape[i] : 0);
  return n;
}

/* ---------------------------------------------------------- skip reasons, counted -- */

typedef struct suite_reason {
  char text[96];
  int count;
} suite_reason;

static suite_reason suite_reasons[1024];
static int suite_num_reasons;

static void suite_count_reason(const char *text) {
  int i;
  for (i = 0; i < suite_num_reasons; i++) {
    if (!strcmp(suite_reasons[i].text, text)) {
      suite_reasons[i].count++;
      return;
    }
  }
  if (suite_num_reasons == (int)(sizeof suite_reasons / sizeof suite_reasons[0]))
    i--;
  else
    suite_num_reasons++;
  snprintf(suite_reasons[i].text, sizeof suite_reasons[i].text, "%s", text);
  suite_reasons[i].count++;
}

static int suite_cmp_reason(const void *a, const void *b) {
  const suite_reason *x = (const suite_reason *)a, *y = (const suite_reason *)b;
  if (x->count != y->count) return y->count - x->count;
  return strcmp(x->text, y->text);
}

/* --------------------------------------------------- protobuf wire-format scanning -- */
/* Just enough to decide scope: bounds-checked, never trusts a length. */

typedef struct pb {
  const unsigned char *p, *end;
} pb;

typedef struct pb_field {
  uint32_t num;
  int wt;     /* 0 varint, 1 fixed64, 2 length-delimited, 5 fixed32 */
  uint64_t v; /* varint / fixed value */
  pb sub;     /* wt 2: the bytes */
} pb_field;

static int pb_varint(pb *r, uint64_t *v) {
  uint64_t x = 0;
  int shift = 0;
  while (r->p < r->end && shift < 64) {
    unsigned char b = *r->p++;
    x |= (uint64_t)(b & 0x7f) << shift;
    if (!(b & 0x80)) {
      *v = x;
      return 1;
    }
    shift += 7;
  }
  return 0;
}

/* 1: a field, 0: end of message, -1: malformed. */
static int pb_next(pb *r, pb_field *f) {
  uint64_t key, len;
  if (r->p >= r->end) return 0;
  if (!pb_varint(r, &key)) return -1;
  f->num = (uint32_t)(key >> 3);
  f->wt = (int)(key & 7);
  f->v = 0;
  f->sub.p = f->sub.end = NULL;
  switch (f->wt) {
  case 0:
    return pb_varint(r, &f->v) ? 1 : -1;
  case 1:
    if ((size_t)(r->end - r->p) < 8) return -1;
    memcpy(&f->v, r->p, 8);
    r->p += 8;
    return 1;
  case 5: {
    uint32_t v32;
    if ((size_t)(r->end - r->p) < 4) return -1;
    memcpy(&v32, r->p, 4);
    f->v = v32;
    r->p += 4;
    return 1;
  }
  case 2:
    if (!pb_varint(r, &len) || len > (uint64_t)(r->end - r->p)) return -1;
    f->sub.p = r->p;
    f->sub.end = r->p + (size_t)len;
    r->p += (size_t)len;
    return 1;
  default:
    return -1;
  }
}

static int pb_streq(const pb *s, const char *z) {
  size_t n = strlen(z);
  return (size_t)(s->end - s->p) == n && memcmp(s->p, z, n) == 0;
}

static void pb_copy(const pb *s, char *buf, size_t size) {
  size_t n = (size_t)(s->end - s->p);
  if (n >= size) n = size - 1;
  memcpy(buf, s->p, n);
  buf[n] = 0;
}

/* Repeated int64 field, packed (wt 2) or not (wt 0): number of elements it adds. */
static int pb_count_ints(const pb_field *f) {
  if (f->wt == 0) return 1;
  if (f->wt == 2) {
    pb r = f->sub;
    uint64_t v;
    int n = 0;
    while (r.p < r.end) {
      if (!pb_varint(&r, &v)) return -1;
      n++;
    }
    return n;
  }
  return -1;
}

static const char *suite_elem_type_name(uint64_t t) {
  static const char *const names[] = {"undefined",  "float32", "uint8",  "int8",   "uint16",
                                      "int16",      "int32",   "int64",  "string", "bool",
                                      "float16",    "float64", "uint32", "uint64", "complex64",
                                      "complex128", "bfloat16"};
  return t < sizeof names / sizeof names[0] ? names[t] : "unknown";
}

typedef struct suite_name_list {
  pb *names;
  int *ranks;
  int n, cap;
} suite_name_list;

static int suite_names_add(suite_name_list *l, pb name, int rank) {
  if (l->n == l->cap) {
    int cap = l->cap ? l->cap * 2 : 32;
    pb *nn = (pb *)realloc(l->names, (size_t)cap * sizeof *nn);
    int *nr;
    if (!nn) return 0;
    l->names = nn;
    nr = (int *)realloc(l->ranks, (size_t)cap * sizeof *nr);
    if (!nr) return 0;
    l->ranks = nr;
    l->cap = cap;
  }
  l->names[l->n] = name;
  l->ranks[l->n] = rank;
  l->n++;
  return 1;
}

static int suite_names_find(const suite_name_list *l, const pb *name) {
  int i;
  size_t len = (size_t)(name->end - name->p);
  for (i = 0; i < l->n; i++)
    if ((size_t)(l->names[i].end - l->names[i].p) == len &&
        memcmp(l->names[i].p, name->p, len) == 0)
      return i;
  return -1;
}

static void suite_names_free(suite_name_list *l) {
  free(l->names);
  free(l->ranks);
}

typedef struct suite_scan {
  int ok;              /* 0: malformed (the scan could not read it) */
  char hard[160];      /* out of scope, always ("" = none): an unsupported op */
  char hard_type[160]; /* out of scope, always: a graph input / output that is not float32 (nor,
                          in a model with a quantization op, uint8, int8 or int32) */
  char int_type[160];  /* a uint8 / int8 / int32 input or output: hard_type unless the model
                          has a quantization op */
  int quant_op;        /* the model has a quantization op */
  char soft[160];      /* out of scope if the loader refuses ("" = none) */
  char soft_key[96];   /* soft reason without details, for counting */
  int opset;
} suite_scan;

static void suite_soft(suite_scan *s, const char *key, const char *detail) {
  if (s->soft[0]) return;
  snprintf(s->soft_key, sizeof s->soft_key, "%s", key);
  snprintf(s->soft, sizeof s->soft, "%s%s%s", key, detail[0] ? " " : "", detail);
}

/* TypeProto of a graph input / output: sets hard (type) or soft (symbolic dims). */
static int suite_scan_type(suite_scan *s, pb type, const char *what, const char *name,
                           int check_dims, int *rank_out) {
  pb_field f, g, h, k;
  int rc, have_tensor = 0, have_shape = 0, rank = 0;
  uint64_t elem = 0;
  *rank_out = -1;
  while ((rc = pb_next(&type, &f)) == 1) {
    if (f.num == 1 && f.wt == 2) { /* tensor_type */
      pb t = f.sub;
      have_tensor = 1;
      while ((rc = pb_next(&t, &g)) == 1) {
        if (g.num == 1 && g.wt == 0) elem = g.v;
        if (g.num == 2 && g.wt == 2) { /* shape */
          pb sh = g.sub;
          have_shape = 1;
          while ((rc = pb_next(&sh, &h)) == 1) {
            if (h.num == 1 && h.wt == 2) { /* dim */
              pb d = h.sub;
              int has_value = 0;
              rank++;
              while ((rc = pb_next(&d, &k)) == 1)
                if (k.num == 1 && k.wt == 0) has_value = 1;
              if (rc < 0) return 0;
              if (!has_value && check_dims) {
                char detail[128];
                snprintf(detail, sizeof detail, "(%s '%.100s')", what, name);
                suite_soft(s, "symbolic input dims", detail);
              }
            }
          }
          if (rc < 0) return 0;
        }
      }
      if (rc < 0) return 0;
    } else if (f.wt == 2 && !s->hard_type[0]) {
      snprintf(s->hard_type, sizeof s->hard_type, "non-tensor type (%s '%.100s')", what, name);
    }
  }
  if (rc < 0) return 0;
  if (!have_tensor) {
    if (!s->hard_type[0])
      snprintf(s->hard_type, sizeof s->hard_type, "non-tensor type (%s '%.100s')", what, name);
    return 1;
  }
  if ((elem == 2 || elem == 3 || elem == 6) && !s->int_type[0])
    snprintf(s->int_type, sizeof s->int_type, "type %s (%s '%.100s')", suite_elem_type_name(elem),
             what, name);
  else if (elem != 1 && elem != 2 && elem != 3 && elem != 6 && !s->hard_type[0])
    snprintf(s->hard_type, sizeof s->hard_type, "type %s (%s '%.100s')", suite_elem_type_name(elem),
             what, name);
  if (!have_shape && check_dims) {
    char detail[128];
    snprintf(detail, sizeof detail, "(%s '%.100s' has no shape)", what, name);
    suite_soft(s, "symbolic input dims", detail);
  }
  *rank_out = have_shape ? rank : -1;
  return 1;
}

static int suite_op_in(const pb *op, const char *list) {
  size_t n = (size_t)(op->end - op->p);
  const char *at = list;
  if (n == 0 || memchr(op->p, ' ', n)) return 0;
  for (; at && at[1]; at = strchr(at + 1, ' ')) /* at: the space before a name */
    if (!strncmp(at + 1, (const char *)op->p, n) && at[1 + n] == ' ') return 1;
  return 0;
}

/* One NodeProto: unsupported op (hard), or conditional exclusions (soft). */
static int suite_scan_node(suite_scan *s, pb node, const suite_name_list *inits,
                           const suite_name_list *vinfo) {
  pb_field f, a;
  pb op = {NULL, NULL}, domain = {NULL, NULL};
  pb inputs[8];
  int rc, n_in = 0, n_out = 0, kernel_rank = -1, training = 0, spatial0 = 0, is_test0 = 0;
  char opname[64];
  while ((rc = pb_next(&node, &f)) == 1) {
    if (f.wt != 2) continue;
    if (f.num == 1) {
      if (n_in < 8) inputs[n_in] = f.sub;
      n_in++;
    } else if (f.num == 2) {
      if (f.sub.end > f.sub.p) n_out++;
    } else if (f.num == 4) {
      op = f.sub;
    } else if (f.num == 7) {
      domain = f.sub;
    } else if (f.num == 5) { /* AttributeProto */
      pb attr = f.sub, name = {NULL, NULL};
      int64_t i_val = 0;
      int have_i = 0, n_ints = -1;
      while ((rc = pb_next(&attr, &a)) == 1) {
        if (a.num == 1 && a.wt == 2) name = a.sub;
        if (a.num == 3 && a.wt == 0) {
          i_val = (int64_t)a.v;
          have_i = 1;
        }
        if (a.num == 8) {
          int c = pb_count_ints(&a);
          if (c < 0) return 0;
          n_ints = (n_ints < 0 ? 0 : n_ints) + c;
        }
      }
      if (rc < 0) return 0;
      if (!name.p) continue;
      if (pb_streq(&name, "kernel_shape") && n_ints >= 0) kernel_rank = n_ints;
      if (pb_streq(&name, "training_mode") && have_i && i_val != 0) training = 1;
      if (pb_streq(&name, "is_test") && have_i && i_val == 0) is_test0 = 1;
      if (pb_streq(&name, "spatial") && have_i && i_val == 0) spatial0 = 1;
    }
  }
  if (rc < 0 || !op.p) return 0;
  pb_copy(&op, opname, sizeof opname);
  if (!(domain.p && domain.end > domain.p && !pb_streq(&domain, "ai.onnx")) &&
      suite_op_in(&op, suite_quant_ops))
    s->quant_op = 1;
  if (domain.p && domain.end > domain.p && !pb_streq(&domain, "ai.onnx")) {
    char dom[64];
    pb_copy(&domain, dom, sizeof dom);
    if (!s->hard[0]) snprintf(s->hard, sizeof s->hard, "op %s:%s", dom, opname);
    return 1;
  }
  if (!suite_op_in(&op, suite_ops)) {
    if (!s->hard[0]) snprintf(s->hard, sizeof s->hard, "op %s", opname);
    return 1;
  }
  if (!strcmp(opname, "Conv") || !strcmp(opname, "MaxPool") || !strcmp(opname, "AveragePool")) {
    if (kernel_rank < 0 && n_in >= 2) { /* Conv without kernel_shape: the weight's rank */
      int i = suite_names_find(inits, &inputs[1]);
      if (i >= 0 && inits->ranks[i] >= 2) kernel_rank = inits->ranks[i] - 2;
      i = kernel_rank < 0 ? suite_names_find(vinfo, &inputs[1]) : -1;
      if (i >= 0 && vinfo->ranks[i] >= 2) kernel_rank = vinfo->ranks[i] - 2;
    }
    if (kernel_rank >= 0 && kernel_rank != 2) {
      char key[96];
      snprintf(key, sizeof key, "%d-D %.60s", kernel_rank, opname);
      suite_soft(s, key, "");
    }
  }
  if (!strcmp(opname, "BatchNormalization")) {
    if (training || is_test0 || n_out > 1) suite_soft(s, "training-mode BatchNormalization", "");
    if (spatial0) suite_soft(s, "BatchNormalization spatial=0", "");
  }
  if (!strcmp(opname, "Dropout") && is_test0 && s->opset < 7)
    suite_soft(s, "training-mode Dropout (is_test=0)", "");
  return 1;
}

/* Decides the scope of one model file's bytes. */
static void suite_scan_model(const unsigned char *data, size_t size, suite_scan *s) {
  pb model = {data, data + size}, graph = {NULL, NULL}, r;
  pb_field f, g;
  suite_name_list inits = {NULL, NULL, 0, 0}, vinfo = {NULL, NULL, 0, 0};
  int rc;
  memset(s, 0, sizeof *s);
  s->opset = -1;
  while ((rc = pb_next(&model, &f)) == 1) {
    if (f.num == 7 && f.wt == 2) graph = f.sub;
    if (f.num == 8 && f.wt == 2) { /* OperatorSetIdProto */
      pb o = f.sub, dom = {NULL, NULL};
      int64_t ver = -1;
      while ((rc = pb_next(&o, &g)) == 1) {
        if (g.num == 1 && g.wt == 2) dom = g.sub;
        if (g.num == 2 && g.wt == 0) ver = (int64_t)g.v;
      }
      if (rc < 0) return;
      if (!dom.p || dom.end == dom.p || pb_streq(&dom, "ai.onnx")) s->opset = (int)ver;
    }
  }
  if (rc < 0 || !graph.p) return;

  /* pass 1: initializer names (and ranks) */
  r = graph;
  while ((rc = pb_next(&r, &f)) == 1) {
    if (f.num == 5 && f.wt == 2) {
      pb t = f.sub, name = {NULL, NULL};
      int rank = 0;
      while ((rc = pb_next(&t, &g)) == 1) {
        if (g.num == 8 && g.wt == 2) name = g.sub;
        if (g.num == 1) {
          int c = pb_count_ints(&g);
          if (c < 0) goto done;
          rank += c;
        }
      }
      if (rc < 0) goto done;
      if (name.p && !suite_names_add(&inits, name, rank)) goto done;
    }
  }
  if (rc < 0) goto done;

  /* pass 2: inputs and outputs */
  r = graph;
  while ((rc = pb_next(&r, &f)) == 1) {
    if ((f.num == 11 || f.num == 12) && f.wt == 2) {
      pb vi = f.sub, name = {NULL, NULL}, type = {NULL, NULL};
      char cname[128];
      int rank;
      while ((rc = pb_next(&vi, &g)) == 1) {
        if (g.num == 1 && g.wt == 2) name = g.sub;
        if (g.num == 2 && g.wt == 2) type = g.sub;
      }
      if (rc < 0 || !name.p) goto done;
      pb_copy(&name, cname, sizeof cname);
      if (f.num == 11 && suite_names_find(&inits, &name) >= 0) continue; /* an initializer */
      if (!type.p) {
        if (!s->hard_type[0])
          snprintf(s->hard_type, sizeof s->hard_type, "non-tensor type (%s '%.100s' has no type)",
                   f.num == 11 ? "input" : "output", cname);
        continue;
      }
      if (!suite_scan_type(s, type, f.num == 11 ? "input" : "output", cname, f.num == 11, &rank))
        goto done;
      if (f.num == 11 && !suite_names_add(&vinfo, name, rank)) goto done;
    }
  }
  if (rc < 0) goto done;

  /* pass 3: nodes */
  r = graph;
  while ((rc = pb_next(&r, &f)) == 1)
    if (f.num == 1 && f.wt == 2 && !suite_scan_node(s, f.sub, &inits, &vinfo)) goto done;
  if (rc < 0) goto done;
  if (!s->quant_op && s->int_type[0] && !s->hard_type[0])
    memcpy(s->hard_type, s->int_type, sizeof s->hard_type);
  if (!s->hard[0] && s->hard_type[0]) /* an op reason says more than a type reason */
    memcpy(s->hard, s->hard_type, sizeof s->hard);
  s->ok = 1;
done:
  suite_names_free(&inits);
  suite_names_free(&vinfo);
}

/* ------------------------------------------------------------------ one test -- */

typedef struct suite_test {
  const char *dir;   /* the test's directory */
  char reason[1100]; /* why it failed */
} suite_test;

static suite_test *suite_cur;

static void suite_fail(const char *fmt, const char *a, const char *b) {
  if (!suite_cur->reason[0]) {
    snprintf(suite_cur->reason, sizeof suite_cur->reason, fmt, a, b);
  }
  runner_test_failed = 1;
}

static int suite_load_tensor(const char *path, fuse_onnx_tensor *t) {
  size_t size = 0;
  unsigned char *bytes = suite_read_file(path, &size);
  fuse_result rc;
  char msg[600];
  memset(t, 0, sizeof *t);
  if (!bytes) {
    suite_fail("cannot read %s%s", path, "");
    return 0;
  }
  rc = fuse_onnx_load_tensor(bytes, size, NULL, t);
  free(bytes);
  if (rc != FUSE_OK) {
    snprintf(msg, sizeof msg, "%s: %s", fuse_result_string(rc), t->error);
    suite_fail("fuse_onnx_load_tensor(%s): %s", path, msg);
    fuse_onnx_tensor_free(t, NULL);
    return 0;
  }
  return 1;
}

/* Runs one data set through the plan; fails the current test on any mismatch. */
static const char *suite_type_name(int type) {
  static const char *const names[] = {"float32", "uint8", "int8", "int32"};
  return type >= 0 && type <= FUSE_INT32 ? names[type] : "?";
}

static size_t suite_type_size(int type) { return type == FUSE_UINT8 || type == FUSE_INT8 ? 1 : 4; }

/* Element j of a typed array as a double (exact for every type). */
static double suite_typed_at(const void *data, int type, size_t j) {
  switch (type) {
  case FUSE_UINT8: return ((const uint8_t *)data)[j];
  case FUSE_INT8: return ((const int8_t *)data)[j];
  case FUSE_INT32: return ((const int32_t *)data)[j];
  default: return ((const float *)data)[j];
  }
}

/* A loaded tensor's values (floats holding them exactly) as an array of its type; NULL when
   out of memory. */
static void *suite_typed_copy(const fuse_onnx_tensor *t, size_t n) {
  void *d = malloc((n ? n : 1) * suite_type_size(t->type));
  size_t j;
  if (!d) return NULL;
  for (j = 0; j < n; j++) {
    if (t->type == FUSE_UINT8) ((uint8_t *)d)[j] = (uint8_t)t->data[j];
    else if (t->type == FUSE_INT8) ((int8_t *)d)[j] = (int8_t)t->data[j];
    else if (t->type == FUSE_INT32) ((int32_t *)d)[j] = (int32_t)t->data[j];
    else ((float *)d)[j] = t->data[j];
  }
  return d;
}

static void suite_run_data_set(fuse_graph *g, fuse_plan *plan, const char *ds_dir,
                               const char *ds_name) {
  int n_in = fuse_graph_input_count(g), n_out = fuse_graph_output_count(g), i, files;
  fuse_onnx_tensor *ins = (fuse_onnx_tensor *)calloc((size_t)n_in + 1, sizeof *ins);
  fuse_onnx_tensor *want = (fuse_onnx_tensor *)calloc((size_t)n_out + 1, sizeof *want);
  const void **in_ptrs = (const void **)calloc((size_t)n_in + 1, sizeof *in_ptrs);
  void **out_ptrs = (void **)calloc((size_t)n_out + 1, sizeof *out_ptrs);
  void **typed_ins = (void **)calloc((size_t)n_in + 1, sizeof *typed_ins);
  int loaded_in = 0, loaded_out = 0;
  char path[1200], msg[1024], s1[200], s2[200];
  fuse_result rc;
  if (!ins || !want || !in_ptrs || !out_ptrs || !typed_ins) {
    suite_fail("out of memory%s%s", "", "");
    goto out;
  }
  /* inputs, by position */
  for (files = 0;; files++) {
    snprintf(path, sizeof path, "%s/input_%d.pb", ds_dir, files);
    if (!suite_is_file(path)) break;
  }
  if (files != n_in) {
    snprintf(msg, sizeof msg, "%.60s has %d input files, the loaded graph %d inputs", ds_name,
             files, n_in);
    suite_fail("%s%s", msg, "");
    goto out;
  }
  for (i = 0; i < n_in; i++) {
    fuse_value v = fuse_graph_input(g, i);
    int rank = fuse_value_rank(g, v);
    const int64_t *shape = fuse_value_shape(g, v);
    snprintf(path, sizeof path, "%s/input_%d.pb", ds_dir, i);
    if (!suite_load_tensor(path, &ins[i])) goto out;
    loaded_in++;
    if (!shape || rank < 0 || ins[i].rank != rank ||
        (rank && memcmp(ins[i].shape, shape, (size_t)rank * sizeof *shape) != 0)) {
      suite_shape_str(s1, sizeof s1, ins[i].rank, ins[i].shape);
      suite_shape_str(s2, sizeof s2, rank < 0 ? 0 : rank, shape);
      snprintf(msg, sizeof msg,
               "%.60s input_%d.pb ('%.100s') has shape %.200s, graph input %d ('%.100s') %.200s",
               ds_name, i, ins[i].name, s1, i, fuse_value_name(g, v) ? fuse_value_name(g, v) : "",
               s2);
      suite_fail("%s%s", msg, "");
      goto out;
    }
    /* (the graph's type: the plan has no tensor for an input no step reads) */
    if (ins[i].type != fuse_value_type(g, v)) {
      snprintf(msg, sizeof msg, "%.60s input_%d.pb ('%.100s') is %s, graph input %d %s", ds_name,
               i, ins[i].name, suite_type_name(ins[i].type), i,
               suite_type_name(fuse_value_type(g, v)));
      suite_fail("%s%s", msg, "");
      goto out;
    }
    if (ins[i].type != FUSE_FLOAT32) { /* the exact floats as the input's type */
      typed_ins[i] = suite_typed_copy(&ins[i], suite_numel(rank, shape));
      if (!typed_ins[i]) {
        suite_fail("out of memory%s%s", "", "");
        goto out;
      }
      in_ptrs[i] = typed_ins[i];
    } else {
      in_ptrs[i] = ins[i].data;
    }
  }
  /* expected outputs */
  for (files = 0;; files++) {
    snprintf(path, sizeof path, "%s/output_%d.pb", ds_dir, files);
    if (!suite_is_file(path)) break;
  }
  if (files != n_out) {
    snprintf(msg, sizeof msg, "%.60s has %d output files, the loaded graph %d outputs", ds_name,
             files, n_out);
    suite_fail("%s%s", msg, "");
    goto out;
  }
  for (i = 0; i < n_out; i++) {
    fuse_value v = fuse_graph_output(g, i);
    int rank = fuse_value_rank(g, v);
    const int64_t *shape = fuse_value_shape(g, v);
    size_t n, j;
    snprintf(path, sizeof path, "%s/output_%d.pb", ds_dir, i);
    if (!suite_load_tensor(path, &want[i])) goto out;
    loaded_out++;
    if (!shape || rank < 0) {
      snprintf(msg, sizeof msg, "graph output %d has no shape (value %d)", i, (int)v);
      suite_fail("%s%s", msg, "");
      goto out;
    }
    n = suite_numel(rank, shape);
    if (n != suite_numel(want[i].rank, want[i].shape) || want[i].rank != rank ||
        (rank && memcmp(want[i].shape, shape, (size_t)rank * sizeof *shape) != 0)) {
      suite_shape_str(s1, sizeof s1, rank, shape);
      suite_shape_str(s2, sizeof s2, want[i].rank, want[i].shape);
      snprintf(msg, sizeof msg, "%.60s output %d ('%.100s') has shape %.200s, expected %.200s",
               ds_name, i, want[i].name, s1, s2);
      suite_fail("%s%s", msg, "");
      goto out;
    }
    if ((int)want[i].type != fuse_plan_output_type(plan, i)) {
      snprintf(msg, sizeof msg, "%.60s output %d ('%.100s') is %s, expected %s", ds_name, i,
               want[i].name, suite_type_name(fuse_plan_output_type(plan, i)),
               suite_type_name(want[i].type));
      suite_fail("%s%s", msg, "");
      goto out;
    }
    out_ptrs[i] = malloc((n ? n : 1) * suite_type_size(want[i].type));
    if (!out_ptrs[i]) {
      suite_fail("out of memory%s%s", "", "");
      goto out;
    }
    /* what fuse_run leaves unwritten shows: NaN, or 0xa5 bytes in an integer output */
    if (want[i].type == FUSE_FLOAT32)
      for (j = 0; j < n; j++) ((float *)out_ptrs[i])[j] = NAN;
    else
      memset(out_ptrs[i], 0xa5, (n ? n : 1) * suite_type_size(want[i].type));
  }
  rc = fuse_run_typed(plan, in_ptrs, out_ptrs, NULL);
  if (rc != FUSE_OK) {
    snprintf(msg, sizeof msg, "%.60s: fuse_run: %s", ds_name, fuse_result_string(rc));
    suite_fail("%s%s", msg, "");
    goto out;
  }
  for (i = 0; i < n_out; i++) {
    size_t n = suite_numel(want[i].rank, want[i].shape);
    double err;
    if (want[i].type != FUSE_FLOAT32) { /* integers: every element exactly */
      size_t j, wrong = 0, first = 0;
      for (j = 0; j < n; j++)
        if (suite_typed_at(out_ptrs[i], want[i].type, j) != (double)want[i].data[j] && !wrong++)
          first = j;
      if (wrong) {
        snprintf(msg, sizeof msg,
                 "%.60s output %d ('%.100s', %s): %lu of %lu elements differ (element %lu: got "
                 "%.0f, want %.0f)",
                 ds_name, i, want[i].name, suite_type_name(want[i].type), (unsigned long)wrong,
                 (unsigned long)n, (unsigned long)first,
                 suite_typed_at(out_ptrs[i], want[i].type, first), (double)want[i].data[first]);
        suite_fail("%s%s", msg, "");
      }
      continue;
    }
    err = runner_rel_error((const float *)out_ptrs[i], want[i].data, n);
    if (!(err <= SUITE_TOL)) {
      size_t j, worst = 0;
      double wd = -1;
      const float *got = (const float *)out_ptrs[i];
      for (j = 0; j < n; j++) {
        double d = fabs((double)got[j] - (double)want[i].data[j]);
        if (d != d) d = INFINITY;
        if (d > wd) {
          wd = d;
          worst = j;
        }
      }
      snprintf(msg, sizeof msg,
               "%.60s output %d ('%.100s'): relative error %.3g > %g (element %lu: got %.9g, want "
               "%.9g)",
               ds_name, i, want[i].name, err, SUITE_TOL, (unsigned long)worst,
               n ? (double)got[worst] : 0.0, n ? (double)want[i].data[worst] : 0.0);
      suite_fail("%s%s", msg, "");
    }
  }
out:
  for (i = 0; i < loaded_in; i++) fuse_onnx_tensor_free(&ins[i], NULL);
  for (i = 0; i < loaded_out; i++) fuse_onnx_tensor_free(&want[i], NULL);
  if (out_ptrs)
    for (i = 0; i < n_out; i++) free(out_ptrs[i]);
  if (typed_ins)
    for (i = 0; i < n_in; i++) free(typed_ins[i]);
  free(typed_ins);
  free(ins);
  free(want);
  free(in_ptrs);
  free(out_ptrs);
}

/* The runner test: load, fuse_optimize(g, "fuse"), compile, every data set. The model is
   loaded by the caller (it already knows it loads); g is consumed. */
static fuse_graph *suite_graph;

static void suite_run_one(void) {
  suite_test *t = suite_cur;
  fuse_graph *g = suite_graph;
  fuse_plan *plan = NULL;
  fuse_compile_options opt;
  char err[512], msg[700], **sets = NULL;
  int n_sets, i;
  fuse_result rc = fuse_optimize(g, "fuse");
  if (rc != FUSE_OK) {
    snprintf(msg, sizeof msg, "fuse_optimize(g, \"fuse\"): %s: %s", fuse_result_string(rc),
             fuse_graph_error(g));
    suite_fail("%s%s", msg, "");
    return;
  }
  memset(&opt, 0, sizeof opt);
  err[0] = 0;
  opt.error = err;
  opt.error_size = sizeof err;
  rc = fuse_compile(g, &opt, &plan);
  if (rc != FUSE_OK) {
    snprintf(msg, sizeof msg, "fuse_compile: %s: %s", fuse_result_string(rc), err);
    suite_fail("%s%s", msg, "");
    return;
  }
  n_sets = suite_list_dir(t->dir, "test_data_set_", &sets);
  for (i = 0; i < n_sets; i++) {
    char ds_dir[1100];
    snprintf(ds_dir, sizeof ds_dir, "%s/%s", t->dir, sets[i]);
    if (suite_is_dir(ds_dir)) suite_run_data_set(g, plan, ds_dir, sets[i]);
  }
  if (n_sets > 0) suite_free_list(sets, n_sets);
  fuse_plan_destroy(plan);
}

/* ------------------------------------------------------------------ the suite -- */

static int suite_in_scope, suite_in_passed, suite_in_failed, suite_out_of_scope;
static int suite_extra, suite_extra_passed, suite_extra_failed;
static int suite_notes, suite_op_skips, suite_op_refused;

static void suite_note(const char *full, const char *what) {
  if (++suite_notes <= 25) printf("note: %s: %s\n", full, what);
}

static void suite_skip(const char *full, const char *key, const char *detail,
                       const char *loader_msg, int always_print) {
  suite_out_of_scope++;
  suite_count_reason(key);
  if (always_print || suite_verbose)
    printf("skip %s: %s%s%s%s\n", full, detail, loader_msg ? " (loader: " : "",
           loader_msg ? loader_msg : "", loader_msg ? ")" : "");
}

/* One runner test for a loaded model (rc: what the loader returned; g is destroyed here).
   Returns 1 when it passed. */
static int suite_run_test(const char *dir, const char *full, fuse_graph *g, fuse_result rc,
                          const char *soft) {
  suite_test t;
  int failed_before = runner_failed;
  clock_t t0 = clock();
  memset(&t, 0, sizeof t);
  t.dir = dir;
  suite_cur = &t;
  if (rc != FUSE_OK) {
    runner_current = full;
    snprintf(t.reason, sizeof t.reason, "fuse_onnx_load_file: %s: %s%s%s", fuse_result_string(rc),
             g ? fuse_graph_error(g) : "(no graph)", soft[0] ? " [scan: " : "", soft);
    if (soft[0]) strncat(t.reason, "]", sizeof t.reason - strlen(t.reason) - 1);
    runner_failed++;
    fprintf(stderr, "FAIL %s\n", full);
  } else {
    suite_graph = g;
    runner_run(full, suite_run_one);
  }
  fuse_graph_destroy(g);
  suite_cur = NULL;
  if ((double)(clock() - t0) / CLOCKS_PER_SEC > 5.0)
    printf("slow: %s took %.1f s\n", full, (double)(clock() - t0) / CLOCKS_PER_SEC);
  if (runner_failed > failed_before) {
    printf("FAIL %s: %s\n", full, t.reason[0] ? t.reason : "(see above)");
    fflush(stdout);
    return 0;
  }
  return 1;
}

static void suite_one_dir(const char *root, const char *group, const char *name) {
  char dir[1024], model[1100], full[300], **sets = NULL;
  unsigned char *bytes;
  size_t size = 0;
  suite_scan scan;
  fuse_graph *g = NULL;
  fuse_result rc;
  int n_sets;

  snprintf(dir, sizeof dir, "%s/%s/%s", root, group, name);
  snprintf(model, sizeof model, "%s/model.onnx", dir);
  snprintf(full, sizeof full, "%s/%s", group, name);
  if (!suite_is_dir(dir)) return;
  if (!suite_is_file(model)) {
    suite_skip(full, "no model.onnx", "no model.onnx (only a download link in data.json)", NULL, 0);
    return;
  }
  bytes = suite_read_file(model, &size);
  if (!bytes) {
    suite_skip(full, "model.onnx unreadable", "model.onnx unreadable", NULL, 1);
    return;
  }
  suite_scan_model(bytes, size, &scan);
  free(bytes);
  if (!scan.ok) { /* our scan failed: let the loader try, and count it as in scope */
    scan.hard[0] = 0;
    scan.soft[0] = 0;
  }
  n_sets = suite_list_dir(dir, "test_data_set_", &sets);
  if (n_sets > 0) suite_free_list(sets, n_sets);

  if (scan.hard[0]) {
    char key[96];
    const char *paren = strstr(scan.hard, " (");
    size_t klen = paren ? (size_t)(paren - scan.hard) : strlen(scan.hard);
    if (klen >= sizeof key) klen = sizeof key - 1;
    memcpy(key, scan.hard, klen);
    key[klen] = 0;
    rc = fuse_onnx_load_file(model, NULL, &g);
    if (!strncmp(scan.hard, "op ", 3)) {
      const char *op = scan.hard + 3, *colon = strchr(op, ':');
      char what[700];
      if (colon) op = colon + 1;
      if (rc == FUSE_OK && !scan.hard_type[0] && n_sets > 0) {
        /* the loader takes an op beyond the list: then its results must be right too */
        suite_extra++;
        if (suite_verbose) printf("extra %s: %s, which the loader accepts\n", full, scan.hard);
        if (suite_run_test(dir, full, g, rc, ""))
          suite_extra_passed++;
        else
          suite_extra_failed++;
        return;
      }
      suite_op_skips++;
      /* refused: with FUSE_ERROR_UNSUPPORTED naming the op (or, with a non-float32 input or
         output as well, whatever it names) */
      if (rc == FUSE_ERROR_UNSUPPORTED && g &&
          (scan.hard_type[0] || strstr(fuse_graph_error(g), op))) {
        suite_op_refused++;
      } else if (rc != FUSE_OK) {
        snprintf(what, sizeof what, "out of scope (%s) but the loader returned %s: %.300s",
                 scan.hard, fuse_result_string(rc), g ? fuse_graph_error(g) : "(no graph)");
        suite_note(full, what);
      }
    }
    suite_skip(full, key, scan.hard, g && rc != FUSE_OK ? fuse_graph_error(g) : NULL, 0);
    fuse_graph_destroy(g);
    return;
  }
  if (n_sets <= 0) {
    suite_skip(full, "no test_data_set", "no test_data_set_* directory", NULL, 1);
    return;
  }

  rc = fuse_onnx_load_file(model, NULL, &g);
  if (rc == FUSE_ERROR_UNSUPPORTED && scan.soft[0]) {
    suite_skip(full, scan.soft_key, scan.soft, g ? fuse_graph_error(g) : "(no graph)", 1);
    fuse_graph_destroy(g);
    return;
  }
  suite_in_scope++;
  if (suite_run_test(dir, full, g, rc, scan.soft))
    suite_in_passed++;
  else
    suite_in_failed++;
}

int main(int argc, char **argv) {
  const char *root = getenv("FUSE_ONNX_TESTDATA");
  const char *env_verbose = getenv("FUSE_ONNX_VERBOSE");
  size_t gi;
  int i, real_skipped = 0;
  clock_t t0 = clock();
  if (!root || !root[0]) root = SUITE_DEFAULT_ROOT;
  suite_verbose = (env_verbose && env_verbose[0] && strcmp(env_verbose, "0") != 0);
  for (i = 1; i < argc; i++)
    if (!strcmp(argv[i], "-v")) suite_verbose = 1;

  if (!suite_is_dir(root)) {
    printf("FAIL onnx-suite: %s does not exist: install libonnx-testdata "
           "(apt-get install libonnx-testdata)\n",
           root);
    runner_failed++;
    return runner_finish("onnx");
  }
  for (gi = 0; gi < sizeof suite_groups / sizeof suite_groups[0]; gi++) {
    char gdir[1024], **names = NULL;
    int n, before = suite_out_of_scope;
    snprintf(gdir, sizeof gdir, "%s/%s", root, suite_groups[gi]);
    n = suite_list_dir(gdir, "test_", &names);
    if (n < 0) {
      printf("onnx-suite: %s: missing\n", gdir);
      continue;
    }
    for (i = 0; i < n; i++) suite_one_dir(root, suite_groups[gi], names[i]);
    if (!strcmp(suite_groups[gi], "real")) real_skipped = suite_out_of_scope - before;
    suite_free_list(names, n);
  }
  if (real_skipped)
    printf("onnx-suite: real/: %d models skipped: the Debian package ships only data.json "
           "download links for them, no model.onnx\n",
           real_skipped);

  qsort(suite_reasons, (size_t)suite_num_reasons, sizeof suite_reasons[0], suite_cmp_reason);
  printf("onnx-suite: %d in scope: %d passed, %d failed; ", suite_in_scope, suite_in_passed,
         suite_in_failed);
  if (suite_extra)
    printf("%d with ops beyond the list that the loader accepts: %d passed, %d failed; ",
           suite_extra, suite_extra_passed, suite_extra_failed);
  printf("%d out of scope", suite_out_of_scope);
  for (i = 0; i < suite_num_reasons; i++)
    printf("%s%s: %d", i ? ", " : " (", suite_reasons[i].text, suite_reasons[i].count);
  printf("%s\n", suite_num_reasons ? ")" : "");
  printf("onnx-suite: the loader refused %d of %d models with unsupported ops with "
         "FUSE_ERROR_UNSUPPORTED (naming the op when the types are float32)%s (%.1f s)\n",
         suite_op_refused, suite_op_skips,
         suite_notes ? "; see the note: lines for the others" : "",
         (double)(clock() - t0) / CLOCKS_PER_SEC);
  if (suite_in_scope == 0) {
    printf("FAIL onnx-suite: no test in scope under %s (is libonnx-testdata installed?)\n", root);
    runner_failed++;
  }
  return runner_finish("onnx");
}
