// Densenet: DenseNet-121/161/169/201 as MXNet gluon's model zoo builds them (nnvm.testing.densenet
// converts gluon's network): dense blocks whose layers concatenate their input with 32 (48) new
// channels, transitions that halve channels and resolution, and gluon's layer names.
#include "repl/models/Zoo.h"

namespace loupe::models {

namespace {

constexpr double kEps = 1e-5; // gluon's BatchNorm default

std::string bnRelu(NetWriter &w, GluonNames &p, const std::string &in) {
  std::string b = w.let(batchNorm(in, p.next("batchnorm"), kEps));
  return w.let(unary("relu", b, p.next("relu")));
}

// One dense layer: BN, relu, 1x1 conv to bn_size * growth channels, BN, relu, 3x3 conv to
// `growth` channels; its output is its input with the new channels appended.
std::string denseLayer(NetWriter &w, GluonNames &p, const std::string &in, int64_t growth,
                       int64_t bnSize) {
  std::string x = w.let(conv(bnRelu(w, p, in), p.next("conv"), bnSize * growth, 1, 1, 0, false));
  x = w.let(conv(bnRelu(w, p, x), p.next("conv"), growth, 3, 1, 1, false));
  return w.let("concatenate(" + in + ", " + x + ", axis=1, name=\"" + p.next("concat") + "\")");
}

std::string transition(NetWriter &w, GluonNames &p, const std::string &in, int64_t channels) {
  std::string x = w.let(conv(bnRelu(w, p, in), p.next("conv"), channels, 1, 1, 0, false));
  return w.let(pool("avg_pool2d", x, p.next("pool"), 2, 2, 0));
}

struct Spec {
  int64_t initFeatures, growth;
  std::vector<int> blocks;
};

std::string densenet(const Options &o, const Spec &spec) {
  const int64_t bnSize = 4;
  NetWriter w;
  // Gluon counts the network's own layers and the transitions under `densenet0_`, and the
  // layers of dense block N under `densenet0_stageN_`.
  GluonNames net("densenet0_");
  std::string x = w.input(o);
  x = w.let(conv(x, net.next("conv"), spec.initFeatures, 7, 2, 3, false));
  x = bnRelu(w, net, x);
  x = w.let(pool("max_pool2d", x, net.next("pool"), 3, 2, 1));
  int64_t features = spec.initFeatures;
  for (size_t i = 0; i < spec.blocks.size(); ++i) {
    GluonNames stage("densenet0_stage" + std::to_string(i + 1) + "_");
    for (int l = 0; l < spec.blocks[i]; ++l)
      x = denseLayer(w, stage, x, spec.growth, bnSize);
    features += spec.blocks[i] * spec.growth;
    if (i + 1 != spec.blocks.size()) {
      features /= 2;
      x = transition(w, net, x, features);
    }
  }
  x = bnRelu(w, net, x);
  x = w.let(pool("avg_pool2d", x, net.next("pool"), 7, 7, 0));
  x = w.let(unary("flatten", x, "densenet0_flatten0"));
  x = w.let(dense(x, "densenet0_dense0", o.classes));
  // nnvm.testing.densenet puts MXNet's SoftmaxOutput on top, as seed 002 does for squeezenet.
  return w.finish(w.let(unary("softmax", x, "softmaxoutput0")));
}

} // namespace

void addDensenet(std::vector<Network> &z) {
  const std::pair<int, Spec> specs[] = {{121, {64, 32, {6, 12, 24, 16}}},
                                        {161, {96, 48, {6, 12, 36, 24}}},
                                        {169, {64, 32, {6, 12, 32, 32}}},
                                        {201, {64, 32, {6, 12, 48, 32}}}};
  for (const auto &[layers, spec] : specs)
    z.push_back({"densenet-" + std::to_string(layers),
                 "DenseNet-" + std::to_string(layers) + " (MXNet gluon's layers and names)",
                 {3, 224, 224},
                 1000,
                 [spec = spec](const Options &o) { return densenet(o, spec); }});
}

} // namespace loupe::models
