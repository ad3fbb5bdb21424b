// LayeredLayout: the steps of a Sugiyama layout in the order they run — cycles broken, layers,
// long edges split into shared chains, orders swept, x placed, edges drawn — each its own
// function over one Layers value.
#include "view/LayeredLayout.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace loupe::gui {

namespace {

void poll(const LayeredOptions &o) {
  if (o.cancel && o.cancel->load(std::memory_order_relaxed))
    throw LayoutCancelled();
}

// An edge of the acyclic graph: the original edge it stands for, and whether it runs against it.
struct DagEdge {
  uint32_t from = 0, to = 0, original = 0;
  bool reversed = false;
};

// The edges with every DFS back edge reversed (self-loops dropped), so that what remains is
// acyclic. Graphs in topological node order — every graph the compiler makes — have none.
std::vector<DagEdge> breakCycles(const LayeredGraph &g) {
  size_t n = g.sizes.size();
  std::vector<std::vector<uint32_t>> out(n);
  for (uint32_t e = 0; e < g.edges.size(); ++e)
    if (g.edges[e].first != g.edges[e].second)
      out[g.edges[e].first].push_back(e);
  enum : uint8_t { New, OnStack, Done };
  std::vector<uint8_t> state(n, New);
  std::vector<bool> back(g.edges.size(), false);
  std::vector<std::pair<uint32_t, size_t>> stack; // a node and its next out edge
  for (uint32_t root = 0; root < n; ++root) {
    if (state[root] != New)
      continue;
    state[root] = OnStack;
    stack.push_back({root, 0});
    while (!stack.empty()) {
      auto [v, i] = stack.back();
      if (i == out[v].size()) {
        state[v] = Done;
        stack.pop_back();
        continue;
      }
      ++stack.back().second;
      uint32_t e = out[v][i], w = g.edges[e].second;
      if (state[w] == OnStack)
        back[e] = true;
      else if (state[w] == New) {
        state[w] = OnStack;
        stack.push_back({w, 0});
      }
    }
  }
  std::vector<DagEdge> dag;
  for (uint32_t e = 0; e < g.edges.size(); ++e) {
    auto [a, b] = g.edges[e];
    if (a != b)
      dag.push_back(back[e] ? DagEdge{b, a, e, true} : DagEdge{a, b, e, false});
  }
  return dag;
}

// Layers by longest path from the sources; then a source (an input, a weight) moves down to
// just above its first reader instead of waiting at the top with a long edge.
std::vector<int> layerOf(size_t n, const std::vector<DagEdge> &dag) {
  std::vector<std::vector<uint32_t>> succ(n);
  std::vector<uint32_t> indegree(n, 0);
  for (const DagEdge &e : dag) {
    succ[e.from].push_back(e.to);
    ++indegree[e.to];
  }
  std::vector<int> layer(n, 0);
  std::vector<uint32_t> ready;
  for (uint32_t v = 0; v < n; ++v)
    if (indegree[v] == 0)
      ready.push_back(v);
  std::vector<uint32_t> remaining = indegree;
  while (!ready.empty()) {
    uint32_t v = ready.back();
    ready.pop_back();
    for (uint32_t w : succ[v]) {
      layer[w] = std::max(layer[w], layer[v] + 1);
      if (--remaining[w] == 0)
        ready.push_back(w);
    }
  }
  for (uint32_t v = 0; v < n; ++v)
    if (indegree[v] == 0 && !succ[v].empty()) {
      int first = std::numeric_limits<int>::max();
      for (uint32_t w : succ[v])
        first = std::min(first, layer[w]);
      layer[v] = first - 1;
    }
  return layer;
}

// The layered graph: the boxes, then the points long edges pass through (dummies, of no
// size), with each node's neighbours one layer up and one down.
struct Layers {
  std::vector<int> layer;
  std::vector<double> w, h;
  std::vector<bool> dummy;
  std::vector<std::vector<uint32_t>> up, down;
  std::vector<std::vector<uint32_t>> rows; // each layer's nodes, left to right
  std::vector<uint32_t> pos;               // a node's index in its row
  std::vector<double> x;
  std::vector<double> top, height; // each layer's band
  /// Per edge of the DAG, the nodes it passes through, top to bottom.
  std::vector<std::vector<uint32_t>> paths;

