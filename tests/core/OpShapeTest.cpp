// OpShapeTest: every op's shape and type rule on hand-derived cases, and its error cases.
#include "TestUtil.h"

using namespace loupe;
using namespace loupe::test;

namespace {

// InferShape refuses `program` with a message that contains `want`.
void expectInferError(const std::string &program, const std::string &want) {
  std::string msg = inferError(program);
  EXPECT_NE(msg.find(want), std::string::npos) << msg;
}
} // namespace

TEST(OpShape, Conv2dFromNnvmSpec) {
  // H = (H + 2ph - (1 + (kh-1)dh))/sh + 1 — seed 000: (7,3,11,13), 5x5, no padding -> (7,3,7,9).
  EXPECT_EQ(outShape(var("x", "(7,3,11,13)") + "y = conv2d(x, channels=3, kernel_size=(5,5))"),
            (Shape{7, 3, 7, 9}));
  EXPECT_EQ(outShape(var("x", "(1,4,10,12)") +
                     "y = conv2d(x, channels=6, kernel_size=(3,3), strides=(2,2), padding=(1,1), "
                     "dilation=(2,2), groups=2)"),
            (Shape{1, 6, 4, 5}));
  // The weight and bias shapes are inferred backwards from data and attributes.
  Graph g =
      inferred(var("x", "(1,4,10,12)") + "y = conv2d(x, channels=6, kernel_size=(3,5), groups=2)");
  EXPECT_EQ(g.attr("shape")->shapes[1], (Shape{6, 2, 3, 5}));
  EXPECT_EQ(g.attr("shape")->shapes[2], (Shape{6}));
  EXPECT_EQ(outShape(var("x", "(1,4,10,12)") +
                     "y = conv2d(x, channels=6, kernel_size=(3,3), use_bias=False)"),
            (Shape{1, 6, 8, 10}));
}

TEST(OpShape, Conv2dNCHWc) {
  // Data (1, 16/8, 9, 9, 8); weight OIHW8i4o: (12/4, 16/8, 3, 3, 8, 4); bias C4c: (3, 4);
  // output NCHW4c: (1, 3, 7, 7, 4).
  std::string conv = "y = _contrib_conv2d_NCHWc(x, channels=12, kernel_size=(3,3), "
                     "layout=\"NCHW8c\", kernel_layout=\"OIHW8i4o\", out_layout=\"NCHW4c\"";
  Graph g = inferred(var("x", "(1,2,9,9,8)") + conv + ")");
  EXPECT_EQ(g.attr("shape")->shapes[1], (Shape{3, 2, 3, 3, 8, 4}));
  EXPECT_EQ(g.attr("shape")->shapes[2], (Shape{3, 4}));
  EXPECT_EQ(g.attr("shape")->shapes[3], (Shape{1, 3, 7, 7, 4}));
  EXPECT_NE(inferError(var("x", "(1,2,9,9,8)") + conv + ", groups=2)").find("groups must be 1"),
            std::string::npos);
  // 12 output channels do not split into blocks of 5.
  std::string bad =
      inferError(var("x", "(1,2,9,9,8)") + "y = _contrib_conv2d_NCHWc(x, "
                                           "channels=12, kernel_size=(3,3), layout=\"NCHW8c\", "
                                           "kernel_layout=\"OIHW8i5o\", out_layout=\"NCHW4c\")");
  EXPECT_NE(bad, "");
  EXPECT_NE(bad.find("_contrib_conv2d_NCHWc"), std::string::npos) << bad;
}

