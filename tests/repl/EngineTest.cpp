// EngineTest: every kind of bad input gives one clear error line and leaves the state as it
// was; history, undo/redo and recording behave.
#include "TestUtil.h"

#include "core/Json.h"
#include "repl/SessionFile.h"
#include "repl/TextFile.h"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <unistd.h>

using namespace loupe;
using namespace loupe::test;

namespace {

/// Runs `input` expecting failure; checks the single error line and that nothing changed.
std::string failing(Engine &e, const std::string &input) {
  size_t steps = e.history().size();
  const Step *cur = e.current();
  auto vars = e.variableNames();
  std::ostringstream out, err;
  EXPECT_FALSE(e.execute(input, out, err)) << input;
  EXPECT_EQ(out.str(), "") << input;
  std::string msg = err.str();
  EXPECT_EQ(std::count(msg.begin(), msg.end(), '\n'), 1) << msg;
  EXPECT_EQ(e.history().size(), steps) << input;
  EXPECT_EQ(e.current(), cur) << input;
  EXPECT_EQ(e.variableNames(), vars) << input;
  return msg;
}

Engine withX() {
  Engine e;
  run(e, "x = Variable(\"x\", shape=(1,3,8,8))");
  return e;
}

} // namespace

TEST(EngineErrors, SyntaxErrorHasLineAndColumn) {
  Engine e = withX();
  EXPECT_EQ(failing(e, "y = relu(x"),
            "<stdin>:1:11: error: expected ')' but found end of input (to close the '(' at "
            "column 9)\n");
  EXPECT_EQ(failing(e, "y = x $ 2"), "<stdin>:1:7: error: unexpected character '$'\n");
  EXPECT_EQ(failing(e, "y = = 2"), "<stdin>:1:5: error: expected an expression but found '='\n");
  EXPECT_EQ(failing(e, "y = 'abc"), "<stdin>:1:5: error: unterminated string\n");
  EXPECT_EQ(failing(e, "y = relu(x))"),
            "<stdin>:1:12: error: expected end of statement, found ')'\n");
}

// Brackets are reported where they were opened, also in input that starts at a later line of a
// script (the positions inside the message are relative, so the script's offset cannot make them
// wrong): one left open before a command line, one left open at the end, mismatched ones.
TEST(EngineErrors, UnclosedBracketsAreReportedWhereTheyWereOpened) {
  Engine e = withX();
  std::ostringstream out;
  EXPECT_FALSE(e.execute("y = relu(x\n:graph y", out, out, 5));
  EXPECT_EQ(out.str(), "<stdin>:5:9: error: '(' is never closed (unexpected character ':' 1 line "
                       "below it)\n");
  out.str("");
  EXPECT_FALSE(e.execute("y = relu(x,\n\n  name='a'", out, out, 5));
  EXPECT_EQ(out.str(), "<stdin>:7:11: error: expected ')' but found end of input (to close the '(' "
                       "opened 2 lines above, at column 9)\n");
  EXPECT_EQ(failing(e, "y = relu((x)]"),
            "<stdin>:1:13: error: ']' does not close the '(' opened at column 9\n");
  EXPECT_EQ(failing(e, "y = [1,\n 2)"),
            "<stdin>:2:3: error: ')' does not close the '[' opened 1 line above\n");
}

TEST(EngineErrors, UnknownOpSuggestsNames) {
  Engine e = withX();
  EXPECT_EQ(failing(e, "y = conv_2d(x)"),
            "<stdin>:1:5: error: unknown op 'conv_2d' (did you mean 'conv2d', 'conv3d'?)\n");
  EXPECT_EQ(failing(e, "y = rleu(x)"),
            "<stdin>:1:5: error: unknown op 'rleu' (did you mean 'relu'?)\n");
}

// A suggestion is near what was typed: a swap of two letters is one step, and a name that
// shares no letter with the candidate, or changes more than a third of them, gets none.
TEST(EngineErrors, SuggestionsOnlyWithinASmallDistance) {
  EXPECT_EQ(didYouMean("rleu", {"relu", "elu", "gelu"}), " (did you mean 'relu'?)");
  EXPECT_EQ(didYouMean("3", {"x", "y"}), "");
  EXPECT_EQ(didYouMean("foo", {"dot", "for"}), " (did you mean 'for'?)");
  EXPECT_EQ(didYouMean("foo", {"dot", "help"}), "");
  EXPECT_EQ(didYouMean("xx", {"x"}), " (did you mean 'x'?)");
  Engine e;
  EXPECT_EQ(output(e, ":foo"), "error: unknown command ':foo'; :help lists the commands\n");
}

