// GraphExecutor: storage from PlanMemory, inputs in, compiled kernels in node order.
#include "backend/GraphExecutor.h"

#include "backend/DynamicBuild.h"

#include "core/Buffers.h"

#include "backend/BuiltLibrary.h"
#include "backend/Runtime.h"
#include "core/DType.h"
#include "core/Error.h"
#include "core/Interrupt.h"
#include "core/Memory.h"

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <set>

namespace loupe::backend {

namespace {

const GraphAttr &need(const Graph &g, const char *key) {
  const GraphAttr *a = g.attr(key);
  if (!a)
    fail("the graph has no '", key, "' attribute; run :build first");
  return *a;
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
      SymExpr bytes = elementCount(shapes[e]) * SymExpr(dtypeBytes(s.dtype));
      // The largest entry's bytes; -1 (no storage planned) gathers entries of any size.
      if (s.entries.empty()) {
        s.size = bytes;
      } else if (s.id >= 0) {
        SymExpr have, want;
        int64_t h = s.size.content(&have), w = bytes.content(&want);
        if (have != want)
          fail("storage ", s.id, " holds ", s.size.str(), " and ", bytes.str(),
               " bytes, sizes no binding of the symbols orders");
        if (w > h)
          s.size = bytes;
      }
      s.bytes = s.size.isConstant() ? s.size.constant() : 0;
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

struct GraphRuntime::Impl {
  struct Call {
    std::string name;
    void (*fn)(void **); ///< null: a reshape already done by sharing storage
    std::vector<void *> args;
    uint32_t node = 0;                   ///< its tvm_op node
    std::vector<uint32_t> outputEntries; ///< the entries it writes
    std::vector<uint32_t> inputEntries;  ///< the entries it reads, in argument order
  };
  std::shared_ptr<const BuiltLibrary> lib; // keeps the machine code alive
  std::map<int64_t, std::byte *> storage;
  /// Storage ids that are a library param's own bytes, read in place (not the runtime's to
  /// free or write).
  std::set<int64_t> aliased;
  std::map<int64_t, int64_t> slotBytes;
  struct Input {
    std::string name;
    uint32_t entry;
    bool set = false;
  };
  std::vector<Input> inputs;                // in argument order
  std::map<std::string, size_t> inputIndex; // name -> position in inputs
  std::vector<Call> calls;
  std::vector<uint32_t> outputEntries;
  std::vector<int64_t> sid;
  std::vector<Shape> shapes;
  std::vector<int> dtypes;
  /// The size symbols' values each generic kernel reads (its last input), by kernel.
  std::map<std::string, std::vector<int64_t>> sizeArgs;

  void *ptr(uint32_t e) const { return storage.at(sid[e]); }
  /// Storage `id`'s block, allocated once (kernelBuffer: aligned, zeroed, padded).
  static std::byte *allocate(int64_t size, int64_t id) {
    std::byte *p = kernelBuffer(static_cast<size_t>(size));
    if (!p)
      fail("run: cannot allocate ", size, " bytes for storage ", id);
    return p;
  }
};

GraphRuntime::GraphRuntime(const Graph &g) : impl_(std::make_unique<Impl>()) {
  Impl &m = *impl_;
  m.lib = builtLibrary(g);
  if (!m.lib)
    fail("the current graph was not built; run :build first");
  const IndexedGraph &idx = g.index();
  m.sid = need(g, "storage_id").ints;
  m.shapes = need(g, "shape").shapes;
  for (int64_t d : need(g, "dtype").ints)
    m.dtypes.push_back(static_cast<int>(d));
  // A library param whose storage is its alone is read where the library holds it: a network's
  // weights are not copied into every runtime.
  std::vector<StorageSlot> slots = storageSlots(g);
  std::map<int64_t, const StorageSlot *> slotOf;
  for (const StorageSlot &s : slots)
    slotOf[s.id] = &s;
  for (uint32_t nid : idx.argNodes) {
    uint32_t e = idx.entryId(nid, 0);
    auto p = m.lib->params.find(idx.nodes[nid].node->name);
    const StorageSlot &slot = *slotOf.at(m.sid[e]);
    if (p != m.lib->params.end() && slot.entries.size() == 1 && p->second.dtype() == m.dtypes[e] &&
        p->second.shape() == m.shapes[e]) {
      m.storage[slot.id] =
          const_cast<std::byte *>(static_cast<const std::byte *>(p->second.bytes()));
      m.aliased.insert(slot.id);
    }
  }
  double total = 0;
  for (const StorageSlot &s : slots)
    if (!m.aliased.count(s.id))
      total += static_cast<double>(s.bytes);
  requireMemory("running the graph", total, "its planned buffers");
  for (const StorageSlot &s : slots) {
    m.slotBytes[s.id] = s.bytes;
    if (m.aliased.count(s.id))
      continue;
    m.storage[s.id] = m.allocate(s.bytes, s.id);
  }
  for (uint32_t nid : idx.argNodes) {
    m.inputIndex[idx.nodes[nid].node->name] = m.inputs.size();
    m.inputs.push_back({idx.nodes[nid].node->name, idx.entryId(nid, 0)});
  }
  for (uint32_t nid = 0; nid < idx.numNodes(); ++nid) {
    const Node &n = *idx.nodes[nid].node;
    if (n.isVariable())
      continue;
    if (n.op->name != "tvm_op")
      fail("run: node ", n.name, " (", n.op->name, ") is not a compiled tvm_op");
    Impl::Call c;
    c.name = n.parsed.getStr("func_name");
    c.fn = m.lib->code->packed(c.name);
    for (const auto &in : idx.nodes[nid].inputs) {
      c.args.push_back(m.ptr(idx.entryId(in)));
      c.inputEntries.push_back(idx.entryId(in));
    }
    // A generic kernel (one for every size) reads the sizes of this graph's variant last.
    if (auto lf = m.lib->lowered.find(c.name);
        lf != m.lib->lowered.end() && !lf->second.sizeSymbols.empty()) {
      auto [at, added] = m.sizeArgs.try_emplace(c.name);
      if (added) {
        SymBindings b = variantBindings(g);
        for (const std::string &sym : lf->second.sizeSymbols) {
          if (!b.count(sym))
            fail("run: kernel ", c.name, " reads the size symbol ", sym,
                 ", which this graph does not bind (run it at a size: :run ", sym, "=N)");
          at->second.push_back(b.at(sym));
        }
      }
      c.args.push_back(at->second.data());
    }
    for (uint32_t k = 0; k < n.numOutputs(); ++k) {
      c.args.push_back(m.ptr(idx.entryId(nid, k)));
      c.outputEntries.push_back(idx.entryId(nid, k));
    }
    c.node = nid;
    // A reshape whose output PlanMemory put in its input's storage has nothing to do: the
    // bytes are already where the output is read (it stays in the list, taking no time).
    if (n.parsed.getBool("reshape_only") && c.inputEntries.size() == 1 &&
        c.outputEntries.size() == 1 && c.args.front() == c.args.back())
      c.fn = nullptr;
    m.calls.push_back(std::move(c));
  }
  for (const auto &h : idx.heads)
    m.outputEntries.push_back(idx.entryId(h));
  // The library's params are bound now: read in place, else their bytes copied as they are
  // where the dtypes agree.
  for (Impl::Input &in : m.inputs) {
    auto p = m.lib->params.find(in.name);
    if (p == m.lib->params.end())
      continue;
    if (p->second.shape() != m.shapes[in.entry])
      fail("run: param '", in.name, "' has shape ", shapeToList(p->second.shape()),
           " but the graph was built for ", shapeToList(m.shapes[in.entry]));
    if (!m.aliased.count(m.sid[in.entry])) { // else read in place
      if (p->second.dtype() == m.dtypes[in.entry])
        std::memcpy(m.ptr(in.entry), p->second.bytes(), p->second.numBytes());
      else
        copyToBuffer(p->second.load(), m.dtypes[in.entry], m.ptr(in.entry));
    }
    in.set = true;
  }
}

GraphRuntime::~GraphRuntime() {
  for (auto &[id, p] : impl_->storage)
    if (!impl_->aliased.count(id))
      std::free(p);
}

void GraphRuntime::setInput(const std::string &name, const Tensor &t) {
  Impl &m = *impl_;
  auto it = m.inputIndex.find(name);
  if (it == m.inputIndex.end())
    fail("run: the graph has no input '", name, "'");
  Impl::Input &in = m.inputs[it->second];
  if (t.shape != m.shapes[in.entry])
    fail("run: input '", name, "' has shape ", shapeToList(t.shape), " but the graph ",
         "was built for ", shapeToList(m.shapes[in.entry]));
  int64_t id = m.sid[in.entry];
  if (m.aliased.count(id)) { // a param given a new value gets storage of its own first
    std::byte *shared = m.storage.at(id);
    std::byte *own = m.allocate(m.slotBytes.at(id), id);
    for (Impl::Call &c : m.calls)
      for (void *&arg : c.args)
        if (arg == shared)
          arg = own;
    m.storage[id] = own;
    m.aliased.erase(id);
  }
  copyToBuffer(t, m.dtypes[in.entry], m.ptr(in.entry));
  in.set = true;
}

std::vector<std::pair<std::string, double>> GraphRuntime::run() {
  Impl &m = *impl_;
  for (const Impl::Input &in : m.inputs)
    if (!in.set)
      fail("run: no value for input '", in.name, "'");
  std::vector<std::pair<std::string, double>> times;
  times.reserve(m.calls.size());
  KernelFloatMode mode(m.lib->flushDenormals);
  for (Impl::Call &c : m.calls) {
    checkInterrupt(); // between kernels: Ctrl-C stops a long run
    auto t0 = std::chrono::steady_clock::now();
    if (c.fn)
      c.fn(c.args.data());
    times.push_back(
        {c.name,
         std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count()});
  }
  return times;
}

std::vector<Tensor> GraphRuntime::outputs() const {
  std::vector<Tensor> out;
  for (uint32_t e : impl_->outputEntries)
    out.push_back(copyFromBuffer(impl_->ptr(e), impl_->shapes[e], impl_->dtypes[e]));
  return out;
}

void GraphRuntime::setCallInputs(size_t k, const std::vector<const Tensor *> &values) {
  Impl &m = *impl_;
  const Impl::Call &c = m.calls.at(k);
  if (values.size() != c.inputEntries.size())
    fail("run: kernel ", c.name, " takes ", c.inputEntries.size(), " inputs, given ",
         values.size());
  for (size_t i = 0; i < values.size(); ++i) {
    uint32_t e = c.inputEntries[i];
    bool graphInput = std::any_of(m.inputs.begin(), m.inputs.end(),
                                  [&](const Impl::Input &in) { return in.entry == e; });
    if (!values[i] || graphInput)
      continue;
    // Elements in the same order suffice: a flatten_data kernel's values may come flat.
    if (values[i]->data.size() != static_cast<size_t>(numElements(m.shapes[e])))
      fail("run: input ", i, " of kernel ", c.name, " has shape ", shapeToList(m.shapes[e]),
           ", given ", shapeToList(values[i]->shape));
    copyToBuffer(*values[i], m.dtypes[e], m.ptr(e));
  }
}

size_t GraphRuntime::numCalls() const { return impl_->calls.size(); }

uint32_t GraphRuntime::callNode(size_t k) const { return impl_->calls.at(k).node; }

void GraphRuntime::runCall(size_t k) {
  Impl::Call &c = impl_->calls.at(k);
  if (k == 0)
    for (const Impl::Input &in : impl_->inputs)
      if (!in.set)
        fail("run: no value for input '", in.name, "'");
  KernelFloatMode mode(impl_->lib->flushDenormals);
  if (c.fn)
    c.fn(c.args.data());
}

std::vector<Tensor> GraphRuntime::callOutputs(size_t k) const {
  std::vector<Tensor> out;
  for (uint32_t e : impl_->calls.at(k).outputEntries)
    out.push_back(copyFromBuffer(impl_->ptr(e), impl_->shapes[e], impl_->dtypes[e]));
  return out;
}

RunResult runDeployGraph(const Graph &g, const std::map<std::string, Tensor> &inputs) {
  GraphRuntime rt(g);
  const IndexedGraph &idx = g.index();
  for (uint32_t nid : idx.argNodes) {
    const std::string &name = idx.nodes[nid].node->name;
    if (auto it = inputs.find(name); it != inputs.end())
      rt.setInput(name, it->second); // else the library's param, or run() names it missing
  }
  RunResult r;
  r.kernelMillis = rt.run();
  r.outputs = rt.outputs();
  return r;
}

} // namespace loupe::backend
