// Engine: the workbench state (symbols, history of graph snapshots, settings) and the command
// table; the REPL, session replays and the GUI all drive it through execute().
#pragma once

#include "core/Buffers.h"
#include "core/Dot.h"
#include "core/Graph.h"
#include "core/Tensor.h"
#include "passes/Fusion.h"
#include "passes/Instruments.h"
#include "passes/Layerwise.h"
#include "passes/Pass.h"
#include "repl/Evaluator.h"
#include "repl/Value.h"

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

namespace loupe::backend {
class KernelCache;
struct CompileStats;
} // namespace loupe::backend

namespace loupe {

struct Expr;

/// A kernel's time in the last `:profile` of a built graph.
struct KernelTime {
  double ms = 0;               ///< median over the runs
  double gflops = 0;           ///< its flops over that time
  double percentPeak = 0;      ///< of this machine's FMA-loop peak at the threads used
  double minMs = 0, maxMs = 0; ///< the fastest and slowest of the runs
};

/// One step of the history: an immutable graph snapshot and what made it.
struct Step {
  Graph graph;
  std::string label;  ///< the command that made it ("graph z", "apply InferShape InferType")
  std::string change; ///< what it did: "new graph", "graph unchanged; added shape, …"
  double millis = 0;  ///< time the step took (shown only on request)
  /// The last `:profile` of this (built) step: per tvm_op node id.
  std::map<uint32_t, KernelTime> profile;
  /// The last `:layerwise` that compared this step's values (against another step or a folder
  /// of tensors), in graph order: what the viewer's heatmap and the report show.
  std::vector<LayerComparison> layerwise;
  std::string layerwiseAgainst; ///< what it was compared against ("step 2", a folder)
};

/// The workbench. Each execute() runs one input — a graph-language statement or a `:command` —
/// and writes what it prints. A failed input prints one `error: …` line and changes nothing.
class Engine {
public:
  Engine();

  /// Runs one input (may span lines). Normal output goes to `out`, diagnostics to `err`.
  /// Returns false when the input failed. `line` is the input's first line in its source, for
  /// `SOURCE:LINE:COL:` prefixes of diagnostics about text.
  bool execute(const std::string &input, std::ostream &out, std::ostream &err, int line = 1);

  /// Name used in front of text positions in diagnostics ("<stdin>", a script's path).
  void setSourceName(std::string s) { source_ = std::move(s); }
  /// How far a long command is: a one-line status and the finished fraction (0 to 1, or -1
  /// when unknown). An empty status means the command ended.
  using ProgressFn = std::function<void(const std::string &status, double fraction)>;
  /// Where long commands (`:build`) show how far they are: a status the front end draws and
  /// replaces. Unset, nothing is shown — scripts, sessions and pipes never see it.
  void setProgress(ProgressFn show) { progress_ = std::move(show); }
  /// Places a graph as the viewer draws it, for `:dot FILE placed`: set by front ends that have
  /// the viewer's layout (report::addViewCommands); without one, `placed` is refused.
  using DotPlacer = std::function<DotPlacement(const Graph &)>;
  void setDotPlacer(DotPlacer placer) { dotPlacer_ = std::move(placer); }
  const DotPlacer &dotPlacer() const { return dotPlacer_; }
  /// Which tuning records `:build` applies at opt_level 3 and `:tune` adds to: "off"; "on", the
  /// log of the target in the default folder ($XDG_CACHE_HOME/loupe/tuning); or a log file's
  /// path. An engine starts with "off" (session replays must not depend on a machine's logs);
  /// the `loupe` and `loupe-gui` front ends turn it on.
  void setTuning(const std::string &mode) { tuning_ = mode; }
  const std::string &tuning() const { return tuning_; }
  /// Where the tuning records are ("" when off): the default folder or the file.
  std::string tuningLocation() const;
  /// The log file of a target (its backend::targetDescription): the folder's file for it, or
  /// the file set; "" when off.
  std::string tuningLogFile(const std::string &targetDescription) const;

  /// What the inputs may do beyond the workbench itself. A session someone shared (`loupe --check`
  /// of a file, a report of it) must not act for its author: it loads no plugin (a plugin is
  /// code) and writes files only inside its own folder, unless the user allows more.
  struct Trust {
    bool plugins = true;     ///< `:load-pass` may load a shared library
    std::string writeFolder; ///< when set, files are written only inside this folder (as shown)
  };
  /// An engine starts trusting its inputs (they are the user's own, typed or run as scripts).
  void setTrust(Trust t);
  const Trust &trust() const { return trust_; }
  /// Throws Error, saying why and which option allows it, unless `command` may write `path` (a
  /// file or folder): anywhere when no write folder is set, else inside it, with `..` and the
  /// symbolic links of the path's existing part resolved.
  void checkWrite(const std::string &command, const std::string &path) const;

