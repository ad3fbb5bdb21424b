// Recurrent: the ONNX converters of the recurrent operators — LSTM, GRU and RNN — unrolled over
// time into dense and elementwise ops (as Relay's importer does), so that fusion and the viewer
// show each step's cell.
#include "frontend/onnx/Converters.h"

#include "core/DType.h"
#include "core/Error.h"

#include <algorithm>
#include <cctype>
#include <optional>
#include <string>
#include <vector>

namespace loupe::frontend {

namespace {

// ONNX inputs shared by the three operators (LSTM adds initial_c and P).
enum Input { kX = 0, kW = 1, kR = 2, kB = 3, kSequenceLens = 4, kInitialH = 5 };

/// One activation of a cell, with the alpha and beta it reads.
struct Activation {
  std::string name; // lower case
  double alpha = 0, beta = 0;
};

/// What differs between the three operators.
struct CellKind {
  const char *op;
  int gates;                             // blocks of hidden_size rows in W and R
  std::vector<const char *> activations; // the defaults of one direction, f first
};

const CellKind kLstm{"LSTM", 4, {"Sigmoid", "Tanh", "Tanh"}};
const CellKind kGru{"GRU", 3, {"Sigmoid", "Tanh"}};
const CellKind kRnn{"RNN", 1, {"Tanh"}};

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

// The activations of every direction in order: the attribute's (names in any case, as ONNX
// Runtime reads them) or each direction's defaults. alpha and beta values are taken in order by
// the functions that use them (ONNX Runtime's reading of "consumed in the order of activation
// functions"); one not given is the default of the ONNX operator of that name.
std::vector<Activation> activations(Importer &im, const onnx::NodeProto &n, const CellKind &kind,
                                    int64_t directions) {
  std::vector<std::string> names;
  if (const onnx::AttributeProto *a = im.attr(n, "activations"))
    for (const std::string &s : a->strings())
      names.push_back(s);
  if (names.empty())
    for (int64_t d = 0; d < directions; ++d)
      for (const char *s : kind.activations)
        names.emplace_back(s);
  size_t want = kind.activations.size() * static_cast<size_t>(directions);
  if (names.size() != want)
    fail(im.where(n), ": activations lists ", names.size(), " functions; ", kind.op, " with ",
         directions, " direction(s) takes ", want);
  std::vector<float> alphas, betas;
  if (const onnx::AttributeProto *a = im.attr(n, "activation_alpha"))
    alphas.assign(a->floats().begin(), a->floats().end());
  if (const onnx::AttributeProto *a = im.attr(n, "activation_beta"))
    betas.assign(a->floats().begin(), a->floats().end());
  size_t nextAlpha = 0, nextBeta = 0;
  std::vector<Activation> out;
  for (const std::string &name : names) {
    Activation act{lower(name)};
    // Which of alpha and beta the function reads, and their defaults.
    bool usesAlpha = false, usesBeta = false;
    double alpha = 0, beta = 0;
    if (act.name == "leakyrelu")
      usesAlpha = true, alpha = 0.01;
    else if (act.name == "thresholdedrelu" || act.name == "elu")
      usesAlpha = true, alpha = 1;
    else if (act.name == "hardsigmoid")
      usesAlpha = usesBeta = true, alpha = 0.2, beta = 0.5;
    else if (act.name == "affine")
      usesAlpha = usesBeta = true, alpha = 1, beta = 0;
    else if (act.name == "scaledtanh")
      usesAlpha = usesBeta = true, alpha = 1, beta = 1;
    else if (act.name != "relu" && act.name != "tanh" && act.name != "sigmoid" &&
             act.name != "softsign" && act.name != "softplus")
      fail(im.where(n), ": activation '", name,
           "' is not one of Relu, Tanh, Sigmoid, Affine, LeakyRelu, ThresholdedRelu, ScaledTanh, "
           "HardSigmoid, Elu, Softsign, Softplus");
    act.alpha = usesAlpha && nextAlpha < alphas.size() ? alphas[nextAlpha++] : alpha;
    act.beta = usesBeta && nextBeta < betas.size() ? betas[nextBeta++] : beta;
    out.push_back(act);
  }
  return out;
}

/// One direction's weights, each cut from the node's inputs once.
struct DirectionWeights {
  NodeEntry w; // (gates * hidden, input)
  NodeEntry r; // (gates * hidden, hidden); GRU without linear_before_reset: z, r rows
  std::optional<NodeEntry> rh;         // GRU without linear_before_reset: R's h rows
  std::optional<NodeEntry> wb;         // W's bias
  std::optional<NodeEntry> rb;         // R's bias (its z and r parts where rh is apart)
  std::optional<NodeEntry> rbh;        // R's h bias where rh is apart
  std::optional<NodeEntry> pi, po, pf; // LSTM's peepholes
};

/// Builds one operator's unrolled graph: its inputs' parts per direction, then each step's cell.
class Unroller {
public:
  Unroller(Importer &im, const onnx::NodeProto &n, const CellKind &kind)
      : im_(im), n_(n), kind_(kind), lstm_(&kind == &kLstm), gru_(&kind == &kGru) {}

