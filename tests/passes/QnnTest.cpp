// QnnTest: quantized networks — the fixed-point arithmetic against hand-worked values, the
// QDQ export of a small PyTorch CNN through FakeQuantizationToInteger and QnnCanonicalize (the
// integer graph, the same values bit for bit), its builds against PyTorch's own quantized output,
// and the errors of bad quantization parameters.
#include "TestUtil.h"

#include "backend/Codegen.h"
#include "core/Npy.h"
#include "core/Quantize.h"

#include <cmath>

using namespace loupe;
using namespace loupe::test;

namespace {

const std::string kQdq = std::string(LOUPE_SOURCE_DIR) + "/tests/onnx/data/qdq/";

// How many nodes of `g` run `op`.
int count(const Graph &g, const std::string &op) {
  int n = 0;
  for (const auto &e : g.index().nodes)
    n += !e.node->isVariable() && e.node->op->name == op;
  return n;
}

} // namespace

// M = f · 2^e with f in [0.5, 1): the mantissa as f · 2^31 rounded half away from zero.
// 0.25 = 0.5 · 2^-1; 0.75 = 0.75 · 2^0; 1 = 0.5 · 2^1; 1 - 2^-40 rounds up to 2^31, which is
// one bit too many: it becomes 2^30 with the exponent raised.
TEST(FixedPoint, MultipliersByHand) {
  auto expectFixed = [](double m, int32_t mult, int32_t shift) {
    FixedPoint f = fixedPointOf(m, "test");
    EXPECT_EQ(f.multiplier, mult) << m;
    EXPECT_EQ(f.shift, shift) << m;
  };
  expectFixed(0.25, 1 << 30, -1);
  expectFixed(0.75, 3 << 29, 0);
  expectFixed(1, 1 << 30, 1);
  expectFixed(1 - std::ldexp(1, -40), 1 << 30, 1);
  for (double bad : {0.0, -1.0, double(INFINITY), std::ldexp(1.0, -40), std::ldexp(1.0, 40)})
    EXPECT_THROW(fixedPointOf(bad, "test"), Error) << bad;
}

// round(x · m · 2^(s − 31)), ties toward +∞: with m = 2^30 and s = 0 a half — 7 → 3.5 → 4,
// -7 → -3.5 → -3, 5 → 2.5 → 3; with s = 2, twice — -5 → -10. The 64-bit bound: |x| = 2^31
// times the largest multiplier fits shifted left by one bit (2^63 − 2^32 + 2^30) but not by two.
TEST(FixedPoint, MultiplyShiftRoundsTiesUpward) {
  EXPECT_EQ(multiplyShift(7, 1 << 30, 0), 4);
  EXPECT_EQ(multiplyShift(-7, 1 << 30, 0), -3);
  EXPECT_EQ(multiplyShift(5, 1 << 30, 0), 3);
  EXPECT_EQ(multiplyShift(-5, 1 << 30, 2), -10);
  EXPECT_EQ(multiplyShift(1000, 1 << 30, -1), 250);
  int32_t largest = 2147483647;
  EXPECT_TRUE(multiplyShiftFits(int64_t(1) << 31, largest, 1));
  EXPECT_FALSE(multiplyShiftFits(int64_t(1) << 31, largest, 2));
  EXPECT_TRUE(multiplyShiftFits(255, largest, 20));
}

