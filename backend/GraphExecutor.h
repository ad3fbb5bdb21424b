// GraphExecutor: runs a built deploy graph — one buffer per PlanMemory storage id, inputs
// copied in, each tvm_op's compiled function called in node order, per-kernel times.
#pragma once

#include "core/Graph.h"
#include "core/Tensor.h"

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace loupe::backend {

/// One storage slot of a deploy graph: its size and which entries share it, with the node
/// positions (execution order) of their first and last use.
struct StorageSlot {
  int64_t id = 0;
  int64_t bytes = 0; ///< 0 when the size is symbolic
  SymExpr size;      ///< the bytes as an expression of size symbols (a constant when known)
  int dtype = 0;
  std::vector<uint32_t> entries;
  std::vector<std::string> names; ///< "node" or "node.k" per entry
  uint32_t firstUse = 0, lastUse = 0;
};

/// The storage slots of a deploy graph (needs storage_id, shape, dtype). With size symbols a
/// slot's size is the largest of its entries' byte counts, which PlanMemory keeps in one size
/// class; entries of sizes no binding-free order compares make it an Error.
std::vector<StorageSlot> storageSlots(const Graph &deploy);

/// What a run gives: the outputs and each kernel call's time in milliseconds.
struct RunResult {
  std::vector<Tensor> outputs;
  std::vector<std::pair<std::string, double>> kernelMillis;
};

/// A built deploy graph ready to run many times (TVM's graph runtime): storage allocated once,
/// 64-byte aligned, one block per storage id; each kernel's arguments resolved once; the built
/// library's params read where the library holds them (every variable has a storage id of its
/// own that no kernel writes), other inputs copied in when set and kept. A param set again gets
/// storage of its own and takes the new value; the library's bytes are never written.
class GraphRuntime {
public:
  /// Throws Error when the graph was not built.
  explicit GraphRuntime(const Graph &deploy);
  ~GraphRuntime();
  GraphRuntime(const GraphRuntime &) = delete;
  GraphRuntime &operator=(const GraphRuntime &) = delete;

  /// Copies an input in; throws Error for an unknown name or a wrong shape.
  void setInput(const std::string &name, const Tensor &t);
  /// Runs every kernel in node order; each call's time in milliseconds. Throws Error when an
  /// input was never set.
  std::vector<std::pair<std::string, double>> run();
  /// The graph's outputs after the last run.
  std::vector<Tensor> outputs() const;
  /// Runs the kernels one at a time (`:bisect`): the number of calls, in node order; the node of
  /// call `k`; runs call `k` alone (the calls before it must have run); its outputs, read right
  /// after it ran (a later call may reuse their storage).
  size_t numCalls() const;
  uint32_t callNode(size_t k) const;
  void runCall(size_t k);
  std::vector<Tensor> callOutputs(size_t k) const;
  /// Writes `values` (one per input of call `k`, in its tvm_op's order; null leaves one as it
  /// is) into the inputs other calls write, so that the call runs on them (`:bisect` runs each
  /// kernel on the reference interpreter's inputs). The graph's inputs and params keep theirs.
  void setCallInputs(size_t k, const std::vector<const Tensor *> &values);

private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// Runs a built deploy graph on the inputs (by name, shapes must match; a variable that is a
/// param of the library may be left out). Throws Error for a missing or wrongly shaped input or
/// a graph that was not built.
RunResult runDeployGraph(const Graph &deploy, const std::map<std::string, Tensor> &inputs);

} // namespace loupe::backend
