// Buffers: element-wise copies between tensors (doubles) and typed memory; stored tensors.
#include "core/Buffers.h"

#include "core/DType.h"
#include "core/Error.h"

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

StoredTensor::StoredTensor(const Tensor &t) : shape_(t.shape), dtype_(t.dtype) {
  auto bytes =
      std::make_shared<std::string>(static_cast<size_t>(t.size() * dtypeBytes(t.dtype)), '\0');
  copyToBuffer(t, t.dtype, bytes->data());
  bytes_ = std::move(bytes);
}

StoredTensor::StoredTensor(Shape shape, int dtype, std::string bytes)
    : shape_(std::move(shape)), dtype_(dtype) {
  if (static_cast<int64_t>(bytes.size()) != numElements(shape_) * dtypeBytes(dtype_))
    fail("a stored tensor of shape ", shapeToList(shape_), " needs ",
         numElements(shape_) * dtypeBytes(dtype_), " bytes, not ", bytes.size());
  bytes_ = std::make_shared<const std::string>(std::move(bytes));
}

Tensor StoredTensor::load() const { return copyFromBuffer(bytes(), shape_, dtype_); }

std::map<std::string, Tensor> loadAll(const StoredTensors &stored) {
  std::map<std::string, Tensor> out;
  for (const auto &[name, t] : stored)
    out.emplace(name, t.load());
  return out;
}

} // namespace loupe
