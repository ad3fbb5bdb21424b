// Interpreter: runs nodes in id order, each through its op's reference kernel.
#include "core/Interpreter.h"

#include "core/Error.h"
#include "core/FusedModule.h"
#include "core/Interrupt.h"
#include "core/Memory.h"

#include <algorithm>

namespace loupe {

namespace {

// A tvm_op runs its fused function's body, with the arguments bound to the placeholders
// (reshaped to the placeholder's shape, which is 1-D for flatten_data functions). An argument
// with `last[i]` set is read by nothing after this call, so it is moved in rather than copied.
std::vector<Tensor> callFused(const Graph &g, const Node &n, const std::vector<Tensor *> &args,
                              const std::vector<bool> &last) {
  const GraphAttr *m = g.attr("module");
  if (!m || !m->opaque)
    fail("operator ", n.name, " (tvm_op) needs the graph's 'module' attribute");
  auto module = std::static_pointer_cast<const FusedModule>(m->opaque);
  const std::string &fname = n.parsed.getStr("func_name");
  auto it = module->functions.find(fname);
  if (it == module->functions.end())
    fail("operator ", n.name, " (tvm_op): the module has no function ", fname);
  const FusedFunction &f = *it->second;
  if (args.size() != f.argNames.size())
    fail("operator ", n.name, " (tvm_op): ", fname, " takes ", f.argNames.size(),
         " arguments, got ", args.size());
  // Each argument is copied (reshaped) when the body reaches its placeholder, not before.
  const IndexedGraph &body = f.body.index();
  return interpretFrom(f.body, [&](const std::string &name) -> std::optional<Tensor> {
    for (size_t i = 0; i < args.size(); ++i)
      if (f.argNames[i] == name) {
        Tensor t = last[i] ? std::move(*args[i]) : *args[i];
        t.shape = f.body.attr("shape")->shapes[body.entryId(body.findByName(name), 0)];
        return t;
      }
    return std::nullopt;
  });
}

} // namespace

std::vector<Tensor> interpret(const Graph &g, const std::map<std::string, Tensor> &inputs) {
  return interpret(g, inputs, NodeObserver());
}

std::vector<Tensor> interpret(const Graph &g, const std::map<std::string, Tensor> &inputs,
                              const NodeObserver &observe) {
  return interpretFrom(g,
                       [&](const std::string &name) -> std::optional<Tensor> {
                         auto it = inputs.find(name);
                         return it == inputs.end() ? std::nullopt
                                                   : std::optional<Tensor>(it->second);
                       },
                       {observe, OutputSink(), false});
}

std::vector<Tensor> interpretFrom(const Graph &g, const ValueSource &source,
                                  const InterpretOptions &options) {
  const NodeObserver &observe = options.observe;
  const OutputSink &sink = options.sink;
  const GraphAttr *shapes = g.attr("shape");
  const GraphAttr *dtypes = g.attr("dtype");
  if (!shapes || !dtypes)
    fail("the reference interpreter needs the 'shape' and 'dtype' attributes: apply InferShape "
         "and InferType first");
  const IndexedGraph &idx = g.index();
  if (shapes->shapes.size() != idx.numEntries() || dtypes->ints.size() != idx.numEntries())
    fail("the 'shape'/'dtype' attributes do not match this graph's entries");
  std::vector<Tensor> values(idx.numEntries());
  // The last node that reads each entry, so that a value is freed once nothing needs it (a
  // network's weights pass through several ops while PrecomputePrune's graph is evaluated).
  std::vector<int64_t> lastUse(idx.numEntries(), -1);
  for (uint32_t nid = 0; nid < idx.numNodes(); ++nid)
    for (const auto &e : idx.nodes[nid].inputs)
      lastUse[idx.entryId(e)] = nid;
  // Outputs are kept for the result; with a sink, each leaves once read for the last time (or
  // made, when nothing reads it).
  std::vector<std::vector<size_t>> headsOf(idx.numEntries());
  for (size_t k = 0; k < idx.heads.size(); ++k) {
    uint32_t e = idx.entryId(idx.heads[k]);
    headsOf[e].push_back(k);
    lastUse[e] = sink ? std::max<int64_t>(lastUse[e], idx.heads[k].nodeId) : idx.numNodes();
  }
  std::vector<bool> delivered(idx.numEntries(), false);
  auto deliver = [&](uint32_t e, uint32_t nid) {
    if (!sink || headsOf[e].empty() || lastUse[e] != nid || delivered[e])
      return;
    delivered[e] = true;
    for (size_t i = 0; i < headsOf[e].size(); ++i)
      sink(headsOf[e][i], i + 1 < headsOf[e].size() ? values[e] : std::move(values[e]));
    values[e] = Tensor();
  };
  // The most it holds at once (each value a double an element, from the node that makes it to
  // its last reader), checked before the first value is made.
  {
    std::vector<double> freed(idx.numNodes() + 1, 0.0);
    double live = 0, peak = 0;
    for (uint32_t nid = 0; nid < idx.numNodes(); ++nid) {
      for (uint32_t k = 0; k < idx.nodes[nid].node->numOutputs(); ++k) {
        uint32_t e = idx.entryId(nid, k);
        double bytes = static_cast<double>(checkedNumElements(shapes->shapes[e])) * 8;
        live += bytes;
        freed[lastUse[e] < 0 ? nid : static_cast<size_t>(lastUse[e])] += bytes;
      }
      peak = std::max(peak, live);
      live -= freed[nid];
    }
    requireMemory("the reference interpreter", peak, "the values it holds at once");
  }
  // A variable's value from the source, checked and rounded to its dtype (with askPerReader,
  // for each node that reads it).
  auto variableValue = [&](uint32_t nid) {
    const Node &n = *idx.nodes[nid].node;
    std::optional<Tensor> given = source(n.name);
    if (!given)
      fail("no value given for variable '", n.name, "'");
    uint32_t e = idx.entryId(nid, 0);
    if (given->shape != shapes->shapes[e])
      fail("variable '", n.name, "' has shape ", shapeToList(shapes->shapes[e]),
           " but the value given has shape ", shapeToList(given->shape));
    given->dtype = static_cast<int>(dtypes->ints[e]);
    roundAllToDType(given->data, given->dtype);
    return std::move(*given);
  };
  std::vector<bool> onDemand(idx.numEntries(), false);
  for (uint32_t nid = 0; nid < idx.numNodes(); ++nid) {
    checkInterrupt();
    const auto &in = idx.nodes[nid];
    const Node &n = *in.node;
    if (n.isVariable()) {
      uint32_t e = idx.entryId(nid, 0);
      if (options.askPerReader && lastUse[e] >= 0 && headsOf[e].empty()) {
        onDemand[e] = true; // asked for by each reader
        continue;
      }
      values[e] = variableValue(nid);
      deliver(e, nid);
      continue;
    }
    for (const auto &e : in.inputs)
      if (uint32_t id = idx.entryId(e); onDemand[id] && !values[id].size())
        values[id] = variableValue(e.nodeId);
    std::vector<const Tensor *> args;
    for (const auto &e : in.inputs)
      args.push_back(&values[idx.entryId(e)]);
    if (n.op->name == "tvm_op") {
      // An argument's value is moved into the call when this is its last reader and it is not
      // passed twice (a network's weights are then never copied by the check).
      std::vector<Tensor *> own;
      std::vector<bool> last;
      for (const auto &e : in.inputs) {
        uint32_t id = idx.entryId(e);
        own.push_back(&values[id]);
        last.push_back((lastUse[id] == nid || onDemand[id]) &&
                       std::count_if(in.inputs.begin(), in.inputs.end(),
                                     [&](const auto &o) { return idx.entryId(o) == id; }) == 1);
      }
      auto outs = callFused(g, n, own, last);
      for (uint32_t k = 0; k < n.numOutputs(); ++k)
        values[idx.entryId(nid, k)] = std::move(outs.at(k));
    } else {
      if (!n.op->compute)
        fail("operator ", n.name, " (", n.op->name, ") has no reference kernel");
      std::vector<Tensor> outs;
      outs.reserve(n.numOutputs());
      for (uint32_t k = 0; k < n.numOutputs(); ++k) {
        uint32_t e = idx.entryId(nid, k);
        if (!shapeKnown(shapes->shapes[e]) || dtypes->ints[e] < 0)
          fail("operator ", n.name, " (", n.op->name, "): output ", k,
               " has an unknown shape or dtype");
        outs.emplace_back(shapes->shapes[e], static_cast<int>(dtypes->ints[e]));
      }
      n.op->compute(n.parsed, args, outs);
      for (uint32_t k = 0; k < n.numOutputs(); ++k) {
        roundAllToDType(outs[k].data, outs[k].dtype);
        values[idx.entryId(nid, k)] = std::move(outs[k]);
      }
    }
    if (observe) {
      std::vector<const Tensor *> made;
      for (uint32_t k = 0; k < n.numOutputs(); ++k)
        made.push_back(&values[idx.entryId(nid, k)]);
      observe(nid, made);
    }
    for (uint32_t k = 0; k < n.numOutputs(); ++k)
      deliver(idx.entryId(nid, k), nid);
    for (const auto &e : in.inputs)
      deliver(idx.entryId(e), nid);
    // (A deploy graph's tvm_op inputs are freed as an op's are: a network's activations need
    // not all be held at once.)
    for (const auto &e : in.inputs)
      if (lastUse[idx.entryId(e)] == nid || onDemand[idx.entryId(e)])
        values[idx.entryId(e)] = Tensor();
  }
  // Heads are moved out, except an entry that is a head twice: it is copied but once.
  std::vector<Tensor> result;
  std::vector<int> remaining(idx.numEntries(), 0);
  for (const auto &h : idx.heads)
    ++remaining[idx.entryId(h)];
  for (const auto &h : idx.heads) {
    uint32_t e = idx.entryId(h);
    result.push_back(--remaining[e] == 0 ? std::move(values[e]) : values[e]);
  }
  return result;
}

} // namespace loupe
