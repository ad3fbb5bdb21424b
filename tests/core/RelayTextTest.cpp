// RelayTextTest: seed 003's modules printed in Relay's text form (relay-spec §5 and §2.8): after
// FoldConstant, after EliminateCommonSubexpr, and FuseOps' primitive functions at fuse_opt_level
// 0 (parameter names made unique as Relay's printer does: %p03, %p12, …) and 2. The graph form
// always carries conv2d's channels and kernel_size (NNVM needs them), so they print, where
// seed 003's Relay program left them to type inference.
#include "TestUtil.h"

#include "core/RelayText.h"

using namespace loupe;
using namespace loupe::test;

namespace {

const char *kExample = "x = Variable(\"x\", shape=(1,64,56,56), dtype=0)\n"
                       "weight = Variable(\"weight\", shape=(64,64,3,3), dtype=0)\n"
                       "c = const(1.5, shape=(1,64,54,54))\n"
                       "conv = conv2d(x, weight, channels=64, kernel_size=(3,3), use_bias=False)\n"
                       "y = (c + c) * 2\ny = conv + y\nz = y + c\nz1 = y + c\nz2 = z + z1\n"
                       ":graph z2\n:apply FoldConstant\n:apply InferShape InferType";

// The seed's types, written out where the seed writes them.
std::string typed(std::string text) {
  const std::pair<const char *, const char *> types[] = {
      {"T56", "Tensor[(1, 64, 56, 56), float32]"},
      {"TW", "Tensor[(64, 64, 3, 3), float32]"},
      {"T54", "Tensor[(1, 64, 54, 54), float32]"}};
  for (const auto &[k, v] : types)
    for (size_t at = text.find(k); at != std::string::npos; at = text.find(k, at))
      text.replace(at, std::string(k).size(), v);
  return text;
}

const char *kMain = "def @main(%x: T56 /* ty=T56 */, %weight: TW /* ty=TW */) -> T54 {\n";
const char *kConv = "nn.conv2d(%x, %weight, padding=[0, 0, 0, 0], channels=64, kernel_size=[3, 3])";

} // namespace

TEST(RelayText, FoldedAndCommonSubexpressionsEliminated) {
  Engine e;
  run(e, kExample);
  EXPECT_EQ(printRelay(e.current()->graph),
            typed(std::string(kMain) + "  %0 = " + kConv + " /* ty=T54 */;\n" +
                  "  %1 = add(%0, meta[relay.Constant][0] /* ty=T54 */) /* ty=T54 */;\n"
                  "  %2 = add(%1, meta[relay.Constant][1] /* ty=T54 */) /* ty=T54 */;\n"
                  "  %3 = add(%1, meta[relay.Constant][1] /* ty=T54 */) /* ty=T54 */;\n"
                  "  add(%2, %3) /* ty=T54 */\n}\n"));
  run(e, ":apply EliminateCommonSubexpr\n:apply InferShape InferType");
  EXPECT_EQ(printRelay(e.current()->graph),
            typed(std::string(kMain) + "  %0 = " + kConv + " /* ty=T54 */;\n" +
                  "  %1 = add(%0, meta[relay.Constant][0] /* ty=T54 */) /* ty=T54 */;\n"
                  "  %2 = add(%1, meta[relay.Constant][1] /* ty=T54 */) /* ty=T54 */;\n"
                  "  add(%2, %2) /* ty=T54 */\n}\n"));
}

