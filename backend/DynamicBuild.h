// DynamicBuild: `:build` of a graph with size symbols — the graph and its build options kept,
// and a variant built for each binding of the symbols a run asks for (or `specialize` names).
#pragma once

#include "backend/Build.h"
#include "core/Buffers.h"
#include "core/Graph.h"
#include "passes/Pass.h"
#include "passes/Symbols.h"

#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace loupe::backend {

/// A symbolic graph's build. Each binding of its symbols is built once, as `build` builds a
/// graph of those sizes (bindSymbols), and kept: a size seen again runs the kernels already
/// compiled. Variants share the session's kernel cache, so sizes that compile to the same
/// kernels compile them once.
class DynamicBuild {
public:
  DynamicBuild(Graph symbolic, BuildOptions options, PassContext context);

  /// The graph as :build took it, its shapes inferred with symbols.
  const Graph &graph() const { return graph_; }
  /// The size symbols of its inputs.
  const std::set<std::string> &symbols() const { return symbols_; }
  int optLevel() const { return options_.optLevel; }
  /// The deploy graph a run at binding `b` (every symbol bound) runs: its specialized variant
  /// when built, else the generic build bound to `b` (with `generic`), else the variant built
  /// now; `built`, when given, says whether this call built (compiled) it. Its graph attribute
  /// `variant` says the binding; `generic_kernels` is set on the generic build's.
  Graph variant(const SymBindings &b, bool *built = nullptr) const;
  /// The variant of binding `b` compiled for those sizes (`:build … specialize`, tuning, an
  /// export), built now or before.
  Graph specialize(const SymBindings &b, bool *built = nullptr) const;
  /// The generic build (`:build … generic`): the symbolic graph built once, its functions
  /// generic kernels; null without `generic`.
  const Graph *generic() const { return generic_ ? &*generic_ : nullptr; }
  /// The bindings built so far, in order.
  std::vector<SymBindings> variants() const;
  /// Whether the variant for `b` is built (and kept).
  bool has(const SymBindings &b) const;
  /// Drops the variant for `b`: the next variant(b) builds it again (after tuning, at the points
  /// found).
  void forget(const SymBindings &b) const;

private:
  Graph graph_;
  BuildOptions options_;
  PassContext context_;
  StoredTensors params_;
  std::set<std::string> symbols_;
  /// The graph's fingerprint (16 hex digits of its JSON): the scope of its functions' families,
  /// so that a point tuned at one size is found at another, in this process or the next.
  std::string scope_;
  mutable std::mutex mutex_;
  mutable std::map<SymBindings, Graph> variants_;
  std::optional<Graph> generic_;
  /// What the graph's rules assume of its sizes (a slice to `seq` within its table), checked
  /// at every binding.
  std::vector<SizeLimit> limits_;
  /// Every param a variant's build made, by name: a later variant's equal tensor (same name,
  /// shape, dtype and bytes — packed weights do not depend on the sizes) takes these bytes
  /// instead of holding a copy.
  mutable std::map<std::string, std::vector<StoredTensor>> madeParams_;
};

/// The generic build `generic` at binding `b`: its shapes bound (the storage the runtime
/// allocates), `variant` the binding its generic kernels read.
Graph boundGeneric(const Graph &generic, const SymBindings &b);

/// Whether `g`'s inputs have size symbols (the build is then a DynamicBuild).
bool hasSizeSymbols(const Graph &g);

/// The graph :build makes of a symbolic graph: `g` with its shapes inferred and the
/// DynamicBuild in its graph attribute `dynamic_build`.
Graph dynamicBuildGraph(const Graph &g, BuildOptions options, const PassContext &context);

/// The DynamicBuild a graph is, or a variant of; null for any other graph.
std::shared_ptr<const DynamicBuild> dynamicBuild(const Graph &g);

/// The variant of the dynamic build `g` is (or is a variant of) for binding `b`, carrying the
/// build itself, so that a run at another size from it finds the others.
/// `specialized`: the variant compiled for those sizes (DynamicBuild::specialize), never the
/// generic build's.
Graph variantOf(const Graph &g, const SymBindings &b, bool *built = nullptr,
                bool specialized = false);

/// The binding a variant was built for (empty for any other graph).
SymBindings variantBindings(const Graph &g);

} // namespace loupe::backend
