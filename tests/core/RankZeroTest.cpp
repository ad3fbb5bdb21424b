// RankZeroTest: scalars (shape `()`) as first-class tensors, apart from unknown shapes, through
// shape rules, the reference interpreter and every op's shape rule.
#include "TestUtil.h"

#include "core/Attrs.h"
#include "core/Interpreter.h"

using namespace loupe;
using namespace loupe::test;

namespace {
Tensor scalarTensor(double v) { return tensor(Shape::scalar(), {v}); }
} // namespace

TEST(RankZero, ScalarShapeIsKnownAndNotTheUnknownShape) {
  Shape unknown, scalar = Shape::scalar();
  EXPECT_FALSE(shapeKnown(unknown));
  EXPECT_TRUE(shapeKnown(scalar));
  EXPECT_TRUE(scalar.isScalar());
  EXPECT_FALSE(unknown.isScalar());
  EXPECT_TRUE(scalar.rankKnown());
  EXPECT_FALSE(unknown.rankKnown());
  EXPECT_NE(scalar, unknown);
  EXPECT_EQ(scalar, Shape::scalar());
  EXPECT_EQ(numElements(scalar), 1);
  EXPECT_EQ(shapeToTuple(scalar), "()");
  // A copy keeps what it is; a dimension added makes a rank-1 shape.
  Shape copy = scalar;
  EXPECT_TRUE(copy.isScalar());
  copy.push_back(3);
  EXPECT_EQ(copy, (Shape{3}));
  EXPECT_TRUE(parseShape("()").isScalar());
  EXPECT_TRUE(parseShape(" []").isScalar());
  EXPECT_FALSE(parseShape("None").rankKnown());
  EXPECT_EQ(parseShape("(2, 3)"), (Shape{2, 3}));
  EXPECT_FALSE(shapeKnown(Shape{0, 3}));
}

TEST(RankZero, VariablesConstantsAndInitOpsOfShapeNothing) {
  EXPECT_TRUE(outShape(var("x", "()") + "y = relu(x)").isScalar());
  EXPECT_TRUE(outShape("y = zeros(shape=())").isScalar());
  EXPECT_TRUE(outShape("y = full(shape=(), fill_value=2)").isScalar());
  EXPECT_TRUE(outShape("y = const(3.0, shape=())").isScalar());
  // Without a shape, an init op's shape stays unknown as in NNVM, and a constant needs one.
  Graph g = inferred("y = zeros()");
  EXPECT_FALSE(g.attr("shape")->shapes[0].rankKnown());
  EXPECT_EQ(g.attr("shape_num_unknown_nodes")->num, 1);
  EXPECT_NE(inferError("y = const(3.0)").find("a constant needs a shape"), std::string::npos);
}

TEST(RankZero, BroadcastingFollowsNumPy) {
  EXPECT_EQ(outShape(var("x", "()") + var("z", "(2,3)") + "y = broadcast_mul(x, z)"),
            (Shape{2, 3}));
  EXPECT_EQ(outShape(var("x", "(2,3)") + var("z", "()") + "y = broadcast_add(x, z)"),
            (Shape{2, 3}));
  EXPECT_TRUE(outShape(var("x", "()") + var("z", "()") + "y = broadcast_mul(x, z)").isScalar());
  EXPECT_TRUE(outShape(var("x", "()") + var("z", "()") + "y = elemwise_add(x, z)").isScalar());
  EXPECT_TRUE(outShape(var("x", "()") + "y = x * 2 + 1").isScalar());
  // A scalar is not a (1,) vector: elementwise ops need equal shapes.
  EXPECT_NE(inferError(var("x", "()") + var("z", "(1,)") + "y = elemwise_add(x, z)")
                .find("has shape [1] but [] is required"),
            std::string::npos);
}

TEST(RankZero, ReductionsAndReshapes) {
  // NumPy: a scalar reduces to itself; NNVM's rule still reduces a vector to (1,).
  EXPECT_TRUE(outShape(var("x", "()") + "y = sum(x)").isScalar());
  EXPECT_EQ(outShape(var("x", "(4,)") + "y = sum(x)"), (Shape{1}));
  EXPECT_EQ(outShape(var("x", "()") + "y = expand_dims(x, axis=0)"), (Shape{1}));
  EXPECT_EQ(outShape(var("x", "()") + "y = reshape(x, shape=(1,1))"), (Shape{1, 1}));
  EXPECT_TRUE(outShape(var("x", "(1,1)") + "y = reshape(x, shape=())").isScalar());
  EXPECT_NE(inferError(var("x", "(2,)") + "y = reshape(x, shape=())").find("2"), std::string::npos);
  EXPECT_TRUE(outShape(var("x", "()") + "y = squeeze(x)").isScalar());
  EXPECT_TRUE(outShape(var("x", "()") + "y = cast(x, dtype=\"float64\")").isScalar());
  EXPECT_TRUE(outShape(var("x", "()") + "y = clip(x, a_min=0, a_max=1)").isScalar());
  EXPECT_EQ(outShape(var("c", "()") + var("x", "()") + var("z", "(2,)") +
                     "y = where(cast(c, dtype=\"bool\"), x, z)"),
            (Shape{2}));
}