  uint32_t add(int l, double width, double height, bool isDummy) {
    layer.push_back(l);
    w.push_back(width);
    h.push_back(height);
    dummy.push_back(isDummy);
    up.emplace_back();
    down.emplace_back();
    return static_cast<uint32_t>(layer.size() - 1);
  }
};

// Splits edges longer than one layer into chains of dummies. The long edges of one producer
// share one chain, down to their deepest reader, and leave it just above their own reader: a
// value read by many later layers (a residual, a mask) is one line that branches.
Layers splitLongEdges(const LayeredGraph &g, const std::vector<DagEdge> &dag,
                      const std::vector<int> &layer) {
  Layers L;
  for (size_t v = 0; v < g.sizes.size(); ++v)
    L.add(layer[v], g.sizes[v].first, g.sizes[v].second, false);
  std::vector<std::vector<uint32_t>> outEdges(g.sizes.size());
  for (uint32_t e = 0; e < dag.size(); ++e)
    outEdges[dag[e].from].push_back(e);
  auto link = [&](uint32_t a, uint32_t b) {
    L.down[a].push_back(b);
    L.up[b].push_back(a);
  };
  L.paths.resize(dag.size());
  for (uint32_t u = 0; u < g.sizes.size(); ++u) {
    std::vector<uint32_t> chain; // chain[k] is at layer[u] + 1 + k
    for (uint32_t e : outEdges[u]) {
      uint32_t v = dag[e].to;
      std::vector<uint32_t> &path = L.paths[e];
      path.push_back(u);
      for (int l = layer[u] + 1; l < layer[v]; ++l) {
        size_t k = static_cast<size_t>(l - layer[u] - 1);
        if (k == chain.size()) {
          chain.push_back(L.add(l, 0, 0, true));
          link(k == 0 ? u : chain[k - 1], chain[k]);
        }
        path.push_back(chain[k]);
      }
      link(path.back(), v);
      path.push_back(v);
    }
  }
  for (auto *adj : {&L.up, &L.down})
    for (auto &list : *adj) {
      std::sort(list.begin(), list.end());
      list.erase(std::unique(list.begin(), list.end()), list.end());
    }
  return L;
}

// The first order: depth-first from each box in turn, so a chain sits in one column and a
// branch beside the chain it leaves.
void firstOrder(Layers &L) {
  int layers = 0;
  for (int l : L.layer)
    layers = std::max(layers, l + 1);
  L.rows.assign(static_cast<size_t>(layers), {});
  std::vector<bool> seen(L.layer.size(), false);
  std::vector<std::pair<uint32_t, size_t>> stack;
  for (uint32_t root = 0; root < L.layer.size(); ++root) {
    if (seen[root])
      continue;
    seen[root] = true;
    L.rows[static_cast<size_t>(L.layer[root])].push_back(root);
    stack.push_back({root, 0});
    while (!stack.empty()) {
      auto [v, i] = stack.back();
      if (i == L.down[v].size()) {
        stack.pop_back();
        continue;
      }
      ++stack.back().second;
      uint32_t w = L.down[v][i];
      if (!seen[w]) {
        seen[w] = true;
        L.rows[static_cast<size_t>(L.layer[w])].push_back(w);
        stack.push_back({w, 0});
      }
    }
  }
  L.pos.assign(L.layer.size(), 0);
  for (const auto &row : L.rows)
    for (uint32_t i = 0; i < row.size(); ++i)
      L.pos[row[i]] = i;
}

// Crossings between layer `l` and the next: segments sorted by their top end, then inversions
// of their bottom ends counted with a Fenwick tree.
size_t crossingsBelow(const Layers &L, size_t l) {
  std::vector<std::pair<uint32_t, uint32_t>> segments;
  for (uint32_t a : L.rows[l])
    for (uint32_t b : L.down[a])
      segments.push_back({L.pos[a], L.pos[b]});
  std::sort(segments.begin(), segments.end());
  size_t n = L.rows[l + 1].size();
  std::vector<uint32_t> tree(n + 1, 0);
  size_t crossings = 0, inserted = 0;
  for (const auto &[a, b] : segments) {
    size_t atMost = 0; // inserted segments whose bottom is at b or left of it
    for (size_t i = b + 1; i > 0; i -= i & (~i + 1))
      atMost += tree[i];
    crossings += inserted - atMost;
    for (size_t i = b + 1; i <= n; i += i & (~i + 1))
      ++tree[i];
    ++inserted;
  }
  return crossings;
}

size_t crossings(const Layers &L) {
  size_t c = 0;
  for (size_t l = 0; l + 1 < L.rows.size(); ++l)
    c += crossingsBelow(L, l);
  return c;
}

// Crossings among the segments from `u` and from `v` to the next layer on one side, were u left
// of v: pairs of their neighbours' places in the wrong order (`a` and `b` sorted).
size_t pairCrossings(const std::vector<uint32_t> &a, const std::vector<uint32_t> &b) {
  size_t c = 0, j = 0;
  for (uint32_t p : a) { // for each of u's places, v's places left of it
    while (j < b.size() && b[j] < p)
      ++j;
    c += j;
  }
  return c;
}

// Swaps neighbours in a row wherever that removes crossings with both adjacent layers (dot's
// transpose step), a bounded number of passes: it settles what barycentres leave tied. With
// `ties`, neighbours that cross as many either way swap too, which walks off a plateau (the two
// sides of a skip connection are found one layer at a time).
void transpose(Layers &L, int passes, bool ties) {
  std::vector<uint32_t> au, av, bu, bv;
  auto places = [&](const std::vector<uint32_t> &adj, std::vector<uint32_t> &out) {
    out.clear();
    for (uint32_t w : adj)
      out.push_back(L.pos[w]);
    std::sort(out.begin(), out.end());
  };
  for (int pass = 0; pass < passes; ++pass) {
    bool improved = false;
    for (auto &row : L.rows)
      for (size_t i = 0; i + 1 < row.size(); ++i) {
        uint32_t u = row[i], v = row[i + 1];
        places(L.up[u], au), places(L.up[v], av);
        places(L.down[u], bu), places(L.down[v], bv);
        size_t now = pairCrossings(au, av) + pairCrossings(bu, bv);
        size_t swapped = pairCrossings(av, au) + pairCrossings(bv, bu);
        if (swapped < now || (ties && swapped == now && now > 0)) {
          std::swap(row[i], row[i + 1]);
          L.pos[row[i]] = static_cast<uint32_t>(i);
          L.pos[row[i + 1]] = static_cast<uint32_t>(i + 1);
          improved = true;
        }
      }
    if (!improved || ties)
      break;
  }
}

// Barycentric sweeps, alternately down (each layer by its upper neighbours' places) and up,
// each followed by transposition, keeping the order with the fewest crossings seen. A node with
// no neighbour on that side keeps its relative place.
void reduceCrossings(Layers &L, const LayeredOptions &o) {
  transpose(L, 4, false);
  size_t best = crossings(L);
  std::vector<std::vector<uint32_t>> bestRows = L.rows;
  std::vector<std::pair<double, uint32_t>> keyed;
  for (int sweep = 0; sweep < o.orderSweeps && best > 0; ++sweep) {
    bool downward = sweep % 2 == 0;
    size_t layers = L.rows.size();
    for (size_t k = 1; k < layers; ++k) {
      size_t l = downward ? k : layers - 1 - k;
      size_t other = downward ? l - 1 : l + 1;
      const auto &adj = downward ? L.up : L.down;
      auto &row = L.rows[l];
      double scale = static_cast<double>(L.rows[other].size()) / static_cast<double>(row.size());
      keyed.clear();
      for (uint32_t v : row) {
        double key = 0;
        if (adj[v].empty()) {
          key = (L.pos[v] + 0.5) * scale - 0.5;
        } else {
          for (uint32_t u : adj[v])
            key += L.pos[u];
          key /= static_cast<double>(adj[v].size());
        }
        keyed.push_back({key, v});
      }
      std::stable_sort(keyed.begin(), keyed.end(),
                       [](const auto &a, const auto &b) { return a.first < b.first; });
      for (uint32_t i = 0; i < row.size(); ++i) {
        row[i] = keyed[i].second;
        L.pos[row[i]] = i;
      }
    }
    poll(o);
    transpose(L, 1, sweep % 4 == 3);
    transpose(L, 4, false);
    size_t c = crossings(L);
    if (c < best) {
      best = c;
      bestRows = L.rows;
    }
  }
  L.rows = std::move(bestRows);
  for (const auto &row : L.rows)
    for (uint32_t i = 0; i < row.size(); ++i)
      L.pos[row[i]] = i;
}

// How far apart two neighbours in a row must be, centre to centre.
double gap(const Layers &L, uint32_t a, uint32_t b, const LayeredOptions &o) {
  return (L.w[a] + L.w[b]) / 2 + (L.dummy[a] || L.dummy[b] ? o.nodeSep / 2 : o.nodeSep);
}

// How strongly an edge segment pulls its ends into line: dot's weights, so that long edges
// run straight and boxes bend toward them rather than the reverse.
double pull(const Layers &L, uint32_t a, uint32_t b) {
  return L.dummy[a] && L.dummy[b] ? 8 : L.dummy[a] || L.dummy[b] ? 2 : 1;
}

// x by sweeps over the layers: each layer in turn takes the places that minimise its segments'
// weighted squared horizontal lengths given its neighbours' places, under its order and gaps.
// With y_i = x_i minus the gaps left of i, that is weighted isotonic regression of the targets,
// solved exactly by pool-adjacent-violators.
void placeX(Layers &L, const LayeredOptions &o) {
  L.x.assign(L.layer.size(), 0);
  for (const auto &row : L.rows) {
    double at = 0;
    for (size_t i = 0; i < row.size(); ++i) {
      if (i)
        at += gap(L, row[i - 1], row[i], o);
      L.x[row[i]] = at;
    }
    for (uint32_t v : row)
      L.x[v] -= at / 2; // every row centred on 0 to start
  }
  struct Block {
    double weight, weighted;
    size_t count;
  };
  std::vector<double> target, weight, shift;
  std::vector<Block> blocks;
  size_t layers = L.rows.size();
  for (int sweep = 0; sweep < o.placeSweeps; ++sweep) {
    bool downward = sweep % 2 == 0;
    for (size_t k = 0; k < layers; ++k) {
      const auto &row = L.rows[downward ? k : layers - 1 - k];
      target.assign(row.size(), 0);
      weight.assign(row.size(), 0);
      shift.assign(row.size(), 0);
      for (size_t i = 0; i < row.size(); ++i) {
        uint32_t v = row[i];
        double sum = 0, total = 0;
        for (const auto *adj : {&L.up[v], &L.down[v]})
          for (uint32_t u : *adj) {
            double p = pull(L, u, v);
            sum += p * L.x[u];
            total += p;
          }
        if (total == 0) { // nothing pulls it: it stays, lightly held
          sum = L.x[v] * 0.01;
          total = 0.01;
        }
        if (i)
          shift[i] = shift[i - 1] + gap(L, row[i - 1], v, o);
        target[i] = sum / total - shift[i];
        weight[i] = total;
      }
      blocks.clear();
      for (size_t i = 0; i < row.size(); ++i) {
        blocks.push_back({weight[i], weight[i] * target[i], 1});
        while (blocks.size() > 1) {
          Block &b = blocks.back(), &a = blocks[blocks.size() - 2];
          if (a.weighted / a.weight < b.weighted / b.weight)
            break;
          a = {a.weight + b.weight, a.weighted + b.weighted, a.count + b.count};
          blocks.pop_back();
        }
      }
      size_t i = 0;
      for (const Block &b : blocks)
        for (size_t j = 0; j < b.count; ++j, ++i)
          L.x[row[i]] = b.weighted / b.weight + shift[i];
    }
    poll(o);
  }
}

// Each layer's band: as tall as its tallest box, `rankSep` below the one above.
void placeY(Layers &L, const LayeredOptions &o) {
  L.top.assign(L.rows.size(), 0);
  L.height.assign(L.rows.size(), 0);
  double at = 0;
  for (size_t l = 0; l < L.rows.size(); ++l) {
    for (uint32_t v : L.rows[l])
      L.height[l] = std::max(L.height[l], L.h[v]);
    L.top[l] = at;
    at += L.height[l] + o.rankSep;
  }
}

// An edge's curve through its path's points: straight down through every band it crosses,
// S-shaped (vertical tangents) between bands; reversed edges run back up.
void drawEdge(const Layers &L, const std::vector<uint32_t> &path, bool reversed,
              const LayeredOptions &o, std::vector<Point> &curve, Point &head) {
  auto centreY = [&](uint32_t v) {
    size_t l = static_cast<size_t>(L.layer[v]);
    return L.top[l] + L.height[l] / 2;
  };
  std::vector<Point> pts;
  auto add = [&](double x, double y) {
    if (pts.empty() || std::abs(pts.back().x - x) > 1e-9 || std::abs(pts.back().y - y) > 1e-9)
      pts.push_back({x, y});
  };
  uint32_t u = path.front(), v = path.back();
  size_t lu = static_cast<size_t>(L.layer[u]), lv = static_cast<size_t>(L.layer[v]);
  // Straight through the rest of a band below or above a short box, where that stretch is
  // long enough to hold an arrowhead (a reversed edge's head is at its producer's end).
  double boxBottom = centreY(u) + L.h[u] / 2;
  add(L.x[u], boxBottom);
  if (L.top[lu] + L.height[lu] - boxBottom >= 2 * o.arrow)
    add(L.x[u], L.top[lu] + L.height[lu]);
  for (size_t k = 1; k + 1 < path.size(); ++k) {
    size_t l = static_cast<size_t>(L.layer[path[k]]);
    add(L.x[path[k]], L.top[l]);
    add(L.x[path[k]], L.top[l] + L.height[l]);
  }
  double boxTop = centreY(v) - L.h[v] / 2;
  if (boxTop - L.top[lv] >= 2 * o.arrow)
    add(L.x[v], L.top[lv]);
  add(L.x[v], boxTop);
  if (reversed) // it leaves the top of its producer and enters the bottom of its reader
    std::reverse(pts.begin(), pts.end());
  head = pts.back();
  if (pts.size() >= 2) {
    double dy = head.y - pts[pts.size() - 2].y;
    double cut = std::min(o.arrow, std::abs(dy) / 2);
    pts.back().y -= dy > 0 ? cut : -cut;
  }
  curve.clear();
  curve.push_back(pts.front());
  for (size_t i = 1; i < pts.size(); ++i) {
    Point a = pts[i - 1], b = pts[i];
    double mid = (b.y - a.y) / 2;
    curve.push_back({a.x, a.y + mid});
    curve.push_back({b.x, b.y - mid});
    curve.push_back(b);
  }
}

} // namespace

