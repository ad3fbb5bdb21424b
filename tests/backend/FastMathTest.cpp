// FastMathTest: opt level 3's polynomial exp, tanh and sigmoid (and float32 erf) against libm
// over their whole range, in float32 and float64, and no libm call left in the generated code.
#include "TestUtil.h"

#include "backend/GraphExecutor.h"
#include "core/DType.h"

#include <cctype>
#include <cfloat>
#include <cmath>
#include <functional>

namespace loupe::test {
namespace {

struct Bound {
  const char *op;
  std::function<double(double)> exact;
  double relF32, relF64; ///< the error bound: |got - want| <= rel * max(|want|, floor)
  double floor;          ///< 1 for the bounded functions (absolute error), 0 for exp (relative)
};

// Inputs from -100 to 100 by 0.05 (past both ends of exp's clamp) and the special points.
Tensor grid(int dtype) {
  std::vector<double> xs;
  for (int i = -2000; i <= 2000; ++i)
    xs.push_back(i * 0.05);
  for (double x : {1e-30, -1e-30, 1e-6, -1e-6, 0.34657359, 88.3, -87.3, 700.0, -700.0, 709.0})
    xs.push_back(x);
  Tensor t({static_cast<int64_t>(xs.size())}, dtype);
  for (size_t i = 0; i < xs.size(); ++i)
    t.data[i] = roundToDType(xs[i], dtype);
  return t;
}

// Calls of `f` in printed loops (ldexp( is not a call of exp).
int callsOf(const std::string &loops, const std::string &f) {
  int n = 0;
  for (size_t at = loops.find(f + "("); at != std::string::npos; at = loops.find(f + "(", at + 1))
    n += at == 0 || !std::isalnum(static_cast<unsigned char>(loops[at - 1]));
  return n;
}

TEST(FastMath, ExpTanhAndSigmoidMatchLibmToAFewUlps) {
  // Bounds in units of the type's epsilon (float32 1.19e-7, float64 2.22e-16): e^x relative, 3
  // ulps; tanh and sigmoid absolute, a few ulps of 1 (tanh's 1 - 2/(e^2x+1) cancels near 0).
  const Bound bounds[] = {
      {"exp", [](double x) { return std::exp(x); }, 3 * FLT_EPSILON, 3 * DBL_EPSILON, 0},
      {"tanh", [](double x) { return std::tanh(x); }, 4 * FLT_EPSILON, 4 * DBL_EPSILON, 1},
      {"sigmoid", [](double x) { return 1 / (1 + std::exp(-x)); }, 3 * FLT_EPSILON, 3 * DBL_EPSILON,
       1},
  };
  for (int dtype : {kFloat32, kFloat64})
    for (const Bound &b : bounds) {
      SCOPED_TRACE(std::string(b.op) + " " + std::string(dtypeName(dtype)));
      std::string dt(dtypeName(dtype));
      Tensor in = grid(dtype);
      Engine e;
      run(e, "x = Variable(\"x\", shape=(" + std::to_string(in.data.size()) + ",))\ny = " + b.op +
                 "(x)\n:graph y\n:build opt_level=3 dtype=" + dt);
      std::string loops = output(e, std::string(":lower fuse_") + b.op);
      EXPECT_EQ(callsOf(loops, b.op), 0) << loops;
      EXPECT_NE(loops.find("ldexp("), std::string::npos) << loops;
      // The vector loop calls nothing: no libm, no runtime.
      std::string assembly = output(e, std::string(":asm fuse_") + b.op);
      EXPECT_EQ(assembly.find("call"), std::string::npos) << assembly;
      EXPECT_NE(assembly.find("vfmadd"), std::string::npos) << assembly; // the polynomial
      backend::GraphRuntime rt(e.current()->graph);
      rt.setInput("x", in);
      rt.run();
      const Tensor out = rt.outputs().at(0);
      double rel = dtype == kFloat32 ? b.relF32 : b.relF64;
      double expHi = dtype == kFloat32 ? 88.376 : 709.43,
             expLo = dtype == kFloat32 ? -87.336 : -708.39;
      for (size_t i = 0; i < in.data.size(); ++i) {
        double x = in.data[i], got = out.data[i];
        bool clampedExp = std::string(b.op) == "exp" && (x > expHi || x < expLo);
        if (clampedExp) {
          // Past the clamp: the largest exponent's value, or the smallest normal.
          double normalMin = dtype == kFloat32 ? FLT_MIN : DBL_MIN;
          EXPECT_TRUE(x > 0 ? std::isfinite(got) && got > b.exact(expHi) * (1 - rel)
                            : got >= 0 && got <= 2 * normalMin)
              << x << " -> " << got;
          continue;
        }
        double want = b.exact(x);
        EXPECT_LE(std::fabs(got - want), rel * std::max(std::fabs(want), b.floor))
            << "x = " << x << ": " << got << " vs " << want;
      }
    }
}

// float32 erf (gelu's) is a rational polynomial: within 4 float32 ulps of libm relative to the
// value over the grid, ±1 past the clamp at ±4, and no call left in the vector loop; float64
// keeps libm's erf, which no fit here matches to a few ulps.
TEST(FastMath, Float32ErfIsARationalPolynomial) {
  Tensor in = grid(kFloat32);
  Engine e;
  run(e, "x = Variable(\"x\", shape=(" + std::to_string(in.data.size()) +
             ",))\ny = erf(x)\n:graph y\n:build opt_level=3 dtype=float32");
  std::string loops = output(e, ":lower fuse_erf");
  EXPECT_EQ(callsOf(loops, "erf"), 0) << loops;
  EXPECT_EQ(output(e, ":asm fuse_erf").find("call"), std::string::npos);
  backend::GraphRuntime rt(e.current()->graph);
  rt.setInput("x", in);
  rt.run();
  const Tensor out = rt.outputs().at(0);
  for (size_t i = 0; i < in.data.size(); ++i) {
    double x = in.data[i], got = out.data[i], want = std::erf(x);
    EXPECT_LE(std::fabs(got - want), 4 * FLT_EPSILON * std::fabs(want))
        << "x = " << x << ": " << got << " vs " << want;
    if (std::fabs(x) >= 4) {
      EXPECT_EQ(got, x > 0 ? 1.0 : -1.0) << x;
    }
  }
  Engine f;
  run(f, "x = Variable(\"x\", shape=(64,))\ny = erf(x)\n:graph y\n:build opt_level=3 "
         "dtype=float64");
  EXPECT_EQ(callsOf(output(f, ":lower fuse_erf"), "erf"), 1);
}

// Softmax over 1000 classes: its max and its sum of exponentials reduce vectors of partial
// results (1000 is not a multiple of 16: the last vector's tail lanes are guarded, and the
// exponential under that guard is a polynomial too), so no libm call is left.
TEST(FastMath, SoftmaxRowsReduceVectorsWithoutLibm) {
  for (const char *dt : {"float32", "float64"}) {
    Engine e;
    run(e, "x = Variable(\"x\", shape=(2, 1000))\ny = softmax(x)\n:graph y\n"
           ":build opt_level=3 dtype=" +
               std::string(dt));
    std::string loops = output(e, ":lower fuse_softmax");
    EXPECT_NE(loops.find("T_softmax_maxelem.rf"), std::string::npos) << loops;
    EXPECT_NE(loops.find("T_softmax_expsum.rf"), std::string::npos) << loops;
    EXPECT_EQ(callsOf(loops, "exp"), 0) << loops;
    EXPECT_EQ(output(e, ":asm fuse_softmax").find("call"), std::string::npos);
    std::string out = output(e, ":run");
    size_t at = out.find("max abs error ");
    ASSERT_NE(at, std::string::npos) << out;
    EXPECT_LT(std::stod(out.substr(at + 14)), std::string(dt) == "float32" ? 1e-7 : 1e-16) << out;
  }
}

} // namespace
} // namespace loupe::test
