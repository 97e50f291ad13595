/* --------------------------------------------------- reference kernels: layers -- */
/* slice, transposed convolution (1-D convolution and pools, LSTM and GRU are composed of
   other ops) */

/* Output element i along axis d reads input element start[d] + i * step[d]. The innermost
   axes that the slice keeps whole, and the first one it cuts with step 1, are one contiguous
   run of the input: each is one memcpy. */
static void fuse__kernel_slice(const fuse__run *r, const fuse__step *s) {
  const fuse__tensor *tx = fuse__in_t(r, s, 0), *ty = &r->p->tensors[s->out];
  const float *x = fuse__in(r, s, 0);
  float *y = fuse__data(r, s->out);
  const int64_t *start = s->a.slice.start, *step = s->a.slice.step;
  int64_t stride[FUSE_MAX_RANK], idx[FUSE_MAX_RANK], run = 1, base = 0, count, o, j;
  int rank = ty->rank, outer, d;
  if (rank == 0) {
    y[0] = x[0];
    return;
  }
  for (d = rank - 1, j = 1; d >= 0; d--) { /* the input's element strides */
    stride[d] = j;
    j *= tx->shape[d];
    base += start[d] * stride[d];
  }
  for (outer = rank; outer > 0 && step[outer - 1] == 1; outer--) { /* the contiguous run */
    run *= ty->shape[outer - 1];
    if (ty->shape[outer - 1] != tx->shape[outer - 1]) {
      outer--;
      break;
    }
  }
  if (outer == rank) { /* the innermost axis strides: one element at a time along it */
    outer = rank - 1;
    run = ty->shape[rank - 1];
  }
  count = fuse__numel(outer, ty->shape);
  memset(idx, 0, sizeof idx);
  for (o = 0; o < count; o++, y += run) {
    int64_t at = base;
    for (d = 0; d < outer; d++) at += idx[d] * step[d] * stride[d];
    if (step[rank - 1] != 1) { /* outer == rank - 1 */
      int64_t jump = step[rank - 1] * stride[rank - 1];
      for (j = 0; j < run; j++) y[j] = x[at + j * jump];
    } else {
      memcpy(y, x + at, (size_t)run * sizeof(float));
    }
    for (d = outer - 1; d >= 0 && ++idx[d] == ty->shape[d]; d--) idx[d] = 0;
  }
}

/* y[n, k, oh, ow] = sum over c (in k's group), kh, kw with oh = ih * stride - pad_top +
   kh * dilation (and the same for ow) of x[n, c, ih, iw] * w[c, k % (K / groups), kh, kw]:
   each input pixel scatters its weighted kernel into the output. The loops run input channel,
   output channel, kernel tap, input row, then along an input row, so the inner loop reads x
   contiguously and the work is the convolution's own multiply-adds, none wasted on cropped or
   skipped positions. */
static void fuse__kernel_conv_transpose2d(const fuse__run *r, const fuse__step *s) {
  const fuse__tensor *tx = fuse__in_t(r, s, 0), *tw = fuse__in_t(r, s, 1);
  const fuse__tensor *ty = &r->p->tensors[s->out];
  const fuse_conv_transpose2d_attrs *a = &s->a.convt;
  const float *x = fuse__in(r, s, 0), *w = fuse__in(r, s, 1);
  float *y = fuse__data(r, s->out);
  int64_t N = tx->shape[0], C = tx->shape[1], H = tx->shape[2], W = tx->shape[3];
  int64_t Kg = tw->shape[1], KH = tw->shape[2], KW = tw->shape[3];
  int64_t K = ty->shape[1], OH = ty->shape[2], OW = ty->shape[3];
  int64_t Cg = C / a->groups, sh = a->strides[0], sw = a->strides[1];
  int64_t n, c, k, kh, kw, ih, iw;
  memset(y, 0, (size_t)fuse__numel(4, ty->shape) * sizeof(float));
  for (n = 0; n < N; n++)
    for (c = 0; c < C; c++) {
      const float *xc = x + (n * C + c) * H * W;
      for (k = 0; k < Kg; k++) {
        float *yk = y + (n * K + c / Cg * Kg + k) * OH * OW;
        const float *wk = w + (c * Kg + k) * KH * KW;
        for (kw = 0; kw < KW; kw++) {
          /* the input columns whose output column ow = iw * sw + off lands in [0, OW) */
          int64_t off = kw * a->dilation[1] - a->padding[1];
          int64_t lo = off >= 0 ? 0 : (-off + sw - 1) / sw;
          int64_t hi = OW - 1 - off < 0 ? -1 : (OW - 1 - off) / sw;
          if (hi > W - 1) hi = W - 1;
          if (lo > hi) continue;
          for (kh = 0; kh < KH; kh++) {
            float wv = wk[kh * KW + kw];
            for (ih = 0; ih < H; ih++) {
              int64_t oh = ih * sh + kh * a->dilation[0] - a->padding[0];
              float *yr;
              const float *xr = xc + ih * W;
              if (oh < 0 || oh >= OH) continue;
              yr = yk + oh * OW + (off + lo * sw); /* output column of input column lo */
              for (iw = lo; iw <= hi; iw++) yr[(iw - lo) * sw] += wv * xr[iw];
            }
          }
        }
      }
    }
}
