// Recurrent: an LSTM language model (PyTorch's word_language_model example) and a bidirectional
// GRU tagger — recurrent cells unrolled over time into dense, split and elementwise ops, with
// PyTorch's gate orders and (dots as underscores) parameter names.
#include "repl/models/Zoo.h"

#include "core/DType.h"
#include "core/Error.h"

namespace loupe::models {

namespace {

std::string str(int64_t v) { return std::to_string(v); }

std::string tuple(const Shape &s) { return shapeToTuple(s); }

/// One recurrent layer's parameters, as PyTorch names them (weight_ih_l0, bias_hh_l0_reverse).
struct LayerWeights {
  std::string wih, whh, bih, bhh;
};

// The variables of a layer of `rows` gate rows (gates × hidden) over inputs of width `in`:
// PREFIX + weight_ih + SUFFIX and the rest.
LayerWeights layerWeights(NetWriter &w, const Options &o, const std::string &prefix,
                          const std::string &suffix, int64_t rows, int64_t in, int64_t hidden) {
  return {w.variable(prefix + "weight_ih" + suffix, {rows, in}, o.dtype),
          w.variable(prefix + "weight_hh" + suffix, {rows, hidden}, o.dtype),
          w.variable(prefix + "bias_ih" + suffix, {rows}, o.dtype),
          w.variable(prefix + "bias_hh" + suffix, {rows}, o.dtype)};
}

// A step's input-side products of every time step at once: (T, B, in) by W_ih (gates, in) plus
// b_ih, split into T parts of (1, B, gates) (one when T is 1).
std::vector<std::string> inputProducts(NetWriter &w, const std::string &x, const std::string &wih,
                                       const std::string &bih, int64_t units, int64_t steps,
                                       const std::string &name) {
  std::string xw = w.let("dense(" + x + ", " + wih + ", " + bih + ", units=" + str(units) +
                         ", name=\"" + name + "\")");
  if (steps == 1)
    return {xw};
  std::string parts = w.let("split(" + xw + ", indices_or_sections=" + str(steps) +
                            ", axis=0, name=\"" + name + "_by_step\")");
  std::vector<std::string> out;
  for (int64_t t = 0; t < steps; ++t)
    out.push_back(parts + "[" + str(t) + "]");
  return out;
}

/// A step's gates before their activations: each gate's input-side and hidden-side parts.
struct Gates {
  std::vector<std::string> input, hidden;
};

// A step's hidden-side product and its input-side one, each split into the cell's gates.
Gates gates(NetWriter &w, const std::string &xw, const std::string &h, const std::string &whh,
            const std::string &bhh, int64_t hidden, int64_t count, const std::string &at) {
  std::string hw = w.let("dense(" + h + ", " + whh + ", " + bhh + ", units=" + str(count * hidden) +
                         ", name=\"" + at + "_hidden\")");
  std::string hs = w.let("split(" + hw + ", indices_or_sections=" + str(count) +
                         ", axis=2, name=\"" + at + "_hidden_gates\")");
  std::string xs = w.let("split(" + xw + ", indices_or_sections=" + str(count) +
                         ", axis=2, name=\"" + at + "_input_gates\")");
  Gates g;
  for (int64_t k = 0; k < count; ++k) {
    g.input.push_back(xs + "[" + str(k) + "]");
    g.hidden.push_back(hs + "[" + str(k) + "]");
  }
  return g;
}

// A call of two operands (`args`: "a, b") named `name`; one operand takes the zoo's unary().
std::string call(const char *op, const std::string &args, const std::string &name) {
  return std::string(op) + "(" + args + ", name=\"" + name + "\")";
}

/// A network's token ids embedded, and the zero state its recurrent cells start from.
struct Embedded {
  std::string tokens, zero;
};

// Token ids `data` (int64; (steps, batch) when `timeFirst`, else (batch, steps), steps the
// sample's one value) looked up in `table` (vocab, width), and a zero (1, batch, hidden) state
// named `zeroName`.
Embedded embed(NetWriter &w, const Options &o, const char *network, bool timeFirst,
               const std::string &table, int64_t vocab, int64_t width, int64_t hidden,
               const std::string &zeroName) {
  int64_t steps = o.sample[0];
  if (steps < 1 || steps > 512)
    fail(network, " takes 1 to 512 time steps, got ", steps);
  std::string data =
      w.variable("data", timeFirst ? Shape{steps, o.batch} : Shape{o.batch, steps}, kInt64);
  std::string weight = w.variable(table + "_weight", {vocab, width}, o.dtype);
  Embedded e;
  e.tokens = w.let("take(" + weight + ", " + data + ", axis=0, name=\"" + table + "\")");
  e.zero = w.let("zeros(shape=" + tuple({1, o.batch, hidden}) + ", dtype=\"" +
                 std::string(dtypeName(o.dtype)) + "\", name=\"" + zeroName + "\")");
  return e;
}

// word_language_model's RNNModel with LSTM cells: embedding (encoder), two LSTM layers over
// (time, batch), decoder to the vocabulary, log_softmax. PyTorch's LSTM gates are i, f, g, o:
// c' = σ(f) c + σ(i) tanh(g), h' = σ(o) tanh(c'); both states start at zero.
std::string lstmLm(const Options &o) {
  constexpr int64_t kVocab = 10000, kEmbed = 200, kHidden = 200, kLayers = 2;
  NetWriter w;
  int64_t steps = o.sample[0];
  Embedded in = embed(w, o, "lstm-lm", true, "encoder", kVocab, kEmbed, kHidden, "rnn_zero_state");
  std::string x = in.tokens, zero = in.zero;
  for (int64_t l = 0; l < kLayers; ++l) {
    std::string p = "rnn_", s = "_l" + str(l);
    int64_t in = l == 0 ? kEmbed : kHidden;
    LayerWeights lw = layerWeights(w, o, "rnn_", s, 4 * kHidden, in, kHidden);
    std::vector<std::string> xs =
        inputProducts(w, x, lw.wih, lw.bih, 4 * kHidden, steps, "rnn" + s + "_input");
    std::string h = zero, c = zero, outs;
    for (int64_t t = 0; t < steps; ++t) {
      std::string at = "rnn" + s + "_t" + str(t);
      Gates g = gates(w, xs[t], h, lw.whh, lw.bhh, kHidden, 4, at);
      auto gate = [&](int k, const char *act, const char *what) {
        std::string sum =
            w.let(call("elemwise_add", g.input[k] + ", " + g.hidden[k], at + "_" + what + "_in"));
        return w.let(unary(act, sum, at + "_" + what));
      };
      std::string i = gate(0, "sigmoid", "i"), f = gate(1, "sigmoid", "f"),
                  gg = gate(2, "tanh", "g"), og = gate(3, "sigmoid", "o");
      std::string kept = w.let(call("elemwise_mul", f + ", " + c, at + "_f_c"));
      std::string added = w.let(call("elemwise_mul", i + ", " + gg, at + "_i_g"));
      c = w.let(call("elemwise_add", kept + ", " + added, at + "_c"));
      h = w.let("elemwise_mul(" + og + ", " + unary("tanh", c, at + "_tanh_c") + ", name=\"" + at +
                "_h\")");
      outs += (t ? ", " : "") + h;
    }
    x = steps == 1 ? h : w.let("concatenate(" + outs + ", axis=0, name=\"rnn" + s + "_output\")");
  }
  std::string logits = w.let(dense(x, "decoder", kVocab));
  return w.finish(w.let("log_softmax(" + logits + ", axis=-1, name=\"log_softmax\")"));
}

// A part-of-speech tagger: embedding, one bidirectional GRU layer over the sentence (batch
// first), a tag per token from both directions' states, softmax over the 17 universal tags.
// PyTorch's GRU gates are r, z, n: n = tanh(x_n + r (W_hn h + b_hn)), h' = n + z (h - n).
std::string gruTagger(const Options &o) {
  constexpr int64_t kVocab = 20000, kEmbed = 100, kHidden = 128, kTags = 17;
  NetWriter w;
  int64_t steps = o.sample[0];
  Embedded in =
      embed(w, o, "gru-tagger", false, "embedding", kVocab, kEmbed, kHidden, "gru_zero_state");
  std::string x = w.let("transpose(" + in.tokens + ", axes=(1, 0, 2), name=\"time_first\")");
  std::string zero = in.zero;
  std::vector<std::vector<std::string>> states(2, std::vector<std::string>(steps));
  for (int d = 0; d < 2; ++d) {
    std::string s = d ? "_l0_reverse" : "_l0";
    LayerWeights lw = layerWeights(w, o, "gru_", s, 3 * kHidden, kEmbed, kHidden);
    std::vector<std::string> xs =
        inputProducts(w, x, lw.wih, lw.bih, 3 * kHidden, steps, "gru" + s + "_input");
    std::string h = zero;
    for (int64_t k = 0; k < steps; ++k) {
      int64_t t = d ? steps - 1 - k : k;
      std::string at = "gru" + s + "_t" + str(t);
      Gates g = gates(w, xs[t], h, lw.whh, lw.bhh, kHidden, 3, at);
      auto in = [&](int k, const std::string &hidden, const char *what) {
        return w.let(call("elemwise_add", g.input[k] + ", " + hidden, at + "_" + what + "_in"));
      };
      std::string r = w.let(unary("sigmoid", in(0, g.hidden[0], "r"), at + "_r"));
      std::string z = w.let(unary("sigmoid", in(1, g.hidden[1], "z"), at + "_z"));
      std::string rh = w.let(call("elemwise_mul", r + ", " + g.hidden[2], at + "_r_hidden"));
      std::string n = w.let(unary("tanh", in(2, rh, "n"), at + "_n"));
      std::string diff = w.let(call("elemwise_sub", h + ", " + n, at + "_h_n"));
      std::string kept = w.let(call("elemwise_mul", z + ", " + diff, at + "_z_h_n"));
      h = w.let(call("elemwise_add", n + ", " + kept, at + "_h"));
      states[d][t] = h;
    }
  }
  std::string outs;
  for (int64_t t = 0; t < steps; ++t)
    outs += (t ? ", " : "") + w.let("concatenate(" + states[0][t] + ", " + states[1][t] +
                                    ", axis=2, name=\"gru_t" + str(t) + "_both\")");
  x = steps == 1 ? outs : w.let("concatenate(" + outs + ", axis=0, name=\"gru_output\")");
  x = w.let("transpose(" + x + ", axes=(1, 0, 2), name=\"batch_first\")");
  std::string logits = w.let(dense(x, "hidden2tag", kTags));
  return w.finish(w.let(unary("softmax", logits, "softmax")));
}

} // namespace

void addRecurrent(std::vector<Network> &z) {
  z.push_back({"lstm-lm",
               "LSTM language model (2 layers of 200, 10000 words, 35 steps; PyTorch's "
               "word_language_model; token ids (time, batch) in, log-probabilities out)",
               {35},
               0,
               lstmLm});
  z.push_back({"gru-tagger",
               "bidirectional GRU tagger (128 per direction, 20000 words, 17 tags, 32 tokens; "
               "token ids (batch, time) in, tag probabilities out)",
               {32},
               0,
               gruTagger});
}

} // namespace loupe::models
