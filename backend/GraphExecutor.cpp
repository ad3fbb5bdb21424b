// GraphExecutor: storage from PlanMemory, inputs in, compiled kernels in node order.
#include "backend/GraphExecutor.h"

#include "backend/Build.h"
#include "core/DType.h"
#include "core/Error.h"

#include <chrono>
#include <cstddef>
#include <cstring>

namespace loupe::backend {

namespace {

const GraphAttr &need(const Graph &g, const char *key) {
  const GraphAttr *a = g.attr(key);
  if (!a)
    fail("the graph has no '", key, "' attribute; run :build first");
  return *a;
}

void toBuffer(const Tensor &t, int dtype, void *dst) {
  for (size_t i = 0; i < t.data.size(); ++i) {
    if (dtype == kFloat32)
      static_cast<float *>(dst)[i] = static_cast<float>(t.data[i]);
    else if (dtype == kFloat64)
      static_cast<double *>(dst)[i] = t.data[i];
    else
      fail("inputs of dtype ", dtypeName(dtype), " are not supported by the executor yet");
  }
}

Tensor fromBuffer(const void *src, const Shape &shape, int dtype) {
  Tensor t(shape, dtype);
  for (size_t i = 0; i < t.data.size(); ++i)
    t.data[i] = dtype == kFloat32 ? static_cast<const float *>(src)[i]
                                  : static_cast<const double *>(src)[i];
  return t;
}

} // namespace

std::vector<StorageSlot> storageSlots(const Graph &g) {
  const IndexedGraph &idx = g.index();
  const auto &sid = need(g, "storage_id").ints;
  const auto &shapes = need(g, "shape").shapes;
  const auto &dtypes = need(g, "dtype").ints;
  std::map<int64_t, StorageSlot> slots;
  for (uint32_t nid = 0; nid < idx.numNodes(); ++nid) {
    const Node &n = *idx.nodes[nid].node;
    for (uint32_t k = 0; k < n.numOutputs(); ++k) {
      uint32_t e = idx.entryId(nid, k);
      StorageSlot &s = slots[sid[e]];
      s.id = sid[e];
      s.dtype = static_cast<int>(dtypes[e]);
      s.bytes = std::max(s.bytes, numElements(shapes[e]) * dtypeBytes(s.dtype));
      s.entries.push_back(e);
      s.names.push_back(n.numOutputs() > 1 ? n.name + "." + std::to_string(k) : n.name);
      if (s.entries.size() == 1)
        s.firstUse = nid;
      s.lastUse = std::max(s.lastUse, nid);
    }
    for (const auto &in : idx.nodes[nid].inputs) {
      StorageSlot &s = slots[sid[idx.entryId(in)]];
      s.lastUse = std::max(s.lastUse, nid);
    }
  }
  for (const auto &h : idx.heads) // outputs live to the end
    slots[sid[idx.entryId(h)]].lastUse = idx.numNodes() - 1;
  std::vector<StorageSlot> v;
  for (auto &[id, s] : slots)
    v.push_back(std::move(s));
  return v;
}

RunResult runDeployGraph(const Graph &g, const std::map<std::string, Tensor> &inputs) {
  auto lib = builtLibrary(g);
  if (!lib)
    fail("the current graph was not built; run :build first");
  const IndexedGraph &idx = g.index();
  const auto &sid = need(g, "storage_id").ints;
  const auto &shapes = need(g, "shape").shapes;
  const auto &dtypes = need(g, "dtype").ints;
  std::map<int64_t, std::vector<std::max_align_t>> storage;
  for (const StorageSlot &s : storageSlots(g))
    storage[s.id].resize((s.bytes + sizeof(std::max_align_t) - 1) / sizeof(std::max_align_t) + 1);
  auto ptr = [&](uint32_t e) { return static_cast<void *>(storage.at(sid[e]).data()); };
  for (uint32_t nid : idx.argNodes) {
    const std::string &name = idx.nodes[nid].node->name;
    auto it = inputs.find(name);
    uint32_t e = idx.entryId(nid, 0);
    if (it == inputs.end())
      fail("run: no value for input '", name, "'");
    if (it->second.shape != shapes[e])
      fail("run: input '", name, "' has shape ", shapeToList(it->second.shape), " but the graph ",
           "was built for ", shapeToList(shapes[e]));
    toBuffer(it->second, static_cast<int>(dtypes[e]), ptr(e));
  }
  RunResult r;
  for (uint32_t nid = 0; nid < idx.numNodes(); ++nid) {
    const Node &n = *idx.nodes[nid].node;
    if (n.isVariable())
      continue;
    if (n.op->name != "tvm_op")
      fail("run: node ", n.name, " (", n.op->name, ") is not a compiled tvm_op");
    std::vector<void *> args;
    for (const auto &in : idx.nodes[nid].inputs)
      args.push_back(ptr(idx.entryId(in)));
    for (uint32_t k = 0; k < n.numOutputs(); ++k)
      args.push_back(ptr(idx.entryId(nid, k)));
    const std::string &fn = n.parsed.getStr("func_name");
    auto t0 = std::chrono::steady_clock::now();
    lib->code->call(fn, args);
    r.kernelMillis.push_back(
        {fn,
         std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count()});
  }
  for (const auto &h : idx.heads) {
    uint32_t e = idx.entryId(h);
    r.outputs.push_back(fromBuffer(ptr(e), shapes[e], static_cast<int>(dtypes[e])));
  }
  return r;
}

} // namespace loupe::backend
