// Report: the HTML writer of a session report, from the engine's history and the viewer's view
// models (GraphSvg, FusionView, StepDiff).
#include "report/Report.h"

#include "backend/BuiltLibrary.h"
#include "backend/LowerFunction.h"
#include "core/Error.h"
#include "core/Printer.h"
#include "core/Text.h"
#include "repl/TextFile.h"
#include "view/FusionView.h"
#include "view/GraphLayout.h"
#include "view/GraphSvg.h"
#include "view/LayerwiseView.h"
#include "view/StepDiff.h"

#include <cstdio>
#include <sstream>

namespace loupe::report {

namespace {

using gui::xmlEscaped;

// The page's style and script, written once here; the script searches (steps whose text has
// the query stay, the others fold away; matching graph boxes are outlined) and folds.
const char *kStyle = R"(
body { font-family: sans-serif; margin: 1em 2em; color: #141414; }
h1 { font-size: 1.4em; } h2 { font-size: 1.1em; display: inline; }
pre { font-size: 12px; background: #f6f6f8; padding: 6px; overflow: auto; max-height: 40em; }
details { margin: 0.4em 0; } details.step { border-top: 1px solid #ccc; padding-top: 0.4em; }
.add { color: #1ea03c; } .del { color: #d21e1e; } .hunk { color: #777; }
.picture { overflow: auto; max-height: 48em; border: 1px solid #ddd; }
table { border-collapse: collapse; font-size: 13px; } td, th { border: 1px solid #ccc;
  padding: 2px 6px; text-align: left; vertical-align: top; }
.hidden { display: none; } g.node.match rect { stroke: #e62828; stroke-width: 3; }
#bar { position: sticky; top: 0; background: white; padding: 0.4em 0; }
)";

const char *kScript = R"(
(function () {
  var steps = Array.prototype.slice.call(document.querySelectorAll('details.step'));
  var query = document.getElementById('query');
  function search() {
    var q = query.value.toLowerCase();
    steps.forEach(function (s) {
      var hit = q === '' || s.textContent.toLowerCase().indexOf(q) >= 0;
      s.classList.toggle('hidden', !hit);
      if (q !== '' && hit) s.open = true;
      s.querySelectorAll('g.node').forEach(function (g) {
        var t = g.querySelector('title');
        g.classList.toggle('match', q !== '' && t !== null &&
                           t.textContent.toLowerCase().indexOf(q) >= 0);
      });
    });
    document.getElementById('count').textContent =
        q === '' ? '' : steps.filter(function (s) { return !s.classList.contains('hidden'); })
                            .length + ' of ' + steps.length + ' steps';
  }
  function fold(open) {
    document.querySelectorAll('details').forEach(function (d) { d.open = open; });
  }
  query.addEventListener('input', search);
  document.getElementById('expand').addEventListener('click', function () { fold(true); });
  document.getElementById('collapse').addEventListener('click', function () { fold(false); });
  // A link can carry a search: REPORT.html#search=relu0
  var asked = /^#search=(.*)$/.exec(window.location.hash);
  if (asked) { query.value = decodeURIComponent(asked[1]); search(); }
  document.body.setAttribute('data-ready', 'yes');
})();
)";

// A unified diff's lines, coloured.
std::string diffHtml(const std::string &diff) {
  std::ostringstream s;
  std::istringstream in(diff);
  std::string line;
  while (std::getline(in, line)) {
    const char *cls = line.rfind("+++", 0) == 0 || line.rfind("---", 0) == 0 ? nullptr
                      : line.rfind("+", 0) == 0                              ? "add"
                      : line.rfind("-", 0) == 0                              ? "del"
                      : line.rfind("@@", 0) == 0                             ? "hunk"
                                                                             : nullptr;
    if (cls)
      s << "<span class=\"" << cls << "\">" << xmlEscaped(line) << "</span>\n";
    else
      s << xmlEscaped(line) << "\n";
  }
  return s.str();
}

// The fusion groups of a step, as :groups lists them.
std::string groupsHtml(const std::vector<gui::GroupView> &groups) {
  std::ostringstream s;
  s << "<table><tr><th>function</th><th>root</th><th>master</th><th>pattern</th><th>members</th>"
       "</tr>\n";
  for (const gui::GroupView &g : groups) {
    std::string members;
    for (const std::string &m : g.memberNames)
      members += (members.empty() ? "" : ", ") + m;
    s << "<tr><td>" << xmlEscaped(g.function) << "</td><td>" << xmlEscaped(g.rootName)
      << "</td><td>" << xmlEscaped(g.masterName.empty() ? "None" : g.masterName) << "</td><td>"
      << xmlEscaped(g.pattern) << "</td><td>" << xmlEscaped(members) << "</td></tr>\n";
  }
  s << "</table>\n";
  return s.str();
}

// A built step's functions: each one's loops, folded; and its last profile.
std::string builtHtml(const Step &step, const backend::BuiltLibrary &lib) {
  std::ostringstream s;
  s << "<details><summary>" << lib.lowered.size() << " functions' loops</summary>\n";
  for (const auto &[name, f] : lib.lowered)
    s << "<details><summary>" << xmlEscaped(name) << "</summary><pre>"
      << xmlEscaped(backend::printLowered(f)) << "</pre></details>\n";
  s << "</details>\n";
  if (!step.profile.empty()) {
    const IndexedGraph &idx = step.graph.index();
    double total = 0;
    s << "<details open><summary>profile</summary><table><tr><th>node</th><th>kernel</th>"
         "<th>ms</th><th>GFLOP/s</th><th>% of peak</th></tr>\n";
    for (const auto &[nid, t] : step.profile) {
      const Node &n = *idx.nodes[nid].node;
      total += t.ms;
      s << "<tr><td>" << xmlEscaped(n.name) << "</td><td>"
        << xmlEscaped(n.parsed.getStr("func_name")) << "</td><td>" << fixed(t.ms, 3) << "</td><td>"
        << fixed(t.gflops, 1) << "</td><td>" << fixed(t.percentPeak, 0) << "</td></tr>\n";
    }
    s << "<tr><td>total</td><td></td><td>" << fixed(total, 3)
      << "</td><td></td><td></td></tr></table></details>\n";
  }
  return s.str();
}

// A step's last :layerwise: the heatmap's legend and its values, worst SQNR first.
std::string layerwiseHtml(const Step &step) {
  std::ostringstream s;
  s << "<details open><summary>layerwise against " << xmlEscaped(step.layerwiseAgainst) << ": "
    << step.layerwise.size() << " values, worst SQNR first</summary><p>";
  for (const gui::SqnrBand &b : gui::sqnrBands()) {
    char colour[8];
    std::snprintf(colour, sizeof colour, "%06x", b.colour >> 8);
    s << "<span style=\"background:#" << colour << "; padding: 0 6px\">" << xmlEscaped(b.label)
      << "</span> ";
  }
  s << "</p><table><tr><th>node</th><th>op</th><th>SQNR dB</th><th>max abs</th><th>max rel"
       "</th></tr>\n";
  for (const LayerComparison *c : worstFirst(step.layerwise))
    s << "<tr><td>" << xmlEscaped(valueName(*c)) << "</td><td>" << xmlEscaped(c->op) << "</td><td>"
      << decibels(c->sqnr) << "</td><td>" << sci(c->maxAbs) << "</td><td>" << sci(c->maxRel)
      << "</td></tr>\n";
  s << "</table></details>\n";
  return s.str();
}

} // namespace

std::string sessionReport(const Engine &e, const std::string &title) {
  std::ostringstream s;
  s << "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
       "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
       "style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:\">\n<title>"
    << xmlEscaped(title) << " — Loupe report</title>\n<style>" << kStyle << "</style></head>\n"
    << "<body>\n<h1>" << xmlEscaped(title) << "</h1>\n"
    << "<div id=\"bar\"><input id=\"query\" type=\"search\" placeholder=\"search nodes, ops, "
       "functions, commands\" size=\"40\"> <button id=\"expand\">expand all</button> "
       "<button id=\"collapse\">collapse all</button> <span id=\"count\"></span></div>\n";
  const std::vector<Step> &history = e.history();
  s << "<p>" << history.size() << " steps, " << e.transcript().size() << " inputs.</p>\n";
  for (size_t k = 0; k < history.size(); ++k) {
    const Step &step = history[k];
    const IndexedGraph &idx = step.graph.index();
    s << "<details class=\"step\" id=\"step" << k << "\""
      << (k + 1 == history.size() ? " open" : "") << "><summary><h2>step " << k << ": "
      << xmlEscaped(step.label) << "</h2> — " << xmlEscaped(step.change) << " (" << idx.numNodes()
      << " nodes)</summary>\n";
    // A step that left the graph as it was shows the picture once, at the step that drew it.
    bool sameGraph = k > 0 && step.change.rfind("graph unchanged", 0) == 0 &&
                     gui::hasGroups(step.graph) == gui::hasGroups(history[k - 1].graph);
    // After :layerwise the picture is the heatmap, even of a graph the step before drew.
    std::vector<double> sqnr;
    if (!step.layerwise.empty())
      sqnr = gui::nodeSqnr(step.graph, step.layerwise);
    if (sameGraph && sqnr.empty())
      s << "<p>The graph is step " << k - 1 << "'s.</p>\n";
    else
      s << "<div class=\"picture\">"
        << gui::graphSvg(step.graph, e.modelParams(), sqnr.empty() ? nullptr : &sqnr) << "</div>\n";
    if (!step.layerwise.empty())
      s << layerwiseHtml(step);
    if (k > 0) {
      gui::StepDiff d =
          gui::diffGraphs(history[k - 1].graph, step.graph, "step " + std::to_string(k - 1),
                          "step " + std::to_string(k));
      if (!d.irDiff.empty())
        s << "<details><summary>diff to step " << k - 1 << ": " << xmlEscaped(d.summary)
          << "</summary><pre>" << diffHtml(d.irDiff) << "</pre></details>\n";
    }
    s << "<details" << (k + 1 == history.size() ? " open" : "") << "><summary>IR</summary><pre>"
      << xmlEscaped(printGraphIR(step.graph)) << "</pre></details>\n";
    if (gui::hasGroups(step.graph))
      s << "<details open><summary>fusion groups</summary>"
        << groupsHtml(gui::fusionGroups(step.graph)) << "</details>\n";
    if (auto lib = backend::builtLibrary(step.graph))
      s << builtHtml(step, *lib);
    s << "</details>\n";
  }
  s << "<details class=\"step\" id=\"transcript\"><summary><h2>the session's inputs and "
       "outputs</h2></summary><pre>";
  for (const Engine::Exchange &x : e.transcript())
    s << "&gt; " << xmlEscaped(x.input) << "\n" << xmlEscaped(x.output) << "\n";
  s << "</pre></details>\n<script>" << kScript << "</script>\n</body></html>\n";
  return s.str();
}

void addViewCommands(Engine &e) {
  e.setDotPlacer([](const Graph &g) {
    gui::LayoutOptions o;
    o.params = gui::paramNames(g);
    return gui::dotPlacement(g, o);
  });
  e.addCommand(
      {"report", "FILE.html",
       "writes the session so far as one self-contained HTML file (pictures, IR, "
       "diffs, groups, loops, profiles)",
       [](Engine &eng, const std::vector<std::string> &a, const std::string &, std::ostream &out) {
         if (a.size() != 1)
           fail("usage: :report FILE.html");
         eng.checkWrite(":report", a[0]);
         std::string html = sessionReport(eng, a[0]);
         writeTextFile(a[0], html);
         out << "wrote " << a[0] << " (" << eng.history().size() << " steps, " << html.size() / 1024
             << " KiB)\n";
       }});
}

} // namespace loupe::report
