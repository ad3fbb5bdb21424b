// SessionFileTest: the session format — parsing, canonical writing, diffs, check and bless.
#include "TestUtil.h"

#include "core/Error.h"
#include "repl/SessionFile.h"
#include "repl/TextFile.h"

using namespace loupe;
using namespace loupe::test;

TEST(SessionFile, ParsesInputsContinuationsCommentsAndOutputs) {
  Session s = parseSession("# title\n> a = 1\n> (a,\n. 2)\n(1, 2)\n\n# next\n> :ir\nline 1\n\n"
                           "line 3\n\n",
                           "t.session");
  ASSERT_EQ(s.blocks.size(), 3u);
  EXPECT_EQ(s.blocks[0].prelude, (std::vector<std::string>{"# title"}));
  EXPECT_EQ(s.blocks[0].expected.size(), 0u);
  EXPECT_EQ(s.blocks[1].input, "(a,\n2)");
  EXPECT_EQ(s.blocks[1].line, 3);
  EXPECT_EQ(s.blocks[1].expected, (std::vector<std::string>{"(1, 2)"}));
  EXPECT_EQ(s.blocks[2].prelude, (std::vector<std::string>{"", "# next"}));
  EXPECT_EQ(s.blocks[2].expected, (std::vector<std::string>{"line 1", "", "line 3"}));
  EXPECT_EQ(s.epilogue, (std::vector<std::string>{""}));
}

TEST(SessionFile, RejectsTextThatIsNotASession) {
  EXPECT_THROW(parseSession("output first\n> a = 1\n", "t.session"), Error);
  EXPECT_THROW(parseSession("> a\nout\n# c\nmore out\n", "t.session"), Error);
}

TEST(SessionFile, FormatRoundTrips) {
  std::string text = "# c\n> a = 1\n> (a,\n. 2)\n(1, 2)\n\n> a\n1\n";
  Session s = parseSession(text, "t.session");
  EXPECT_EQ(formatSession(s, {"", "(1, 2)\n", "1\n"}), text);
}

TEST(SessionFile, UnifiedDiff) {
  EXPECT_EQ(unifiedDiff({"a", "b", "c"}, {"a", "x", "c"}, "expected", "actual"),
            "--- expected\n+++ actual\n@@ -1,3 +1,3 @@\n a\n-b\n+x\n c\n");
  EXPECT_EQ(unifiedDiff({}, {"new"}, "e", "a"), "--- e\n+++ a\n@@ -0,0 +1,1 @@\n+new\n");
}

TEST(SessionFile, CheckReportsTheFirstDifferenceAndBlessFixesIt) {
  std::string path = ::testing::TempDir() + "/wrong.session";
  writeTextFile(path, "> x = Variable(\"x\")\n> x\n<Symbol y>\n> relu(x)\n<Symbol wrong>\n");
  std::ostringstream report;
  EXPECT_EQ(checkSession(path, false, report), 1);
  EXPECT_EQ(report.str(), path + ":2: output differs for '> x'\n--- expected (" + path +
                              ":2)\n+++ actual\n@@ -1,1 +1,1 @@\n-<Symbol y>\n+<Symbol x>\n");
  std::ostringstream blessReport;
  EXPECT_EQ(checkSession(path, true, blessReport), 0);
  EXPECT_EQ(readTextFile(path),
            "> x = Variable(\"x\")\n> x\n<Symbol x>\n\n> relu(x)\n<Symbol relu0>\n");
  std::ostringstream again;
  EXPECT_EQ(checkSession(path, false, again), 0) << again.str();
}

TEST(SessionFile, UnreadableFiles) {
  std::ostringstream report;
  EXPECT_EQ(checkSession("/nonexistent.session", false, report), 2);
  EXPECT_EQ(report.str(), "error: /nonexistent.session: cannot open: No such file or directory\n");
}
