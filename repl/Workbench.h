// Workbench: the typed session API — a graph from an expression, its gradient, passes applied,
// a graph attribute read from text, a build, a run's values, the fusion groups — that the REPL's
// commands print and the Python package calls. Each call fails with the one-line Error its
// command prints, and changes nothing of the session when it does.
#pragma once

#include "backend/Build.h"
#include "core/Graph.h"
#include "core/Tensor.h"
#include "passes/Layerwise.h"
#include "passes/Quantize.h"
#include "repl/Engine.h"

#include <map>
#include <set>
#include <string>
#include <vector>

namespace loupe {

/// What `:groups` shows, as values: the partition of the current step (a built step's: the one
/// its functions were made from), each node's root and master, and each group.
struct GroupsView {
  bool built = false; ///< the step is built (optLevel and rules say how it was partitioned)
  int optLevel = 0;
  std::string rules;
  std::string roots, masters; ///< the attributes as NNVM prints them
  struct NodeRow {
    std::string node, root, master; ///< master "None" when the node has none
  };
  std::vector<NodeRow> nodes;
  struct Group {
    std::string root, pattern, master, function;
    std::vector<std::string> members;
  };
  std::vector<Group> groups;
};

/// What `:run` computes, as values: each output of the built current graph and, when checked,
/// the reference interpreter's.
struct RunValues {
  std::vector<std::string> names; ///< the outputs' names, as :outputs lists them
  std::vector<Tensor> outputs, reference;
};

/// What `:layerwise` computes, as values: two history steps' graphs run by the reference
/// interpreter on the same inputs, every value they share compared (in the second's node order).
struct LayerwiseView {
  size_t stepA = 0, stepB = 0;
  std::string against;                      ///< the reference: "step A", or the folder of tensors
  std::vector<std::string> notes;           ///< how inputs were made or converted
  std::vector<LayerComparison> comparisons; ///< in the second step's graph order
};

/// The types a graph attribute can be given in (NNVM's _set_json_attr type names).
const std::set<std::string> &graphAttrTypes();

/// The session API over one engine (its pass context, kernel cache, tuning log and graph
/// language state).
class Workbench {
public:
  explicit Workbench(Engine &e) : e_(e) {}

  /// The graph of a symbol expression of the graph language (`nnvm.graph.create`, `:graph`);
  /// errors point at `column` of the command line.
  Graph symbolGraph(const std::string &expr, int column = 0);
  /// The gradient graph of the symbols `ys` with respect to the list `xs`, both expressions of
  /// the graph language (`get_gradient_graph`, `:grad`).
  Graph gradientGraph(const std::string &ys, const std::string &xs, int ysColumn = 0,
                      int xsColumn = 0);
  /// Passes applied to `g` in order under the session's pass context (`Graph.apply`, `:apply`).
  Graph apply(const Graph &g, const std::vector<std::string> &passes,
              std::vector<std::string> *remarks = nullptr);
  /// A graph attribute of NNVM's type TYPE (str, int, size_t, list_int, list_str, list_shape,
  /// list_layout, dict_str_int) read from VALUE's text (`Graph._set_json_attr`, `:setattr`).
  GraphAttr parseGraphAttr(const std::string &value, const std::string &type);
  /// `nnvm.compiler.build` of `g` under the session's pass context, its options and kernel
  /// cache: `o` says the opt level, shapes, dtypes, params and hooks; `target` the target string.
  Graph build(const Graph &g, backend::BuildOptions o, const std::string &target);
  /// Runs the built current graph as `:run` does — inputs not in `given` filled as :run fills
  /// them (bound params, else random from `seed`) — with `given`'s values rounded to each
  /// input's dtype; a name that is no input or a wrong shape is an error and nothing runs.
  RunValues run(const std::map<std::string, Tensor> &given, unsigned seed, bool check);
  /// The current step's fusion groups (the step must be partitioned or built).
  GroupsView groups();
  /// History steps `a` and `b` (graphs, not built ones) run by the reference interpreter on the
  /// same inputs — the session's bound params, each other variable given in `given` (rounded to
  /// its dtype), else as `how` says (NAME → random, zeros, ones, a number or a .npy file), random
  /// from `seed` by default, from its `shape` and `dtype` attributes — and compared value by value
  /// (compareLayers).
  LayerwiseView layerwise(size_t a, size_t b, const std::map<std::string, std::string> &how,
                          unsigned seed, const std::map<std::string, Tensor> &given = {});
  /// History step `b` (a graph, not a built one) run by the reference interpreter and compared
  /// with the tensors another runtime wrote to folder `dir` (compareWithReference): output 0 of
  /// node NAME in `npyFileStem(NAME).npy`, output k > 0 in `npyFileStem(NAME:k).npy`. Each data
  /// input is `how`'s, else the folder's file of its name — the inputs the other runtime ran —
  /// else an error. The comparison is kept on step `b` as layerwise() keeps its own.
  LayerwiseView layerwiseAgainst(size_t b, const std::string &dir,
                                 const std::map<std::string, std::string> &how);
  /// The current graph (not a built one) with its conv2d and dense between calibrated
  /// quantize/dequantize pairs (quantizeGraph): `samples` calibration inputs made as `how` says
  /// (random from `seed` by default), sample k's entries of `perSample[k]` (where given: a
  /// calibration folder's files) over `how`'s; the session's bound params as the weights.
  Graph quantize(const QuantizeOptions &options, const std::map<std::string, std::string> &how,
                 const std::vector<std::map<std::string, std::string>> &perSample, size_t samples,
                 unsigned seed, QuantizeReport *report, std::vector<std::string> *notes);

private:
  Engine &e_;
};

} // namespace loupe
