// Quantize: conv2d and dense between calibrated quantize/dequantize pairs (relay.quantize's
// annotate, calibrate and realize, realized as QDQ for FakeQuantizationToInteger).
#include "passes/Quantize.h"

#include "core/DType.h"
#include "core/Error.h"
#include "core/Rewrite.h"
#include "core/ops/OpHelpers.h"
#include "passes/Layerwise.h"
#include "passes/PatternUtil.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace loupe {

namespace {

using Entry = IndexedGraph::Entry;
using ops::mk;

// uint8 steps that hold [lo, hi] stretched to include 0 (DynamicQuantizeLinear's rule).
std::pair<double, double> activationParams(double lo, double hi) {
  lo = std::min(0.0, std::isfinite(lo) ? lo : 0.0);
  hi = std::max(0.0, std::isfinite(hi) ? hi : 0.0);
  double scale = static_cast<float>((hi - lo) / 255);
  if (!(scale > 0))
    scale = 1; // a value that was 0 throughout: any scale holds it
  double zero = std::clamp(std::nearbyint(-lo / scale), 0.0, 255.0);
  return {scale, zero + 0.0}; // + 0.0: -0 (from -lo with lo = 0) prints as 0
}

Tensor oneValue(double v, int dtype) {
  Tensor t({1}, dtype);
  t.data[0] = v;
  return t;
}

struct Target {
  uint32_t node;      ///< the conv2d or dense
  Entry data, weight; ///< its inputs 0 and 1
  Entry output;       ///< what gets the output pair: the op, or its only relu/clip reader
};

} // namespace

