// Gradient: the reverse-mode graph transform (nnvm-spec §8) and its pass record.
//
// As NNVM's pass: order the forward nodes by a post-order DFS from ys; seed the output gradients
// of ys with the head gradients; walk the order backwards, and for each op node sum the
// gradients of each of its outputs, call the op's FGradient, and add the results to its inputs'
// lists. The gradients of xs are summed last. An op without FGradient is an error unless every
// output gradient is zero, in which case its inputs get `zeros_like` gradients named
// `<node>_backward` (`<node>_in<i>_backward`), as NNVM's zero_ops path did.
#include "passes/Gradient.h"

#include "core/Error.h"
#include "passes/Pass.h"

#include <algorithm>
#include <map>

namespace loupe {

namespace {

NodeEntry make(const char *op, const std::string &name, std::vector<NodeEntry> inputs,
               AttrDict attrs = {}, std::vector<NodePtr> deps = {}) {
  return {makeOpNode(*OpRegistry::get().find(op), name, std::move(attrs), std::move(inputs),
                     std::move(deps), false),
          0, 0};
}

bool isZero(const NodeEntry &e) {
  return e.node->op && (e.node->op->name == "zeros_like" || e.node->op->name == "zeros");
}

NodeEntry aggregate(std::vector<NodeEntry> grads, const NodeEntry &of) {
  if (grads.size() == 1)
    return grads[0];
  if (grads.empty()) // Loupe uses zeros_like so the zero keeps a known shape
    return make("zeros_like", "zero_grad", {of});
  std::string n = std::to_string(grads.size());
  return make("elemwise_sum", "grad_sum", std::move(grads), {{"num_args", n}});
}

using Key = std::pair<const Node *, uint32_t>;

} // namespace

Graph gradientGraph(const std::vector<NodeEntry> &ys, const std::vector<NodeEntry> &xs,
                    const std::vector<NodeEntry> &headGrads) {
  if (ys.size() != headGrads.size())
    fail("Gradient: ", ys.size(), " outputs but ", headGrads.size(), " head gradients");
  // Topological order of the forward graph.
  IndexedGraph order(ys);
  std::map<Key, std::vector<NodeEntry>> grads;
  for (size_t i = 0; i < ys.size(); ++i)
    grads[{ys[i].node.get(), ys[i].index}].push_back(headGrads[i]);
  for (const auto &x : xs)
    if (!order.idOf.count(x.node.get()))
      fail("Gradient: ", x.node->name, " is not an input of the outputs being differentiated");
  std::map<Key, NodeEntry> sums;
  for (uint32_t nid = order.numNodes(); nid-- > 0;) {
    const NodePtr &node = order.nodes[nid].node;
    if (node->isVariable())
      continue;
    std::vector<NodeEntry> outGrads;
    for (uint32_t k = 0; k < node->numOutputs(); ++k) {
      Key key{node.get(), k};
      NodeEntry s = aggregate(std::move(grads[key]), {node, k, 0});
      sums[key] = s;
      outGrads.push_back(s);
    }
    if (node->inputs.empty())
      continue;
    std::vector<NodeEntry> inGrads;
    if (node->op->gradient) {
      inGrads = node->op->gradient(node, outGrads);
      if (inGrads.size() != node->inputs.size())
        fail("internal: the gradient of ", node->op->name, " returned ", inGrads.size(),
             " gradients for ", node->inputs.size(), " inputs");
    } else if (std::all_of(outGrads.begin(), outGrads.end(), isZero)) {
      for (size_t i = 0; i < node->inputs.size(); ++i)
        inGrads.push_back(
            make("zeros_like",
                 node->name + (node->inputs.size() == 1 ? "_backward"
                                                        : "_in" + std::to_string(i) + "_backward"),
                 {node->inputs[i]}, {}, {node}));
    } else {
      fail("Operator ", node->op->name,
           " is non-differentiable because it didn't register "
           "FGradient attribute.");
    }
    for (size_t i = 0; i < node->inputs.size(); ++i)
      grads[{node->inputs[i].node.get(), node->inputs[i].index}].push_back(inGrads[i]);
  }
  std::vector<NodeEntry> outs;
  for (const auto &x : xs) {
    Key key{x.node.get(), x.index};
    auto it = sums.find(key);
    outs.push_back(it != sums.end() ? it->second : aggregate(std::move(grads[key]), x));
  }
  return Graph(outs);
}

namespace {

// The pass form: the graph's outputs are ys, `grad_xs` names the variables (list_str), and the
// head gradients are ones_like of each output, named ones_like<i> (the workbench's `:grad`
// names them with the session's counters instead, as NNVM's Python helper did).
Graph gradientPass(const Graph &g, const PassContext &) {
  const IndexedGraph &idx = g.index();
  std::vector<NodeEntry> xs, heads;
  for (const auto &name : g.attr("grad_xs")->strs) {
    int nid = idx.findByName(name);
    if (nid < 0 || !idx.nodes[nid].node->isVariable())
      fail("Gradient: grad_xs names '", name, "', which is not a variable of the graph");
    xs.push_back({idx.nodes[nid].node, 0, 0});
  }
  for (size_t i = 0; i < g.outputs().size(); ++i)
    heads.push_back(make("ones_like", "ones_like" + std::to_string(i), {g.outputs()[i]}));
  return gradientGraph(g.outputs(), xs, heads);
}

} // namespace

void registerGradientPass() {
  PassRegistry::get().add(
      {.name = "Gradient",
       .summary = "builds the gradient graph of the outputs with respect to grad_xs",
       .optLevel = 0,
       .needs = {"grad_xs"},
       .changesGraph = true,
       .run = gradientPass});
}

} // namespace loupe
