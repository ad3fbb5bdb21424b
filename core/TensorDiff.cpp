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

} // namespace loupe