// conv3d and the 3-D pools: sizes per axis as conv2d's, the weight and bias inferred backwards;
// six padding values are (front, top, left, back, bottom, right).
TEST(OpShape, VolumeOps) {
  Graph g = inferred(var("x", "(2,4,9,10,11)") +
                     "y = conv3d(x, channels=6, kernel_size=(3,2,5), strides=(2,1,3), "
                     "padding=(1,0,2), dilation=(1,2,1), groups=2)");
  EXPECT_EQ(g.attr("shape")->shapes[1], (Shape{6, 2, 3, 2, 5}));
  EXPECT_EQ(g.attr("shape")->shapes[2], (Shape{6}));
  // D (9 + 2 - 3) / 2 + 1, H (10 - 3) + 1, W (11 + 4 - 5) / 3 + 1
  EXPECT_EQ(g.attr("shape")->shapes[3], (Shape{2, 6, 5, 8, 4}));
  EXPECT_EQ(outShape(var("x", "(1,3,8,9,10)") +
                     "y = max_pool3d(x, pool_size=(2,3,3), strides=(2,2,2), "
                     "padding=(0,1,1,1,1,0), ceil_mode=True)"),
            (Shape{1, 3, 5, 5, 5}));
  EXPECT_EQ(outShape(var("x", "(1,3,8,9,10)") + "y = avg_pool3d(x, pool_size=(2,2,2))"),
            (Shape{1, 3, 7, 8, 9}));
  expectInferError(var("x", "(1,4,10,10)") + "y = conv3d(x, channels=6, kernel_size=(3,3,3))",
                   "data must be 5-D (NCDHW), got [1, 4, 10, 10]");
  expectInferError(var("x", "(1,4,5,5,5)") + "y = conv3d(x, channels=6, kernel_size=(3,3))",
                   "attribute 'kernel_size' must have 3 values, got (3, 3)");
  expectInferError(var("x", "(1,3,5,5,5)") +
                       "y = conv3d(x, channels=6, kernel_size=(3,3,3), groups=2)",
                   "must be divisible by groups 2");
  expectInferError(var("x", "(1,3,2,5,5)") + "y = max_pool3d(x, pool_size=(3,3,3))",
                   "the window (3, 3, 3) is larger than the padded input [1, 3, 2, 5, 5]");
  expectInferError(var("x", "(1,3,5,5,5)") + "y = avg_pool3d(x, pool_size=(2,2,2), padding=(1,1))",
                   "attribute 'padding' must have 3 or 6 values, got (1, 1)");
  expectInferError(var("x", "(1,3,5,5,5)") +
                       "y = max_pool3d(x, pool_size=(2,2,2), layout=\"NDHWC\")",
                   "layout 'NDHWC' is not supported (only NCDHW)");
}

TEST(OpShape, GroupAndInstanceNorm) {
  Graph g = inferred(var("x", "(2,6,5)") + "y = group_norm(x, num_groups=3)");
  EXPECT_EQ(g.attr("shape")->shapes[1], (Shape{6})); // gamma
  EXPECT_EQ(g.attr("shape")->shapes[2], (Shape{6})); // beta
  EXPECT_EQ(g.attr("shape")->shapes[3], (Shape{2, 6, 5}));
  EXPECT_EQ(outShape(var("x", "(2,3,4)") + "y = instance_norm(x, axis=2)"), (Shape{2, 3, 4}));
  expectInferError(var("x", "(2,6,5)") + "y = group_norm(x, num_groups=4)",
                   "num_groups 4 does not divide the 6 channels");
  expectInferError(var("x", "(2,6)") + "y = instance_norm(x, axis=-1)",
                   "axis -1 must name an axis of [2, 6] (0 to 1)");
  expectInferError(var("x", "(2,6)") + "y = group_norm(x, num_groups=2, axis=2)",
                   "axis 2 must name an axis of [2, 6] (0 to 1)");
  // A reflection mirrors an axis once: its padding must be shorter than the axis.
  EXPECT_EQ(
      outShape(var("x", "(2,3)") + "y = pad(x, pad_width=((1,1),(2,2)), pad_mode=\"reflect\")"),
      (Shape{4, 7}));
  expectInferError(var("x", "(2,3)") + "y = pad(x, pad_width=((0,0),(3,0)), pad_mode=\"reflect\")",
                   "reflect padding of axis 1 (3, 0) must be less than its length 3");
}

