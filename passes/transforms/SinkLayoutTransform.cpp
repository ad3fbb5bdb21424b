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
// Concatenations of views along the channels move onto the blocked tensors as pools do.
#include "passes/Pass.h"

#include "core/Error.h"
#include "core/Layout.h"
#include "core/Rewrite.h"

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <tuple>

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
      "relu", "sigmoid", "tanh", "exp", "log", "sqrt", "negative", "clip", "copy", "leaky_relu",
      "elemwise_add", "elemwise_sub", "elemwise_mul", "elemwise_div", "broadcast_add",
      "broadcast_sub", "broadcast_mul", "broadcast_div", "broadcast_max", "broadcast_min",
      // A quantized network's requantization after its convolutions, and its quantization.
      "fixed_point_multiply", "cast", "round"};
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
  /// The channels the view presents when the blocked tensor has more (padded by AlterOpLayout;
  /// the view is then a split of the transform), else 0.
  int64_t channels = 0;
  int64_t padded = 0; ///< the channels of the blocked tensor, when `channels` is not 0
  /// Whether the padded channels of the blocked tensor hold zeros (so that a convolution can
  /// read them as the zero padding of its own input channels).
  bool zeroPad = false;
  uint32_t index = 0; ///< which output of the viewing node presents the view
};

// The node that makes `e`, looking through layout transforms.
const Node *producer(const NodeEntry &e) {
  const Node *n = e.node.get();
  while (!n->isVariable() && n->op->name == "__layout_transform__")
    n = n->inputs[0].node.get();
  return n;
}

// Whether `n` is a `pad` that fills with zeros (not with edge cells or a reflection).
bool padsWithZeros(const Node &n) {
  return !n.isVariable() && n.op->name == "pad" && n.parsed.getFloat("pad_value") == 0 &&
         n.parsed.getStr("pad_mode") == "constant";
}

// Whether `e` is a `pad` with zeros that adds `extra` elements at the end of axis `axis` (and
// nothing elsewhere but possibly the end of axis `other`).
bool zeroPadOf(const Node *n, int axis, int64_t extra, int other = -1) {
  if (!padsWithZeros(*n))
    return false;
  const auto &w = n->parsed.getPairs("pad_width");
  for (size_t d = 0; d < w.size(); ++d) {
    int64_t after = static_cast<int>(d) == axis ? extra : w[d][1];
    if (w[d][0] != 0 || w[d][1] != after ||
        (static_cast<int>(d) != axis && static_cast<int>(d) != other && w[d][1] != 0))
      return false;
  }
  return static_cast<size_t>(axis) < w.size();
}

// Whether the blocked convolution at `source` computes zeros in its channels from `channels`
// on: its weights' and bias's extra output channels are zero padding.
bool convPadsWithZeros(const NodeEntry &source, int64_t channels) {
  const Node &conv = *source.node;
  if (conv.isVariable() || conv.op->name != "_contrib_conv2d_NCHWc")
    return false;
  int64_t extra = conv.parsed.getInt("channels") - channels;
  if (extra <= 0 || !zeroPadOf(producer(conv.inputs[1]), 0, extra, 1))
    return false;
  return conv.inputs.size() < 3 || zeroPadOf(producer(conv.inputs[2]), 0, extra);
}

// Whether an op keeps zeros zero: f(0) = 0 for a unary op; for a binary one, a zero result where
// every operand (add, sub, max, min) or any operand (mul) is zero. (A padded channel of a
// finite computation; an overflow to infinity is not followed into the padding.)
bool keepsZeros(const Node &n, const std::vector<bool> &operandZero) {
  const std::string &op = n.op->name;
  bool all = std::all_of(operandZero.begin(), operandZero.end(), [](bool z) { return z; });
  bool any = std::any_of(operandZero.begin(), operandZero.end(), [](bool z) { return z; });
  if (op == "relu" || op == "leaky_relu" || op == "negative" || op == "tanh" || op == "sqrt" ||
      op == "copy" || op == "__mul_scalar__")
    return all;
  if (op == "__div_scalar__")
    return all && n.parsed.getFloat("scalar") != 0;
  if (op == "clip")
    return all && n.parsed.getFloat("a_min") <= 0 && n.parsed.getFloat("a_max") >= 0;
  if (op == "elemwise_add" || op == "elemwise_sub" || op == "broadcast_add" ||
      op == "broadcast_sub" || op == "broadcast_max" || op == "broadcast_min")
    return all;
  if (op == "elemwise_mul" || op == "broadcast_mul")
    return any;
  return false;
}

