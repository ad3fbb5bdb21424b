// Pass: pass records, the pass registry, and NNVM's ApplyPasses with dependency checks.
#pragma once

#include "core/Graph.h"

#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace loupe {

class FunctionNames;

/// What a pass run sees besides the graph: Relay's PassContext / NNVM's build_config options,
/// and session-long state that outlives one pass (GraphFuseCompile's function-name table).
struct PassContext {
  int optLevel = 2;
  /// Options by name: "fusion_rules" (A, B or C), …
  std::map<std::string, std::string> config;
  /// Ops kept out of fusion (`:set nofuse OP`): treated as opaque by the partitioner.
  std::set<std::string> noFuse;
  /// The session's fused-function name table; null means a fresh one per run.
  FunctionNames *functionNames = nullptr;

  /// A config value, or `dflt` when unset.
  std::string get(const std::string &key, const std::string &dflt) const {
    auto it = config.find(key);
    return it == config.end() ? dflt : it->second;
  }
};

/// A registered pass: a function from graph to graph plus what the runner needs to know.
struct PassInfo {
  std::string name;    ///< the word used in `:apply`
  std::string summary; ///< one line for `:passes`
  int optLevel = 0;
  std::vector<std::string> needs;    ///< graph attributes that must exist before it runs
  std::vector<std::string> provides; ///< graph attributes it writes
  bool changesGraph = false;         ///< transforms rebuild the graph; analyses only add attrs
  std::function<Graph(const Graph &, const PassContext &)> run;
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
Graph applyPasses(const Graph &g, const std::vector<std::string> &names,
                  const PassContext &ctx = {});

/// Throws Error for an unknown pass name, with suggestions.
const PassInfo &requirePass(const std::string &name);

} // namespace loupe