LayeredDrawing layered(const LayeredGraph &g, const LayeredOptions &o) {
  for (const auto &[a, b] : g.edges)
    if (a >= g.sizes.size() || b >= g.sizes.size())
      fail("layered layout: an edge names box " + std::to_string(std::max(a, b)) + " of " +
           std::to_string(g.sizes.size()));
  std::vector<DagEdge> dag = breakCycles(g);
  poll(o);
  Layers L = splitLongEdges(g, dag, layerOf(g.sizes.size(), dag));
  poll(o);
  firstOrder(L);
  reduceCrossings(L, o);
  placeX(L, o);
  placeY(L, o);

  LayeredDrawing d;
  d.layers = L.rows.size();
  double left = std::numeric_limits<double>::max(), right = std::numeric_limits<double>::lowest();
  for (size_t v = 0; v < L.layer.size(); ++v) {
    left = std::min(left, L.x[v] - L.w[v] / 2);
    right = std::max(right, L.x[v] + L.w[v] / 2);
  }
  if (L.layer.empty())
    left = right = 0;
  for (double &x : L.x)
    x -= left;
  d.width = right - left;
  d.height = L.rows.empty() ? 0 : L.top.back() + L.height.back();
  for (size_t v = 0; v < g.sizes.size(); ++v) {
    size_t l = static_cast<size_t>(L.layer[v]);
    d.centres.push_back({L.x[v], L.top[l] + L.height[l] / 2});
  }
  d.edges.resize(g.edges.size());
  d.heads.resize(g.edges.size());
  for (size_t e = 0; e < dag.size(); ++e)
    drawEdge(L, L.paths[e], dag[e].reversed, o, d.edges[dag[e].original], d.heads[dag[e].original]);
  return d;
}