TEST(OpShape, Conv2dErrors) {
  EXPECT_NE(inferError(var("x", "(1,4,10)") + "y = conv2d(x, channels=6, kernel_size=(3,3))")
                .find("data must be 4-D"),
            std::string::npos);
  EXPECT_NE(
      inferError(var("x", "(1,3,10,10)") + "y = conv2d(x, channels=6, kernel_size=(3,3), groups=2)")
          .find("not divisible by groups"),
      std::string::npos);
  EXPECT_NE(inferError(var("x", "(1,3,2,2)") + "y = conv2d(x, channels=6, kernel_size=(3,3))")
                .find("larger than the padded input"),
            std::string::npos);
  EXPECT_NE(inferError(var("x", "(1,3,8,8)") + var("w", "(6,2,3,3)") +
                       "y = conv2d(x, w, channels=6, kernel_size=(3,3), use_bias=False)"),
            "");
  std::string msg = inferError(var("x", "(1,3,8,8)") + var("w", "(6,2,3,3)") +
                               "y = conv2d(x, w, channels=6, kernel_size=(3,3), use_bias=False)");
  EXPECT_NE(msg.find("operator conv2d0 (conv2d): input 'weight' has shape [6, 2, 3, 3] but "
                     "[6, 3, 3, 3] is required"),
            std::string::npos)
      << msg;
  EXPECT_NE(inferError(var("x", "(1,3,8,8)") + "y = conv2d(x, channels=6, kernel_size=(3,))")
                .find("'kernel_size' must have 2 values"),
            std::string::npos);
}

TEST(OpShape, Conv2dTranspose) {
  // H = sh(H-1) + 1 + (kh-1)dh - 2ph + oph
  EXPECT_EQ(outShape(var("x", "(2,4,5,6)") +
                     "y = conv2d_transpose(x, channels=3, kernel_size=(3,3), strides=(2,2), "
                     "padding=(1,1), output_padding=(1,0))"),
            (Shape{2, 3, 10, 11}));
  Graph g = inferred(var("x", "(2,4,5,6)") + "y = conv2d_transpose(x, channels=6, "
                                             "kernel_size=(3,3), groups=2)");
  EXPECT_EQ(g.attr("shape")->shapes[1], (Shape{4, 3, 3, 3}));
}

TEST(OpShape, DenseAndMatmul) {
  EXPECT_EQ(outShape(var("x", "(2,3,5)") + "y = dense(x, units=7)"), (Shape{2, 3, 7}));
  Graph g = inferred(var("x", "(4,5)") + "y = dense(x, units=7)");
  EXPECT_EQ(g.attr("shape")->shapes[1], (Shape{7, 5}));
  EXPECT_NE(inferError(var("x", "(4,5)") + "y = dense(x, units=0)").find("at least 1"),
            std::string::npos);
  EXPECT_EQ(outShape(var("a", "(4,5)") + var("b", "(5,3)") + "y = matmul(a, b)"), (Shape{4, 3}));
  EXPECT_EQ(outShape(var("a", "(5,4)") + var("b", "(3,5)") +
                     "y = matmul(a, b, transpose_a=True, transpose_b=True)"),
            (Shape{4, 3}));
  EXPECT_NE(inferError(var("a", "(4,5)") + var("b", "(4,3)") + "y = matmul(a, b)")
                .find("cannot multiply"),
            std::string::npos);
}

