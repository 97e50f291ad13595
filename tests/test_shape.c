/* test_shape.c - the data movement builders through the C API: gather, expand, tile, squeeze /
   unsqueeze, depth_to_space / space_to_depth, pad, resize. Values against plain loops written
   here (the golden cases compare the same ops with PyTorch through the text form); every
   builder's bad arguments give FUSE_NONE and a message naming the op and what was wrong; a
   parsed gather whose index constant is filled out of range afterwards clamps, never reads
   outside its input. Then the ONNX models in tests/data/onnx_shape (PyTorch's exports of
   F.interpolate, F.pad, pixel_shuffle, repeat, expand, indexing, squeeze at opsets 9, 11, 13,
   and hand-built models of the forms torch.onnx does not write: Upsample 7 / 9, Resize 10,
   attribute axes and pads, sizes with cubic, ...; tools/export_shape_onnx.py) load, run and
   match the expected output (normwise 1e-4). Run from the repository root. */
#define _POSIX_C_SOURCE 200809L /* open_memstream */
#define FUSE_IMPLEMENTATION
#include "fuse.h"
#include "runner.h"

#include <dirent.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

static const int64_t *D(int n, ...) { /* a shape literal (up to 8 dims, kept per call site) */
  static int64_t slots[16][FUSE_MAX_RANK];
  static int next;
  int64_t *d = slots[next++ & 15];
  va_list ap;
  int i;
  va_start(ap, n);
  for (i = 0; i < n; i++) d[i] = va_arg(ap, int);
  va_end(ap);
  return d;
}

static void iota(float *x, int64_t n) {
  int64_t i;
  for (i = 0; i < n; i++) x[i] = (float)(i * 7 % 23) - 11.0f + 0.25f * (float)i;
}

/* Compiles g (one input, one output y), runs it on x, returns 1 when it ran. */
static int run1(fuse_graph *g, fuse_value y, const float *x, float *out) {
  fuse_plan *p = NULL;
  const float *ins[1];
  float *outs[1];
  int ok;
  ins[0] = x;
  outs[0] = out;
  if (fuse_output(g, y) != FUSE_OK || fuse_compile(g, NULL, &p) != FUSE_OK) {
    fprintf(stderr, "  compile: %s\n", fuse_graph_error(g));
    return 0;
  }
  ok = fuse_run(p, ins, outs, NULL) == FUSE_OK;
  fuse_plan_destroy(p);
  return ok;
}

TEST(depth_to_space_dcr_crd) {
  enum { N = 2, C = 8, H = 3, W = 2, B = 2, OC = C / (B * B) };
  float x[N * C * H * W], y[N * C * H * W], want[N * C * H * W], back[N * C * H * W];
  int crd;
  iota(x, N * C * H * W);
  for (crd = 0; crd < 2; crd++) {
    fuse_graph *g = fuse_graph_create(NULL);
    fuse_value in = fuse_input(g, "x", 4, D(4, N, C, H, W));
    fuse_value v = fuse_depth_to_space(g, in, B, crd);
    int n, c, h, w;
    CHECK(v != FUSE_NONE);
    CHECK_EQ_INT(fuse_value_shape(g, v)[1], OC);
    CHECK_EQ_INT(fuse_value_shape(g, v)[2], H * B);
    for (n = 0; n < N; n++)
      for (c = 0; c < OC; c++)
        for (h = 0; h < H * B; h++)
          for (w = 0; w < W * B; w++) { /* ONNX's definitions of DCR and CRD */
            int bh = h % B, bw = w % B;
            int ic = crd ? c * B * B + bh * B + bw : (bh * B + bw) * OC + c;
            want[((n * OC + c) * H * B + h) * W * B + w] = x[((n * C + ic) * H + h / B) * W + w / B];
          }
    CHECK(run1(g, v, x, y));
    CHECK_NEAR_ARRAY(y, want, (size_t)(N * C * H * W), 0);
    fuse_graph_destroy(g);
  }
  { /* space_to_depth undoes DCR */
    fuse_graph *g = fuse_graph_create(NULL);
    fuse_value in = fuse_input(g, "x", 4, D(4, N, C, H, W));
    fuse_value v = fuse_space_to_depth(g, fuse_depth_to_space(g, in, B, 0), B);
    CHECK(run1(g, v, x, back));
    CHECK_NEAR_ARRAY(back, x, (size_t)(N * C * H * W), 0);
    fuse_graph_destroy(g);
  }
}