// The QDQ export's float regions around the convolutions and the classifier become integer ops:
// three qnn.conv2d and a qnn.dense, each requantized; the residual add (and its relu) is a
// qnn.add; the global average pool an int32 sum, requantized; max_pool2d and flatten run on the
// uint8 steps. Only the final dequantize is float.
TEST(Qnn, FakeQuantizationToIntegerMakesTheQdqExportInteger) {
  Engine e;
  run(e, ":load " + kQdq + "qdq_convnet.onnx");
  const Graph &src = e.current()->graph;
  EXPECT_EQ(count(src, "conv2d"), 3);
  // Every DequantizeLinear of the file, those of the weights and biases kept (not folded).
  EXPECT_EQ(count(src, "qnn.dequantize"), 18);
  run(e, ":apply InferShape InferType FakeQuantizationToInteger InferShape InferType");
  const Graph &g = e.current()->graph;
  EXPECT_EQ(count(g, "conv2d"), 0);
  EXPECT_EQ(count(g, "matmul"), 0);
  EXPECT_EQ(count(g, "qnn.conv2d"), 3);
  EXPECT_EQ(count(g, "qnn.dense"), 1);
  EXPECT_EQ(count(g, "qnn.requantize"), 5);
  EXPECT_EQ(count(g, "qnn.add"), 1);
  EXPECT_EQ(count(g, "sum"), 1);
  EXPECT_EQ(count(g, "broadcast_add"), 0);
  EXPECT_EQ(count(g, "global_avg_pool2d"), 0);
  EXPECT_EQ(count(g, "qnn.dequantize"), 1);
  EXPECT_EQ(count(g, "qnn.quantize"), 1);
  const IndexedGraph &idx = g.index();
  const GraphAttr *dt = g.attr("dtype");
  ASSERT_NE(dt, nullptr);
  for (uint32_t nid = 0; nid < idx.numNodes(); ++nid) {
    const Node &n = *idx.nodes[nid].node;
    if (!n.isVariable() && n.op->name == "max_pool2d") {
      EXPECT_EQ(dt->ints[idx.entryId(nid, 0)], kUint8);
    }
  }
  // QnnCanonicalize writes the classifier's qnn.dense (uint8 data, a symmetric int8 weight) as a
  // dense of the 8-bit operands summed in int32, so that its weight stays one byte an element.
  run(e, ":apply QnnCanonicalize InferShape InferType");
  const Graph &c = e.current()->graph;
  const IndexedGraph &cidx = c.index();
  int fc = cidx.findByName("/fc/Gemm");
  ASSERT_GE(fc, 0);
  const Node &dense = *cidx.nodes[fc].node;
  EXPECT_EQ(dense.op->name, "dense");
  EXPECT_EQ(dense.parsed.getStr("out_dtype"), "int32");
  EXPECT_EQ(c.attr("dtype")->ints[cidx.entryId(cidx.nodes[fc].inputs[0])], kUint8);
  EXPECT_EQ(c.attr("dtype")->ints[cidx.entryId(cidx.nodes[fc].inputs[1])], kInt8);
}

// QnnCanonicalize leaves no qnn op, and the plain ops compute what the qnn ops' reference kernels
// computed, element for element (the integer graph and the float QDQ reading both).
TEST(Qnn, CanonicalizedGraphsComputeTheSameValues) {
  Engine e;
  run(e, ":load " + kQdq + "qdq_convnet.onnx");
  Tensor x = readNpy(kQdq + "input.npy");
  for (std::string mode : {"QDQ", "float32", "int64"}) {
    SCOPED_TRACE(mode);
    bool integer = mode != "QDQ";
    if (integer)
      run(e, ":set requantize " + mode + "\n:apply InferShape InferType FakeQuantizationToInteger");
    Graph before = e.current()->graph;
    run(e, ":apply InferShape InferType QnnCanonicalize");
    const Graph &after = e.current()->graph;
    for (const auto &n : after.index().nodes)
      EXPECT_FALSE(!n.node->isVariable() && n.node->op->name.rfind("qnn.", 0) == 0) << n.node->name;
    std::map<std::string, Tensor> in = {{"x", x}};
    for (const auto &[name, t] : e.modelParams())
      in[name] = t.load();
    Tensor a = interpret(withInputs(before, in), in).at(0);
    Tensor b = interpret(withInputs(after, in), in).at(0);
    EXPECT_EQ(a.data, b.data);
    run(e, ":undo");
  }
}

// Every build of the QDQ export — its float reading and, after FakeQuantizationToInteger, its
// integer ops (requantized in float32 and in fixed point), at opt_level 0, 2 and 3 (where the
// build itself makes the float reading integer) — gives PyTorch's own quantized output (fbgemm's
// integer kernels) exactly, and the reference interpreter's.
TEST(Qnn, BuildsGivePyTorchsQuantizedOutput) {
  for (int build = 0; build < 9; ++build) {
    int opt = std::vector<int>{0, 2, 3}[build % 3];
    std::string mode = std::vector<std::string>{"float", "float32", "int64"}[build / 3];
    bool integer = build >= 3;
    SCOPED_TRACE(std::to_string(opt) + " " + mode);
    Engine e;
    run(e, ":load " + kQdq + "qdq_convnet.onnx");
    if (integer)
      run(e, ":set requantize " + mode + "\n:apply InferShape InferType FakeQuantizationToInteger");
    run(e, ":set target llvm -mcpu=skylake-avx512");
    std::string deploy = output(e, ":build opt_level=" + std::to_string(opt));
    // At opt_level 3 the 8-bit convolutions take blocked layouts, whichever graph was built.
    if (opt == 3) {
      EXPECT_NE(deploy.find("func_name='fuse__contrib_conv2d_NCHWc"), std::string::npos) << deploy;
    }
    std::string out =
        output(e, ":run x=" + kQdq + "input.npy compare=" + kQdq + "pytorch_output.npy");
    EXPECT_NE(out.find("reference interpreter"), std::string::npos) << out;
    size_t exact = 0;
    for (size_t at = out.find("max abs error 0.0e+00"); at != std::string::npos;
         at = out.find("max abs error 0.0e+00", at + 1))
      ++exact;
    EXPECT_EQ(exact, 2u) << out;
  }
}

