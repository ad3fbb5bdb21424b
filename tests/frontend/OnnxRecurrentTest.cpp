// OnnxRecurrentTest: ONNX LSTM, GRU and RNN — a case worked by hand, every attribute against
// the operator spec's equations written out here in doubles, at opt_level 0 and 3, and bad
// nodes refused in one line.
#include "OnnxTestUtil.h"
#include "TestUtil.h"

#include <cmath>
#include <optional>

using namespace loupe;
using namespace loupe::test;

namespace {

/// One activation as the spec's equations apply it, alpha and beta given explicitly.
struct Act {
  std::string name;
  double alpha = 0, beta = 0;
};

double apply(const Act &a, double x) {
  const std::string &f = a.name;
  if (f == "Sigmoid")
    return 1 / (1 + std::exp(-x));
  if (f == "Tanh")
    return std::tanh(x);
  if (f == "Relu")
    return x > 0 ? x : 0;
  if (f == "LeakyRelu")
    return x >= 0 ? x : a.alpha * x;
  if (f == "HardSigmoid")
    return std::min(std::max(a.alpha * x + a.beta, 0.0), 1.0);
  if (f == "Affine")
    return a.alpha * x + a.beta;
  if (f == "ScaledTanh")
    return a.alpha * std::tanh(a.beta * x);
  if (f == "Elu")
    return x >= 0 ? x : a.alpha * (std::exp(x) - 1);
  if (f == "Softsign")
    return x / (1 + std::fabs(x));
  if (f == "Softplus")
    return std::log(1 + std::exp(x));
  ADD_FAILURE() << "no activation " << f;
  return 0;
}

/// One node and its inputs; the model's attributes and what the spec makes of them.
struct Case {
  std::string op; // LSTM, GRU, RNN
  std::string direction = "forward";
  int64_t steps = 3, batch = 2, input = 3, hidden = 4;
  bool bias = true, initial = false, peepholes = false, batchFirst = false;
  bool weightsAsInputs = false; // W, R, B as graph inputs rather than initializers
  std::vector<int> lens;        // sequence_lens, when given
  bool lensAsInput = false;
  std::optional<float> clip;
  int64_t linearBeforeReset = 0, inputForget = 0;
  std::vector<std::string> activations; // the attribute; empty: none
  std::vector<float> alphas, betas;
  std::vector<Act> resolved; // every direction's activations as the spec reads the above
};

int gatesOf(const std::string &op) { return op == "LSTM" ? 4 : op == "GRU" ? 3 : 1; }

// Values in about [-0.6, 0.6] that differ per tensor and element.
std::vector<double> values(size_t count, int seed) {
  std::vector<double> v(count);
  for (size_t i = 0; i < count; ++i)
    v[i] = 0.6 * std::sin(0.7 * static_cast<double>(i) + 1.3 * seed);
  return v;
}

Tensor tensorOf(const Shape &s, const std::vector<double> &v) {
  Tensor t(s, kFloat32);
  for (size_t i = 0; i < v.size(); ++i)
    t.data[i] = static_cast<float>(v[i]); // what the float32 model holds
  return t;
}

struct Inputs {
  int64_t D;
  std::vector<double> x, w, r, b, h0, c0, p; // x time first; h0, c0 direction first
};

Inputs inputsOf(const Case &c) {
  Inputs in;
  in.D = c.direction == "bidirectional" ? 2 : 1;
  size_t g = static_cast<size_t>(gatesOf(c.op)), D = static_cast<size_t>(in.D);
  size_t T = static_cast<size_t>(c.steps), B = static_cast<size_t>(c.batch),
         I = static_cast<size_t>(c.input), H = static_cast<size_t>(c.hidden);
  auto f32 = [](std::vector<double> v) {
    for (double &x : v)
      x = static_cast<float>(x);
    return v;
  };
  in.x = f32(values(T * B * I, 1));
  in.w = f32(values(D * g * H * I, 2));
  in.r = f32(values(D * g * H * H, 3));
  in.b = c.bias ? f32(values(D * 2 * g * H, 4)) : std::vector<double>(D * 2 * g * H, 0.0);
  in.h0 = c.initial ? f32(values(D * B * H, 5)) : std::vector<double>(D * B * H, 0.0);
  in.c0 = c.initial ? f32(values(D * B * H, 6)) : std::vector<double>(D * B * H, 0.0);
  in.p = c.peepholes ? f32(values(D * 3 * H, 7)) : std::vector<double>(D * 3 * H, 0.0);
  return in;
}

struct Outputs {
  std::vector<double> y, yh, yc; // y (T, D, B, H); yh, yc (D, B, H)
};

// The operator spec's equations, one element at a time.
Outputs reference(const Case &c, const Inputs &in) {
  int64_t T = c.steps, B = c.batch, I = c.input, H = c.hidden, D = in.D, G = gatesOf(c.op);
  Outputs out;
  out.y.assign(static_cast<size_t>(T * D * B * H), 0.0);
  out.yh.assign(static_cast<size_t>(D * B * H), 0.0);
  out.yc = out.yh;
  auto clip = [&](double v) {
    return c.clip ? std::clamp(v, -double(*c.clip), double(*c.clip)) : v;
  };
  for (int64_t d = 0; d < D; ++d) {
    bool backward = c.direction == "reverse" || d == 1;
    const Act *act = &c.resolved[static_cast<size_t>(d * (c.op == "LSTM"  ? 3
                                                          : c.op == "GRU" ? 2
                                                                          : 1))];
    auto W = [&](int64_t row, int64_t k) {
      return in.w[static_cast<size_t>((d * G * H + row) * I + k)];
    };
    auto R = [&](int64_t row, int64_t k) {
      return in.r[static_cast<size_t>((d * G * H + row) * H + k)];
    };
    auto Wb = [&](int64_t row) { return in.b[static_cast<size_t>(d * 2 * G * H + row)]; };
    auto Rb = [&](int64_t row) { return in.b[static_cast<size_t>(d * 2 * G * H + G * H + row)]; };
    auto P = [&](int64_t row) { return in.p[static_cast<size_t>(d * 3 * H + row)]; };
    for (int64_t b = 0; b < B; ++b) {
      int64_t len = c.lens.empty() ? T : c.lens[static_cast<size_t>(b)];
      std::vector<double> h(static_cast<size_t>(H)), cell(static_cast<size_t>(H));
      for (int64_t j = 0; j < H; ++j) {
        h[j] = in.h0[static_cast<size_t>((d * B + b) * H + j)];
        cell[j] = in.c0[static_cast<size_t>((d * B + b) * H + j)];
      }
      for (int64_t k = 0; k < len; ++k) {
        int64_t t = backward ? len - 1 - k : k;
        auto xW = [&](int64_t row) {
          double s = 0;
          for (int64_t q = 0; q < I; ++q)
            s += in.x[static_cast<size_t>((t * B + b) * I + q)] * W(row, q);
          return s;
        };
        auto hR = [&](const std::vector<double> &v, int64_t row) {
          double s = 0;
          for (int64_t q = 0; q < H; ++q)
            s += v[q] * R(row, q);
          return s;
        };
        std::vector<double> nh(static_cast<size_t>(H)), nc = cell;
        if (c.op == "RNN") {
          for (int64_t j = 0; j < H; ++j)
            nh[j] = apply(act[0], clip(xW(j) + hR(h, j) + Wb(j) + Rb(j)));
        } else if (c.op == "GRU") {
          std::vector<double> z(H), r(H), rh(H);
          for (int64_t j = 0; j < H; ++j) {
            z[j] = apply(act[0], clip(xW(j) + hR(h, j) + Wb(j) + Rb(j)));
            r[j] = apply(act[0], clip(xW(H + j) + hR(h, H + j) + Wb(H + j) + Rb(H + j)));
            rh[j] = r[j] * h[j];
          }
          for (int64_t j = 0; j < H; ++j) {
            int64_t row = 2 * H + j;
            double pre = c.linearBeforeReset ? xW(row) + r[j] * (hR(h, row) + Rb(row)) + Wb(row)
                                             : xW(row) + hR(rh, row) + Rb(row) + Wb(row);
            double hh = apply(act[1], clip(pre));
            nh[j] = (1 - z[j]) * hh + z[j] * h[j];
          }
        } else { // LSTM: blocks i, o, f, c; peepholes i, o, f
          for (int64_t j = 0; j < H; ++j) {
            auto pre = [&](int64_t blk) {
              return xW(blk * H + j) + hR(h, blk * H + j) + Wb(blk * H + j) + Rb(blk * H + j);
            };
            double i = apply(act[0], clip(pre(0) + P(j) * cell[j]));
            double f = c.inputForget ? 1 - i : apply(act[0], clip(pre(2) + P(2 * H + j) * cell[j]));
            double cc = apply(act[1], clip(pre(3)));
            nc[j] = f * cell[j] + i * cc;
            double o = apply(act[0], clip(pre(1) + P(H + j) * nc[j]));
            nh[j] = o * apply(act[2], nc[j]);
          }
        }
        h = nh, cell = nc;
        for (int64_t j = 0; j < H; ++j)
          out.y[static_cast<size_t>(((t * D + d) * B + b) * H + j)] = h[j];
      }
      for (int64_t j = 0; j < H; ++j) {
        out.yh[static_cast<size_t>((d * B + b) * H + j)] = h[j];
        out.yc[static_cast<size_t>((d * B + b) * H + j)] = cell[j];
      }
    }
  }
  return out;
}

void setFloats(onnx::NodeProto *n, const std::string &name, const std::vector<float> &v) {
  auto *a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::FLOATS);
  for (float f : v)
    a->add_floats(f);
}

