// TensorDiff: how far a tensor is from a reference — what :run's check and its comparison with
// given outputs report.
#pragma once

#include "core/Tensor.h"

#include <cstddef>
#include <utility>
#include <vector>

namespace loupe {

/// The largest absolute and relative differences of `t` from `ref`, elementwise; an element's
/// relative difference is taken against its magnitude or a millionth of `ref`'s largest,
/// whichever is more (an output near zero does not make a relative error of 1e30).
std::pair<double, double> difference(const Tensor &t, const Tensor &ref);

/// One element outside an allclose tolerance: where (flat), the two values, and by how much it
/// misses (|got - expected| - (atol + rtol·|expected|)).
struct CloseMiss {
  size_t index = 0;
  double got = 0, expected = 0, excess = 0;
};

/// NumPy's allclose, elementwise and counted: |got - expected| <= atol + rtol·|expected| (two
/// NaNs agree, a NaN against a number does not). The relative error is taken only where
/// |expected| > atol, so that outputs near zero do not make it noise.
struct CloseReport {
  size_t total = 0, within = 0;
  double maxAbs = 0;
  double maxRel = 0;            ///< over the elements with |expected| > atol
  size_t relCounted = 0;        ///< how many those are
  std::vector<CloseMiss> worst; ///< the elements that miss most, worst first, at most `keep`
};

/// `got` against `expected` (the same number of elements) at `rtol` and `atol`, keeping the
/// `keep` worst misses.
CloseReport compareClose(const Tensor &got, const Tensor &expected, double rtol, double atol,
                         size_t keep = 3);

} // namespace loupe