TEST(OpShape, Pooling) {
  EXPECT_EQ(outShape(var("x", "(1,2,7,7)") + "y = max_pool2d(x, pool_size=(3,3), strides=(2,2))"),
            (Shape{1, 2, 3, 3}));
  EXPECT_EQ(outShape(var("x", "(1,2,8,8)") +
                     "y = max_pool2d(x, pool_size=(3,3), strides=(2,2), ceil_mode=True)"),
            (Shape{1, 2, 4, 4}));
  EXPECT_EQ(outShape(var("x", "(1,2,8,8)") +
                     "y = avg_pool2d(x, pool_size=(2,2), strides=(2,2), padding=(1,1))"),
            (Shape{1, 2, 5, 5}));
  EXPECT_EQ(outShape(var("x", "(3,2,8,5)") + "y = global_avg_pool2d(x)"), (Shape{3, 2, 1, 1}));
  EXPECT_EQ(outShape(var("x", "(3,2,8,5)") + "y = global_max_pool2d(x)"), (Shape{3, 2, 1, 1}));
  EXPECT_EQ(outShape(var("x", "(1,2,3,4)") + "y = upsampling(x, scale=2)"), (Shape{1, 2, 6, 8}));
  EXPECT_NE(inferError(var("x", "(1,2,3,4)") + "y = upsampling(x, scale=2, method=\"CUBIC\")")
                .find("expected one of NEAREST_NEIGHBOR, BILINEAR"),
            std::string::npos);
}

TEST(OpShape, Elementwise) {
  for (const char *op :
       {"relu", "sigmoid", "tanh", "exp", "log", "sqrt", "negative", "copy", "block_grad",
        "zeros_like", "ones_like", "leaky_relu", "softmax", "log_softmax"})
    EXPECT_EQ(outShape(var("x", "(2,3)") + "y = " + op + "(x)"), (Shape{2, 3})) << op;
  EXPECT_EQ(outShape(var("x", "(2,3)") + "y = clip(x, a_min=0, a_max=1)"), (Shape{2, 3}));
  EXPECT_EQ(outShape(var("x", "(2,3)") + "y = full_like(x, fill_value=2)"), (Shape{2, 3}));
  EXPECT_EQ(outShape(var("x", "(2,3)") + "y = x * 2 + 1"), (Shape{2, 3}));
  // Same-shape binary ops fill an unknown operand from the known one.
  Graph g = inferred(var("x", "(2,3)") + "z = Variable(\"z\")\ny = elemwise_add(x, z)");
  EXPECT_EQ(g.attr("shape")->shapes[1], (Shape{2, 3}));
  EXPECT_NE(inferError(var("x", "(2,3)") + var("z", "(3,2)") + "y = elemwise_mul(x, z)")
                .find("operator elemwise_mul0 (elemwise_mul): input 'rhs' has shape [3, 2]"),
            std::string::npos);
  EXPECT_EQ(outShape(var("a", "(2,3)") + var("b", "(2,3)") + var("c", "(2,3)") +
                     "y = elemwise_sum(a, b, c)"),
            (Shape{2, 3}));
  EXPECT_EQ(outShape(var("a", "(2,3)") + var("b", "(2,3)") + "y = greater(a, b)"), (Shape{2, 3}));
}

TEST(OpShape, Broadcast) {
  EXPECT_EQ(outShape(var("a", "(2,1,4)") + var("b", "(3,1)") + "y = a + b"), (Shape{2, 3, 4}));
  EXPECT_EQ(outShape(var("a", "(5,)") + var("b", "(2,5)") + "y = broadcast_div(a, b)"),
            (Shape{2, 5}));
  EXPECT_NE(
      inferError(var("a", "(2,3)") + var("b", "(2,4)") + "y = a - b").find("cannot be broadcast"),
      std::string::npos);
  EXPECT_EQ(outShape(var("a", "(1,3)") + "y = broadcast_to(a, shape=(4,3))"), (Shape{4, 3}));
  EXPECT_NE(
      inferError(var("a", "(2,3)") + "y = broadcast_to(a, shape=(4,3))").find("cannot broadcast"),
      std::string::npos);
}

TEST(OpShape, Reduce) {
  std::string x = var("x", "(2,3,4)");
  EXPECT_EQ(outShape(x + "y = sum(x)"), (Shape{1}));
  EXPECT_EQ(outShape(x + "y = sum(x, keepdims=True)"), (Shape{1, 1, 1}));
  EXPECT_EQ(outShape(x + "y = max(x, axis=1)"), (Shape{2, 4}));
  EXPECT_EQ(outShape(x + "y = min(x, axis=(0, 2), keepdims=True)"), (Shape{1, 3, 1}));
  EXPECT_EQ(outShape(x + "y = mean(x, axis=-1)"), (Shape{2, 3}));
  EXPECT_EQ(outShape(x + "y = prod(x, axis=1, exclude=True)"), (Shape{3}));
  EXPECT_NE(inferError(x + "y = sum(x, axis=3)").find("axis 3 is out of range"), std::string::npos);
}