TEST(squeeze_unsqueeze_shapes) {
  fuse_graph *g = fuse_graph_create(NULL);
  fuse_value x = fuse_input(g, "x", 5, D(5, 1, 3, 1, 4, 1));
  int ax_neg[2] = {-1, 0}, ax_un[3] = {3, 0, -1};
  fuse_value a = fuse_squeeze(g, x, 0, NULL), b = fuse_squeeze(g, x, 2, ax_neg);
  fuse_value c = fuse_unsqueeze(g, a, 3, ax_un);
  CHECK_EQ_INT(fuse_value_rank(g, a), 2);
  CHECK_EQ_INT(fuse_value_shape(g, a)[1], 4);
  CHECK_EQ_INT(fuse_value_rank(g, b), 3);
  CHECK_EQ_INT(fuse_value_shape(g, b)[1], 1);
  CHECK_EQ_INT(fuse_value_rank(g, c), 5); /* [1, 3, 4, 1, 1] */
  CHECK_EQ_INT(fuse_value_shape(g, c)[0], 1);
  CHECK_EQ_INT(fuse_value_shape(g, c)[1], 3);
  CHECK_EQ_INT(fuse_value_shape(g, c)[2], 4);
  CHECK_EQ_INT(fuse_value_shape(g, c)[3], 1);
  CHECK_EQ_INT(fuse_value_shape(g, c)[4], 1);
  CHECK(fuse_graph_status(g) == FUSE_OK);
  fuse_graph_destroy(g);
}

TEST(gather_api_and_text) {
  float x[4 * 5], y[4 * 3], want[4 * 3];
  const int64_t idx[3] = {-1, 0, 2};
  fuse_graph *g = fuse_graph_create(NULL), *g2 = NULL;
  fuse_value in = fuse_input(g, "x", 2, D(2, 4, 5));
  fuse_value v = fuse_gather(g, in, -1, 1, D(1, 3), idx);
  int r, k;
  iota(x, 20);
  for (r = 0; r < 4; r++)
    for (k = 0; k < 3; k++) want[r * 3 + k] = x[r * 5 + (idx[k] < 0 ? idx[k] + 5 : idx[k])];
  CHECK(v != FUSE_NONE);
  CHECK(run1(g, v, x, y));
  CHECK_NEAR_ARRAY(y, want, 12, 0);
  { /* the index constant prints inline (3 values) and parses back to the same graph */
    char *t1 = NULL, *t2 = NULL;
    size_t n1 = 0, n2 = 0;
    FILE *f1 = open_memstream(&t1, &n1), *f2;
    fuse_graph_print(g, f1);
    fclose(f1);
    CHECK_STR_CONTAINS(t1, "const{4, 0, 2}");
    CHECK(fuse_graph_parse(t1, NULL, &g2) == FUSE_OK);
    f2 = open_memstream(&t2, &n2);
    fuse_graph_print(g2, f2);
    fclose(f2);
    CHECK(t1 && t2 && strcmp(t1, t2) == 0);
    free(t1);
    free(t2);
    fuse_graph_destroy(g2);
  }
  fuse_graph_destroy(g);
}

TEST(gather_parsed_constant_out_of_range_clamps) {
  static const char text[] = "graph(%x: [3, 2]) {\n"
                             "  %i: [6] = const\n"
                             "  %y = gather(%x, %i, axis=0)\n"
                             "  return %y\n"
                             "}\n";
  const float bad[6] = {-3, 2, 7, -9, 1e30f, -0.5f};
  float x[6] = {1, 2, 3, 4, 5, 6}, y[12];
  const float want[12] = {1, 2, 5, 6, 5, 6, 1, 2, 5, 6, 1, 2};
  fuse_graph *g = NULL;
  CHECK(fuse_graph_parse(text, NULL, &g) == FUSE_OK);
  CHECK(fuse_graph_set_constant(g, "i", bad, 6) == FUSE_OK);
  {
    fuse_plan *p = NULL;
    const float *ins[1] = {x};
    float *outs[1] = {y};
    CHECK(fuse_compile(g, NULL, &p) == FUSE_OK);
    CHECK(p && fuse_run(p, ins, outs, NULL) == FUSE_OK);
    fuse_plan_destroy(p);
  }
  CHECK_NEAR_ARRAY(y, want, 12, 0);
  fuse_graph_destroy(g);
}