TEST(EngineErrors, AttributeProblems) {
  Engine e = withX();
  EXPECT_EQ(failing(e, "y = dense(x, units=3, bias=1)"),
            "<stdin>:1:5: error: dense: unknown attribute 'bias'; dense takes units, use_bias, "
            "out_dtype\n");
  EXPECT_EQ(failing(e, "y = relu(x, alpha=1)"),
            "<stdin>:1:5: error: relu: unknown attribute 'alpha': relu takes no attributes\n");
  EXPECT_EQ(failing(e, "y = dense(x, units=\"ten\")"),
            "<stdin>:1:5: error: dense: attribute 'units': expected an integer, got 'ten'\n");
  EXPECT_EQ(failing(e, "y = dense(x)"),
            "<stdin>:1:5: error: dense: missing required attribute 'units' (number of output "
            "units)\n");
  EXPECT_EQ(
      failing(e, "y = cast(x, dtype=\"float128\")"),
      "<stdin>:1:5: error: cast: attribute 'dtype': expected one of float32, float64, "
      "float16, uint8, int32, int8, int64, int16, uint16, uint32, uint64, bool, bfloat16, got "
      "'float128'\n");
}

TEST(EngineErrors, InputsBothPositionalAndKeyword) {
  Engine e = withX();
  EXPECT_EQ(failing(e, "y = conv2d(x, weight=x, channels=4, kernel_size=(3,3))"),
            "<stdin>:1:5: error: conv2d: inputs must be all positional or all keyword, not both "
            "(got 1 positional and 'weight' by keyword)\n");
  EXPECT_EQ(failing(e, "y = relu(x, x)"), "<stdin>:1:5: error: relu takes 1 input (data), got 2\n");
  EXPECT_EQ(failing(e, "y = relu(dat=x)"),
            "<stdin>:1:5: error: relu: unknown input 'dat' (did you mean 'data'?); inputs are "
            "data\n");
}

TEST(EngineErrors, UndefinedNameAndBadOperands) {
  Engine e = withX();
  EXPECT_EQ(failing(e, "y = relu(weights)"),
            "<stdin>:1:10: error: name 'weights' is not defined\n");
  EXPECT_EQ(failing(e, "y = relu(xx)"),
            "<stdin>:1:10: error: name 'xx' is not defined (did you mean 'x'?)\n");
  EXPECT_EQ(failing(e, "y = x + \"a\""),
            "<stdin>:1:7: error: unsupported operand types for +: a symbol and a string\n");
  EXPECT_EQ(failing(e, "y = x ** x"),
            "<stdin>:1:7: error: symbol ** symbol needs __pow_symbol__, which NNVM (seed era) "
            "does not have\n");
}

TEST(EngineErrors, FailedCallsDoNotConsumeNames) {
  Engine e = withX();
  failing(e, "y = conv2d(x, channels=\"a\", kernel_size=(3,3))");
  run(e, "y = conv2d(x, channels=4, kernel_size=(3,3))");
  EXPECT_EQ(output(e, "y"), "<Symbol conv2d0>\n");
}

// The evaluator journals what statements change: a script that fails on its third statement
// leaves the first two's new bindings, its rebinding of `x` and the counters they advanced as
// they were, so the names it would have taken are taken afresh.
TEST(EngineErrors, AFailingScriptUndoesItsEarlierStatements) {
  Engine e = withX();
  run(e, "a = relu(x)");
  failing(e, "b = relu(x)\na = conv2d(x, channels=2, kernel_size=(1,1))\nc = nope(x)");
  EXPECT_EQ(e.variableNames(), (std::vector<std::string>{"a", "x"}));
  EXPECT_EQ(output(e, "a"), "<Symbol relu0>\n");
  run(e, "b = relu(x)\nd = conv2d(x, channels=2, kernel_size=(1,1))");
  EXPECT_EQ(output(e, "b"), "<Symbol relu1>\n");
  EXPECT_EQ(output(e, "d"), "<Symbol conv2d0>\n");
}

TEST(EngineErrors, CommandsAndPasses) {
  Engine e = withX();
  EXPECT_EQ(failing(e, ":ir"),
            "error: no current graph: make one with :graph NAME or :load FILE\n");
  run(e, "w = Variable(\"w\", shape=(4,2,3,3))\n"
         "y = conv2d(x, w, channels=4, kernel_size=(3,3), use_bias=False)\n:graph y");
  EXPECT_EQ(failing(e, ":apply InferShap"),
            "error: unknown pass 'InferShap' (did you mean 'InferShape'?); :passes lists them\n");
  // One bad name means nothing runs, even the good passes before it.
  EXPECT_EQ(failing(e, ":apply InferType Nope"),
            "error: unknown pass 'Nope'; :passes lists them\n");
  EXPECT_EQ(failing(e, ":apply InferShape"),
            "error: operator conv2d0 (conv2d): input 'weight' has shape [4, 2, 3, 3] but "
            "[4, 3, 3, 3] is required\n");
  EXPECT_EQ(failing(e, ":apply LoadJSON"),
            "error: Graph attr dependency json is required by pass LoadJSON but is not "
            "available. The attribute is provided by pass SaveJSON\n");
  EXPECT_EQ(failing(e, ":frob"), "error: unknown command ':frob'; :help lists the commands\n");
  EXPECT_EQ(failing(e, ":attr shape"),
            "error: the graph has no attribute 'shape'; it is provided by InferShape\n");
  EXPECT_EQ(failing(e, ":graph 3"), "error: :graph needs a symbol, got a number\n");
  EXPECT_EQ(failing(e, ":undo"), "error: nothing to undo\n");
  EXPECT_EQ(failing(e, ":apply"), "error: usage: :apply P1 [P2 …] (:passes lists them)\n");
}

