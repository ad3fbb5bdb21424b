// SinkLayoutTransform: opt_level 3's clean-up after AlterOpLayout and SimplifyInference — keeps
// elementwise and broadcast ops in the blocked layout of the convolution that feeds them.
//
// CorrectLayout converts a blocked convolution's output back to NCHW for every op that was
// written for NCHW, so batch norm (a broadcast multiply and add after SimplifyInference), relu
// and residual adds run between two transforms: NCHW16c -> NCHW -> ops -> NCHW16c, each a pass
// over memory that gathers across the channel blocks. This pass moves the NCHW16c -> NCHW
// transform past such ops: an op whose data input is that transform runs on the blocked source
// instead, its other operands converted alongside (a per-channel (C, 1, 1) operand in layout
// CHW becomes CHW16c, a whole NCHW tensor NCHW16c; PrecomputePrune folds those of params at
// build time), and the transform follows the op. Pools move onto the blocked tensor too. Where it
// meets an NCHW -> NCHW16c transform the pair cancels. Run by `:build` at opt level 3 (shown by
// `:trace`); not in the registry, so the pass list of opt levels 0-2 is what NNVM's was.
#include "passes/Pass.h"

#include "core/Error.h"
#include "core/Layout.h"
#include "core/Rewrite.h"

#include <algorithm>
#include <map>

