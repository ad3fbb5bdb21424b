// CostModel: what the tuner learns from its measurements — gradient-boosted trees (XGBoost, as
// AutoTVM's XGBTuner) that predict a point's speed from its knob values, so that the search
// measures the points most likely to be fast.
#pragma once

#include "backend/schedule/Space.h"

#include <memory>
#include <vector>

namespace loupe::backend {

/// A point's features: each knob's value and its log2, and each limit's product (the tile's
/// accumulators), in the space's order.
std::vector<float> featuresOf(const ConfigSpace &space, const Config &c);

/// A regression model over points' features.
class CostModel {
public:
  CostModel();
  ~CostModel();
  CostModel(CostModel &&) noexcept;
  CostModel &operator=(CostModel &&) noexcept;

  /// Learns `scores` (higher is faster) of the points with `features`; replaces what was learnt.
  /// Throws Error with XGBoost's message when it cannot.
  void fit(const std::vector<std::vector<float>> &features, const std::vector<float> &scores);
  /// The predicted scores of points (0 before fit).
  std::vector<float> predict(const std::vector<std::vector<float>> &features) const;
  bool trained() const;

private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

} // namespace loupe::backend