// Adds a float32 tensor as a graph input (its value in `feeds`) or an initializer.
void addTensor(onnx::GraphProto *g, bool asInput, const std::string &name, const Shape &s,
               const std::vector<double> &v, std::map<std::string, Tensor> &feeds) {
  if (asInput) {
    addInput(g, name, s);
    feeds[name] = tensorOf(s, v);
    return;
  }
  size_t k = 0;
  addFloats(g, name, s, [&](int64_t) { return static_cast<float>(v[k++]); });
}

// The case as a model file; the graph inputs it reads in `feeds`.
std::string modelOf(const Case &c, const Inputs &in, std::map<std::string, Tensor> &feeds,
                    const std::string &file) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(14);
  onnx::GraphProto *g = m.mutable_graph();
  int64_t T = c.steps, B = c.batch, I = c.input, H = c.hidden, D = in.D, G = gatesOf(c.op);
  // X, and the initial states, batch first when the layout says so.
  std::vector<double> x = in.x;
  Shape xs = {T, B, I};
  if (c.batchFirst) {
    xs = {B, T, I};
    for (int64_t t = 0; t < T; ++t)
      for (int64_t b = 0; b < B; ++b)
        for (int64_t q = 0; q < I; ++q)
          x[static_cast<size_t>((b * T + t) * I + q)] =
              in.x[static_cast<size_t>((t * B + b) * I + q)];
  }
  auto stateOf = [&](const std::vector<double> &s) {
    if (!c.batchFirst)
      return s;
    std::vector<double> o(s.size());
    for (int64_t d = 0; d < D; ++d)
      for (int64_t b = 0; b < B; ++b)
        for (int64_t j = 0; j < H; ++j)
          o[static_cast<size_t>((b * D + d) * H + j)] = s[static_cast<size_t>((d * B + b) * H + j)];
    return o;
  };
  Shape ss = c.batchFirst ? Shape{B, D, H} : Shape{D, B, H};
  addTensor(g, true, "X", xs, x, feeds);
  addTensor(g, c.weightsAsInputs, "W", {D, G * H, I}, in.w, feeds);
  addTensor(g, c.weightsAsInputs, "R", {D, G * H, H}, in.r, feeds);
  std::vector<std::string> ins = {"X", "W", "R", "", "", "", "", ""};
  if (c.bias) {
    addTensor(g, c.weightsAsInputs, "B", {D, 2 * G * H}, in.b, feeds);
    ins[3] = "B";
  }
  if (!c.lens.empty()) {
    ins[4] = "lens";
    if (c.lensAsInput) {
      addInput(g, "lens", {B}, onnx::TensorProto::INT32);
      Tensor t({B}, kInt32);
      for (int64_t b = 0; b < B; ++b)
        t.data[b] = c.lens[static_cast<size_t>(b)];
      feeds["lens"] = t;
    } else {
      onnx::TensorProto *t = g->add_initializer();
      t->set_name("lens");
      t->set_data_type(onnx::TensorProto::INT32);
      t->add_dims(B);
      for (int v : c.lens)
        t->add_int32_data(v);
    }
  }
  if (c.initial) {
    addTensor(g, false, "h0", ss, stateOf(in.h0), feeds);
    ins[5] = "h0";
    if (c.op == "LSTM") {
      addTensor(g, false, "c0", ss, stateOf(in.c0), feeds);
      ins[6] = "c0";
    }
  }
  if (c.peepholes) {
    addTensor(g, false, "P", {D, 3 * H}, in.p, feeds);
    ins[7] = "P";
  }
  while (!ins.empty() && ins.back().empty())
    ins.pop_back();
  onnx::NodeProto *n = g->add_node();
  n->set_op_type(c.op);
  n->set_name("cell");
  for (const auto &i : ins)
    n->add_input(i);
  for (const char *o : {"Y", "Y_h", "Y_c"})
    if (c.op == "LSTM" || std::string(o) != "Y_c") {
      n->add_output(o);
      g->add_output()->set_name(o);
    }
  setInt(n, "hidden_size", H);
  setString(n, "direction", c.direction);
  if (c.batchFirst)
    setInt(n, "layout", 1);
  if (c.clip)
    setFloat(n, "clip", *c.clip);
  if (c.op == "GRU")
    setInt(n, "linear_before_reset", c.linearBeforeReset);
  if (c.op == "LSTM" && c.inputForget)
    setInt(n, "input_forget", 1);
  if (!c.alphas.empty())
    setFloats(n, "activation_alpha", c.alphas);
  if (!c.betas.empty())
    setFloats(n, "activation_beta", c.betas);
  if (!c.activations.empty()) {
    auto *a = n->add_attribute();
    a->set_name("activations");
    a->set_type(onnx::AttributeProto::STRINGS);
    for (const auto &s : c.activations)
      a->add_strings(s);
  }
  return saveModel(m, file);
}