TEST(EngineErrors, FilesThatAreNotGraphs) {
  Engine e = withX();
  std::string empty = ::testing::TempDir() + "/empty.json";
  writeTextFile(empty, "");
  EXPECT_EQ(failing(e, ":load " + empty),
            "error: " + empty + ": empty file, expected NNVM graph JSON\n");
  std::string bin = ::testing::TempDir() + "/binary.json";
  {
    std::ofstream f(bin, std::ios::binary);
    f.write("{\0\x01\x02", 4);
  }
  EXPECT_EQ(failing(e, ":load " + bin),
            "error: " + bin + ": not a text file (NUL byte at offset 1)\n");
  EXPECT_EQ(failing(e, ":load /nonexistent/g.json"),
            "error: /nonexistent/g.json: cannot open: No such file or directory\n");
}

TEST(EngineErrors, EmptyInputIsANoOp) {
  Engine e = withX();
  std::ostringstream out, err;
  EXPECT_TRUE(e.execute("", out, err));
  EXPECT_TRUE(e.execute("   # only a comment", out, err));
  EXPECT_EQ(out.str() + err.str(), "");
}

TEST(Engine, HistoryUndoRedo) {
  Engine e = withX();
  run(e, "y = relu(x)\n:graph y\n:apply InferShape\n:apply InferType");
  EXPECT_EQ(e.history().size(), 3u);
  EXPECT_EQ(output(e, ":undo"), "now at step 1: apply InferShape\n");
  EXPECT_EQ(e.current()->graph.attr("dtype"), nullptr);
  EXPECT_EQ(output(e, ":redo"), "now at step 2: apply InferType\n");
  EXPECT_NE(e.current()->graph.attr("dtype"), nullptr);
  run(e, ":undo\n:undo\n:apply InferType");
  // A new step after undo drops the redo tail.
  EXPECT_EQ(e.history().size(), 2u);
  EXPECT_EQ(e.current()->graph.attr("shape"), nullptr);
  EXPECT_EQ(output(e, ":history"),
            "  0  graph y                             new graph\n"
            "* 1  apply InferType                     graph unchanged; added "
            "dtype_num_unknown_nodes, dtype\n");
}

TEST(Engine, SaveAndLoadRoundTrip) {
  Engine e = withX();
  std::string path = ::testing::TempDir() + "/g.json";
  run(e, "y = max_pool2d(relu(x), pool_size=(2,2))\n:graph y\n:save " + path + "\n:load " + path);
  ASSERT_EQ(e.history().size(), 2u);
  std::string loaded = output(e, ":ir");
  EXPECT_EQ(readTextFile(path), saveJSON(e.history()[1].graph));
  run(e, ":undo");
  EXPECT_EQ(output(e, ":ir"), loaded);
}

TEST(Engine, RecordWritesAReplayableSession) {
  Engine e;
  std::string path = ::testing::TempDir() + "/rec.session";
  run(e, "x = Variable(\"x\", shape=(2,2))\ny = x + 1\n:graph y");
  std::ostringstream o;
  e.execute(":record " + path, o, o);
  EXPECT_EQ(o.str(), "recording to " + path + " (3 inputs so far)\n");
  e.execute("y = relu(", o, o); // an error is recorded too
  run(e, ":ir\n:stop");
  std::string text = readTextFile(path);
  EXPECT_NE(text.find("> :graph y\nstep 0: graph y (2 nodes, 1 input, 1 output)\n"),
            std::string::npos);
  EXPECT_NE(text.find("> y = relu(\n<stdin>:1:10: error:"), std::string::npos);
  EXPECT_EQ(text.find("> :record"), std::string::npos) << text;
  EXPECT_EQ(text.find("> :stop"), std::string::npos);
  std::ostringstream report;
  EXPECT_EQ(checkSession(path, false, report), 0) << report.str();
}

