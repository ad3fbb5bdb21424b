// Losses: the ONNX converters of the loss operators (NegativeLogLikelihoodLoss,
// SoftmaxCrossEntropyLoss).
#include "frontend/onnx/Converters.h"

#include "core/DType.h"
#include "core/Error.h"

#include <optional>
#include <string>
#include <vector>

namespace loupe::frontend {

namespace {

// NegativeLogLikelihoodLoss of `logp` (N, C, d1…) at the classes in `target` (N, d1…), with an
// optional per-class weight and ignore_index, reduced by `reduction` (none, sum, mean: divided
// by the weights applied). As ops: the picked log-probabilities by gather_elements along the
// class axis (an ignored target reads class 0 and gets weight 0), their weights by take.
NodeEntry nllLoss(Importer &im, const onnx::NodeProto &n, NodeEntry logp, NodeEntry target,
                  std::optional<NodeEntry> weight) {
  std::string reduction = im.attrString(n, "reduction", "mean");
  if (reduction != "none" && reduction != "sum" && reduction != "mean")
    fail(im.where(n), ": reduction '", reduction, "' is not none, sum or mean");
  std::optional<NodeEntry> kept; // target != ignore_index
  if (const auto *ii = im.attr(n, "ignore_index")) {
    Tensor t({1}, kInt64);
    t.data[0] = static_cast<double>(ii->i());
    kept = im.op(n, "broadcast_not_equal", {},
                 {target, im.constantParam(n, "_ignore_index", std::move(t))}, "_kept");
    target = im.op(n, "where", {}, {*kept, target, im.op(n, "zeros_like", {}, {target}, "_zero")},
                   "_target");
  }
  NodeEntry at = im.op(n, "expand_dims", {{"axis", "1"}}, {target}, "_class");
  NodeEntry picked =
      im.op(n, "gather_elements", {{"axis", "1"}, {"mode", "clip"}}, {logp, at}, "_gathered");
  picked = im.op(n, "squeeze", {{"axis", "(1,)"}}, {picked}, "_picked");
  std::optional<NodeEntry> w;
  if (weight)
    w = im.op(n, "take", {{"axis", "0"}, {"mode", "clip"}}, {*weight, target}, "_weight");
  if (kept) {
    NodeEntry one = w ? *w : im.op(n, "ones_like", {}, {picked}, "_one");
    w = im.op(n, "where", {}, {*kept, one, im.op(n, "zeros_like", {}, {one}, "_none")}, "_applied");
  }
  NodeEntry loss = w ? im.op(n, "elemwise_mul", {}, {picked, *w}, "_weighted") : picked;
  if (reduction == "none")
    return im.op(n, "negative", {}, {loss});
  loss = im.op(n, "negative", {}, {loss}, "_loss");
  if (reduction == "sum")
    return im.op(n, "sum", {}, {loss});
  if (!w)
    return im.op(n, "mean", {}, {loss});
  return im.op(n, "elemwise_div", {},
               {im.op(n, "sum", {}, {loss}, "_sum"), im.op(n, "sum", {}, {*w}, "_weights")});
}

// NegativeLogLikelihoodLoss of log-probabilities, and SoftmaxCrossEntropyLoss (`logits`) of
// scores: log_softmax over the class axis first, the log-probabilities its second output.
Converter nllLossOf(bool logits) {
  return [logits](Importer &im, const onnx::NodeProto &n) {
    im.only(n, {"reduction", "ignore_index"});
    std::optional<NodeEntry> weight;
    if (im.hasInput(n, 2))
      weight = im.input(n, 2);
    if (!logits)
      return std::vector<NodeEntry>{nllLoss(im, n, im.input(n, 0), im.input(n, 1), weight)};
    NodeEntry logp = im.op(n, "log_softmax", {{"axis", "1"}}, {im.input(n, 0)}, "_log_prob");
    return std::vector<NodeEntry>{nllLoss(im, n, logp, im.input(n, 1), weight), logp};
  };
}

} // namespace

ConverterList lossesConverters() {
  return {
      {"NegativeLogLikelihoodLoss", nllLossOf(false)},
      {"SoftmaxCrossEntropyLoss", nllLossOf(true)},
  };
}

} // namespace loupe::frontend
