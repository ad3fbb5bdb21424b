// BisectTest: `:bisect` compares every kernel's output with the reference interpreter's, each
// kernel alone on the reference's inputs or the built graph in turn (mode=forward), and names
// the kernel a difference comes from (issue 32, part 5; issue 56, part 5).
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
  ASSERT_EQ(said.rfind("first difference: relu1 (kernel fuse_conv2d_broken_relu), its own (run "
                       "on the reference interpreter's inputs), after 0 kernels that agree (tol "
                       "1.0e-04)\n",
                       0),
            0u)
      << said;
  // Half of a value is no rounding: the convolution sums 4 x 3 x 3 = 36 terms in float32.
  EXPECT_NE(said.find("\n  more than float rounding: float32's (n + 10)·u is 2.7e-06 (sums of 36 "
                      "terms, u = 6.0e-08); a wrong kernel, or sums that cancel\n"),
            std::string::npos)
      << said;
  // Run in turn, the answer is the same node (nothing before it differs).
  EXPECT_EQ(output(e, ":bisect mode=forward")
                .rfind("first difference: relu1 (kernel fuse_conv2d_broken_relu), after 0 "
                       "kernels that agree (tol 1.0e-04)\n",
                       0),
            0u);
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

// Seed 001's tutorial network in float32: dense0 sums 130000 products, so its own difference is
// float32 rounding (u = 2^-24 per term), and the softmax after it turns logits a few 1e-6 apart
// into probabilities 1e-3 apart. Run in turn, softmax0 is the first output past tol; run alone
// it is exact to float32, and :bisect blames dense0 as the source.
TEST(Bisect, BlamesTheKernelWhoseRoundingTheSoftmaxAmplifies) {
  Engine e;
  run(e, "x = Variable(\"x\", shape=(1,13,100,100))\n"
         "z = conv2d(data=x, channels=13, kernel_size=(3,3), padding=[1,1])\n"
         "z = relu(data=z)\n"
         "z = conv2d(data=z, channels=13, kernel_size=(3,3), padding=[1,1])\n"
         "z = relu(data=z)\n"
         "z = x + z\n"
         "z = flatten(z)\n"
         "z = dense(data=z, units=10)\n"
         "z = softmax(data=z)\n"
         "z = sum(z, keepdims=True)\n"
         ":graph z\n:build");
  EXPECT_EQ(output(e, ":bisect mode=forward")
                .rfind("first difference: softmax0 (kernel "
                       "fuse_softmax), after 4 kernels that agree",
                       0),
            0u);
  std::string said = output(e, ":bisect");
  EXPECT_EQ(said.rfind("source of the difference: dense0 (kernel fuse_dense), ", 0), 0u) << said;
  EXPECT_NE(said.find("which softmax0 (kernel fuse_softmax) amplifies to "), std::string::npos)
      << said;
  EXPECT_NE(said.find("\n  float rounding: within float32's (n + 10)·u = 7.7e-03 (sums of 130000 "
                      "terms, u = 6.0e-08)\n"),
            std::string::npos)
      << said;
  EXPECT_NE(said.find("  its inputs (the reference's values): flatten0 (1, 130000) max |x| "),
            std::string::npos)
      << said;
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
            "error: bisect takes inputs, seed=, tol= and mode=; save=, compare=, top= and check= "
            "are :run's\n");
  EXPECT_EQ(output(e, ":bisect mode=sideways"),
            "error: mode must be local (each kernel on the reference's inputs) or forward (the "
            "built graph run in turn), got 'sideways'\n");
  EXPECT_NE(output(e, ":bisect z=zeros")
                .find("error: run: the graph has no input 'z'; its data "
                      "inputs: x (1, 4, 8, 8)"),
            std::string::npos);
  EXPECT_EQ(e.history().size(), steps);
}

} // namespace
} // namespace loupe::test
