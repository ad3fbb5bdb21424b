// CalibrationTest: the magnitude histogram's exact merges, the percentile and entropy thresholds
// against hand-worked values and an independent NumPy computation (entropy_reference.py), and
// :quantize's method= reaching the scales it writes.
#include "TestUtil.h"

#include "passes/Calibration.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

using namespace loupe;
using namespace loupe::test;

namespace {

Tensor values(const std::vector<double> &v) {
  Tensor t({static_cast<int64_t>(v.size())}, kFloat32);
  t.data = v;
  return t;
}

// Bin k of a histogram with top 2048 (width 1) holding round(1000 exp(-k / 50)) values, k + 0.5
// each, and one outlier at -2048 (which sets the top and lands in the last bin).
MagnitudeHistogram decayingWithOutlier() {
  std::vector<double> v{-2048};
  for (int k = 0; k < 2048; ++k)
    for (double n = std::nearbyint(1000 * std::exp(-k / 50.0)); n > 0; --n)
      v.push_back(k + 0.5);
  MagnitudeHistogram h;
  h.add(values(v));
  return h;
}

} // namespace

TEST(Calibration, TheHistogramDoublesItsTopByMergingBinsInPairs) {
  MagnitudeHistogram h;
  h.add(values({0, 0}));
  EXPECT_EQ(h.top(), 0);
  EXPECT_EQ(h.counts()[0], 2);
  h.add(values({1.0})); // top 1: 1.0 in the last bin, the zeros stay in bin 0
  EXPECT_EQ(h.top(), 1);
  EXPECT_EQ(h.counts()[2047], 1);
  h.add(values({-3.0, NAN, INFINITY})); // top 1 -> 2 -> 4: bin 2047 -> 1023 -> 511; 3 in bin 1536
  EXPECT_EQ(h.top(), 4);
  EXPECT_EQ(h.counts()[0], 2);
  EXPECT_EQ(h.counts()[511], 1);
  EXPECT_EQ(h.counts()[1536], 1);
  EXPECT_EQ(h.total(), 4); // NaN and inf not counted
  EXPECT_EQ(h.lo(), -3);
  EXPECT_EQ(h.hi(), 1);
}

TEST(Calibration, PercentileIsTheUpperEdgeOfTheBinThatReachesIt) {
  // 1..1000: top 1000, width 1000/2048. 990 values lie at or under 990, whose bin is
  // floor(990 * 2.048) = 2027: the threshold is bin 2027's upper edge, 2028 * 1000 / 2048.
  std::vector<double> v;
  for (int i = 1; i <= 1000; ++i)
    v.push_back(i);
  MagnitudeHistogram h;
  h.add(values(v));
  EXPECT_DOUBLE_EQ(percentileThreshold(h, 99), 990.234375);
  EXPECT_DOUBLE_EQ(percentileThreshold(h, 100), 1000);
  auto [lo, hi] = calibratedRange(h, CalibrationMethod::Percentile, 99);
  EXPECT_EQ(lo, 1); // the threshold clips only the side it exceeds
  EXPECT_DOUBLE_EQ(hi, 990.234375);
  EXPECT_EQ(calibratedRange(h, CalibrationMethod::MinMax, 99), std::make_pair(1.0, 1000.0));
}

TEST(Calibration, EntropyMatchesTheNumPyReference) {
  MagnitudeHistogram h = decayingWithOutlier();
  ASSERT_EQ(h.top(), 2048);
  // tests/passes/entropy_reference.py: 511.0 with 128 levels, 764.0 with 255.
  EXPECT_DOUBLE_EQ(entropyThreshold(h, 128), 511.0);
  EXPECT_DOUBLE_EQ(entropyThreshold(h, 255), 764.0);
  // Values of both signs get 128 levels a side: the outlier at -2048 is clipped to -511; the
  // largest positive value, under 511, stays.
  auto [lo, hi] = calibratedRange(h, CalibrationMethod::Entropy, 0);
  EXPECT_EQ(lo, -511);
  EXPECT_LT(h.hi(), 511);
  EXPECT_EQ(hi, h.hi());
}

// 1..1000: too few values for 2048 bins, merged to 256 before the search — which keeps them all
// (entropy_reference.py: 1000.0) where the unmerged bins' noise would cut into them.
TEST(Calibration, EntropyMergesTheBinsOfFewValues) {
  std::vector<double> v;
  for (int i = 1; i <= 1000; ++i)
    v.push_back(i);
  MagnitudeHistogram h;
  h.add(values(v));
  EXPECT_DOUBLE_EQ(entropyThreshold(h, 255), 1000.0);
}

TEST(Calibration, AnEmptyHistogramKeepsZero) {
  MagnitudeHistogram h;
  EXPECT_EQ(percentileThreshold(h, 99.99), 0);
  EXPECT_EQ(calibratedRange(h, CalibrationMethod::Entropy, 0), std::make_pair(0.0, 0.0));
}

TEST(Calibration, MethodNames) {
  EXPECT_EQ(parseCalibrationMethod("entropy"), CalibrationMethod::Entropy);
  EXPECT_EQ(parseCalibrationMethod("percentile"), CalibrationMethod::Percentile);
  EXPECT_EQ(parseCalibrationMethod("minmax"), CalibrationMethod::MinMax);
  expectError([] { parseCalibrationMethod("kl"); },
              "method must be minmax, percentile or entropy, got 'kl'");
}
