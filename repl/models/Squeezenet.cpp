// Squeezenet: SqueezeNet 1.0 and 1.1 as MXNet gluon's model zoo builds them — the network of
// seed 002, whose deploy graph names its layers squeezenet0_conv0, squeezenet0_relu0, … and its
// input `data`; converted with a softmax on top, as the seed's graph ends.
#include "repl/models/Zoo.h"

namespace loupe::models {

namespace {

std::string convRelu(NetWriter &w, GluonNames &n, const std::string &in, int64_t ch, int64_t k,
                     int64_t stride, int64_t pad) {
  std::string c = w.let(conv(in, n.next("conv"), ch, k, stride, pad, true));
  return w.let(unary("relu", c, n.next("relu")));
}

// A fire module: a 1x1 squeeze, then 1x1 and 3x3 expands side by side, concatenated.
std::string fire(NetWriter &w, GluonNames &n, const std::string &in, int64_t squeeze, int64_t e1,
                 int64_t e3) {
  std::string s = convRelu(w, n, in, squeeze, 1, 1, 0);
  std::string a = convRelu(w, n, s, e1, 1, 1, 0);
  std::string b = convRelu(w, n, s, e3, 3, 1, 1);
  return w.let("concatenate(" + a + ", " + b + ", axis=1, name=\"" + n.next("concat") + "\")");
}

std::string maxPool(NetWriter &w, GluonNames &n, const std::string &in) {
  return w.let(pool("max_pool2d", in, n.next("pool"), 3, 2, 0, true));
}

std::string squeezenet(const Options &o, const std::string &version) {
  NetWriter w;
  GluonNames n("squeezenet0_");
  std::string x = w.input(o);
  // The feature layers after the first convolution: a fire module (squeeze, expand 1x1, expand
  // 3x3 channels) or, written {0, 0, 0}, a max pooling.
  struct Layer {
    int64_t squeeze, e1, e3;
  };
  const Layer pooling = {0, 0, 0};
  std::vector<Layer> layers =
      version == "1.0"
          ? std::vector<Layer>{pooling,        {16, 64, 64},   {16, 64, 64},   {32, 128, 128},
                               pooling,        {32, 128, 128}, {48, 192, 192}, {48, 192, 192},
                               {64, 256, 256}, pooling,        {64, 256, 256}}
          : std::vector<Layer>{pooling,        {16, 64, 64},   {16, 64, 64},  pooling,
                               {32, 128, 128}, {32, 128, 128}, pooling,       {48, 192, 192},
                               {48, 192, 192}, {64, 256, 256}, {64, 256, 256}};
  x = version == "1.0" ? convRelu(w, n, x, 96, 7, 2, 0) : convRelu(w, n, x, 64, 3, 2, 0);
  for (const Layer &l : layers)
    x = l.squeeze ? fire(w, n, x, l.squeeze, l.e1, l.e3) : maxPool(w, n, x);
  x = w.let("dropout(" + x + ", rate=0.5, name=\"squeezenet0_dropout0\")");
  x = convRelu(w, n, x, o.classes, 1, 1, 0);
  x = w.let(pool("avg_pool2d", x, n.next("pool"), 13, 13, 0));
  x = w.let(unary("flatten", x, "squeezenet0_flatten0"));
  return w.finish(w.let(unary("softmax", x, "softmaxoutput0")));
}

} // namespace

void addSqueezenet(std::vector<Network> &z) {
  for (const char *v : {"1.0", "1.1"})
    z.push_back({std::string("squeezenet") + v,
                 std::string("SqueezeNet ") + v + " (MXNet gluon's layers and names, seed 002)",
                 {3, 224, 224},
                 1000,
                 [v = std::string(v)](const Options &o) { return squeezenet(o, v); }});
}

} // namespace loupe::models
