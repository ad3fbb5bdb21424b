"""The entropy (KL-divergence) calibration thresholds CalibrationTest expects, computed with
NumPy from the algorithm's description (TensorRT's "8-bit Inference with TensorRT", MXNet's
smoothing) independently of passes/Calibration.cpp. Run: /usr/bin/python3 entropy_reference.py"""
import numpy as np


def smooth(p, eps=1e-4):
    zeros = p == 0
    nz = p.size - zeros.sum()
    if nz == 0:
        return None
    return p + eps * zeros - eps * zeros.sum() / nz * (~zeros)


def kl(p, q):
    p = p / p.sum()
    q = q / q.sum()
    m = p > 0
    return float(np.sum(p[m] * np.log(p[m] / q[m])))


def threshold(counts, top, levels):
    # Sparse histograms are merged in pairs first (fewer than 16 values a bin on average).
    while counts.size // 2 >= levels and counts.sum() < 16 * counts.size:
        counts = counts.reshape(-1, 2).sum(axis=1)
    n = counts.size
    last = np.nonzero(counts)[0].max() + 1
    best, best_i = np.inf, max(levels, last)
    for i in range(levels, max(levels, last) + 1):
        p = counts[:i].astype(float).copy()
        p[i - 1] += counts[i:].sum()
        q = np.zeros(i)
        merged = i // levels
        for j in range(levels):
            start = j * merged
            stop = i if j == levels - 1 else start + merged
            part = counts[start:stop]
            nonzero = np.count_nonzero(part)
            if nonzero:
                q[start:stop] = np.where(part != 0, part.sum() / nonzero, 0)
        ps, qs = smooth(p), smooth(q)
        if ps is None or qs is None:
            continue
        d = kl(ps, qs)
        if d < best:
            best, best_i = d, i
    return best_i * top / n


# Bin k (width 1, k + 0.5) holds round(1000 exp(-k / 50)) values — a dense, decaying
# distribution that ends near bin 345 — and one outlier at -2048, whose magnitude sets top = 2048
# and lands in the last bin.
k = np.arange(2048)
c = np.round(1000 * np.exp(-k / 50))
c[2047] += 1
print("128 levels:", repr(threshold(c, 2048.0, 128)))
print("255 levels:", repr(threshold(c, 2048.0, 255)))
# 1..1000 (top 1000): 1000 values are too few for 2048 bins; merged to 256 (the fewest that keep
# 255 levels), the candidates are 255 and 256 merged bins.
c = np.zeros(2048)
for v in range(1, 1001):
    c[min(2047, int(v / 1000 * 2048))] += 1
print("sparse, 255 levels:", repr(threshold(c, 1000.0, 255)))