// An 8-bit convolution summed in int32 (uint8 data padded with a zero point of 7, int8 weights,
// an int32 bias): AlterOpLayout blocks it with the weights in quads of input channels
// (OIHW16o4i for AVX-512's 16 int32 lanes, OIHW8o4i for AVX2's 8) and takes the pad's value as
// its own padding; each step of the sum is dot4, one vpdpbusd where the host has VNNI for that
// width, else two vpmaddwd (16-bit pairs) where it has AVX2 / AVX-512BW. The build equals the
// reference interpreter bit for bit on full-range random values, with VNNI, with the pairs (VNNI
// turned off) and in the portable form (both turned off).
TEST(Qnn, EightBitConvolutionsBuildExactly) {
  const std::string program =
      "x = Variable(\"x\", shape=(1, 32, 9, 9), dtype=3)\n"
      "w = Variable(\"w\", shape=(32, 32, 3, 3), dtype=5)\n"
      "b = Variable(\"b\", shape=(32,), dtype=4)\n"
      "p = pad(x, pad_width=((0, 0), (0, 0), (1, 1), (1, 1)), pad_value=7)\n"
      "y = conv2d(p, w, b, channels=32, kernel_size=(3, 3), strides=(2, 1), "
      "out_dtype=\"int32\")\n:graph y\n";
  for (const char *cpu : {"skylake-avx512", "znver3"})
    for (const char *mode : {"vnni", "pairs", "portable"}) {
      SCOPED_TRACE(std::string(cpu) + " " + mode);
      bool wide = std::string(cpu) == "skylake-avx512";
      backend::DotInstructions host = backend::dotInstructions();
      bool vnni = std::string(mode) == "vnni" && (wide ? host.lanes16 : host.lanes8);
      bool pairs = std::string(mode) == "pairs" && (wide ? host.pairs16 : host.pairs8);
      if (std::string(mode) == "pairs")
        backend::setDotInstructions(
            backend::DotInstructions{false, false, host.pairs16, host.pairs8});
      else if (std::string(mode) == "portable")
        backend::setDotInstructions(backend::DotInstructions{});
      Engine e;
      run(e, program + ":set target llvm -mcpu=" + cpu);
      std::string deploy = output(e, ":build opt_level=3 dtype x=uint8 dtype w=int8 dtype "
                                     "b=int32 param w=random param b=random seed=3");
      EXPECT_NE(deploy.find(wide ? "w_OIHW16o4i" : "w_OIHW8o4i"), std::string::npos) << deploy;
      EXPECT_EQ(deploy.find("func_name='fuse_pad"), std::string::npos) << deploy;
      std::string out = output(e, ":run seed=5");
      EXPECT_NE(out.find("vs reference interpreter (IEEE; the kernels flush subnormals): max abs "
                         "error 0.0e+00"),
                std::string::npos)
          << out;
      EXPECT_EQ(out.find("sum 0\n"), std::string::npos) << out;
      EXPECT_NE(output(e, ":lower fuse__contrib_conv2d_NCHWc").find("dot4("), std::string::npos);
      std::string code = output(e, ":asm fuse__contrib_conv2d_NCHWc");
      EXPECT_EQ(code.find("vpdpbusd") != std::string::npos, vnni) << code.substr(0, 2000);
      // (LLVM joins vpmaddwd and its add into AVX-512 VNNI's vpdpwssd where the host has it;
      // it also finds vpmaddwd in the portable form's multiplies itself.)
      if (pairs) {
        EXPECT_TRUE(code.find("vpmaddwd") != std::string::npos ||
                    code.find("vpdpwssd") != std::string::npos)
            << code.substr(0, 2000);
      }
      backend::setDotInstructions(std::nullopt);
    }
}

