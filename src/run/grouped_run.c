/* The grouped conv kernel at run time (grouped.c): units are NHWC output rows, each chunk a
   run of whole rows. */
static void fuse__grouped_units(void *ctx, int chunk, int64_t u0, int64_t u1) {
  const fuse__grouped_args *d = (const fuse__grouped_args *)ctx;
  (void)chunk;
  d->fn(d, u0, u1);
}

static void fuse__conv_grouped(const fuse__run *r, const fuse__step *s) {
  const fuse__tensor *tx = fuse__in_t(r, s, 0), *tw = fuse__in_t(r, s, 1);
  const fuse__tensor *ty = &r->p->tensors[s->out];
  const fuse_conv2d_attrs *a = &s->a.conv;
  const fuse__grouped_kind *kind = fuse__grouped_pick(r->p->isa);
  fuse__grouped_args d;
  int64_t vw, i, k;
  int q;
  if (!kind) return;
  memset(&d, 0, sizeof d);
  d.fn = kind->fn;
  vw = kind->width;
  d.x = fuse__in(r, s, 0);
  d.w = s->packed;
  d.bias = s->bias >= 0 ? fuse__in(r, s, s->bias) : NULL;
  d.y = fuse__data(r, s->out);
  d.C = tx->shape[1], d.H = tx->shape[2], d.W = tx->shape[3];
  d.K = ty->shape[1], d.OH = ty->shape[2], d.OW = ty->shape[3];
  d.KH = (int)tw->shape[2], d.KW = (int)tw->shape[3];
  d.sh = a->strides[0], d.sw = a->strides[1], d.pt = a->padding[0], d.pl = a->padding[1];
  d.dh = a->dilation[0], d.dw = a->dilation[1];
  d.G = a->groups, d.Cg = d.C / d.G, d.Kg = d.K / d.G;
  d.gv = fuse__grouped_per_vector(vw, d.Cg, d.Kg);
  d.nvec = fuse__grouped_vectors(vw, d.G, d.Cg, d.Kg);
  if (d.gv > 1) /* lane k of input i: channel i of its group, k / Kg groups into the vector */
    for (i = 0; i < d.Cg; i++)
      for (k = 0; k < vw; k++)
        d.index[i * vw + k] = k < d.gv * d.Kg ? (int32_t)(k / d.Kg * d.Cg + i) : 0;
  d.post = s->post;
  d.num_post = s->num_post;
  d.split = fuse__post_split(s->post, s->num_post);
  for (q = 0; q < s->num_post; q++) {
    const float *o = fuse__post_operand(r, s, q);
    d.residual[q] = s->post[q].kind == FUSE_POST_ADD ? o : NULL;
    d.chan[q] = s->post[q].kind == FUSE_POST_ADD ? NULL : o;
  }
  fuse__parallel(r->p, ty->shape[0] * d.OH, fuse__grouped_units, &d);
}
