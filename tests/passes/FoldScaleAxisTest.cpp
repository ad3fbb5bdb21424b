// FoldScaleAxisTest: backward and forward scale folding, checked structurally against the rules
// of nnvm-spec §8 and numerically against the reference interpreter on the unfolded graph.
#include "TestUtil.h"

#include <gtest/gtest.h>

#include <random>

using namespace loupe;
using namespace loupe::test;

namespace {

struct Folded {
  Graph before, after;
};

// Builds `program` (output y), infers shapes, folds, and checks that the folded graph computes
// what the original did on random positive inputs (scales must be positive for a fold through
// relu or max_pool2d to be exact, as in NNVM).
Folded foldChecked(const std::string &program) {
  Engine e;
  run(e, program + "\n:graph y");
  Graph g = applyPasses(e.current()->graph, {"InferShape"});
  const IndexedGraph &idx = g.index();
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> u(0.25, 2);
  std::map<std::string, Tensor> in;
  for (uint32_t nid : idx.argNodes) {
    Tensor t(g.attr("shape")->shapes[idx.entryId(nid, 0)], kFloat64);
    for (double &v : t.data)
      v = u(rng) * (idx.nodes[nid].node->name == "x" ? (rng() % 2 ? 1 : -1) : 1);
    in[idx.nodes[nid].node->name] = t;
  }
  Graph folded = applyPasses(g, {"FoldScaleAxis"});
  EXPECT_TRUE(folded.attrs.empty());
  Tensor want = interpret(withInputs(g, in), in).at(0);
  Tensor got = interpret(withInputs(folded, in), in).at(0);
  EXPECT_EQ(got.shape, want.shape);
  for (size_t i = 0; i < want.data.size() && i < got.data.size(); ++i)
    EXPECT_NEAR(got.data[i], want.data[i], 1e-12 * (1 + std::abs(want.data[i]))) << i;
  return {g, folded};
}

// "op(input, input, …)" per op node, in id order, naming inputs by node name.
std::vector<std::string> nodesOf(const Graph &g) {
  std::vector<std::string> out;
  for (const auto &n : g.index().nodes) {
    if (n.node->isVariable())
      continue;
    std::string s = n.node->name + "=" + n.node->op->name + "(";
    for (size_t i = 0; i < n.node->inputs.size(); ++i)
      s += (i ? "," : "") + n.node->inputs[i].node->name;
    out.push_back(s + ")");
  }
  return out;
}

using Names = std::vector<std::string>;

const char *kConvReluScale = R"(x = Variable("x", shape=(1,3,5,5))
s = Variable("s", shape=(4,))
c = conv2d(x, channels=4, kernel_size=(3,3), padding=(1,1), name="c")
y = broadcast_mul(relu(c, name="r"), expand_dims(s, axis=1, num_newaxis=2, name="e"), name="m"))";

} // namespace

TEST(FoldScaleAxis, BackwardIntoConvWeightAndBiasThroughRelu) {
  Folded f = foldChecked(kConvReluScale);
  EXPECT_EQ(nodesOf(f.after),
            (Names{"s_expand=expand_dims(s)", "c_weight_sc=broadcast_mul(c_weight,s_expand)",
                   "c_bias_sc=broadcast_mul(c_bias,s)", "c=conv2d(x,c_weight_sc,c_bias_sc)",
                   "r=relu(c)"}));
}

TEST(FoldScaleAxis, BackwardThroughBiasAddAndMaxPool) {
  Folded f = foldChecked(R"(x = Variable("x", shape=(2,3,6,6))
b = Variable("b", shape=(4,1,1))
s = Variable("s", shape=(4,1,1))
c = conv2d(x, channels=4, kernel_size=(1,1), use_bias=False, name="c")
p = max_pool2d(broadcast_add(c, b, name="a"), pool_size=(2,2), strides=(2,2), name="p")
y = broadcast_mul(p, s, name="m"))");
  // A 3-D scale variable is squeezed before it is expanded; the bias (4,1,1) is scaled on its
  // axis 0.
  EXPECT_EQ(
      nodesOf(f.after),
      (Names{"s_sqz=squeeze(s)", "s_sqz_expand=expand_dims(s_sqz)",
             "c_weight_sc=broadcast_mul(c_weight,s_sqz_expand)", "c=conv2d(x,c_weight_sc)",
             "s_sqz=squeeze(s)", "s_sqz_expand=expand_dims(s_sqz)",
             "b_sc=broadcast_mul(b,s_sqz_expand)", "a=broadcast_add(c,b_sc)", "p=max_pool2d(a)"}));
}

TEST(FoldScaleAxis, BatchNormScaleAfterSimplifyInference) {
  Engine e;
  run(e, R"(x = Variable("x", shape=(1,3,4,4))
g = Variable("g", shape=(2,))
b = Variable("b", shape=(2,))
m = Variable("m", shape=(2,))
v = Variable("v", shape=(2,))
y = relu(batch_norm(conv2d(x, channels=2, kernel_size=(3,3), name="c"), g, b, m, v, name="bn"))
:graph y
:apply InferShape SimplifyInference InferShape FoldScaleAxis)");
  Names ops = nodesOf(e.current()->graph);
  // The batch_norm multiply is gone; the conv reads scaled weight and bias.
  EXPECT_EQ(
      std::count(ops.begin(), ops.end(), "bn_a_mul_data=broadcast_mul(c,bn_gamma_mul_div_expand)"),
      0);
  EXPECT_NE(std::find(ops.begin(), ops.end(), "c=conv2d(x,c_weight_sc,c_bias_sc)"), ops.end());
  EXPECT_NE(std::find(ops.begin(), ops.end(), "bn_out=broadcast_add(c,bn_add_beta_expand)"),
            ops.end());
}