Graph sinkLayoutTransform(const Graph &src, const PassContext &ctx) {
  std::set<std::string> bound; // params bound at build time ("bound_params": a,b,c)
  {
    std::string names = ctx.get("bound_params", "");
    for (size_t at = 0; at < names.size();) {
      size_t end = std::min(names.find(',', at), names.size());
      bound.insert(names.substr(at, end - at));
      at = end + 1;
    }
  }
  const GraphAttr *shapeAttr = src.attr("shape");
  if (!shapeAttr)
    fail("SinkLayoutTransform: the graph has no shapes; apply InferShape first");
  const auto &shapes = shapeAttr->shapes;
  const IndexedGraph &idx = src.index();
  const OpDef &transform = *OpRegistry::get().find("__layout_transform__");
  const OpDef &pad = *OpRegistry::get().find("pad");
  const OpDef &split = *OpRegistry::get().find("split");
  std::map<const Node *, View> viewOf; // transforms from a blocked layout to its primal one
  // Zero-padded copies of entries converted to a layout: (entry, pad_width, layout) -> copy.
  std::map<std::tuple<const Node *, uint32_t, std::string, std::string>, NodeEntry> paddedCopies;
  // Operands converted to a layout: (entry, layout) -> the conversion.
  std::map<std::tuple<const Node *, uint32_t, std::string>, NodeEntry> converted;
  auto viewAt = [&](const NodeEntry &e) -> const View * {
    auto it = viewOf.find(e.node.get());
    return it != viewOf.end() && it->second.index == e.index ? &it->second : nullptr;
  };
  auto makeTransform = [&](const NodeEntry &e, const std::string &from, const std::string &to,
                           const std::string &name) {
    return NodeEntry{makeOpNode(transform, name, {{"src_layout", from}, {"dst_layout", to}}, {e}),
                     0, 0};
  };
  // The primal tensor of a view: the transform back, cut to the view's channels when padded.
  auto makeBack = [&](View view, const std::string &name) {
    NodeEntry back =
        makeTransform(view.source, view.blocked, view.primal, name + "_" + view.primal);
    if (view.channels != 0)
      back = {makeOpNode(split, name + "_channels",
                         {{"indices_or_sections", "(" + std::to_string(view.channels) + ",)"},
                          {"axis", "1"}},
                         {back}),
              0, 0};
    view.index = back.index;
    viewOf[back.node.get()] = std::move(view);
    return back;
  };
  return rewriteGraph(src, [&](uint32_t nid, const NodePtr &node) -> std::vector<NodeEntry> {
    if (node->isVariable())
      return {};
    const std::string &opName = node->op->name;
    if (opName == "__layout_transform__") {
      const std::string &from = node->parsed.getStr("src_layout"),
                        &to = node->parsed.getStr("dst_layout");
      // NCHW -> NCHW16c of a view of an NCHW16c tensor: the tensor itself.
      const View *v = viewAt(node->inputs[0]);
      if (v && v->channels == 0 && v->primal == from && v->blocked == to)
        return {v->source};
      // ... and of the view's channels padded with zeros again, when the padding holds zeros.
      const Node &in = *node->inputs[0].node;
      if (!v && !in.isVariable() && in.op->name == "pad")
        if (const View *pv = viewAt(in.inputs[0]); pv && pv->channels != 0 && pv->zeroPad &&
                                                   pv->primal == from && pv->blocked == to &&
                                                   zeroPadOf(&in, 1, pv->padded - pv->channels))
          return {pv->source};
      if (from != to && primalLayout(from) == to) // from a blocked layout to its primal one
        viewOf[node.get()] = {node->inputs[0], from, to};
      if (padsWithZeros(in))
        paddedCopies[{in.inputs[0].node.get(), in.inputs[0].index, in.parsed.raw("pad_width"),
                      to}] = {node, 0, 0};
      return {};
    }
    // A split that cuts a padded convolution's output back to its channels (AlterOpLayout's):
    // a view of the padded tensor.
    if (opName == "split") {
      const View *v = viewAt(node->inputs[0]);
      const auto &cut = node->parsed.getTuple("indices_or_sections");
      if (v && v->channels == 0 && v->primal == "NCHW" && node->parsed.getInt("axis") == 1 &&
          cut.size() == 1 && subAxesOf(v->blocked).size() == 1 &&
          subAxesOf(v->blocked)[0].name == 'c') {
        View view = *v;
        view.channels = cut[0];
        view.padded = shapes[idx.entryId(idx.nodes[nid].inputs[0])][1];
        view.zeroPad = convPadsWithZeros(view.source, cut[0]);
        viewOf[node.get()] = std::move(view);
      }
      return {};
    }
    // dense(flatten(view)) with a weight bound at build time: the dense reads the blocked tensor
    // flattened as it is, its weight's columns reordered the same way (and zero for padded
    // channels, whose values must then be zeros too) by nodes PrecomputePrune folds — one
    // pass over memory less per run.
    if (opName == "dense" && !node->inputs[0].node->isVariable() &&
        node->inputs[0].node->op->name == "flatten") {
      const Node &flat = *node->inputs[0].node;
      const View *v = viewAt(flat.inputs[0]);
      uint32_t flatId = idx.nodes[nid].inputs[0].nodeId;
      const Shape &in = shapes[idx.entryId(idx.nodes[flatId].inputs[0])];
      const Shape &w = shapes[idx.entryId(idx.nodes[nid].inputs[1])];
      const Node &weightNode = *node->inputs[1].node;
      if (!weightNode.isVariable() || !bound.count(weightNode.name) || !v ||
          (v->channels != 0 && !v->zeroPad) || v->primal != "NCHW" || in.size() != 4 ||
          w.size() != 2 || subAxesOf(v->blocked).size() != 1 ||
          subAxesOf(v->blocked)[0].name != 'c')
        return {};
      const OpDef &reshape = *OpRegistry::get().find("reshape");
      const std::string &base = weightNode.name;
      NodeEntry weight{makeOpNode(reshape, base + "_UCHW",
                                  {{"shape", shapeToTuple({w[0], in[1], in[2], in[3]})}},
                                  {node->inputs[1]}),
                       0, 0};
      int64_t channels = in[1];
      if (v->channels != 0) {
        weight = {makeOpNode(pad, base + "_channels_pad",
                             {{"pad_width", padAfterWidth({0, v->padded - v->channels, 0, 0})}},
                             {weight}),
                  0, 0};
        channels = v->padded;
      }
      weight = makeTransform(weight, "NCHW", v->blocked, base + "_" + v->blocked);
      weight = {makeOpNode(reshape, base + "_flat_" + v->blocked,
                           {{"shape", shapeToTuple({w[0], channels * in[2] * in[3]})}}, {weight}),
                0, 0};
      std::vector<NodeEntry> inputs = node->inputs;
      inputs[0] = {makeOpNode(*flat.op, flat.name, flat.attrs, {v->source}, flat.controlDeps), 0,
                   0};
      inputs[1] = weight;
      return {{makeOpNode(*node->op, node->name, node->attrs, std::move(inputs), node->controlDeps,
                          false),
               0, 0}};
    }
    // A concatenation of views along their channels, every one in the same blocked layout with
    // whole blocks of channels (none padded): the blocked tensors concatenated along their outer
    // channel axis, which concatenates the channels in order — an inception block's branches
    // stay blocked for the pool and the convolutions that read them.
    if (opName == "concatenate" && !node->inputs.empty()) {
      const View *first = viewAt(node->inputs[0]);
      int64_t axis = node->parsed.getInt("axis");
      if (!first || first->primal != "NCHW" || (axis != 1 && axis != -3) ||
          subAxesOf(first->blocked).size() != 1 || subAxesOf(first->blocked)[0].name != 'c')
        return {};
      // A view blocked by another factor (a branch whose convolution blocks its outputs by 8
      // beside ones by 16) is converted to the first's blocking when its channels fill whole
      // blocks of it: one transform between blocked layouts instead of every branch's back.
      const int64_t block = subAxesOf(first->blocked)[0].factor;
      std::vector<NodeEntry> sources;
      for (size_t k = 0; k < node->inputs.size(); ++k) {
        const View *v = viewAt(node->inputs[k]);
        const Shape &in = shapes[idx.entryId(idx.nodes[nid].inputs[k])];
        if (!v || v->channels != 0 || v->primal != first->primal || in.size() != 4 ||
            in[1] % block != 0 || subAxesOf(v->blocked).size() != 1 ||
            subAxesOf(v->blocked)[0].name != 'c')
          return {};
        sources.push_back(
            v->blocked == first->blocked
                ? v->source
                : makeTransform(v->source, v->blocked, first->blocked,
                                node->name + "_input" + std::to_string(k) + "_" + first->blocked));
      }
      NodePtr cat = makeOpNode(*node->op, node->name, node->attrs, std::move(sources),
                               node->controlDeps, false);
      View view = *first; // no channels cut (checked above), so only the source changes
      view.source = {cat, 0, 0};
      return {makeBack(std::move(view), node->name)};
    }
    // Pools work on NCHW<k>c as on NCHW (H and W stay axes 2 and 3): the pool moves onto the
    // blocked tensor with its layout attribute changed.
    if (opName == "max_pool2d" || opName == "avg_pool2d" || opName == "global_max_pool2d" ||
        opName == "global_avg_pool2d") {
      const View *v = viewAt(node->inputs[0]);
      if (node->parsed.getStr("layout") != "NCHW" || !v || v->primal != "NCHW" ||
          subAxesOf(v->blocked).size() != 1 || subAxesOf(v->blocked)[0].name != 'c')
        return {};
      View view = *v;
      AttrDict attrs = node->attrs;
      auto at = std::find_if(attrs.begin(), attrs.end(),
                             [](const auto &kv) { return kv.first == "layout"; });
      if (at == attrs.end())
        attrs.emplace_back("layout", view.blocked);
      else
        at->second = view.blocked;
      NodePtr pool =
          makeOpNode(*node->op, node->name, attrs, {view.source}, node->controlDeps, false);
      view.source = {pool, 0, 0};
      return {makeBack(std::move(view), node->name)};
    }
    if (!layoutAgnostic(*node->op) || node->numOutputs() != 1)
      return {};
    // The data input: a view whose shape is the op's output shape.
    const Shape &outShape = shapes[idx.entryId(nid, 0)];
    const View *data = nullptr;
    for (size_t i = 0; i < node->inputs.size() && !data; ++i)
      if (const View *v = viewAt(node->inputs[i]);
          v && shapes[idx.entryId(idx.nodes[nid].inputs[i])] == outShape)
        data = v;
    if (!data)
      return {};
    const std::string &primal = data->primal, &blocked = data->blocked;
    std::vector<LayoutAxis> subs = subAxesOf(blocked);
    std::string sub;
    for (const LayoutAxis &a : subs)
      sub += std::to_string(a.factor) + static_cast<char>(a.name);
    std::vector<NodeEntry> inputs;
    std::vector<bool> zero;
    for (size_t i = 0; i < node->inputs.size(); ++i) {
      const NodeEntry &e = node->inputs[i];
      if (const View *v = viewAt(e);
          v && v->blocked == blocked && v->primal == primal && v->channels == data->channels) {
        inputs.push_back(v->source);
        zero.push_back(v->zeroPad);
        continue;
      }
      const Shape &s = shapes[idx.entryId(idx.nodes[nid].inputs[i])];
      if (std::all_of(s.begin(), s.end(), [](int64_t d) { return d == 1; })) {
        inputs.push_back(e); // broadcasts against any layout
        zero.push_back(false);
        continue;
      }
      // An operand over the trailing axes of the primal layout that include every blocked
      // axis, at their full size, converts to the same suffix with the sub-axes appended (its
      // channels padded with zeros first when the view's are).
      if (s.size() > primal.size())
        return {};
      std::string suffix = primal.substr(primal.size() - s.size());
      for (const LayoutAxis &a : subs) {
        size_t at = suffix.find(static_cast<char>(a.name - 'a' + 'A'));
        size_t full = primal.size() - suffix.size() + at;
        if (at == std::string::npos || s[at] != outShape[full])
          return {};
      }
      NodeEntry operand = e;
      std::string layout = suffix + sub;
      if (data->channels != 0) {
        std::vector<int64_t> after(s.size(), 0);
        after[suffix.find('C')] = data->padded - data->channels;
        std::string width = padAfterWidth(after);
        // The same operand padded and converted before (a convolution's padded input that the
        // residual add reads too) is read from there.
        auto it = paddedCopies.find({e.node.get(), e.index, width, layout});
        if (it != paddedCopies.end()) {
          inputs.push_back(it->second);
          zero.push_back(true);
          continue;
        }
        operand = {makeOpNode(pad, e.node->name + "_channels_pad", {{"pad_width", width}}, {e}), 0,
                   0};
      }
      // One conversion per operand and layout, shared by every op that reads it (a per-channel
      // multiplier two requantizes read): PrecomputePrune names each cut after its entry.
      if (data->channels == 0) {
        NodeEntry &made = converted[{e.node.get(), e.index, layout}];
        if (!made.node)
          made = makeTransform(operand, suffix, layout, e.node->name + "_" + layout);
        inputs.push_back(made);
      } else {
        inputs.push_back(makeTransform(operand, suffix, layout, e.node->name + "_" + layout));
      }
      zero.push_back(data->channels != 0);
    }
    NodePtr blockedOp =
        makeOpNode(*node->op, node->name, node->attrs, inputs, node->controlDeps, false);
    View view = *data;
    view.source = NodeEntry{blockedOp, 0, 0};
    view.zeroPad = data->channels != 0 && keepsZeros(*node, zero);
    return {makeBack(std::move(view), node->name)};
  });
}

} // namespace

const PassInfo &sinkLayoutTransformPass() {
  static const PassInfo info{.name = "SinkLayoutTransform",
                             .summary =
                                 "runs elementwise and broadcast ops in the blocked layout of the "
                                 "convolution feeding them (opt level 3)",
                             .optLevel = 3,
                             .needs = {"shape"},
                             .changesGraph = true,
                             .run = sinkLayoutTransform};
  return info;
}

} // namespace loupe
