// FoldScaleAxis: folds per-channel multiplies (such as the scale SimplifyInference leaves of a
// batch_norm) into the weights of a neighbouring conv2d, as NNVM did (nnvm-spec §8).
//
// A scale is `broadcast_mul(x, s)` where s is a variable, or expand_dims of a 1-D tensor, whose
// shape is 1 everywhere but one axis of x (x itself has the output's shape), and s is read once.
//
// Backward folding (scale after the conv, e.g. conv → relu → bn): the demand for the scale
// travels from the multiply towards the graph inputs through nodes read once — relu and
// leaky_relu pass it on, NCHW max/avg_pool2d on the channel axis, broadcast_add/sub pass it to
// their full-shape side and make the per-channel side a consumer — until an NCHW/OIHW conv2d on
// axis 1 consumes it into its weight (axis 0) and bias. Every node on the way must be read once
// and have one output, or the chain stops and nothing changes.
//
// Forward folding (scale before the conv): the scale is pulled forward from a multiply read
// once, through relu, leaky_relu, NCHW pools and broadcast_add/sub (whose per-channel side is
// divided by the scale), into the weight of a conv2d on input axis 1 (axis 0 for a depthwise
// conv2d; other grouped conv2ds are left alone). When the path forks, every branch must reach a
// conv2d.
//
// Once a chain is complete its consumers are rewritten to `broadcast_mul(<input>, expand(s))`
// (`broadcast_div` on the forward add/sub side) named `<input>_sc`, and the multiply is
// replaced by its unscaled operand. The per-op rules sit in this file, as NNVM registered them
// next to its pass: no other code reads them.
//
// One deliberate difference: NNVM's forward fold scaled a conv2d weight even when another node
// also read it, which changed that other node's result; Loupe leaves such a weight, and the
// chain, alone.
#include "passes/Pass.h"
#include "passes/PatternUtil.h"

#include "core/Error.h"
#include "core/Rewrite.h"
#include "core/ops/OpHelpers.h"

#include <algorithm>
#include <functional>
#include <map>

