// BisectTest: `:bisect` compares every kernel's output with the reference interpreter's as the
// two run side by side, and names the first node that differs (issue 32, part 5).
#include "TestUtil.h"

#include <cstdio>
#include <string>

namespace loupe::test {
namespace {

const char *kProgram = "x = Variable(\"x\", shape=(1, 4, 8, 8))\n"
                       "c1 = conv2d(x, channels=8, kernel_size=(3, 3), padding=(1, 1), "
                       "name=\"conv1\")\n"
                       "r1 = relu(c1, name=\"relu1\")\n"
                       "p = max_pool2d(r1, pool_size=(2, 2), strides=(2, 2), name=\"pool\")\n"
                       "c2 = conv2d(p, channels=8, kernel_size=(3, 3), padding=(1, 1), "
                       "name=\"conv2\")\n"
                       "y = relu(c2, name=\"relu2\")\n"
                       ":graph y";

TEST(Bisect, ACorrectBuildHasNoDifferingNode) {
  for (const char *level : {"0", "2", "3"}) {
    Engine e;
    run(e, kProgram);
    run(e, std::string(":build opt_level=") + level);
    std::string said = output(e, ":bisect");
    EXPECT_EQ(said.rfind("no node differs: ", 0), 0u) << level << "\n" << said;
  }
}

// The fixture plugin's broken_relu halves positive values in compiled code only: the first node
// that differs is relu1 (in the first convolution's kernel), its largest difference is half of
// a positive reference value, and the kernels before it agree.
TEST(Bisect, NamesTheNodeAPluginBroke) {
  Engine e;
  run(e, kProgram);
  run(e, ":load-pass BreakRelu.so\n:apply BreakRelu\n:build opt_level=2");
  std::string said = output(e, ":bisect");
  ASSERT_EQ(said.rfind("first difference: relu1 (kernel fuse_conv2d_broken_relu), after 0 "
                       "kernels that agree (tol 1.0e-04)\n",
                       0),
            0u)
      << said;
  size_t at = said.find("(built ");
  ASSERT_NE(at, std::string::npos) << said;
  double built = 0, reference = 0;
  ASSERT_EQ(std::sscanf(said.c_str() + at, "(built %lf, reference %lf)", &built, &reference), 2);
  EXPECT_GT(reference, 0);
  EXPECT_NEAR(built, reference / 2, 1e-5 * reference) << said;
  EXPECT_NE(said.find("\n  the kernel computes conv1, relu1\n"), std::string::npos) << said;
  // Unbroken, the same graph agrees everywhere.
  Engine ok;
  run(ok, kProgram);
  run(ok, ":build opt_level=2");
  EXPECT_EQ(output(ok, ":bisect").rfind("no node differs: 3 kernels compared", 0), 0u);
}

TEST(Bisect, BadInputIsOneLineAndChangesNothing) {
  Engine e;
  run(e, kProgram);
  EXPECT_EQ(output(e, ":bisect"), "error: the current graph was not built; run :build first\n");
  run(e, ":build opt_level=2");
  size_t steps = e.history().size();
  EXPECT_EQ(output(e, ":bisect tol=abc"),
            "error: tol must be a non-negative number (a share of each output's largest "
            "magnitude), got 'abc'\n");
  EXPECT_EQ(output(e, ":bisect top=3"),
            "error: bisect takes inputs, seed= and tol=; save=, compare=, top= and check= are "
            ":run's\n");
  EXPECT_NE(output(e, ":bisect z=zeros")
                .find("error: run: the graph has no input 'z'; its data "
                      "inputs: x (1, 4, 8, 8)"),
            std::string::npos);
  EXPECT_EQ(e.history().size(), steps);
}

} // namespace
} // namespace loupe::test