// Loupe's output k at (t, d, b, j) (Y) or (d, b, j) (the states), whatever the layout.
double outputAt(const Case &c, const Tensor &t, bool states, int64_t D, int64_t tt, int64_t d,
                int64_t b, int64_t j) {
  int64_t T = c.steps, B = c.batch, H = c.hidden;
  int64_t flat;
  if (states)
    flat = c.batchFirst ? (b * D + d) * H + j : (d * B + b) * H + j;
  else
    flat = c.batchFirst ? ((b * T + tt) * D + d) * H + j : ((tt * D + d) * B + b) * H + j;
  return t.data.at(static_cast<size_t>(flat));
}

void expectCase(const Case &c, const std::string &label) {
  Inputs in = inputsOf(c);
  Outputs want = reference(c, in);
  std::map<std::string, Tensor> feeds;
  std::string path = modelOf(c, in, feeds, label + ".onnx");
  for (int opt : {0, 3}) {
    std::vector<Tensor> got = runModelOutputs(path, feeds, opt);
    ASSERT_EQ(got.size(), c.op == "LSTM" ? 3u : 2u) << label;
    int64_t D = in.D;
    Shape ys =
        c.batchFirst ? Shape{c.batch, c.steps, D, c.hidden} : Shape{c.steps, D, c.batch, c.hidden};
    EXPECT_EQ(got[0].shape, ys) << label;
    double worst = 0;
    for (int64_t t = 0; t < c.steps; ++t)
      for (int64_t d = 0; d < D; ++d)
        for (int64_t b = 0; b < c.batch; ++b)
          for (int64_t j = 0; j < c.hidden; ++j) {
            size_t at = static_cast<size_t>(((t * D + d) * c.batch + b) * c.hidden + j);
            worst =
                std::max(worst, std::fabs(outputAt(c, got[0], false, D, t, d, b, j) - want.y[at]));
            if (t == 0) {
              size_t s = static_cast<size_t>((d * c.batch + b) * c.hidden + j);
              worst =
                  std::max(worst, std::fabs(outputAt(c, got[1], true, D, 0, d, b, j) - want.yh[s]));
              if (c.op == "LSTM")
                worst = std::max(worst,
                                 std::fabs(outputAt(c, got[2], true, D, 0, d, b, j) - want.yc[s]));
            }
          }
    EXPECT_LT(worst, 2e-6) << label << " at opt_level " << opt;
  }
  std::filesystem::remove(path);
}

