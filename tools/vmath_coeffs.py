#!/usr/bin/env python3
"""tools/vmath_coeffs.py - the polynomial coefficients of src/kernels/vmath.inc.

    python3 tools/vmath_coeffs.py          (needs mpmath; takes about a minute)

Each polynomial is a weighted minimax fit, found by a Remez exchange in 40-digit arithmetic
(mpmath), then rounded to float; printed as vmath.inc writes them (9 significant digits, which
give the float back exactly). The weight makes the fitted error the one that matters: relative
to the result for exp, expm1, log1p, tanh and erf near 0, absolute in erfc for erf's large part
(1 - erfc is what is rounded there). The error printed is the fit's, before rounding to float;
tests/test_vmath.c measures what the functions reach, over every float.
"""
import struct

import mpmath as mp

mp.mp.dps = 40


def remez(target, weight, a, b, n, basis=lambda k, x: x**k, iterations=30, grid=1500):
    """c[0..n-1] minimising max |weight(x) (target(x) - sum c[k] basis(k, x))| on [a, b]"""
    a, b = mp.mpf(a), mp.mpf(b)
    points = [(a + b) / 2 - (b - a) / 2 * mp.cos(mp.pi * i / n) for i in range(n + 1)]
    xs = [a + (b - a) * mp.mpf(i) / grid for i in range(grid + 1)]
    want = [target(x) for x in xs]
    weights = [weight(x) for x in xs]
    best = None
    for _ in range(iterations):
        # the polynomial whose weighted error alternates with one level E on the points
        m = mp.matrix(n + 1, n + 1)
        rhs = mp.matrix(n + 1, 1)
        for i, x in enumerate(points):
            for k in range(n):
                m[i, k] = basis(k, x)
            m[i, n] = (-1) ** i / weight(x)
            rhs[i] = target(x)
        solution = mp.lu_solve(m, rhs)
        c = [solution[k] for k in range(n)]
        err = [weights[j] * (want[j] - sum(c[k] * basis(k, xs[j]) for k in range(n)))
               for j in range(len(xs))]
        worst = max(abs(e) for e in err)
        if best is None or worst < best[1]:
            best = (c, worst)
        # the new points: the local extremes of the error, alternating in sign
        extremes = [j for j in range(len(xs))
                    if (j == 0 or abs(err[j]) >= abs(err[j - 1]))
                    and (j == len(xs) - 1 or abs(err[j]) >= abs(err[j + 1]))]
        alternating = []
        for j in extremes:
            if alternating and mp.sign(err[alternating[-1]]) == mp.sign(err[j]):
                if abs(err[j]) > abs(err[alternating[-1]]):
                    alternating[-1] = j
            else:
                alternating.append(j)
        while len(alternating) > n + 1:
            alternating.pop(0 if abs(err[alternating[0]]) < abs(err[alternating[-1]]) else -1)
        if len(alternating) < n + 1:
            break
        points = [xs[j] for j in alternating]
    return best


def as_float(v):
    return struct.unpack('f', struct.pack('f', float(v)))[0]


def show(title, c, err, skip=0, shift=0.0):
    """c[skip:] as vmath.inc's table (c[0] - shift first where shift is given)"""
    print('%s\n  fitted error %.3g = %.3f ulp (2^-24)' % (title, float(err), float(err) * 2**24))
    values = [as_float(v) for v in c]
    values[0] = as_float(values[0] - shift)
    print('  {' + ', '.join('%.9gf' % v for v in values[skip:]) + '}')


def main():
    half_ln2 = mp.log(2) / 2

    # exp: e^r on [-ln2/2, ln2/2], relative; c[0] and c[1] come out as 1
    c, e = remez(mp.exp, lambda r: 1 / mp.exp(r), -half_ln2, half_ln2, 7)
    show('exp: e^r, degree 6', c, e)

    # expm1: (e^r - 1) / r = 1 + r P(r), relative; vmath.inc takes P (c[1:]) as r + r^2 P(r)
    q = lambda r: mp.expm1(r) / r if r else mp.mpf(1)
    c, e = remez(q, lambda r: 1 / q(r), -half_ln2, half_ln2, 7)
    show('expm1: (e^r - 1) / r, degree 6; P = c[1:]', c, e, skip=1)

    # log1p on vmath.inc's reduced range: log(1 + f) / f = 1 + f P(f), f in [-0.25, 0.5)
    q = lambda f: mp.log1p(f) / f if f else mp.mpf(1)
    c, e = remez(q, lambda f: 1 / q(f), -0.25, 0.5, 9)
    show('log1p: log(1 + f) / f, degree 8; P = c[1:]', c, e, skip=1)

    # tanh for |x| < 0.625: tanh(x) / x = 1 + y P(y), y = x^2
    q = lambda y: mp.tanh(mp.sqrt(y)) / mp.sqrt(y) if y else mp.mpf(1)
    c, e = remez(q, lambda y: 1 / q(y), 0, mp.mpf(0.625) ** 2, 6, grid=1000)
    show('tanh: tanh(x) / x in y = x^2, degree 5; P = c[1:]', c, e, skip=1)

    # erf for |x| < 0.921875: erf(x) / x = 2/sqrt(pi) + y P(y); vmath.inc adds x to x (c - 1)
    q = lambda y: mp.erf(mp.sqrt(y)) / mp.sqrt(y) if y else 2 / mp.sqrt(mp.pi)
    c, e = remez(q, lambda y: 1 / q(y), 0, mp.mpf(0.921875) ** 2, 6, grid=1000)
    show('erf, small part: erf(x) / x in y = x^2, degree 5, c[0] - 1 first', c, e, shift=1.0)

    # erf for |x| in [0.921875, 4]: erfc(a) e^(a^2) in t = a - 2.5, for the absolute error of erfc
    g = lambda a: mp.erfc(a) * mp.exp(a * a)
    c, e = remez(g, lambda a: mp.exp(-a * a), 0.921875, 4, 11,
                 basis=lambda k, a: (a - mp.mpf(2.5)) ** k)
    show('erf, large part: erfc(a) e^(a^2) in a - 2.5, degree 10', c, e)


if __name__ == '__main__':
    main()
