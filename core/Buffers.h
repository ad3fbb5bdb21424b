// Buffers: tensors in their own dtype's bytes — kernels' typed memory, and weights at rest.
#pragma once

#include "core/Tensor.h"

#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>

namespace loupe {

/// Writes `t`'s elements at `dst` as `dtype` (rounded as that type rounds).
void copyToBuffer(const Tensor &t, int dtype, void *dst);

/// A tensor of `shape` read from `src`'s elements of `dtype`.
Tensor copyFromBuffer(const void *src, const Shape &shape, int dtype);

/// `n` bytes for kernels to read or write: 64-byte aligned (for aligned vector loads and
/// stores), zeroed, and followed by zeros to the next 64 bytes and 64 more (what vector loads
/// may touch past the end). Null when the memory is not there; freed with std::free.
std::byte *kernelBuffer(size_t n);

/// A tensor held in its own dtype's bytes rather than as doubles (a float32 weight takes half
/// the memory), immutable, its bytes shared by copies. A built library keeps its params so: the
/// runtime's kernels read the bytes where they are, and the reference interpreter loads one
/// param at a time when it reaches it. The bytes are 64-byte aligned and followed by at least
/// 64 zero bytes, as the runtime's own buffers are.
class StoredTensor {
public:
  StoredTensor() = default;
  /// `t`'s values in its dtype (they are that dtype's values already: every op rounds).
  explicit StoredTensor(const Tensor &t);
  /// Elements already in `dtype`'s bytes (numElements(shape) of dtypeBytes(dtype); throws Error
  /// when their count does not match).
  StoredTensor(Shape shape, int dtype, std::string bytes);
  /// A stored tensor whose bytes `fill` writes where they will stay (numElements(shape) of
  /// dtypeBytes(dtype) given to it at once); nothing when `fill` fails.
  static std::optional<StoredTensor> filled(Shape shape, int dtype,
                                            const std::function<bool(void *dst, size_t n)> &fill);

  const Shape &shape() const { return shape_; }
  int dtype() const { return dtype_; }
  /// The row-major elements, numElements(shape) of dtypeBytes(dtype) each.
  const void *bytes() const { return bytes_.get(); }
  size_t numBytes() const { return numBytes_; }
  /// The values as a Tensor of doubles.
  Tensor load() const;

private:
  Shape shape_;
  int dtype_ = kFloat32;
  std::shared_ptr<const std::byte> bytes_;
  size_t numBytes_ = 0;
};

/// Named stored tensors (a built library's params).
using StoredTensors = std::map<std::string, StoredTensor>;

/// Every tensor stored in its own dtype, each one's doubles freed as soon as it is stored (a
/// network's weights are never held twice).
StoredTensors storeAll(std::map<std::string, Tensor> tensors);

/// Every stored tensor loaded as doubles (tests and small graphs; a network's weights are
/// better loaded one at a time).
std::map<std::string, Tensor> loadAll(const StoredTensors &stored);

} // namespace loupe
