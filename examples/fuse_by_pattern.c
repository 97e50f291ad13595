/* fuse_by_pattern.c - seed 003: the FuseOpsByPattern notebook ("Fuse Conv2dReLU") on fuse.h.

   The notebook uses TVM's make_fused_bias_activation_pattern("relax.nn.conv2d", activation=...)
   which, without a bias, is activation(conv2d(*, *)), or conv2d(*, *) with activation=None.
   In fuse.h's pattern text:

       dnnl.conv2d_relu   relu(conv2d(*, *))
       dnnl.conv2d        conv2d(*, *)

   Scenarios, each printed before and after:
     1. Conv2dReLU, weight bound as a constant (BindParams), rule conv2d_relu
     2. the same module with the weight still a parameter (a graph input)
     3. an empty rule list: nothing changes
     4. Conv2dReLUx2 with [conv2d_relu]: two composites
     5. Conv2dReLUx2 with [conv2d, conv2d_relu]: rules apply in list order, so conv2d takes
        both convolutions first and the relus stay outside (the notebook's "surprise")
     6. Conv2dConv2dReLU with [conv2d_relu, conv2d]: conv2 + relu, then conv1 alone

   Build and run: make examples && ./build/fuse_by_pattern   (--short: results only) */
#define FUSE_IMPLEMENTATION
#include "fuse.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CONV2D_RELU "relu(conv2d(*, *))" /* make_fused_bias_activation_pattern(conv2d, relu) */
#define CONV2D "conv2d(*, *)"            /* make_fused_bias_activation_pattern(conv2d, None) */

static const fuse_rule rule_conv2d_relu = {"dnnl.conv2d_relu", CONV2D_RELU, NULL, NULL};
static const fuse_rule rule_conv2d = {"dnnl.conv2d", CONV2D, NULL, NULL};

static float *weights; /* 64x64x3x3, shared by every graph */
static int verbose = 1; /* 0: no listings */
static const int64_t x_shape[4] = {1, 64, 56, 56}, w_shape[4] = {64, 64, 3, 3};

static fuse_value weight(fuse_graph *g, const char *name, int bound) {
  return bound ? fuse_constant(g, name, 4, w_shape, weights) : fuse_input(g, name, 4, w_shape);
}

/* class Conv2dReLU: conv1 = relu(conv2d(data, weight1, padding=(1, 1))) */
static fuse_graph *conv2d_relu(int bound) {
  fuse_conv2d_attrs pad1 = {{1, 1}, {1, 1, 1, 1}, {1, 1}, 1};
  fuse_graph *g = fuse_graph_create(NULL);
  fuse_value data = fuse_input(g, "data", 4, x_shape);
  fuse_value w1 = weight(g, "weight1", bound);
  fuse_output(g, fuse_relu(g, fuse_conv2d(g, data, w1, &pad1)));
  return g;
}

/* class Conv2dReLUx2: two conv2d + relu, the second without padding;
   class Conv2dConv2dReLU (relu1 = 0): the first relu left out */
static fuse_graph *two_convs(int relu1) {
  fuse_conv2d_attrs pad1 = {{1, 1}, {1, 1, 1, 1}, {1, 1}, 1}, pad0 = {{1, 1}, {0, 0, 0, 0}, {1, 1}, 1};
  fuse_graph *g = fuse_graph_create(NULL);
  fuse_value data = fuse_input(g, "data", 4, x_shape);
  fuse_value w1 = weight(g, "weight1", 1), w2 = weight(g, "weight2", 1);
  fuse_value conv1 = fuse_conv2d(g, data, w1, &pad1);
  if (relu1) conv1 = fuse_relu(g, conv1);
  fuse_output(g, fuse_relu(g, fuse_conv2d(g, conv1, w2, &pad0)));
  return g;
}

/* The text form into a growing buffer, to compare listings. */
typedef struct text {
  char *buf;
  size_t len, cap;
} text;

static void append(void *user, const char *s, size_t n) {
  text *t = (text *)user;
  if (!t->buf && t->cap) return; /* an earlier allocation failed */
  if (t->len + n + 1 > t->cap) {
    size_t cap = (t->len + n + 1) * 2;
    char *bigger = (char *)realloc(t->buf, cap);
    if (!bigger) {
      free(t->buf);
      t->buf = NULL;
      t->cap = 1;
      return;
    }
    t->buf = bigger;
    t->cap = cap;
  }
  memcpy(t->buf + t->len, s, n);
  t->len += n;
  t->buf[t->len] = 0;
}

static void print_rules(const fuse_rule *rules, int n) {
  int i;
  printf("rules:");
  if (n == 0) printf(" (none)");
  for (i = 0; i < n; i++) printf("%s {\"%s\", \"%s\"}", i ? "," : "", rules[i].name, rules[i].pattern);
  printf("\n");
}

