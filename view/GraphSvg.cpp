// GraphSvg: SVG text for a laid-out graph, following gui/app/Canvas.cpp's drawing at zoom 1.
#include "view/GraphSvg.h"

#include "core/Text.h"
#include "passes/QuantSteps.h"
#include "view/LayerwiseView.h"
#include "view/Palette.h"

#include <cmath>
#include <cstdio>
#include <sstream>

namespace loupe::gui {

namespace {

// "#rrggbb" of a palette colour (its alpha is written as an opacity where it matters).
std::string hex(uint32_t rgba) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "#%06x", rgba >> 8);
  return buf;
}

std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", v);
  return buf;
}

} // namespace

std::string xmlEscaped(const std::string &text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
    case '&':
      out += "&amp;";
      break;
    case '<':
      out += "&lt;";
      break;
    case '>':
      out += "&gt;";
      break;
    case '"':
      out += "&quot;";
      break;
    case '\'':
      out += "&#39;";
      break;
    default:
      out += c;
    }
  }
  return out;
}

std::string graphSvg(const Graph &g, const GraphLayout &l, const SvgOptions &o) {
  const double margin = 12;
  std::ostringstream s;
  s << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << num(l.width + 2 * margin)
    << "\" height=\"" << num(l.height + 2 * margin) << "\" viewBox=\"" << num(-margin) << " "
    << num(-margin) << " " << num(l.width + 2 * margin) << " " << num(l.height + 2 * margin)
    << "\" font-family=\"monospace\" font-size=\"12\">\n";
  // The arrowhead every edge ends with.
  s << "<defs><marker id=\"arrow\" viewBox=\"0 0 8 8\" refX=\"8\" refY=\"4\" markerWidth=\"7\" "
       "markerHeight=\"7\" orient=\"auto\"><path d=\"M0,0 L8,4 L0,8 z\" fill=\""
    << hex(kEdgeColour) << "\"/></marker></defs>\n";
  const IndexedGraph &idx = g.index();
  std::vector<int> groupOf =
      o.groups ? nodeGroups(*o.groups, idx.numNodes()) : std::vector<int>(idx.numNodes(), -1);
  if (o.groups) {
    // Regions first, under everything, as the canvas draws them.
    for (const GroupRegion &r : groupRegions(*o.groups, l, 8)) {
      const GroupView &gv = (*o.groups)[static_cast<size_t>(r.group)];
      s << "<rect class=\"group\" x=\"" << num(r.x0) << "\" y=\"" << num(r.y0) << "\" width=\""
        << num(r.x1 - r.x0) << "\" height=\"" << num(r.y1 - r.y0) << "\" rx=\"8\" fill=\""
        << hex(gv.colour) << "\" fill-opacity=\"0.24\" stroke=\"" << hex(gv.colour)
        << "\" stroke-width=\"2\"><title>" << xmlEscaped(groupSummary(gv)) << "</title></rect>\n";
    }
  }
  for (const LaidEdge &e : l.edges) {
    const auto &p = e.points;
    if (p.empty())
      continue;
    s << "<path d=\"M" << num(p[0].x) << "," << num(p[0].y);
    for (size_t i = 1; i + 2 < p.size(); i += 3)
      s << " C" << num(p[i].x) << "," << num(p[i].y) << " " << num(p[i + 1].x) << ","
        << num(p[i + 1].y) << " " << num(p[i + 2].x) << "," << num(p[i + 2].y);
    s << " L" << num(e.head.x) << "," << num(e.head.y) << "\" fill=\"none\" stroke=\""
      << hex(kEdgeColour) << "\" stroke-width=\"1.2\" marker-end=\"url(#arrow)\"/>\n";
    if (e.labelled)
      s << "<text x=\"" << num(p.front().x + 4) << "\" y=\"" << num(p.front().y + 12)
        << "\" fill=\"" << hex(kSelectedColour) << "\">" << e.output << "</text>\n";
  }
  for (const LaidNode &n : l.nodes) {
    double x = n.x - n.w / 2, y = n.y - n.h / 2;
    uint32_t fill = n.kind == NodeKind::Input   ? kInputFillColour
                    : n.kind == NodeKind::Param ? kParamFillColour
                    : n.kind == NodeKind::Scope ? kScopeFillColour
                                                : kOpFillColour;
    int group = n.nid < groupOf.size() ? groupOf[n.nid] : -1;
    if (group >= 0)
      fill = groupColour(group);
    std::string title;
    for (const std::string &line : n.lines)
      title += (title.empty() ? "" : "\n") + line;
    if (o.params && n.kind == NodeKind::Op && n.nid < idx.numNodes())
      for (const std::string &q : quantizationLines(g, n.nid, *o.params))
        title += "\n" + q;
    if (o.sqnr && n.nid < o.sqnr->size() && !std::isnan((*o.sqnr)[n.nid])) {
      double db = (*o.sqnr)[n.nid];
      fill = sqnrColour(db);
      title += "\nSQNR " + decibels(db) + " dB";
    }
    s << "<g class=\"node\"><title>" << xmlEscaped(title) << "</title><rect x=\"" << num(x)
      << "\" y=\"" << num(y) << "\" width=\"" << num(n.w) << "\" height=\"" << num(n.h)
      << "\" rx=\"" << (n.kind == NodeKind::Op || n.kind == NodeKind::Scope ? "3" : num(n.h / 2))
      << "\" fill=\"" << hex(fill) << "\" stroke=\"" << hex(kOutlineColour) << "\"/>\n";
    for (size_t i = 0; i < n.lines.size(); ++i)
      s << "<text x=\"" << num(x + 6) << "\" y=\""
        << num(y + 6 + 14.0 * static_cast<double>(i) + 11) << "\" fill=\"" << hex(kTextColour)
        << "\">" << xmlEscaped(n.lines[i]) << "</text>\n";
    if (group >= 0) {
      const GroupView &gv = (*o.groups)[static_cast<size_t>(group)];
      std::string badge = groupBadge(gv, n.name);
      if (!badge.empty())
        s << "<text x=\"" << num(x + n.w - 2) << "\" y=\"" << num(y + 12)
          << "\" text-anchor=\"end\" font-weight=\"bold\" fill=\"" << hex(kSelectedColour) << "\">"
          << badge << "</text>\n";
    }
    s << "</g>\n";
  }
  s << "</svg>\n";
  return s.str();
}

std::string graphSvg(const Graph &g, const StoredTensors &bound, const std::vector<double> *sqnr) {
  LayoutOptions o;
  o.foldInputs = true; // as the viewer opens
  o.params = paramNames(g, bound);
  GraphLayout l = layoutGraph(g, o);
  std::vector<GroupView> groups = hasGroups(g) ? fusionGroups(g) : std::vector<GroupView>{};
  SvgOptions so;
  if (!groups.empty())
    so.groups = &groups;
  so.sqnr = sqnr;
  so.params = &bound;
  return graphSvg(g, l, so);
}

} // namespace loupe::gui
