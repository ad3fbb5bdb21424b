// LayeredLayoutTest: the layered layout on small graphs worked by hand (chains, a diamond, a
// cycle, shared long edges, skip ladders drawn without crossings), its guarantees on seeded random
// graphs (layers top to bottom, no overlaps, every edge from its producer to its reader), its
// cancellation and bad input, and the crossing count it is compared by.
#include "view/LayeredLayout.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <random>

using namespace loupe;
using namespace loupe::gui;

namespace {

LayeredGraph boxes(size_t n, double w = 40, double h = 20) {
  LayeredGraph g;
  g.sizes.assign(n, {w, h});
  return g;
}

// Every two boxes apart by nodeSep at least when they share a band; every edge leaving its
// producer's box and its head on its reader's box.
void expectTidy(const LayeredGraph &g, const LayeredDrawing &d, const LayeredOptions &o) {
  ASSERT_EQ(d.centres.size(), g.sizes.size());
  for (size_t a = 0; a < g.sizes.size(); ++a)
    for (size_t b = a + 1; b < g.sizes.size(); ++b) {
      const auto &[wa, ha] = g.sizes[a];
      const auto &[wb, hb] = g.sizes[b];
      bool sameBand = std::abs(d.centres[a].y - d.centres[b].y) < (ha + hb) / 2;
      if (sameBand) {
        EXPECT_GE(std::abs(d.centres[a].x - d.centres[b].x), (wa + wb) / 2 + o.nodeSep - 1e-6)
            << a << " and " << b << " overlap";
      }
    }
  for (size_t a = 0; a < g.sizes.size(); ++a) {
    EXPECT_GE(d.centres[a].x - g.sizes[a].first / 2, -1e-9);
    EXPECT_LE(d.centres[a].x + g.sizes[a].first / 2, d.width + 1e-9);
    EXPECT_LE(d.centres[a].y + g.sizes[a].second / 2, d.height + 1e-9);
  }
  for (size_t e = 0; e < g.edges.size(); ++e) {
    auto [from, to] = g.edges[e];
    if (from == to)
      continue;
    const auto &p = d.edges[e];
    ASSERT_GE(p.size(), 4u);
    EXPECT_EQ((p.size() - 1) % 3, 0u) << "1 + 3k control points";
    // Forward edges leave the bottom of their producer and end on the top of their reader.
    bool down = d.centres[to].y > d.centres[from].y;
    double fromEdge = d.centres[from].y + (down ? 1 : -1) * g.sizes[from].second / 2;
    double toEdge = d.centres[to].y + (down ? -1 : 1) * g.sizes[to].second / 2;
    EXPECT_NEAR(p.front().x, d.centres[from].x, 1e-9);
    EXPECT_NEAR(p.front().y, fromEdge, 1e-9);
    EXPECT_NEAR(d.heads[e].x, d.centres[to].x, 1e-9);
    EXPECT_NEAR(d.heads[e].y, toEdge, 1e-9);
    EXPECT_NEAR(std::abs(d.heads[e].y - p.back().y), o.arrow, 1e-9);
  }
}

} // namespace

TEST(LayeredLayout, AChainRunsStraightDown) {
  LayeredGraph g = boxes(4);
  g.edges = {{0, 1}, {1, 2}, {2, 3}};
  LayeredOptions o;
  LayeredDrawing d = layered(g, o);
  EXPECT_EQ(d.layers, 4u);
  for (size_t v = 0; v < 4; ++v) {
    EXPECT_DOUBLE_EQ(d.centres[v].x, 20); // one column, at the left edge
    EXPECT_DOUBLE_EQ(d.centres[v].y, 10 + v * (20 + o.rankSep));
  }
  EXPECT_DOUBLE_EQ(d.width, 40);
  EXPECT_DOUBLE_EQ(d.height, 4 * 20 + 3 * o.rankSep);
  expectTidy(g, d, o);
  // A straight edge: every control point on the column.
  for (const Point &p : d.edges[0])
    EXPECT_DOUBLE_EQ(p.x, 20);
}

TEST(LayeredLayout, ADiamondCentresItsEnds) {
  LayeredGraph g = boxes(4);
  g.edges = {{0, 1}, {0, 2}, {1, 3}, {2, 3}};
  LayeredOptions o;
  LayeredDrawing d = layered(g, o);
  expectTidy(g, d, o);
  EXPECT_DOUBLE_EQ(d.centres[1].y, d.centres[2].y);
  // Side by side, one gap apart, with the top and bottom boxes halfway between them.
  EXPECT_DOUBLE_EQ(std::abs(d.centres[1].x - d.centres[2].x), 40 + o.nodeSep);
  double middle = (d.centres[1].x + d.centres[2].x) / 2;
  EXPECT_NEAR(d.centres[0].x, middle, 1e-6);
  EXPECT_NEAR(d.centres[3].x, middle, 1e-6);
  EXPECT_DOUBLE_EQ(d.width, 2 * 40 + o.nodeSep);
}

TEST(LayeredLayout, ASourceSitsJustAboveItsFirstReader) {
  // 0 -> 1 -> 2 -> 3, and 4 (a weight) read by 3 only: 4 is in 3's layer minus one.
  LayeredGraph g = boxes(5);
  g.edges = {{0, 1}, {1, 2}, {2, 3}, {4, 3}};
  LayeredDrawing d = layered(g);
  EXPECT_DOUBLE_EQ(d.centres[4].y, d.centres[2].y);
}

