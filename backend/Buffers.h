// Buffers: tensors copied into and out of the typed, flat memory compiled kernels read and write.
#pragma once

#include "core/Tensor.h"

namespace loupe::backend {

/// Writes `t`'s elements at `dst` as `dtype` (rounded as that type rounds).
void copyToBuffer(const Tensor &t, int dtype, void *dst);

/// A tensor of `shape` read from `src`'s elements of `dtype`.
Tensor copyFromBuffer(const void *src, const Shape &shape, int dtype);

} // namespace loupe::backend
