// TensorDiff: how far a tensor is from a reference — what :run's check and its comparison with
// given outputs report.
#pragma once

#include "core/Tensor.h"

#include <utility>

namespace loupe {

/// The largest absolute and relative differences of `t` from `ref`, elementwise; an element's
/// relative difference is taken against its magnitude or a millionth of `ref`'s largest,
/// whichever is more (an output near zero does not make a relative error of 1e30).
std::pair<double, double> difference(const Tensor &t, const Tensor &ref);

} // namespace loupe
