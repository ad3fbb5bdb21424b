// PrecomputePrune: cuts off the part of the graph that depends only on parameters, so a build
// can compute it once (nnvm-spec §8); the cut part becomes graph attr `precompute_graph`.
//
// Parameters are the variables named in `param_name_list`; an op is precomputable when all its
// inputs are (an op without inputs is too). Every edge from a precomputable node into one that
// is not is replaced by a new variable named after the producer ("_<version>" for a mutated
// variable, "_output<i>" for an output of a multi-output node), shared by all readers of that
// entry. If no op was cut off, the graph is returned unchanged. Otherwise `precompute_graph`
// holds a graph whose outputs are the cut entries, with `output_names` naming the new
// variables in the same order.
#include "passes/Pass.h"
#include "passes/Symbols.h"

#include "core/Error.h"
#include "core/Rewrite.h"

#include <map>
#include <set>

namespace loupe {

namespace {

Graph precomputePrune(const Graph &src, const PassContext &) {
  const auto &names = src.attr("param_name_list")->strs;
  std::set<std::string> params(names.begin(), names.end());
  std::set<const Node *> pruned;
  std::map<std::tuple<const Node *, uint32_t, uint32_t>, NodeEntry> cut; // entry → variable
  std::vector<NodeEntry> cutOrder;
  std::vector<std::string> cutNames;
  std::set<std::string> taken;
  int nonVariableCuts = 0;
  auto variableFor = [&](const NodeEntry &e) {
    auto key = std::make_tuple(e.node.get(), e.index, e.version);
    auto it = cut.find(key);
    if (it != cut.end())
      return it->second;
    std::string name = e.node->name;
    if (e.version)
      name += "_" + std::to_string(e.version);
    if (e.node->numOutputs() != 1)
      name += "_output" + std::to_string(e.index);
    if (!taken.insert(name).second)
      fail("PrecomputePrune: two cut entries would both be named ", name);
    NodeEntry v{makeVariable(name), 0, 0};
    cut[key] = v;
    cutOrder.push_back(e);
    cutNames.push_back(name);
    if (!e.node->isVariable())
      ++nonVariableCuts;
    return v;
  };
  Graph out = rewriteGraph(src, [&](uint32_t, const NodePtr &node) -> std::vector<NodeEntry> {
    if (node->isVariable()) {
      if (params.count(node->name))
        pruned.insert(node.get());
      return {};
    }
    bool all = !hasSymbolicSizes(*node); // its value depends on the sizes
    for (const auto &e : node->inputs)
      all &= pruned.count(e.node.get()) != 0;
    if (all) {
      pruned.insert(node.get());
      return {};
    }
    std::vector<NodeEntry> inputs = node->inputs;
    bool changed = false;
    for (auto &e : inputs)
      if (pruned.count(e.node.get())) {
        e = variableFor(e);
        changed = true;
      }
    if (!changed)
      return {};
    NodePtr copy = makeOpNode(*node->op, node->name, node->attrs, inputs, node->controlDeps, false);
    return outputsOf(copy);
  });
  if (nonVariableCuts == 0)
    return src;
  std::vector<NodeEntry> heads;
  for (const auto &h : out.outputs())
    heads.push_back(pruned.count(h.node.get()) ? variableFor(h) : h);
  Graph result(heads, src.attrs);
  Graph pre(cutOrder);
  pre.attrs["output_names"] = GraphAttr::listStr(cutNames);
  GraphAttr attr;
  attr.type = GraphAttr::Type::Opaque;
  attr.str = "graph with " + std::to_string(cutOrder.size()) + " outputs";
  attr.opaque = std::make_shared<const Graph>(std::move(pre));
  result.attrs["precompute_graph"] = attr;
  return result;
}

} // namespace

void registerPrecomputePrunePass() {
  PassRegistry::get().add(
      {.name = "PrecomputePrune",
       .summary = "cuts off what depends only on params into graph attr precompute_graph",
       .optLevel = 2,
       .needs = {"param_name_list"},
       .provides = {"precompute_graph"},
       .changesGraph = true,
       .run = precomputePrune});
}

} // namespace loupe
