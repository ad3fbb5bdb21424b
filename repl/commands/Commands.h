// Commands: the workbench's `:commands` by topic (each topic's file in repl/commands/ defines its
// handlers and lists its commands) and what the topics share; CommandTable.cpp joins the lists.
#pragma once

#include "backend/Build.h"
#include "repl/Engine.h"
#include "repl/commands/CommandHelpers.h"

#include <map>
#include <ostream>
#include <string>
#include <vector>

namespace loupe {

struct RunWords;

/// The command handlers, by topic: members of one struct that Engine befriends, so that a command
/// reaches the workbench state it reads and changes. Each takes the engine, the arguments split
/// at white space, the argument text as typed, and where to print.
struct Commands {
  /// A command as its topic lists it: `after` is the command :help lists just before it ("" for
  /// the first), so that a topic's file alone places its commands in :help's order.
  struct Listed {
    std::string after;
    Engine::Command command;
  };

  // Each topic's file defines its handlers, as static members of its topic (a nested struct, which
  // shares Commands' access to the engine), and lists its commands: adding a command touches that
  // file only.
  struct GraphTopic;    ///< GraphCommands.cpp: making, inspecting and saving graphs
  struct PassTopic;     ///< PassCommands.cpp: passes, instruments and fusion
  struct CodeTopic;     ///< CodeCommands.cpp: loops, schedules, LLVM IR, assembly, target, cache
  struct BuildTopic;    ///< BuildCommands.cpp: building and exporting
  struct RunTopic;      ///< RunCommands.cpp: running and bisecting
  struct ProfileTopic;  ///< ProfileCommands.cpp: storage and profiles
  struct QuantizeTopic; ///< QuantizeCommands.cpp: quantizing, layer-by-layer comparison
  struct SessionTopic;  ///< SessionCommands.cpp: help, options, history, recording
  struct TuneTopic;     ///< TuneCommands.cpp: a function's knob space, the measured search
  struct ModelTopic;    ///< ModelCommands.cpp: models from the zoo and from files
  static std::vector<Listed> graphCommands();
  static std::vector<Listed> passCommands();
  static std::vector<Listed> codeCommands();
  static std::vector<Listed> buildCommands();
  static std::vector<Listed> runCommands();
  static std::vector<Listed> profileCommands();
  static std::vector<Listed> quantizeCommands();
  static std::vector<Listed> sessionCommands();
  static std::vector<Listed> tuneCommands();
  static std::vector<Listed> modelCommands();

  /// `:tune`'s network check of built graph `g` against the tuning log, `runs` runs of each
  /// build, its records appended to `log`; prints its table.
  static void networkCheck(Engine &e, const Graph &g, const std::string &log, int runs,
                           std::ostream &out, const std::string &apply = ":build again to apply");

  // Shared by several topics and by the engine (defined in GraphCommands.cpp, RunCommands.cpp).
  /// One input or output of a graph as `:inputs` and `:outputs` list it.
  struct Port {
    std::string name, shape = "?", dtype = "?", layout = "-";
    bool param = false; ///< bound to a value by :model, :load or the build
  };
  /// The graph's inputs in argument order: shapes and dtypes from its attributes, else inferred
  /// from the variables' attributes and the bound params (of the build, else of the last :model
  /// or :load); "?" where nothing says.
  static std::vector<Port> graphInputs(const Engine &e, const Graph &g);
  /// The graph's outputs (its heads), shapes and dtypes as graphInputs finds them.
  static std::vector<Port> graphOutputs(const Engine &e, const Graph &g);
  /// For a dynamic build (or a variant of one) as the current step: the sizes of the tensor files
  /// `w` gives for its symbolic inputs and the symbols it names (SYMBOL=N, taken out of `w`) bind
  /// the symbols, and the variant of those sizes becomes the current step — pushed as a new step,
  /// said on `out`, unless the current step is that variant. A symbol left unbound keeps the
  /// current variant's size. Returns the current graph. Other graphs are returned as they are.
  static const Graph &currentVariant(Engine &e, RunWords &w, std::ostream &out);
  /// The variant of the current dynamic build (or variant) for the inputs of shapes `given` and
  /// the sizes `words` names, the current variant's sizes kept for symbols neither gives, made
  /// the current step (pushed unless it is); returns the line that says so ("" when unchanged).
  static std::string useVariant(Engine &e, const std::map<std::string, Shape> &given,
                                const SymBindings &words);
  /// The sizes `text` names for the size symbols of `g` (`SYMBOL=N[,N…]` each): every
  /// combination, each symbol given; errors start with `what` (specialize, sizes).
  static std::vector<SymBindings> sizeSample(const Graph &g, const std::string &text,
                                             const std::string &what);
  /// The graph the current step's build started from: the step before it, or, for a variant of
  /// a dynamic build, the graph the dynamic build took (the step before a variant may be another
  /// variant). Null at the first step.
  static const Graph *buildSource(const Engine &e);
  /// "; its data inputs: x (1, 3, 8, 8), y (…)", for an error about a name that is not one.
  static std::string dataInputsText(const Engine &e, const Graph &g);
  /// Throws the one-line error of a command that needs a built graph when `g` is not one (a
  /// dynamic build's own step has no kernels until a size runs).
  static void requireBuilt(const Graph &g);
  /// The inputs `:run` and `:profile` give a built graph when told nothing: random values for
  /// every variable that is not a param of the build.
  static std::map<std::string, Tensor> defaultRunInputs(const Engine &e, const Graph &g);

  /// `:build`'s usage line, for the table and its errors.
  static const char *const kBuildUsage;

  /// Every topic's commands joined, in the order :help lists them (CommandTable.cpp); throws
  /// std::logic_error when the topics' `after` names do not make one chain.
  static std::vector<Engine::Command> table();
};

} // namespace loupe