const std::vector<Act> kLstmDefault = {{"Sigmoid"}, {"Tanh"}, {"Tanh"}};
const std::vector<Act> kGruDefault = {{"Sigmoid"}, {"Tanh"}};

} // namespace

// A simple RNN worked by hand: Affine (alpha 2, beta 1), W = 0.5, R = -1, no bias, x = (1, 2)
// for the first sequence and (3, 5) for the second, which ends after one step:
// h1 = 2 (0.5·1) + 1 = 2, h2 = 2 (0.5·2 - 2) + 1 = -1; h1' = 2 (0.5·3) + 1 = 4, then Y is 0 and
// the state stays 4.
TEST(OnnxRecurrent, SimpleRnnWorkedByHand) {
  Engine e; // registers the passes the importer runs
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(14);
  onnx::GraphProto *g = m.mutable_graph();
  addInput(g, "X", {2, 2, 1});
  addFloats(g, "W", {1, 1, 1}, [](int64_t) { return 0.5f; });
  addFloats(g, "R", {1, 1, 1}, [](int64_t) { return -1.0f; });
  addInput(g, "lens", {2}, onnx::TensorProto::INT32);
  onnx::NodeProto *n = addNode(g, "RNN", {"X", "W", "R", "", "lens"}, "Y");
  n->add_output("Y_h");
  setInt(n, "hidden_size", 1);
  auto *a = n->add_attribute();
  a->set_name("activations");
  a->set_type(onnx::AttributeProto::STRINGS);
  a->add_strings("affine"); // any case, as ONNX Runtime reads it
  setFloats(n, "activation_alpha", {2});
  setFloats(n, "activation_beta", {1});
  g->add_output()->set_name("Y");
  g->add_output()->set_name("Y_h");
  std::string path = saveModel(m, "rnn_by_hand.onnx");
  Tensor x({2, 2, 1}, kFloat32), lens({2}, kInt32);
  x.data = {1, 3, 2, 5}; // (time, batch)
  lens.data = {2, 1};
  for (int opt : {0, 2, 3}) {
    std::vector<Tensor> got = runModelOutputs(path, {{"X", x}, {"lens", lens}}, opt);
    EXPECT_EQ(got[0].shape, (Shape{2, 1, 2, 1}));
    EXPECT_EQ(got[0].data, (std::vector<double>{2, 4, -1, 0})) << opt;
    EXPECT_EQ(got[1].data, (std::vector<double>{-1, 4})) << opt;
  }
  std::filesystem::remove(path);
}

