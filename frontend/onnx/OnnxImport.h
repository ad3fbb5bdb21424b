// OnnxImport: ONNX models (`:load model.onnx`) as workbench graphs, initializers as params, and
// ONNX TensorProto files (`.pb`) as tensors.
#pragma once

#include "core/Buffers.h"
#include "core/Graph.h"
#include "core/Tensor.h"

#include <map>
#include <string>
#include <vector>

namespace loupe::frontend {

/// An imported model: the graph (inputs as variables with shape and dtype; initializers and
/// Constant nodes as variables too) and the values of those params.
struct OnnxModel {
  Graph graph;
  StoredTensors params;            ///< in their own dtype
  std::vector<std::string> inputs; ///< the graph inputs that are not params, in ONNX order
  /// Their declared dtypes: NNVM's `dtype` dict for :build (a graph's own inputs need not be
  /// float32).
  std::map<std::string, int> inputDTypes;
  int64_t opset = 0;
  /// The graph outputs (by position) that ONNX declares rank 0 and that are computed as
  /// one-element tensors of shape (1,), as NNVM reduces to a scalar (a reduction over every
  /// axis); whoever compares them with ONNX's values gives them rank 0 back. An output computed
  /// from scalars is of shape () and not listed.
  std::vector<size_t> scalarOutputs;
  /// The graph inputs ONNX declares rank 0: variables of shape ().
  std::vector<std::string> scalarInputs;
};

/// Sizes for the symbolic dimensions (`dim_param`) of a model's inputs, by name: the dynamic
/// axes of an export ("batch", "sequence"), fixed for the workbench's static shapes.
using DimSizes = std::map<std::string, int64_t>;

/// Reads and converts an ONNX file. Throws Error naming the file for anything it cannot read,
/// and naming the node and operator for anything the workbench's ops cannot express; nothing
/// is half-made. Every symbolic input dimension needs its size in `dims`, and every size given
/// must name one.
OnnxModel importOnnx(const std::string &path, const DimSizes &dims = {});

/// importOnnx of a model's bytes; `path` names it in errors.
OnnxModel importOnnxBytes(const std::string &bytes, const std::string &path,
                          const DimSizes &dims = {});

/// Reads an ONNX TensorProto file (the `input_0.pb` of ONNX's test data). Throws Error naming
/// the file when it is not one or holds a data type without a workbench dtype (string,
/// bfloat16, complex).
Tensor readTensorProto(const std::string &path);

/// A serialized TensorProto's bytes as a tensor; errors name `source` (readTensorProto's
/// parser, for input that is not in a file).
Tensor parseTensorProto(const std::string &bytes, const std::string &source);

/// The ONNX operators importOnnx maps, sorted.
std::vector<std::string> supportedOnnxOps();

} // namespace loupe::frontend