TEST(LayeredLayout, ACycleIsDrawnWithOneEdgeRunningBackUp) {
  LayeredGraph g = boxes(3);
  g.edges = {{0, 1}, {1, 2}, {2, 0}, {1, 1}};
  LayeredOptions o;
  LayeredDrawing d = layered(g, o);
  EXPECT_LT(d.centres[0].y, d.centres[1].y);
  EXPECT_LT(d.centres[1].y, d.centres[2].y);
  expectTidy(g, d, o);
  // The back edge 2 -> 0 leaves the top of 2 and points at the bottom of 0.
  EXPECT_NEAR(d.edges[2].front().y, d.centres[2].y - 10, 1e-9);
  EXPECT_NEAR(d.heads[2].y, d.centres[0].y + 10, 1e-9);
  EXPECT_TRUE(d.edges[3].empty()); // a self-loop is not drawn
}

TEST(LayeredLayout, LongEdgesOfOneProducerShareTheirWayDown) {
  // 0 feeds 1, 2 and 3 along a chain 1 -> 2 -> 3: the edges 0 -> 2 and 0 -> 3 pass layer 1 at
  // the same place (one line that branches), beside box 1.
  LayeredGraph g = boxes(4);
  g.edges = {{0, 1}, {1, 2}, {2, 3}, {0, 2}, {0, 3}};
  LayeredOptions o;
  LayeredDrawing d = layered(g, o);
  expectTidy(g, d, o);
  double band1 = d.centres[1].y;
  auto xAt = [&](const std::vector<Point> &p) {
    for (const Point &q : p)
      if (std::abs(q.y - band1) <= 10 + 1e-9)
        return q.x;
    return -1.0;
  };
  EXPECT_GE(xAt(d.edges[3]), 0);
  EXPECT_DOUBLE_EQ(xAt(d.edges[3]), xAt(d.edges[4]));
  EXPECT_GE(std::abs(xAt(d.edges[3]) - d.centres[1].x), 20 + o.nodeSep / 2 - 1e-9);
}

TEST(LayeredLayout, SkipLaddersAreDrawnWithoutCrossings) {
  // relu/add rungs whose adds also read the rung two below, the benchmark's ladder: planar, and
  // laid out so (skip edges on alternate sides).
  LayeredGraph g = boxes(2);
  g.edges = {{0, 1}};
  uint32_t a = 0, b = 1;
  for (int i = 0; i < 200; ++i) {
    uint32_t relu = static_cast<uint32_t>(g.sizes.size()), add = relu + 1;
    g.sizes.push_back({40, 20});
    g.sizes.push_back({60, 20});
    g.edges.push_back({b, relu});
    g.edges.push_back({relu, add});
    g.edges.push_back({a, add});
    a = b;
    b = add;
  }
  LayeredOptions o;
  LayeredDrawing d = layered(g, o);
  expectTidy(g, d, o);
  EXPECT_EQ(countCrossings(d.edges, g.edges), 0u);
}

TEST(LayeredLayout, RandomGraphsAreTidy) {
  std::mt19937 rng(7);
  for (int round = 0; round < 5; ++round) {
    size_t n = 60 + round * 40;
    LayeredGraph g;
    for (size_t v = 0; v < n; ++v)
      g.sizes.push_back({20.0 + rng() % 100, 14.0 + 14 * (rng() % 4)});
    for (uint32_t v = 1; v < n; ++v)
      for (int k = 0; k < 1 + static_cast<int>(rng() % 3); ++k)
        g.edges.push_back({static_cast<uint32_t>(rng() % v), v});
    LayeredOptions o;
    LayeredDrawing d = layered(g, o);
    expectTidy(g, d, o);
    for (auto [from, to] : g.edges) // every edge runs down
      EXPECT_LT(d.centres[from].y, d.centres[to].y);
  }
}

TEST(LayeredLayout, ARaisedCancelFlagStopsIt) {
  LayeredGraph g = boxes(100);
  for (uint32_t v = 1; v < 100; ++v)
    g.edges.push_back({v - 1, v});
  std::atomic<bool> cancel{true};
  LayeredOptions o;
  o.cancel = &cancel;
  EXPECT_THROW(layered(g, o), LayoutCancelled);
  cancel = false;
  EXPECT_EQ(layered(g, o).centres.size(), 100u);
}

TEST(LayeredLayout, AnEdgeToNoBoxIsAnError) {
  LayeredGraph g = boxes(2);
  g.edges = {{0, 2}};
  try {
    layered(g);
    FAIL() << "no error";
  } catch (const Error &e) {
    EXPECT_STREQ(e.what(), "layered layout: an edge names box 2 of 2");
  }
}

TEST(LayeredLayout, CrossingsCountProperIntersectionsOfEdgesWithoutACommonBox) {
  // An X between boxes 0 -> 1 and 2 -> 3 crosses once; the same X between edges sharing box 0
  // does not count, nor do segments that only touch.
  std::vector<std::vector<Point>> lines = {{{0, 0}, {10, 10}}, {{10, 0}, {0, 10}}};
  EXPECT_EQ(countCrossings(lines, {{0, 1}, {2, 3}}), 1u);
  EXPECT_EQ(countCrossings(lines, {{0, 1}, {0, 3}}), 0u);
  EXPECT_EQ(countCrossings({{{0, 0}, {10, 10}}, {{10, 10}, {20, 0}}}, {{0, 1}, {2, 3}}), 0u);
  // A polyline crossing three others, far apart on a large canvas (several grid cells).
  std::vector<std::vector<Point>> many = {{{0, 500}, {3000, 500}}};
  std::vector<std::pair<uint32_t, uint32_t>> ends = {{0, 1}};
  for (uint32_t k = 0; k < 3; ++k) {
    many.push_back({{1000.0 * k + 10, 0}, {1000.0 * k + 20, 1000}});
    ends.push_back({2 + 2 * k, 3 + 2 * k});
  }
  EXPECT_EQ(countCrossings(many, ends), 3u);
}
