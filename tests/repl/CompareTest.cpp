// CompareTest: `:compare A B` — two compilations' fusion side by side (issue 32, part 4).
#include "TestUtil.h"

#include <regex>
#include <string>

namespace loupe::test {
namespace {

const char *kProgram = "x = Variable(\"x\", shape=(1, 4, 8, 8), dtype=0)\n"
                       "c = conv2d(x, channels=4, kernel_size=(3, 3), padding=(1, 1), "
                       "name=\"conv\")\n"
                       "y = flatten(relu(c, name=\"relu\") + x, name=\"flat\")\n"
                       ":graph y";

// Two builds of one graph: opt_level 0 keeps every op a kernel, 2 fuses conv, relu and the add;
// the flatten is a kernel of its own in both, timed in each step's :profile.
TEST(Compare, TwoBuildsSideBySide) {
  Engine e;
  run(e, kProgram);
  run(e, ":build opt_level=0\n:profile 2\n:graph y\n:build opt_level=2\n:profile 2");
  std::string said = output(e, ":compare 1 3");
  EXPECT_EQ(said.substr(0, said.find("only in step 1:")),
            "step 1 (build opt_level=0): 4 groups; step 3 (build opt_level=2): 2 groups; 1 the "
            "same\n")
      << said;
  EXPECT_NE(said.find("only in step 3:\n  group __add_symbol__0: conv, relu, __add_symbol__0 "
                      "(fuse_conv2d_relu_broadcast_add, "),
            std::string::npos)
      << said;
  EXPECT_NE(said.find("nodes that changed group: __add_symbol__0, conv, relu\n"),
            std::string::npos);
  EXPECT_NE(said.find("functions only in step 1: fuse_broadcast_add, fuse_conv2d, fuse_relu\n"
                      "functions only in step 3: fuse_conv2d_relu_broadcast_add\n"),
            std::string::npos)
      << said;
  // Both steps were profiled: the flatten's time in each.
  EXPECT_TRUE(std::regex_search(
      said, std::regex("functions in both, paired by the groups they compute: fuse_flatten \\(the "
                       "same loops, [0-9.]+ ms, [0-9.]+ ms\\)\n$")))
      << said;
  // A step compared with itself: every group the same, nothing moved.
  said = output(e, ":compare 3 3");
  EXPECT_NE(said.find("2 groups; 2 the same\nnodes that changed group: none\n"), std::string::npos)
      << said;
}

// Functions are paired by the groups they compute, not by name: a float64 build of the same
// graph names its kernels anew (fuse_flatten_1) and they still pair — the flatten's loops the
// same (a copy loop, whatever the dtype), the convolution's changed under the same schedule.
// Against opt_level 3, the convolution's kernel is another function whose schedule changed.
TEST(Compare, PairsRenamedFunctionsByWhatTheyCompute) {
  Engine e;
  run(e, ":set target llvm -mcpu=znver3");
  run(e, kProgram);
  run(e, ":build opt_level=2\n:graph y\n:build opt_level=2 dtype=float64\n:graph y\n"
         ":build opt_level=3");
  std::string said = output(e, ":compare 1 3");
  EXPECT_NE(said.find("functions only in step 1: none\nfunctions only in step 3: none\n"
                      "functions in both, paired by the groups they compute: "
                      "fuse_conv2d_relu_broadcast_add = fuse_conv2d_relu_broadcast_add_1 (loops "
                      "changed, the same schedule), fuse_flatten = fuse_flatten_1 (the same "
                      "loops)\n"),
            std::string::npos)
      << said;
  said = output(e, ":compare 1 5");
  EXPECT_NE(said.find("fuse_conv2d_relu_broadcast_add = "
                      "fuse__contrib_conv2d_NCHWc_relu_broadcast_add (schedule changed: "),
            std::string::npos)
      << said;
}

TEST(Compare, BadStepsAreOneLineErrors) {
  Engine e;
  EXPECT_EQ(output(e, ":compare 0 1"), "error: no steps yet\n");
  run(e, kProgram);
  EXPECT_EQ(output(e, ":compare 0 0"), "error: step 0 (graph y) is neither partitioned nor "
                                       "built: apply GraphFusePartition or :build first\n");
  EXPECT_EQ(output(e, ":compare 0 x"),
            "error: no step 'x'; steps are 0 to 0 (:history lists them)\n");
  EXPECT_EQ(output(e, ":compare 0"),
            "error: usage: :compare A B (two history steps, partitioned or built)\n");
  EXPECT_EQ(e.history().size(), 1u);
}

} // namespace
} // namespace loupe::test
