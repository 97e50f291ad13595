#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <string.h>
#if defined(__linux__) && !defined(FUSE_NO_MMAP)
#include <sys/mman.h>
extern int madvise(void *addr, size_t len, int advice); /* not declared under -std=c99 */
#elif defined(__APPLE__) && !defined(FUSE_NO_MMAP)
#include <sys/mman.h>
#endif
#ifdef _OPENMP
#include <omp.h>
#endif

#if defined(FUSE_MALLOC) != defined(FUSE_FREE)
#error "fuse.h: define both FUSE_MALLOC and FUSE_FREE, or neither"
#endif
#ifndef FUSE_MALLOC
#include <stdlib.h>
#define FUSE_MALLOC(size) malloc(size)
#define FUSE_FREE(ptr) free(ptr)
#endif
#ifndef FUSE_ASSERT
#include <assert.h>
#define FUSE_ASSERT(cond) assert(cond)
#endif

#define FUSE__ALIGN 64                   /* tensors, constants and workspace blocks */
#define FUSE__MAX_DIM ((int64_t)0x7fffffff) /* keeps dim * attribute products in int64 */
#define FUSE__MAX_BYTES ((uint64_t)1 << 50)
#define FUSE__INLINE_CONST_MAX 4         /* constants this small print their values */

FUSE_API const char *fuse_result_string(fuse_result r) {
  switch (r) {
  case FUSE_OK: return "ok";
  case FUSE_ERROR_INVALID_ARGUMENT: return "invalid argument";
  case FUSE_ERROR_SHAPE: return "shape mismatch";
  case FUSE_ERROR_OUT_OF_MEMORY: return "out of memory";
  case FUSE_ERROR_UNSUPPORTED: return "unsupported";
  case FUSE_ERROR_PARSE: return "parse error";
  case FUSE_ERROR_IO: return "input/output error";
  case FUSE_ERROR_BACKEND: return "backend error";
  }
  return "unknown fuse_result";
}

/* ---------------------------------------------------------------- allocator -- */

static void *fuse__alloc(const fuse_allocator *a, size_t size, size_t align) {
  void *p;
  if (size == 0) size = 1;
  if (a->alloc) {
    p = a->alloc(size, align, a->user);
    if (p && ((uintptr_t)p & (align - 1))) { /* the contract was broken: treat as failure */
      a->free(p, a->user);
      return NULL;
    }
    return p;
  } else {
    /* over-allocate, align, and keep the block's start just before the aligned pointer */
    unsigned char *raw;
    uintptr_t at;
    if (size > (size_t)-1 - align - sizeof(void *)) return NULL;
    raw = (unsigned char *)FUSE_MALLOC(size + align + sizeof(void *));
    if (!raw) return NULL;
    at = ((uintptr_t)raw + sizeof(void *) + align - 1) & ~(uintptr_t)(align - 1);
    memcpy((void *)(at - sizeof(void *)), &raw, sizeof(void *));
    return (void *)at;
  }
}

static void fuse__free(const fuse_allocator *a, void *p) {
  if (!p) return;
  if (a->alloc) {
    a->free(p, a->user);
  } else {
    void *raw;
    memcpy(&raw, (unsigned char *)p - sizeof(void *), sizeof(void *));
    FUSE_FREE(raw);
  }
}

/* ------------------------------------------------------------ text output -- */
/* One small writer serves error messages (fixed buffer, truncated) and the text form
   (flushed to the caller's callback). No stdio, no locale. */

typedef struct fuse__out {
  char *buf;
  size_t len, cap;
  fuse_write_fn write; /* NULL: truncate at cap - 1 and keep a terminating NUL */
  void *user;
} fuse__out;

static void fuse__flush(fuse__out *o) {
  if (o->write && o->len) o->write(o->user, o->buf, o->len);
  o->len = 0;
}

static void fuse__put(fuse__out *o, const char *s, size_t n) {
  while (n) {
    size_t room = o->cap - o->len - (o->write ? 0 : 1), k;
    if (room == 0) {
      if (!o->write) break;
      fuse__flush(o);
      continue;
    }
    k = n < room ? n : room;
    memcpy(o->buf + o->len, s, k);
    o->len += k;
    s += k;
    n -= k;
  }
  if (!o->write) o->buf[o->len] = 0;
}

static void fuse__puts(fuse__out *o, const char *s) { fuse__put(o, s, strlen(s)); }

static void fuse__put_int(fuse__out *o, int64_t v) {
  char tmp[24];
  int n = 0;
  uint64_t u = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
  do {
    tmp[sizeof tmp - 1 - n++] = (char)('0' + (int)(u % 10));
    u /= 10;
  } while (u);
  if (v < 0) tmp[sizeof tmp - 1 - n++] = '-';
  fuse__put(o, tmp + sizeof tmp - n, (size_t)n);
}