TEST(FoldScaleAxis, ForwardIntoConvWeightDividingTheBias) {
  Folded f = foldChecked(R"(x = Variable("x", shape=(1,3,5,5))
s = Variable("s", shape=(3,))
b = Variable("b", shape=(3,1,1))
m = broadcast_mul(x, expand_dims(s, axis=1, num_newaxis=2, name="e"), name="m")
y = conv2d(relu(broadcast_add(m, b, name="a"), name="r"), channels=2, kernel_size=(3,3), name="c"))");
  EXPECT_EQ(
      nodesOf(f.after),
      (Names{"s_expand=expand_dims(s)", "b_sc=broadcast_div(b,s_expand)", "a=broadcast_add(x,b_sc)",
             "r=relu(a)", "s_expand=expand_dims(s)", "c_weight_sc=broadcast_mul(c_weight,s_expand)",
             "c=conv2d(r,c_weight_sc,c_bias)"}));
}

TEST(FoldScaleAxis, ForwardIntoEveryBranchOfAFork) {
  Folded f = foldChecked(R"(x = Variable("x", shape=(1,3,5,5))
s = Variable("s", shape=(3,1,1))
r = relu(broadcast_mul(x, s, name="m"), name="r")
y = elemwise_add(conv2d(r, channels=2, kernel_size=(1,1), name="c1"), conv2d(r, channels=2, kernel_size=(1,1), name="c2")))");
  Names ops = nodesOf(f.after);
  EXPECT_EQ(ops[0], "r=relu(x)");
  EXPECT_NE(std::find(ops.begin(), ops.end(), "c1=conv2d(r,c1_weight_sc,c1_bias)"), ops.end());
  EXPECT_NE(std::find(ops.begin(), ops.end(), "c2=conv2d(r,c2_weight_sc,c2_bias)"), ops.end());
}

TEST(FoldScaleAxis, ForwardDepthwiseScalesWeightAxisZero) {
  Folded f = foldChecked(R"(x = Variable("x", shape=(1,3,5,5))
s = Variable("s", shape=(3,))
m = broadcast_mul(x, expand_dims(s, axis=1, num_newaxis=2), name="m")
y = conv2d(m, channels=3, groups=3, kernel_size=(3,3), use_bias=False, name="c"))");
  EXPECT_EQ(nodesOf(f.after),
            (Names{"s_expand=expand_dims(s)", "c_weight_sc=broadcast_mul(c_weight,s_expand)",
                   "c=conv2d(x,c_weight_sc)"}));
  // The weight is (3,1,3,3): the scale runs along axis 0, so it is expanded by three axes.
  const IndexedGraph &idx = f.after.index();
  EXPECT_EQ(idx.nodes[idx.findByName("s_expand")].node->attrs,
            (AttrDict{{"axis", "1"}, {"num_newaxis", "3"}}));
}

// Each of these breaks a rule of the pass, so the graph must come back unchanged.
TEST(FoldScaleAxis, LeavesGraphsThatBreakARuleAlone) {
  const char *cases[] = {
      // The conv output is read twice: a backward fold would change the other reader.
      R"(x = Variable("x", shape=(1,3,5,5))
s = Variable("s", shape=(2,1,1))
c = conv2d(x, channels=2, kernel_size=(1,1))
y = elemwise_add(broadcast_mul(relu(c), s), c))",
      // exp is not scale-equivariant.
      R"(x = Variable("x", shape=(1,3,5,5))
s = Variable("s", shape=(2,1,1))
y = broadcast_mul(exp(conv2d(x, channels=2, kernel_size=(1,1))), s))",
      // A grouped (not depthwise) conv2d.
      R"(x = Variable("x", shape=(1,4,5,5))
s = Variable("s", shape=(4,1,1))
y = conv2d(broadcast_mul(x, s), channels=2, groups=2, kernel_size=(1,1)))",
      // The scale runs along H, not the channels.
      R"(x = Variable("x", shape=(1,3,5,5))
s = Variable("s", shape=(5,1))
y = conv2d(broadcast_mul(x, s), channels=2, kernel_size=(1,1)))",
      // The weight is shared by two conv2ds (NNVM folded here and changed the other one).
      R"(x = Variable("x", shape=(1,3,5,5))
z = Variable("z", shape=(1,3,5,5))
s = Variable("s", shape=(3,1,1))
w = Variable("w")
y = elemwise_add(conv2d(broadcast_mul(x, s), w, channels=2, kernel_size=(1,1), use_bias=False), conv2d(z, w, channels=2, kernel_size=(1,1), use_bias=False)))",
      // Only one branch of the fork reaches a conv2d.
      R"(x = Variable("x", shape=(1,3,5,5))
s = Variable("s", shape=(3,1,1))
r = relu(broadcast_mul(x, s))
y = elemwise_add(sum(conv2d(r, channels=2, kernel_size=(1,1))), sum(r)))",
  };
  for (const char *program : cases) {
    Folded f = foldChecked(program);
    EXPECT_EQ(nodesOf(f.after), nodesOf(f.before)) << program;
  }
}

TEST(FoldScaleAxis, NeedsKnownShapes) {
  Engine e;
  run(e, "x = Variable(\"x\")\ny = relu(x)\n:graph y");
  std::ostringstream o;
  EXPECT_FALSE(e.execute(":apply InferShape FoldScaleAxis", o, o));
  EXPECT_EQ(o.str(), "error: FoldScaleAxis: some shapes are unknown; apply InferShape with input "
                     "shapes first\n");
}
