// PlanMemory: assigns a storage id to every op output, reusing freed blocks and writing in
// place where an op allows it (nnvm-spec §7); writes `storage_id`, `storage_inplace_index`,
// `storage_allocated_bytes` and `storage_num_not_allocated`.
//
// Walking op nodes in id order: (1) an output may take over an input's block when the op has
// an in-place option (or is a tvm_op marked reshape_only at opt_level 3), that block has no
// other reader, the output is used and sizes and dtypes match; (2) the remaining outputs are
// allocated largest first; (3) input blocks whose last reader this was are released; (4)
// outputs nobody reads are released at once. The allocator (NNVM's GraphAllocator) keeps free
// blocks in a multimap by size: a request of `size` bytes (elements × 4, dtype ignored as NNVM
// did) takes the smallest free block in [size, 16·size] (earliest released among equals), else
// the largest in [size/16, size) (latest released), else a new id; a reused block grows to the
// larger size. Variables get no storage.
#include "passes/Pass.h"

#include "core/Error.h"

#include <map>

namespace loupe {

namespace {

class Allocator {
public:
  static constexpr size_t kMatchRange = 16;

  int request(size_t size) {
    if (size == 0)
      return -1;
    auto begin = free_.lower_bound(size / kMatchRange);
    auto mid = free_.lower_bound(size);
    auto end = free_.upper_bound(size * kMatchRange);
    for (auto it = mid; it != end; ++it)
      return take(it, size);
    for (auto it = mid; it != begin;) {
      --it;
      return take(it, size);
    }
    bytes_.push_back(size);
    return static_cast<int>(bytes_.size()) - 1;
  }
  void release(int id) { free_.insert({bytes_[id], id}); }
  int64_t totalBytes() const {
    int64_t t = 0;
    for (size_t b : bytes_)
      t += static_cast<int64_t>(b);
    return t;
  }

private:
  int take(std::multimap<size_t, int>::iterator it, size_t size) {
    int id = it->second;
    bytes_[id] = std::max(bytes_[id], size);
    free_.erase(it);
    return id;
  }
  std::multimap<size_t, int> free_; // equal sizes stay in release order
  std::vector<size_t> bytes_;
};

Graph planMemory(const Graph &src, const PassContext &) {
  Graph g = src;
  const IndexedGraph &idx = g.index();
  const auto &shapes = g.attr("shape")->shapes;
  const auto &dtypes = g.attr("dtype")->ints;
  uint32_t ne = idx.numEntries();
  if (shapes.size() != ne || dtypes.size() != ne)
    fail("PlanMemory: 'shape'/'dtype' do not match this graph; apply InferShape and InferType");
  std::vector<int> refs(ne, 0);
  for (const auto &n : idx.nodes)
    for (const auto &e : n.inputs)
      ++refs[idx.entryId(e)];
  for (const auto &h : idx.heads)
    ++refs[idx.entryId(h)];

  std::vector<int64_t> storage(ne, -1), inplaceIndex(ne, -1);
  std::map<int, int> blockRefs;
  Allocator alloc;
  int64_t notAllocated = 0;
  auto bytesOf = [&](uint32_t eid) {
    return shapes[eid].rankKnown() ? static_cast<size_t>(numElements(shapes[eid])) * 4 : size_t{0};
  };
  for (uint32_t nid = 0; nid < idx.numNodes(); ++nid) {
    const auto &in = idx.nodes[nid];
    const Node &n = *in.node;
    if (n.isVariable())
      continue;
    std::vector<bool> taken(in.inputs.size(), false);
    // A kernel that only reshapes its input (tvm_op reshape_only, made at opt_level 3) may
    // write in place too: its output is the input's bytes, so the executor skips it.
    std::vector<std::pair<int, int>> inplace = n.op->inplace;
    if (n.op->name == "tvm_op" && n.parsed.getBool("reshape_only"))
      inplace.emplace_back(0, 0);
    for (auto [i, o] : inplace) {
      if (i >= static_cast<int>(in.inputs.size()) || o >= static_cast<int>(n.numOutputs()))
        continue;
      uint32_t eout = idx.entryId(nid, o), ein = idx.entryId(in.inputs[i]);
      int64_t sin = storage[ein];
      if (!taken[i] && storage[eout] == -1 && sin >= 0 && blockRefs[sin] == 1 && refs[eout] > 0 &&
          numElements(shapes[eout]) == numElements(shapes[ein]) && dtypes[eout] == dtypes[ein]) {
        taken[i] = true;
        storage[eout] = sin;
        blockRefs[sin] += refs[eout];
        inplaceIndex[eout] = i;
      }
    }
    std::multimap<size_t, uint32_t> outs;
    for (uint32_t k = 0; k < n.numOutputs(); ++k) {
      uint32_t eid = idx.entryId(nid, k);
      if (storage[eid] == -1)
        outs.insert({bytesOf(eid), eid});
    }
    for (auto it = outs.rbegin(); it != outs.rend(); ++it) {
      int sid = alloc.request(it->first);
      if (sid >= 0)
        blockRefs[sid] = refs[it->second];
      storage[it->second] = sid;
    }
    for (const auto &e : in.inputs) {
      int64_t sid = storage[idx.entryId(e)];
      if (sid < 0)
        continue;
      if (--blockRefs[sid] == 0)
        alloc.release(static_cast<int>(sid));
    }
    for (uint32_t k = 0; k < n.numOutputs(); ++k) {
      uint32_t eid = idx.entryId(nid, k);
      if (storage[eid] >= 0 && blockRefs[storage[eid]] == 0) {
        alloc.release(static_cast<int>(storage[eid]));
        inplaceIndex[eid] = -2;
      }
      if (storage[eid] == -1)
        ++notAllocated;
    }
  }
  g.attrs["storage_id"] = GraphAttr::listInt(storage);
  g.attrs["storage_inplace_index"] = GraphAttr::listInt(inplaceIndex);
  g.attrs["storage_allocated_bytes"] = GraphAttr::sizeT(alloc.totalBytes());
  g.attrs["storage_num_not_allocated"] = GraphAttr::sizeT(notAllocated);
  return g;
}

} // namespace

void registerPlanMemoryPass() {
  PassRegistry::get().add(
      {.name = "PlanMemory",
       .summary = "assigns storage ids to entries, reusing freed blocks and in-place",
       .optLevel = 0,
       .needs = {"shape", "dtype"},
       .provides = {"storage_id", "storage_inplace_index", "storage_allocated_bytes",
                    "storage_num_not_allocated"},
       .run = planMemory});
}

} // namespace loupe
