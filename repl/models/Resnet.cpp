// Resnet: nnvm.testing.resnet (v2: pre-activation units, batch norm on the data) and the
// classic v1 (convolution, batch norm, relu), 18/34 with basic units and 50 with bottlenecks.
#include "repl/models/Zoo.h"

namespace loupe::models {

namespace {

struct Spec {
  std::vector<int64_t> units;
  std::vector<int64_t> filters; ///< stem, then one per stage
  bool bottleneck;
};

Spec specFor(int depth) {
  if (depth == 18)
    return {{2, 2, 2, 2}, {64, 64, 128, 256, 512}, false};
  if (depth == 34)
    return {{3, 4, 6, 3}, {64, 64, 128, 256, 512}, false};
  return {{3, 4, 6, 3}, {64, 256, 512, 1024, 2048}, true};
}

constexpr double kEps = 2e-5;

// nnvm.testing.resnet's residual_unit: bn-relu before each convolution; the shortcut is the
// data, or a 1x1 convolution of the first activation when the shape changes.
std::string unitV2(NetWriter &w, const std::string &data, int64_t filters, int64_t stride,
                   bool dimMatch, const std::string &name, bool bottleneck) {
  std::string act1 =
      w.let(unary("relu", w.let(batchNorm(data, name + "_bn1", kEps)), name + "_relu1"));
  std::string body;
  if (bottleneck) {
    std::string c1 = w.let(conv(act1, name + "_conv1", filters / 4, 1, 1, 0, false));
    std::string a2 =
        w.let(unary("relu", w.let(batchNorm(c1, name + "_bn2", kEps)), name + "_relu2"));
    std::string c2 = w.let(conv(a2, name + "_conv2", filters / 4, 3, stride, 1, false));
    std::string a3 =
        w.let(unary("relu", w.let(batchNorm(c2, name + "_bn3", kEps)), name + "_relu3"));
    body = w.let(conv(a3, name + "_conv3", filters, 1, 1, 0, false));
  } else {
    std::string c1 = w.let(conv(act1, name + "_conv1", filters, 3, stride, 1, false));
    std::string a2 =
        w.let(unary("relu", w.let(batchNorm(c1, name + "_bn2", kEps)), name + "_relu2"));
    body = w.let(conv(a2, name + "_conv2", filters, 3, 1, 1, false));
  }
  std::string shortcut =
      dimMatch ? data : w.let(conv(act1, name + "_sc", filters, 1, stride, 0, false));
  return w.let("elemwise_add(" + body + ", " + shortcut + ", name=\"" + name + "_plus\")");
}

// v1: convolution, batch norm, relu; the sum is activated after the add.
std::string unitV1(NetWriter &w, const std::string &data, int64_t filters, int64_t stride,
                   bool dimMatch, const std::string &name, bool bottleneck) {
  auto cbr = [&](const std::string &in, const std::string &suffix, int64_t ch, int64_t k, int64_t s,
                 int64_t p, bool act) {
    std::string c = w.let(conv(in, name + "_conv" + suffix, ch, k, s, p, false));
    std::string b = w.let(batchNorm(c, name + "_bn" + suffix, kEps));
    return act ? w.let(unary("relu", b, name + "_relu" + suffix)) : b;
  };
  std::string body;
  if (bottleneck)
    body =
        cbr(cbr(cbr(data, "1", filters / 4, 1, 1, 0, true), "2", filters / 4, 3, stride, 1, true),
            "3", filters, 1, 1, 0, false);
  else
    body = cbr(cbr(data, "1", filters, 3, stride, 1, true), "2", filters, 3, 1, 1, false);
  std::string shortcut = data;
  if (!dimMatch)
    shortcut = w.let(batchNorm(w.let(conv(data, name + "_sc", filters, 1, stride, 0, false)),
                               name + "_sc_bn", kEps));
  std::string sum =
      w.let("elemwise_add(" + body + ", " + shortcut + ", name=\"" + name + "_plus\")");
  return w.let(unary("relu", sum, name + "_relu"));
}

std::string resnet(const Options &o, int depth, int version) {
  Spec sp = specFor(depth);
  NetWriter w;
  std::string body = w.input(o);
  if (version == 2)
    body = w.let(batchNorm(body, "bn_data", kEps, false));
  bool small = o.sample.size() == 3 && o.sample[1] <= 32; // CIFAR-sized: no stem pooling
  if (small) {
    body = w.let(conv(body, "conv0", sp.filters[0], 3, 1, 1, false));
  } else {
    body = w.let(conv(body, "conv0", sp.filters[0], 7, 2, 3, false));
    body = w.let(unary("relu", w.let(batchNorm(body, "bn0", kEps)), "relu0"));
    body = w.let(pool("max_pool2d", body, "pool0", 3, 2, 1));
  }
  for (size_t i = 0; i < sp.units.size(); ++i)
    for (int64_t j = 0; j < sp.units[i]; ++j) {
      std::string name = "stage" + std::to_string(i + 1) + "_unit" + std::to_string(j + 1);
      int64_t stride = (j == 0 && i > 0) ? 2 : 1;
      // nnvm.testing gives every stage's first unit a projection shortcut; v1 (as torchvision
      // and gluon) only where the shape changes.
      bool match = j > 0 || (version == 1 && i == 0 && sp.filters[0] == sp.filters[1]);
      body = version == 2 ? unitV2(w, body, sp.filters[i + 1], stride, match, name, sp.bottleneck)
                          : unitV1(w, body, sp.filters[i + 1], stride, match, name, sp.bottleneck);
    }
  if (version == 2)
    body = w.let(unary("relu", w.let(batchNorm(body, "bn1", kEps)), "relu1"));
  return w.finish(poolingHead(w, body, {"pool1", "flatten0", "fc1"}, o.classes));
}

} // namespace

void addResnet(std::vector<Network> &z) {
  for (int version : {1, 2})
    for (int depth : {18, 34, 50}) {
      std::string name = "resnet-" + std::to_string(depth) + "_v" + std::to_string(version);
      std::string what = version == 2 ? "pre-activation units, nnvm.testing.resnet"
                                      : "convolution, batch norm, relu units";
      z.push_back(
          {name,
           "ResNet-" + std::to_string(depth) + " v" + std::to_string(version) + " (" + what + ")",
           {3, 224, 224},
           1000,
           [depth, version](const Options &o) { return resnet(o, depth, version); }});
    }
}

} // namespace loupe::models