namespace loupe {

namespace {

enum class Fold { None, Pending, Provider, MulConsumer, DivConsumer };

/// Where a node stands in a folding chain: its role, the axis of its output the scale applies
/// to, and the id of the multiply that supplies the scale.
struct FoldInfo {
  Fold kind = Fold::None;
  int axis = 0;
  uint32_t source = 0;
};

struct ChainEntry {
  FoldInfo info;
  int forkCount = 0;      ///< forward: branches that still have to consume the scale
  uint32_t foldInput = 1; ///< provider: the operand that is not the scale
  NodeEntry scale;        ///< provider: the scale tensor itself
};

/// What a node's op does to a scale on the way: the shapes of its inputs and its output and the
/// chain state of its output (backward) or inputs (forward). Returns true when the op consumes
/// the scale.
struct ScaleRule {
  std::function<bool(const Node &, const std::vector<Shape> &, const Shape &, const FoldInfo &,
                     std::vector<FoldInfo> &)>
      backward;
  std::function<bool(const Node &, const std::vector<Shape> &, const Shape &,
                     std::vector<FoldInfo> &, FoldInfo &)>
      forward;
};

bool passThroughBackward(const Node &, const std::vector<Shape> &, const Shape &,
                         const FoldInfo &out, std::vector<FoldInfo> &in) {
  in[0] = out;
  return false;
}

bool passThroughForward(const Node &, const std::vector<Shape> &, const Shape &,
                        std::vector<FoldInfo> &in, FoldInfo &out) {
  out = in[0];
  return false;
}

bool poolBackward(const Node &n, const std::vector<Shape> &, const Shape &, const FoldInfo &out,
                  std::vector<FoldInfo> &in) {
  if (out.axis == 1 && n.parsed.getStr("layout") == "NCHW")
    in[0] = out;
  return false;
}

bool poolForward(const Node &n, const std::vector<Shape> &, const Shape &,
                 std::vector<FoldInfo> &in, FoldInfo &out) {
  if (in[0].axis == 1 && n.parsed.getStr("layout") == "NCHW")
    out = in[0];
  return false;
}

// The scaled side of an add/sub has the output's shape; the other side is a per-channel bias on
// the same axis, which must be scaled too (backward) or divided by the scale (forward).
bool addSubBackward(const Node &, const std::vector<Shape> &in, const Shape &oshape,
                    const FoldInfo &out, std::vector<FoldInfo> &inInfo) {
  if (out.kind != Fold::Pending)
    return false;
  for (int i = 0; i < 2; ++i) {
    auto [axis, biasAxis] = matchBroadcast1DAxis(oshape, in[1 - i]);
    if (biasAxis != -1 && in[i] == oshape && axis == out.axis) {
      inInfo[i] = {Fold::Pending, out.axis, out.source};
      inInfo[1 - i] = {Fold::MulConsumer, biasAxis, out.source};
      return false;
    }
  }
  return false;
}

bool addSubForward(const Node &, const std::vector<Shape> &in, const Shape &oshape,
                   std::vector<FoldInfo> &inInfo, FoldInfo &out) {
  for (int i = 0; i < 2; ++i) {
    if (inInfo[i].kind != Fold::Pending)
      continue;
    auto [axis, biasAxis] = matchBroadcast1DAxis(oshape, in[1 - i]);
    if (biasAxis != -1 && in[i] == oshape && axis == inInfo[i].axis) {
      out = {Fold::Pending, axis, inInfo[i].source};
      inInfo[1 - i] = {Fold::DivConsumer, biasAxis, inInfo[i].source};
      return false;
    }
  }
  return false;
}

bool nchwOihw(const Node &n) {
  return n.parsed.getStr("layout") == "NCHW" && n.parsed.getStr("kernel_layout") == "OIHW";
}

bool conv2dBackward(const Node &n, const std::vector<Shape> &, const Shape &, const FoldInfo &out,
                    std::vector<FoldInfo> &in) {
  if (out.kind != Fold::Pending || out.axis != 1 || !nchwOihw(n))
    return false;
  in[1] = {Fold::MulConsumer, 0, out.source};
  if (n.parsed.getBool("use_bias"))
    in[2] = {Fold::MulConsumer, 0, out.source};
  return true;
}

bool conv2dForward(const Node &n, const std::vector<Shape> &in, const Shape &,
                   std::vector<FoldInfo> &inInfo, FoldInfo &) {
  if (inInfo[0].kind != Fold::Pending || inInfo[0].axis != 1 || !nchwOihw(n))
    return false;
  int64_t groups = n.parsed.getInt("groups");
  bool depthwise = in[0].size() == 4 && in[0][1] == groups;
  if (groups > 1 && !depthwise)
    return false;
  // The weight is OIHW: input channels are its axis 1, except for a depthwise conv2d, whose
  // axis 0 runs over the input channels.
  inInfo[1] = {Fold::MulConsumer, depthwise ? 0 : 1, inInfo[0].source};
  return true;
}

const std::map<std::string, ScaleRule> &scaleRules() {
  static const std::map<std::string, ScaleRule> rules = {
      {"relu", {passThroughBackward, passThroughForward}},
      {"leaky_relu", {passThroughBackward, passThroughForward}},
      {"max_pool2d", {poolBackward, poolForward}},
      {"avg_pool2d", {poolBackward, poolForward}},
      {"broadcast_add", {addSubBackward, addSubForward}},
      {"broadcast_sub", {addSubBackward, addSubForward}},
      {"conv2d", {conv2dBackward, conv2dForward}},
  };
  return rules;
}

const ScaleRule *ruleFor(const Node &n) {
  auto it = scaleRules().find(n.op->name);
  return it == scaleRules().end() ? nullptr : &it->second;
}

class Folder {
public:
  explicit Folder(const Graph &g)
      : idx_(g.index()), shapes_(g.attr("shape")->shapes), refs_(nodeRefCounts(idx_)),
        bwd_(idx_.numNodes()), fwd_(idx_.numNodes()) {}

