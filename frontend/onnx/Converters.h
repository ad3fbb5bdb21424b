// Converters: what the ONNX operator converters share — the table they register into, the
// registration function of each family file, and the helpers several families use.
#pragma once

#include "frontend/onnx/Importer.h"

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace loupe::frontend {

/// Converts one ONNX node into workbench ops: the values of its outputs in order (fewer when
/// the conversion bound them itself, as a constant it computed becomes a param).
using Converter = std::function<std::vector<NodeEntry>(Importer &, const onnx::NodeProto &)>;

/// ONNX operator type -> its converter.
using ConverterTable = std::map<std::string, Converter>;

/// Every converter: the families' tables joined (built once).
const ConverterTable &converters();

/// A family's converters, as its file registers them.
using ConverterList = std::vector<std::pair<std::string, Converter>>;

// One table per family, each in the file of its name in frontend/onnx/; converters() joins them.
ConverterList elementwiseConverters();
ConverterList convolutionConverters();
ConverterList nnConverters();
ConverterList normalizationConverters();
ConverterList shapingConverters();
ConverterList indexingConverters();
ConverterList constantsConverters();
ConverterList reductionConverters();
ConverterList quantizationConverters();
ConverterList imageConverters();
ConverterList einsumConverters();
ConverterList lossesConverters();
ConverterList recurrentConverters();
ConverterList signalConverters();

// --- helpers the families share ---

/// A tuple attribute's text: "(1, 2)", "(3,)".
std::string tupleText(const std::vector<int64_t> &v);
/// A float attribute's text, exact (17 significant digits).
std::string floatText(double v);

/// An operator of one input and no attributes as workbench op `op`.
Converter unary(const char *op);

/// The shape of input `k`, which these conversions need now (to size a constant or a reshape):
/// known and of rank `minRank` or more, else an error naming the node.
Shape shapeNow(Importer &im, const onnx::NodeProto &n, int k, size_t minRank);

/// The one value of a constant input that must be a scalar or a one-element tensor (CumSum's
/// axis, OneHot's depth, Range's bounds).
double scalarInput(Importer &im, const onnx::NodeProto &n, int k, const char *what);

/// A value in [lo, hi] as an integer attribute (a float NaN or 1e30 is refused).
int64_t integral(Importer &im, const onnx::NodeProto &n, double v, const char *what, double lo,
                 double hi);

/// Axis `axis` of a rank-`rank` input, a negative one counting from the end; out of range is an
/// error naming the node.
int64_t axisOf(Importer &im, const onnx::NodeProto &n, int64_t axis, int64_t rank);

/// The axes of a rank-`rank` input an attribute or input lists (opset 18's Pad and Resize), each
/// once, negative ones counting from the end.
std::vector<int64_t> distinctAxes(Importer &im, const onnx::NodeProto &n,
                                  const std::vector<int64_t> &axes, int64_t rank);

/// A vector (C) made to broadcast along axis `axis` of a rank-`rank` tensor: (C, 1, …) with a 1
/// for each axis after it.
NodeEntry alongAxis(Importer &im, const onnx::NodeProto &n, const NodeEntry &v, int64_t rank,
                    int64_t axis, const std::string &suffix);

/// softplus(x) = log(1 + e^x) as workbench ops named after `n` with `suffix` (ONNX's Softplus, and
/// a recurrent cell's Softplus activation).
NodeEntry softplusOf(Importer &im, const onnx::NodeProto &n, const NodeEntry &x,
                     const std::string &suffix);

/// min(max(alpha x + beta, 0), 1) as workbench ops named after `n` with `suffix` (ONNX's
/// HardSigmoid, and a recurrent cell's HardSigmoid activation).
NodeEntry hardSigmoidOf(Importer &im, const onnx::NodeProto &n, const NodeEntry &x, double alpha,
                        double beta, const std::string &suffix);

/// A per-channel vector (C) made to broadcast along axis 1 of a rank-`rank` tensor: (C, 1, …).
NodeEntry alongChannels(Importer &im, const onnx::NodeProto &n, const NodeEntry &v, size_t rank,
                        const std::string &suffix);

/// The shape of a convolution's weight (input `k`), which must be known (an initializer or a graph
/// input), else an error naming the node.
const Shape &convWeightShape(Importer &im, const onnx::NodeProto &n, int k);
/// ONNX's Conv (1-D, 2-D or 3-D; its attributes read from `n`) of `x` by `weight` (of shape
/// `wshape`, OIHW) with an optional per-channel `bias`, its nodes named after `n` with `suffix`:
/// Conv itself, and the integer convolutions of ConvInteger and QLinearConv on shifted inputs.
NodeEntry convolutionOf(Importer &im, const onnx::NodeProto &n, const NodeEntry &x,
                        const NodeEntry &weight, const Shape &wshape,
                        const std::optional<NodeEntry> &bias, const std::string &suffix);
/// ONNX's MatMul of `a` by `b` (NumPy's rules: 2-D, N-D with broadcast batch axes, a 1-D
/// operand beside an N-D one), its nodes named after `n` with `suffix`.
NodeEntry matMulOf(Importer &im, const onnx::NodeProto &n, NodeEntry a, NodeEntry b,
                   const std::string &suffix);

} // namespace loupe::frontend