  /// Whether `:quit` asked the front end to stop reading input.
  bool quitRequested() const { return quit_; }

  /// A command of the table.
  struct Command {
    std::string name;  ///< without the colon
    std::string usage; ///< arguments, e.g. "P1 [P2 …]"
    std::string summary;
    std::function<void(Engine &, const std::vector<std::string> &, const std::string &rest,
                       std::ostream &)>
        run;
  };
  const std::vector<Command> &commands() const { return commands_; }
  /// Adds a command a front end brings from a floor above the engine (`:report`); throws Error
  /// when its name is taken.
  void addCommand(Command c);

  /// The current graph snapshot, or null before the first `:graph`/`:load`.
  const Step *current() const;
  /// The current graph; an error saying how to make one when there is none.
  const Graph &requireGraph() const;
  const std::vector<Step> &history() const { return history_; }
  /// The graph of every history step, in order (what provenance queries read of the history).
  std::vector<const Graph *> historyGraphs() const {
    std::vector<const Graph *> g;
    for (const Step &s : history_)
      g.push_back(&s.graph);
    return g;
  }
  /// The values of the last `:model` or `:load` (its weights and initializers, by name), which
  /// `:build` binds to the variables of those names.
  const StoredTensors &modelParams() const { return modelParams_; }
  /// The index of the current step (meaningful when the history is not empty).
  size_t cursor() const { return cursor_; }
  /// Makes history step `step` the current one, as :undo and :redo do. Throws Error when there
  /// is no such step.
  void moveTo(size_t step);
  /// Names bound in the graph language.
  std::vector<std::string> variableNames() const { return evaluator_.variableNames(); }
  /// The graph language's evaluator: its bindings, and expressions evaluated for commands.
  Evaluator &evaluator() { return evaluator_; }
  const Evaluator &evaluator() const { return evaluator_; }
  /// Words for Tab completion after `line` (commands, ops, passes, variables, attr keys).
  std::vector<std::string> completions(const std::string &line, const std::string &word) const;

  /// Every input so far with its output, for `:record`.
  struct Exchange {
    std::string input;
    std::string output;
  };
  /// The inputs run so far, each with what it printed.
  const std::vector<Exchange> &transcript() const { return transcript_; }

private:
  // Commands: their handlers are the members of Commands (repl/commands/).
  friend struct Commands;
  friend class Workbench;
  void runCommand(const std::string &text, std::ostream &out);
  /// Adds a step after the current one (dropping any redo tail). `fresh` marks a graph that
  /// does not derive from the current one (`:graph`, `:load`).
  void pushStep(Graph g, std::string label, double millis, bool fresh);
  void writeRecording() const;
  /// Writes the recording; a write failure stops recording with a warning instead of failing.
  void recordSafely(std::ostream &err);

  std::string source_ = "<stdin>";
  Evaluator evaluator_;     ///< the graph language's bindings and counters
  PassContext passContext_; ///< options set with :set; passed to every pass
  Sink sink_ = std::make_shared<std::ostream *>(nullptr); ///< where instruments print
  FunctionNames functionNames_; ///< GraphFuseCompile's names, session-long as in NNVM
  /// Params of the last `:model`, bound by `:build` to the variables of those names.
  StoredTensors modelParams_; ///< in their own dtype (a float32 weight in 4 bytes)
  /// The input dtypes of the last ONNX `:load`, given to `:build` as its dtype dict.
  std::map<std::string, int> modelDTypes_;
  /// Where `:build` keeps compiled kernels (null after `:set cache off`).
  std::shared_ptr<backend::KernelCache> kernelCache_;
  /// What the last `:build` compiled, for `:cache`.
  std::shared_ptr<const backend::CompileStats> lastCompile_;
  std::string tuning_ = "off"; ///< see setTuning
  /// `:set denormals auto|keep|flush`: what the next `:build`'s kernels do with subnormals.
  std::string denormals_ = "auto";
  /// `:set precision fp32|bf16`: what the next `:build` computes its products in, unless it says.
  std::string precision_ = "fp32";
  /// `:set timings hidden`: measured times (and `:where`'s counts of this host's instructions)
  /// print as dashes, so a session that profiles replays the same on any machine.
  bool hideTimings_ = false;
  std::vector<Step> history_;
  size_t cursor_ = 0; ///< index of the current step in history_
  std::vector<Command> commands_;
  DotPlacer dotPlacer_;
  std::vector<Exchange> transcript_;
  std::string recordPath_;
  size_t recordFrom_ = 0;
  int restColumn_ = 0; ///< column where the running command's arguments start
  bool quit_ = false;  ///< set by :quit
  ProgressFn progress_;
  Trust trust_;
  std::string writeFolder_; ///< trust_.writeFolder resolved (absolute, links followed)
};

} // namespace loupe