// int8 data: QnnLegalize shifts it and its zero point by 128 to uint8, the operand vpdpbusd
// takes first — Σ((x + 128) − (zd + 128))·w is the same sum — so the convolution gets the 8-bit
// form too: blocked in quads with dot4, bit for bit the reference interpreter on full-range
// values at both pinned widths. By hand, the legalized graph reads x as cast(x + 128) and the
// zero point -5 as 123.
TEST(Qnn, SignedDataIsLegalizedToUnsigned) {
  const std::string program =
      "x = Variable(\"x\", shape=(1, 16, 7, 7), dtype=5)\n"
      "w = Variable(\"w\", shape=(32, 16, 3, 3), dtype=5)\n"
      "zx = const(-5, shape=(1,), dtype=\"int8\")\n"
      "zw = const(0, shape=(1,), dtype=\"int8\")\n"
      "b = Variable(\"b\", shape=(32,), dtype=4)\n"
      "y = qnn.conv2d(x, w, zx, zw, b, channels=32, kernel_size=(3, 3), padding=(1, 1))\n"
      ":graph y\n";
  {
    Engine e;
    run(e, program + ":apply InferShape InferType QnnLegalize");
    EXPECT_EQ(output(e, ":ir"),
              "Graph(%x, %w, %b) {\n"
              "  %1 = cast(%x, dtype='int32')\n"
              "  %2 = __add_scalar__(%1, scalar='128')\n"
              "  %3 = cast(%2, dtype='uint8')\n"
              "  %5 = const(dtype='int32', value='123.0', shape='(1,)')\n"
              "  %6 = const(dtype='int8', value='0.0', shape='(1,)')\n"
              "  %8 = qnn.conv2d(%3, %w, %5, %6, %b, channels='32', padding='(1, 1)', "
              "kernel_size='(3, 3)')\n"
              "  ret %8\n}\n");
  }
  for (const char *cpu : {"skylake-avx512", "znver3"}) {
    SCOPED_TRACE(cpu);
    Engine e;
    run(e, program + ":set target llvm -mcpu=" + cpu);
    std::string deploy = output(e, ":build opt_level=3 dtype x=int8 dtype w=int8 dtype b=int32 "
                                   "param w=random param b=random seed=4");
    EXPECT_NE(deploy.find(std::string(cpu) == "znver3" ? "OIHW8o4i" : "OIHW16o4i"),
              std::string::npos)
        << deploy;
    std::string out = output(e, ":run seed=6");
    EXPECT_NE(out.find("vs reference interpreter (IEEE; the kernels flush subnormals): max abs "
                       "error 0.0e+00"),
              std::string::npos)
        << out;
    EXPECT_NE(output(e, ":lower fuse__contrib_conv2d_NCHWc").find("dot4("), std::string::npos);
  }
}

// fixed_point_multiply with its multiplier and shift as attributes (the per-tensor form
// QnnCanonicalize writes, which the kernels' loops see as constants): qnn.add's rounding, 2^30 ·
// 2^(-15 - 31) = 2^-16, by hand — 1.5 · 2^16 is 2 and -1.5 · 2^16 is -1 (ties upward), 32767 is 0,
// 32768 is 1; the input form with the same values gives the same.
TEST(FixedPoint, AttributeFormByHand) {
  std::map<std::string, Tensor> in = {{"x", tensor({4}, {98304, -98304, 32767, 32768}, kInt32)},
                                      {"m", tensor({1}, {1073741824}, kInt32)},
                                      {"s", tensor({1}, {-15}, kInt32)}};
  const std::string x = "x = Variable(\"x\", shape=(4,), dtype=4)\n";
  EXPECT_EQ(eval(x + "y = fixed_point_multiply(x, multiplier=1073741824, shift=-15)", in, "y").data,
            (std::vector<double>{2, -1, 0, 1}));
  EXPECT_EQ(eval(x + "m = Variable(\"m\", shape=(1,), dtype=4)\ns = Variable(\"s\", shape=(1,), "
                     "dtype=4)\ny = fixed_point_multiply(x, m, s)",
                 in, "y")
                .data,
            (std::vector<double>{2, -1, 0, 1}));
}