TEST(Engine, CompletionKnowsCommandsPassesOpsAndNames) {
  Engine e = withX();
  EXPECT_EQ(e.completions(":ap", ":ap"), (std::vector<std::string>{":apply"}));
  EXPECT_EQ(e.completions(":apply Infer", "Infer"),
            (std::vector<std::string>{"InferShape", "InferType"}));
  EXPECT_EQ(e.completions("y = conv", "conv"),
            (std::vector<std::string>{"conv2d", "conv2d_transpose", "conv3d"}));
  auto v = e.completions("y = relu(x", "x");
  EXPECT_NE(std::find(v.begin(), v.end(), "x"), v.end());
}

namespace loupe::test {
namespace {

// A `:command` line ends an unfinished bracket, which then fails alone, instead of being read
// as part of it; lines inside a bracket join their input.
TEST(InputAssembler, ACommandLineEndsAnUnclosedBracket) {
  std::vector<ScriptInput> in = splitScript("x = Variable(\"x\")\ny = relu(x,\n  name=\"a\")\n"
                                            "z = relu(x\n:vars\n\n:ir\nw = (");
  ASSERT_EQ(in.size(), 6u);
  EXPECT_EQ(in[1].text, "y = relu(x,\n  name=\"a\")");
  EXPECT_EQ(in[1].line, 2);
  EXPECT_EQ(in[2].text, "z = relu(x");
  EXPECT_EQ(in[2].line, 4);
  EXPECT_EQ(in[3].text, ":vars");
  EXPECT_EQ(in[3].line, 5);
  EXPECT_EQ(in[4].text, ":ir");
  EXPECT_EQ(in[4].line, 7);
  EXPECT_EQ(in[5].text, "w = (");
  EXPECT_EQ(in[5].line, 8);
}

} // namespace
} // namespace loupe::test

// A shared session writes inside its own folder only: a file there (or in a folder under it) is
// written; `..`, an absolute path elsewhere and a symbolic link out of the folder are refused
// before anything is written, and the refusal leaves the engine as it was.
TEST(EngineTrust, WritesStayInTheSessionsFolderAndLinksDoNotLeadOut) {
  namespace fs = std::filesystem;
  fs::path base = fs::path(::testing::TempDir()) / ("loupe-trust-" + std::to_string(::getpid()));
  fs::remove_all(base);
  fs::create_directories(base / "shared" / "sub");
  fs::create_directories(base / "elsewhere");
  fs::create_directory_symlink(base / "elsewhere", base / "shared" / "link");
  Engine e = withX();
  Engine::Trust t;
  t.writeFolder = (base / "shared").string();
  e.setTrust(t);
  run(e, "y = relu(x)\n:graph y");
  run(e, ":save " + (base / "shared" / "g.json").string());
  run(e, ":dot " + (base / "shared" / "sub" / "g.dot").string());
  EXPECT_TRUE(fs::exists(base / "shared" / "g.json"));
  EXPECT_TRUE(fs::exists(base / "shared" / "sub" / "g.dot"));
  for (const fs::path &p : {base / "elsewhere" / "g.json", base / "shared" / ".." / "g.json",
                            base / "shared" / "link" / "g.json", fs::path("/tmp/loupe-g.json")}) {
    std::ostringstream out, err;
    EXPECT_FALSE(e.execute(":save " + p.string(), out, err)) << p;
    EXPECT_EQ(err.str(), "error: :save " + p.string() + ": outside the session's folder " +
                             t.writeFolder +
                             "; a shared session writes only there unless loupe runs with "
                             "--allow-writes\n");
    EXPECT_FALSE(fs::exists(p)) << p;
  }
  EXPECT_TRUE(fs::is_empty(base / "elsewhere"));
  EXPECT_EQ(e.history().size(), 1u);
  // No write folder: the user's own inputs write anywhere.
  e.setTrust({});
  run(e, ":save " + (base / "elsewhere" / "g.json").string());
  EXPECT_TRUE(fs::exists(base / "elsewhere" / "g.json"));
  fs::remove_all(base);
}

// checkSession replays a session with the trust it is given: by default (the user's own file,
// as `loupe --check` with both --allow options) a plugin loads; untrusted, it is refused.
TEST(EngineTrust, CheckSessionAppliesTheTrustItIsGiven) {
  std::string path = ::testing::TempDir() + "/trust.session";
  writeTextFile(path, "> :load-pass /nonexistent/plugin.so\nerror: cannot load\n");
  std::ostringstream open, closed;
  EXPECT_EQ(checkSession(path, false, open), 1);
  EXPECT_NE(open.str().find("+error: cannot load plugin /nonexistent/plugin.so"), std::string::npos)
      << open.str();
  Engine::Trust t;
  t.plugins = false;
  EXPECT_EQ(checkSession(path, false, closed, t), 1);
  EXPECT_NE(closed.str().find("+error: :load-pass /nonexistent/plugin.so: a shared session loads "
                              "no plugin"),
            std::string::npos)
      << closed.str();
}
