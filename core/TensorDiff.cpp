// TensorDiff: a tensor's largest absolute and relative differences from a reference.
#include "core/TensorDiff.h"

#include <algorithm>
#include <cmath>

namespace loupe {

std::pair<double, double> difference(const Tensor &t, const Tensor &ref) {
  // An element is measured against its own magnitude, but never against less than a millionth of
  // the output's largest: a logit of 1e-12 off by a quantization step is not an error of 1e30.
  double largest = 0;
  for (double v : ref.data)
    largest = std::max(largest, std::fabs(v));
  double floor = std::max(largest * 1e-6, 1e-30);
  double absErr = 0, relErr = 0;
  for (size_t i = 0; i < t.data.size(); ++i) {
    double d = std::fabs(t.data[i] - ref.data[i]);
    absErr = std::max(absErr, d);
    relErr = std::max(relErr, d / std::max(std::fabs(ref.data[i]), floor));
  }
  return {absErr, relErr};
}

CloseReport compareClose(const Tensor &got, const Tensor &expected, double rtol, double atol,
                         size_t keep) {
  CloseReport r;
  r.total = got.data.size();
  for (size_t i = 0; i < r.total; ++i) {
    double a = got.data[i], b = expected.data[i];
    bool nanA = std::isnan(a), nanB = std::isnan(b);
    double d = nanA || nanB ? (nanA && nanB ? 0 : INFINITY) : std::fabs(a - b);
    double allowed = nanB ? 0 : atol + rtol * std::fabs(b);
    r.maxAbs = std::max(r.maxAbs, d);
    if (std::fabs(b) > atol) {
      r.maxRel = std::max(r.maxRel, d / std::fabs(b));
      ++r.relCounted;
    }
    if (d <= allowed) {
      ++r.within;
      continue;
    }
    CloseMiss m{i, a, b, d - allowed};
    auto at = std::find_if(r.worst.begin(), r.worst.end(),
                           [&](const CloseMiss &w) { return m.excess > w.excess; });
    if (static_cast<size_t>(at - r.worst.begin()) < keep) {
      r.worst.insert(at, m);
      if (r.worst.size() > keep)
        r.worst.pop_back();
    }
  }
  return r;
}

} // namespace loupe
