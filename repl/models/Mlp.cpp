// Mlp: nnvm.testing.mlp — flatten, three dense layers (128, 64, classes) with relu, softmax.
#include "repl/models/Zoo.h"

namespace loupe::models {

void addMlp(std::vector<Network> &z) {
  z.push_back({"mlp",
               "multi-layer perceptron: dense 128, 64, classes (nnvm.testing.mlp)",
               {1, 28, 28},
               10,
               [](const Options &o) {
                 NetWriter w;
                 std::string x = w.input(o);
                 x = w.let(unary("flatten", x, "flatten0"));
                 x = w.let(unary("relu", w.let(dense(x, "fc1", 128)), "relu1"));
                 x = w.let(unary("relu", w.let(dense(x, "fc2", 64)), "relu2"));
                 x = w.let(dense(x, "fc3", o.classes));
                 return w.finish(w.let(unary("softmax", x, "softmax")));
               }});
}

} // namespace loupe::models
