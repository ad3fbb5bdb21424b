// SymShapeTest: the size-symbol algebra, and every op's symbolic shape rule against its concrete
// rule at sampled sizes.
#include "TestUtil.h"

#include "core/Op.h"
#include "core/SymExpr.h"
#include "core/Text.h"

#include <regex>
#include <set>

using namespace loupe;
using namespace loupe::test;

namespace {
SymExpr sym(const char *s) { return SymExpr::symbol(s); }
SymExpr parse(const char *s) { return SymExpr::parse(s); }
} // namespace

TEST(SymExpr, CanonicalFormPrintsAndComparesEqual) {
  SymExpr seq = sym("seq"), batch = sym("batch");
  EXPECT_EQ((seq * SymExpr(12)).str(), "seq*12");
  EXPECT_EQ((SymExpr(12) * seq).str(), "seq*12");
  EXPECT_EQ((seq * batch * SymExpr(12)).str(), "batch*seq*12");
  EXPECT_EQ((batch * seq), (seq * batch));
  EXPECT_EQ((seq + SymExpr(1)).str(), "seq+1");
  EXPECT_EQ((SymExpr(1) - seq).str(), "-seq+1");
  EXPECT_EQ((seq * seq + seq * SymExpr(2) + SymExpr(1)).str(), "seq*seq+seq*2+1");
  EXPECT_EQ((seq - seq), SymExpr(0));
  EXPECT_TRUE((seq - seq).isConstant());
  EXPECT_EQ(((seq + SymExpr(1)) * (seq - SymExpr(1))), (seq * seq - SymExpr(1)));
  EXPECT_NE(seq, batch);
}

TEST(SymExpr, FloorDivisionSimplifiesWhatDividesAndKeepsTheRest) {
  SymExpr seq = sym("seq");
  EXPECT_EQ(SymExpr::floorDiv(seq * SymExpr(4), 2), seq * SymExpr(2));
  // (4 seq + 3) / 2 = 2 seq + 1 for every integer seq.
  EXPECT_EQ(SymExpr::floorDiv(seq * SymExpr(4) + SymExpr(3), 2), seq * SymExpr(2) + SymExpr(1));
  EXPECT_EQ(SymExpr::floorDiv(seq + SymExpr(1), 2).str(), "(seq+1)/2");
  EXPECT_EQ(SymExpr::floorDiv(seq, 2).str(), "seq/2");
  // (seq + 5) / 2 = (seq + 1)/2 + 2: the remainder's coefficients are kept in [0, 2).
  EXPECT_EQ(SymExpr::floorDiv(seq + SymExpr(5), 2).str(), "(seq+1)/2+2");
  EXPECT_EQ(SymExpr::mod(seq * SymExpr(4) + SymExpr(3), 2), SymExpr(1));
  EXPECT_EQ(SymExpr::mod(seq + SymExpr(3), 4).str(), "(seq+3)%4");
  EXPECT_EQ(SymExpr::floorDiv(SymExpr(-7), 2), SymExpr(-4)); // floor, not truncation
  EXPECT_THROW(SymExpr::floorDiv(seq, 0), Error);
  // Evaluated at sampled sizes, every form agrees with integer floor division.
  for (int64_t s : {1, 2, 3, 7, 64, 127}) {
    SymBindings b = {{"seq", s}};
    EXPECT_EQ(SymExpr::floorDiv(seq + SymExpr(5), 2).eval(b), (s + 5) / 2);
    EXPECT_EQ(SymExpr::mod(seq + SymExpr(3), 4).eval(b), (s + 3) % 4);
    auto floorDiv = [](int64_t a, int64_t d) { return a / d - (a % d != 0 && a < 0); };
    EXPECT_EQ(parse("(seq - 3) / 2 + 1").eval(b), floorDiv(s - 3, 2) + 1);
  }
}