// Bad quantization parameters: a per-channel scale of the wrong length is refused by the shape
// rule, naming the node; a requantize whose multiplier would shift int32 steps out of 64 bits
// (input scale 8 over output scale 1: a shift of 4) by the reference kernel and by
// QnnCanonicalize, and the build stops there.
TEST(Qnn, BadParametersAreOneLineErrors) {
  EXPECT_NE(inferError("x = Variable(\"x\", shape=(1, 2, 3))\ns = Variable(\"s\", shape=(3,))\n"
                       "z = Variable(\"z\", shape=(1,), dtype=3)\ny = qnn.quantize(x, s, z)")
                .find("the scale (input 1) has 3 elements, but axis 1 has 2"),
            std::string::npos);
  std::string program = "x = Variable(\"x\", shape=(4,), dtype=4)\n"
                        "si = Variable(\"si\", shape=(1,))\nzi = Variable(\"zi\", shape=(1,), "
                        "dtype=4)\nso = Variable(\"so\", shape=(1,))\nzo = Variable(\"zo\", "
                        "shape=(1,), dtype=4)\nrq = qnn.requantize(x, si, zi, so, zo)\n";
  std::map<std::string, Tensor> in = {{"x", tensor({4}, {1, 2, 3, 4}, kInt32)},
                                      {"si", tensor({1}, {8})},
                                      {"zi", tensor({1}, {0}, kInt32)},
                                      {"so", tensor({1}, {1})},
                                      {"zo", tensor({1}, {0}, kInt32)}};
  std::string err;
  try {
    eval(program, in, "rq");
  } catch (const Error &x) {
    err = x.what();
  }
  EXPECT_NE(err.find("the multiplier's shift (4) overflows 64 bits for int32 input"),
            std::string::npos)
      << err;
  Engine e;
  run(e, program + ":graph rq");
  err = output(e, ":build param si=8 param so=1 param zi=0 param zo=0 dtype x=int32 dtype "
                  "zi=int32 dtype zo=int32");
  EXPECT_NE(
      err.find("qnn.requantize0 (qnn.requantize): the multiplier 8 shifts int32 values left by 4 "
               "bits: the fixed-point product overflows 64 bits"),
      std::string::npos)
      << err;
  // A scale of zero, and a zero point outside the integers it shifts: the build stops at the
  // node in one line, and nothing is built.
  Engine q;
  run(q, "x = Variable(\"x\", shape=(4,))\ns = Variable(\"s\", shape=(1,))\nz = "
         "Variable(\"z\", shape=(1,), dtype=3)\ny = qnn.quantize(x, s, z)\n:graph y");
  EXPECT_EQ(output(q, ":build param s=0 param z=3 dtype z=uint8"),
            "error: qnn.quantize0 (qnn.quantize): the scale (input 1) must be positive and "
            "finite, got 0.0\n");
  EXPECT_EQ(output(q, ":build param s=0.5 param z=300 dtype z=int32"),
            "error: qnn.quantize0 (qnn.quantize): the zero point (input 2) 300.0 is outside "
            "uint8's range [0, 255]\n");
  EXPECT_EQ(q.history().size(), 1u);
}

// A zero point written as a const listing its values (`const([0])`, `data='[0.0]'`) is known to be
// zero, as one written with `value` is: QnnCanonicalize subtracts nothing for it. A list of equal
// non-zero values is a uniform zero point too; one of differing values is not.
TEST(Qnn, AZeroPointListedAsDataIsSeenAsZero) {
  auto canonical = [](const std::string &zero) {
    Engine e;
    run(e, "x = Variable(\"x\", shape=(1, 4), dtype=3)\n"
           "s = const(0.5, shape=(1,))\nz = const(" +
               zero +
               ", dtype=\"int32\")\ny = qnn.dequantize(x, s, z)\n:graph y\n"
               ":apply InferShape InferType QnnCanonicalize InferShape InferType");
    std::string nodes;
    for (const auto &n : e.current()->graph.index().nodes)
      nodes += n.node->name + " ";
    return nodes;
  };
  std::string byValue = canonical("0, shape=(1,)"), byData = canonical("[0]");
  EXPECT_EQ(byValue.find("_zero"), std::string::npos) << byValue;
  EXPECT_EQ(byData.find("_zero"), std::string::npos) << byData;
  EXPECT_NE(canonical("[3]").find("_zero"), std::string::npos);
}