  Graph run(const Graph &g) {
    backward();
    forward();
    return rewriteGraph(g, [&](uint32_t nid, const NodePtr &n) -> std::vector<NodeEntry> {
      NodeEntry value = ops::outOf(n);
      value = apply(bwd_, nid, n, value);
      value = apply(fwd_, nid, n, value);
      if (value.node == n)
        return {};
      return {value};
    });
  }

private:
  const Shape &shape(const IndexedGraph::Entry &e) const { return shapes_[idx_.entryId(e)]; }
  const Shape &outShape(uint32_t nid) const { return shapes_[idx_.entryId(nid, 0)]; }

  std::vector<Shape> inShapes(uint32_t nid) const {
    std::vector<Shape> s;
    for (const auto &e : idx_.nodes[nid].inputs)
      s.push_back(shape(e));
    return s;
  }

  // Marks node `nid` as a provider-to-be if it is a per-channel broadcast_mul.
  bool detectScale(uint32_t nid, bool forward, std::vector<ChainEntry> &chain) {
    const auto &in = idx_.nodes[nid];
    if (in.node->op->name != "broadcast_mul")
      return false;
    const Shape &oshape = outShape(nid);
    if (oshape.size() <= 1)
      return false;
    for (uint32_t i = 0; i < 2; ++i) {
      const auto &a = in.inputs[i], &b = in.inputs[1 - i];
      int axis = matchBroadcast1DAxis(oshape, shape(a)).first;
      if (axis == -1 || shape(b) != oshape)
        continue;
      if (refs_[a.nodeId] != 1 || (forward ? refs_[nid] : refs_[b.nodeId]) != 1)
        return false;
      const Node &scaleNode = *idx_.nodes[a.nodeId].node;
      ChainEntry &e = chain[nid];
      if (scaleNode.isVariable())
        e.scale = in.node->inputs[i];
      else if (scaleNode.op->name == "expand_dims" &&
               shape(idx_.nodes[a.nodeId].inputs[0]).size() == 1)
        e.scale = scaleNode.inputs[0];
      else
        return false;
      e.foldInput = 1 - i;
      e.info = {Fold::Pending, axis, nid};
      e.forkCount = 1;
      // Backward demand is pushed to the operand at once; forward it is pulled by consumers.
      if (!forward)
        chain[b.nodeId].info = e.info;
      return true;
    }
    return false;
  }

  void backward() {
    for (uint32_t nid = idx_.numNodes(); nid-- > 0;) {
      const auto &in = idx_.nodes[nid];
      if (in.node->isVariable() || detectScale(nid, false, bwd_))
        continue;
      if (bwd_[nid].info.kind != Fold::Pending)
        continue;
      const ScaleRule *rule = ruleFor(*in.node);
      if (refs_[nid] != 1 || !rule) {
        bwd_[nid].info.kind = Fold::None;
        continue;
      }
      std::vector<FoldInfo> inInfo(in.inputs.size());
      bool consumed =
          rule->backward(*in.node, inShapes(nid), outShape(nid), bwd_[nid].info, inInfo);
      // The demand is pushed into every input, so each must be read here only.
      bool private_ = std::all_of(in.inputs.begin(), in.inputs.end(), [&](const auto &e) {
        return refs_[e.nodeId] == 1 && idx_.nodes[e.nodeId].node->numOutputs() == 1;
      });
      if (!private_)
        continue;
      for (size_t i = 0; i < inInfo.size(); ++i)
        bwd_[in.inputs[i].nodeId].info = inInfo[i];
      if (consumed)
        bwd_[bwd_[nid].info.source].info.kind = Fold::Provider;
    }
  }