TEST(OnnxRecurrent, LstmEveryAttributeAgainstTheSpec) {
  Engine e;
  Case c;
  c.op = "LSTM";
  c.resolved = kLstmDefault;
  expectCase(c, "lstm_forward");
  c.direction = "bidirectional", c.initial = true, c.peepholes = true;
  c.resolved = {{"Sigmoid"}, {"Tanh"}, {"Tanh"}, {"Sigmoid"}, {"Tanh"}, {"Tanh"}};
  expectCase(c, "lstm_bidirectional_peepholes");
  c.lens = {3, 1}, c.lensAsInput = true;
  expectCase(c, "lstm_bidirectional_lens");
  c.lensAsInput = false, c.lens = {2, 3}, c.clip = 0.3f, c.inputForget = 1;
  expectCase(c, "lstm_clip_input_forget_constant_lens");
  Case r;
  r.op = "LSTM";
  r.direction = "reverse", r.batchFirst = true, r.initial = true, r.weightsAsInputs = true;
  r.activations = {"HardSigmoid", "ScaledTanh", "Softsign"};
  r.alphas = {0.3f, 0.9f}, r.betas = {0.4f, 1.5f};
  r.resolved = {{"HardSigmoid", 0.3f, 0.4f}, {"ScaledTanh", 0.9f, 1.5f}, {"Softsign"}};
  expectCase(r, "lstm_reverse_batch_first_activations");
}

TEST(OnnxRecurrent, GruEveryAttributeAgainstTheSpec) {
  Engine e;
  Case c;
  c.op = "GRU";
  c.resolved = kGruDefault;
  expectCase(c, "gru_forward");
  c.linearBeforeReset = 1;
  expectCase(c, "gru_linear_before_reset");
  c.direction = "reverse", c.lens = {1, 3}, c.lensAsInput = true, c.initial = true;
  expectCase(c, "gru_reverse_lens");
  c.linearBeforeReset = 0, c.direction = "bidirectional", c.weightsAsInputs = true;
  c.clip = 0.25f, c.bias = false, c.lensAsInput = false;
  c.resolved = {{"Sigmoid"}, {"Tanh"}, {"Sigmoid"}, {"Tanh"}};
  expectCase(c, "gru_bidirectional_clip");
  // Activation values go, in order, to the functions that take them: LeakyRelu's alpha is the
  // first, Elu's the second; Softplus and Relu take none; HardSigmoid takes the third alpha
  // and the one beta.
  Case a;
  a.op = "GRU";
  a.direction = "bidirectional", a.batchFirst = true, a.steps = 4, a.batch = 3;
  a.activations = {"LeakyRelu", "Softplus", "Elu", "Relu"};
  a.alphas = {0.2f, 0.7f};
  a.resolved = {{"LeakyRelu", 0.2f}, {"Softplus"}, {"Elu", 0.7f}, {"Relu"}};
  expectCase(a, "gru_activation_values");
}