TEST(pad_resize_api) {
  float x[2 * 3], y[4 * 7], want[4 * 7];
  const int64_t pads[4] = {1, 2, 1, 2};
  fuse_graph *g = fuse_graph_create(NULL);
  fuse_value in = fuse_input(g, "x", 2, D(2, 2, 3));
  fuse_value v = fuse_pad(g, in, pads, FUSE_PAD_REFLECT, 0);
  int r, c;
  iota(x, 6);
  for (r = 0; r < 4; r++)
    for (c = 0; c < 7; c++) {
      int sr = r - 1, sc = c - 2;
      sr = sr < 0 ? -sr : sr > 1 ? 2 - sr : sr;
      sc = sc < 0 ? -sc : sc > 2 ? 4 - sc : sc;
      want[r * 7 + c] = x[sr * 3 + sc];
    }
  CHECK(run1(g, v, x, y));
  CHECK_NEAR_ARRAY(y, want, 28, 0);
  fuse_graph_destroy(g);
  { /* resize with all-zero attributes: nearest, half_pixel, round_prefer_floor */
    float o[2 * 6];
    const float w2[12] = {0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5};
    float xi[6] = {0, 1, 2, 3, 4, 5};
    fuse_graph *h = fuse_graph_create(NULL);
    fuse_value hx = fuse_input(h, "x", 2, D(2, 2, 3));
    fuse_value hv = fuse_resize(h, hx, D(2, 2, 6), NULL, NULL);
    CHECK(run1(h, hv, xi, o));
    CHECK_NEAR_ARRAY(o, w2, 12, 0);
    fuse_graph_destroy(h);
  }
}

/* A builder that must fail: FUSE_NONE, status `code`, a message containing each needle. */
static void expect_fail(fuse_graph *g, fuse_value got, fuse_result code, const char *a,
                        const char *b, int line) {
  const char *msg = fuse_graph_error(g);
  if (got != FUSE_NONE || fuse_graph_status(g) != code || !strstr(msg, a) || !strstr(msg, b)) {
    runner_test_failed = 1;
    fprintf(stderr, "  FAIL line %d: got %d, status %d, message \"%s\" (want \"%s\", \"%s\")\n",
            line, (int)got, (int)fuse_graph_status(g), msg, a, b);
  }
  fuse_graph_destroy(g);
}
#define FAILS(call, code, a, b)                                             \
  do {                                                                      \
    fuse_graph *g = fuse_graph_create(NULL);                                \
    fuse_value x = fuse_input(g, "x", 4, D(4, 1, 8, 3, 4));                 \
    fuse_value s = fuse_scalar(g, 1.0f);                                    \
    (void)x, (void)s;                                                       \
    expect_fail(g, (call), code, a, b, __LINE__);                           \
  } while (0)
#define INV FUSE_ERROR_INVALID_ARGUMENT
#define SHP FUSE_ERROR_SHAPE

