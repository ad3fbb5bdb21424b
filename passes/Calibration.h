// Calibration: the range a quantized activation keeps, from the values the calibration saw —
// their smallest and largest (min/max), a percentile of their magnitudes, or the threshold whose
// quantization loses least information (entropy: TensorRT's KL-divergence calibration).
#pragma once

#include "core/Tensor.h"

#include <limits>
#include <string>
#include <utility>
#include <vector>

namespace loupe {

/// How :quantize picks an activation's range from what the calibration saw.
enum class CalibrationMethod {
  MinMax,     ///< the smallest and largest value (outliers stretch the steps)
  Percentile, ///< magnitudes clipped at a percentile (the rest saturate)
  Entropy,    ///< magnitudes clipped where the quantized distribution is closest (KL) to the seen
};

/// The method named `name` ("minmax", "percentile", "entropy"); throws Error for another name.
CalibrationMethod parseCalibrationMethod(const std::string &name);

/// The values one tensor took over the calibration: their smallest and largest, and a histogram
/// of their magnitudes in kBins equal bins over [0, top). `top` starts at the first nonzero
/// magnitude seen and doubles, merging bins in pairs, whenever a value does not fit — so that the
/// histogram is built in one pass, exactly (each merged bin counts what its two halves did).
class MagnitudeHistogram {
public:
  static constexpr size_t kBins = 2048;

  /// Adds every finite value of `t` (NaN and infinities are not counted).
  void add(const Tensor &t);
  /// Adds one value (finite).
  void add(double v);

  double lo() const { return lo_; } ///< the smallest value seen (+inf before any)
  double hi() const { return hi_; } ///< the largest value seen (-inf before any)
  double top() const { return top_; }
  const std::vector<double> &counts() const { return counts_; }
  double total() const; ///< how many values were counted

private:
  void grow(double magnitude);

  std::vector<double> counts_ = std::vector<double>(kBins, 0.0);
  double top_ = 0;
  double lo_ = std::numeric_limits<double>::infinity();
  double hi_ = -std::numeric_limits<double>::infinity();
};

/// The magnitude under which `percent` of the values lie: the upper edge of the bin where the
/// histogram's cumulative count reaches percent/100 of its total (0 for an empty histogram).
double percentileThreshold(const MagnitudeHistogram &h, double percent);

/// TensorRT's entropy calibration: for each candidate threshold (the upper edge of bin i, from
/// `levels` bins up to all of them) the kept bins P, the values above folded into its last bin,
/// against Q, those bins quantized to `levels` steps (merged in groups and spread back over the
/// group's nonzero bins); the threshold whose KL divergence D(P‖Q) is least (the smallest of
/// equal ones). `levels`: the steps the magnitudes get (255 for uint8 data that is never
/// negative, 128 when the steps also cover negatives). Bins are first merged in pairs while they
/// hold fewer than 16 values on average and stay at least `levels`: the divergence of a sparse
/// histogram is noise.
double entropyThreshold(const MagnitudeHistogram &h, int levels);

/// The range [lo, hi] a quantization of the values `h` saw keeps under `method` (`percent` for
/// Percentile): min/max as seen, else the threshold T applied to both sides (max(lo, -T),
/// min(hi, T)).
std::pair<double, double> calibratedRange(const MagnitudeHistogram &h, CalibrationMethod method,
                                          double percent);

} // namespace loupe