TEST(OnnxRecurrent, RnnEveryAttributeAgainstTheSpec) {
  Engine e;
  Case c;
  c.op = "RNN";
  c.resolved = {{"Tanh"}};
  expectCase(c, "rnn_forward");
  c.direction = "bidirectional", c.initial = true, c.lens = {2, 0};
  c.activations = {"HardSigmoid", "LeakyRelu"};
  c.alphas = {0.25f, 0.05f}, c.betas = {0.6f};
  c.resolved = {{"HardSigmoid", 0.25f, 0.6f}, {"LeakyRelu", 0.05f}};
  expectCase(c, "rnn_bidirectional_lens");
  c.steps = 1, c.lens = {}, c.batchFirst = true;
  expectCase(c, "rnn_one_step_batch_first");
}

// What a malformed node gets: one line naming the node, the operator and what is wrong, at :load,
// with nothing loaded.
TEST(OnnxRecurrent, BadNodesAreRefusedByName) {
  Engine e;
  std::string before = output(e, ":params");
  auto bad = [&](const std::function<void(onnx::GraphProto *, onnx::NodeProto *)> &edit,
                 const std::string &want) {
    onnx::ModelProto m;
    m.set_ir_version(8);
    m.add_opset_import()->set_version(14);
    onnx::GraphProto *g = m.mutable_graph();
    addInput(g, "X", {3, 2, 3});
    addFloats(g, "W", {1, 16, 3});
    addFloats(g, "R", {1, 16, 4});
    onnx::NodeProto *n = addNode(g, "LSTM", {"X", "W", "R"}, "");
    n->set_name("");
    n->add_output("Y_h");
    g->add_output()->set_name("Y_h");
    edit(g, n);
    std::string path = saveModel(m, "bad_lstm.onnx");
    std::string err = output(e, ":load " + path);
    EXPECT_NE(err.find(want), std::string::npos) << err;
    EXPECT_EQ(err.find('\n'), err.size() - 1) << err;
    std::filesystem::remove(path);
  };
  bad([](auto *, auto *n) { setInt(n, "hidden_size", 5); },
      "node Y_h (LSTM): W has shape (1, 16, 3) where LSTM with 1 direction(s), hidden_size 5 "
      "and input size 3 takes (1, 20, 3)");
  bad([](auto *, auto *n) { setString(n, "direction", "sideways"); },
      "node Y_h (LSTM): direction 'sideways' is not forward, reverse or bidirectional");
  bad(
      [](auto *, auto *n) {
        auto *a = n->add_attribute();
        a->set_name("activations");
        a->set_type(onnx::AttributeProto::STRINGS);
        for (const char *s : {"Sigmoid", "Gelu", "Tanh"})
          a->add_strings(s);
      },
      "node Y_h (LSTM): activation 'Gelu' is not one of Relu, Tanh, Sigmoid");
  bad(
      [](auto *, auto *n) {
        auto *a = n->add_attribute();
        a->set_name("activations");
        a->set_type(onnx::AttributeProto::STRINGS);
        a->add_strings("Sigmoid");
      },
      "node Y_h (LSTM): activations lists 1 functions; LSTM with 1 direction(s) takes 3");
  bad([](auto *, auto *n) { setFloat(n, "clip", -1); },
      "node Y_h (LSTM): clip -1 must be positive");
  bad([](auto *, auto *n) { setInt(n, "layout", 2); }, "node Y_h (LSTM): layout 2 is not 0");
  bad(
      [](auto *g, auto *n) {
        addInts(g, "lens", {3, 4});
        n->add_input("");
        n->add_input("lens");
      },
      "node Y_h (LSTM): sequence length 4 is not in 0 … 3");
  EXPECT_EQ(output(e, ":params"), before);
}
