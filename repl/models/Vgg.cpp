// Vgg: nnvm.testing.vgg — stacks of 3x3 convolutions with relu and 2x2 max pooling, then dense
// 4096, 4096 (relu, dropout) and classes; VGG-11, 13, 16 and 19.
#include "repl/models/Zoo.h"

namespace loupe::models {

namespace {

std::string vgg(const Options &o, int depth) {
  std::vector<int64_t> layers = depth == 11   ? std::vector<int64_t>{1, 1, 2, 2, 2}
                                : depth == 13 ? std::vector<int64_t>{2, 2, 2, 2, 2}
                                : depth == 16 ? std::vector<int64_t>{2, 2, 3, 3, 3}
                                              : std::vector<int64_t>{2, 2, 4, 4, 4};
  const int64_t filters[] = {64, 128, 256, 512, 512};
  NetWriter w;
  std::string x = w.input(o);
  for (size_t i = 0; i < layers.size(); ++i) {
    for (int64_t j = 0; j < layers[i]; ++j) {
      std::string id = std::to_string(i + 1) + "_" + std::to_string(j + 1);
      x = w.let(unary("relu", w.let(conv(x, "conv" + id, filters[i], 3, 1, 1, true)), "relu" + id));
    }
    x = w.let(pool("max_pool2d", x, "pool" + std::to_string(i + 1), 2, 2, 0));
  }
  x = w.let(unary("flatten", x, "flatten"));
  for (int k : {6, 7}) {
    std::string id = std::to_string(k);
    x = w.let(unary("relu", w.let(dense(x, "fc" + id, 4096)), "relu" + id));
    x = w.let("dropout(" + x + ", rate=0.5, name=\"drop" + id + "\")");
  }
  x = w.let(dense(x, "fc8", o.classes));
  return w.finish(w.let(unary("softmax", x, "softmax")));
}

} // namespace

void addVgg(std::vector<Network> &z) {
  for (int depth : {11, 13, 16, 19})
    z.push_back({"vgg-" + std::to_string(depth),
                 "VGG-" + std::to_string(depth) + " (nnvm.testing.vgg)",
                 {3, 224, 224},
                 1000,
                 [depth](const Options &o) { return vgg(o, depth); }});
}

} // namespace loupe::models
