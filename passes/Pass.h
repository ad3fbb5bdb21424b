// Pass: pass records, the pass registry, and NNVM's ApplyPasses with dependency checks.
#pragma once

#include "core/Buffers.h"
#include "core/Graph.h"
#include "core/Tensor.h"

#include <deque>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace loupe {

class FunctionNames;
struct PassInfo;

/// A hook object around pass runs (Relay's PassInstrument, relay-spec §1.6). Instruments are
/// called in list order: shouldRun for all (ANDed, no short-circuit; skipped for passes in
/// required_pass), then beforePass for all, the pass body (nested passes produce their own
/// events), then afterPass for all.
class PassInstrument {
public:
  virtual ~PassInstrument() = default;
  /// Shown by `:instrument`.
  virtual std::string name() const = 0;
  virtual void enterContext() {}
  virtual void exitContext() {}
  virtual bool shouldRun(const Graph &, const PassInfo &) { return true; }
  virtual void beforePass(const Graph &, const PassInfo &) {}
  /// `before` is the pass's input, `after` its output.
  virtual void afterPass(const Graph &before, const Graph &after, const PassInfo &) {}
};

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
  /// Passes a Sequential always runs (and whose shouldRun hooks are skipped).
  std::set<std::string> requiredPass;
  /// Passes a Sequential never runs (disabled wins over required and level).
  std::set<std::string> disabledPass;
  std::vector<std::shared_ptr<PassInstrument>> instruments;
  /// The values of the graph's bound variables (a loaded model's initializers, the params a
  /// build binds), for passes that match constants; null when nothing is bound. Not owned.
  const StoredTensors *params = nullptr;
  /// Where passes say what they left alone and why (FakeQuantizationToInteger: which op kept a
  /// region float), one line each, for `:apply` to print; null when nobody listens. Not owned.
  std::vector<std::string> *remarks = nullptr;

  /// A config value, or `dflt` when unset.
  std::string get(const std::string &key, const std::string &dflt) const {
    auto it = config.find(key);
    return it == config.end() ? dflt : it->second;
  }
  /// An integer config value within [lo, hi], or `dflt` when unset; throws Error naming `pass`
  /// and the key for anything else.
  int getInt(const std::string &pass, const std::string &key, int dflt, int lo, int hi) const;
};

/// A registered pass: a function from graph to graph plus what the runner needs to know. Written
/// with designated initializers (`{.name = …, .summary = …, .run = …}`); every field but the
/// name, summary and run has a default.
struct PassInfo {
  std::string name;    ///< the word used in `:apply`
  std::string summary; ///< one line for `:passes`
  int optLevel = 0;
  std::vector<std::string> needs = {};    ///< graph attributes that must exist before it runs
  std::vector<std::string> provides = {}; ///< graph attributes it writes
  bool changesGraph = false;              ///< transforms rebuild the graph; analyses only add attrs
  std::function<Graph(const Graph &, const PassContext &)> run;
  /// Passes a Sequential runs before this one, every time (Relay's `required`).
  std::vector<std::string> required = {};
  /// Options `:pipeline` may set as NAME(key=value); they go into the context's config.
  std::vector<std::string> options = {};
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
  std::deque<PassInfo> passes_; // a deque keeps references stable as plugins add passes
};

/// The entry point a pass plugin (a shared library loaded with `:load-pass`) exports:
///   extern "C" void loupe_register_passes(std::vector<loupe::PassInfo> &passes);
/// It appends its passes; the workbench checks them and adds all or none.
using RegisterPassesFn = void (*)(std::vector<PassInfo> &);

/// The version of what plugins and the workbench share (PassInfo, Graph, PassContext); raised
/// whenever one of them changes shape, so that a plugin built against other headers is refused
/// instead of crashing.
inline constexpr int kPluginAbiVersion = 1;

/// Written once in a plugin's source: exports the ABI version its headers had.
#define LOUPE_PLUGIN_ABI                                                                           \
  extern "C" {                                                                                     \
  extern const int loupe_plugin_abi;                                                               \
  const int loupe_plugin_abi = loupe::kPluginAbiVersion;                                           \
  }

/// Loads a plugin: dlopen `path`, call its loupe_register_passes, and register what it returns.
/// Throws Error (cannot load, no entry point, no or another ABI version, an entry point that
/// throws, a pass without a name or function, a name already taken) without registering
/// anything. A plugin pass that throws anything but Error fails with its name and plugin.
/// Returns the names added.
/// `shown` is how messages name the file (the user's spelling rather than a resolved path).
std::vector<std::string> loadPassPlugin(const std::string &path, const std::string &shown);

/// Registers every pass once (idempotent); also registers all ops.
void registerAllPasses();

/// Throws Error when `g` lacks an attribute `p` needs, naming the passes that provide it
/// ("Graph attr dependency shape is required by pass X but is not available. …").
void checkNeeds(const Graph &g, const PassInfo &p);

/// Runs one pass as Relay's Pass::operator() does (relay-spec §1.2): instruments decide and
/// observe; a skipped pass returns the graph unchanged. The pass's needs are checked first
/// ("Graph attr dependency shape is required by pass X but is not available. The attribute is
/// provided by pass InferShape"). Never checks opt level or disabled_pass.
Graph runPass(const Graph &g, const PassInfo &p, const PassContext &ctx);

/// Applies passes in order, like NNVM's ApplyPasses: every name is checked first, then each
/// pass runs through runPass. Never mutates `g`; throws Error on the first failure, so nothing
/// is half-applied.
Graph applyPasses(const Graph &g, const std::vector<std::string> &names,
                  const PassContext &ctx = {});

/// One entry of a Sequential: a pass and the options written after its name.
struct PipelineEntry {
  const PassInfo *pass;
  std::map<std::string, std::string> options;
};

/// Relay's PassEnabled: disabled wins, then required, then `ctx.optLevel >= pass level`.
/// `reason` (optional) receives the rule that decided, in words.
bool passEnabled(const PassInfo &p, const PassContext &ctx, std::string *reason = nullptr);

/// Throws Error for an unknown pass name, with suggestions.
const PassInfo &requirePass(const std::string &name);

/// Finds a required pass by name: requirePass, or a front end's own view of its passes.
using PassResolver = std::function<const PassInfo &(const std::string &)>;

/// A Sequential as a pass (relay-spec §1.4), named `name` at `optLevel` with `required`: its run
/// runs each enabled entry's required passes (found by `resolve`; every time, without the
/// enabled check), then the entry with its options in the context's config; a disabled entry is
/// skipped silently. The entries' passes must outlive it.
PassInfo sequentialPass(std::vector<PipelineEntry> entries, std::string name = "sequential",
                        int optLevel = 0, std::vector<std::string> required = {},
                        PassResolver resolve = requirePass);

/// Runs a Sequential of registered passes (sequentialPass, through runPass, so instruments see
/// it around its children).
Graph runSequential(const Graph &g, const std::vector<PipelineEntry> &entries,
                    const PassContext &ctx);

/// Parses "InferShape,GraphFusePartition(fusion_rules=B),…" into entries; throws Error with the
/// column of the problem for unknown passes, unknown options or malformed text.
std::vector<PipelineEntry> parsePipeline(const std::string &text);

/// SinkLayoutTransform, which `:build` runs at opt level 3 (kept out of the registry so that
/// `:passes` lists NNVM's passes).
const PassInfo &sinkLayoutTransformPass();

} // namespace loupe
