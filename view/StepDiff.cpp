// StepDiff: matches nodes by name, compares op, attributes and input wiring, and reuses the
// pass effect summary and unified diff that `:diff` prints.
#include "view/StepDiff.h"

#include "core/Printer.h"
#include "passes/Instruments.h"
#include "repl/SessionFile.h"

#include <set>

namespace loupe::gui {

namespace {

// Node keys: the name, with `#k` for the k-th repeat of a name (layout transforms may repeat).
std::map<std::string, uint32_t> keyed(const IndexedGraph &idx) {
  std::map<std::string, uint32_t> keys;
  std::map<std::string, int> seen;
  for (uint32_t nid = 0; nid < idx.numNodes(); ++nid) {
    const std::string &n = idx.nodes[nid].node->name;
    int k = seen[n]++;
    keys[k ? n + "#" + std::to_string(k) : n] = nid;
  }
  return keys;
}

std::string inputsText(const IndexedGraph &idx, uint32_t nid) {
  std::string s;
  for (const auto &e : idx.nodes[nid].inputs) {
    const Node &p = *idx.nodes[e.nodeId].node;
    s += (s.empty() ? "" : ", ") + p.name +
         (p.numOutputs() > 1 ? "." + std::to_string(e.index) : "");
  }
  return s;
}

std::string attrText(const AttrDict &d, const std::string &key) {
  for (const auto &[k, v] : d)
    if (k == key)
      return v;
  return "(unset)";
}

} // namespace

Change StepDiff::of(const std::string &name) const {
  auto it = index.find(name);
  return it == index.end() ? Change::Same : nodes[it->second].change;
}

StepDiff diffGraphs(const Graph &a, const Graph &b, const std::string &aName,
                    const std::string &bName) {
  StepDiff d;
  const IndexedGraph &ia = a.index(), &ib = b.index();
  auto ka = keyed(ia), kb = keyed(ib);
  for (const auto &[key, nb] : kb) {
    auto it = ka.find(key);
    if (it == ka.end()) {
      d.nodes.push_back({key, Change::Added, {}});
      continue;
    }
    const Node &x = *ia.nodes[it->second].node, &y = *ib.nodes[nb].node;
    if (&x == &y)
      continue; // the very same immutable node
    NodeChange c{key, Change::Changed, {}};
    std::string opX = x.isVariable() ? "variable" : x.op->name;
    std::string opY = y.isVariable() ? "variable" : y.op->name;
    if (opX != opY)
      c.details.push_back("op " + opX + " -> " + opY);
    std::set<std::string> keys;
    for (const auto &[k, v] : x.attrs)
      keys.insert(k);
    for (const auto &[k, v] : y.attrs)
      keys.insert(k);
    for (const std::string &k : keys) {
      std::string vx = attrText(x.attrs, k), vy = attrText(y.attrs, k);
      if (vx != vy)
        c.details.push_back("attr " + k + ": " + vx + " -> " + vy);
    }
    std::string inX = inputsText(ia, it->second), inY = inputsText(ib, nb);
    if (inX != inY)
      c.details.push_back("inputs: " + inX + " -> " + inY);
    if (!c.details.empty())
      d.nodes.push_back(std::move(c));
  }
  for (const auto &[key, na] : ka)
    if (!kb.count(key))
      d.nodes.push_back({key, Change::Removed, {}});
  for (size_t i = 0; i < d.nodes.size(); ++i)
    d.index[d.nodes[i].name] = i;
  d.summary = describeEffects(a, b);
  auto la = outputLines(printGraphIR(a)), lb = outputLines(printGraphIR(b));
  if (la != lb)
    d.irDiff = unifiedDiff(la, lb, aName, bName);
  d.rows = changeRows(d);
  return d;
}

std::vector<ChangeRow> changeRows(const StepDiff &d) {
  std::vector<ChangeRow> rows;
  for (const NodeChange &c : d.nodes) {
    RowKind kind = c.change == Change::Added     ? RowKind::Added
                   : c.change == Change::Removed ? RowKind::Removed
                                                 : RowKind::Changed;
    const char *verb = kind == RowKind::Added     ? "added "
                       : kind == RowKind::Removed ? "removed "
                                                  : "changed ";
    rows.push_back({kind, verb + c.name});
    for (const std::string &det : c.details)
      rows.push_back({RowKind::Detail, det});
  }
  if (d.nodes.empty())
    rows.push_back({RowKind::None, "No node changed."});
  rows.push_back({RowKind::Separator, ""});
  size_t at = 0;
  while (at < d.irDiff.size()) {
    size_t end = d.irDiff.find('\n', at);
    if (end == std::string::npos)
      end = d.irDiff.size();
    std::string line = d.irDiff.substr(at, end - at);
    RowKind kind = line.rfind('+', 0) == 0   ? RowKind::DiffAdded
                   : line.rfind('-', 0) == 0 ? RowKind::DiffRemoved
                                             : RowKind::DiffSame;
    rows.push_back({kind, std::move(line)});
    at = end + 1;
  }
  return rows;
}

} // namespace loupe::gui
