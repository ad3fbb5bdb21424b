// BufferChart: entry sizes from shape and dtype, lifetimes from the indexed graph (outputs of
// the graph live to the end, as the executor keeps them).
#include "view/BufferChart.h"

#include "core/DType.h"
#include "core/Error.h"
#include "core/Text.h"

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace loupe::gui {

BufferChart bufferChart(const Graph &g) {
  for (const char *k : {"storage_id", "shape", "dtype"})
    if (!g.attr(k))
      fail("the graph has no ", k, " (run PlanMemory or :build first)");
  const IndexedGraph &idx = g.index();
  const auto &sid = g.attr("storage_id")->ints;
  const auto &shapes = g.attr("shape")->shapes;
  const auto &dtypes = g.attr("dtype")->ints;
  if (sid.size() != idx.numEntries() || shapes.size() != idx.numEntries() ||
      dtypes.size() != idx.numEntries())
    fail("storage_id, shape and dtype must list one value per entry");
  // The chart draws sizes: a plan over size symbols has expressions instead (:buffers prints
  // them), and each size a run gives is a variant with sizes to draw.
  std::set<std::string> symbols;
  for (const Shape &sh : shapes)
    for (const std::string &name : sh.symbols())
      symbols.insert(name);
  if (!symbols.empty())
    fail("the sizes are expressions of ",
         joinNames(std::vector<std::string>(symbols.begin(), symbols.end())),
         "; :buffers prints them, and a :run at a size has a variant whose buffers draw");
  BufferChart c;
  c.steps = idx.numNodes();
  std::vector<uint32_t> last(idx.numEntries(), 0);
  for (uint32_t nid = 0; nid < idx.numNodes(); ++nid) {
    for (uint32_t k = 0; k < idx.nodes[nid].node->numOutputs(); ++k)
      last[idx.entryId(nid, k)] = nid;
    for (const auto &e : idx.nodes[nid].inputs)
      last[idx.entryId(e.nodeId, e.index)] = nid;
  }
  for (const auto &h : idx.heads)
    last[idx.entryId(h.nodeId, h.index)] = c.steps - 1;
  std::map<int64_t, BufferRow> rows;
  for (uint32_t nid = 0; nid < idx.numNodes(); ++nid) {
    const Node &n = *idx.nodes[nid].node;
    for (uint32_t k = 0; k < n.numOutputs(); ++k) {
      uint32_t e = idx.entryId(nid, k);
      int64_t bytes = numElements(shapes[e]) * dtypeBytes(static_cast<int>(dtypes[e]));
      c.naive += bytes;
      if (sid[e] < 0)
        continue; // not planned (an unused output)
      BufferRow &row = rows[sid[e]];
      row.storage = sid[e];
      row.bytes = std::max(row.bytes, bytes);
      row.bars.push_back(
          {e, n.numOutputs() > 1 ? n.name + "." + std::to_string(k) : n.name, bytes, nid, last[e]});
    }
  }
  for (auto &[id, row] : rows) {
    c.planned += row.bytes;
    c.rows.push_back(std::move(row));
  }
  return c;
}

} // namespace loupe::gui