TEST(OpShape, Transforms) {
  std::string x = var("x", "(2,3,4)");
  EXPECT_EQ(outShape(x + "y = flatten(x)"), (Shape{2, 12}));
  EXPECT_EQ(outShape(x + "y = reshape(x, shape=(4, -1))"), (Shape{4, 6}));
  EXPECT_EQ(outShape(x + "y = reshape(x, shape=(0, -1))"), (Shape{2, 12}));
  EXPECT_EQ(outShape(x + "y = reshape(x, shape=(-2,))"), (Shape{2, 3, 4}));
  EXPECT_EQ(outShape(x + "y = reshape(x, shape=(-3, 4))"), (Shape{6, 4}));
  EXPECT_EQ(outShape(x + "y = reshape(x, shape=(-4, 1, 2, 3, 4))"), (Shape{1, 2, 3, 4}));
  EXPECT_EQ(outShape(x + "y = reshape(x, shape=(-4, -1, 1, 0, 0))"), (Shape{2, 1, 3, 4}));
  EXPECT_NE(inferError(x + "y = reshape(x, shape=(5, 5))").find("cannot reshape"),
            std::string::npos);
  EXPECT_NE(inferError(x + "y = reshape(x, shape=(-1, -1))").find("only one -1"),
            std::string::npos);
  EXPECT_EQ(outShape(x + var("z", "(6,4)") + "y = reshape_like(x, z)"), (Shape{6, 4}));
  EXPECT_EQ(outShape(x + "y = transpose(x)"), (Shape{4, 3, 2}));
  EXPECT_EQ(outShape(x + "y = transpose(x, axes=(1, 0, 2))"), (Shape{3, 2, 4}));
  EXPECT_NE(inferError(x + "y = transpose(x, axes=(0, 0, 1))").find("repeat axis 0"),
            std::string::npos);
  EXPECT_EQ(outShape(x + var("z", "(2,5,4)") + "y = concatenate(x, z)"), (Shape{2, 8, 4}));
  EXPECT_EQ(outShape(x + var("z", "(2,3,1)") + "y = concatenate(x, z, axis=-1)"), (Shape{2, 3, 5}));
  EXPECT_NE(inferError(x + var("z", "(2,5,5)") + "y = concatenate(x, z)").find("differs from"),
            std::string::npos);
  EXPECT_EQ(outShape(x + "s = split(x, indices_or_sections=2, axis=2)\ny = s[1]"),
            (Shape{2, 3, 2}));
  EXPECT_EQ(outShape(x + "s = split(x, indices_or_sections=(1,), axis=1)\ny = s[1]"),
            (Shape{2, 2, 4}));
  EXPECT_NE(inferError(x + "y = split(x, indices_or_sections=2)").find("2 equal sections"),
            std::string::npos);
  EXPECT_EQ(outShape(x + "y = expand_dims(x, axis=1, num_newaxis=2)"), (Shape{2, 1, 1, 3, 4}));
  EXPECT_EQ(outShape(x + "y = expand_dims(x, axis=-1)"), (Shape{2, 3, 4, 1}));
  EXPECT_EQ(outShape(var("x", "(1,3,1)") + "y = squeeze(x)"), (Shape{3}));
  EXPECT_EQ(outShape(var("x", "(1,1)") + "y = squeeze(x)"), (Shape{1}));
  EXPECT_EQ(outShape(var("x", "(1,3,1)") + "y = squeeze(x, axis=2)"), (Shape{1, 3}));
  EXPECT_NE(inferError(var("x", "(1,3,1)") + "y = squeeze(x, axis=1)").find("not 1"),
            std::string::npos);
  EXPECT_EQ(outShape(x + "y = flip(x, axis=1)"), (Shape{2, 3, 4}));
  EXPECT_EQ(outShape(var("a", "(2,1)") + x + "y = expand_like(a, x)"), (Shape{2, 3, 4}));
  EXPECT_EQ(outShape(x + "y = pad(x, pad_width=((0,0),(1,2),(3,0)))"), (Shape{2, 6, 7}));
  EXPECT_NE(inferError(x + "y = pad(x, pad_width=((0,0),(1,2)))").find("2 pairs"),
            std::string::npos);
}

