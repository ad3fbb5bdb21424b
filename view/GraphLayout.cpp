// GraphLayout: a snapshot laid out — by LayeredLayout (the default), or by Graphviz's dot through
// cgraph (fixed-size boxes, positions read back with Graphviz's y-up points flipped, the edge
// splines) — and the node queries the viewer asks of it.
#include "view/GraphLayout.h"

#include "backend/BuiltLibrary.h"
#include "core/DType.h"
#include "core/Error.h"
#include "core/Op.h"

#include <graphviz/gvc.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <deque>
#include <map>
#include <memory>

namespace loupe::gui {

namespace {

// One Graphviz context for the process: creating it loads the plugin configuration, which is
// slow, and dot's layout is not re-entrant anyway.
GVC_t *context() {
  static GVC_t *gvc = gvContext();
  return gvc;
}

std::string lower(std::string s) {
  for (char &c : s)
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// Sets a node attribute, declaring it with a default first as cgraph requires.
void set(Agnode_t *n, const char *key, const std::string &value) {
  agsafeset(n, const_cast<char *>(key), const_cast<char *>(value.c_str()), const_cast<char *>(""));
}

// The param node `nid` copies (an exporter's Identity of a shared initializer, imported as
// `copy`), or -1 when it is not such a copy.
int copiedParam(const Graph &g, uint32_t nid, const std::set<std::string> &params) {
  const Node &n = *g.index().nodes[nid].node;
  if (n.isVariable() || n.op->name != "copy" || n.inputs.size() != 1)
    return -1;
  const Node &from = *n.inputs[0].node;
  return from.isVariable() && params.count(from.name)
             ? static_cast<int>(g.index().nodes[nid].inputs[0].nodeId)
             : -1;
}

// The ops each variable is folded into (among the `shown` nodes): its one consumer, or for a
// param (a weight, a bias, an exporter's shared initializer, or a copy of one) every consumer, so
// that a weight that many ops read is a line in each of their boxes instead of a hub of long
// edges. Empty for a node drawn as a box: an input several ops read, one nothing reads, a graph
// output, an op.
std::vector<std::vector<uint32_t>> foldedInto(const Graph &g, const std::vector<bool> &shown,
                                              const std::set<std::string> &params) {
  const IndexedGraph &idx = g.index();
  std::vector<std::vector<uint32_t>> consumers(idx.numNodes());
  for (uint32_t nid = 0; nid < idx.numNodes(); ++nid) {
    if (!shown[nid])
      continue;
    for (const auto &e : idx.nodes[nid].inputs)
      if (consumers[e.nodeId].empty() || consumers[e.nodeId].back() != nid) // read twice: once
        consumers[e.nodeId].push_back(nid);
  }
  std::vector<bool> output(idx.numNodes(), false);
  for (const auto &h : idx.heads)
    output[h.nodeId] = true;
  // The graph's data inputs keep their boxes: a network's input is where a reader starts, not a
  // line inside the first convolution. Where no params are known (a graph written in the
  // language, nothing bound yet), a variable read as an op's first operand is taken for data.
  std::vector<bool> dataOperand(idx.numNodes(), false);
  for (uint32_t nid = 0; nid < idx.numNodes(); ++nid)
    if (shown[nid] && !idx.nodes[nid].inputs.empty())
      dataOperand[idx.nodes[nid].inputs[0].nodeId] = true;
  std::vector<std::vector<uint32_t>> hosts(idx.numNodes());
  for (uint32_t nid = 0; nid < idx.numNodes(); ++nid) {
    const Node &n = *idx.nodes[nid].node;
    bool param = n.isVariable() ? params.count(n.name) > 0 : copiedParam(g, nid, params) >= 0;
    bool data = n.isVariable() && !param && (!params.empty() || dataOperand[nid]);
    if (shown[nid] && (n.isVariable() || param) && !data && !output[nid] &&
        (consumers[nid].size() == 1 || (consumers[nid].size() > 1 && param)))
      hosts[nid] = std::move(consumers[nid]);
  }
  return hosts;
}

// A box's size from its label lines.
void sizeBox(LaidNode &ln, const LayoutOptions &o) {
  size_t chars = 0;
  for (const std::string &l : ln.lines)
    chars = std::max(chars, l.size());
  ln.w = static_cast<double>(chars) * o.charWidth + 2 * o.padding;
  ln.h = static_cast<double>(ln.lines.size()) * o.lineHeight + 2 * o.padding;
}

// The Graphviz node of a sized box.
Agnode_t *addBox(Agraph_t *G, const LaidNode &ln) {
  std::string key = "n" + std::to_string(ln.nid);
  Agnode_t *an = agnode(G, key.data(), 1);
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4f", ln.w / 72.0); // Graphviz sizes are inches
  set(an, "width", buf);
  std::snprintf(buf, sizeof buf, "%.4f", ln.h / 72.0);
  set(an, "height", buf);
  return an;
}

} // namespace

void GraphLayout::index() {
  uint32_t most = 0;
  for (const LaidNode &n : nodes) {
    most = std::max(most, n.nid);
    for (uint32_t m : n.folded)
      most = std::max(most, m);
    for (uint32_t m : n.members)
      most = std::max(most, m);
  }
  boxOf.assign(nodes.empty() ? 0 : most + 1, -1);
  // In reverse, so that where a node is in two boxes (a param folded into each reader) the
  // first box wins, as find's search has it.
  for (size_t i = nodes.size(); i-- > 0;) {
    for (uint32_t m : nodes[i].members)
      boxOf[m] = static_cast<int>(i);
    for (uint32_t m : nodes[i].folded)
      boxOf[m] = static_cast<int>(i);
    boxOf[nodes[i].nid] = static_cast<int>(i);
  }
}

int GraphLayout::find(uint32_t nid) const {
  if (!boxOf.empty())
    return nid < boxOf.size() ? boxOf[nid] : -1;
  for (size_t i = 0; i < nodes.size(); ++i)
    if (nodes[i].nid == nid ||
        std::find(nodes[i].folded.begin(), nodes[i].folded.end(), nid) != nodes[i].folded.end() ||
        std::find(nodes[i].members.begin(), nodes[i].members.end(), nid) != nodes[i].members.end())
      return static_cast<int>(i);
  return -1;
}

std::string keyAttributes(const Node &n) {
  if (n.isVariable())
    return "";
  const std::string &op = n.op->name;
  const Attrs &a = n.parsed;
  // "3×3 /2 pad 1": a window, its stride and padding when they are not 1 and 0.
  auto window = [&](const char *size) {
    const auto &k = a.getTuple(size);
    const auto &st = a.getTuple("strides");
    const auto &pad = a.getTuple("padding");
    std::string t;
    for (size_t i = 0; i < k.size(); ++i)
      t += (i ? "×" : "") + std::to_string(k[i]);
    auto same = [](const std::vector<int64_t> &v, int64_t x) {
      return std::all_of(v.begin(), v.end(), [&](int64_t d) { return d == x; });
    };
    auto text = [](const std::vector<int64_t> &v) {
      std::string r;
      for (size_t i = 0; i < v.size(); ++i)
        if (i == 0 || v[i] != v[0])
          r += (i ? "," : "") + std::to_string(v[i]);
      return r;
    };
    if (!st.empty() && !same(st, 1))
      t += " /" + text(st);
    if (!pad.empty() && !same(pad, 0))
      t += " pad " + text(pad);
    return t;
  };
  if (op == "conv2d" || op == "conv2d_transpose" || op == "_contrib_conv2d_NCHWc" ||
      op == "_contrib_depthwise_conv2d_NCHWc") {
    std::string t = window("kernel_size") + ", " + std::to_string(a.getInt("channels")) + " ch";
    if (a.getInt("groups") != 1)
      t += a.getInt("groups") == a.getInt("channels")
               ? ", depthwise"
               : ", " + std::to_string(a.getInt("groups")) + " groups";
    return t;
  }
  if (op == "max_pool2d" || op == "avg_pool2d")
    return window("pool_size");
  if (op == "dense")
    return std::to_string(a.getInt("units")) + " units";
  return "";
}

std::vector<std::string> nodeLines(const Graph &g, uint32_t nid, bool param) {
  const IndexedGraph &idx = g.index();
  const Node &n = *idx.nodes[nid].node;
  std::vector<std::string> lines;
  if (n.isVariable())
    lines.push_back(param ? "param" : "input");
  else if (n.op->name == "tvm_op")
    lines.push_back(n.parsed.getStr("func_name"));
  else
    lines.push_back(n.op->name);
  lines.push_back(n.name);
  if (std::string key = keyAttributes(n); !key.empty())
    lines.push_back(key);
  const GraphAttr *shape = g.attr("shape");
  const GraphAttr *dtype = g.attr("dtype");
  bool shapeFits = shape && shape->shapes.size() == idx.numEntries();
  bool dtypeFits = dtype && dtype->ints.size() == idx.numEntries();
  for (uint32_t k = 0; k < n.numVisibleOutputs(); ++k) {
    uint32_t e = idx.entryId(nid, k);
    std::string s;
    if (shapeFits && shapeDescribed(shape->shapes[e]))
      s = shapeToTuple(shape->shapes[e]);
    if (dtypeFits && dtype->ints[e] >= 0)
      s += std::string(s.empty() ? "" : " ") +
           std::string(dtypeName(static_cast<int>(dtype->ints[e])));
    if (!s.empty())
      lines.push_back(n.numVisibleOutputs() > 1 ? std::to_string(k) + ": " + s : s);
  }
  return lines;
}

std::set<std::string> paramNames(const Graph &g) {
  std::set<std::string> params;
  const IndexedGraph &idx = g.index();
  for (const auto &in : idx.nodes) {
    const Node &n = *in.node;
    if (n.isVariable())
      continue;
    std::vector<std::string> args = n.op->argNames(n.parsed);
    for (size_t i = 0; i < n.inputs.size() && i < args.size(); ++i) {
      const Node &p = *n.inputs[i].node;
      if (p.isVariable() && p.name == n.name + "_" + args[i])
        params.insert(p.name);
    }
  }
  if (auto lib = backend::builtLibrary(g))
    for (const auto &[name, t] : lib->params)
      params.insert(name);
  return params;
}

std::set<std::string> paramNames(const Graph &g, const StoredTensors &bound) {
  std::set<std::string> params = paramNames(g);
  for (const auto &[name, value] : bound)
    params.insert(name);
  return params;
}

namespace {

// dot places `out`'s boxes and draws its edges.
void placeWithDot(GraphLayout &out) {
  std::unique_ptr<Agraph_t, int (*)(Agraph_t *)> graph(
      agopen(const_cast<char *>("loupe"), Agdirected, nullptr), agclose);
  Agraph_t *G = graph.get();
  agattr(G, AGRAPH, const_cast<char *>("rankdir"), const_cast<char *>("TB"));
  agattr(G, AGRAPH, const_cast<char *>("nodesep"), const_cast<char *>("0.25"));
  agattr(G, AGRAPH, const_cast<char *>("ranksep"), const_cast<char *>("0.35"));
  agattr(G, AGNODE, const_cast<char *>("shape"), const_cast<char *>("box"));
  agattr(G, AGNODE, const_cast<char *>("fixedsize"), const_cast<char *>("true"));
  agattr(G, AGNODE, const_cast<char *>("label"), const_cast<char *>(""));
  std::map<uint32_t, Agnode_t *> agNodes;
  for (const LaidNode &ln : out.nodes)
    agNodes[ln.nid] = addBox(G, ln);
  std::vector<Agedge_t *> agEdges;
  for (const LaidEdge &le : out.edges) {
    // A distinct key per (producer output, consumer input) keeps parallel edges apart.
    std::string key = std::to_string(agEdges.size());
    agEdges.push_back(agedge(G, agNodes[le.from], agNodes[le.to], key.data(), 1));
  }
  // dot's x-coordinate pass (network simplex) grows about quadratically on long graphs with
  // skip edges: a 4,000-op ladder took 20 s. Past kBoundedBoxes its iterations are bounded to
  // 1% of the nodes (nslimit), which took that ladder to 3.7 s.
  if (out.nodes.size() > kBoundedBoxes)
    agattr(G, AGRAPH, const_cast<char *>("nslimit"), const_cast<char *>("0.01"));
  if (gvLayout(context(), G, "dot") != 0)
    fail("Graphviz could not lay out the graph");
  const boxf bb = GD_bb(G);
  out.width = bb.UR.x - bb.LL.x;
  out.height = bb.UR.y - bb.LL.y;
  auto flip = [&](pointf p) { return Point{p.x - bb.LL.x, bb.UR.y - p.y}; };
  for (LaidNode &ln : out.nodes) {
    Agnode_t *an = agNodes[ln.nid];
    Point c = flip(ND_coord(an));
    ln.x = c.x;
    ln.y = c.y;
    // dot rounds sizes to whole points; draw the boxes its edges were clipped to.
    ln.w = ND_lw(an) + ND_rw(an);
    ln.h = ND_ht(an);
  }
  for (size_t i = 0; i < out.edges.size(); ++i) {
    LaidEdge &le = out.edges[i];
    if (const splines *spl = ED_spl(agEdges[i]))
      for (int b = 0; b < spl->size; ++b) {
        const bezier &bz = spl->list[b];
        for (int k = 0; k < bz.size; ++k)
          le.points.push_back(flip(bz.list[k]));
        le.head = bz.eflag ? flip(bz.ep) : le.points.empty() ? Point{} : le.points.back();
      }
  }
  gvFreeLayout(context(), G);
}

// The layered layout places `out`'s boxes and draws its edges, with dot's spacing
// (nodesep 0.25 in, ranksep 0.35 in).
void placeLayered(GraphLayout &out, const LayoutOptions &o) {
  LayeredGraph lg;
  for (const LaidNode &ln : out.nodes)
    lg.sizes.push_back({ln.w, ln.h});
  for (const LaidEdge &le : out.edges)
    lg.edges.push_back(
        {static_cast<uint32_t>(out.find(le.from)), static_cast<uint32_t>(out.find(le.to))});
  LayeredOptions lo;
  lo.nodeSep = 18;
  lo.rankSep = 25;
  lo.cancel = o.cancel;
  LayeredDrawing d = layered(lg, lo);
  out.width = d.width;
  out.height = d.height;
  for (size_t i = 0; i < out.nodes.size(); ++i) {
    out.nodes[i].x = d.centres[i].x;
    out.nodes[i].y = d.centres[i].y;
  }
  for (size_t e = 0; e < out.edges.size(); ++e) {
    out.edges[e].points = std::move(d.edges[e]);
    out.edges[e].head = d.heads[e];
  }
}

} // namespace

size_t GraphLayout::crossings() const {
  std::vector<std::vector<Point>> lines;
  std::vector<std::pair<uint32_t, uint32_t>> ends;
  for (const LaidEdge &e : edges) {
    std::vector<Point> line;
    const auto &p = e.points;
    if (!p.empty())
      line.push_back(p[0]);
    for (size_t i = 1; i + 2 < p.size(); i += 3)
      for (int k = 1; k <= 4; ++k) { // a cubic piece as four chords
        double t = k / 4.0, s = 1 - t;
        double a = s * s * s, b = 3 * s * s * t, c = 3 * s * t * t, d = t * t * t;
        line.push_back({a * p[i - 1].x + b * p[i].x + c * p[i + 1].x + d * p[i + 2].x,
                        a * p[i - 1].y + b * p[i].y + c * p[i + 1].y + d * p[i + 2].y});
      }
    if (!p.empty())
      line.push_back(e.head);
    lines.push_back(std::move(line));
    ends.push_back({static_cast<uint32_t>(find(e.from)), static_cast<uint32_t>(find(e.to))});
  }
  return countCrossings(lines, ends);
}

GraphLayout layoutGraph(const Graph &g, const LayoutOptions &o, const std::vector<uint32_t> *only) {
  const IndexedGraph &idx = g.index();
  std::vector<bool> shown(idx.numNodes(), only == nullptr);
  if (only)
    for (uint32_t nid : *only)
      if (nid < shown.size())
        shown[nid] = true;

  GraphLayout out;
  std::vector<std::vector<uint32_t>> hosts =
      o.foldInputs ? foldedInto(g, shown, o.params)
                   : std::vector<std::vector<uint32_t>>(idx.numNodes());
  auto folded = [&](uint32_t nid) { return !hosts[nid].empty(); };
  // The box each node is drawn in: its own, a collapsed group's (named by its first member),
  // or for a folded input its host's.
  std::vector<uint32_t> box(idx.numNodes());
  for (uint32_t nid = 0; nid < idx.numNodes(); ++nid)
    box[nid] = nid;
  std::vector<const CollapsedBox *> collapsedAt(idx.numNodes(), nullptr);
  for (const CollapsedBox &c : o.collapsed) {
    if (c.members.empty() || c.members[0] >= idx.numNodes())
      continue;
    collapsedAt[c.members[0]] = &c;
    for (uint32_t m : c.members)
      if (m < idx.numNodes())
        box[m] = c.members[0];
  }
  for (uint32_t nid = 0; nid < idx.numNodes(); ++nid)
    if (folded(nid))
      box[nid] = box[hosts[nid][0]]; // where finding it leads: its first reader's box
  for (uint32_t nid = 0; nid < idx.numNodes(); ++nid) {
    if (!shown[nid] || box[nid] != nid)
      continue;
    const Node &n = *idx.nodes[nid].node;
    LaidNode ln;
    ln.nid = nid;
    ln.name = n.name;
    bool param = n.isVariable() && o.params.count(n.name);
    ln.kind = !n.isVariable() ? NodeKind::Op : param ? NodeKind::Param : NodeKind::Input;
    ln.op = n.isVariable() ? "" : n.op->name;
    if (const CollapsedBox *c = collapsedAt[nid]) {
      ln.lines = c->lines;
      ln.scope = c->scope;
      if (!c->scope.empty())
        ln.kind = NodeKind::Scope;
      for (uint32_t m = 0; m < idx.numNodes(); ++m)
        if (shown[m] && (box[m] == nid || std::any_of(hosts[m].begin(), hosts[m].end(),
                                                      [&](uint32_t h) { return box[h] == nid; })))
          ln.members.push_back(m);
      sizeBox(ln, o);
      out.nodes.push_back(std::move(ln));
      continue;
    }
    ln.lines = nodeLines(g, nid, param);
    // Folded inputs: a line each, the name and (as the last line of their own box had it) the
    // shape and dtype.
    for (const auto &e : idx.nodes[nid].inputs)
      if (std::find(hosts[e.nodeId].begin(), hosts[e.nodeId].end(), nid) != hosts[e.nodeId].end() &&
          std::find(ln.folded.begin(), ln.folded.end(), e.nodeId) == ln.folded.end()) {
        ln.folded.push_back(e.nodeId);
        // A copy of a param is drawn as the param it copies (its name is the exporter's).
        int copied = copiedParam(g, e.nodeId, o.params);
        if (copied >= 0)
          ln.folded.push_back(static_cast<uint32_t>(copied));
        std::vector<std::string> in =
            nodeLines(g, copied >= 0 ? static_cast<uint32_t>(copied) : e.nodeId, false);
        std::string line = in[1];
        for (size_t k = 2; k < in.size(); ++k)
          line += " " + in[k];
        ln.lines.push_back(line);
      }
    sizeBox(ln, o);
    out.nodes.push_back(std::move(ln));
  }
  std::set<std::pair<uint32_t, uint32_t>> betweenBoxes; // edges drawn to or from a collapsed box
  for (uint32_t nid = 0; nid < idx.numNodes(); ++nid) {
    if (!shown[nid] || folded(nid))
      continue;
    for (uint32_t k = 0; k < idx.nodes[nid].inputs.size(); ++k) {
      const auto &e = idx.nodes[nid].inputs[k];
      if (!shown[e.nodeId] || folded(e.nodeId))
        continue;
      uint32_t from = box[e.nodeId], to = box[nid];
      bool collapsedEnd = from != e.nodeId || to != nid;
      if (from == to || (collapsedEnd && !betweenBoxes.insert({from, to}).second))
        continue;
      LaidEdge le;
      le.from = from;
      le.to = to;
      le.output = collapsedEnd ? 0 : e.index;
      le.input = collapsedEnd ? 0 : k;
      le.labelled = !collapsedEnd && idx.nodes[e.nodeId].node->numVisibleOutputs() > 1;
      out.edges.push_back(std::move(le));
    }
  }
  out.index(); // the boxes are final; placing them moves them only
  if (o.engine == LayoutEngine::Dot)
    placeWithDot(out);
  else
    placeLayered(out, o);
  return out;
}

DotPlacement dotPlacement(const Graph &g, const LayoutOptions &o) {
  LayoutOptions every = o;
  every.foldInputs = false; // DOT has every node
  every.collapsed.clear();
  GraphLayout l = layoutGraph(g, every);
  DotPlacement p;
  p.width = l.width;
  p.height = l.height;
  for (const LaidNode &n : l.nodes)
    p.nodes[n.nid] = {n.x, l.height - n.y, n.w, n.h};
  for (const LaidEdge &e : l.edges) {
    DotPlacement::Curve c;
    for (const Point &q : e.points)
      c.points.push_back({q.x, l.height - q.y});
    c.head = {e.head.x, l.height - e.head.y};
    p.edges[{e.from, e.to, e.input}] = std::move(c);
  }
  return p;
}

std::vector<uint32_t> neighbourhood(const Graph &g, uint32_t centre, int radius) {
  const IndexedGraph &idx = g.index();
  std::vector<std::vector<uint32_t>> adj(idx.numNodes());
  for (uint32_t nid = 0; nid < idx.numNodes(); ++nid)
    for (const auto &e : idx.nodes[nid].inputs) {
      adj[nid].push_back(e.nodeId);
      adj[e.nodeId].push_back(nid);
    }
  std::vector<int> dist(idx.numNodes(), -1);
  std::deque<uint32_t> queue;
  if (centre < idx.numNodes()) {
    dist[centre] = 0;
    queue.push_back(centre);
  }
  while (!queue.empty()) {
    uint32_t n = queue.front();
    queue.pop_front();
    if (dist[n] == radius)
      continue;
    for (uint32_t m : adj[n])
      if (dist[m] < 0) {
        dist[m] = dist[n] + 1;
        queue.push_back(m);
      }
  }
  std::vector<uint32_t> ids;
  for (uint32_t nid = 0; nid < idx.numNodes(); ++nid)
    if (dist[nid] >= 0)
      ids.push_back(nid);
  return ids;
}

std::vector<uint32_t> searchNodes(const Graph &g, const std::string &text) {
  const IndexedGraph &idx = g.index();
  std::string needle = lower(text);
  std::vector<uint32_t> ids;
  for (uint32_t nid = 0; nid < idx.numNodes(); ++nid) {
    const Node &n = *idx.nodes[nid].node;
    if (lower(n.name).find(needle) != std::string::npos ||
        (!n.isVariable() && lower(n.op->name).find(needle) != std::string::npos))
      ids.push_back(nid);
  }
  return ids;
}

} // namespace loupe::gui