  /// The operator's outputs: Y, Y_h (and Y_c for LSTM).
  std::vector<NodeEntry> run();

private:
  NodeEntry op(const std::string &name, AttrDict attrs, std::vector<NodeEntry> ins,
               const std::string &suffix) {
    return im_.op(n_, name, std::move(attrs), std::move(ins), suffix);
  }
  NodeEntry binary(const char *name, const NodeEntry &a, const NodeEntry &b,
                   const std::string &suffix) {
    return op(name, {}, {a, b}, suffix);
  }
  NodeEntry scalarOp(const char *name, double v, const NodeEntry &x, const std::string &suffix) {
    return op(name, {{"scalar", floatText(v)}}, {x}, suffix);
  }
  std::vector<NodeEntry> split(const NodeEntry &x, int64_t parts, int axis,
                               const std::string &suffix) {
    return im_.opOutputs(
        n_, "split",
        {{"indices_or_sections", std::to_string(parts)}, {"axis", std::to_string(axis)}}, {x},
        suffix);
  }
  void read();
  void makeMasks();
  NodeEntry activate(const Activation &a, NodeEntry x, const std::string &suffix);
  NodeEntry gate(const Activation &a, const NodeEntry &x, const std::string &suffix);
  std::optional<NodeEntry> part(int k, int64_t d, int64_t from, int64_t to,
                                const std::string &suffix);
  NodeEntry initialState(int k, int64_t d, const std::string &suffix);
  NodeEntry dense(const NodeEntry &x, const NodeEntry &w, const std::optional<NodeEntry> &bias,
                  int64_t units, const std::string &suffix);
  DirectionWeights weights(int64_t d, const std::string &dn);
  // Runs direction d over every step: its outputs in time order, its final states in h, c.
  NodeEntry direction(int64_t d, NodeEntry &h, NodeEntry &c);
  // One step of each cell on the step's input product xw: the new hidden (and cell) state.
  NodeEntry lstmCell(const DirectionWeights &dw, const Activation *act, const NodeEntry &xw,
                     const NodeEntry &h, NodeEntry &c, const std::string &at);
  NodeEntry gruCell(const DirectionWeights &dw, const Activation *act, const NodeEntry &xw,
                    const NodeEntry &h, const std::string &at);

