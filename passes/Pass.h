// Pass: pass records, the pass registry, and NNVM's ApplyPasses with dependency checks.
#pragma once

#include "core/Graph.h"

#include <functional>
#include <map>
#include <string>
#include <vector>

namespace loupe {

/// A registered pass: a function from graph to graph plus what the runner needs to know.
struct PassInfo {
  std::string name;    ///< the word used in `:apply`
  std::string summary; ///< one line for `:passes`
  int optLevel = 0;
  std::vector<std::string> needs;    ///< graph attributes that must exist before it runs
  std::vector<std::string> provides; ///< graph attributes it writes
  bool changesGraph = false;         ///< transforms rebuild the graph; analyses only add attrs
  std::function<Graph(const Graph &)> run;
};

/// The process-wide pass registry, filled by registerAllPasses().
class PassRegistry {
public:
  static PassRegistry &get();
  void add(PassInfo p);
  /// The pass or null.
  const PassInfo *find(const std::string &name) const;
  /// All passes in registration order.
  std::vector<const PassInfo *> all() const;
  std::vector<std::string> names() const;
  /// Names of the passes that provide a graph attribute.
  std::vector<std::string> providersOf(const std::string &attr) const;

private:
  std::vector<PassInfo> passes_;
};

/// Registers every pass once (idempotent); also registers all ops.
void registerAllPasses();

/// Applies passes in order, like NNVM's ApplyPasses: each pass's needs are checked against the
/// graph it receives ("Graph attr dependency shape is required by pass X but is not available.
/// The attribute is provided by pass InferShape"). Never mutates `g`; throws Error on the first
/// failure, so nothing is half-applied.
Graph applyPasses(const Graph &g, const std::vector<std::string> &names);

/// Throws Error for an unknown pass name, with suggestions.
const PassInfo &requirePass(const std::string &name);

} // namespace loupe
