// Zoo: the built-in networks (`:model NAME`) — NNVM's nnvm.testing models and the gluon
// squeezenet of seed 002, transformers and recurrent networks, written as graph-language programs
// with the originals' layer names.
#pragma once

#include "core/Graph.h"
#include "core/Shape.h"
#include "core/Tensor.h"

#include <functional>
#include <map>
#include <string>
#include <vector>

namespace loupe::models {

/// Options of `:model`: batch size, the input's per-sample shape (empty: the network's
/// default) and the number of classes (0: the default).
struct Options {
  int64_t batch = 1;
  Shape sample;
  int64_t classes = 0;
  int dtype = 0;
};

/// Writes a program line by line, naming each intermediate symbol `vN`.
class NetWriter {
public:
  /// The network's input: `data` of shape (batch, *sample) and the options' dtype.
  std::string input(const Options &o);
  /// `vN = Variable("name", shape=…, dtype=…)`; returns the symbol.
  std::string variable(const std::string &name, const Shape &shape, int dtype);
  /// `vN = CALL`; returns the symbol.
  std::string let(const std::string &call);
  /// The program, its output bound to `out`.
  std::string finish(const std::string &out) const;

private:
  std::string text_;
  int next_ = 0;
};

/// MXNet gluon's layer names: each kind counted in creation order within a prefix
/// ("squeezenet0_conv0", "densenet0_stage1_relu3").
class GluonNames {
public:
  explicit GluonNames(std::string prefix) : prefix_(std::move(prefix)) {}
  /// The next name of `kind` ("conv", "relu", "pool", …).
  std::string next(const std::string &kind) {
    return prefix_ + kind + std::to_string(counts_[kind]++);
  }

private:
  std::string prefix_;
  std::map<std::string, int> counts_;
};

/// A float as the graph language writes it: "1e-05", "0.001", "2.0" (%.12g, with ".0" added to
/// an integer).
std::string number(double v);

// Calls in the graph language, each named explicitly (`name="…"`).
std::string conv(const std::string &in, const std::string &name, int64_t channels, int64_t k,
                 int64_t stride, int64_t pad, bool bias, int64_t groups = 1);
/// Height and width of a rectangular window, stride or padding.
struct Hw {
  int64_t h, w;
};
/// conv with rectangular kernel, strides and padding (inception's 1x7 and 7x1).
std::string conv(const std::string &in, const std::string &name, int64_t channels, Hw k, Hw stride,
                 Hw pad, bool bias, int64_t groups = 1);
std::string batchNorm(const std::string &in, const std::string &name, double eps,
                      bool scale = true);
std::string unary(const char *op, const std::string &in, const std::string &name);
std::string pool(const char *op, const std::string &in, const std::string &name, int64_t k,
                 int64_t stride, int64_t pad, bool ceil = false, bool countIncludePad = false);
std::string dense(const std::string &in, const std::string &name, int64_t units, bool bias = true);

/// Layer names of a classifier head.
struct HeadNames {
  std::string pool, flatten, fc;
};
/// global_avg_pool2d, flatten, dense to `classes`, softmax (named "softmax"); the last symbol.
std::string poolingHead(NetWriter &w, const std::string &in, const HeadNames &names,
                        int64_t classes);

/// One network of the zoo.
struct Network {
  std::string name;    ///< as `:model` takes it ("resnet-18")
  std::string summary; ///< one line for the list
  Shape sample;        ///< default per-sample input shape
  int64_t classes;     ///< default number of classes (0 when not a classifier)
  std::function<std::string(const Options &)> program;
};

/// Parameters for every variable but `data`, as nnvm.testing's Xavier initializer makes them:
/// weights (names ending in "weight", or with "_weight_" as PyTorch's recurrent ones) uniform in
/// ±sqrt(3 / ((fan_in + fan_out) / 2)) from `seed`, biases, betas and moving means 0, gammas and
/// moving variances 1. `g` must carry shape (InferShape).
std::map<std::string, Tensor> initParams(const Graph &g, int dtype, unsigned seed);

/// Every network, in listing order.
const std::vector<Network> &zoo();
/// The network called `name` (`resnet-18` means nnvm.testing's, `resnet-18_v2`), or null.
const Network *findNetwork(const std::string &name);

// One registration function per network file.
void addMlp(std::vector<Network> &z);
void addResnet(std::vector<Network> &z);
void addSqueezenet(std::vector<Network> &z);
void addMobilenet(std::vector<Network> &z);
void addVgg(std::vector<Network> &z);
void addDcgan(std::vector<Network> &z);
void addDensenet(std::vector<Network> &z);
void addInception(std::vector<Network> &z);
void addTransformers(std::vector<Network> &z);
void addRecurrent(std::vector<Network> &z);

} // namespace loupe::models
