// Interpreter: evaluates a graph with every op's reference kernel (the numbers of record).
#pragma once

#include "core/Graph.h"
#include "core/Tensor.h"

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace loupe {

/// Evaluates `g` on the CPU without any compilation. The graph must carry `shape` and `dtype`
/// (run InferShape and InferType first); every variable needs a tensor in `inputs` whose shape
/// matches. Returns one tensor per graph output. Throws Error naming the node or variable.
std::vector<Tensor> interpret(const Graph &g, const std::map<std::string, Tensor> &inputs);

/// Called after each op node is evaluated, with its outputs (valid only during the call).
using NodeObserver = std::function<void(uint32_t nid, const std::vector<const Tensor *> &outputs)>;

/// interpret(), telling `observe` each op node's outputs as they are made (`:bisect` compares
/// them with the compiled kernels' as it goes, without keeping every value).
std::vector<Tensor> interpret(const Graph &g, const std::map<std::string, Tensor> &inputs,
                              const NodeObserver &observe);

/// A variable's value by name, or nullopt when there is none. A source that makes values on
/// demand (a built library's params, loaded from their own dtype) never has them all held as
/// doubles at once.
using ValueSource = std::function<std::optional<Tensor>(const std::string &name)>;

/// Told output `k`'s value as soon as nothing more reads it (PrecomputePrune's weights leave
/// one at a time, not all at the end).
using OutputSink = std::function<void(size_t k, Tensor value)>;

/// What interpretFrom does besides evaluating.
struct InterpretOptions {
  NodeObserver observe; ///< told each op node's outputs as they are made
  /// Told each output when ready; the returned vector then holds empty tensors in their places.
  OutputSink sink;
  /// Ask the source for a variable that ops read once for each node that reads it, holding it
  /// only while that node runs (a network's weights, shared by many layers, are then not held
  /// as doubles between them), rather than once when the variable is reached, held to its
  /// last reader. For a source that gives a value again cheaply.
  bool askPerReader = false;
};

/// interpret() with the variables' values from `source`.
std::vector<Tensor> interpretFrom(const Graph &g, const ValueSource &source,
                                  const InterpretOptions &options = InterpretOptions());

} // namespace loupe