TEST(builder_errors) {
  const int64_t idx_bad[2] = {0, 8}, idx_ok[1] = {1}, zero[4] = {1, 0, 1, 1};
  const int64_t pads_reflect[8] = {0, 0, 3, 0, 0, 0, 0, 0}, pads_crop[8] = {0, 0, -3, 0, 0, 0, -1, 0};
  const int dup[2] = {1, -5}, not_one[1] = {1};
  const float neg_scale[4] = {1, 1, -2, 1};
  fuse_resize_attrs bad_mode;
  memset(&bad_mode, 0, sizeof bad_mode);
  bad_mode.mode = (fuse_resize_mode)7;
  FAILS(fuse_gather(g, x, 4, 1, D(1, 1), idx_ok), INV, "gather:", "axis 4");
  FAILS(fuse_gather(g, x, 1, 1, D(1, 2), idx_bad), INV, "gather:", "index 8");
  FAILS(fuse_gather(g, x, 1, 1, D(1, 2), NULL), INV, "gather:", "NULL");
  FAILS(fuse_gather(g, s, 0, 1, D(1, 1), idx_ok), SHP, "gather:", "scalar");
  FAILS(fuse_gather(g, x, 1, 6, D(6, 1, 1, 1, 1, 1, 1), idx_ok), SHP, "gather:", "more than 8");
  FAILS(fuse_expand(g, x, 2, D(2, 5, 4)), SHP, "expand:", "[5,4]");
  FAILS(fuse_expand(g, x, 2, D(2, 0, 4)), INV, "expand: shape", "dimension 0");
  FAILS(fuse_tile(g, x, zero), INV, "tile:", "entry 1 is 0");
  FAILS(fuse_tile(g, x, NULL), INV, "tile:", "NULL");
  FAILS(fuse_squeeze(g, x, 1, not_one), SHP, "squeeze:", "size 8");
  FAILS(fuse_squeeze(g, x, 1, NULL), INV, "squeeze:", "NULL");
  FAILS(fuse_unsqueeze(g, x, 2, dup), INV, "unsqueeze:", "twice");
  FAILS(fuse_unsqueeze(g, x, 0, NULL), INV, "unsqueeze:", "0 axes");
  FAILS(fuse_depth_to_space(g, x, 3, 0), SHP, "depth_to_space:", "not divisible");
  FAILS(fuse_depth_to_space(g, x, 0, 1), INV, "depth_to_space:", "block size 0");
  FAILS(fuse_depth_to_space(g, s, 2, 0), SHP, "depth_to_space:", "4-D");
  FAILS(fuse_space_to_depth(g, x, 2), SHP, "space_to_depth:", "not divisible");
  FAILS(fuse_pad(g, x, pads_reflect, FUSE_PAD_REFLECT, 0), INV, "pad:", "smaller than its size 3");
  FAILS(fuse_pad(g, x, pads_crop, FUSE_PAD_CONSTANT, 0), INV, "pad:", "axis 2");
  FAILS(fuse_pad(g, x, NULL, FUSE_PAD_EDGE, 0), INV, "pad:", "NULL");
  FAILS(fuse_pad(g, x, pads_crop, (fuse_pad_mode)5, 0), INV, "pad:", "mode 5");
  FAILS(fuse_resize(g, x, D(4, 1, 8, 6, 8), neg_scale, NULL), INV, "resize:", "axis 2");
  FAILS(fuse_resize(g, x, D(4, 1, 8, 0, 8), NULL, NULL), INV, "resize: sizes", "dimension 2");
  FAILS(fuse_resize(g, x, D(4, 1, 8, 6, 8), NULL, &bad_mode), INV, "resize:", "mode 7");
  FAILS(fuse_resize(g, s, D(1, 2), NULL, NULL), SHP, "resize:", "scalar");
}

TEST(text_errors) {
  static const char *const bad[] = {
      "graph(%x: [2, 3]) {\n  %y = pad(%x, begins=[1], ends=[0, 0])\n  return %y\n}\n",
      "graph(%x: [2, 3]) {\n  %y = resize(%x, mode=1)\n  return %y\n}\n",
      "graph(%x: [2, 3]) {\n  %y = resize(%x, sizes=[2, 6], scales=[1.5, x])\n  return %y\n}\n",
      "graph(%x: [2, 3]) {\n  %y = tile(%x, repeats=[2])\n  return %y\n}\n",
      "graph(%x: [2, 3]) {\n  %y = gather(%x, %x, axis=0)\n  return %y\n}\n",
      "graph(%x: [2, 3]) {\n  %i: [2] = const{0, 3}\n  %y = gather(%x, %i, axis=1)\n  return %y\n}\n",
      "graph(%x: [2, 3]) {\n  %y = expand(%x)\n  return %y\n}\n"};
  static const char *const needle[] = {"begins has 1", "resize needs sizes", "a number",
                                       "tile repeats", "must be a constant", "index 3",
                                       "expand needs shape"};
  int i;
  for (i = 0; i < 7; i++) {
    fuse_graph *g = NULL;
    CHECK(fuse_graph_parse(bad[i], NULL, &g) != FUSE_OK);
    CHECK_STR_CONTAINS(fuse_graph_error(g), needle[i]);
    fuse_graph_destroy(g);
  }
}

