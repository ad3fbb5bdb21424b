// Calibration: min/max, percentile and entropy (KL-divergence) ranges of the values a
// calibration saw, over a one-pass histogram of their magnitudes.
#include "passes/Calibration.h"

#include "core/Error.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace loupe {

CalibrationMethod parseCalibrationMethod(const std::string &name) {
  if (name == "minmax")
    return CalibrationMethod::MinMax;
  if (name == "percentile")
    return CalibrationMethod::Percentile;
  if (name == "entropy")
    return CalibrationMethod::Entropy;
  fail("method must be minmax, percentile or entropy, got '", name, "'");
}

void MagnitudeHistogram::grow(double magnitude) {
  if (top_ == 0) {
    // Every value so far was 0, counted in bin 0, which any top keeps.
    top_ = magnitude;
    return;
  }
  while (top_ <= magnitude) {
    for (size_t i = 0; i < kBins / 2; ++i)
      counts_[i] = counts_[2 * i] + counts_[2 * i + 1];
    std::fill(counts_.begin() + kBins / 2, counts_.end(), 0.0);
    top_ *= 2;
  }
}

void MagnitudeHistogram::add(double v) {
  lo_ = std::min(lo_, v);
  hi_ = std::max(hi_, v);
  double m = std::fabs(v);
  if (m > top_)
    grow(m);
  // A magnitude equal to the first top lands in the last bin.
  size_t bin = top_ > 0 ? static_cast<size_t>(m / top_ * kBins) : 0;
  ++counts_[std::min(bin, kBins - 1)];
}

void MagnitudeHistogram::add(const Tensor &t) {
  double largest = 0;
  for (double v : t.data)
    if (std::isfinite(v))
      largest = std::max(largest, std::fabs(v));
  if (largest > top_)
    grow(largest); // once per tensor, not per value
  for (double v : t.data)
    if (std::isfinite(v))
      add(v);
}

double MagnitudeHistogram::total() const {
  return std::accumulate(counts_.begin(), counts_.end(), 0.0);
}

double percentileThreshold(const MagnitudeHistogram &h, double percent) {
  double total = h.total(), want = percent / 100 * total, seen = 0;
  if (total == 0)
    return 0;
  const std::vector<double> &c = h.counts();
  double width = h.top() / MagnitudeHistogram::kBins;
  for (size_t i = 0; i < c.size(); ++i) {
    seen += c[i];
    if (seen >= want)
      return static_cast<double>(i + 1) * width;
  }
  return h.top();
}

namespace {

// MXNet's smoothing before the divergence: the zero bins of a distribution get eps, taken in
// proportion from its nonzero ones, so that log(P/Q) is finite. False when all bins are zero.
bool smooth(std::vector<double> &p, double eps = 1e-4) {
  size_t zeros = static_cast<size_t>(std::count(p.begin(), p.end(), 0.0));
  if (zeros == p.size())
    return false;
  double take = eps * static_cast<double>(zeros) / static_cast<double>(p.size() - zeros);
  for (double &v : p)
    v = v == 0 ? eps : v - take;
  return true;
}

// D(P‖Q) of two unnormalised distributions, each normalised here.
double divergence(const std::vector<double> &p, const std::vector<double> &q) {
  double sp = std::accumulate(p.begin(), p.end(), 0.0);
  double sq = std::accumulate(q.begin(), q.end(), 0.0);
  double d = 0;
  for (size_t i = 0; i < p.size(); ++i)
    if (p[i] > 0)
      d += p[i] / sp * std::log((p[i] / sp) / (q[i] / sq));
  return d;
}

} // namespace

double entropyThreshold(const MagnitudeHistogram &h, int levels) {
  std::vector<double> c = h.counts();
  const size_t q = static_cast<size_t>(levels);
  double total = h.total();
  if (total == 0 || q < 2 || q > c.size())
    return h.top();
  // Too few values for the bins (a dense layer's 128 outputs over eight samples): most bins hold
  // 0 or 1, Q reproduces P wherever a group has one value, and the least divergence falls
  // wherever the folded tail happens to meet a full bin — a threshold of noise. The bins are
  // merged in pairs until each holds 16 values on average or one more halving would leave
  // fewer than `levels`.
  while (c.size() / 2 >= q && total < 16.0 * static_cast<double>(c.size())) {
    for (size_t i = 0; i < c.size() / 2; ++i)
      c[i] = c[2 * i] + c[2 * i + 1];
    c.resize(c.size() / 2);
  }
  const size_t n = c.size();
  double width = h.top() / static_cast<double>(n);
  // The last nonzero bin: candidates past it all keep everything (and equal it).
  size_t last = n;
  while (last > 0 && c[last - 1] == 0)
    --last;
  double best = std::numeric_limits<double>::infinity();
  size_t bestI = std::max(q, last);
  double above = std::accumulate(c.begin() + static_cast<std::ptrdiff_t>(q), c.end(), 0.0);
  for (size_t i = q; i <= std::max(q, last) && i <= n; ++i) {
    // P: the first i bins, what lies above folded into the last of them.
    std::vector<double> p(c.begin(), c.begin() + static_cast<std::ptrdiff_t>(i));
    p[i - 1] += above;
    // Q: the first i bins merged into q groups of i/q (the last takes the rest), each group's
    // count spread evenly over its nonzero bins.
    std::vector<double> qd(i, 0.0);
    size_t merged = i / q;
    for (size_t j = 0; j < q; ++j) {
      size_t start = j * merged, stop = j + 1 == q ? i : start + merged;
      double sum = 0;
      size_t nonzero = 0;
      for (size_t k = start; k < stop; ++k) {
        sum += c[k];
        nonzero += c[k] != 0;
      }
      for (size_t k = start; k < stop; ++k)
        if (c[k] != 0)
          qd[k] = sum / static_cast<double>(nonzero);
    }
    if (i < n)
      above -= c[i];
    if (!smooth(p) || !smooth(qd))
      continue;
    double d = divergence(p, qd);
    if (d < best) {
      best = d;
      bestI = i;
    }
  }
  return static_cast<double>(bestI) * width;
}

std::pair<double, double> calibratedRange(const MagnitudeHistogram &h, CalibrationMethod method,
                                          double percent) {
  double lo = h.lo(), hi = h.hi();
  if (!(lo <= hi)) // nothing seen
    return {0, 0};
  double t = hi;
  switch (method) {
  case CalibrationMethod::MinMax:
    return {lo, hi};
  case CalibrationMethod::Percentile:
    t = percentileThreshold(h, percent);
    break;
  case CalibrationMethod::Entropy:
    t = entropyThreshold(h, lo >= 0 ? 255 : 128);
    break;
  }
  return {std::max(lo, -t), std::min(hi, t)};
}

} // namespace loupe