TEST(RelayText, FuseOpsGroupsArePrimitiveFunctionsWithUniqueParameterNames) {
  Engine e;
  run(e, std::string(kExample) + "\n:apply EliminateCommonSubexpr\n"
                                 ":pipeline FuseOps(fuse_opt_level=0)");
  std::string conv = std::string(kConv).replace(10, 11, "%p03, %p12");
  EXPECT_EQ(
      printRelay(e.current()->graph),
      typed(std::string(kMain) +
            "  %0 = fn (%p03: T56 /* ty=T56 */, %p12: TW /* ty=TW */, Primitive=1) -> T54 {\n"
            "    " +
            conv +
            " /* ty=T54 */\n"
            "  } /* ty=fn (T56, TW) -> T54 */;\n"
            "  %1 = %0(%x, %weight) /* ty=T54 */;\n"
            "  %2 = fn (%p02: T54 /* ty=T54 */, %p11: T54 /* ty=T54 */, Primitive=1) -> T54 {\n"
            "    add(%p02, %p11) /* ty=T54 */\n"
            "  } /* ty=fn (T54, T54) -> T54 */;\n"
            "  %3 = %2(%1, meta[relay.Constant][0] /* ty=T54 */) /* ty=T54 */;\n"
            "  %4 = fn (%p01: T54 /* ty=T54 */, %p1: T54 /* ty=T54 */, Primitive=1) -> T54 {\n"
            "    add(%p01, %p1) /* ty=T54 */\n"
            "  } /* ty=fn (T54, T54) -> T54 */;\n"
            "  %5 = %4(%3, meta[relay.Constant][1] /* ty=T54 */) /* ty=T54 */;\n"
            "  %6 = fn (%p0: T54 /* ty=T54 */, Primitive=1) -> T54 {\n"
            "    add(%p0, %p0) /* ty=T54 */\n"
            "  } /* ty=fn (T54) -> T54 */;\n"
            "  %6(%5) /* ty=T54 */\n}\n"));
  // fuse_opt_level 2: one function of four parameters (the ECSE'd body of relay-spec §2.8).
  run(e, ":undo\n:pipeline FuseOps(fuse_opt_level=2)");
  std::string inner = std::string(kConv).replace(10, 11, "%p0, %p1");
  EXPECT_EQ(printRelay(e.current()->graph),
            typed(std::string(kMain) +
                  "  %3 = fn (%p0: T56 /* ty=T56 */, %p1: TW /* ty=TW */, %p2: T54 /* ty=T54 */, "
                  "%p3: T54 /* ty=T54 */, Primitive=1) -> T54 {\n"
                  "    %0 = " +
                  inner +
                  " /* ty=T54 */;\n"
                  "    %1 = add(%0, %p2) /* ty=T54 */;\n"
                  "    %2 = add(%1, %p3) /* ty=T54 */;\n"
                  "    add(%2, %2) /* ty=T54 */\n"
                  "  } /* ty=fn (T56, TW, T54, T54) -> T54 */;\n"
                  "  %3(%x, %weight, meta[relay.Constant][0] /* ty=T54 */, "
                  "meta[relay.Constant][1] /* ty=T54 */) /* ty=T54 */\n}\n"));
}

TEST(RelayText, ScalarsBiasesUntypedGraphsAndNames) {
  Engine e;
  // Before inference there are no types to comment; a scalar is a literal of the tensor's
  // dtype (float32 when unknown); a bias is nn.bias_add; a name not starting with a letter
  // gets a v; an op Relay has no name for keeps NNVM's.
  run(e, "d = Variable(\"1d\")\ny = 3 - relu(dense(d, units=4)) * 2\n:graph y");
  EXPECT_EQ(printRelay(e.current()->graph), "def @main(%v1d, %dense0_weight, %dense0_bias) {\n"
                                            "  %0 = nn.dense(%v1d, %dense0_weight, units=4);\n"
                                            "  %1 = nn.bias_add(%0, %dense0_bias);\n"
                                            "  %2 = nn.relu(%1);\n"
                                            "  %3 = multiply(%2, 2f);\n"
                                            "  subtract(3f, %3)\n}\n");
}

TEST(RelayText, DeepestExpressionsAreBoundFirst) {
  // Seed 003's instrument prints the unfolded program with add(c, c) before the conv2d: TVM's
  // printer binds by the longest path from the result (add(c, c) is 4 calls deep, the conv2d
  // and the multiply 3), in post-order among equals (conv2d is the first argument).
  Engine e;
  run(e, "x = Variable(\"x\", shape=(1,64,56,56), dtype=0)\n"
         "weight = Variable(\"weight\", shape=(64,64,3,3), dtype=0)\n"
         "c = const(1.5, shape=(1,64,54,54))\n"
         "conv = conv2d(x, weight, channels=64, kernel_size=(3,3), use_bias=False)\n"
         "y = (c + c) * 2\ny = conv + y\nz = y + c\nz1 = y + c\nz2 = z + z1\n:graph z2");
  EXPECT_EQ(
      printRelay(e.current()->graph),
      "def @main(%x: Tensor[(1, 64, 56, 56), float32], %weight: Tensor[(64, 64, 3, 3), "
      "float32]) {\n"
      "  %0 = add(meta[relay.Constant][0], meta[relay.Constant][0]);\n"
      "  %1 = nn.conv2d(%x, %weight, padding=[0, 0, 0, 0], channels=64, kernel_size=[3, 3]);\n"
      "  %2 = multiply(%0, 2f);\n"
      "  %3 = add(%1, %2);\n"
      "  %4 = add(%3, meta[relay.Constant][0]);\n"
      "  %5 = add(%3, meta[relay.Constant][0]);\n"
      "  add(%4, %5)\n}\n");
}