  void forward() {
    for (uint32_t nid = 0; nid < idx_.numNodes(); ++nid) {
      const auto &in = idx_.nodes[nid];
      if (in.node->isVariable() || bwd_[nid].info.kind == Fold::Provider)
        continue;
      if (detectScale(nid, true, fwd_) || in.node->numOutputs() != 1)
        continue;
      std::vector<FoldInfo> inInfo;
      int pending = 0;
      for (const auto &e : in.inputs) {
        inInfo.push_back(fwd_[e.nodeId].info);
        pending += inInfo.back().kind == Fold::Pending;
      }
      const ScaleRule *rule = ruleFor(*in.node);
      if (pending != 1 || !rule)
        continue;
      FoldInfo out;
      bool consumed = rule->forward(*in.node, inShapes(nid), outShape(nid), inInfo, out);
      if (!receiversPrivate(nid, inInfo))
        continue;
      for (size_t i = 0; i < inInfo.size(); ++i)
        fwd_[in.inputs[i].nodeId].info = inInfo[i];
      if (consumed) {
        fwd_[nid].info = out;
        for (const FoldInfo &i : inInfo)
          if (i.kind == Fold::Pending && --fwd_[i.source].forkCount == 0)
            fwd_[i.source].info.kind = Fold::Provider;
      } else {
        fwd_[nid].info = out;
        // Each further reader of this node is one more branch that must consume the scale.
        if (out.kind == Fold::Pending)
          fwd_[out.source].forkCount += static_cast<int>(refs_[nid]) - 1;
      }
    }
  }

  // The inputs a forward rule makes consumers are rewritten in place, so they must be read by
  // this node only and have one output (see the file comment).
  bool receiversPrivate(uint32_t nid, const std::vector<FoldInfo> &inInfo) const {
    const auto &in = idx_.nodes[nid];
    for (size_t i = 0; i < inInfo.size(); ++i) {
      Fold k = inInfo[i].kind;
      uint32_t src = in.inputs[i].nodeId;
      if ((k == Fold::MulConsumer || k == Fold::DivConsumer) &&
          (refs_[src] != 1 || idx_.nodes[src].node->numOutputs() != 1))
        return false;
    }
    return true;
  }

  NodeEntry apply(const std::vector<ChainEntry> &chain, uint32_t nid, const NodePtr &n,
                  NodeEntry value) const {
    const ChainEntry &e = chain[nid];
    if (e.info.kind == Fold::Provider)
      return n->inputs[e.foldInput];
    bool mul = e.info.kind == Fold::MulConsumer, div = e.info.kind == Fold::DivConsumer;
    if ((!mul && !div) || chain[e.info.source].info.kind != Fold::Provider)
      return value;
    const ChainEntry &src = chain[e.info.source];
    const Shape &scaleShape =
        shapes_[idx_.entryId(idx_.idOf.at(src.scale.node.get()), src.scale.index)];
    NodeEntry scale = expandBiasToMatchAxis(src.scale, static_cast<int>(outShape(nid).size()),
                                            static_cast<int>(scaleShape.size()), e.info.axis);
    return ops::mk(mul ? "broadcast_mul" : "broadcast_div", n->name + "_sc", {value, scale});
  }

  const IndexedGraph &idx_;
  const std::vector<Shape> &shapes_;
  std::vector<uint32_t> refs_;
  std::vector<ChainEntry> bwd_, fwd_;
};

Graph foldScaleAxis(const Graph &src, const PassContext &) {
  for (const Shape &s : src.attr("shape")->shapes)
    if (!s.rankKnown())
      fail("FoldScaleAxis: some shapes are unknown; apply InferShape with input shapes first");
  return Folder(src).run(src);
}

} // namespace

void registerFoldScaleAxisPass() {
  PassRegistry::get().add(
      {.name = "FoldScaleAxis",
       .summary = "folds per-channel multiplies into the weights of a neighbouring conv2d",
       .optLevel = 3,
       .needs = {"shape"},
       .changesGraph = true,
       .run = foldScaleAxis});
}

} // namespace loupe