TEST(OpShape, NnMisc) {
  Graph g = inferred(var("x", "(2,3,4,4)") + "y = batch_norm(x)");
  const auto &s = g.attr("shape")->shapes;
  // entries: x, gamma, beta, mean, var, bn.0, bn.1, bn.2
  EXPECT_EQ(s[1], (Shape{3}));
  EXPECT_EQ(s[4], (Shape{3}));
  EXPECT_EQ(s[5], (Shape{2, 3, 4, 4}));
  EXPECT_EQ(s[7], (Shape{3}));
  EXPECT_EQ(outShape(var("x", "(2,3)") + "y = dropout(x)"), (Shape{2, 3}));
  Graph p = inferred(var("x", "(2,3,4,4)") + "y = prelu(x)");
  EXPECT_EQ(p.attr("shape")->shapes[1], (Shape{3}));
  EXPECT_NE(inferError(var("x", "(2,3)") + "y = prelu(x)").find("4-D"), std::string::npos);
}

TEST(OpShape, InitOps) {
  EXPECT_EQ(outShape("y = zeros(shape=(2,3))"), (Shape{2, 3}));
  EXPECT_EQ(outShape("y = ones(shape=(4,), dtype=\"int32\")"), (Shape{4}));
  EXPECT_EQ(outShape("y = full(shape=(1,2), fill_value=3)"), (Shape{1, 2}));
  EXPECT_NE(inferError("y = zeros(shape=(0,3))").find("positive"), std::string::npos);
}

TEST(OpType, Rules) {
  // Variables read `dtype` as an integer code; float64 (1) flows through.
  Graph g = inferred("x = Variable(\"x\", shape=(2,3), dtype=1)\ny = relu(x) + 1");
  EXPECT_EQ(g.attr("dtype")->ints, (std::vector<int64_t>{1, 1, 1}));
  Graph c = inferred("x = Variable(\"x\", shape=(2,3), dtype=0)\ny = cast(x, dtype=\"int32\")");
  EXPECT_EQ(c.attr("dtype")->ints, (std::vector<int64_t>{0, 4}));
  Graph z = inferred("y = ones(shape=(2,), dtype=\"uint8\")");
  EXPECT_EQ(z.attr("dtype")->ints, (std::vector<int64_t>{3}));
  EXPECT_NE(inferError("x = Variable(\"x\", shape=(2,), dtype=\"float32\")\ny = relu(x)")
                .find("is not a type code"),
            std::string::npos);
  EXPECT_NE(inferError("x = Variable(\"x\", dtype=0)\nz = Variable(\"z\", dtype=1)\n"
                       "y = elemwise_add(x, z)")
                .find("dtype"),
            std::string::npos);
}

TEST(OpShape, PartialShapesAndUnknownCount) {
  // Without a data shape nothing can be inferred; the unknown entries are counted.
  Graph g = inferred("x = Variable(\"x\")\ny = dense(x, units=3)");
  EXPECT_EQ(g.attr("shape_num_unknown_nodes")->num, 4);
  // A shape known only from the output side flows back to the input (backward sweep).
  Graph h = inferred("x = Variable(\"x\")\nz = Variable(\"z\", shape=(2,2))\n"
                     "y = elemwise_add(relu(x), z)");
  EXPECT_EQ(h.attr("shape_num_unknown_nodes")->num, 0);
  EXPECT_EQ(h.attr("shape")->shapes[0], (Shape{2, 2}));
}
