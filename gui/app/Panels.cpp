// Panels: every panel reads the engine and the view models; every action that asks the compiler
// something runs a command through the viewer, so the console and `:record` see it.
#include "gui/app/Panels.h"

#include "core/DType.h"
#include "core/Error.h"
#include "core/FusedModule.h"
#include "core/Op.h"
#include "gui/model/BufferChart.h"
#include "gui/model/FusionView.h"
#include "gui/model/Overview.h"
#include "gui/model/ProfileView.h"
#include "gui/model/StepDiff.h"

#include <imgui.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <sstream>

namespace loupe::gui {

using view::Change;
using view::GraphLayout;
using view::GroupView;
using view::LaidNode;
using view::NodeKind;

bool parsePanel(const std::string &name, Panel &out) {
  static const std::pair<const char *, Panel> names[] = {{"graph", Panel::Graph},
                                                         {"timeline", Panel::Timeline},
                                                         {"fusion", Panel::Fusion},
                                                         {"loops", Panel::Loops},
                                                         {"buffers", Panel::Buffers}};
  for (const auto &[n, p] : names)
    if (name == n) {
      out = p;
      return true;
    }
  return false;
}

namespace {

ImU32 rgba(uint32_t c, uint8_t alpha = 255) {
  return IM_COL32((c >> 24) & 0xff, (c >> 16) & 0xff, (c >> 8) & 0xff, alpha);
}

const ImU32 kOpFill = IM_COL32(221, 230, 240, 255);
const ImU32 kInputFill = IM_COL32(200, 230, 201, 255);
const ImU32 kParamFill = IM_COL32(245, 230, 200, 255);
const ImU32 kText = IM_COL32(20, 20, 20, 255);
const ImU32 kEdge = IM_COL32(110, 110, 120, 255);
const ImU32 kSelected = IM_COL32(230, 40, 40, 255);
const ImU32 kAdded = IM_COL32(30, 160, 60, 255);
const ImU32 kOutline = IM_COL32(60, 60, 70, 255);
const ImU32 kChangedCol = IM_COL32(240, 150, 0, 255);
const ImU32 kRemoved = IM_COL32(210, 30, 30, 255);

// Runs a read-only command once per snapshot and keeps its output (loops, IR, assembly, why).
const std::string &cachedCommand(AppState &s, const std::string &cmd) {
  const Step *cur = s.viewer.engine().current();
  const void *snap = cur ? static_cast<const void *>(&cur->graph.index()) : nullptr;
  if (snap != s.cacheSnapshot) {
    s.commandCache.clear();
    s.cacheSnapshot = snap;
  }
  auto it = s.commandCache.find(cmd);
  if (it != s.commandCache.end())
    return it->second;
  std::string out;
  s.viewer.run(cmd, &out);
  return s.commandCache.emplace(cmd, out).first->second;
}

/// How one canvas colours its nodes.
struct Styler {
  const std::vector<GroupView> *groups = nullptr; ///< fusion colours and regions
  const view::StepDiff *diff = nullptr;           ///< change outlines
  bool removedSide = false;                       ///< the "before" side of a diff
  std::vector<uint32_t> highlighted;              ///< search hits
  std::set<int> marked;                           ///< groups drawn as differing (compare)
  std::vector<double> timeShare;                  ///< per node, after :profile (else empty)
  double maxShare = 0;                            ///< the largest of them
};

// Width of the profile's bar chart beside the graph.
constexpr float kBarChartWidth = 380;

// The zoom at which the whole layout fits a canvas of `size` with a margin.
double fitZoom(const GraphLayout &l, ImVec2 size) {
  return std::min(size.x / std::max(1.0, l.width + 40), size.y / std::max(1.0, l.height + 40));
}

void fit(CanvasView &cv, const GraphLayout &l, ImVec2 size) {
  cv.zoom = std::clamp(fitZoom(l, size), 0.05, 1.5);
  cv.panX = (size.x - l.width * cv.zoom) / 2;
  cv.panY = std::max(10.0, (size.y - l.height * cv.zoom) / 2);
  cv.fitPending = false;
  cv.fitted = &l;
}

// The first view of a layout: the whole graph when it fits with legible labels (zoom 0.8 or
// more), else zoom 1 (labels at the UI font's size) with the graph's first node, an input, at
// the top centre; Fit shows the whole graph.
void firstView(CanvasView &cv, const GraphLayout &l, ImVec2 size) {
  if (fitZoom(l, size) >= 0.8 || l.nodes.empty())
    return fit(cv, l, size);
  const LaidNode *top = &l.nodes[0];
  for (const LaidNode &n : l.nodes)
    if (n.y - n.h / 2 < top->y - top->h / 2)
      top = &n;
  cv.zoom = 1;
  cv.panX = size.x / 2 - top->x;
  cv.panY = 20 - (top->y - top->h / 2);
  cv.fitted = &l;
}

// Pans so that node box `n` is in the middle of a canvas of `size`, when any of it is outside.
void bringIntoView(CanvasView &cv, const LaidNode &n, ImVec2 size) {
  double left = cv.panX + (n.x - n.w / 2) * cv.zoom, right = cv.panX + (n.x + n.w / 2) * cv.zoom;
  double top = cv.panY + (n.y - n.h / 2) * cv.zoom, bottom = cv.panY + (n.y + n.h / 2) * cv.zoom;
  if (left >= 0 && top >= 0 && right <= size.x && bottom <= size.y)
    return;
  cv.panX = size.x / 2 - n.x * cv.zoom;
  cv.panY = size.y / 2 - n.y * cv.zoom;
}

// Draws a laid-out graph in a canvas of `size` and handles pan, zoom and node clicks. Returns
// the node id clicked this frame (-1 for none); `ctrl` tells whether ctrl was held.
int drawCanvas(const char *id, const Graph &g, const GraphLayout &l, CanvasView &cv, ImVec2 size,
               const Styler &st, int selected, int second, bool *ctrl) {
  ImGui::BeginChild(id, size, true,
                    ImGuiWindowFlags_NoScrollbar | ImGuiWindowFlags_NoScrollWithMouse);
  ImVec2 origin = ImGui::GetCursorScreenPos();
  cv.originX = origin.x;
  cv.originY = origin.y;
  ImVec2 avail = ImGui::GetContentRegionAvail();
  cv.width = avail.x;
  cv.height = avail.y;
  if (cv.fitPending) {
    fit(cv, l, avail);
  } else if (cv.fitted != &l && cv.keepInView >= 0) {
    cv.fitted = &l;
    if (int i = l.find(static_cast<uint32_t>(cv.keepInView)); i >= 0)
      bringIntoView(cv, l.nodes[static_cast<size_t>(i)], avail);
  } else if (cv.fitted != &l) {
    firstView(cv, l, avail);
  }
  cv.keepInView = -1;
  cv.doubleClicked = false;
  // A newly selected node (by search, --select or a click on a box half outside) comes into
  // view.
  if (selected != cv.centred) {
    cv.centred = selected;
    if (int i = selected >= 0 ? l.find(static_cast<uint32_t>(selected)) : -1; i >= 0)
      bringIntoView(cv, l.nodes[static_cast<size_t>(i)], avail);
  }
  ImGui::InvisibleButton("canvas", avail,
                         ImGuiButtonFlags_MouseButtonLeft | ImGuiButtonFlags_MouseButtonRight);
  ImGuiIO &io = ImGui::GetIO();
  bool hovered = ImGui::IsItemHovered();
  // A press on the overview map moves the window there, and dragging on it keeps moving it;
  // elsewhere a drag pans the canvas.
  view::CanvasWindow win{avail.x, avail.y, cv.zoom, cv.panX, cv.panY};
  view::Overview ov = view::overviewOf(l.width, l.height, win);
  bool onMap = ov.shown && ov.map.contains(io.MouseClickedPos[0].x - origin.x,
                                           io.MouseClickedPos[0].y - origin.y);
  if (ImGui::IsItemActive() && onMap) {
    view::centreOn(ov, io.MousePos.x - origin.x, io.MousePos.y - origin.y, win);
    cv.panX = win.panX;
    cv.panY = win.panY;
  } else if (ImGui::IsItemActive() && ImGui::IsMouseDragging(ImGuiMouseButton_Left, 2.0f)) {
    cv.panX += io.MouseDelta.x;
    cv.panY += io.MouseDelta.y;
  }
  if (hovered && io.MouseWheel != 0) {
    double old = cv.zoom;
    cv.zoom = std::clamp(cv.zoom * std::pow(1.15, io.MouseWheel), 0.03, 4.0);
    double mx = io.MousePos.x - origin.x, my = io.MousePos.y - origin.y;
    cv.panX = mx - (mx - cv.panX) * cv.zoom / old;
    cv.panY = my - (my - cv.panY) * cv.zoom / old;
  }
  auto at = [&](double x, double y) {
    return ImVec2(static_cast<float>(origin.x + cv.panX + x * cv.zoom),
                  static_cast<float>(origin.y + cv.panY + y * cv.zoom));
  };
  ImDrawList *dl = ImGui::GetWindowDrawList();
  dl->PushClipRect(origin, ImVec2(origin.x + avail.x, origin.y + avail.y), true);

  // Group regions first, under everything.
  const IndexedGraph &idx = g.index();
  std::vector<int> groupOf(idx.numNodes(), -1);
  std::string hoverTip;
  if (st.groups) {
    for (const GroupView &gv : *st.groups)
      for (uint32_t m : gv.members)
        if (m < groupOf.size())
          groupOf[m] = gv.index;
    for (const view::GroupRegion &r : view::groupRegions(*st.groups, l, 8)) {
      const GroupView &gv = (*st.groups)[static_cast<size_t>(r.group)];
      ImVec2 a = at(r.x0, r.y0), b = at(r.x1, r.y1);
      dl->AddRectFilled(a, b, rgba(gv.colour, 60), 8.0f);
      dl->AddRect(a, b, rgba(gv.colour), 8.0f, 0, 2.0f);
      if (st.marked.count(gv.index))
        dl->AddRect(a, b, kChangedCol, 8.0f, 0, 5.0f);
      if (hovered && io.MousePos.x >= a.x && io.MousePos.x <= b.x && io.MousePos.y >= a.y &&
          io.MousePos.y <= b.y)
        hoverTip = gv.function + "\npattern " + gv.pattern + "\nroot " + gv.rootName + "\nmaster " +
                   (gv.masterName.empty() ? "None" : gv.masterName);
    }
  }

  // Zoomed out so far that labels are not drawn, curves get a few segments and boxes square
  // corners: on a large graph the software rasteriser spends most of a frame on their
  // triangles, and at this size they look the same.
  bool coarse = cv.zoom <= 0.35;
  // What lies wholly outside the canvas is not drawn (a large graph at a legible zoom shows a
  // small part of itself); a point's screen position is tested against the canvas with margin.
  ImVec2 clipMin = origin, clipMax(origin.x + avail.x, origin.y + avail.y);
  auto outside = [&](ImVec2 a, ImVec2 b) {
    return b.x < clipMin.x || a.x > clipMax.x || b.y < clipMin.y || a.y > clipMax.y;
  };
  for (const view::LaidEdge &e : l.edges) {
    const auto &p = e.points;
    if (!p.empty()) {
      double x0 = e.head.x, x1 = e.head.x, y0 = e.head.y, y1 = e.head.y;
      for (const auto &q : p) {
        x0 = std::min(x0, q.x), x1 = std::max(x1, q.x);
        y0 = std::min(y0, q.y), y1 = std::max(y1, q.y);
      }
      if (outside(at(x0 - 10, y0 - 10), at(x1 + 10, y1 + 10)))
        continue;
    }
    for (size_t i = 1; i + 2 < p.size(); i += 3)
      dl->AddBezierCubic(at(p[i - 1].x, p[i - 1].y), at(p[i].x, p[i].y), at(p[i + 1].x, p[i + 1].y),
                         at(p[i + 2].x, p[i + 2].y), kEdge, 1.2f, coarse ? 4 : 0);
    if (!p.empty()) {
      ImVec2 tail = at(p.back().x, p.back().y), head = at(e.head.x, e.head.y);
      dl->AddLine(tail, head, kEdge, 1.2f);
      float dx = head.x - tail.x, dy = head.y - tail.y, len = std::sqrt(dx * dx + dy * dy);
      if (len > 0.5f) {
        dx /= len;
        dy /= len;
        float s = static_cast<float>(std::max(3.0, 7 * cv.zoom));
        dl->AddTriangleFilled(
            head, ImVec2(head.x - dx * s - dy * s / 2, head.y - dy * s + dx * s / 2),
            ImVec2(head.x - dx * s + dy * s / 2, head.y - dy * s - dx * s / 2), kEdge);
      }
      if (e.labelled && cv.zoom > 0.3) {
        ImVec2 q = at(p.front().x + 4, p.front().y + 2);
        dl->AddText(q, kSelected, std::to_string(e.output).c_str());
      }
    }
  }

  auto fillOf = [&](const LaidNode &n) {
    if (n.nid < st.timeShare.size() && st.timeShare[n.nid] >= 0)
      return rgba(view::heatColour(st.timeShare[n.nid], st.maxShare));
    if (st.groups && groupOf[n.nid] >= 0)
      return rgba(view::groupColour(groupOf[n.nid]));
    return n.kind == NodeKind::Input   ? kInputFill
           : n.kind == NodeKind::Param ? kParamFill
                                       : kOpFill;
  };
  int clicked = -1;
  bool showText = !coarse;
  for (const LaidNode &n : l.nodes) {
    ImVec2 a = at(n.x - n.w / 2, n.y - n.h / 2), b = at(n.x + n.w / 2, n.y + n.h / 2);
    if (outside(a, b))
      continue;
    ImU32 fill = fillOf(n);
    float rounding = coarse                   ? 0.0f
                     : n.kind == NodeKind::Op ? 3.0f
                                              : static_cast<float>(n.h * cv.zoom / 2);
    dl->AddRectFilled(a, b, fill, rounding);
    ImU32 outline = kOutline;
    float thick = 1.0f;
    // Marks scale down with the graph so that, zoomed out, they do not swallow the boxes.
    const float mark = std::max(1.5f, static_cast<float>(3 * std::min(1.0, cv.zoom)));
    if (st.diff) {
      Change c = st.diff->of(n.name);
      if (c == Change::Added && !st.removedSide)
        outline = kAdded, thick = mark;
      else if (c == Change::Changed)
        outline = kChangedCol, thick = mark;
      else if (c == Change::Removed && st.removedSide)
        outline = kRemoved, thick = mark;
    }
    if (st.groups && groupOf[n.nid] >= 0 && st.marked.count(groupOf[n.nid]))
      outline = kChangedCol, thick = 2 * mark;
    if (std::find(st.highlighted.begin(), st.highlighted.end(), n.nid) != st.highlighted.end())
      outline = IM_COL32(0, 120, 255, 255), thick = mark;
    if (static_cast<int>(n.nid) == selected || static_cast<int>(n.nid) == second)
      outline = kSelected, thick = mark;
    // (Zoomed out, only marked boxes keep an outline: the fill already separates them.)
    if (!coarse || outline != kOutline)
      dl->AddRect(a, b, outline, rounding, 0, thick);
    if (showText && st.groups && groupOf[n.nid] >= 0) {
      const GroupView &gv = (*st.groups)[static_cast<size_t>(groupOf[n.nid])];
      // Root and master badges in the corner (with the labels: zoomed out they would cover the
      // boxes).
      std::string badge =
          std::string(gv.rootName == n.name ? "R" : "") + (gv.masterName == n.name ? "M" : "");
      if (!badge.empty())
        dl->AddText(ImVec2(b.x - 9.0f * static_cast<float>(badge.size()) - 2, a.y + 1), kSelected,
                    badge.c_str());
    }
    if (showText) {
      float fontSize = static_cast<float>(ImGui::GetFontSize() * cv.zoom);
      float lineH = static_cast<float>((ImGui::GetFontSize() + 1) * cv.zoom);
      for (size_t i = 0; i < n.lines.size(); ++i)
        dl->AddText(ImGui::GetFont(), fontSize,
                    ImVec2(a.x + static_cast<float>(6 * cv.zoom),
                           a.y + static_cast<float>(6 * cv.zoom) + lineH * static_cast<float>(i)),
                    kText, n.lines[i].c_str());
    }
    if (hovered && !onMap && ImGui::IsMouseReleased(ImGuiMouseButton_Left) &&
        io.MouseDragMaxDistanceSqr[0] < 16.0f && io.MousePos.x >= a.x && io.MousePos.x <= b.x &&
        io.MousePos.y >= a.y && io.MousePos.y <= b.y) {
      clicked = static_cast<int>(n.nid);
      cv.doubleClicked = io.MouseClickedLastCount[0] >= 2;
      if (ctrl)
        *ctrl = io.KeyCtrl;
    }
  }
  // The overview map over everything, when part of the graph is outside the canvas.
  ov = view::overviewOf(l.width, l.height, {avail.x, avail.y, cv.zoom, cv.panX, cv.panY});
  if (ov.shown) {
    auto onScreen = [&](double x, double y) {
      return ImVec2(static_cast<float>(origin.x + x), static_cast<float>(origin.y + y));
    };
    dl->AddRectFilled(onScreen(ov.map.x0 - 4, ov.map.y0 - 4),
                      onScreen(ov.map.x1 + 4, ov.map.y1 + 4), IM_COL32(250, 250, 252, 235), 4.0f);
    dl->AddRect(onScreen(ov.map.x0 - 4, ov.map.y0 - 4), onScreen(ov.map.x1 + 4, ov.map.y1 + 4),
                IM_COL32(120, 120, 130, 255), 4.0f);
    for (const LaidNode &n : l.nodes) {
      // At least a pixel each, so that a thin chain of ops stays visible.
      double x0 = ov.mapX(n.x - n.w / 2), y0 = ov.mapY(n.y - n.h / 2);
      dl->AddRectFilled(onScreen(x0, y0),
                        onScreen(std::max(ov.mapX(n.x + n.w / 2), x0 + 1),
                                 std::max(ov.mapY(n.y + n.h / 2), y0 + 1)),
                        fillOf(n));
    }
    dl->AddRect(onScreen(ov.window.x0, ov.window.y0), onScreen(ov.window.x1, ov.window.y1),
                IM_COL32(0, 120, 255, 255), 0.0f, 0, 2.0f);
  }
  dl->PopClipRect();
  if (!hoverTip.empty())
    ImGui::SetTooltip("%s", hoverTip.c_str());
  ImGui::EndChild();
  return clicked;
}

const Graph *currentGraph(AppState &s) {
  const Step *cur = s.viewer.engine().current();
  return cur ? &cur->graph : nullptr;
}

size_t currentStepIndex(AppState &s) {
  const Engine &e = s.viewer.engine();
  const Step *cur = e.current();
  for (size_t i = 0; i < e.history().size(); ++i)
    if (&e.history()[i] == cur)
      return i;
  return 0;
}

// Node selection from a canvas click: a plain click selects; ctrl-click picks the second node
// and asks the engine `:why` about the pair.
void handleClick(AppState &s, const Graph &g, int clicked, bool ctrl) {
  if (clicked < 0)
    return;
  if (ctrl && s.selectedNode >= 0 && clicked != s.selectedNode) {
    s.secondNode = clicked;
    const IndexedGraph &idx = g.index();
    std::string cmd = ":why " + idx.nodes[static_cast<uint32_t>(s.selectedNode)].node->name + " " +
                      idx.nodes[static_cast<uint32_t>(clicked)].node->name;
    s.whyText = cachedCommand(s, cmd);
  } else {
    s.selectedNode = clicked;
    s.secondNode = -1;
  }
}

// A double click in the fusion view: the clicked node's group collapses into one box, or a
// collapsed group's box expands; the node stays in view.
void toggleGroup(AppState &s, const std::vector<GroupView> &groups, uint32_t nid, CanvasView &cv) {
  for (const GroupView &gv : groups)
    if (std::find(gv.members.begin(), gv.members.end(), nid) != gv.members.end()) {
      if (!s.collapsed.erase(gv.rootName))
        s.collapsed.insert(gv.rootName);
      cv.keepInView = static_cast<int>(nid);
      return;
    }
}

// After :profile: the kernels longest first, a bar each in its heat colour with its time and
// share; clicking one selects its tvm_op (and so brings it into view).
void kernelBarChart(AppState &s, const Graph &g, float height) {
  const Step *cur = s.viewer.engine().current();
  std::vector<view::KernelBar> bars = view::kernelBars(g, cur->profile);
  ImGui::BeginChild("kernel bars", ImVec2(kBarChartWidth, height), true);
  double longest = bars.empty() ? 1 : bars.front().ms;
  s.barsX = ImGui::GetCursorScreenPos().x;
  s.barsY = ImGui::GetCursorScreenPos().y;
  for (const view::KernelBar &b : bars) {
    ImVec2 at = ImGui::GetCursorScreenPos();
    float w = ImGui::GetContentRegionAvail().x;
    float h = ImGui::GetTextLineHeightWithSpacing();
    ImGui::GetWindowDrawList()->AddRectFilled(
        at, ImVec2(at.x + static_cast<float>(w * b.ms / longest), at.y + h),
        rgba(view::heatColour(b.share, bars.front().share)));
    char label[256];
    std::snprintf(label, sizeof label, "%7.3f ms %4.1f%%  %s##bar%u", b.ms, 100 * b.share,
                  b.label.c_str(), b.nid);
    if (ImGui::Selectable(label, s.selectedNode == static_cast<int>(b.nid))) {
      s.selectedNode = static_cast<int>(b.nid);
      s.secondNode = -1;
    }
  }
  ImGui::EndChild();
}

// The fusion view's "compare with" choice: any other history step with fusion groups.
void compareChoice(AppState &s, size_t step) {
  const auto &history = s.viewer.engine().history();
  std::string current =
      s.compareStep >= 0 && static_cast<size_t>(s.compareStep) < history.size()
          ? "step " + std::to_string(s.compareStep) + ": " + history[s.compareStep].label
          : "nothing";
  ImGui::SetNextItemWidth(320);
  if (ImGui::BeginCombo("compare with", current.c_str())) {
    if (ImGui::Selectable("nothing", s.compareStep < 0))
      s.compareStep = -1;
    for (size_t i = 0; i < history.size(); ++i)
      if (i != step && view::hasGroups(history[i].graph)) {
        std::string label = "step " + std::to_string(i) + ": " + history[i].label;
        if (ImGui::Selectable(label.c_str(), s.compareStep == static_cast<int>(i)))
          s.compareStep = static_cast<int>(i);
      }
    ImGui::EndCombo();
  }
}

// Two partitions side by side: the current step's and the compared one's, each group that the
// other has not outlined thick in orange.
void compareCanvases(AppState &s, Styler &st, size_t step, ImVec2 avail) {
  size_t other = static_cast<size_t>(s.compareStep);
  const Graph &g = s.viewer.engine().history()[step].graph,
              &og = s.viewer.engine().history()[other].graph;
  const std::vector<GroupView> &mine = *st.groups, &theirs = s.viewer.groupsAt(other);
  view::PartitionDiff d = view::comparePartitions(mine, theirs);
  Styler so = st;
  so.groups = &theirs;
  st.marked = d.onlyA;
  so.marked = d.onlyB;
  ImGui::Text("%zu groups of this step's %zu are not in step %zu; %zu of its %zu not here",
              d.onlyA.size(), mine.size(), other, d.onlyB.size(), theirs.size());
  float half = avail.x / 2 - 4, h = ImGui::GetContentRegionAvail().y;
  drawCanvas("fusion", g, s.viewer.layout(step), s.canvases[Panel::Fusion], ImVec2(half, h), st,
             s.selectedNode, -1, nullptr);
  ImGui::SameLine();
  drawCanvas("compared", og, s.viewer.layout(other), s.compared, ImVec2(half, h), so, -1, -1,
             nullptr);
}

void noGraph() { ImGui::TextDisabled("No graph yet: open a session or type a program below."); }

void graphPanel(AppState &s, ImVec2 size, bool fusion) {
  const Graph *g = currentGraph(s);
  if (!g)
    return noGraph();
  size_t step = currentStepIndex(s);
  Styler st;
  if (fusion) {
    const std::vector<GroupView> &groups = s.viewer.groups();
    if (groups.empty()) {
      ImGui::TextDisabled(
          "No fusion groups in this snapshot: :apply GraphFusePartition or :build.");
    } else {
      st.groups = &groups;
      ImGui::TextWrapped(
          "%zu groups. Hover a region for its pattern and function; click a node, then "
          "ctrl-click another to ask why they did or did not fuse; double-click a group "
          "to collapse it into its kernel (and its box to expand it).",
          groups.size());
      if (ImGui::Button("collapse all"))
        for (const GroupView &gv : groups)
          s.collapsed.insert(gv.rootName);
      ImGui::SameLine();
      if (ImGui::Button("expand all"))
        s.collapsed.clear();
      ImGui::SameLine();
      compareChoice(s, step);
    }
    if (!s.whyText.empty())
      ImGui::TextWrapped("%s", s.whyText.c_str());
  } else {
    ImGui::SetNextItemWidth(200);
    // Enter selects the first node found (and so brings it into view).
    if (ImGui::InputTextWithHint("##search", "search by name", s.search, sizeof s.search,
                                 ImGuiInputTextFlags_EnterReturnsTrue) &&
        s.search[0])
      if (std::vector<uint32_t> hits = view::searchNodes(*g, s.search); !hits.empty()) {
        s.selectedNode = static_cast<int>(hits[0]);
        s.secondNode = -1;
      }
    ImGui::SameLine();
    ImGui::Checkbox("neighbourhood of the selected node", &s.neighbourhoodOnly);
    ImGui::SameLine();
    ImGui::SetNextItemWidth(100);
    ImGui::SliderInt("radius", &s.radius, 1, 8);
    if (s.search[0])
      st.highlighted = view::searchNodes(*g, s.search);
  }
  // After :profile of a built graph: its kernels coloured by their share of the run time.
  if (const Step *cur = s.viewer.engine().current();
      !fusion && cur && &cur->graph == g && !cur->profile.empty()) {
    st.timeShare = view::timeShares(*g, cur->profile);
    st.maxShare = *std::max_element(st.timeShare.begin(), st.timeShare.end());
    ImGui::SameLine();
    ImGui::TextDisabled("time:");
    for (double f : {0.0, 0.5, 1.0}) {
      ImGui::SameLine();
      ImU32 c = rgba(view::heatColour(f * st.maxShare, st.maxShare));
      ImGui::PushStyleColor(ImGuiCol_Button, c);
      ImGui::PushStyleColor(ImGuiCol_Text, IM_COL32(20, 20, 20, 255));
      char label[32];
      std::snprintf(label, sizeof label, "%.0f%%##heat%.1f", 100 * f * st.maxShare, f);
      ImGui::SmallButton(label);
      ImGui::PopStyleColor(2);
    }
    ImGui::SameLine();
    ImGui::Checkbox("kernels by time", &s.kernelBars);
  }
  CanvasView &cv = s.canvases[fusion ? Panel::Fusion : Panel::Graph];
  ImGui::SameLine();
  if (ImGui::Button("Fit"))
    cv.fitPending = true;
  ImGui::SameLine();
  if (ImGui::Checkbox("fold inputs into ops", &s.viewer.metrics.foldInputs))
    cv.fitPending = true;
  bool part = !fusion && s.neighbourhoodOnly && s.selectedNode >= 0 &&
              static_cast<uint32_t>(s.selectedNode) < g->index().numNodes();
  const GraphLayout &l = part     ? s.viewer.layout(step, s.selectedNode, s.radius)
                         : fusion ? s.viewer.layout(step, -1, -1, s.collapsed)
                                  : s.viewer.layout(step);
  ImVec2 avail = ImGui::GetContentRegionAvail();
  if (fusion && st.groups && s.compareStep >= 0 &&
      static_cast<size_t>(s.compareStep) < s.viewer.engine().history().size()) {
    compareCanvases(s, st, step, avail);
    return;
  }
  if (!st.timeShare.empty() && s.kernelBars) {
    kernelBarChart(s, *g, avail.y);
    ImGui::SameLine();
    avail = ImGui::GetContentRegionAvail();
  }
  bool ctrl = false;
  int clicked = drawCanvas(fusion ? "fusion" : "graph", *g, l, cv, avail, st, s.selectedNode,
                           s.secondNode, &ctrl);
  if (fusion && st.groups && clicked >= 0 && cv.doubleClicked)
    toggleGroup(s, *st.groups, static_cast<uint32_t>(clicked), cv);
  handleClick(s, *g, clicked, ctrl);
  (void)size;
}

bool changedStep(const Step &st) { return st.change.rfind("graph unchanged", 0) != 0; }

// One row of the timeline's change list in its colour.
void changeRow(const view::ChangeRow &r) {
  using view::RowKind;
  if (r.kind == RowKind::Detail)
    return ImGui::BulletText("%s", r.text.c_str());
  if (r.kind == RowKind::None)
    return ImGui::TextDisabled("%s", r.text.c_str());
  if (r.kind == RowKind::Separator) {
    // A line one text row high, so that every row has the height the clipper assumes.
    ImVec2 at = ImGui::GetCursorScreenPos();
    float h = ImGui::GetTextLineHeight(), w = ImGui::GetContentRegionAvail().x;
    ImGui::GetWindowDrawList()->AddLine(ImVec2(at.x, at.y + h / 2), ImVec2(at.x + w, at.y + h / 2),
                                        ImGui::GetColorU32(ImGuiCol_Separator));
    return ImGui::Dummy(ImVec2(w, h));
  }
  ImU32 col = r.kind == RowKind::Added         ? kAdded
              : r.kind == RowKind::Removed     ? kRemoved
              : r.kind == RowKind::Changed     ? kChangedCol
              : r.kind == RowKind::DiffAdded   ? IM_COL32(26, 140, 51, 255)
              : r.kind == RowKind::DiffRemoved ? IM_COL32(191, 26, 26, 255)
                                               : IM_COL32(51, 51, 51, 255);
  ImGui::PushStyleColor(ImGuiCol_Text, col);
  ImGui::TextUnformatted(r.text.c_str());
  ImGui::PopStyleColor();
}

// A click on node `nid` of the timeline's after (or before) canvas: what corresponds to it on
// the other side, highlighted in both. After :build a tvm_op maps to the source nodes it
// computes and a source node to its kernel; between other steps nodes map by name.
void pairNodes(AppState &s, const Graph &before, const Graph &after, size_t step, int nid,
               bool inAfter) {
  s.pairStep = static_cast<int>(step);
  s.pairNode = nid;
  s.pairInAfter = inAfter;
  const IndexedGraph &bi = before.index(), &ai = after.index();
  const Graph &from = inAfter ? after : before, &to = inAfter ? before : after;
  std::string name = from.index().nodes[static_cast<uint32_t>(nid)].node->name;
  std::vector<uint32_t> here = {static_cast<uint32_t>(nid)}, there;
  bool built = after.attr("module") && !before.attr("module");
  if (built && inAfter) {
    there = view::sourceNodesOf(after, static_cast<uint32_t>(nid), before);
    std::string names;
    for (uint32_t b : there)
      names += (names.empty() ? "" : ", ") + bi.nodes[b].node->name;
    s.pairText = "kernel " + name + " computes " +
                 (names.empty() ? "no node of step " : names + " of step ") +
                 std::to_string(step - 1);
  } else if (built) {
    int k = view::kernelOf(after, before, static_cast<uint32_t>(nid));
    if (k >= 0)
      there = {static_cast<uint32_t>(k)};
    s.pairText =
        name + (k >= 0
                    ? " runs in kernel " + ai.nodes[static_cast<uint32_t>(k)].node->name + " (" +
                          ai.nodes[static_cast<uint32_t>(k)].node->parsed.getStr("func_name") + ")"
                    : std::string(" runs in no kernel (the build rewrote it)"));
  } else {
    int other = to.index().findByName(name);
    if (other >= 0)
      there = {static_cast<uint32_t>(other)};
    s.pairText = name + (other >= 0 ? " is in both steps"
                         : inAfter  ? " is new in this step"
                                    : " is gone in this step");
  }
  s.pairAfter = inAfter ? here : there;
  s.pairBefore = inAfter ? there : here;
}

void timelinePanel(AppState &s) {
  const Engine &e = s.viewer.engine();
  if (e.history().empty())
    return noGraph();
  ImGui::BeginChild("steps", ImVec2(300, 0), true);
  ImGui::Checkbox("hide unchanged steps", &s.hideUnchanged);
  ImGui::Checkbox("overlay before and after", &s.overlay);
  ImGui::Separator();
  size_t chosen = s.timelineStep >= 0 ? static_cast<size_t>(s.timelineStep) : currentStepIndex(s);
  chosen = std::min(chosen, e.history().size() - 1);
  for (size_t i = 0; i < e.history().size(); ++i) {
    const Step &st = e.history()[i];
    bool changed = changedStep(st);
    if (s.hideUnchanged && !changed)
      continue;
    char label[512];
    std::snprintf(label, sizeof label, "%s %zu  %s  (%.1f ms)", changed ? "*" : " ", i,
                  st.label.c_str(), st.millis);
    ImGui::PushStyleColor(ImGuiCol_Text,
                          changed ? ImVec4(0.05f, 0.05f, 0.05f, 1) : ImVec4(0.5f, 0.5f, 0.5f, 1));
    if (ImGui::Selectable(label, i == chosen))
      s.timelineStep = static_cast<int>(i);
    ImGui::PopStyleColor();
  }
  ImGui::EndChild();
  ImGui::SameLine();
  ImGui::BeginChild("stepview", ImVec2(0, 0), false);
  const Step &after = e.history()[chosen];
  ImGui::Text("step %zu: %s (%s)", chosen, after.label.c_str(), after.change.c_str());
  if (chosen == 0) {
    ImGui::TextDisabled("The first step has nothing before it.");
    ImGui::EndChild();
    return;
  }
  const Step &before = e.history()[chosen - 1];
  const view::StepDiff &d = s.viewer.diff(chosen);
  ImVec2 avail = ImGui::GetContentRegionAvail();
  float graphH = avail.y * 0.62f;
  Styler sb, sa;
  sb.diff = sa.diff = &d;
  sb.removedSide = true;
  if (s.pairStep != static_cast<int>(chosen))
    s.pairNode = -1;
  sb.highlighted = s.pairNode >= 0 ? s.pairBefore : std::vector<uint32_t>{};
  sa.highlighted = s.pairNode >= 0 ? s.pairAfter : std::vector<uint32_t>{};
  if (s.overlay) {
    drawCanvas("overlay", after.graph, s.viewer.layout(chosen), s.after, ImVec2(avail.x, graphH),
               sa, -1, -1, nullptr);
  } else {
    float half = avail.x / 2 - 4;
    int inBefore = drawCanvas("before", before.graph, s.viewer.layout(chosen - 1), s.before,
                              ImVec2(half, graphH), sb, -1, -1, nullptr);
    ImGui::SameLine();
    int inAfter = drawCanvas("after", after.graph, s.viewer.layout(chosen), s.after,
                             ImVec2(half, graphH), sa, -1, -1, nullptr);
    if (inBefore >= 0 || inAfter >= 0)
      pairNodes(s, before.graph, after.graph, chosen, inAfter >= 0 ? inAfter : inBefore,
                inAfter >= 0);
  }
  if (s.pairNode >= 0)
    ImGui::TextWrapped("%s", s.pairText.c_str());
  ImGui::BeginChild("changes", ImVec2(0, 0), true);
  // Only the rows in view are laid out: a large network's step has thousands.
  ImGuiListClipper clip;
  clip.Begin(static_cast<int>(d.rows.size()));
  while (clip.Step())
    for (int i = clip.DisplayStart; i < clip.DisplayEnd; ++i)
      changeRow(d.rows[static_cast<size_t>(i)]);
  ImGui::EndChild();
  ImGui::EndChild();
}

// The lowered loops as a tree: a line ending in `{` opens a node, `}` closes it.
void loopTree(const std::string &text) {
  std::istringstream in(text);
  std::string line;
  std::vector<bool> open; // whether each enclosing node is expanded
  int id = 0;
  auto visible = [&] { return std::all_of(open.begin(), open.end(), [](bool b) { return b; }); };
  while (std::getline(in, line)) {
    std::string trimmed = line.substr(std::min(line.size(), line.find_first_not_of(' ')));
    if (trimmed == "}") {
      if (!open.empty()) {
        bool wasOpen = open.back();
        open.pop_back();
        if (wasOpen && visible())
          ImGui::TreePop();
      }
      continue;
    }
    bool parallel = trimmed.find("parallel") == 0, vec = trimmed.find("vectorized") == 0,
         unrolled = trimmed.find("unrolled") == 0;
    ImVec4 col = parallel   ? ImVec4(0.75f, 0.2f, 0.1f, 1)
                 : vec      ? ImVec4(0.1f, 0.3f, 0.8f, 1)
                 : unrolled ? ImVec4(0.5f, 0.2f, 0.6f, 1)
                            : ImVec4(0.1f, 0.1f, 0.1f, 1);
    if (!trimmed.empty() && trimmed.back() == '{') {
      if (!visible()) {
        open.push_back(false);
        continue;
      }
      ImGui::PushID(id++);
      ImGui::PushStyleColor(ImGuiCol_Text, col);
      bool o = ImGui::TreeNodeEx(trimmed.c_str(), ImGuiTreeNodeFlags_DefaultOpen, "%s%s",
                                 trimmed.c_str(),
                                 parallel ? "   [parallel]"
                                 : vec    ? "   [vectorized]"
                                          : "");
      ImGui::PopStyleColor();
      ImGui::PopID();
      open.push_back(o);
    } else if (visible()) {
      ImGui::TextColored(col, "%s", trimmed.c_str());
    }
  }
  while (!open.empty()) {
    bool wasOpen = open.back();
    open.pop_back();
    if (wasOpen && visible())
      ImGui::TreePop();
  }
}

void loopsPanel(AppState &s) {
  const Graph *g = currentGraph(s);
  if (!g)
    return noGraph();
  const GraphAttr *m = g->attr("module");
  if (!m || !m->opaque) {
    ImGui::TextDisabled("No fused functions in this snapshot: :apply GraphFuseCompile or :build.");
    return;
  }
  auto module = std::static_pointer_cast<const FusedModule>(m->opaque);
  ImGui::BeginChild("functions", ImVec2(260, 0), true);
  for (const auto &[name, fn] : module->functions)
    if (ImGui::Selectable(name.c_str(), name == s.loopFunction))
      s.loopFunction = name;
  ImGui::EndChild();
  ImGui::SameLine();
  ImGui::BeginChild("code", ImVec2(0, 0), false);
  if (s.loopFunction.empty() || !module->functions.count(s.loopFunction))
    s.loopFunction = module->functions.begin()->first;
  bool compiled = module->compiled != nullptr;
  if (ImGui::BeginTabBar("codeTabs")) {
    if (ImGui::BeginTabItem("Loops")) {
      ImGui::BeginChild("loops");
      loopTree(cachedCommand(s, ":lower " + s.loopFunction));
      ImGui::EndChild();
      ImGui::EndTabItem();
    }
    // The compiled forms: a tab each, filled by the engine's command once built.
    struct CodeTab {
      const char *tab, *command, *missing;
    };
    for (const CodeTab &t : {CodeTab{"LLVM IR", ":llvm ", "the LLVM module"},
                             CodeTab{"Assembly", ":asm ", "the machine code"}}) {
      if (!ImGui::BeginTabItem(t.tab))
        continue;
      ImGui::BeginChild(t.tab, ImVec2(0, 0), false, ImGuiWindowFlags_HorizontalScrollbar);
      if (compiled)
        ImGui::TextUnformatted(cachedCommand(s, t.command + s.loopFunction).c_str());
      else
        ImGui::TextDisabled("Not compiled yet: :build makes %s.", t.missing);
      ImGui::EndChild();
      ImGui::EndTabItem();
    }
    ImGui::EndTabBar();
  }
  ImGui::EndChild();
}

std::string bytesText(int64_t b) {
  char buf[32];
  if (b >= 1 << 20)
    std::snprintf(buf, sizeof buf, "%.1f MB", static_cast<double>(b) / (1 << 20));
  else if (b >= 1 << 10)
    std::snprintf(buf, sizeof buf, "%.1f KB", static_cast<double>(b) / (1 << 10));
  else
    std::snprintf(buf, sizeof buf, "%lld B", static_cast<long long>(b));
  return buf;
}

void buffersPanel(AppState &s) {
  const Graph *g = currentGraph(s);
  if (!g)
    return noGraph();
  if (!g->attr("storage_id") || !g->attr("shape") || !g->attr("dtype")) {
    ImGui::TextDisabled("No storage plan in this snapshot: :build (or PlanMemory) makes one.");
    return;
  }
  view::BufferChart c;
  try {
    c = view::bufferChart(*g);
  } catch (const Error &e) {
    ImGui::TextColored(ImVec4(0.8f, 0.1f, 0.1f, 1), "%s", e.what());
    return;
  }
  ImGui::Text("planned %s in %zu slots; one buffer per entry would take %s (%.0f%%)",
              bytesText(c.planned).c_str(), c.rows.size(), bytesText(c.naive).c_str(),
              c.naive ? 100.0 * static_cast<double>(c.planned) / static_cast<double>(c.naive) : 0);
  ImGui::BeginChild("chart", ImVec2(0, 0), true, ImGuiWindowFlags_HorizontalScrollbar);
  ImDrawList *dl = ImGui::GetWindowDrawList();
  const float labelW = 170, rowH = 22;
  float width = std::max(300.0f, ImGui::GetContentRegionAvail().x - labelW - 10);
  float step = width / static_cast<float>(std::max<uint32_t>(1, c.steps));
  ImVec2 o = ImGui::GetCursorScreenPos();
  ImGuiIO &io = ImGui::GetIO();
  std::string tip;
  for (size_t r = 0; r < c.rows.size(); ++r) {
    const view::BufferRow &row = c.rows[r];
    float y = o.y + static_cast<float>(r) * rowH;
    std::string label = "storage " + std::to_string(row.storage) + "  " + bytesText(row.bytes);
    dl->AddText(ImVec2(o.x, y + 3), kText, label.c_str());
    dl->AddRectFilled(ImVec2(o.x + labelW, y + 1), ImVec2(o.x + labelW + width, y + rowH - 1),
                      IM_COL32(240, 240, 240, 255));
    for (size_t b = 0; b < row.bars.size(); ++b) {
      const view::BufferBar &bar = row.bars[b];
      ImVec2 a(o.x + labelW + step * static_cast<float>(bar.first), y + 3);
      ImVec2 z(o.x + labelW + step * static_cast<float>(bar.last + 1), y + rowH - 3);
      dl->AddRectFilled(a, z, rgba(view::groupColour(static_cast<int>(r + b))), 3.0f);
      if (z.x - a.x > 40) { // the name, cut at the bar's end
        dl->PushClipRect(a, z, true);
        dl->AddText(ImVec2(a.x + 3, a.y + 1), kText, bar.name.c_str());
        dl->PopClipRect();
      }
      if (io.MousePos.x >= a.x && io.MousePos.x <= z.x && io.MousePos.y >= a.y &&
          io.MousePos.y <= z.y)
        tip = bar.name + ": " + bytesText(bar.bytes) + ", nodes " + std::to_string(bar.first) +
              "-" + std::to_string(bar.last);
    }
  }
  ImGui::Dummy(ImVec2(labelW + width, rowH * static_cast<float>(c.rows.size()) + 4));
  ImGui::TextDisabled("x: node id (execution order, %u nodes); one bar per entry from the node "
                      "that makes it to the last node that reads it",
                      c.steps);
  ImGui::EndChild();
  if (!tip.empty())
    ImGui::SetTooltip("%s", tip.c_str());
}

void inspector(AppState &s) {
  const Graph *g = currentGraph(s);
  if (!g || s.selectedNode < 0 || static_cast<uint32_t>(s.selectedNode) >= g->index().numNodes()) {
    ImGui::TextDisabled("Click a node to inspect it.");
    return;
  }
  const IndexedGraph &idx = g->index();
  uint32_t nid = static_cast<uint32_t>(s.selectedNode);
  const Node &n = *idx.nodes[nid].node;
  ImGui::Text("%s", n.name.c_str());
  ImGui::TextDisabled("node %u, %s", nid, n.isVariable() ? "variable" : n.op->name.c_str());
  ImGui::Separator();
  if (ImGui::CollapsingHeader("Attributes", ImGuiTreeNodeFlags_DefaultOpen)) {
    if (n.attrs.empty())
      ImGui::TextDisabled("none");
    for (const auto &[k, v] : n.attrs)
      ImGui::TextWrapped("%s = %s", k.c_str(), v.c_str());
  }
  if (ImGui::CollapsingHeader("Outputs", ImGuiTreeNodeFlags_DefaultOpen)) {
    const GraphAttr *sid = g->attr("storage_id");
    for (uint32_t k = 0; k < n.numOutputs(); ++k) {
      uint32_t e = idx.entryId(nid, k);
      std::string text = "output " + std::to_string(k);
      if (const GraphAttr *sh = g->attr("shape"); sh && e < sh->shapes.size())
        text += ": shape " + shapeToTuple(sh->shapes[e]);
      if (const GraphAttr *dt = g->attr("dtype"); dt && e < dt->ints.size())
        text += " " + std::string(dtypeName(static_cast<int>(dt->ints[e])));
      if (sid && e < sid->ints.size())
        text += ", storage " + std::to_string(sid->ints[e]);
      ImGui::TextWrapped("%s", text.c_str());
    }
  }
  if (const GraphAttr *pat = g->attr("pattern"); pat && nid < pat->ints.size())
    ImGui::Text("pattern %s", patternName(static_cast<int>(pat->ints[nid])));
  for (const GroupView &gv : s.viewer.groups())
    if (std::find(gv.members.begin(), gv.members.end(), nid) != gv.members.end()) {
      ImGui::TextWrapped("group %s (%s): root %s, master %s; members %zu", gv.function.c_str(),
                         gv.pattern.c_str(), gv.rootName.c_str(),
                         gv.masterName.empty() ? "None" : gv.masterName.c_str(),
                         gv.memberNames.size());
    }
  // Its kernel's time in the last :profile of this built step.
  if (const Step *cur = s.viewer.engine().current(); cur && &cur->graph == g) {
    auto it = cur->profile.find(nid);
    if (it != cur->profile.end()) {
      std::vector<double> share = view::timeShares(*g, cur->profile);
      ImGui::Separator();
      ImGui::TextWrapped("last :profile: %.4f ms (%.1f%% of the run), %.2f GFLOP/s, %.1f%% of "
                         "peak",
                         it->second.ms, 100 * share[nid], it->second.gflops,
                         it->second.percentPeak);
    }
  }
  // The value summary of the last :run, when this node is one of the graph's outputs.
  const std::string &con = s.viewer.console();
  size_t run = con.rfind("loupe> :run");
  if (run != std::string::npos)
    for (size_t k = 0; k < idx.heads.size(); ++k)
      if (idx.heads[k].nodeId == nid) {
        std::string key = "output " + std::to_string(k) + ":";
        size_t at = con.find(key, run);
        if (at == std::string::npos)
          continue;
        size_t end = con.find("\noutput ", at + 1);
        size_t next = con.find("loupe> ", at);
        end = std::min(end, next);
        ImGui::Separator();
        ImGui::TextWrapped("last :run\n%s", con.substr(at, end - at).c_str());
      }
}

int consoleCallback(ImGuiInputTextCallbackData *data) {
  auto &s = *static_cast<AppState *>(data->UserData);
  if (data->EventFlag == ImGuiInputTextFlags_CallbackHistory && !s.consoleHistory.empty()) {
    int n = static_cast<int>(s.consoleHistory.size());
    if (data->EventKey == ImGuiKey_UpArrow)
      s.consoleHistoryPos = s.consoleHistoryPos < 0 ? n - 1 : std::max(0, s.consoleHistoryPos - 1);
    else if (data->EventKey == ImGuiKey_DownArrow && s.consoleHistoryPos >= 0)
      s.consoleHistoryPos = s.consoleHistoryPos + 1 >= n ? -1 : s.consoleHistoryPos + 1;
    data->DeleteChars(0, data->BufTextLen);
    if (s.consoleHistoryPos >= 0)
      data->InsertChars(0, s.consoleHistory[static_cast<size_t>(s.consoleHistoryPos)].c_str());
  } else if (data->EventFlag == ImGuiInputTextFlags_CallbackCompletion) {
    std::string line(data->Buf, static_cast<size_t>(data->CursorPos));
    size_t start = line.find_last_of(" (,=");
    start = start == std::string::npos ? 0 : start + 1;
    std::string word = line.substr(start);
    std::vector<std::string> c = s.viewer.engine().completions(line, word);
    if (c.size() == 1) {
      data->DeleteChars(static_cast<int>(start), static_cast<int>(word.size()));
      data->InsertChars(static_cast<int>(start), (c[0] + " ").c_str());
    } else if (c.size() > 1) {
      std::string all;
      for (const std::string &x : c)
        all += x + "  ";
      s.viewer.note(all + "\n"); // the choices, as the REPL lists them on a double Tab
      s.scrollConsole = true;
    }
  }
  return 0;
}

void console(AppState &s) {
  float inputH = ImGui::GetFrameHeightWithSpacing();
  ImGui::BeginChild("consoleText", ImVec2(0, -inputH), true, ImGuiWindowFlags_HorizontalScrollbar);
  ImGui::TextUnformatted(s.viewer.console().c_str());
  if (s.scrollConsole) {
    ImGui::SetScrollHereY(1.0f);
    s.scrollConsole = false;
  }
  ImGui::EndChild();
  ImGui::SetNextItemWidth(-1);
  ImGuiInputTextFlags flags = ImGuiInputTextFlags_EnterReturnsTrue |
                              ImGuiInputTextFlags_CallbackHistory |
                              ImGuiInputTextFlags_CallbackCompletion;
  if (ImGui::InputTextWithHint("##console", "loupe> statement or :command (Tab completes)",
                               s.consoleInput, sizeof s.consoleInput, flags, consoleCallback, &s)) {
    std::string in = s.consoleInput;
    if (!in.empty()) {
      s.viewer.startWork([in](view::Viewer &v) { v.run(in); });
      s.consoleHistory.push_back(in);
      s.consoleHistoryPos = -1;
      s.scrollConsole = true;
      s.timelineStep = -1;
    }
    s.consoleInput[0] = 0;
    ImGui::SetKeyboardFocusHere(-1);
  }
}

void toolbar(AppState &s) {
  if (ImGui::Button("Open..."))
    s.showOpen = true;
  ImGui::SameLine();
  const auto &script = s.viewer.script();
  if (!script.empty()) {
    // Steps run on the viewer's worker thread: a build takes seconds and the window keeps
    // drawing (drawFrame shows its progress meanwhile).
    if (ImGui::Button("|<"))
      s.viewer.startWork([](view::Viewer &v) { v.runTo(0); });
    ImGui::SameLine();
    if (ImGui::Button("< back"))
      s.viewer.startWork([](view::Viewer &v) { v.stepBack(); });
    ImGui::SameLine();
    if (ImGui::Button("forward >"))
      s.viewer.startWork([](view::Viewer &v) { v.stepForward(); });
    ImGui::SameLine();
    if (ImGui::Button(">|"))
      s.viewer.startWork([n = script.size()](view::Viewer &v) { v.runTo(n); });
    ImGui::SameLine();
    size_t pos = s.viewer.scriptPos();
    std::string next = pos < script.size() ? script[pos].text : "(end)";
    next = next.substr(0, next.find('\n'));
    ImGui::Text("input %zu/%zu; next: %s", pos, script.size(), next.c_str());
    ImGui::SameLine();
  }
  if (const Step *cur = s.viewer.engine().current())
    ImGui::TextDisabled("| step %zu: %s", currentStepIndex(s), cur->label.c_str());
}

void openDialog(AppState &s) {
  if (s.showOpen) {
    ImGui::OpenPopup("Open");
    s.showOpen = false;
    if (!s.openPath[0]) {
      std::string cwd = std::filesystem::current_path().string() + "/";
      std::snprintf(s.openPath, sizeof s.openPath, "%s", cwd.c_str());
    }
  }
  ImGui::SetNextWindowSize(ImVec2(620, 420), ImGuiCond_Appearing);
  if (!ImGui::BeginPopupModal("Open"))
    return;
  ImGui::TextUnformatted("A session (.session), a script, a graph JSON or an ONNX model:");
  ImGui::SetNextItemWidth(-1);
  ImGui::InputText("##path", s.openPath, sizeof s.openPath);
  std::filesystem::path p(s.openPath);
  std::filesystem::path dir = std::filesystem::is_directory(p) ? p : p.parent_path();
  ImGui::BeginChild("files", ImVec2(0, -ImGui::GetFrameHeightWithSpacing() * 2), true);
  std::error_code ec;
  if (ImGui::Selectable("../")) {
    std::snprintf(s.openPath, sizeof s.openPath, "%s/", dir.parent_path().string().c_str());
  }
  std::vector<std::filesystem::directory_entry> entries;
  for (const auto &e : std::filesystem::directory_iterator(dir, ec))
    entries.push_back(e);
  std::sort(entries.begin(), entries.end(),
            [](const auto &a, const auto &b) { return a.path() < b.path(); });
  for (const auto &e : entries) {
    std::string name = e.path().filename().string() + (e.is_directory() ? "/" : "");
    if (ImGui::Selectable(name.c_str()))
      std::snprintf(s.openPath, sizeof s.openPath, "%s%s", e.path().string().c_str(),
                    e.is_directory() ? "/" : "");
  }
  ImGui::EndChild();
  if (!s.openError.empty())
    ImGui::TextColored(ImVec4(0.8f, 0.1f, 0.1f, 1), "%s", s.openError.c_str());
  if (ImGui::Button("Open") && !std::filesystem::is_directory(p)) {
    s.openError = s.viewer.open(s.openPath);
    if (s.openError.empty()) {
      s.selectedNode = s.secondNode = -1;
      ImGui::CloseCurrentPopup();
    }
  }
  ImGui::SameLine();
  if (ImGui::Button("Cancel"))
    ImGui::CloseCurrentPopup();
  ImGui::EndPopup();
}

} // namespace

// While the viewer's worker runs an input, the engine must not be read: the frame shows only
// the work's progress and a button that stops it (Ctrl-C's interrupt).
void workingFrame(AppState &s, float w, float h) {
  auto [status, fraction] = s.viewer.progress();
  ImGui::SetNextWindowPos(ImVec2(w * 0.5f, h * 0.5f), ImGuiCond_Always, ImVec2(0.5f, 0.5f));
  ImGui::SetNextWindowSize(ImVec2(std::min(520.0f, w - 40), 0));
  ImGui::Begin("Working", nullptr,
               ImGuiWindowFlags_NoMove | ImGuiWindowFlags_NoResize | ImGuiWindowFlags_NoCollapse |
                   ImGuiWindowFlags_NoSavedSettings);
  ImGui::TextUnformatted(status.c_str());
  if (fraction >= 0)
    ImGui::ProgressBar(static_cast<float>(fraction), ImVec2(-1, 0));
  else // unknown: a bar that moves so the window visibly lives
    ImGui::ProgressBar(-1.0f * static_cast<float>(ImGui::GetTime()), ImVec2(-1, 0), "");
  if (ImGui::Button("Stop"))
    s.viewer.interrupt();
  ImGui::End();
}

void drawFrame(AppState &s, float w, float h) {
  if (s.viewer.poll())
    s.scrollConsole = true;
  if (s.viewer.busy()) {
    workingFrame(s, w, h);
    return;
  }
  const float toolbarH = 36, consoleH = std::max(140.0f, h * 0.24f), inspectorW = 330;
  const ImGuiWindowFlags fixed = ImGuiWindowFlags_NoMove | ImGuiWindowFlags_NoResize |
                                 ImGuiWindowFlags_NoCollapse | ImGuiWindowFlags_NoSavedSettings;
  ImGui::SetNextWindowPos(ImVec2(0, 0));
  ImGui::SetNextWindowSize(ImVec2(w, toolbarH));
  ImGui::Begin("toolbar", nullptr, fixed | ImGuiWindowFlags_NoTitleBar);
  toolbar(s);
  ImGui::End();

  ImGui::SetNextWindowPos(ImVec2(0, toolbarH));
  ImGui::SetNextWindowSize(ImVec2(w - inspectorW, h - toolbarH - consoleH));
  ImGui::Begin("main", nullptr, fixed | ImGuiWindowFlags_NoTitleBar);
  if (ImGui::BeginTabBar("panels")) {
    struct Tab {
      const char *name;
      Panel panel;
    };
    const Tab tabs[] = {{"Graph", Panel::Graph},
                        {"Timeline", Panel::Timeline},
                        {"Fusion", Panel::Fusion},
                        {"Loops", Panel::Loops},
                        {"Buffers", Panel::Buffers}};
    for (const Tab &t : tabs) {
      ImGuiTabItemFlags f = s.selectPanel && s.panel == t.panel ? ImGuiTabItemFlags_SetSelected : 0;
      if (ImGui::BeginTabItem(t.name, nullptr, f)) {
        if (!s.selectPanel)
          s.panel = t.panel;
        ImVec2 avail = ImGui::GetContentRegionAvail();
        switch (t.panel) {
        case Panel::Graph:
          graphPanel(s, avail, false);
          break;
        case Panel::Fusion:
          graphPanel(s, avail, true);
          break;
        case Panel::Timeline:
          timelinePanel(s);
          break;
        case Panel::Loops:
          loopsPanel(s);
          break;
        case Panel::Buffers:
          buffersPanel(s);
          break;
        }
        ImGui::EndTabItem();
      }
    }
    s.selectPanel = false;
    ImGui::EndTabBar();
  }
  ImGui::End();

  ImGui::SetNextWindowPos(ImVec2(w - inspectorW, toolbarH));
  ImGui::SetNextWindowSize(ImVec2(inspectorW, h - toolbarH - consoleH));
  ImGui::Begin("Inspector", nullptr, fixed);
  inspector(s);
  ImGui::End();

  ImGui::SetNextWindowPos(ImVec2(0, h - consoleH));
  ImGui::SetNextWindowSize(ImVec2(w, consoleH));
  ImGui::Begin("Console", nullptr, fixed);
  console(s);
  ImGui::End();

  openDialog(s);
}

} // namespace loupe::gui
