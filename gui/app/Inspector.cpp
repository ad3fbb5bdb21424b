// Inspector: the selected node — attributes, outputs with shape, dtype and storage, its fusion
// group, its quantization, its kernel's time and values from the last :profile and :run, and
// its figures and error histogram from the last :layerwise.
#include "gui/app/Panels.h"

#include "core/AttrOrder.h"
#include "core/DType.h"
#include "core/Op.h"
#include "passes/Provenance.h"
#include "passes/QuantSteps.h"
#include "view/FusionView.h"
#include "view/LayerwiseView.h"
#include "view/ProfileView.h"

#include <imgui.h>

#include <algorithm>
#include <cfloat>
#include <cstdio>
#include <string>
#include <vector>

namespace loupe::gui {

void inspector(AppState &s) {
  const Graph *g = currentGraph(s);
  if (!g || s.selection.node < 0 ||
      static_cast<uint32_t>(s.selection.node) >= g->index().numNodes()) {
    ImGui::TextDisabled("Click a node to inspect it.");
    return;
  }
  const IndexedGraph &idx = g->index();
  uint32_t nid = static_cast<uint32_t>(s.selection.node);
  const Node &n = *idx.nodes[nid].node;
  ImGui::Text("%s", n.name.c_str());
  ImGui::TextDisabled("node %u, %s", nid, n.isVariable() ? "variable" : n.op->name.c_str());
  ImGui::Separator();
  if (ImGui::CollapsingHeader("Attributes", ImGuiTreeNodeFlags_DefaultOpen)) {
    if (n.attrs.empty())
      ImGui::TextDisabled("none");
    for (const auto &[k, v] : nnvmOrdered(n.attrs)) // as :ir prints them
      ImGui::TextWrapped("%s = %s", k.c_str(), v.c_str());
  }
  // What its integer steps stand for (scale, zero point, a requantize's fixed point).
  if (std::vector<std::string> q = quantizationLines(*g, nid, s.viewer.engine().modelParams());
      !q.empty() && ImGui::CollapsingHeader("Quantization", ImGuiTreeNodeFlags_DefaultOpen))
    for (const std::string &line : q)
      ImGui::TextWrapped("%s", line.c_str());
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
  // A kernel of a built step: the function it calls and the nodes of the partition it fuses.
  if (!n.isVariable() && n.op->name == "tvm_op") {
    std::vector<std::string> fused = fusedNodeNames(*g, nid);
    std::string names;
    for (const std::string &f : fused)
      names += (names.empty() ? "" : ", ") + f;
    ImGui::TextWrapped("kernel: calls %s", n.parsed.getStr("func_name").c_str());
    if (!fused.empty())
      ImGui::TextWrapped("fuses %zu node%s of the partition (group %s): %s", fused.size(),
                         fused.size() == 1 ? "" : "s", n.name.c_str(), names.c_str());
  }
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
      std::vector<double> share = timeShares(*g, cur->profile);
      ImGui::Separator();
      ImGui::TextWrapped("last :profile: %.4f ms (%.1f%% of the run), %.2f GFLOP/s, %.1f%% of "
                         "peak",
                         it->second.ms, 100 * share[nid], it->second.gflops,
                         it->second.percentPeak);
    }
  }
  // Its figures from the last :layerwise of this step, each output's errors as a histogram.
  if (const Step *cur = s.viewer.engine().current(); cur && &cur->graph == g)
    for (const LayerComparison *c : comparisonsOf(cur->layerwise, n.name)) {
      ImGui::Separator();
      ImGui::TextWrapped("last :layerwise against %s, output %u: SQNR %.1f dB, max abs %.3g, "
                         "max rel %.3g%s",
                         cur->layerwiseAgainst.c_str(), c->output, c->sqnr, c->maxAbs, c->maxRel,
                         c->dequantized ? " (dequantized)" : "");
      std::vector<float> bins(c->histogram.begin(), c->histogram.end());
      char caption[64];
      if (c->maxAbs > 0)
        std::snprintf(caption, sizeof caption, "errors from %.3g to %.3g", -c->maxAbs, c->maxAbs);
      else
        std::snprintf(caption, sizeof caption, "no error");
      ImGui::PlotHistogram(("##errors" + std::to_string(c->output)).c_str(), bins.data(),
                           static_cast<int>(bins.size()), 0, caption, 0.0f, FLT_MAX,
                           ImVec2(ImGui::GetContentRegionAvail().x, 80));
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

} // namespace loupe::gui
