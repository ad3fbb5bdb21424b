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
//
// With size symbols (a symbolic graph) sizes are expressions: a block is reused only by a
// request of its size class (BlockSize), where the rule above holds at every binding, so the
// plan is valid whatever sizes the symbols take; the total is then an expression.
#include "passes/Pass.h"

#include "core/Error.h"
#include "core/Shape.h"
#include "core/SymExpr.h"

#include <map>
#include <string>
#include <utility>

namespace loupe {

namespace {

// A block's size as PlanMemory compares them: its size class (the primitive part of its byte
// count, `1` for every constant size) and its multiple of the class. Within one class sizes
// keep one ratio at every binding of the symbols, so NNVM's rule applies to the multiples; sizes
// of different classes are never compared (no binding-free order exists between them).
struct BlockSize {
  SymExpr primitive;
  int64_t mult = 0;
  std::string cls;

  explicit BlockSize(const SymExpr &bytes)
      : mult(bytes.content(&primitive)), cls(primitive.str()) {}
  SymExpr bytes() const { return primitive * SymExpr(mult); }
};

class Allocator {
public:
  static constexpr int64_t kMatchRange = 16;

  int request(const BlockSize &size) {
    if (size.mult == 0)
      return -1;
    auto &free = free_[size.cls];
    auto begin = free.lower_bound(size.mult / kMatchRange);
    auto mid = free.lower_bound(size.mult);
    auto end = free.upper_bound(size.mult * kMatchRange);
    for (auto it = mid; it != end; ++it)
      return take(free, it, size.mult);
    for (auto it = mid; it != begin;) {
      --it;
      return take(free, it, size.mult);
    }
    blocks_.push_back(size);
    return static_cast<int>(blocks_.size()) - 1;
  }
  void release(int id) { free_[blocks_[id].cls].insert({blocks_[id].mult, id}); }
  /// The bytes of every block: a constant, or an expression of the symbols.
  SymExpr totalBytes() const {
    SymExpr t;
    for (const BlockSize &b : blocks_)
      t = t + b.bytes();
    return t;
  }

private:
  using FreeList = std::multimap<int64_t, int>; // equal sizes stay in release order
  int take(FreeList &free, FreeList::iterator it, int64_t mult) {
    int id = it->second;
    blocks_[id].mult = std::max(blocks_[id].mult, mult);
    free.erase(it);
    return id;
  }
  std::map<std::string, FreeList> free_; // by size class
  std::vector<BlockSize> blocks_;
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
    return BlockSize(shapes[eid].rankKnown() ? elementCount(shapes[eid]) * SymExpr(4) : SymExpr(0));
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
          elementCount(shapes[eout]) == elementCount(shapes[ein]) && dtypes[eout] == dtypes[ein]) {
        taken[i] = true;
        storage[eout] = sin;
        blockRefs[sin] += refs[eout];
        inplaceIndex[eout] = i;
      }
    }
    // Largest first within a size class; classes in the order of their text.
    std::multimap<std::pair<std::string, int64_t>, std::pair<BlockSize, uint32_t>> outs;
    for (uint32_t k = 0; k < n.numOutputs(); ++k) {
      uint32_t eid = idx.entryId(nid, k);
      if (storage[eid] == -1) {
        BlockSize b = bytesOf(eid);
        outs.insert({{b.cls, b.mult}, {b, eid}});
      }
    }
    for (auto it = outs.rbegin(); it != outs.rend(); ++it) {
      int sid = alloc.request(it->second.first);
      if (sid >= 0)
        blockRefs[sid] = refs[it->second.second];
      storage[it->second.second] = sid;
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
  // A symbolic plan's total is an expression of the symbols (text); a plan of sizes, bytes.
  SymExpr total = alloc.totalBytes();
  g.attrs["storage_allocated_bytes"] =
      total.isConstant() ? GraphAttr::sizeT(total.constant()) : GraphAttr::string(total.str());
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
