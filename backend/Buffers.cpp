// Buffers: element-wise copies between tensors (doubles) and kernels' typed memory.
#include "backend/Buffers.h"

#include "core/DType.h"

namespace loupe::backend {

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

} // namespace loupe::backend
