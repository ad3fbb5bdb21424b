// LowerFunction: from a fused function's body graph to a scheduled loop statement.
#include "backend/LowerFunction.h"

#include "backend/llvm/HostTarget.h"

#include "backend/loop/FastMath.h"
#include "backend/loop/GuardVersions.h"
#include "backend/loop/PartitionLoops.h"
#include "backend/loop/SerialSmall.h"
#include "core/DType.h"
#include "core/Error.h"
#include "core/loop/Eval.h"
#include "core/loop/SizeVars.h"

#include <algorithm>
#include <functional>
#include <map>
#include <set>

namespace loupe::backend {

using namespace loop;

namespace {

// `t` converted to `dtype` elementwise, a stage named after it with `suffix`.
ComputeRef castStage(const ComputeRef &t, int dtype, const std::string &suffix) {
  return compute(
      t->shape, dtype, [&](const std::vector<Expr> &i) { return cast(dtype, read(t, i)); },
      t->name + suffix, "elemwise");
}

// The node's lowering, but a node with a bfloat16 output computes in float32 and rounds its
// outputs once, as the reference interpreter computes an op in double and rounds its outputs:
// its bfloat16 operands are widened (exactly) and every stage of its rule is float32. Stages in
// bfloat16 would round each product, partial sum and intermediate (a 37-term sum lost 1.4%, a
// convolution's bias add rounded twice); accumulating in float32 is what the hardware's
// vdpbf16ps and the frameworks do.
std::vector<ComputeRef> computedInFloat32(const Node &n, std::vector<ComputeRef> in,
                                          const std::vector<Shape> &outShapes,
                                          std::vector<int> outTypes) {
  if (std::find(outTypes.begin(), outTypes.end(), kBFloat16) == outTypes.end())
    return n.op->lowering(n.parsed, in, outShapes, outTypes);
  // A convolution with its weights in pairs of input channels (OIHW<o>o2i), or a packed dense
  // with them in pairs of steps of k (NC<n>n2c), reads its bfloat16 operands as they are: dot2
  // multiplies the pairs into float32 sums (vdpbf16ps).
  bool pairs =
      (n.op->name == "_contrib_conv2d_NCHWc" &&
       n.parsed.getStr("kernel_layout").ends_with("o2i")) ||
      (n.op->name == "_contrib_dense_pack" && n.parsed.getStr("weight_layout").ends_with("n2c"));
  for (ComputeRef &t : in)
    if (t->dtype == kBFloat16 && !pairs)
      t = castStage(t, kFloat32, "_f32");
  std::vector<int> wide = outTypes;
  for (int &dt : wide)
    dt = widenedDType(dt);
  std::vector<ComputeRef> res = n.op->lowering(n.parsed, in, outShapes, wide);
  for (size_t k = 0; k < res.size() && k < outTypes.size(); ++k)
    if (outTypes[k] == kBFloat16 && res[k]->dtype != kBFloat16)
      res[k] = castStage(res[k], kBFloat16, "_bf16");
  return res;
}

} // namespace

LoweredFunction lowerFunction(const FusedFunction &f, const TunedPoint *tuned) {
  const Graph &g = f.body;
  const IndexedGraph &idx = g.index();
  const GraphAttr *shapes = g.attr("shape"), *types = g.attr("dtype");
  if (!shapes || !types)
    fail("lower ", f.name, ": the function body has no shapes or dtypes");
  LoweredFunction out;
  out.name = f.name;
  std::map<std::pair<uint32_t, uint32_t>, ComputeRef> value;
  std::map<std::string, ComputeRef> byName;
  bool eightBit = false; // some node makes int8 or uint8 values
  for (uint32_t nid = 0; nid < idx.numNodes(); ++nid) {
    const Node &n = *idx.nodes[nid].node;
    if (n.isVariable()) {
      uint32_t e = idx.entryId(nid, 0);
      ComputeRef p = placeholder(n.name, shapes->shapes[e], static_cast<int>(types->ints[e]));
      value[{nid, 0}] = p;
      byName[n.name] = p;
      continue;
    }
    if (!n.op->lowering)
      fail("operator ", n.name, " (", n.op->name, ") has no lowering to loops yet");
    std::vector<ComputeRef> in;
    for (const auto &e : idx.nodes[nid].inputs)
      in.push_back(value.at({e.nodeId, e.index}));
    // A generic kernel is made of rules that take symbolic shapes; another rule would read a
    // symbolic dimension's size as 0. A rule that takes a symbolic batch takes only that.
    bool symbolicIn = false, batchOnly = true;
    for (const auto &e : idx.nodes[nid].inputs) {
      const Shape &s = shapes->shapes[idx.entryId(e)];
      symbolicIn = symbolicIn || s.isSymbolic();
      for (size_t d = 1; s.isSymbolic() && d < s.size(); ++d)
        batchOnly = batchOnly && s.dim(d).isConstant();
    }
    if (symbolicIn && !n.op->symbolicLowering && !(n.op->symbolicBatchLowering && batchOnly))
      fail("lower ", f.name, ": the rule of ", n.name, " (", n.op->name,
           ") computes with sizes, and its input's shape is symbolic",
           n.op->symbolicBatchLowering ? " beyond its leading axis" : "");
    std::vector<Shape> outShapes;
    std::vector<int> outTypes;
    for (uint32_t k = 0; k < n.numOutputs(); ++k) {
      outShapes.push_back(shapes->shapes[idx.entryId(nid, k)]);
      outTypes.push_back(static_cast<int>(types->ints[idx.entryId(nid, k)]));
    }
    for (int t : outTypes)
      eightBit = eightBit || t == kInt8 || t == kUint8;
    std::vector<ComputeRef> res = computedInFloat32(n, in, outShapes, outTypes);
    if (res.size() != n.numOutputs())
      fail("internal: the lowering of ", n.op->name, " gave ", res.size(), " outputs for ",
           n.numOutputs());
    for (uint32_t k = 0; k < res.size(); ++k)
      value[{nid, k}] = res[k];
    // Every stage the rule made (its results and what they read that no earlier node made)
    // came from this node.
    for (const ComputeRef &t : topoOrder(res))
      if (!t->placeholder && t->node.empty())
        t->node = n.name;
    out.nodes.push_back(n.name);
  }
  for (const std::string &a : f.argNames)
    out.inputs.push_back(byName.at(a));
  for (const auto &h : idx.heads)
    out.outputs.push_back(value.at({h.nodeId, h.index}));
  out.schedule = std::make_shared<Schedule>(out.outputs);
  out.fast = f.optLevel >= 3;
  out.contract = out.fast && !eightBit;
  installTargetInfo();
  out.schedule->cpu = targetCpuOf(f.target);
  if (tuned && out.fast) {
    out.schedule->config = std::make_shared<const Config>(tuned->config);
    out.schedule->configSource = tuned->source;
  }
  if (out.fast)
    applyFastSchedule(*out.schedule);
  else
    applyDefaultSchedule(*out.schedule);
  if (out.schedule->config) {
    // The knobs are declared as the schedule is applied, so a point is checked afterwards; one
    // outside the space (a hand-edited or stale record) is refused, never lowered half-right.
    const ConfigSpace &space = out.schedule->space;
    for (const auto &[name, v] : *out.schedule->config) {
      const Knob *k = space.find(name);
      if (!k)
        fail("lower ", f.name, ": its schedule has no knob ", name);
      if (std::find(k->candidates.begin(), k->candidates.end(), v) == k->candidates.end())
        fail("lower ", f.name, ": knob ", name, " has no candidate ", v);
    }
    Config full = space.defaultConfig();
    for (const auto &[name, v] : *out.schedule->config)
      full[name] = v;
    if (!space.contains(full))
      fail("lower ", f.name, ": ", configText(full), " exceeds a limit of its space");
  }
  for (const ComputeRef &o : out.outputs)
    out.outputBuffers.push_back(out.schedule->stage(o).buffer);
  out.body = lower(*out.schedule);
  if (out.fast)
    out.body = loop::runSmallOnCaller(
        fastMath(versionSymbolicGuards(partitionLoops(simplifyIndices(out.body)))));
  // A body of symbolic shapes lowers to a generic kernel: its loops and indices read the size
  // symbols, bound once at entry from its last argument.
  out.sizeSymbols = sizeSymbolsOf(out.body);
  if (!out.sizeSymbols.empty()) {
    auto count = static_cast<int64_t>(out.sizeSymbols.size());
    out.inputs.push_back(placeholder(kSizesBuffer, Shape{count}, kInt64));
    for (int64_t k = count; k-- > 0;)
      out.body = letStmt(sizeVar(out.sizeSymbols[static_cast<size_t>(k)]),
                         load(kSizesBuffer, kInt64, intImm(k)), out.body);
  }
  out.bufferNodes = nodesByBuffer(*out.schedule, out.nodes);
  return out;
}

std::vector<Tensor> evalLowered(const LoweredFunction &f, const std::vector<Tensor> &args) {
  if (args.size() != f.inputs.size())
    fail(f.name, " takes ", f.inputs.size(), " arguments, got ", args.size());
  // A generic kernel's shapes at the sizes its last argument gives.
  SymBindings sizes;
  if (!f.sizeSymbols.empty())
    for (size_t k = 0; k < f.sizeSymbols.size() && k < args.back().data.size(); ++k)
      sizes[f.sizeSymbols[k]] = static_cast<int64_t>(args.back().data[k]);
  auto shapeOf = [&](const Compute &c) { return sizes.empty() ? c.shape : c.shape.bound(sizes); };
  Buffers buffers;
  for (size_t i = 0; i < args.size(); ++i) {
    const Compute &p = *f.inputs[i];
    int64_t count = numElements(shapeOf(p));
    if (static_cast<int64_t>(args[i].data.size()) != count)
      fail(f.name, ": argument ", i, " (", p.name, ") has ", args[i].data.size(),
           " elements, expected ", count);
    buffers[p.name] = Buffer{p.dtype, args[i].data};
  }
  for (size_t k = 0; k < f.outputs.size(); ++k)
    buffers[f.outputBuffers[k]] =
        Buffer{f.outputs[k]->dtype, std::vector<double>(numElements(shapeOf(*f.outputs[k])), 0.0)};
  run(f.body, buffers);
  std::vector<Tensor> out;
  for (size_t k = 0; k < f.outputs.size(); ++k) {
    Tensor t(shapeOf(*f.outputs[k]), f.outputs[k]->dtype);
    t.data = buffers.at(f.outputBuffers[k]).data;
    out.push_back(std::move(t));
  }
  return out;
}

std::string printLowered(const LoweredFunction &f) { return printStmt(f.body); }

LoweredListing listLowered(const LoweredFunction &f) {
  LoweredListing l;
  std::string text = printStmt(f.body, &l.lineOf);
  for (size_t at = 0; at < text.size();) {
    size_t end = text.find('\n', at);
    l.lines.push_back(text.substr(at, end - at));
    at = end == std::string::npos ? text.size() : end + 1;
  }
  l.nodes.resize(l.lines.size());
  l.computes.resize(l.lines.size(), false);
  std::map<std::string, size_t> rank;
  for (size_t i = 0; i < f.nodes.size(); ++i)
    rank.emplace(f.nodes[i], i);
  // Each statement's nodes are those of the stores inside it, gathered bottom-up.
  l.parent.resize(l.lines.size(), 0);
  std::function<std::set<std::string>(const Stmt &, int)> walk = [&](const Stmt &s, int up) {
    std::set<std::string> names;
    auto line = l.lineOf.find(s.get());
    bool own = s->kind != StmtKind::Seq && line != l.lineOf.end();
    if (own)
      l.parent[static_cast<size_t>(line->second - 1)] = up;
    if (s->kind == StmtKind::Store || s->kind == StmtKind::Produce) {
      auto it = f.bufferNodes.find(s->name);
      if (it != f.bufferNodes.end())
        names.insert(it->second.begin(), it->second.end());
    }
    for (const Stmt &c : s->body)
      if (c) {
        std::set<std::string> inner = walk(c, own ? line->second : up);
        names.insert(inner.begin(), inner.end());
      }
    if (own) {
      size_t k = static_cast<size_t>(line->second - 1);
      std::vector<std::string> sorted(names.begin(), names.end());
      std::sort(sorted.begin(), sorted.end(), [&](const std::string &a, const std::string &b) {
        return rank.count(a) && rank.count(b) ? rank[a] < rank[b] : a < b;
      });
      l.nodes[k] = std::move(sorted);
      l.computes[k] = s->kind == StmtKind::Store || s->kind == StmtKind::Produce;
    }
    return names;
  };
  if (f.body)
    walk(f.body, 0);
  return l;
}

} // namespace loupe::backend
