// Tensor: a dense host tensor for the reference interpreter (numbers of record).
#pragma once

#include "core/DType.h"
#include "core/Memory.h"
#include "core/Shape.h"

#include <vector>

namespace loupe {

/// A dense row-major tensor. Values are held as doubles whatever the dtype; every op rounds its
/// results with roundToDType, so float32 results carry float32 precision and integer results
/// are integers. This keeps one reference kernel per op for every dtype.
struct Tensor {
  Shape shape;
  int dtype = kFloat32;
  std::vector<double> data;

  Tensor() = default;
  /// A zero-filled tensor of the given shape and dtype. Throws Error for a negative or
  /// overflowing shape, or one larger than this machine's memory.
  Tensor(Shape s, int dt) : shape(std::move(s)), dtype(dt) {
    requireTensorMemory("a tensor", shape, dt);
    data.assign(static_cast<size_t>(numElements(shape)), 0.0);
  }
  /// Number of elements.
  int64_t size() const { return static_cast<int64_t>(data.size()); }
};

/// Row-major strides of a shape, in elements.
std::vector<int64_t> stridesOf(const Shape &s);

} // namespace loupe