/* 10^k as a double; exact for 0 <= k <= 22. */
static double fuse__pow10(int k) {
  static const double small[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                 1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
                                 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
  double r = 1;
  int neg = k < 0;
  if (neg) k = -k;
  while (k > 22) {
    r *= 1e22;
    k -= 22;
  }
  r *= small[k];
  return neg ? 1 / r : r;
}

/* Parses a decimal number ("-1.5e-3", "inf", "-inf", "nan") without the C locale.
   Returns the characters used, 0 if there is no number. */
static size_t fuse__parse_number(const char *s, double *out) {
  const char *p = s;
  uint64_t mant = 0;
  int digits = 0, exp10 = 0, neg = 0, any = 0;
  if (*p == '-' || *p == '+') neg = *p++ == '-';
  if (strncmp(p, "inf", 3) == 0) {
    *out = neg ? -HUGE_VAL : HUGE_VAL;
    return (size_t)(p + 3 - s);
  }
  if (strncmp(p, "nan", 3) == 0) {
    *out = NAN;
    return (size_t)(p + 3 - s);
  }
  for (; *p >= '0' && *p <= '9'; p++, any = 1) {
    if (digits < 19) {
      mant = mant * 10 + (uint64_t)(*p - '0');
      if (mant) digits++;
    } else {
      exp10++;
    }
  }
  if (*p == '.') {
    for (p++; *p >= '0' && *p <= '9'; p++, any = 1) {
      if (digits < 19) {
        mant = mant * 10 + (uint64_t)(*p - '0');
        if (mant) digits++;
        exp10--;
      }
    }
  }
  if (!any) return 0;
  if (*p == 'e' || *p == 'E') {
    const char *q = p + 1;
    int eneg = 0, e = 0, edigits = 0;
    if (*q == '-' || *q == '+') eneg = *q++ == '-';
    for (; *q >= '0' && *q <= '9'; q++, edigits++)
      if (e < 100000) e = e * 10 + (*q - '0');
    if (edigits) {
      exp10 += eneg ? -e : e;
      p = q;
    }
  }
  {
    double v = (double)mant; /* exact below 2^53, which our own output stays within */
    if (mant == 0 || exp10 < -400) v = 0;
    else if (exp10 > 400) v = HUGE_VAL;
    else if (exp10 >= 0) v *= fuse__pow10(exp10);
    else if (exp10 >= -22) v /= fuse__pow10(-exp10);
    else v = v / fuse__pow10(22) / fuse__pow10(-exp10 - 22);
    *out = neg ? -v : v;
  }
  return (size_t)(p - s);
}

/* Writes the shortest decimal that parses back to exactly v. */
static size_t fuse__format_float(char *out, float v) {
  double x = fabs((double)v);
  int prec;
  char *o = out;
  if (v != v) return (size_t)(strcpy(out, "nan"), 3);
  if (signbit(v)) *o++ = '-';
  if (x == HUGE_VAL) return (size_t)(strcpy(o, "inf"), o + 3 - out);
  if (x == 0) return (size_t)(strcpy(o, "0"), o + 1 - out);
  for (prec = 1; prec <= 12; prec++) {
    int e = (int)floor(log10(x));
    double scaled;
    if (x >= fuse__pow10(e + 1)) e++; /* log10 may be off by one next to powers of ten */
    if (x < fuse__pow10(e)) e--;
    uint64_t m, lim = (uint64_t)fuse__pow10(prec);
    char dig[24], *w = o;
    int nd, i, point;
    double back;
    scaled = (prec - 1 - e >= 0) ? x * fuse__pow10(prec - 1 - e) : x / fuse__pow10(e - prec + 1);
    m = (uint64_t)(scaled + 0.5);
    if (m >= lim) {
      m = (m + 5) / 10;
      e++;
    }
    for (nd = 0; nd < prec; nd++) { /* digits, most significant first */
      dig[prec - 1 - nd] = (char)('0' + (int)(m % 10));
      m /= 10;
    }
    while (nd > 1 && dig[nd - 1] == '0') nd--; /* drop trailing zeros */
    if (e >= -4 && e < 16) { /* plain notation, as %g would */
      point = e + 1;                             /* digits before the point */
      if (point <= 0) {
        *w++ = '0';
        *w++ = '.';
        for (i = 0; i < -point; i++) *w++ = '0';
        for (i = 0; i < nd; i++) *w++ = dig[i];
      } else {
        for (i = 0; i < point; i++) *w++ = i < nd ? dig[i] : '0';
        if (nd > point) {
          *w++ = '.';
          for (i = point; i < nd; i++) *w++ = dig[i];
        }
      }
    } else { /* d.ddde-05 */
      int ae = e < 0 ? -e : e;
      *w++ = dig[0];
      if (nd > 1) {
        *w++ = '.';
        for (i = 1; i < nd; i++) *w++ = dig[i];
      }
      *w++ = 'e';
      *w++ = e < 0 ? '-' : '+';
      if (ae >= 100) *w++ = (char)('0' + ae / 100);
      *w++ = (char)('0' + ae / 10 % 10);
      *w++ = (char)('0' + ae % 10);
    }
    *w = 0;
    if (fuse__parse_number(o, &back) && (float)back == (float)x) return (size_t)(w - out);
  }
  FUSE_ASSERT(0 && "fuse__format_float: no round-trip form found");
  return (size_t)(o - out);
}

static void fuse__put_float(fuse__out *o, float v) {
  char tmp[40];
  fuse__put(o, tmp, fuse__format_float(tmp, v));
}

static void fuse__put_dims(fuse__out *o, int n, const int64_t *d, const char *sep) {
  int i;
  fuse__puts(o, "[");
  for (i = 0; i < n; i++) {
    if (i) fuse__puts(o, sep);
    fuse__put_int(o, d[i]);
  }
  fuse__puts(o, "]");
}

/* The number of elements of a shape. */
static int64_t fuse__numel(int rank, const int64_t *shape) {
  int64_t n = 1;
  int i;
  for (i = 0; i < rank; i++) n *= shape[i];
  return n;
}

/* numpy broadcasting of two shapes; 0 if they do not broadcast */
static int fuse__broadcast(int ra, const int64_t *a, int rb, const int64_t *b, int *r,
                           int64_t *out) {
  int i, n = ra > rb ? ra : rb;
  for (i = 0; i < n; i++) {
    int64_t da = i < n - ra ? 1 : a[i - (n - ra)], db = i < n - rb ? 1 : b[i - (n - rb)];
    if (da != db && da != 1 && db != 1) return 0;
    out[i] = da == 1 ? db : da;
  }
  *r = n;
  return 1;
}

/* FUSE_NO_MESSAGES: fuse_plan_load's refusals return their code with an empty message, and
   the messages and their formatting are not compiled in (run/plan_blob.c), for firmware that
   has nowhere to print them, as TensorFlow Lite Micro's TF_LITE_STRIP_ERROR_STRINGS does. */
#ifdef FUSE_NO_MESSAGES
#define FUSE__MESSAGES 0
#else
#define FUSE__MESSAGES 1
#endif
/* a refusal without its message: its code (a call, so that a refusal whose code is not used is
   no statement without effect) */
static fuse_result fuse__unexplained(fuse_result rc) { return rc; }

/* %f: the shortest decimal that reads back (fuse__put_float). A runtime-only build's own
   messages print no floats (the loader's name counts, offsets, sizes and shapes), so there %f
   rounds to a whole number and the round-trip search, with the libm calls it makes (log10,
   floor), is left out of firmware. */
#ifdef FUSE_RUNTIME_ONLY
#define FUSE__FLOATS_IN_MESSAGES 0
#else
#define FUSE__FLOATS_IN_MESSAGES 1
#endif
static void fuse__put_float_rounded(fuse__out *o, float v) {
  if (v != v) fuse__puts(o, "nan");
  else if (v >= 9e18f || v <= -9e18f) fuse__puts(o, v > 0 ? "inf" : "-inf");
  else fuse__put_int(o, (int64_t)(v + (v < 0 ? -0.5f : 0.5f)));
}

/* A value's name for %V (graph/graph.c), NULL when it has none; a runtime-only build has no
   graph (g is always NULL there). */
#ifdef FUSE_RUNTIME_ONLY
static const char *fuse__value_name(const fuse_graph *g, fuse_value v) {
  (void)g, (void)v;
  return NULL;
}
#else
static const char *fuse__value_name(const fuse_graph *g, fuse_value v);
#endif

/* Formats a message: %s string, %d int, %D int64_t, %f float, %S shape (int rank,
   const int64_t *dims), %V a value's label (fuse_value, graph g), %% percent. */
static void fuse__vformat(fuse__out *o, const fuse_graph *g, const char *fmt, va_list ap) {
  const char *p;
  for (p = fmt; *p; p++) {
    if (*p != '%') {
      fuse__put(o, p, 1);
      continue;
    }
    switch (*++p) {
    case 's': fuse__puts(o, va_arg(ap, const char *)); break;
    case 'd': fuse__put_int(o, va_arg(ap, int)); break;
    case 'D': fuse__put_int(o, va_arg(ap, int64_t)); break;
    case 'f': {
      float v = (float)va_arg(ap, double);
      if (!FUSE__FLOATS_IN_MESSAGES) /* (a runtime-only build: see fuse__put_float_rounded) */
        fuse__put_float_rounded(o, v);
      else
        fuse__put_float(o, v);
      break;
    }
    case 'S': {
      int r = va_arg(ap, int);
      fuse__put_dims(o, r, va_arg(ap, const int64_t *), ",");
      break;
    }
    case 'V': {
      fuse_value v = va_arg(ap, fuse_value);
      const char *name = fuse__value_name(g, v);
      if (name) {
        fuse__puts(o, "'");
        fuse__puts(o, name);
        fuse__puts(o, "'");
      } else {
        fuse__puts(o, "%");
        fuse__put_int(o, v);
      }
      break;
    }
    case '%': fuse__put(o, "%", 1); break;
    default: FUSE_ASSERT(0 && "fuse__vformat: unknown directive"); return;
    }
  }
}

/* fuse__vformat with the arguments in place. */
static void fuse__format(fuse__out *o, const fuse_graph *g, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fuse__vformat(o, g, fmt, ap);
  va_end(ap);
}