static void *read_all(const char *path, size_t *size) {
  FILE *f = fopen(path, "rb");
  char *buf = NULL;
  long n;
  if (!f) return NULL;
  if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) > 0 && fseek(f, 0, SEEK_SET) == 0 &&
      (buf = (char *)malloc((size_t)n)) != NULL && fread(buf, 1, (size_t)n, f) != (size_t)n) {
    free(buf);
    buf = NULL;
  }
  fclose(f);
  *size = buf ? (size_t)n : 0;
  return buf;
}

/* One exported model: <dir>/<base>.onnx with <base>.input.pb and <base>.output.pb. */
static int run_onnx_case(const char *dir, const char *base) {
  char path[512];
  fuse_graph *g = NULL;
  fuse_plan *p = NULL;
  fuse_onnx_tensor in, want;
  void *bytes;
  size_t size, n = 0;
  float *got = NULL;
  int ok = 0;
  memset(&in, 0, sizeof in);
  memset(&want, 0, sizeof want);
  snprintf(path, sizeof path, "%s/%s.input.pb", dir, base);
  if ((bytes = read_all(path, &size)) != NULL) fuse_onnx_load_tensor(bytes, size, NULL, &in);
  free(bytes);
  snprintf(path, sizeof path, "%s/%s.output.pb", dir, base);
  if ((bytes = read_all(path, &size)) != NULL) fuse_onnx_load_tensor(bytes, size, NULL, &want);
  free(bytes);
  snprintf(path, sizeof path, "%s/%s.onnx", dir, base);
  if (!in.data || !want.data) {
    fprintf(stderr, "  %s: cannot read its tensors\n", base);
  } else if (fuse_onnx_load_file(path, NULL, &g) != FUSE_OK || fuse_optimize(g, NULL) != FUSE_OK ||
             fuse_compile(g, NULL, &p) != FUSE_OK) {
    fprintf(stderr, "  %s: %s\n", base, g ? fuse_graph_error(g) : "out of memory");
  } else {
    const float *ins[1];
    float *outs[1];
    int r = fuse_value_rank(g, fuse_graph_output(g, 0)), k;
    const int64_t *shape = fuse_value_shape(g, fuse_graph_output(g, 0));
    ok = r == want.rank;
    for (k = 0; ok && k < r; k++) ok = shape[k] == want.shape[k];
    for (k = 0, n = 1; ok && k < r; k++) n *= (size_t)shape[k];
    got = ok ? (float *)malloc(n * sizeof(float)) : NULL;
    ins[0] = in.data;
    outs[0] = got;
    ok = got && fuse_run(p, ins, outs, NULL) == FUSE_OK;
    if (ok && !(runner_rel_error(got, want.data, n) <= 1e-4)) {
      fprintf(stderr, "  %s: relative error %g\n", base, runner_rel_error(got, want.data, n));
      ok = 0;
    } else if (!ok) {
      fprintf(stderr, "  %s: the output's shape or the run is wrong\n", base);
    }
  }
  free(got);
  fuse_plan_destroy(p);
  fuse_graph_destroy(g);
  fuse_onnx_tensor_free(&in, NULL);
  fuse_onnx_tensor_free(&want, NULL);
  return ok;
}

TEST(onnx_models) {
  const char *dir = "tests/data/onnx_shape";
  DIR *d = opendir(dir);
  struct dirent *e;
  int count = 0;
  CHECK(d != NULL);
  while (d && (e = readdir(d)) != NULL) {
    char base[256];
    size_t len = strlen(e->d_name);
    if (len < 6 || len - 5 >= sizeof base || strcmp(e->d_name + len - 5, ".onnx") != 0) continue;
    memcpy(base, e->d_name, len - 5);
    base[len - 5] = 0;
    count++;
    CHECK(run_onnx_case(dir, base));
  }
  if (d) closedir(d);
  printf("  onnx_shape: %d ONNX models run\n", count);
  CHECK(count >= 60);
}

int main(void) {
  RUN(depth_to_space_dcr_crd);
  RUN(squeeze_unsqueeze_shapes);
  RUN(gather_api_and_text);
  RUN(gather_parsed_constant_out_of_range_clamps);
  RUN(pad_resize_api);
  RUN(builder_errors);
  RUN(text_errors);
  RUN(onnx_models);
  return runner_finish("shape");
}
