// Buffers: element-wise copies between tensors (doubles) and typed memory; stored tensors.
#include "core/Buffers.h"

#include "core/DType.h"
#include "core/Error.h"

#include <cstdlib>
#include <cstring>

namespace loupe {

void copyToBuffer(const Tensor &t, int dtype, void *dst) {
  if (dtype == kFloat32) { // the common case without the per-element dtype switch
    for (size_t i = 0; i < t.data.size(); ++i)
      static_cast<float *>(dst)[i] = static_cast<float>(t.data[i]);
    return;
  }
  int64_t width = dtypeBytes(dtype);
  for (size_t i = 0; i < t.data.size(); ++i)
    storeElement(static_cast<char *>(dst) + i * width, dtype, t.data[i]);
}

Tensor copyFromBuffer(const void *src, const Shape &shape, int dtype) {
  Tensor t(shape, dtype);
  if (dtype == kFloat32) { // every float is a double exactly: no rounding to do
    const float *f = static_cast<const float *>(src);
    for (size_t i = 0; i < t.data.size(); ++i)
      t.data[i] = f[i];
    return t;
  }
  int64_t width = dtypeBytes(dtype);
  for (size_t i = 0; i < t.data.size(); ++i)
    t.data[i] = loadElement(static_cast<const char *>(src) + i * width, dtype);
  return t;
}

std::byte *kernelBuffer(size_t n) {
  size_t capacity = (n + 63) / 64 * 64 + 64;
  auto *p = static_cast<std::byte *>(std::aligned_alloc(64, capacity));
  if (p)
    std::memset(p, 0, capacity);
  return p;
}

namespace {

// A stored tensor's bytes: a kernel buffer, shared.
std::shared_ptr<std::byte> alignedBytes(size_t n) {
  std::byte *p = kernelBuffer(n);
  if (!p)
    fail("cannot allocate ", n, " bytes for a stored tensor");
  return std::shared_ptr<std::byte>(p, [](std::byte *q) { std::free(q); });
}

} // namespace

StoredTensor::StoredTensor(const Tensor &t)
    : shape_(t.shape), dtype_(t.dtype),
      numBytes_(static_cast<size_t>(t.size() * dtypeBytes(t.dtype))) {
  std::shared_ptr<std::byte> bytes = alignedBytes(numBytes_);
  copyToBuffer(t, t.dtype, bytes.get());
  bytes_ = std::move(bytes);
}

StoredTensor::StoredTensor(Shape shape, int dtype, std::string bytes)
    : shape_(std::move(shape)), dtype_(dtype) {
  if (static_cast<int64_t>(bytes.size()) != numElements(shape_) * dtypeBytes(dtype_))
    fail("a stored tensor of shape ", shapeToList(shape_), " needs ",
         numElements(shape_) * dtypeBytes(dtype_), " bytes, not ", bytes.size());
  numBytes_ = bytes.size();
  std::shared_ptr<std::byte> b = alignedBytes(numBytes_);
  std::memcpy(b.get(), bytes.data(), numBytes_);
  bytes_ = std::move(b);
}

std::optional<StoredTensor>
StoredTensor::filled(Shape shape, int dtype, const std::function<bool(void *dst, size_t n)> &fill) {
  StoredTensor t;
  t.shape_ = std::move(shape);
  t.dtype_ = dtype;
  t.numBytes_ = static_cast<size_t>(numElements(t.shape_) * dtypeBytes(dtype));
  std::shared_ptr<std::byte> bytes = alignedBytes(t.numBytes_);
  if (!fill(bytes.get(), t.numBytes_))
    return std::nullopt;
  t.bytes_ = std::move(bytes);
  return t;
}

Tensor StoredTensor::load() const { return copyFromBuffer(bytes(), shape_, dtype_); }

StoredTensors storeAll(std::map<std::string, Tensor> tensors) {
  StoredTensors out;
  for (auto it = tensors.begin(); it != tensors.end(); it = tensors.erase(it))
    out.emplace(it->first, StoredTensor(it->second));
  return out;
}

std::map<std::string, Tensor> loadAll(const StoredTensors &stored) {
  std::map<std::string, Tensor> out;
  for (const auto &[name, t] : stored)
    out.emplace(name, t.load());
  return out;
}

} // namespace loupe
