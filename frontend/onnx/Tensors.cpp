// Tensors: ONNX TensorProtos decoded into workbench tensors, and TensorProto files read.
#include "frontend/onnx/Tensors.h"

#include "core/DType.h"
#include "core/Error.h"
#include "core/File.h"
#include "core/Memory.h"
#include "core/Shape.h"
#include "frontend/onnx/OnnxImport.h"

namespace loupe::frontend {

int dtypeOf(int32_t onnxType, const std::string &what) {
  switch (onnxType) {
  case onnx::TensorProto::FLOAT:
    return kFloat32;
  case onnx::TensorProto::DOUBLE:
    return kFloat64;
  case onnx::TensorProto::FLOAT16:
    return kFloat16;
  case onnx::TensorProto::BFLOAT16:
    return kBFloat16;
  case onnx::TensorProto::INT8:
    return kInt8;
  case onnx::TensorProto::INT16:
    return kInt16;
  case onnx::TensorProto::INT32:
    return kInt32;
  case onnx::TensorProto::INT64:
    return kInt64;
  case onnx::TensorProto::UINT8:
    return kUint8;
  case onnx::TensorProto::UINT16:
    return kUint16;
  case onnx::TensorProto::UINT32:
    return kUint32;
  case onnx::TensorProto::UINT64:
    return kUint64;
  case onnx::TensorProto::BOOL:
    return kBoolean;
  default:
    fail(what, ": ONNX element type ",
         onnx::TensorProto::DataType_Name(static_cast<onnx::TensorProto::DataType>(onnxType)),
         " is not supported (float16/32/64, int8/16/32/64, uint8/16/32/64 and bool are)");
  }
}

Tensor toTensor(const onnx::TensorProto &t, const std::string &what) {
  int dt = dtypeOf(t.data_type(), what);
  // No dims: a scalar, shape ().
  Shape shape = t.dims_size() == 0 ? Shape::scalar() : Shape(t.dims().begin(), t.dims().end());
  // The data is checked against the shape before the tensor is allocated: a 200-byte file
  // declaring 2.5 G elements it does not hold made the importer allocate 20 GB (found by
  // fuzzing).
  size_t n = static_cast<size_t>(checkedNumElements(shape));
  Tensor out;
  if (t.has_raw_data()) {
    auto width = static_cast<size_t>(dtypeBytes(dt));
    const std::string &raw = t.raw_data();
    if (raw.size() / width != n || raw.size() % width != 0)
      fail(what, ": raw_data holds ", raw.size(), " bytes but shape ", shapeToList(shape),
           " needs ", n * width);
    out = Tensor(shape, dt);
    for (size_t i = 0; i < n; ++i)
      out.data[i] = loadElement(raw.data() + i * width, dt);
    return out;
  }
  auto take = [&](const auto &field, auto convert) {
    if (static_cast<size_t>(field.size()) != n)
      fail(what, ": holds ", field.size(), " values but shape ", shapeToList(shape), " needs ", n);
    out = Tensor(shape, dt);
    for (size_t i = 0; i < n; ++i)
      out.data[i] = convert(field[static_cast<int>(i)]);
  };
  auto value = [](auto v) { return static_cast<double>(v); };
  switch (dt) {
  case kFloat32:
    take(t.float_data(), value);
    break;
  case kFloat64:
    take(t.double_data(), value);
    break;
  case kInt64:
    take(t.int64_data(), value);
    break;
  case kUint32:
  case kUint64:
    take(t.uint64_data(), value);
    break;
  case kFloat16: // int32_data holds a float16's or bfloat16's bits
  case kBFloat16:
    take(t.int32_data(), [dt](int32_t bits) {
      auto h = static_cast<uint16_t>(bits);
      return loadElement(&h, dt);
    });
    break;
  default: // the smaller integers and bool are held in int32_data
    take(t.int32_data(), [dt](int32_t v) { return roundToDType(v, dt); });
  }
  return out;
}

Tensor parseTensorProto(const std::string &bytes, const std::string &source) {
  onnx::TensorProto t;
  if (!t.ParseFromString(bytes))
    fail(source, ": not an ONNX TensorProto file");
  return toTensor(t, source);
}

Tensor readTensorProto(const std::string &path) { return parseTensorProto(readFile(path), path); }

} // namespace loupe::frontend
