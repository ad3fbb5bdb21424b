// ReportTest: a session's HTML report holds every step (picture, IR, diff, groups, loops,
// profile), loads nothing, escapes every name, and `:report` writes it where trust allows.
#include "TestUtil.h"

#include "backend/Build.h"
#include "backend/LowerFunction.h"
#include "core/Printer.h"
#include "repl/TextFile.h"
#include "report/Report.h"
#include "view/GraphSvg.h"

#include <filesystem>
#include <unistd.h>

using namespace loupe;
using namespace loupe::test;

namespace {

const char *kHostile = "<script>alert('x')</script>";

size_t count(const std::string &text, const std::string &what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1))
    ++n;
  return n;
}

// The seed-001 network with an input named like markup, partitioned, built and profiled.
Engine session() {
  Engine e;
  run(e, std::string("x = Variable(\"") + kHostile + "\", shape=(1,4,8,8), dtype=0)\n" +
             "z = relu(conv2d(data=x, channels=4, kernel_size=(3,3), padding=[1,1]))\n"
             "z = sum(softmax(dense(flatten(x + z), units=10)), keepdims=True)\n:graph z\n"
             ":apply InferShape InferType\n:apply GraphFusePartition\n:build\n"
             ":set timings hidden\n:profile 1");
  return e;
}

} // namespace

TEST(Report, EveryStepWithItsPictureIRDiffGroupsLoopsAndProfile) {
  Engine e = session();
  std::string html = report::sessionReport(e, "my <session>");
  const std::vector<Step> &h = e.history();
  ASSERT_EQ(h.size(), 4u); // graph, InferShape InferType, GraphFusePartition, build
  EXPECT_EQ(count(html, "<details class=\"step\""), h.size() + 1); // and the transcript
  EXPECT_NE(html.find("<title>my &lt;session&gt; — Loupe report</title>"), std::string::npos);
  // Pictures: the graph, the partition (same graph, now grouped), the deploy graph; step 1 left
  // the graph as it was and points to step 0's.
  EXPECT_EQ(count(html, "<svg xmlns"), 3u);
  EXPECT_NE(html.find("<p>The graph is step 0's.</p>"), std::string::npos);
  for (const Step &s : h)
    EXPECT_NE(html.find(gui::xmlEscaped(printGraphIR(s.graph))), std::string::npos) << s.label;
  // Groups on the partitioned and the built step; loops of every function; the profile.
  EXPECT_EQ(count(html, "<details open><summary>fusion groups</summary>"), 2u);
  auto lib = backend::builtLibrary(h.back().graph);
  ASSERT_TRUE(lib);
  for (const auto &[name, f] : lib->lowered) {
    EXPECT_NE(html.find("<summary>" + name + "</summary><pre>" +
                        gui::xmlEscaped(backend::printLowered(f)) + "</pre>"),
              std::string::npos)
        << name;
    EXPECT_NE(html.find("<tr><td>" + name + "</td>"), std::string::npos) << name;
  }
  EXPECT_EQ(count(html, "<tr><td>"), 2 * lib->lowered.size() + lib->lowered.size() + 1)
      << "each function a row of the groups tables (twice) and of the profile, and the total";
  // The diff to the step before, coloured.
  EXPECT_NE(html.find("<span class=\"add\">+graph_attr_keys = [shape_num_unknown_nodes"),
            std::string::npos);
  // Nothing loads from elsewhere, the one script is the page's, and names are text.
  EXPECT_NE(html.find("content=\"default-src 'none'; style-src 'unsafe-inline'; script-src "
                      "'unsafe-inline'; img-src data:\""),
            std::string::npos);
  EXPECT_EQ(count(html, "<script"), 1u);
  EXPECT_EQ(count(html, "http://") + count(html, "https://"), count(html, "<svg xmlns="));
  EXPECT_EQ(html.find(kHostile), std::string::npos);
  EXPECT_NE(html.find(gui::xmlEscaped(kHostile)), std::string::npos);
}

TEST(Report, TheCommandWritesTheReportWhereTrustAllows) {
  namespace fs = std::filesystem;
  fs::path dir = fs::path(::testing::TempDir()) / ("loupe-report-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir / "shared");
  Engine e = session();
  report::addViewCommands(e);
  EXPECT_THROW(report::addViewCommands(e), Error); // one :report
  std::string path = (dir / "shared" / "r.html").string();
  std::string want = report::sessionReport(e, path);
  EXPECT_EQ(output(e, ":report " + path),
            "wrote " + path + " (4 steps, " + std::to_string(want.size() / 1024) + " KiB)\n");
  EXPECT_EQ(readTextFile(path), want);
  Engine::Trust t;
  t.writeFolder = (dir / "shared").string();
  e.setTrust(t);
  std::ostringstream out, err;
  EXPECT_FALSE(e.execute(":report " + (dir / "r.html").string(), out, err));
  EXPECT_NE(err.str().find("outside the session's folder"), std::string::npos) << err.str();
  EXPECT_FALSE(fs::exists(dir / "r.html"));
  EXPECT_FALSE(e.execute(":report", out, err));
  fs::remove_all(dir);
}

// After :layerwise the compared step's picture is the heatmap — its boxes in their SQNR band's
// colour, the figure in their titles — with the bands as a legend and the values worst first in
// a table; names stay text. y is 2.1x against 2x: 20·log10(20) = 26.0 dB (band 20-30).
TEST(Report, LayerwiseHeatmapAndTable) {
  Engine e;
  run(e, std::string("x = Variable(\"x\", shape=(4,))\ny = __mul_scalar__(x, scalar=2, name=\"") +
             kHostile + "\")\n:graph y");
  run(e, std::string("x = Variable(\"x\", shape=(4,))\ny = __mul_scalar__(x, scalar=2.1, name=\"") +
             kHostile + "\")\n:graph y\n:layerwise 0 1 x=ones");
  std::string html = report::sessionReport(e, "layerwise");
  EXPECT_EQ(count(html, "layerwise against step 0: 1 values, worst SQNR first"), 1u);
  EXPECT_EQ(count(html, "<td>26.0</td><td>1.0e-01</td><td>5.0e-02</td>"), 1u);
  EXPECT_EQ(count(html, "fill=\"#ebc83c\""), 1u) << "the one op of step 1 in the 20-30 band";
  EXPECT_EQ(count(html, "SQNR 26.0 dB"), 2u) << "the box's title, the transcript's median line";
  EXPECT_EQ(count(html, "median SQNR 26.0 dB over the 1 value that differs"), 1u);
  EXPECT_EQ(count(html, "background:#46a05a"), 1u) << "the legend";
  EXPECT_EQ(count(html, kHostile), 0u);
}
