// PlaceDevice: assigns every node a device and inserts copies where data crosses devices
// (nnvm-spec §8); writes `device` (one int per node).
//
// Needs `device_group_attr_key` (the node attribute naming a node's device group, such as
// "__ctx_group__"), `device_assign_map` (group → device id) and `device_copy_op` (the op that
// copies, e.g. "copy"). Forward, a node takes its group's device, else its first placed input's;
// backward, unplaced inputs take their consumer's device; what is left is device 0. With one
// device the graph is returned with `device` (and the three inputs consumed). Otherwise every
// edge between devices gets a copy node `<producer>_<output>_copy` on the consumer's device
// (one per producer output and device), and the nodes downstream are copied.
#include "passes/Pass.h"

#include "core/Error.h"
#include "core/Rewrite.h"

#include <map>
#include <set>
#include <tuple>

namespace loupe {

namespace {

Graph placeDevice(const Graph &src, const PassContext &) {
  const IndexedGraph &idx = src.index();
  const std::string &key = src.attr("device_group_attr_key")->str;
  const auto &assign = src.attr("device_assign_map")->dict;
  const std::string &copyName = src.attr("device_copy_op")->str;
  const OpDef *copyOp = OpRegistry::get().find(copyName);
  if (!copyOp)
    fail("PlaceDevice: device_copy_op names an unknown op '", copyName, "'");
  uint32_t n = idx.numNodes();
  std::vector<int64_t> device(n, -1);
  if (const GraphAttr *d = src.attr("device"); d && d->ints.size() == n)
    device = d->ints;
  for (uint32_t nid = 0; nid < n; ++nid) {
    const Node &node = *idx.nodes[nid].node;
    if (const std::string *group = findAttr(node.attrs, key)) {
      auto it = assign.find(*group);
      if (it == assign.end())
        fail("PlaceDevice: node ", node.name, ": no device is assigned to group '", *group, "'");
      device[nid] = it->second;
    } else if (!node.isVariable()) {
      for (const auto &e : idx.nodes[nid].inputs)
        if (device[e.nodeId] != -1) {
          device[nid] = device[e.nodeId];
          break;
        }
    }
  }
  for (uint32_t nid = n; nid-- > 0;)
    if (device[nid] != -1)
      for (const auto &e : idx.nodes[nid].inputs)
        if (device[e.nodeId] == -1)
          device[e.nodeId] = device[nid];
  std::set<int64_t> used;
  for (auto &d : device) {
    if (d == -1)
      d = 0;
    used.insert(d);
  }
  if (used.size() == 1) {
    Graph g = src;
    for (const char *k : {"device_group_attr_key", "device_assign_map", "device_copy_op"})
      g.attrs.erase(k);
    g.attrs["device"] = GraphAttr::listInt(device);
    return g;
  }
  std::map<std::tuple<uint32_t, uint32_t, int64_t>, NodePtr> copies;
  std::map<const Node *, int64_t> deviceOf;
  Graph out = rewriteGraph(src, [&](uint32_t nid, const NodePtr &node) -> std::vector<NodeEntry> {
    std::vector<NodeEntry> inputs = node->inputs;
    bool crossed = false;
    for (size_t i = 0; i < inputs.size(); ++i) {
      const auto &e = idx.nodes[nid].inputs[i];
      if (device[e.nodeId] == device[nid])
        continue;
      // One copy per producer output and destination device, shared by its readers there.
      auto k = std::make_tuple(e.nodeId, e.index, device[nid]);
      auto it = copies.find(k);
      if (it == copies.end()) {
        NodePtr c = makeOpNode(
            *copyOp, idx.nodes[e.nodeId].node->name + "_" + std::to_string(e.index) + "_copy", {},
            {inputs[i]}, {}, false);
        deviceOf[c.get()] = device[nid];
        it = copies.emplace(k, c).first;
      }
      inputs[i] = {it->second, 0, 0};
      crossed = true;
    }
    if (!crossed) {
      deviceOf[node.get()] = device[nid];
      return {};
    }
    NodePtr moved =
        makeOpNode(*node->op, node->name, node->attrs, inputs, node->controlDeps, false);
    deviceOf[moved.get()] = device[nid];
    return outputsOf(moved);
  });
  std::vector<int64_t> placed;
  for (const auto &node : out.index().nodes)
    placed.push_back(deviceOf.at(node.node.get()));
  out.attrs["device"] = GraphAttr::listInt(placed);
  return out;
}

} // namespace

void registerPlaceDevicePass() {
  PassRegistry::get().add(
      {.name = "PlaceDevice",
       .summary = "assigns devices from device groups and inserts cross-device copies",
       .optLevel = 0,
       .needs = {"device_group_attr_key", "device_assign_map", "device_copy_op"},
       .provides = {"device"},
       .changesGraph = true,
       .run = placeDevice});
}

} // namespace loupe
