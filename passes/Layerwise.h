// Layerwise: two graphs run on the same inputs by the reference interpreter and compared value
// by value — every node output both have under one name — in signal-to-quantization-noise
// ratio and largest errors: where a quantized (or otherwise changed) graph loses accuracy.
#pragma once

#include "core/Graph.h"
#include "core/Interpreter.h"

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace loupe {

/// One value both graphs compute: output `output` of the node named `name` in each.
struct LayerComparison {
  std::string name;    ///< the node's name (the same in both graphs)
  std::string op;      ///< its op in the second graph
  uint32_t output = 0; ///< which of its outputs
  uint32_t node = 0;   ///< its node id in the second graph (graph order)
  int64_t elements = 0;
  /// 10·log10(Σ a² / Σ (a − b)²) in dB over the values of the first graph (a) and the second
  /// (b): +∞ when they are equal, −∞ when a is all zeros and b is not.
  double sqnr = 0;
  double maxAbs = 0; ///< the largest |a − b|
  double maxRel = 0; ///< the largest |a − b| / max(|a|, 1e-6 · max |a|)
  /// Integer steps were compared as the real numbers they stand for, each graph's through its
  /// own quantization parameters (those of the qnn.quantize, qnn.requantize or qnn.add that
  /// made them — through casts, clips, pools of the maximum and reshapes — or, for a
  /// qnn.conv2d or qnn.dense accumulator, of the qnn.requantize that reads it).
  bool dequantized = false;
  /// The signed errors b − a counted in kErrorBins equal bins over [−maxAbs, maxAbs] (the
  /// last bin closed): how the errors spread, which the viewer's inspector draws. All in the
  /// middle bin when maxAbs is 0; non-finite errors are left out.
  std::vector<int64_t> histogram;
};

/// The median SQNR of the values that differ (+∞, equal, left out), and their number in
/// `differing`; nullopt when every value is equal.
std::optional<double> medianSqnr(const std::vector<LayerComparison> &all,
                                 size_t *differing = nullptr);

/// The comparisons ordered worst SQNR first (ties in graph order), as `:layerwise` and the report
/// list them.
std::vector<const LayerComparison *> worstFirst(const std::vector<LayerComparison> &all);

/// The compared value's name as the tables show it: the node's, with "[k]" for output k > 0.
std::string valueName(const LayerComparison &c);

/// How many bins LayerComparison::histogram has (odd, so that zero error has a bin of its own
/// middle).
inline constexpr int kErrorBins = 21;

/// Where a node's integer steps get their meaning: input `scale` and input `zeroPoint` of node
/// `source` (a qnn.quantize's, qnn.requantize's or qnn.add's output parameters; for a
/// qnn.conv2d or qnn.dense accumulator, the input parameters of the qnn.requantize that reads
/// it), per tensor or along `axis`.
struct StepQuantization {
  const Node *source = nullptr;
  size_t scale = 0, zeroPoint = 0;
  int64_t axis = 1;
};

/// The quantization of the integer steps node `n` of `idx` holds — its own, or, through casts,
/// clips and ops that move steps without computing on them (pools of the maximum, reshapes), the
/// op's it reads — or nullopt when none is known.
std::optional<StepQuantization> stepQuantization(const IndexedGraph &idx, const Node &n);

/// `g` with its variables' shapes and dtypes from `values`, inferred throughout (InferShape,
/// InferType) — what the reference interpreter needs. Throws Error naming a variable without a
/// value.
Graph typedFor(const Graph &g, const ValueSource &values);

/// Runs `a` and `b` by the reference interpreter, each variable's value from `values` (shapes
/// and dtypes inferred from them), and compares every node output the two graphs share by node
/// name and shape, in the second graph's node order. Integer steps are compared in real units
/// (LayerComparison::dequantized); a float value against steps of no known quantization is
/// left out. Throws Error naming a variable without a value.
std::vector<LayerComparison> compareLayers(const Graph &a, const Graph &b,
                                           const ValueSource &values);

/// Values another runtime computed, the reference a graph is compared against: output `output`
/// of the node named `name` in real numbers, or nullopt when it has none.
using ReferenceValues =
    std::function<std::optional<Tensor>(const std::string &name, uint32_t output)>;

/// compareLayers of graph `b` against values another runtime computed (PyTorch's forward hooks,
/// say) instead of a second graph's: every node output of `b` that `reference` has, of the same
/// shape, in real numbers (integer steps dequantized as compareLayers does).
std::vector<LayerComparison> compareWithReference(const Graph &b, const ValueSource &values,
                                                  const ReferenceValues &reference);

} // namespace loupe
