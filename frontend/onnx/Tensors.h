// Tensors: ONNX TensorProtos (initializers, Constant values, test data files) as workbench
// tensors, and ONNX element types as workbench dtypes.
#pragma once

#include "core/Tensor.h"

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <string>

namespace loupe::frontend {

/// The workbench dtype of ONNX element type `onnxType`; the types without one (string,
/// bfloat16, complex) are an error naming `what`.
int dtypeOf(int32_t onnxType, const std::string &what);

/// A TensorProto's values (raw_data or the typed fields), checked against its shape before
/// anything is allocated; errors name `what`.
Tensor toTensor(const onnx::TensorProto &t, const std::string &what);

} // namespace loupe::frontend