// A region FakeQuantizationToInteger cannot convert stays float, and the pass says which op
// stopped it (PassContext::remarks, printed by :apply as notes): a softmax between a dequantize
// and a quantize has no integer form; the input's own quantize ends no region and says nothing.
TEST(Qnn, FakeQuantizationSaysWhichOpKeptARegionFloat) {
  Engine e;
  run(e, "x = Variable(\"x\", shape=(1, 4))\ns = const(0.5, shape=(1,))\n"
         "z = const(0, shape=(1,), dtype=\"uint8\")\n"
         "q = qnn.quantize(x, s, z, out_dtype=\"uint8\", name=\"q_in\")\n"
         "d = qnn.dequantize(q, s, z, name=\"dq\")\ny = softmax(d, name=\"soft\")\n"
         "q2 = qnn.quantize(y, s, z, out_dtype=\"uint8\", name=\"q_out\")\n"
         "r = qnn.dequantize(q2, s, z, name=\"dq_out\")\n:graph r");
  EXPECT_EQ(output(e, ":apply InferShape InferType FakeQuantizationToInteger"),
            "step 1: apply InferShape InferType FakeQuantizationToInteger (graph unchanged)\n"
            "note: the region ending at q_out stays float: soft (softmax) has no integer form in "
            "FakeQuantizationToInteger\n");
  // :why on either edge of the region says it before what fusion does; a flatten in its place
  // converts.
  const std::string keptFloat = "FakeQuantizationToInteger: the region ending at q_out stays "
                                "float: soft (softmax) has no integer form in "
                                "FakeQuantizationToInteger\n";
  // (After the line that names the fusion rules; the pass drops the shapes, :why needs them.)
  run(e, ":apply InferShape InferType");
  auto second = [](const std::string &s) { return s.substr(s.find('\n') + 1); };
  EXPECT_EQ(second(output(e, ":why dq soft")).substr(0, keptFloat.size()), keptFloat);
  EXPECT_EQ(second(output(e, ":why soft q_out")).substr(0, keptFloat.size()), keptFloat);
  EXPECT_EQ(output(e, ":why q_in dq").find("FakeQuantizationToInteger"), std::string::npos);
  Engine f;
  run(f, "x = Variable(\"x\", shape=(1, 4))\ns = const(0.5, shape=(1,))\n"
         "z = const(0, shape=(1,), dtype=\"uint8\")\n"
         "q = qnn.quantize(x, s, z, out_dtype=\"uint8\", name=\"q_in\")\n"
         "d = qnn.dequantize(q, s, z, name=\"dq\")\ny = flatten(d, name=\"fl\")\n"
         "q2 = qnn.quantize(y, s, z, out_dtype=\"uint8\", name=\"q_out\")\n"
         "r = qnn.dequantize(q2, s, z, name=\"dq_out\")\n:graph r\n"
         ":apply InferShape InferType");
  const std::string converts =
      "FakeQuantizationToInteger: the region ending at q_out computes on the integers\n";
  EXPECT_EQ(second(output(f, ":why dq fl")).substr(0, converts.size()), converts);
}

// :profile of a build with integer kernels: the rate column says G(FL)OP/s (their rates are
// integer operations, against the int8 peak the footer gives); a float build's says GFLOP/s.
TEST(Qnn, ProfileNamesIntegerRates) {
  Engine e;
  run(e, "x = Variable(\"x\", shape=(1, 16, 6, 6), dtype=3)\n"
         "w = Variable(\"w\", shape=(16, 16, 3, 3), dtype=5)\n"
         "y = conv2d(x, w, channels=16, kernel_size=(3, 3), use_bias=False, "
         "out_dtype=\"int32\")\n:graph y\n:set target llvm -mcpu=skylake-avx512\n"
         ":build opt_level=3 dtype x=uint8 dtype w=int8 param w=random seed=1\n"
         ":set timings hidden");
  std::string p = output(e, ":profile 1");
  EXPECT_NE(p.find("max ms   share G(FL)OP/s   % peak   layers"), std::string::npos) << p;
  // A float build's column stays GFLOP/s.
  run(e, "a = Variable(\"a\", shape=(1, 8))\nb = relu(a)\n:graph b\n:build");
  EXPECT_NE(output(e, ":profile 1").find("max ms   share   GFLOP/s   % peak"), std::string::npos);
}