/* Prints g, applies the rules, prints it again with its composites; returns 0 when all went well. */
static int scenario(const char *title, fuse_graph *g, const fuse_rule *rules, int n,
                    const char *explanation) {
  fuse_composite_info info;
  fuse_result r;
  text before = {NULL, 0, 0}, after = {NULL, 0, 0};
  int i, ops_before;
  printf("%s=== %s\n", verbose ? "\n" : "", title);
  if (!g || fuse_graph_status(g) != FUSE_OK) {
    fprintf(stderr, "building the graph failed: %s\n", g ? fuse_graph_error(g) : "out of memory");
    fuse_graph_destroy(g);
    return 1;
  }
  ops_before = fuse_graph_op_count(g);
  fuse_graph_write(g, append, &before);
  if (verbose) {
    printf("--- before: %d ops\n", ops_before);
    fuse_graph_print(g, stdout);
  }
  print_rules(rules, n);
  r = fuse_ops_by_pattern(g, rules, n, NULL);
  if (r != FUSE_OK) {
    fprintf(stderr, "fuse_ops_by_pattern: %s: %s\n", fuse_result_string(r), fuse_graph_error(g));
    fuse_graph_destroy(g);
    return 1;
  }
  fuse_graph_write(g, append, &after);
  if (before.buf && after.buf && strcmp(before.buf, after.buf) == 0) {
    printf("--- after: the listing is unchanged, byte for byte\n");
  } else if (verbose) {
    printf("--- after: %d ops, %d composites\n", fuse_graph_op_count(g), fuse_composite_count(g));
    fuse_graph_print(g, stdout);
  } else {
    printf("ops: %d -> %d\n", ops_before, fuse_graph_op_count(g));
  }
  for (i = 0; i < fuse_composite_count(g); i++)
    if (fuse_composite_get(g, i, &info) == FUSE_OK)
      printf("composite %d: %s -> %s (%d op%s)\n", i, info.name, info.function, info.num_ops,
             info.num_ops == 1 ? "" : "s");
  printf("=> %s\n", explanation);
  free(before.buf);
  free(after.buf);
  fuse_graph_destroy(g);
  return 0;
}

int main(int argc, char **argv) {
  const fuse_rule priority[2] = {rule_conv2d, rule_conv2d_relu};
  const fuse_rule relu_first[2] = {rule_conv2d_relu, rule_conv2d};
  const size_t n_w = 64 * 64 * 3 * 3;
  uint32_t s = 7u;
  size_t i;
  int failed = 0;

  verbose = !(argc > 1 && strcmp(argv[1], "--short") == 0);
  weights = (float *)malloc(n_w * sizeof(float));
  if (!weights) return 1;
  for (i = 0; i < n_w; i++) { /* any numbers: only the structure matters here */
    s = s * 1664525u + 1013904223u;
    weights[i] = (float)((double)(s >> 8) / 16777216.0 - 0.5) / 24.0f;
  }

  failed |= scenario("1. Conv2dReLU, weight1 bound as a constant (BindParams + FuseOpsByPattern)",
                     conv2d_relu(1), &rule_conv2d_relu, 1,
                     "conv2d + relu became fused_conv2d_relu; the constant weight1 is bound "
                     "inside it (bind_constants=1), as the notebook's assert expects.");
  failed |= scenario("2. Conv2dReLU, weight1 still a parameter", conv2d_relu(0), &rule_conv2d_relu, 1,
                     "the same composite; weight1 is a graph input, so it stays a parameter.");
  failed |= scenario("3. Conv2dReLU, empty rule list", conv2d_relu(1), NULL, 0,
                     "no rules, nothing to fuse: FuseOpsByPattern with [] is the identity.");
  failed |= scenario("4. Conv2dReLUx2 with [conv2d_relu]", two_convs(1), &rule_conv2d_relu, 1,
                     "each conv2d + relu became its own fused_conv2d_relu.");
  failed |= scenario("5. Conv2dReLUx2 with [conv2d, conv2d_relu]: rules apply in list order",
                     two_convs(1), priority, 2,
                     "conv2d comes first and takes both convolutions; conv2d_relu finds nothing "
                     "left, so only conv2d is fused and the relus stay separate.");
  failed |= scenario("6. Conv2dConv2dReLU with [conv2d_relu, conv2d]", two_convs(0), relu_first, 2,
                     "conv2d_relu takes the second conv2d and its relu, then conv2d takes the first "
                     "(the notebook's last cell ran Conv2dReLUx2 by mistake; this is the module it meant).");
  free(weights);
  return failed;
}
