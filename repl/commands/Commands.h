// Commands: the handlers of the workbench's `:commands`, declared by topic (each topic's file in
// repl/commands/ defines them) and listed in one table, in the order :help shows them.
#pragma once

#include "backend/Build.h"
#include "repl/Engine.h"
#include "repl/commands/CommandHelpers.h"

#include <map>
#include <ostream>
#include <string>
#include <vector>

namespace loupe {

/// The command handlers: static members of one struct that Engine befriends, so that a command
/// reaches the workbench state it reads and changes. Each takes the engine, the arguments split
/// at white space, the argument text as typed, and where to print.
struct Commands {
  // GraphCommands.cpp: making, inspecting and saving graphs
  static void graph(Engine &e, const Args &a, const std::string &rest, std::ostream &out);
  static void grad(Engine &e, const Args &a, const std::string &rest, std::ostream &out);
  static void ir(Engine &e, const Args &a, const std::string &rest, std::ostream &out);
  static void nodes(Engine &e, const Args &a, const std::string &rest, std::ostream &out);
  static void relay(Engine &e, const Args &a, const std::string &rest, std::ostream &out);
  static void attr(Engine &e, const Args &a, const std::string &rest, std::ostream &out);
  static void setAttr(Engine &e, const Args &a, const std::string &rest, std::ostream &out);
  static void inputs(Engine &e, const Args &a, const std::string &rest, std::ostream &out);
  static void outputs(Engine &e, const Args &a, const std::string &rest, std::ostream &out);
  static void open(Engine &e, const Args &a, const std::string &rest, std::ostream &out);
  static void vars(Engine &e, const Args &a, const std::string &rest, std::ostream &out);
  static void ops(Engine &e, const Args &a, const std::string &rest, std::ostream &out);
  static void dot(Engine &e, const Args &a, const std::string &rest, std::ostream &out);
  static void save(Engine &e, const Args &a, const std::string &rest, std::ostream &out);

  // PassCommands.cpp: passes, instruments and fusion
  static void apply(Engine &e, const Args &a, const std::string &rest, std::ostream &out);
  static void groups(Engine &e, const Args &a, const std::string &rest, std::ostream &out);
  static void why(Engine &e, const Args &a, const std::string &rest, std::ostream &out);
  static void precision(Engine &e, const Args &a, const std::string &rest, std::ostream &out);
  static void trace(Engine &e, const Args &a, const std::string &rest, std::ostream &out);
  static void instrument(Engine &e, const Args &a, const std::string &rest, std::ostream &out);
  static void timing(Engine &e, const Args &a, const std::string &rest, std::ostream &out);
  static void pipeline(Engine &e, const Args &a, const std::string &rest, std::ostream &out);
  static void explain(Engine &e, const Args &a, const std::string &rest, std::ostream &out);
  static void compare(Engine &e, const Args &a, const std::string &rest, std::ostream &out);
  static void layerwise(Engine &e, const Args &a, const std::string &rest, std::ostream &out);
  static void quantize(Engine &e, const Args &a, const std::string &rest, std::ostream &out);
  static void loadPass(Engine &e, const Args &a, const std::string &rest, std::ostream &out);
  static void passes(Engine &e, const Args &a, const std::string &rest, std::ostream &out);

  // CodeCommands.cpp: lowering and code: loops, schedules, LLVM IR, assembly, target, cache
  static void lower(Engine &e, const Args &a, const std::string &rest, std::ostream &out);
  static void where(Engine &e, const Args &a, const std::string &rest, std::ostream &out);
  static void schedule(Engine &e, const Args &a, const std::string &rest, std::ostream &out);
  static void llvm(Engine &e, const Args &a, const std::string &rest, std::ostream &out);
  static void assembly(Engine &e, const Args &a, const std::string &rest, std::ostream &out);
  static void target(Engine &e, const Args &a, const std::string &rest, std::ostream &out);
  static void cache(Engine &e, const Args &a, const std::string &rest, std::ostream &out);

  // BuildCommands.cpp: building and running
  static void build(Engine &e, const Args &a, const std::string &rest, std::ostream &out);
  static void run(Engine &e, const Args &a, const std::string &rest, std::ostream &out);
  static void buffers(Engine &e, const Args &a, const std::string &rest, std::ostream &out);
  static void profile(Engine &e, const Args &a, const std::string &rest, std::ostream &out);
  static void bisect(Engine &e, const Args &a, const std::string &rest, std::ostream &out);
  static void exportBuild(Engine &e, const Args &a, const std::string &rest, std::ostream &out);

  // SessionCommands.cpp: the session: help, options, history, recording
  static void help(Engine &e, const Args &a, const std::string &rest, std::ostream &out);
  static void set(Engine &e, const Args &a, const std::string &rest, std::ostream &out);
  static void diff(Engine &e, const Args &a, const std::string &rest, std::ostream &out);
  static void history(Engine &e, const Args &a, const std::string &rest, std::ostream &out);
  static void undo(Engine &e, const Args &a, const std::string &rest, std::ostream &out);
  static void redo(Engine &e, const Args &a, const std::string &rest, std::ostream &out);
  static void record(Engine &e, const Args &a, const std::string &rest, std::ostream &out);
  static void stop(Engine &e, const Args &a, const std::string &rest, std::ostream &out);
  static void quit(Engine &e, const Args &a, const std::string &rest, std::ostream &out);

  // TuneCommands.cpp: tuning: a function's knob space, the measured search
  static void space(Engine &e, const Args &a, const std::string &rest, std::ostream &out);
  static void tune(Engine &e, const Args &a, const std::string &rest, std::ostream &out);
  /// `:tune`'s network check of built graph `g` against the tuning log, `runs` runs of each
  /// build, its records appended to `log`; prints its table.
  static void networkCheck(Engine &e, const Graph &g, const std::string &log, int runs,
                           std::ostream &out);

  // ModelCommands.cpp: models from the zoo and from files
  static void model(Engine &e, const Args &a, const std::string &rest, std::ostream &out);
  static void load(Engine &e, const Args &a, const std::string &rest, std::ostream &out);
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
  /// "; its data inputs: x (1, 3, 8, 8), y (…)", for an error about a name that is not one.
  static std::string dataInputsText(const Engine &e, const Graph &g);
  /// The inputs `:run` and `:profile` give a built graph when told nothing: random values for
  /// every variable that is not a param of the build.
  static std::map<std::string, Tensor> defaultRunInputs(const Engine &e, const Graph &g);

  /// `:build`'s usage line, for the table and its errors.
  static const char *const kBuildUsage;

  /// Every command with its usage and summary, in the order :help lists them (CommandTable.cpp).
  static std::vector<Engine::Command> table();
};

} // namespace loupe