// A concatenation of two values quantized at different scales, quantized at a third: each input's
// steps requantized to the output's (the one already in them left as it is), concatenated as
// uint8 — and every opt level's build computes what the reference interpreter does, bit for bit
// (the graph's own output, through its last dequantize).
TEST(Qnn, FakeQuantizationConcatenatesTheSteps) {
  for (int opt : {0, 2, 3}) {
    SCOPED_TRACE(opt);
    Engine e;
    run(e, "a = Variable(\"a\", shape=(1, 4, 3, 3))\nb = Variable(\"b\", shape=(1, 2, 3, 3))\n"
           "sa = const(0.05, shape=(1,))\nza = const(10, shape=(1,), dtype=\"uint8\")\n"
           "sb = const(0.02, shape=(1,))\nzb = const(128, shape=(1,), dtype=\"uint8\")\n"
           "qa = qnn.quantize(a, sa, za, out_dtype=\"uint8\")\n"
           "qb = qnn.quantize(b, sb, zb, out_dtype=\"uint8\")\n"
           "c = concatenate(qnn.dequantize(qa, sa, za), qnn.dequantize(qb, sb, zb), axis=1, "
           "name=\"cat\")\n"
           "q = qnn.quantize(c, sa, za, out_dtype=\"uint8\", name=\"q_cat\")\n"
           "r = qnn.dequantize(q, sa, za, name=\"out\")\n:graph r\n"
           ":apply InferShape InferType FakeQuantizationToInteger InferShape InferType");
    const Graph &g = e.current()->graph;
    EXPECT_EQ(count(g, "concatenate"), 1);
    EXPECT_EQ(count(g, "qnn.requantize"), 1); // b's steps to a's; a's kept
    EXPECT_EQ(count(g, "qnn.dequantize"), 1); // the graph's output
    const IndexedGraph &idx = g.index();
    int cat = idx.findByName("q_cat");
    ASSERT_GE(cat, 0);
    EXPECT_EQ(idx.nodes[cat].node->op->name, "concatenate");
    EXPECT_EQ(g.attr("dtype")->ints[idx.entryId(cat, 0)], kUint8);
    run(e, ":set target llvm -mcpu=skylake-avx512");
    run(e, ":build opt_level=" + std::to_string(opt));
    std::string out = output(e, ":run seed=3");
    EXPECT_NE(out.find("max abs error 0.0e+00"), std::string::npos) << out;
  }
}

// An inception block in integers: two 8-bit convolutions, each requantized per channel (which
// CorrectLayout converts back to NCHW), concatenated and max-pooled. SinkLayoutTransform moves
// the requantizes, the concatenation and the pool onto the blocked tensors: no transform is left
// between the convolutions' kernels and the pool (the concatenation reads them blocked), and the
// build computes the reference interpreter's values exactly.
TEST(Qnn, ConcatenatedRequantizedConvolutionsStayBlocked) {
  Engine e;
  run(e, "x = Variable(\"x\", shape=(1, 16, 8, 8), dtype=3)\n"
         "w1 = Variable(\"w1\", shape=(16, 16, 1, 1), dtype=5)\n"
         "w2 = Variable(\"w2\", shape=(16, 16, 3, 3), dtype=5)\n"
         "m = Variable(\"m\", shape=(16, 1, 1), dtype=4)\n"
         "s = Variable(\"s\", shape=(16, 1, 1), dtype=4)\n"
         "a = cast(clip(fixed_point_multiply(conv2d(x, w1, channels=16, kernel_size=(1, 1), "
         "use_bias=False, out_dtype=\"int32\"), m, s), a_min=0, a_max=255), dtype=\"uint8\")\n"
         "b = cast(clip(fixed_point_multiply(conv2d(x, w2, channels=16, kernel_size=(3, 3), "
         "padding=(1, 1), use_bias=False, out_dtype=\"int32\"), m, s), a_min=0, a_max=255), "
         "dtype=\"uint8\")\n"
         "c = concatenate(a, b, axis=1)\n"
         "p = max_pool2d(c, pool_size=(3, 3), strides=(1, 1), padding=(1, 1))\n:graph p\n"
         ":set target llvm -mcpu=skylake-avx512");
  run(e, ":build opt_level=3 param w1=random param w2=random param m=1518500250 param s=-9 "
         "seed=2");
  std::string nodes = output(e, ":nodes");
  EXPECT_EQ(nodes.find("concatenate___layout"), std::string::npos) << nodes;
  EXPECT_EQ(nodes.find("__layout_transform___concatenate"), std::string::npos) << nodes;
  std::string out = output(e, ":run x=random seed=5");
  EXPECT_NE(out.find("max abs error 0.0e+00"), std::string::npos) << out;
}