size_t countCrossings(const std::vector<std::vector<Point>> &edges,
                      const std::vector<std::pair<uint32_t, uint32_t>> &ends) {
  struct Segment {
    Point a, b;
    uint32_t edge;
  };
  std::vector<Segment> segments;
  double x0 = std::numeric_limits<double>::max(), y0 = x0, x1 = -x0, y1 = -x0;
  for (uint32_t e = 0; e < edges.size(); ++e)
    for (size_t i = 1; i < edges[e].size(); ++i) {
      Segment s{edges[e][i - 1], edges[e][i], e};
      segments.push_back(s);
      x0 = std::min({x0, s.a.x, s.b.x}), x1 = std::max({x1, s.a.x, s.b.x});
      y0 = std::min({y0, s.a.y, s.b.y}), y1 = std::max({y1, s.a.y, s.b.y});
    }
  if (segments.empty())
    return 0;
  // A grid of about one segment per cell; a pair is tested in the first cell both cover.
  double cell = std::max(
      1.0, std::sqrt((x1 - x0 + 1) * (y1 - y0 + 1) / static_cast<double>(segments.size())));
  auto cx = [&](double x) { return static_cast<long>((x - x0) / cell); };
  auto cy = [&](double y) { return static_cast<long>((y - y0) / cell); };
  long columns = cx(x1) + 1;
  std::vector<std::vector<uint32_t>> grid(static_cast<size_t>(columns * (cy(y1) + 1)));
  for (uint32_t s = 0; s < segments.size(); ++s) {
    const Segment &g = segments[s];
    for (long j = cy(std::min(g.a.y, g.b.y)); j <= cy(std::max(g.a.y, g.b.y)); ++j)
      for (long i = cx(std::min(g.a.x, g.b.x)); i <= cx(std::max(g.a.x, g.b.x)); ++i)
        grid[static_cast<size_t>(j * columns + i)].push_back(s);
  }
  auto side = [](Point p, Point q, Point r) {
    double c = (q.x - p.x) * (r.y - p.y) - (q.y - p.y) * (r.x - p.x);
    return c > 1e-9 ? 1 : c < -1e-9 ? -1 : 0;
  };
  size_t count = 0;
  for (size_t c = 0; c < grid.size(); ++c) {
    long ci = static_cast<long>(c) % columns, cj = static_cast<long>(c) / columns;
    const auto &in = grid[c];
    for (size_t p = 0; p < in.size(); ++p)
      for (size_t q = p + 1; q < in.size(); ++q) {
        const Segment &s = segments[in[p]], &t = segments[in[q]];
        auto [sa, sb] = ends[s.edge];
        auto [ta, tb] = ends[t.edge];
        if (s.edge == t.edge || sa == ta || sa == tb || sb == ta || sb == tb)
          continue;
        long fi = std::max(cx(std::min(s.a.x, s.b.x)), cx(std::min(t.a.x, t.b.x)));
        long fj = std::max(cy(std::min(s.a.y, s.b.y)), cy(std::min(t.a.y, t.b.y)));
        if (fi != ci || fj != cj)
          continue; // counted in the first cell both cover
        if (side(s.a, s.b, t.a) * side(s.a, s.b, t.b) < 0 &&
            side(t.a, t.b, s.a) * side(t.a, t.b, s.b) < 0)
          ++count;
      }
  }
  return count;
}

} // namespace loupe::gui