// Ops that index an axis refuse a scalar by name before their rule runs.
TEST(RankZero, OpsOfAxesRefuseScalarsByName) {
  EXPECT_EQ(inferError(var("x", "()") + "y = softmax(x)"),
            "step 0: graph y (2 nodes, 1 input, 1 output)\n"
            "error: operator softmax0 (softmax): input 'data' is a scalar (shape ()); softmax "
            "takes tensors of rank 1 or more\n");
  EXPECT_NE(inferError(var("x", "()") + var("w", "(3,1)") + "y = dense(x, w, units=3)")
                .find("input 'data' is a scalar"),
            std::string::npos);
}

TEST(RankZero, TheInterpreterComputesWithScalars) {
  Tensor y = eval(var("x", "()") + var("z", "(3,)") + "y = broadcast_mul(x, z)",
                  {{"x", scalarTensor(2)}, {"z", tensor({3}, {1, 2, 3})}});
  EXPECT_EQ(y.shape, (Shape{3}));
  EXPECT_EQ(y.data, (std::vector<double>{2, 4, 6}));
  Tensor s = eval(var("x", "()") + var("z", "()") + "y = broadcast_mul(x, z) + 1",
                  {{"x", scalarTensor(3)}, {"z", scalarTensor(2)}});
  EXPECT_TRUE(s.shape.isScalar());
  EXPECT_EQ(s.data, (std::vector<double>{7}));
  Tensor c = eval("y = const(3.0, shape=()) * 2", {});
  EXPECT_TRUE(c.shape.isScalar());
  EXPECT_EQ(c.data, (std::vector<double>{6}));
}

// Every op given scalars for all its inputs (default attributes) either infers shapes of known
// rank for all its outputs — and then the reference interpreter computes them — or refuses
// with a one-line error: a scalar never leaves an output silently unknown, and never crashes.
TEST(RankZero, EveryOpAcceptsScalarsOrSaysWhy) {
  registerAllOps();
  std::vector<std::string> silent;
  int accepted = 0;
  for (const OpDef *op : OpRegistry::get().all()) {
    std::vector<std::string> args = op->args;
    if (op->variadic)
      args = {"a", "b"};
    if (args.empty())
      continue; // nothing to give a scalar to (zeros, ones: tested above)
    std::string program, call = "y = " + op->name + "(";
    std::map<std::string, Tensor> inputs;
    for (size_t i = 0; i < args.size(); ++i) {
      std::string name = "x" + std::to_string(i);
      program += var(name, "()");
      call += (i ? ", " : "") + name;
      inputs[name] = scalarTensor(0.5);
    }
    program += call + ")";
    Engine e;
    std::ostringstream o;
    bool made = true;
    std::istringstream lines(program);
    for (std::string line; made && std::getline(lines, line);)
      made = e.execute(line, o, o);
    made = made && e.execute(":graph y", o, o);
    if (!made)
      continue; // the op needs attributes or inputs the defaults do not give: said in one line
    Graph g;
    try {
      g = withInputs(e.current()->graph, inputs);
    } catch (const Error &err) {
      EXPECT_EQ(std::string(err.what()).find('\n'), std::string::npos) << err.what();
      continue;
    }
    const IndexedGraph &idx = g.index();
    bool known = true;
    for (uint32_t nid = 0; nid < idx.numNodes(); ++nid)
      for (uint32_t k = 0; k < idx.nodes[nid].node->numOutputs(); ++k)
        known &= g.attr("shape")->shapes[idx.entryId(nid, k)].rankKnown();
    if (!known) {
      silent.push_back(op->name);
      continue;
    }
    ++accepted;
    try {
      interpret(g, inputs);
    } catch (const Error &err) {
      ADD_FAILURE() << op->name << ": shapes inferred but the interpreter refused: " << err.what();
    }
  }
  EXPECT_EQ(silent, std::vector<std::string>{}) << "outputs left unknown for scalars";
  EXPECT_GT(accepted, 60);
}

// The gradient through a scalar sums back to (): y = sum(s * x * s) gives dy/ds = 2 s sum(x)
// and dy/dx = s^2 (by hand: s = 3, x = 1..6, sum 21).
TEST(RankZero, GradientsOfAScalarAreScalars) {
  Engine e;
  run(e, var("s", "()") + var("x", "(2,3)") + "y = sum(broadcast_mul(s, x) * s)\n:grad y wrt s x");
  std::map<std::string, Tensor> in{{"s", scalarTensor(3)},
                                   {"x", tensor({2, 3}, {1, 2, 3, 4, 5, 6})}};
  std::vector<Tensor> g = interpret(withInputs(e.current()->graph, in), in);
  ASSERT_EQ(g.size(), 2u);
  EXPECT_TRUE(g[0].shape.isScalar());
  EXPECT_EQ(g[0].data, (std::vector<double>{126}));
  EXPECT_EQ(g[1].shape, (Shape{2, 3}));
  EXPECT_EQ(g[1].data, (std::vector<double>(6, 9)));
}

// A number in place of a file fills every element with it, for a scalar input as for a tensor,
// in :run and in :build's params; a number out of a double's range is refused by name.
TEST(RankZero, RunAndParamsTakeANumber) {
  Engine e;
  run(e, var("s", "()") + var("x", "(3,)") + var("w", "(3,)") +
             "y = broadcast_mul(s, x) * w\n:graph y\n:build param w=0.5");
  std::string ran = output(e, ":run s=2.5 x=-4");
  EXPECT_NE(ran.find("output 0: shape (3,) float32\n  values [-5, -5, -5]\n"), std::string::npos)
      << ran;
  EXPECT_EQ(output(e, ":run s=1e400"), "error: 1e400 is out of the range of a number (a double)\n");
}
