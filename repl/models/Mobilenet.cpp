// Mobilenet: nnvm.testing.mobilenet — a 3x3 convolution block, then thirteen depthwise-separable
// blocks (3x3 depthwise with groups = channels, 1x1 pointwise), global pooling, dense, softmax.
#include "repl/models/Zoo.h"

namespace loupe::models {

namespace {

constexpr double kEps = 1e-5;

std::string convBlock(NetWriter &w, const std::string &in, const std::string &name, int64_t ch,
                      int64_t stride) {
  std::string c = w.let(conv(in, name + "_conv", ch, 3, stride, 1, false));
  std::string b = w.let(batchNorm(c, name + "_bn", kEps));
  return w.let(unary("relu", b, name + "_relu"));
}

std::string separable(NetWriter &w, const std::string &in, const std::string &name,
                      int64_t depthwise, int64_t pointwise, bool downsample) {
  std::string c1 = w.let(
      conv(in, name + "_depthwise_conv1", depthwise, 3, downsample ? 2 : 1, 1, false, depthwise));
  std::string a1 = w.let(unary("relu", w.let(batchNorm(c1, name + "_bn1", kEps)), name + "_relu1"));
  std::string c2 = w.let(conv(a1, name + "_conv2", pointwise, 1, 1, 0, false));
  return w.let(unary("relu", w.let(batchNorm(c2, name + "_bn2", kEps)), name + "_relu2"));
}

std::string mobilenet(const Options &o) {
  NetWriter w;
  std::string x = w.input(o);
  x = convBlock(w, x, "conv_block_1", 32, 2);
  struct Block {
    int64_t dw, pw;
    bool down;
  };
  const Block blocks[] = {{32, 64, false},    {64, 128, true},   {128, 128, false},
                          {128, 256, true},   {256, 256, false}, {256, 512, true},
                          {512, 512, false},  {512, 512, false}, {512, 512, false},
                          {512, 512, false},  {512, 512, false}, {512, 1024, true},
                          {1024, 1024, false}};
  int k = 1;
  for (const Block &b : blocks)
    x = separable(w, x, "separable_conv_block_" + std::to_string(k++), b.dw, b.pw, b.down);
  return w.finish(poolingHead(w, x, {"pool", "flatten", "fc"}, o.classes));
}

} // namespace

void addMobilenet(std::vector<Network> &z) {
  z.push_back({"mobilenet",
               "MobileNet v1 (depthwise-separable blocks, nnvm.testing.mobilenet)",
               {3, 224, 224},
               1000,
               mobilenet});
}

} // namespace loupe::models
