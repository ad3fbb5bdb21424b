// LowerFunction: from a fused function's body graph to a scheduled loop statement.
#include "backend/LowerFunction.h"

#include "backend/llvm/HostTarget.h"

#include "backend/loop/FastMath.h"
#include "backend/loop/PartitionLoops.h"
#include "backend/loop/SerialSmall.h"
#include "core/Error.h"
#include "core/loop/Eval.h"

#include <algorithm>
#include <map>

namespace loupe::backend {

using namespace loop;

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
    std::vector<Shape> outShapes;
    std::vector<int> outTypes;
    for (uint32_t k = 0; k < n.numOutputs(); ++k) {
      outShapes.push_back(shapes->shapes[idx.entryId(nid, k)]);
      outTypes.push_back(static_cast<int>(types->ints[idx.entryId(nid, k)]));
    }
    std::vector<ComputeRef> res = n.op->lowering(n.parsed, in, outShapes, outTypes);
    if (res.size() != n.numOutputs())
      fail("internal: the lowering of ", n.op->name, " gave ", res.size(), " outputs for ",
           n.numOutputs());
    for (uint32_t k = 0; k < res.size(); ++k)
      value[{nid, k}] = res[k];
  }
  for (const std::string &a : f.argNames)
    out.inputs.push_back(byName.at(a));
  for (const auto &h : idx.heads)
    out.outputs.push_back(value.at({h.nodeId, h.index}));
  out.schedule = std::make_shared<Schedule>(out.outputs);
  out.fast = f.optLevel >= 3;
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
    out.body = loop::runSmallOnCaller(fastMath(partitionLoops(out.body)));
  return out;
}

std::vector<Tensor> evalLowered(const LoweredFunction &f, const std::vector<Tensor> &args) {
  if (args.size() != f.inputs.size())
    fail(f.name, " takes ", f.inputs.size(), " arguments, got ", args.size());
  Buffers buffers;
  for (size_t i = 0; i < args.size(); ++i) {
    const Compute &p = *f.inputs[i];
    if (static_cast<int64_t>(args[i].data.size()) != numElements(p.shape))
      fail(f.name, ": argument ", i, " (", p.name, ") has ", args[i].data.size(),
           " elements, expected ", numElements(p.shape));
    buffers[p.name] = Buffer{p.dtype, args[i].data};
  }
  for (size_t k = 0; k < f.outputs.size(); ++k)
    buffers[f.outputBuffers[k]] =
        Buffer{f.outputs[k]->dtype, std::vector<double>(numElements(f.outputs[k]->shape), 0.0)};
  run(f.body, buffers);
  std::vector<Tensor> out;
  for (size_t k = 0; k < f.outputs.size(); ++k) {
    Tensor t(f.outputs[k]->shape, f.outputs[k]->dtype);
    t.data = buffers.at(f.outputBuffers[k]).data;
    out.push_back(std::move(t));
  }
  return out;
}

std::string printLowered(const LoweredFunction &f) { return printStmt(f.body); }

} // namespace loupe::backend