namespace loupe {

namespace {

// The sub-axes of a blocked layout ("NCHW16c" -> {16, 'c'}).
std::vector<LayoutAxis> subAxesOf(const std::string &layout) {
  std::vector<LayoutAxis> v;
  for (const LayoutAxis &a : parseLayout(layout))
    if (a.factor != 0)
      v.push_back(a);
  return v;
}

// Ops that compute each element from the same element of their operands (after broadcasting),
// with no attribute that names an axis or a shape: they run unchanged on any layout.
bool layoutAgnostic(const OpDef &op) {
  static const char *const names[] = {
      "relu",          "sigmoid",       "tanh",          "exp",           "log",
      "sqrt",          "negative",      "clip",          "copy",          "leaky_relu",
      "elemwise_add",  "elemwise_sub",  "elemwise_mul",  "elemwise_div",  "broadcast_add",
      "broadcast_sub", "broadcast_mul", "broadcast_div", "broadcast_max", "broadcast_min"};
  for (const char *n : names)
    if (op.name == n)
      return true;
  // __add_scalar__, __mul_scalar__, __rdiv_scalar__, …
  return op.name.starts_with("__") && op.name.ends_with("_scalar__");
}

struct View {
  NodeEntry source;    ///< the blocked tensor
  std::string blocked; ///< its layout, e.g. NCHW16c
  std::string primal;  ///< the layout the view presents, e.g. NCHW
};

Graph sinkLayoutTransform(const Graph &src, const PassContext &) {
  const GraphAttr *shapeAttr = src.attr("shape");
  if (!shapeAttr)
    fail("SinkLayoutTransform: the graph has no shapes; apply InferShape first");
  const auto &shapes = shapeAttr->shapes;
  const IndexedGraph &idx = src.index();
  const OpDef &transform = *OpRegistry::get().find("__layout_transform__");
  std::map<const Node *, View> viewOf; // transforms from a blocked layout to its primal one
  auto makeTransform = [&](const NodeEntry &e, const std::string &from, const std::string &to,
                           const std::string &name) {
    return NodeEntry{makeOpNode(transform, name, {{"src_layout", from}, {"dst_layout", to}}, {e}),
                     0, 0};
  };
  return rewriteGraph(src, [&](uint32_t nid, const NodePtr &node) -> std::vector<NodeEntry> {
    if (node->isVariable())
      return {};
    if (node->op->name == "__layout_transform__") {
      const std::string &from = node->parsed.getStr("src_layout"),
                        &to = node->parsed.getStr("dst_layout");
      // NCHW -> NCHW16c of a view of an NCHW16c tensor: the tensor itself.
      auto it = viewOf.find(node->inputs[0].node.get());
      if (it != viewOf.end() && it->second.primal == from && it->second.blocked == to)
        return {it->second.source};
      if (from != to && primalLayout(from) == to) // from a blocked layout to its primal one
        viewOf[node.get()] = {node->inputs[0], from, to};
      return {};
    }
    // Pools work on NCHW<k>c as on NCHW (H and W stay axes 2 and 3): the pool moves onto the
    // blocked tensor with its layout attribute changed.
    const std::string &opName = node->op->name;
    if (opName == "max_pool2d" || opName == "avg_pool2d" || opName == "global_max_pool2d" ||
        opName == "global_avg_pool2d") {
      auto it = viewOf.find(node->inputs[0].node.get());
      if (node->parsed.getStr("layout") != "NCHW" || it == viewOf.end() ||
          it->second.primal != "NCHW" || subAxesOf(it->second.blocked).size() != 1 ||
          subAxesOf(it->second.blocked)[0].name != 'c')
        return {};
      View view = it->second;
      AttrDict attrs = node->attrs;
      auto at = std::find_if(attrs.begin(), attrs.end(),
                             [](const auto &kv) { return kv.first == "layout"; });
      if (at == attrs.end())
        attrs.emplace_back("layout", view.blocked);
      else
        at->second = view.blocked;
      NodePtr pool =
          makeOpNode(*node->op, node->name, attrs, {view.source}, node->controlDeps, false);
      NodeEntry back = makeTransform({pool, 0, 0}, view.blocked, "NCHW", node->name + "_NCHW");
      view.source = {pool, 0, 0};
      viewOf[back.node.get()] = std::move(view);
      return {back};
    }
    if (!layoutAgnostic(*node->op) || node->numOutputs() != 1)
      return {};
    // The data input: a view whose shape is the op's output shape.
    const Shape &outShape = shapes[idx.entryId(nid, 0)];
    const View *data = nullptr;
    for (size_t i = 0; i < node->inputs.size() && !data; ++i) {
      auto it = viewOf.find(node->inputs[i].node.get());
      if (it != viewOf.end() && shapes[idx.entryId(idx.nodes[nid].inputs[i])] == outShape)
        data = &it->second;
    }
    if (!data)
      return {};
    const std::string &primal = data->primal, &blocked = data->blocked;
    std::vector<LayoutAxis> subs = subAxesOf(blocked);
    std::string sub;
    for (const LayoutAxis &a : subs)
      sub += std::to_string(a.factor) + static_cast<char>(a.name);
    std::vector<NodeEntry> inputs;
    for (size_t i = 0; i < node->inputs.size(); ++i) {
      const NodeEntry &e = node->inputs[i];
      auto it = viewOf.find(e.node.get());
      if (it != viewOf.end() && it->second.blocked == blocked && it->second.primal == primal) {
        inputs.push_back(it->second.source);
        continue;
      }
      const Shape &s = shapes[idx.entryId(idx.nodes[nid].inputs[i])];
      if (std::all_of(s.begin(), s.end(), [](int64_t d) { return d == 1; })) {
        inputs.push_back(e); // broadcasts against any layout
        continue;
      }
      // An operand over the trailing axes of the primal layout that include every blocked
      // axis, at their full size, converts to the same suffix with the sub-axes appended.
      if (s.size() > primal.size())
        return {};
      std::string suffix = primal.substr(primal.size() - s.size());
      for (const LayoutAxis &a : subs) {
        size_t at = suffix.find(static_cast<char>(a.name - 'a' + 'A'));
        size_t full = primal.size() - suffix.size() + at;
        if (at == std::string::npos || s[at] != outShape[full])
          return {};
      }
      inputs.push_back(makeTransform(e, suffix, suffix + sub, e.node->name + "_" + suffix + sub));
    }
    NodePtr blockedOp =
        makeOpNode(*node->op, node->name, node->attrs, inputs, node->controlDeps, false);
    NodeEntry back = makeTransform({blockedOp, 0, 0}, blocked, primal, node->name + "_" + primal);
    View view;
    view.source = NodeEntry{blockedOp, 0, 0};
    view.blocked = blocked;
    view.primal = primal;
    viewOf[back.node.get()] = std::move(view);
    return {back};
  });
}

} // namespace

const PassInfo &sinkLayoutTransformPass() {
  static const PassInfo info{"SinkLayoutTransform",
                             "runs elementwise and broadcast ops in the blocked layout of the "
                             "convolution feeding them (opt level 3)",
                             3,
                             {"shape"},
                             {},
                             true,
                             sinkLayoutTransform};
  return info;
}

} // namespace loupe