  Importer &im_;
  const onnx::NodeProto &n_;
  const CellKind &kind_;
  bool lstm_, gru_;
  int64_t steps_ = 0, batch_ = 0, inputSize_ = 0, hidden_ = 0, directions_ = 1;
  bool reverse_ = false, batchFirst_ = false, linearBeforeReset_ = false, inputForget_ = false;
  int dtype_ = kFloat32;
  std::optional<double> clip_;
  std::vector<Activation> acts_;
  NodeEntry x_;                   // (steps, batch, input): time first
  std::vector<NodeEntry> masks_;  // per step, (1, batch, 1): whether the step is in each sequence
  std::optional<NodeEntry> zero_; // (1,): what Y holds past a sequence's end
};

// The attributes and the inputs' shapes, checked against each other.
void Unroller::read() {
  std::vector<const char *> known = {"activation_alpha", "activation_beta", "activations", "clip",
                                     "direction",        "hidden_size",     "layout"};
  if (lstm_)
    known.push_back("input_forget");
  if (gru_)
    known.push_back("linear_before_reset");
  im_.only(n_, known);
  std::string dir = im_.attrString(n_, "direction", "forward");
  if (dir != "forward" && dir != "reverse" && dir != "bidirectional")
    fail(im_.where(n_), ": direction '", dir, "' is not forward, reverse or bidirectional");
  directions_ = dir == "bidirectional" ? 2 : 1;
  reverse_ = dir == "reverse";
  int64_t layout = im_.attrInt(n_, "layout", 0);
  if (layout != 0 && layout != 1)
    fail(im_.where(n_), ": layout ", layout, " is not 0 (time first) or 1 (batch first)");
  batchFirst_ = layout == 1;
  linearBeforeReset_ = im_.attrInt(n_, "linear_before_reset", 0) != 0;
  inputForget_ = im_.attrInt(n_, "input_forget", 0) != 0;
  if (im_.attr(n_, "clip")) {
    clip_ = im_.attrFloat(n_, "clip", 0);
    if (!(*clip_ > 0))
      fail(im_.where(n_), ": clip ", floatText(*clip_), " must be positive");
  }
  acts_ = activations(im_, n_, kind_, directions_);

  x_ = im_.input(n_, kX);
  Shape xs = shapeNow(im_, n_, kX, 3);
  if (xs.size() != 3)
    fail(im_.where(n_), ": X must be 3-D, got shape ", shapeToTuple(xs));
  if (batchFirst_) {
    x_ = op("transpose", {{"axes", "(1, 0, 2)"}}, {x_}, "_X_time_first");
    std::swap(xs[0], xs[1]);
  }
  steps_ = xs[0], batch_ = xs[1], inputSize_ = xs[2];
  if (steps_ < 1 || steps_ > 4096)
    fail(im_.where(n_), ": ", steps_, " time steps; the unrolled graph takes 1 … 4096");
  int dt = im_.inferredDType(x_);
  if (dt != kFloat32 && dt != kFloat64 && dt != kFloat16)
    fail(im_.where(n_), ": X must be a floating-point tensor");
  dtype_ = dt;

  Shape rs = shapeNow(im_, n_, kR, 3);
  int64_t g = kind_.gates;
  hidden_ = im_.attrInt(n_, "hidden_size", rs.size() == 3 ? rs[2] : 0);
  if (hidden_ < 1)
    fail(im_.where(n_), ": hidden_size ", hidden_, " must be at least 1");
  auto expect = [&](int k, const char *name, Shape want) {
    if (!im_.hasInput(n_, k))
      return;
    Shape have = shapeNow(im_, n_, k, 1);
    if (have != want)
      fail(im_.where(n_), ": ", name, " has shape ", shapeToTuple(have), " where ", kind_.op,
           " with ", directions_, " direction(s), hidden_size ", hidden_, " and input size ",
           inputSize_, " takes ", shapeToTuple(want));
  };
  expect(kW, "W", {directions_, g * hidden_, inputSize_});
  expect(kR, "R", {directions_, g * hidden_, hidden_});
  expect(kB, "B", {directions_, 2 * g * hidden_});
  expect(kSequenceLens, "sequence_lens", {batch_});
  if (lstm_)
    expect(7, "P", {directions_, 3 * hidden_});
}

// Steps past a sequence's end leave the state as it was and write zeros to Y (sequence_lens);
// none when every sequence is known to fill every step.
void Unroller::makeMasks() {
  if (!im_.hasInput(n_, kSequenceLens))
    return;
  if (const Tensor *t = im_.constant(n_, kSequenceLens)) {
    for (double v : t->data)
      if (v < 0 || v > static_cast<double>(steps_))
        fail(im_.where(n_), ": sequence length ", floatText(v), " is not in 0 … ", steps_);
    if (std::all_of(t->data.begin(), t->data.end(),
                    [&](double v) { return v == static_cast<double>(steps_); }))
      return;
  }
  Tensor positions({steps_, 1, 1}, kInt64);
  for (int64_t t = 0; t < steps_; ++t)
    positions.data[static_cast<size_t>(t)] = static_cast<double>(t);
  NodeEntry lens = op("cast", {{"dtype", "int64"}}, {im_.input(n_, kSequenceLens)}, "_lens");
  lens = op("reshape", {{"shape", tupleText({1, batch_, 1})}}, {lens}, "_lens_by_batch");
  NodeEntry in = binary("broadcast_less", im_.constantParam(n_, "_positions", positions), lens,
                        "_in_sequence");
  masks_ = steps_ == 1 ? std::vector<NodeEntry>{in} : split(in, steps_, 0, "_in_sequence_by_step");
  zero_ = im_.constantParam(n_, "_zero", Tensor({1}, dtype_));
}

NodeEntry Unroller::activate(const Activation &a, NodeEntry x, const std::string &suffix) {
  const std::string &f = a.name;
  if (f == "relu" || f == "tanh" || f == "sigmoid" || f == "softsign")
    return op(f, {}, {x}, suffix);
  if (f == "leakyrelu")
    return op("leaky_relu", {{"alpha", floatText(a.alpha)}}, {x}, suffix);
  if (f == "thresholdedrelu")
    return op("thresholded_relu", {{"alpha", floatText(a.alpha)}}, {x}, suffix);
  if (f == "elu")
    return op("elu", {{"alpha", floatText(a.alpha)}}, {x}, suffix);
  if (f == "softplus")
    return softplusOf(im_, n_, x, suffix);
  if (f == "hardsigmoid")
    return hardSigmoidOf(im_, n_, x, a.alpha, a.beta, suffix);
  if (f == "scaledtanh") {
    x = scalarOp("__mul_scalar__", a.beta, x, suffix + "_beta");
    x = op("tanh", {}, {x}, suffix + "_tanh");
    return scalarOp("__mul_scalar__", a.alpha, x, suffix);
  }
  // affine: alpha x + beta
  x = scalarOp("__mul_scalar__", a.alpha, x, suffix + "_alpha");
  return scalarOp("__add_scalar__", a.beta, x, suffix);
}

// A gate: its activation of its input, which `clip` bounds to [-clip, clip] first.
NodeEntry Unroller::gate(const Activation &a, const NodeEntry &x, const std::string &suffix) {
  NodeEntry in = x;
  if (clip_)
    in = op("clip", {{"a_min", floatText(-*clip_)}, {"a_max", floatText(*clip_)}}, {x},
            suffix + "_clip");
  return activate(a, in, suffix);
}

// Direction d's rows [from, to) of input k, of shape (num_directions, rows, rest…), as a
// (to - from, rest…) value: a param when the input is a constant, else a slice of it; none
// when the node has no input k.
std::optional<NodeEntry> Unroller::part(int k, int64_t d, int64_t from, int64_t to,
                                        const std::string &suffix) {
  if (!im_.hasInput(n_, k))
    return std::nullopt;
  Shape s = shapeNow(im_, n_, k, 2);
  Shape out(s.begin() + 1, s.end());
  out[0] = to - from;
  if (const Tensor *t = im_.constant(n_, k)) {
    Tensor p(out, t->dtype);
    int64_t inner = numElements(out) / out[0];
    auto first = t->data.begin() + (d * s[1] + from) * inner;
    std::copy(first, first + static_cast<int64_t>(p.data.size()), p.data.begin());
    return im_.constantParam(n_, suffix, std::move(p));
  }
  NodeEntry slice =
      op("strided_slice",
         {{"begin", tupleText({d, from})}, {"end", tupleText({d + 1, to})}, {"axes", "(0, 1)"}},
         {im_.input(n_, k)}, suffix + "_slice");
  return op("reshape", {{"shape", tupleText(out)}}, {slice}, suffix);
}

// Direction d's initial state from input k, (num_directions, batch, hidden) (batch first:
// (batch, num_directions, hidden)), as (1, batch, hidden); zeros when the node has none.
NodeEntry Unroller::initialState(int k, int64_t d, const std::string &suffix) {
  if (!im_.hasInput(n_, k))
    return im_.constantParam(n_, suffix, Tensor({1, batch_, hidden_}, dtype_));
  Shape want = {directions_, batch_, hidden_};
  Shape have = shapeNow(im_, n_, k, 1);
  if (batchFirst_)
    std::swap(want[0], want[1]);
  if (have != want)
    fail(im_.where(n_), ": initial state input ", k, " has shape ", shapeToTuple(have),
         " instead of ", shapeToTuple(want));
  NodeEntry s = op("strided_slice",
                   {{"begin", tupleText({d})},
                    {"end", tupleText({d + 1})},
                    {"axes", batchFirst_ ? "(1,)" : "(0,)"}},
                   {im_.input(n_, k)}, batchFirst_ ? suffix + "_slice" : suffix);
  return batchFirst_ ? op("transpose", {{"axes", "(1, 0, 2)"}}, {s}, suffix) : s;
}

NodeEntry Unroller::dense(const NodeEntry &x, const NodeEntry &w,
                          const std::optional<NodeEntry> &bias, int64_t units,
                          const std::string &suffix) {
  std::vector<NodeEntry> ins = {x, w};
  if (bias)
    ins.push_back(*bias);
  return op("dense", {{"units", std::to_string(units)}, {"use_bias", bias ? "True" : "False"}}, ins,
            suffix);
}

// Direction d's weights, named after the direction (`dn`: "_fw", "_bw").
DirectionWeights Unroller::weights(int64_t d, const std::string &dn) {
  int64_t gh = kind_.gates * hidden_, h = hidden_;
  DirectionWeights w;
  w.w = *part(kW, d, 0, gh, dn + "_W");
  w.wb = part(kB, d, 0, gh, dn + "_Wb");
  // GRU's h gate multiplies r by H before R's h rows when linear_before_reset is 0: those rows
  // and their bias are a product of their own.
  bool apart = gru_ && !linearBeforeReset_;
  w.r = *part(kR, d, 0, apart ? 2 * h : gh, dn + "_R");
  w.rb = part(kB, d, gh, apart ? gh + 2 * h : 2 * gh, dn + "_Rb");
  if (apart) {
    w.rh = part(kR, d, 2 * h, 3 * h, dn + "_Rh");
    w.rbh = part(kB, d, gh + 2 * h, 2 * gh, dn + "_Rbh");
  }
  if (lstm_) {
    w.pi = part(7, d, 0, h, dn + "_Pi");
    w.po = part(7, d, h, 2 * h, dn + "_Po");
    w.pf = part(7, d, 2 * h, 3 * h, dn + "_Pf");
  }
  return w;
}

NodeEntry Unroller::lstmCell(const DirectionWeights &dw, const Activation *act, const NodeEntry &xw,
                             const NodeEntry &h, NodeEntry &c, const std::string &at) {
  NodeEntry gates =
      binary("broadcast_add", xw, dense(h, dw.r, dw.rb, 4 * hidden_, at + "_hR"), at + "_gates");
  // W's and R's blocks are i, o, f, c.
  std::vector<NodeEntry> g = split(gates, 4, 2, at + "_split");
  NodeEntry gi = g[0], go = g[1], gf = g[2], gc = g[3];
  if (dw.pi) {
    gi =
        binary("broadcast_add", gi, binary("broadcast_mul", *dw.pi, c, at + "_Pi_c"), at + "_i_in");
    gf =
        binary("broadcast_add", gf, binary("broadcast_mul", *dw.pf, c, at + "_Pf_c"), at + "_f_in");
  }
  NodeEntry i = gate(act[0], gi, at + "_i");
  // input_forget couples the gates: what is let in is what is forgotten.
  NodeEntry f =
      inputForget_ ? scalarOp("__rsub_scalar__", 1, i, at + "_f") : gate(act[0], gf, at + "_f");
  NodeEntry cc = gate(act[1], gc, at + "_c_new");
  c = binary("broadcast_add", binary("broadcast_mul", f, c, at + "_f_c"),
             binary("broadcast_mul", i, cc, at + "_i_c"), at + "_C");
  if (dw.po)
    go =
        binary("broadcast_add", go, binary("broadcast_mul", *dw.po, c, at + "_Po_C"), at + "_o_in");
  NodeEntry o = gate(act[0], go, at + "_o");
  return binary("broadcast_mul", o, activate(act[2], c, at + "_h_C"), at + "_H");
}

NodeEntry Unroller::gruCell(const DirectionWeights &dw, const Activation *act, const NodeEntry &xw,
                            const NodeEntry &h, const std::string &at) {
  // W's and R's blocks are z, r, h.
  std::vector<NodeEntry> x = split(xw, 3, 2, at + "_x_split");
  int64_t recurrent = linearBeforeReset_ ? 3 : 2;
  std::vector<NodeEntry> r =
      split(dense(h, dw.r, dw.rb, recurrent * hidden_, at + "_hR"), recurrent, 2, at + "_hR_split");
  NodeEntry z = gate(act[0], binary("broadcast_add", x[0], r[0], at + "_z_in"), at + "_z");
  NodeEntry reset = gate(act[0], binary("broadcast_add", x[1], r[1], at + "_r_in"), at + "_r");
  NodeEntry hr = linearBeforeReset_ ? binary("broadcast_mul", reset, r[2], at + "_r_hR")
                                    : dense(binary("broadcast_mul", reset, h, at + "_r_h"), *dw.rh,
                                            dw.rbh, hidden_, at + "_r_h_R");
  NodeEntry hh = gate(act[1], binary("broadcast_add", x[2], hr, at + "_h_in"), at + "_h_new");
  // (1 - z) hh + z H, written hh + z (H - hh).
  return binary(
      "broadcast_add", hh,
      binary("broadcast_mul", z, binary("broadcast_sub", h, hh, at + "_h_diff"), at + "_z_diff"),
      at + "_H");
}

NodeEntry Unroller::direction(int64_t d, NodeEntry &h, NodeEntry &c) {
  bool backward = reverse_ || d == 1;
  std::string dn = backward ? "_bw" : "_fw";
  DirectionWeights dw = weights(d, dn);
  const Activation *act = &acts_[static_cast<size_t>(d) * kind_.activations.size()];
  // Every step's input product at once: one (steps × batch, input) by (input, gates × hidden).
  NodeEntry xw = dense(x_, dw.w, dw.wb, kind_.gates * hidden_, dn + "_XW");
  std::vector<NodeEntry> xs =
      steps_ == 1 ? std::vector<NodeEntry>{xw} : split(xw, steps_, 0, dn + "_XW_by_step");
  h = initialState(kInitialH, d, dn + "_H0");
  if (lstm_)
    c = initialState(6, d, dn + "_C0");
  std::vector<NodeEntry> ys(static_cast<size_t>(steps_));
  for (int64_t k = 0; k < steps_; ++k) {
    int64_t t = backward ? steps_ - 1 - k : k;
    auto ut = static_cast<size_t>(t);
    std::string at = dn + "_t" + std::to_string(t);
    NodeEntry prevC = c;
    NodeEntry next = lstm_  ? lstmCell(dw, act, xs[ut], h, c, at)
                     : gru_ ? gruCell(dw, act, xs[ut], h, at)
                            : gate(act[0],
                                   binary("broadcast_add", xs[ut],
                                          dense(h, dw.r, dw.rb, hidden_, at + "_hR"), at + "_in"),
                                   at + "_H");
    if (masks_.empty()) {
      ys[ut] = h = next;
      continue;
    }
    const NodeEntry &m = masks_[ut];
    ys[ut] = op("where", {}, {m, next, *zero_}, at + "_Y");
    h = op("where", {}, {m, next, h}, at + "_H_kept");
    if (lstm_)
      c = op("where", {}, {m, c, prevC}, at + "_C_kept");
  }
  if (steps_ == 1)
    return ys[0];
  AttrDict axis0 = {{"axis", "0"}};
  return op("concatenate", axis0, ys, dn + "_Y");
}

std::vector<NodeEntry> Unroller::run() {
  read();
  makeMasks();
  std::vector<NodeEntry> ys, hs, cs;
  for (int64_t d = 0; d < directions_; ++d) {
    NodeEntry h, c;
    ys.push_back(direction(d, h, c));
    hs.push_back(h);
    cs.push_back(c);
  }
  // Y: (steps, directions, batch, hidden) (batch first: (batch, steps, directions, hidden));
  // Y_h and Y_c: (directions, batch, hidden) (batch first: (batch, directions, hidden)).
  auto joined = [&](std::vector<NodeEntry> &parts, int axis, const std::string &suffix) {
    if (parts.size() == 1)
      return parts[0];
    return op("concatenate", {{"axis", std::to_string(axis)}}, parts, suffix);
  };
  for (size_t d = 0; d < ys.size(); ++d)
    ys[d] = op("expand_dims", {{"axis", "1"}}, {ys[d]},
               ys.size() == 1 && !batchFirst_ ? "" : (d ? "_bw_Y_4d" : "_fw_Y_4d"));
  NodeEntry y = joined(ys, 1, batchFirst_ ? "_Y_time_first" : "");
  NodeEntry yh = joined(hs, 0, "_Y_h"), yc = lstm_ ? joined(cs, 0, "_Y_c") : NodeEntry{};
  if (batchFirst_) {
    y = op("transpose", {{"axes", "(2, 0, 1, 3)"}}, {y}, "");
    yh = op("transpose", {{"axes", "(1, 0, 2)"}}, {yh}, "_Y_h_batch_first");
    if (lstm_)
      yc = op("transpose", {{"axes", "(1, 0, 2)"}}, {yc}, "_Y_c_batch_first");
  }
  std::vector<NodeEntry> out = {y, yh};
  if (lstm_)
    out.push_back(yc);
  return out;
}

Converter recurrent(const CellKind &kind) {
  return [&kind](Importer &im, const onnx::NodeProto &n) { return Unroller(im, n, kind).run(); };
}

} // namespace

ConverterList recurrentConverters() {
  return {{"LSTM", recurrent(kLstm)}, {"GRU", recurrent(kGru)}, {"RNN", recurrent(kRnn)}};
}

} // namespace loupe::frontend