TEST(SymExpr, ContentSplitsOffTheCommonFactor) {
  // content × primitive part: the gcd of the coefficients, and what is left.
  auto split = [](const std::string &text) {
    SymExpr primitive;
    int64_t c = SymExpr::parse(text).content(&primitive);
    return std::to_string(c) + " " + primitive.str();
  };
  EXPECT_EQ(split("batch*seq*3072"), "3072 batch*seq");
  EXPECT_EQ(split("6*seq+4"), "2 seq*3+2");
  EXPECT_EQ(split("12"), "12 1");
  EXPECT_EQ(split("0"), "0 0");
  EXPECT_EQ(split("(seq+1)/2*8+seq*12"), "4 (seq+1)/2*2+seq*3");
}

TEST(SymExpr, ParsesEvaluatesSubstitutesAndDivides) {
  EXPECT_EQ(parse("batch*seq*12"), sym("batch") * sym("seq") * SymExpr(12));
  EXPECT_EQ(parse(" (seq+1) / 2 ").str(), "(seq+1)/2");
  EXPECT_EQ(parse("-1"), SymExpr(-1));
  EXPECT_EQ(parse("2*(seq+3)"), sym("seq") * SymExpr(2) + SymExpr(6));
  EXPECT_EQ(parse("batch*seq*12").eval({{"batch", 4}, {"seq", 64}}), 3072);
  EXPECT_EQ(parse("batch*seq").substitute({{"seq", 8}}), sym("batch") * SymExpr(8));
  EXPECT_EQ(parse("batch*seq").symbols(), (std::set<std::string>{"batch", "seq"}));
  SymExpr q;
  EXPECT_TRUE(parse("batch*seq*768").divideBy(parse("seq*64"), &q));
  EXPECT_EQ(q, parse("batch*12"));
  EXPECT_FALSE(parse("batch*seq*768").divideBy(parse("seq*7"), &q));
  EXPECT_FALSE(parse("seq*768").divideBy(parse("batch"), &q));
  // Errors say what and where.
  auto message = [](const char *text) {
    try {
      SymExpr::parse(text);
    } catch (const Error &e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_EQ(message("seq/batch"),
            "size expression 'seq/batch': a size divides by a positive constant at column 5");
  EXPECT_EQ(message("seq+"), "size expression 'seq+': expected a number or a symbol at column 5");
  EXPECT_EQ(message("(seq"), "size expression '(seq': expected ')' at column 5");
  EXPECT_EQ(message("seq$"), "size expression 'seq$': unexpected '$' at column 4");
  EXPECT_THROW(parse("seq").eval({}), Error);
}

TEST(SymShape, ShapesCarryExpressionsAndDropThemWhenWritten) {
  Shape s = parseShape("(batch, seq*12, 64)");
  EXPECT_TRUE(s.isSymbolic());
  EXPECT_FALSE(shapeKnown(s));
  EXPECT_TRUE(shapeDescribed(s));
  EXPECT_EQ(shapeToTuple(s), "(batch, seq*12, 64)");
  EXPECT_EQ(shapeToList(s), "[batch, seq*12, 64]");
  EXPECT_EQ(s.bound({{"batch", 2}, {"seq", 3}}), (Shape{2, 36, 64}));
  EXPECT_EQ(shapeToTuple(s.bound({{"seq", 3}})), "(batch, 36, 64)");
  EXPECT_EQ(s[2], 64);
  Shape copy = s;
  copy[2] = 32; // a rule changing a size: the expressions no longer describe it
  EXPECT_FALSE(copy.isSymbolic());
  EXPECT_EQ(copy, (Shape{0, 0, 32}));
  EXPECT_EQ(parseShape("(2, 3)"), (Shape{2, 3}));
}

namespace {

// One case of a symbolic rule: a program whose `x` (and `w`, `z`) variables have shapes with
// `batch` and `seq`, and the op it exercises.
struct RuleCase {
  std::string op, program;
};

// The program with its symbols replaced by sizes.
std::string atSizes(const std::string &program, int64_t batch, int64_t seq) {
  std::string p = std::regex_replace(program, std::regex("\\bbatch\\b"), std::to_string(batch));
  return std::regex_replace(p, std::regex("\\bseq\\b"), std::to_string(seq));
}

std::string v(const char *name, const char *shape) { return test::symVar(name, shape); }

std::vector<RuleCase> ruleCases() {
  std::string x3 = v("x", "(batch, seq, 16)"), x4 = v("x", "(batch, 4, seq, 8)");
  std::string img = v("x", "(batch, 3, seq, seq)");
  return {
      {"relu", x3 + "y = relu(x)"},
      {"exp", x3 + "y = exp(x)"},
      {"erf", x3 + "y = erf(x)"},
      {"sqrt", x3 + "y = sqrt(x)"},
      {"copy", x3 + "y = copy(x)"},
      {"cast", x3 + "y = cast(x, dtype=\"float16\")"},
      {"sigmoid", x3 + "y = sigmoid(x)"},
      {"tanh", x3 + "y = tanh(x)"},
      {"softmax", x3 + "y = softmax(x, axis=-1)"},
      {"log_softmax", x3 + "y = log_softmax(x, axis=1)"},
      {"elemwise_add", x3 + v("z", "(batch, seq, 16)") + "y = elemwise_add(x, z)"},
      {"broadcast_add", x3 + v("z", "(16,)") + "y = broadcast_add(x, z)"},
      {"broadcast_mul", x3 + v("z", "(batch, 1, 1)") + "y = broadcast_mul(x, z)"},
      {"broadcast_sub", x3 + v("z", "(batch, seq, 1)") + "y = broadcast_sub(x, z)"},
      {"broadcast_div", x3 + v("z", "(1, seq, 16)") + "y = broadcast_div(x, z)"},
      {"broadcast_pow", x3 + v("z", "(1,)") + "y = broadcast_pow(x, z)"},
      {"mean", x3 + "y = mean(x, axis=-1, keepdims=True)"},
      {"sum", x3 + "y = sum(x, axis=(0, 2))"},
      {"max", x3 + "y = max(x, axis=1, exclude=True)"},
      {"transpose", x3 + "y = transpose(x, axes=(1, 0, 2))"},
      {"reshape", x3 + "y = reshape(x, shape=(0, -1, 4, 2))"},
      {"reshape", x3 + "y = reshape(x, shape=(-1, 16))"},
      {"reshape", x3 + "y = reshape(x, shape=(-3, -4, 8, -1))"},
      {"reshape", x3 + "y = reshape(x, shape=\"(seq, batch, 16)\")"},
      {"flatten", x4 + "y = flatten(x)"},
      {"expand_dims", x3 + "y = expand_dims(x, axis=1, num_newaxis=2)"},
      {"squeeze", v("x", "(batch, 1, seq)") + "y = squeeze(x, axis=1)"},
      {"concatenate", x3 + v("z", "(batch, seq, 4)") + "y = concatenate(x, z, axis=2)"},
      {"concatenate", x3 + v("z", "(batch, 2, 16)") + "y = concatenate(x, z, axis=1)"},
      {"strided_slice", x3 + "y = strided_slice(x, begin=(4,), end=(12,), axes=(-1,))"},
      {"strided_slice",
       x3 + "y = strided_slice(x, begin=(1,), end=(9223372036854775807,), axes=(1,))"},
      {"strided_slice",
       x3 + "y = strided_slice(x, begin=(-1,), end=(9223372036854775807,), axes=(1,))"},
      // a fixed table sliced to a size of the symbols (position_ids[:, :seq])
      {"strided_slice",
       v("x", "(2, 70, 16)") + "y = strided_slice(x, begin=(3,), end=\"(seq+1,)\", axes=(1,))"},
      {"dense", x3 + "y = dense(x, units=8)"},
      {"full", "y = full(shape=\"(batch*4, 1, seq)\", fill_value=2, dtype=\"int64\")"},
      {"_contrib_dense_pack", x3 + v("w", "(2, 16, 4)") +
                                  "y = _contrib_dense_pack(x, w, units=8, weight_layout=\"NC4n\", "
                                  "use_bias=False)"},
      {"matmul", v("x", "(seq, 16)") + v("w", "(16, 8)") + "y = matmul(x, w)"},
      {"matmul", v("x", "(seq, 16)") + v("w", "(8, 16)") + "y = matmul(x, w, transpose_b=True)"},
      {"batch_matmul", x4 + v("w", "(batch, 4, 8, seq)") + "y = batch_matmul(x, w)"},
      {"batch_matmul", x4 + v("w", "(1, 4, seq, 8)") + "y = batch_matmul(x, w, transpose_b=True)"},
      {"conv2d", img + "y = conv2d(x, channels=4, kernel_size=(3,3), padding=(1,1))"},
      {"conv2d", img + "y = conv2d(x, channels=4, kernel_size=(3,3), strides=(2,2))"},
      {"conv2d",
       img + "y = conv2d(x, channels=4, kernel_size=(7,7), strides=(2,2), padding=(3,3))"},
      {"max_pool2d", img + "y = max_pool2d(x, pool_size=(3,3), strides=(2,2), padding=(1,1))"},
      {"avg_pool2d", img + "y = avg_pool2d(x, pool_size=(2,2), strides=(2,2), ceil_mode=True)"},
      {"global_avg_pool2d", img + "y = global_avg_pool2d(x)"},
      {"global_max_pool2d", img + "y = global_max_pool2d(x)"},
      {"batch_norm", img + "y = batch_norm(x)"},
      {"layer_norm", x3 + "y = layer_norm(x, axis=-1)"},
      {"dropout", x3 + "y = dropout(x)"},
      {"shape_of", x3 + "y = shape_of(x, start=1)"},
      {"tile", x3 + "y = tile(x, reps=(2, 1, 3))"},
      {"tile", x3 + "y = tile(x, reps=(2, 1, 1, 3))"},
      {"pad", img + "y = pad(x, pad_width=((0, 0), (0, 0), (1, 2), (3, 0)))"},
      {"qnn.quantize", x3 + v("s", "(1,)") + v("zp", "(1,)") + "y = qnn.quantize(x, s, zp)"},
      {"argmax", x3 + "y = argmax(x, axis=1)"},
      {"argmin", x3 + "y = argmin(x, axis=-1, keepdims=True)"},
      {"take", v("w", "(50, 16)") + v("i", "(batch, seq)") + "y = take(w, i, axis=0)"},
      {"take", x3 + v("i", "(4,)") + "y = take(x, i, axis=1)"},
      {"gather_elements", x3 + v("i", "(batch, seq, 4)") + "y = gather_elements(x, i, axis=2)"},
      {"one_hot", v("i", "(batch, seq)") + v("u", "(2,)") + "y = one_hot(i, u, depth=10, axis=1)"},
      {"where", v("c", "(batch, 1, 16)") + x3 + v("z", "(1, seq, 1)") + "y = where(c, x, z)"},
      {"prelu", img + v("a", "(3,)") + "y = prelu(x, a)"},
      {"instance_norm", img + v("g", "(3,)") + v("b", "(3,)") + "y = instance_norm(x, g, b)"},
      {"group_norm", v("x", "(batch, 4, seq, seq)") + v("g", "(4,)") + v("b", "(4,)") +
                         "y = group_norm(x, g, b, num_groups=2)"},
      {"flip", x3 + "y = flip(x, axis=1)"},
      {"split", x3 + "s = split(x, indices_or_sections=2, axis=2)\ny = s[1]"},
      {"split", x3 + "r = reshape(x, shape=(0, -1, 8))\n"
                     "s = split(r, indices_or_sections=2, axis=1)\ny = s[1]"},
      {"split", x3 + "s = split(x, indices_or_sections=(3, 5), axis=1)\ny = s[2]"},
      {"upsampling", img + "y = upsampling(x, scale=2)"},
      {"fixed_point_multiply", x3 + "y = fixed_point_multiply(x, multiplier=1073741824, shift=0)"},
      {"qnn.requantize", x3 + v("s", "(1,)") + v("z", "(1,)") + v("t", "(1,)") + v("w", "(1,)") +
                             "y = qnn.requantize(x, s, z, t, w)"},
      {"qnn.add", x3 + v("r", "(seq, 16)") + v("s", "(1,)") + v("z", "(1,)") + v("t", "(1,)") +
                      v("w", "(1,)") + v("u", "(1,)") + v("o", "(1,)") +
                      "y = qnn.add(x, r, s, z, t, w, u, o)"},
      {"conv2d_transpose", img + "y = conv2d_transpose(x, channels=4, kernel_size=(3,3), "
                                 "strides=(2,2), padding=(1,1), output_padding=(1,1))"},
      {"conv3d", v("x", "(batch, 2, seq, seq, 5)") +
                     "y = conv3d(x, channels=3, kernel_size=(3,3,3), padding=(1,0,1))"},
      {"max_pool3d",
       v("x", "(batch, 2, seq, 6, seq)") + "y = max_pool3d(x, pool_size=(2,2,2), strides=(2,2,2))"},
      {"avg_pool3d", v("x", "(batch, 2, seq, 6, seq)") +
                         "y = avg_pool3d(x, pool_size=(3,3,3), strides=(2,2,2), ceil_mode=True)"},
      {"resize2d", img + "y = resize2d(x, size=(10, 12))"},
      {"topk", x3 + "t = topk(x, k=2, axis=1)\ny = t[1]"},
      {"gather_nd", x3 + v("i", "(batch, 5, 1)") + "y = gather_nd(x, i, batch_dims=1)"},
      {"scatter_elements", x3 + v("i", "(batch, seq, 4)") + v("u", "(batch, seq, 4)") +
                               "y = scatter_elements(x, i, u, axis=2)"},
      {"scatter_nd", x3 + v("i", "(2, 1)") + v("u", "(2, seq, 16)") + "y = scatter_nd(x, i, u)"},
      {"reshape_like", x3 + v("z", "(batch, seq, 4, 4)") + "y = reshape_like(x, z)"},
      {"expand_like",
       v("x", "(batch, 16)") + v("z", "(batch, seq, 16)") + "y = expand_like(x, z, axis=1)"},
      {"broadcast_to",
       v("x", "(batch, 1, 16)") + "y = broadcast_to(x, shape=\"(batch, seq, 16)\")"},
      {"broadcast_to", v("x", "(1, seq, 1)") + "y = broadcast_to(x, shape=\"(3, seq, 5)\")"},
      {"collapse_sum", x3 + v("z", "(seq, 1)") + "y = collapse_sum(x, z)"},
      // The gradient ops: each output shaped like the input it is the gradient of.
      {"_max_pool2d_grad", img + v("g", "(batch, 3, 4, 4)") + v("o", "(batch, 3, 4, 4)") +
                               "y = _max_pool2d_grad(g, x, o, pool_size=(2,2), strides=(2,2))"},
      {"_avg_pool2d_grad",
       img + v("g", "(batch, 3, 4, 4)") + "y = _avg_pool2d_grad(g, x, pool_size=(2,2))"},
      {"_max_pool3d_grad", v("x", "(batch, 2, seq, 6, seq)") + v("g", "(batch, 3, 4, 4)") +
                               "y = _max_pool3d_grad(g, x, pool_size=(2,2,2))"},
      {"_avg_pool3d_grad", v("x", "(batch, 2, seq, 6, seq)") + v("g", "(batch, 3, 4, 4)") +
                               "y = _avg_pool3d_grad(g, x, pool_size=(2,2,2))"},
      {"_upsampling_grad",
       img + v("g", "(batch, 3, 4, 4)") + "y = _upsampling_grad(g, x, scale=2)"},
      {"_cast_grad", x3 + v("g", "(batch, seq, 16)") + "y = _cast_grad(g, x)"},
      {"_pad_grad", img + v("g", "(batch, 3, 4, 4)") +
                        "y = _pad_grad(g, x, pad_width=((0,0),(0,0),(1,2),(3,0)))"},
      {"_prelu_grad",
       img + v("g", "(batch, 3, 4, 4)") + v("a", "(3,)") + "t = _prelu_grad(g, x, a)\ny = t[0]"},
      {"_batch_norm_grad", img + v("g", "(batch, 3, 4, 4)") + v("mg", "(3,)") + v("vg", "(3,)") +
                               v("ga", "(3,)") + v("be", "(3,)") + v("mm", "(3,)") +
                               v("mv", "(3,)") +
                               "t = _batch_norm_grad(g, mg, vg, x, ga, be, mm, mv)\ny = t[0]"},
      {"_concatenate_grad", x3 + v("z", "(batch, seq, 4)") + v("g", "(batch, 3, 4, 4)") +
                                "t = _concatenate_grad(g, x, z, axis=2, num_args=2)\ny = t[1]"},
      {"_conv2d_grad", img + v("g", "(batch, 3, 4, 4)") + v("w", "(4, 3, 3, 3)") +
                           "t = _conv2d_grad(g, x, w, channels=4, kernel_size=(3,3))\ny = t[0]"},
      {"_conv2d_transpose_grad",
       img + v("g", "(batch, 3, 4, 4)") + v("w", "(3, 4, 3, 3)") +
           "t = _conv2d_transpose_grad(g, x, w, channels=4, kernel_size=(3,3))\ny = t[0]"},
      {"_conv3d_grad", v("x", "(batch, 2, seq, seq, 5)") + v("g", "(batch, 3, 4, 4)") +
                           v("w", "(3, 2, 3, 3, 3)") +
                           "t = _conv3d_grad(g, x, w, channels=3, kernel_size=(3,3,3))\ny = t[0]"},
      {"qnn.dense", x3 + v("w", "(8, 16)") + v("zx", "(1,)") + v("zw", "(1,)") + v("b", "(8,)") +
                        "y = qnn.dense(x, w, zx, zw, b, units=8)"},
      // opt_level 3's blocked layouts: a symbolic batch passes through them
      {"__layout_transform__", v("x", "(batch, 8, seq, 5)") +
                                   "y = __layout_transform__(x, src_layout=\"NCHW\", "
                                   "dst_layout=\"NCHW4c\")"},
      {"__layout_transform__", v("x", "(batch, 2, seq, 5, 4)") +
                                   "y = __layout_transform__(x, src_layout=\"NCHW4c\", "
                                   "dst_layout=\"NHWC\")"},
      {"_contrib_conv2d_NCHWc",
       v("x", "(batch, 2, seq, seq, 4)") + v("w", "(3, 2, 3, 3, 4, 2)") +
           "y = _contrib_conv2d_NCHWc(x, w, channels=6, kernel_size=(3,3), strides=(2,2), "
           "padding=(1,1), layout=\"NCHW4c\", kernel_layout=\"OIHW4i2o\", "
           "out_layout=\"NCHW2c\", use_bias=False)"},
      {"qnn.conv2d", img + v("w", "(4, 3, 3, 3)") + v("zx", "(1,)") + v("zw", "(1,)") +
                         v("b", "(4,)") +
                         "y = qnn.conv2d(x, w, zx, zw, b, channels=4, kernel_size=(3,3), "
                         "padding=(1,1))"},
  };
}

} // namespace

// Each case's output shape, inferred with symbols, equals the concrete rule's at every sampled
// size once the symbols are bound.
TEST(SymShape, EverySymbolicRuleAgreesWithItsConcreteRuleAtSampledSizes) {
  for (const RuleCase &c : ruleCases()) {
    SCOPED_TRACE(c.op + ": " + c.program);
    Shape symbolic = outShape(c.program);
    ASSERT_TRUE(shapeDescribed(symbolic)) << shapeToTuple(symbolic);
    for (auto [batch, seq] :
         std::vector<std::pair<int64_t, int64_t>>{{1, 7}, {2, 9}, {3, 16}, {4, 33}, {5, 64}}) {
      Shape concrete = outShape(atSizes(c.program, batch, seq));
      EXPECT_EQ(symbolic.bound({{"batch", batch}, {"seq", seq}}), concrete)
          << "batch=" << batch << " seq=" << seq << ": " << shapeToTuple(symbolic);
    }
  }
}

// Every op that has a symbolic rule is among the cases above, or shares its rule (one function:
// the elementwise ops' symSameShape, the broadcasting ops' symBroadcastBinary) with one that is.
TEST(SymShape, EveryOpWithASymbolicRuleIsSampled) {
  Engine registers; // the op registry is filled when the first engine starts
  using Rule = std::vector<SymDims> (*)(const SymShapeCtx &);
  auto sharedRule = [](const OpDef *op) -> Rule {
    const Rule *r = op->symShape.target<Rule>();
    return r ? *r : nullptr;
  };
  std::set<std::string> sampled;
  std::set<Rule> sampledRules;
  for (const RuleCase &c : ruleCases()) {
    sampled.insert(c.op);
    if (Rule r = sharedRule(OpRegistry::get().find(c.op)))
      sampledRules.insert(r);
  }
  std::vector<std::string> missing;
  for (const std::string &name : OpRegistry::get().names()) {
    const OpDef *op = OpRegistry::get().find(name);
    if (op->symShape && op->name == name && !sampled.count(name) &&
        !sampledRules.count(sharedRule(op)))
      missing.push_back(name);
  }
  EXPECT_TRUE(missing.empty()) << "not sampled: " << joinNames(missing);
}

// :grad of a symbolic graph infers every entry with symbols, equal entry by entry to the gradient
// graph of the same program at sampled sizes (the pools' gradients shaped like their data).
TEST(SymShape, GradientGraphsInferWithSymbols) {
  std::string program =
      v("x", "(batch, 3, seq, seq)") + "w = Variable(\"w\")\n" +
      "c = conv2d(x, w, channels=4, kernel_size=(3,3), padding=(1,1))\n"
      "b = batch_norm(c)\n"
      "p = max_pool2d(relu(b[0]), pool_size=(2,2), strides=(2,2))\n"
      "q = avg_pool2d(pad(p, pad_width=((0,0),(0,0),(1,1),(1,1))), pool_size=(3,3))\n"
      "u = upsampling(q, scale=2)\n"
      "k = concatenate(u, u, axis=1)\n"
      "y = sum(cast(prelu(k), dtype=\"float64\"))\n"
      ":grad y wrt x w\n:apply InferShape\n";
  auto shapes = [](const std::string &text) {
    Engine e;
    run(e, text);
    return e.current()->graph.attr("shape")->shapes;
  };
  std::vector<Shape> symbolic = shapes(program);
  for (const Shape &s : symbolic)
    EXPECT_TRUE(shapeDescribed(s)) << shapeToTuple(s);
  for (auto [batch, seq] : std::vector<std::pair<int64_t, int64_t>>{{1, 8}, {2, 7}, {3, 12}}) {
    std::vector<Shape> concrete = shapes(atSizes(program, batch, seq));
    ASSERT_EQ(concrete.size(), symbolic.size());
    for (size_t i = 0; i < symbolic.size(); ++i)
      EXPECT_EQ(symbolic[i].bound({{"batch", batch}, {"seq", seq}}), concrete[i])
          << "entry " << i << " at batch=" << batch << " seq=" << seq;
  }
}

TEST(SymShape, WrongShapesSaySo) {
  // A symbolic axis a layout would split: only where its expression divides.
  EXPECT_NE(inferError(v("x", "(batch, seq)") +
                       "y = __layout_transform__(x, src_layout=\"NC\", dst_layout=\"NC4c\")")
                .find("cannot convert [batch, seq] from NC to NC4c: axis C of size seq does not "
                      "split by 4"),
            std::string::npos);
  EXPECT_NE(inferError(v("x", "(batch, 8)") + v("z", "(seq, 8)") + "y = broadcast_add(x, z)")
                .find("dimensions batch and seq cannot be broadcast"),
            std::string::npos);
  EXPECT_NE(inferError(v("x", "(batch, 8)") + v("i", "(batch, seq)") + "y = gather_nd(x, i)")
                .find("the index tuples' length (the last axis of indices [batch, seq]) must be a "
                      "size"),
            std::string::npos);
  EXPECT_NE(inferError(v("x", "(batch, seq, 16)") + "y = reshape(x, shape=(-1, 7))")
                .find("cannot infer -1: batch*seq*16 elements over 7"),
            std::string::npos);
}
