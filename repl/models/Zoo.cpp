// Zoo: the program writer, the layer calls every network uses, and the table of networks.
#include "repl/models/Zoo.h"
#include "repl/models/Random.h"

#include "core/DType.h"
#include "core/Error.h"
#include "core/Interrupt.h"
#include "core/Memory.h"

#include <cmath>
#include <cstdio>

namespace loupe::models {

namespace {

std::string tuple2(int64_t a) { return "(" + std::to_string(a) + ", " + std::to_string(a) + ")"; }

} // namespace

std::string number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.12g", v);
  std::string s = buf;
  return s.find_first_of(".e") == std::string::npos ? s + ".0" : s;
}

std::string NetWriter::input(const Options &o) {
  Shape s = {o.batch};
  s.insert(s.end(), o.sample.begin(), o.sample.end());
  return variable("data", s, o.dtype);
}

std::string NetWriter::variable(const std::string &name, const Shape &shape, int dtype) {
  return let("Variable(\"" + name + "\", shape=" + shapeToTuple(shape) +
             ", dtype=" + std::to_string(dtype) + ")");
}

std::string NetWriter::let(const std::string &call) {
  std::string v = "v" + std::to_string(next_++);
  text_ += v + " = " + call + "\n";
  return v;
}

std::string NetWriter::finish(const std::string &out) const {
  return text_ + "out = " + out + "\n";
}

std::string conv(const std::string &in, const std::string &name, int64_t channels, int64_t k,
                 int64_t stride, int64_t pad, bool bias, int64_t groups) {
  return conv(in, name, channels, Hw{k, k}, Hw{stride, stride}, Hw{pad, pad}, bias, groups);
}

std::string conv(const std::string &in, const std::string &name, int64_t channels, Hw k, Hw stride,
                 Hw pad, bool bias, int64_t groups) {
  auto pair = [](Hw v) { return "(" + std::to_string(v.h) + ", " + std::to_string(v.w) + ")"; };
  std::string s = "conv2d(" + in + ", channels=" + std::to_string(channels) +
                  ", kernel_size=" + pair(k) + ", strides=" + pair(stride) +
                  ", padding=" + pair(pad);
  if (groups != 1)
    s += ", groups=" + std::to_string(groups);
  if (!bias)
    s += ", use_bias=False";
  return s + ", name=\"" + name + "\")";
}

std::string batchNorm(const std::string &in, const std::string &name, double eps, bool scale) {
  return "batch_norm(" + in + ", epsilon=" + number(eps) + (scale ? "" : ", scale=False") +
         ", name=\"" + name + "\")";
}

std::string unary(const char *op, const std::string &in, const std::string &name) {
  return std::string(op) + "(" + in + ", name=\"" + name + "\")";
}

std::string pool(const char *op, const std::string &in, const std::string &name, int64_t k,
                 int64_t stride, int64_t pad, bool ceil, bool countIncludePad) {
  return std::string(op) + "(" + in + ", pool_size=" + tuple2(k) + ", strides=" + tuple2(stride) +
         ", padding=" + tuple2(pad) + (ceil ? ", ceil_mode=True" : "") +
         (countIncludePad ? ", count_include_pad=True" : "") + ", name=\"" + name + "\")";
}

std::string dense(const std::string &in, const std::string &name, int64_t units, bool bias) {
  return "dense(" + in + ", units=" + std::to_string(units) + (bias ? "" : ", use_bias=False") +
         ", name=\"" + name + "\")";
}

std::string poolingHead(NetWriter &w, const std::string &in, const HeadNames &names,
                        int64_t classes) {
  std::string x = w.let(unary("global_avg_pool2d", in, names.pool));
  x = w.let(unary("flatten", x, names.flatten));
  x = w.let(dense(x, names.fc, classes));
  return w.let(unary("softmax", x, "softmax"));
}

const std::vector<Network> &zoo() {
  static const std::vector<Network> all = [] {
    std::vector<Network> z;
    addMlp(z);
    addResnet(z);
    addSqueezenet(z);
    addMobilenet(z);
    addVgg(z);
    addDcgan(z);
    addDensenet(z);
    addInception(z);
    addTransformers(z);
    addRecurrent(z);
    return z;
  }();
  return all;
}

const Network *findNetwork(const std::string &name) {
  for (const Network &n : zoo())
    if (n.name == name || n.name == name + "_v2" ||
        (name == "squeezenet" && n.name == "squeezenet1.0"))
      return &n;
  return nullptr;
}

std::map<std::string, Tensor> initParams(const Graph &g, int dtype, unsigned seed) {
  const IndexedGraph &idx = g.index();
  const auto &shapes = g.attr("shape")->shapes;
  Mt19937 rng(seed); // std::mt19937's numbers, faster (Random.h)
  // All of them at once, before the first is made: each alone may fit where the whole does not.
  double total = 0;
  for (uint32_t nid : idx.argNodes)
    if (idx.nodes[nid].node->name != "data")
      total += static_cast<double>(checkedNumElements(shapes[idx.entryId(nid, 0)]));
  requireMemory("making the model's params", total * sizeof(double),
                cat(static_cast<int64_t>(total), " values, held as doubles"));
  std::map<std::string, Tensor> params;
  for (uint32_t nid : idx.argNodes) {
    const std::string &name = idx.nodes[nid].node->name;
    if (name == "data")
      continue;
    checkInterrupt();
    Tensor t(shapes[idx.entryId(nid, 0)], dtype);
    // PyTorch's recurrent layers name theirs weight_ih_l0, weight_hh_l0_reverse, ….
    if (name.ends_with("weight") || name.find("_weight_") != std::string::npos) {
      const Shape &s = t.shape;
      double hw = 1;
      for (size_t d = 2; d < s.size(); ++d)
        hw *= static_cast<double>(s[d]);
      double fanIn = (s.size() > 1 ? static_cast<double>(s[1]) : 1) * hw,
             fanOut = static_cast<double>(s[0]) * hw;
      double scale = std::sqrt(3.0 / ((fanIn + fanOut) / 2));
      for (double &v : t.data)
        v = roundToDType(uniform(rng, -scale, scale), dtype);
    } else if (name.ends_with("gamma") || name.ends_with("moving_var")) {
      std::fill(t.data.begin(), t.data.end(), 1.0);
    }
    params[name] = std::move(t);
  }
  return params;
}

} // namespace loupe::models
