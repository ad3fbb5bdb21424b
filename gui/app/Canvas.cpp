// Canvas: a laid-out graph drawn and navigated — pan, zoom, first view, the overview map, node
// clicks — with fusion regions, change outlines and time colours.
#include "gui/app/Canvas.h"

#include "view/FusionView.h"
#include "view/LayerwiseView.h"
#include "view/Overview.h"
#include "view/ProfileView.h"

#include <algorithm>
#include <cmath>
#include <string>

namespace loupe::gui {

namespace {

bool recording = false; // drawnBoxes is kept (a screenshot with a boxes file)

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

} // namespace

std::vector<DrawnBox> &drawnBoxes() {
  static std::vector<DrawnBox> boxes;
  return boxes;
}

void recordDrawnBoxes(bool on) { recording = on; }

ImU32 rgba(uint32_t c, uint8_t alpha) {
  return IM_COL32((c >> 24) & 0xff, (c >> 16) & 0xff, (c >> 8) & 0xff, alpha);
}

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
  CanvasWindow win{avail.x, avail.y, cv.zoom, cv.panX, cv.panY};
  Overview ov = overviewOf(l.width, l.height, win);
  bool onMap = ov.shown && ov.map.contains(io.MouseClickedPos[0].x - origin.x,
                                           io.MouseClickedPos[0].y - origin.y);
  if (ImGui::IsItemActive() && onMap) {
    centreOn(ov, io.MousePos.x - origin.x, io.MousePos.y - origin.y, win);
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

  // Unfolded scopes' outlines first, under everything, their paths on top.
  for (const ScopeOutline &o : st.scopes) {
    ImVec2 a = at(o.x0, o.y0), b = at(o.x1, o.y1);
    dl->AddRectFilled(a, b, rgba(kScopeFillColour, 50), 6.0f);
    dl->AddRect(a, b, rgba(kScopeOutlineColour), 6.0f, 0, 1.5f);
    if (cv.zoom > 0.35) // the labels' size, as boxes' labels
      dl->AddText(ImVec2(a.x + 6, a.y + 2), kText, ("[-] " + o.path).c_str());
  }
  // Group regions next, under the boxes.
  const IndexedGraph &idx = g.index();
  std::vector<int> groupOf =
      st.groups ? nodeGroups(*st.groups, idx.numNodes()) : std::vector<int>(idx.numNodes(), -1);
  std::string hoverTip;
  if (st.groups) {
    for (const GroupRegion &r : groupRegions(*st.groups, l, 8)) {
      const GroupView &gv = (*st.groups)[static_cast<size_t>(r.group)];
      ImVec2 a = at(r.x0, r.y0), b = at(r.x1, r.y1);
      dl->AddRectFilled(a, b, rgba(gv.colour, 60), 8.0f);
      dl->AddRect(a, b, rgba(gv.colour), 8.0f, 0, 2.0f);
      if (st.marked.count(gv.index))
        dl->AddRect(a, b, kChangedCol, 8.0f, 0, 5.0f);
      if (hovered && io.MousePos.x >= a.x && io.MousePos.x <= b.x && io.MousePos.y >= a.y &&
          io.MousePos.y <= b.y)
        hoverTip = groupSummary(gv);
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
  for (const LaidEdge &e : l.edges) {
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
      return rgba(heatColour(st.timeShare[n.nid], st.maxShare));
    if (n.nid < st.sqnr.size() && !std::isnan(st.sqnr[n.nid]))
      return rgba(sqnrColour(st.sqnr[n.nid]));
    if (st.groups && groupOf[n.nid] >= 0)
      return rgba(groupColour(groupOf[n.nid]));
    return n.kind == NodeKind::Input   ? kInputFill
           : n.kind == NodeKind::Param ? kParamFill
           : n.kind == NodeKind::Scope ? kScopeFill
                                       : kOpFill;
  };
  // Search hits by box: a hit folded into a box, or inside a folded scope, lights that box.
  std::vector<bool> lit(l.nodes.size(), false);
  for (uint32_t h : st.highlighted)
    if (int i = l.find(h); i >= 0)
      lit[static_cast<size_t>(i)] = true;
  int clicked = -1;
  bool showText = !coarse;
  for (const LaidNode &n : l.nodes) {
    ImVec2 a = at(n.x - n.w / 2, n.y - n.h / 2), b = at(n.x + n.w / 2, n.y + n.h / 2);
    if (outside(a, b))
      continue;
    ImU32 fill = fillOf(n);
    bool boxy = n.kind == NodeKind::Op || n.kind == NodeKind::Scope;
    float rounding = coarse ? 0.0f : boxy ? 3.0f : static_cast<float>(n.h * cv.zoom / 2);
    dl->AddRectFilled(a, b, fill, rounding);
    if (recording) {
      ImVec2 lo = dl->GetClipRectMin(), hi = dl->GetClipRectMax();
      drawnBoxes().push_back({n.name, std::max(a.x, lo.x), std::max(a.y, lo.y), std::min(b.x, hi.x),
                              std::min(b.y, hi.y)});
    }
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
    if (lit[static_cast<size_t>(&n - l.nodes.data())])
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
      std::string badge = groupBadge(gv, n.name);
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
  ov = overviewOf(l.width, l.height, {avail.x, avail.y, cv.zoom, cv.panX, cv.panY});
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

} // namespace loupe::gui
