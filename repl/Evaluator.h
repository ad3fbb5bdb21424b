// Evaluator: the graph language's evaluation — the symbols bound so far, NNVM's name counters,
// and statements evaluated one by one into graph nodes (the parser is GraphLang).
#pragma once

#include "core/Graph.h"
#include "repl/Value.h"

#include <map>
#include <optional>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

namespace loupe {

struct Expr;
struct OpDef;

/// The graph language's state and evaluation (`nnvm.symbol`'s Python calls, as the seeds write
/// them). A failed input leaves nothing behind: what it changed is kept in a journal and undone,
/// so a statement costs time in what it touches, not in how many symbols the session holds (a
/// copy of every binding per statement made a 20,000-statement script quadratic).
class Evaluator {
public:
  /// Runs statements: `name = expr` binds, a bare expression prints its value to `out`. Throws
  /// Error (with line and column within `text`) with every binding, counter and version as they
  /// were before.
  void run(const std::string &text, std::ostream &out);
  /// Evaluates a command argument that must be one expression; syntax and name errors point at
  /// their place in the command line, whose argument text starts at `column`.
  Value evalArgument(const std::string &text, int column, const std::string &usage);
  /// The gradient graph of `ys` with respect to `xs`, with ones_like head gradients named by the
  /// session's counters (NNVM's get_gradient_graph).
  Graph gradientOf(const Value &ys, const Value &xs, const Expr &at);

  /// The bindings, by name.
  const std::map<std::string, Value> &variables() const { return env_; }
  /// Names bound so far, sorted.
  std::vector<std::string> variableNames() const;

  /// All the evaluator's state: a command saves it and restores it when it fails (commands are
  /// few; statements use the journal).
  struct State {
    std::map<std::string, Value> env;
    std::map<std::string, int> counters;
    std::map<const Node *, uint32_t> versions;
  };
  State save() const { return {env_, nameCounters_, varVersions_}; }
  void restore(State s);

private:
  Value eval(const Expr &e);
  Value callFunction(const Expr &call);
  Value callOp(const OpDef &op, const std::string &hint, const std::vector<Value> &positional,
               const std::vector<std::pair<std::string, Value>> &keywords, const Expr &at);
  Value binaryOp(const std::string &op, const Value &a, const Value &b, const Expr &at);
  Value makeVariable(const Expr &call, const std::vector<Value> &pos,
                     const std::vector<std::pair<std::string, Value>> &kw);

  // Changes, each with what it replaced (nothing: the key was absent), while `run` lasts.
  struct Journal {
    std::vector<std::pair<std::string, std::optional<Value>>> env;
    std::vector<std::pair<std::string, std::optional<int>>> counters;
    std::vector<std::pair<const Node *, std::optional<uint32_t>>> versions;
  };
  void bind(const std::string &name, Value v);
  int &counter(const std::string &key);
  uint32_t &version(const Node *n);
  void undo(Journal &j);

  std::map<std::string, Value> env_;
  std::map<std::string, int> nameCounters_;      ///< NNVM NameManager: per-hint counters
  std::map<const Node *, uint32_t> varVersions_; ///< write counts of mutated variables
  std::vector<NodePtr> keepAlive_;               ///< keeps counted variables' addresses unique
  Journal *journal_ = nullptr;                   ///< set while `run` runs
};

} // namespace loupe
