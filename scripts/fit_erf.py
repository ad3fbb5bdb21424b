#!/usr/bin/env python3
"""Fits the float32 erf of backend/loop/FastMath.cpp: erf(x) = x P(x^2) / Q(x^2) on [-4, 4].

Iteratively reweighted linear least squares on the relative error (Sanathanan-Koerner
iterations dividing by the last Q, with Lawson-style weights toward the minimax fit), then a
check of the float32 evaluation (Horner, float32 coefficients) against math.erf on a dense grid.
Needs numpy (Debian's python3-numpy); not run by the build or the tests, which test the result.

  python3 scripts/fit_erf.py          # degrees 5/5 on [-4, 4], as FastMath uses
"""
import math
import sys

import numpy as np


def fit(m, n, top):
    x = np.unique(np.concatenate([top * (1 - np.cos(np.linspace(0, np.pi / 2, 4000))),
                                  np.linspace(0, top, 4000)]))
    s = x * x
    f = np.array([2 / math.sqrt(math.pi) if v == 0 else math.erf(v) / v for v in x])
    w = np.ones_like(s)
    q_prev = np.ones_like(s)
    best = None
    for _ in range(60):
        a = np.zeros((len(s), m + 1 + n))
        for i in range(m + 1):
            a[:, i] = s**i
        for j in range(1, n + 1):
            a[:, m + j] = -f * s**j
        scale = w / (f * q_prev)
        coef = np.linalg.lstsq(a * scale[:, None], f * scale, rcond=None)[0]
        p = np.polyval(coef[:m + 1][::-1], s)
        q = 1 + np.polyval(np.concatenate([coef[m + 1:][::-1], [0]]), s)
        err = (p / q - f) / f
        worst = np.max(np.abs(err))
        if best is None or worst < best[0]:
            best = (worst, coef.copy())
        q_prev = q
        w = w * (np.abs(err) / worst)**0.5 + 1e-3
        w /= w.max()
    worst, coef = best
    return worst, coef[:m + 1], np.concatenate([[1.0], coef[m + 1:]])


def float32_error(p, q, top):
    xs = np.linspace(-5, 5, 2000001).astype(np.float32)
    xs = np.concatenate([xs, np.float32(10.0)**np.arange(-30, 1, dtype=np.float32)])
    x = np.clip(xs, np.float32(-top), np.float32(top))
    s = x * x

    def horner(c):
        acc = np.float32(c[-1])
        for k in c[-2::-1]:
            acc = (acc * s + np.float32(k)).astype(np.float32)
        return acc

    got = (x * horner(p) / horner(q)).astype(np.float64)
    exact = np.array([math.erf(float(v)) for v in xs])
    rel = np.abs(got - exact) / np.maximum(np.abs(exact), 1e-300)
    return rel.max() / np.finfo(np.float32).eps


def main():
    m, n, top = 5, 5, 4.0
    worst, p, q = fit(m, n, top)
    print("relative error in exact arithmetic: %.3g" % worst)
    print("P:", ", ".join("%.17g" % v for v in p))
    print("Q:", ", ".join("%.17g" % v for v in q))
    print("float32 evaluation: %.2f ulps (relative, float32 epsilon)" % float32_error(p, q, top))


if __name__ == "__main__":
    sys.exit(main())