Graph quantizeGraph(const Graph &src, const ValueSource &params,
                    const std::vector<std::map<std::string, Tensor>> &samples,
                    const QuantizeOptions &options, QuantizeReport *report) {
  if (samples.empty())
    fail("quantize: calibration needs at least one sample");
  auto valuesFor = [&](const std::map<std::string, Tensor> &sample) -> ValueSource {
    return [&, sample](const std::string &name) -> std::optional<Tensor> {
      if (auto it = sample.find(name); it != sample.end())
        return it->second;
      return params(name);
    };
  };
  Graph g = typedFor(src, valuesFor(samples.front()));
  const IndexedGraph &idx = g.index();
  for (const std::string &name : options.skip)
    if (idx.findByName(name) < 0)
      fail("quantize: skip names no node '", name, "'");
  // Annotate: the conv2d and dense nodes whose weight is a bound param.
  PatternView v(g, nullptr);
  std::vector<Target> targets;
  QuantizeReport r;
  for (uint32_t nid = 0; nid < idx.numNodes(); ++nid) {
    const Node &n = *idx.nodes[nid].node;
    if (n.isVariable() || (n.op->name != "conv2d" && n.op->name != "dense"))
      continue;
    Entry w = idx.nodes[nid].inputs[1];
    const Node &wn = *idx.nodes[w.nodeId].node;
    if (options.skip.count(n.name) || !wn.isVariable() || !params(wn.name) ||
        (n.op->name == "conv2d" && n.parsed.getStr("layout") != "NCHW")) {
      r.kept.push_back(n.name);
      continue;
    }
    Target t{nid, idx.nodes[nid].inputs[0], w, Entry{nid, 0, 0}};
    if (std::optional<Entry> reader = v.onlyReader(t.output);
        reader && v.is(*reader, {"relu", "clip"}))
      t.output = *reader;
    targets.push_back(t);
  }
  if (options.skipFirstLast && !targets.empty()) {
    r.kept.push_back(idx.nodes[targets.front().node].node->name);
    if (targets.size() > 1)
      r.kept.push_back(idx.nodes[targets.back().node].node->name);
    targets.erase(targets.begin());
    if (!targets.empty())
      targets.pop_back();
  }
  if (targets.empty())
    fail("quantize: the graph has no conv2d or dense with a bound weight to quantize");
  // Calibrate: the range of every value a pair will quantize, over the samples.
  std::map<uint32_t, MagnitudeHistogram> ranges; // by entry id
  for (const Target &t : targets)
    for (const Entry &e : {t.data, t.output})
      ranges[idx.entryId(e)];
  for (const auto &sample : samples) {
    ValueSource values = valuesFor(sample);
    for (auto &[eid, range] : ranges) // graph inputs are not observed: read them here
      for (uint32_t nid : idx.argNodes)
        if (idx.entryId(nid, 0) == eid)
          if (std::optional<Tensor> t = values(idx.nodes[nid].node->name))
            range.add(*t);
    InterpretOptions o;
    o.observe = [&](uint32_t nid, const std::vector<const Tensor *> &outs) {
      for (uint32_t k = 0; k < outs.size(); ++k)
        if (auto it = ranges.find(idx.entryId(nid, k)); it != ranges.end())
          it->second.add(*outs[k]);
    };
    interpretFrom(g, values, o);
  }
  // Realize: the pairs, as const-parameterised qnn ops.
  std::map<uint32_t, const Target *> byNode, byOutput;
  for (const Target &t : targets) {
    byNode[t.node] = &t;
    byOutput[t.output.nodeId] = &t;
    r.quantized.push_back(idx.nodes[t.node].node->name);
  }
  std::set<uint32_t> outputs; // entries that get an output pair (a next layer reads them so)
  for (const Target &t : targets)
    outputs.insert(idx.entryId(t.output));
  auto pair = [&](const NodeEntry &x, const Tensor &scale, const Tensor &zero, int axis,
                  const std::string &name) {
    AttrDict qa = {{"axis", std::to_string(axis)},
                   {"out_dtype", std::string(dtypeName(zero.dtype))}};
    NodeEntry s{constantNode(scale, name + "_scale"), 0, 0},
        z{constantNode(zero, name + "_zero_point"), 0, 0};
    NodeEntry q = mk("qnn.quantize", name + "_quantize", {x, s, z}, qa);
    return mk("qnn.dequantize", name + "_dequantize", {q, s, z}, {{"axis", std::to_string(axis)}});
  };
  auto activationPair = [&](const NodeEntry &x, const Entry &e, const std::string &name) {
    auto [lo, hi] = calibratedRange(ranges.at(idx.entryId(e)), options.method, options.percentile);
    auto [scale, zero] = activationParams(lo, hi);
    return pair(x, oneValue(scale, kFloat32), oneValue(zero, kUint8), 1, name);
  };
  Graph out = rewritePatterns(
      g,
      [&](uint32_t nid, const NodePtr &node, const RewrittenEntry &now) -> std::vector<NodeEntry> {
        std::optional<NodeEntry> y;
        if (auto t = byNode.find(nid); t != byNode.end()) {
          const Target &tg = *t->second;
          std::vector<NodeEntry> in;
          for (size_t k = 0; k < node->inputs.size(); ++k)
            in.push_back(node->inputs[k]);
          // The data: its own pair, unless it is a quantized layer's output already.
          if (!outputs.count(idx.entryId(tg.data)))
            in[0] = activationPair(in[0], tg.data, node->name + "_data");
          // The weight: int8, symmetric, per output channel (axis 0) or per tensor.
          Tensor w = *params(idx.nodes[tg.weight.nodeId].node->name);
          int64_t channels = options.perChannel ? w.shape[0] : 1;
          int64_t per = w.size() / w.shape[0];
          Tensor scale({channels}, kFloat32), zero({channels}, kInt8);
          for (int64_t c = 0; c < w.shape[0]; ++c) {
            double m = 0;
            for (int64_t i = c * per; i < (c + 1) * per; ++i)
              m = std::max(m, std::fabs(w.data[i]));
            int64_t k = options.perChannel ? c : 0;
            scale.data[k] =
                std::max(scale.data[k], static_cast<double>(static_cast<float>(m / 127)));
          }
          for (double &s : scale.data)
            if (!(s > 0))
              s = 1;
          in[1] = pair(in[1], scale, zero, 0, node->name + "_weight");
          y = NodeEntry{makeOpNode(*node->op, node->name, node->attrs, in), 0, 0};
        }
        auto o = byOutput.find(nid);
        if (o == byOutput.end())
          return y ? std::vector<NodeEntry>{*y} : std::vector<NodeEntry>{};
        NodeEntry value = y ? *y : NodeEntry{node, 0, 0};
        return {activationPair(value, o->second->output, node->name + "_output")};
      });
  if (report)
    *report = r;
  return out;
}

} // namespace loupe
