// Inception: nnvm.testing.inception_v3 (after MXNet's image-classification symbol) — a 299x299
// stem, three 7A blocks, the 7B downsample, four 7C blocks with factorised 1x7/7x1 convolutions,
// the 7D downsample, two 7E blocks, and its layer names (`mixed_4_tower_1_conv_2_conv2d`, …).
#include "repl/models/Zoo.h"

namespace loupe::models {

namespace {

// conv2d without bias, batch_norm (epsilon 2e-5), relu, named NAME+SUFFIX_{conv2d,batchnorm,relu}.
std::string convBnRelu(NetWriter &w, const std::string &in, int64_t filters,
                       const std::string &name, const std::string &suffix = "", Hw k = {1, 1},
                       Hw stride = {1, 1}, Hw pad = {0, 0}) {
  std::string base = name + suffix;
  std::string c = w.let(conv(in, base + "_conv2d", filters, k, stride, pad, false));
  std::string b = w.let(batchNorm(c, base + "_batchnorm", 2e-5));
  return w.let(unary("relu", b, base + "_relu"));
}

// The pooling branch: max or average (counting the padding, as MXNet does) over 3x3.
std::string pooling(NetWriter &w, const std::string &in, const std::string &type, int64_t stride,
                    int64_t pad, const std::string &name) {
  return w.let(pool(type == "max" ? "max_pool2d" : "avg_pool2d", in, name, 3, stride, pad, false,
                    type == "avg"));
}

std::string concat(NetWriter &w, const std::vector<std::string> &parts, const std::string &name) {
  std::string call = "concatenate(";
  for (const std::string &p : parts)
    call += p + ", ";
  return w.let(call + "axis=1, name=\"ch_concat_" + name + "_chconcat\")");
}

std::string block7A(NetWriter &w, const std::string &in, int64_t n1x1, int64_t n3x3Red,
                    int64_t n3x3a, int64_t n3x3b, int64_t n5x5Red, int64_t n5x5,
                    const std::string &poolType, int64_t proj, const std::string &name) {
  std::string t1 = convBnRelu(w, in, n1x1, name + "_conv");
  std::string t5 = convBnRelu(w, in, n5x5Red, name + "_tower", "_conv");
  t5 = convBnRelu(w, t5, n5x5, name + "_tower", "_conv_1", {5, 5}, {1, 1}, {2, 2});
  std::string t3 = convBnRelu(w, in, n3x3Red, name + "_tower_1", "_conv");
  t3 = convBnRelu(w, t3, n3x3a, name + "_tower_1", "_conv_1", {3, 3}, {1, 1}, {1, 1});
  t3 = convBnRelu(w, t3, n3x3b, name + "_tower_1", "_conv_2", {3, 3}, {1, 1}, {1, 1});
  std::string p = pooling(w, in, poolType, 1, 1, poolType + "_pool_" + name + "_pool");
  std::string cp = convBnRelu(w, p, proj, name + "_tower_2", "_conv");
  return concat(w, {t1, t5, t3, cp}, name);
}

std::string block7B(NetWriter &w, const std::string &in, int64_t n3x3, int64_t nRed, int64_t nA,
                    int64_t nB, const std::string &name) {
  std::string t3 = convBnRelu(w, in, n3x3, name + "_conv", "", {3, 3}, {2, 2});
  std::string td = convBnRelu(w, in, nRed, name + "_tower", "_conv");
  td = convBnRelu(w, td, nA, name + "_tower", "_conv_1", {3, 3}, {1, 1}, {1, 1});
  td = convBnRelu(w, td, nB, name + "_tower", "_conv_2", {3, 3}, {2, 2});
  std::string p = pooling(w, in, "max", 2, 0, "max_pool_" + name + "_pool");
  return concat(w, {t3, td, p}, name);
}

std::string block7C(NetWriter &w, const std::string &in, int64_t n1x1, int64_t d7Red, int64_t d7a,
                    int64_t d7b, int64_t q7Red, int64_t q7a, int64_t q7b, int64_t q7c, int64_t q7d,
                    const std::string &poolType, int64_t proj, const std::string &name) {
  const Hw row = {1, 7}, col = {7, 1}, rowPad = {0, 3}, colPad = {3, 0}, one = {1, 1};
  std::string t1 = convBnRelu(w, in, n1x1, name + "_conv");
  std::string d7 = convBnRelu(w, in, d7Red, name + "_tower", "_conv");
  d7 = convBnRelu(w, d7, d7a, name + "_tower", "_conv_1", row, one, rowPad);
  d7 = convBnRelu(w, d7, d7b, name + "_tower", "_conv_2", col, one, colPad);
  std::string q7 = convBnRelu(w, in, q7Red, name + "_tower_1", "_conv");
  q7 = convBnRelu(w, q7, q7a, name + "_tower_1", "_conv_1", col, one, colPad);
  q7 = convBnRelu(w, q7, q7b, name + "_tower_1", "_conv_2", row, one, rowPad);
  q7 = convBnRelu(w, q7, q7c, name + "_tower_1", "_conv_3", col, one, colPad);
  q7 = convBnRelu(w, q7, q7d, name + "_tower_1", "_conv_4", row, one, rowPad);
  std::string p = pooling(w, in, poolType, 1, 1, poolType + "_pool_" + name + "_pool");
  std::string cp = convBnRelu(w, p, proj, name + "_tower_2", "_conv");
  return concat(w, {t1, d7, q7, cp}, name);
}

std::string block7D(NetWriter &w, const std::string &in, int64_t n3x3Red, int64_t n3x3,
                    int64_t dRed, int64_t dA, int64_t dB, int64_t d3x3, const std::string &poolType,
                    const std::string &name) {
  std::string t3 = convBnRelu(w, in, n3x3Red, name + "_tower", "_conv");
  t3 = convBnRelu(w, t3, n3x3, name + "_tower", "_conv_1", {3, 3}, {2, 2});
  std::string td = convBnRelu(w, in, dRed, name + "_tower_1", "_conv");
  td = convBnRelu(w, td, dA, name + "_tower_1", "_conv_1", {1, 7}, {1, 1}, {0, 3});
  td = convBnRelu(w, td, dB, name + "_tower_1", "_conv_2", {7, 1}, {1, 1}, {3, 0});
  td = convBnRelu(w, td, d3x3, name + "_tower_1", "_conv_3", {3, 3}, {2, 2});
  std::string p = pooling(w, in, poolType, 2, 0, poolType + "_pool_" + name + "_pool");
  return concat(w, {t3, td, p}, name);
}

std::string block7E(NetWriter &w, const std::string &in, int64_t n1x1, int64_t d3Red, int64_t d3a,
                    int64_t d3b, int64_t n3Red, int64_t n3x3, int64_t n3a, int64_t n3b,
                    const std::string &poolType, int64_t proj, const std::string &name) {
  const Hw row = {1, 3}, col = {3, 1}, rowPad = {0, 1}, colPad = {1, 0}, one = {1, 1};
  std::string t1 = convBnRelu(w, in, n1x1, name + "_conv");
  std::string d3 = convBnRelu(w, in, d3Red, name + "_tower", "_conv");
  std::string d3a_ = convBnRelu(w, d3, d3a, name + "_tower", "_mixed_conv", row, one, rowPad);
  std::string d3b_ = convBnRelu(w, d3, d3b, name + "_tower", "_mixed_conv_1", col, one, colPad);
  std::string t3 = convBnRelu(w, in, n3Red, name + "_tower_1", "_conv");
  t3 = convBnRelu(w, t3, n3x3, name + "_tower_1", "_conv_1", {3, 3}, one, {1, 1});
  std::string t3a = convBnRelu(w, t3, n3a, name + "_tower_1", "_mixed_conv", row, one, rowPad);
  std::string t3b = convBnRelu(w, t3, n3b, name + "_tower_1", "_mixed_conv_1", col, one, colPad);
  std::string p = pooling(w, in, poolType, 1, 1, poolType + "_pool_" + name + "_pool");
  std::string cp = convBnRelu(w, p, proj, name + "_tower_2", "_conv");
  return concat(w, {t1, d3a_, d3b_, t3a, t3b, cp}, name);
}

std::string inceptionV3(const Options &o) {
  NetWriter w;
  std::string x = w.input(o);
  // Stem.
  x = convBnRelu(w, x, 32, "conv", "", {3, 3}, {2, 2});
  x = convBnRelu(w, x, 32, "conv_1", "", {3, 3});
  x = convBnRelu(w, x, 64, "conv_2", "", {3, 3}, {1, 1}, {1, 1});
  x = w.let(pool("max_pool2d", x, "pool", 3, 2, 0));
  x = convBnRelu(w, x, 80, "conv_3");
  x = convBnRelu(w, x, 192, "conv_4", "", {3, 3});
  x = w.let(pool("max_pool2d", x, "pool1", 3, 2, 0));
  // Stage 3: 35x35.
  x = block7A(w, x, 64, 64, 96, 96, 48, 64, "avg", 32, "mixed");
  x = block7A(w, x, 64, 64, 96, 96, 48, 64, "avg", 64, "mixed_1");
  x = block7A(w, x, 64, 64, 96, 96, 48, 64, "avg", 64, "mixed_2");
  x = block7B(w, x, 384, 64, 96, 96, "mixed_3");
  // Stage 4: 17x17.
  x = block7C(w, x, 192, 128, 128, 192, 128, 128, 128, 128, 192, "avg", 192, "mixed_4");
  x = block7C(w, x, 192, 160, 160, 192, 160, 160, 160, 160, 192, "avg", 192, "mixed_5");
  x = block7C(w, x, 192, 160, 160, 192, 160, 160, 160, 160, 192, "avg", 192, "mixed_6");
  x = block7C(w, x, 192, 192, 192, 192, 192, 192, 192, 192, 192, "avg", 192, "mixed_7");
  x = block7D(w, x, 192, 320, 192, 192, 192, 192, "max", "mixed_8");
  // Stage 5: 8x8.
  x = block7E(w, x, 320, 384, 384, 384, 448, 384, 384, 384, "avg", 192, "mixed_9");
  x = block7E(w, x, 320, 384, 384, 384, 448, 384, 384, 384, "max", 192, "mixed_10");
  x = w.let(pool("avg_pool2d", x, "global_pool", 8, 1, 0, false, true));
  x = w.let(unary("flatten", x, "flatten"));
  x = w.let(dense(x, "fc1", o.classes));
  return w.finish(w.let(unary("softmax", x, "softmax")));
}

} // namespace

void addInception(std::vector<Network> &z) {
  z.push_back({"inception-v3",
               "Inception v3 (nnvm.testing.inception_v3, 299x299 images)",
               {3, 299, 299},
               1000,
               inceptionV3});
}

} // namespace loupe::models