// An 8-bit depthwise convolution (uint8 data padded with its zero point, int8 weights, int32
// sums, as QnnCanonicalize writes MobileNet's): AlterOpLayout blocks it as TVM's
// depthwise_conv2d_NCHWc in the int32 lanes' blocks, the pad absorbed as its padding and
// pad_value, and every pinned width's build computes the reference interpreter's sums exactly.
TEST(Qnn, EightBitDepthwiseConvolutionsAreBlocked) {
  for (const char *cpu : {"skylake-avx512", "znver3"}) {
    SCOPED_TRACE(cpu);
    Engine e;
    run(e, "x = Variable(\"x\", shape=(1, 32, 9, 9), dtype=3)\n"
           "w = Variable(\"w\", shape=(32, 1, 3, 3), dtype=5)\n"
           "p = pad(x, pad_width=((0, 0), (0, 0), (1, 1), (1, 1)), pad_value=7.0)\n"
           "y = conv2d(p, w, channels=32, groups=32, kernel_size=(3, 3), strides=(2, 2), "
           "use_bias=False, out_dtype=\"int32\")\n:graph y\n"
           ":set target llvm -mcpu=" +
               std::string(cpu));
    run(e, ":build opt_level=3 param w=random seed=3");
    std::string nodes = output(e, ":nodes");
    EXPECT_NE(nodes.find("fuse__contrib_depthwise_conv2d_NCHWc"), std::string::npos) << nodes;
    EXPECT_EQ(nodes.find("fuse_pad"), std::string::npos) << nodes; // absorbed
    std::string out = output(e, ":run x=random seed=8");
    EXPECT_NE(out.find("max abs error 0.0e+00"), std::string::npos) << out;
  }
}

// A squeeze-and-excitation gate in a QDQ region: the product of two dequantized values (a
// per-channel gate broadcast over the feature map), then a quantize. FakeQuantizationToInteger
// multiplies the centred steps in int32 and requantizes from the product of the scales; the
// builds at opt_level 0, 2 and 3 compute the reference interpreter's values exactly, and the
// integer graph's values are the float QDQ reading's.
TEST(Qnn, FakeQuantizationMultipliesTheSteps) {
  const std::string graph =
      "x = Variable(\"x\", shape=(1, 16, 4, 4))\ng = Variable(\"g\", shape=(1, 16, 1, 1))\n"
      "sx = const(0.05, shape=(1,))\nzx = const(12, shape=(1,), dtype=\"uint8\")\n"
      "sg = const(0.004, shape=(1,))\nzg = const(0, shape=(1,), dtype=\"uint8\")\n"
      "so = const(0.03, shape=(1,))\nzo = const(3, shape=(1,), dtype=\"uint8\")\n"
      "qx = qnn.quantize(x, sx, zx, out_dtype=\"uint8\")\n"
      "qg = qnn.quantize(g, sg, zg, out_dtype=\"uint8\")\n"
      "y = broadcast_mul(qnn.dequantize(qx, sx, zx), qnn.dequantize(qg, sg, zg), name=\"gate\")\n"
      "q = qnn.quantize(y, so, zo, out_dtype=\"uint8\", name=\"q_gate\")\n"
      "r = qnn.dequantize(q, so, zo, name=\"out\")\n:graph r\n";
  for (int opt : {0, 2, 3}) {
    SCOPED_TRACE(opt);
    Engine e;
    run(e, graph + ":apply InferShape InferType FakeQuantizationToInteger InferShape InferType");
    const Graph &g = e.current()->graph;
    EXPECT_EQ(count(g, "broadcast_mul"), 1);
    EXPECT_EQ(count(g, "qnn.requantize"), 1);
    EXPECT_EQ(count(g, "qnn.dequantize"), 1); // the graph's output only
    run(e, ":set target llvm -mcpu=skylake-avx512");
    run(e, ":build opt_level=" + std::to_string(opt));
    std::string out = output(e, ":run seed=3");
    EXPECT_NE(out.find("max abs error 0.0e+00"), std::string::npos) << out;
  }
  // Against the float reading of the same QDQ graph (the random inputs :layerwise draws): the
  // requantize's fixed point and the float quantize round these products alike (they could part
  // by one step at a tie).
  Engine f;
  run(f, graph);
  run(f, ":apply InferShape InferType");
  run(f, ":apply FakeQuantizationToInteger InferShape InferType");
  std::string cmp = output(f, ":layerwise 1 2");
  EXPECT_NE(cmp.find("every value is the same in both"), std::string::npos) << cmp;
}
