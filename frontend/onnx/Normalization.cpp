// Normalization: the ONNX converters of the normalisations — batch (inference and training
// mode), instance, group, layer and mean-variance.
#include "frontend/onnx/Converters.h"

#include "core/Error.h"

#include <string>
#include <vector>

namespace loupe::frontend {

namespace {

// x's mean over the axes `over` names (with keepdims), its deviation from it and the mean
// squared deviation, the biased variance: the statistics of the normalisations composed of ops
// here.
struct Moments {
  NodeEntry mean, dev, var;
};
Moments momentsOf(Importer &im, const onnx::NodeProto &n, const NodeEntry &x,
                  const AttrDict &over) {
  NodeEntry mean = im.op(n, "mean", over, {x}, "_mean");
  NodeEntry dev = im.op(n, "broadcast_sub", {}, {x, mean}, "_dev");
  return {mean, dev,
          im.op(n, "mean", over, {im.op(n, "elemwise_mul", {}, {dev, dev}, "_sq")}, "_var")};
}

// InstanceNormalization: instance_norm, each image's channel normalised by its own mean and
// variance, then the per-channel scale and bias.
std::vector<NodeEntry> instanceNorm(Importer &im, const onnx::NodeProto &n) {
  im.only(n, {"epsilon"});
  shapeNow(im, n, 0, 3);
  return {im.op(n, "instance_norm", {{"epsilon", floatText(im.attrFloat(n, "epsilon", 1e-5))}},
                {im.input(n, 0), im.input(n, 1), im.input(n, 2)})};
}

// BatchNormalization's training_mode (opset 14): x normalised by the batch's own mean and
// (biased) variance over every axis but the channels, as ONNX's reference computes them; the
// second and third outputs are the running mean and variance updated with momentum.
std::vector<NodeEntry> batchNormTraining(Importer &im, const onnx::NodeProto &n) {
  Shape d = shapeNow(im, n, 0, 2);
  double momentum = im.attrFloat(n, "momentum", 0.9);
  auto [mean, dev, var] = momentsOf(im, n, im.input(n, 0),
                                    {{"axis", "(1,)"}, {"exclude", "True"}, {"keepdims", "True"}});
  NodeEntry sd =
      im.op(n, "sqrt", {},
            {im.op(n, "__add_scalar__", {{"scalar", floatText(im.attrFloat(n, "epsilon", 1e-5))}},
                   {var}, "_var_eps")},
            "_std");
  NodeEntry y = im.op(n, "broadcast_div", {}, {dev, sd}, "_normalized");
  y = im.op(n, "broadcast_mul", {}, {y, alongChannels(im, n, im.input(n, 1), d.size(), "_scale")},
            "_scaled");
  y = im.op(n, "broadcast_add", {}, {y, alongChannels(im, n, im.input(n, 2), d.size(), "_bias")});
  std::vector<NodeEntry> outs = {y};
  // running = running * momentum + batch * (1 - momentum), per channel: the batch's statistics
  // are the ones y used, (1, C, 1, …) read as (C).
  for (int k : {1, 2}) {
    std::string what = k == 1 ? "_running_mean" : "_running_var";
    NodeEntry batch = im.op(n, "reshape", {{"shape", tupleText({d[1]})}}, {k == 1 ? mean : var},
                            k == 1 ? "_batch_mean" : "_batch_var");
    NodeEntry old = im.op(n, "__mul_scalar__", {{"scalar", floatText(momentum)}},
                          {im.input(n, 2 + k)}, what + "_kept");
    NodeEntry add =
        im.op(n, "__mul_scalar__", {{"scalar", floatText(1 - momentum)}}, {batch}, what + "_added");
    outs.push_back(im.op(n, "elemwise_add", {}, {old, add}, what));
  }
  return outs;
}

// MeanVarianceNormalization: (x - mean) / (std + 1e-9) over `axes` (default N, H and W), as
// ONNX's function body defines it (the epsilon added to the deviation, not the variance); the
// variance as the mean squared deviation, which equals its E[x^2] - E[x]^2.
std::vector<NodeEntry> meanVarianceNorm(Importer &im, const onnx::NodeProto &n) {
  im.only(n, {"axes"});
  std::vector<int64_t> axes = im.attrInts(n, "axes");
  if (!im.attr(n, "axes"))
    axes = {0, 2, 3};
  auto [mean, dev, var] =
      momentsOf(im, n, im.input(n, 0), {{"axis", tupleText(axes)}, {"keepdims", "True"}});
  NodeEntry sd = im.op(n, "__add_scalar__", {{"scalar", "1e-09"}},
                       {im.op(n, "sqrt", {}, {var}, "_std")}, "_std_eps");
  return {im.op(n, "broadcast_div", {}, {dev, sd})};
}

// GroupNormalization: group_norm over num_groups groups of channels. Opset 18 gave scale and
// bias one value per group (opset 21 one per channel): each is repeated for its group's
// channels, (G) -> (G, 1) -> (G, C/G) -> (C).
std::vector<NodeEntry> groupNorm(Importer &im, const onnx::NodeProto &n) {
  im.only(n, {"epsilon", "num_groups", "stash_type"});
  if (im.attrInt(n, "stash_type", 1) != 1)
    fail(im.where(n), ": stash_type ", im.attrInt(n, "stash_type", 1),
         " is not supported (1, statistics in float32, is)");
  Shape d = shapeNow(im, n, 0, 2);
  int64_t groups = im.attrInt(n, "num_groups", 0), channels = d[1];
  if (groups <= 0 || channels % groups != 0)
    fail(im.where(n), ": num_groups ", groups, " does not divide the ", channels, " channels");
  NodeEntry scale = im.input(n, 1), bias = im.input(n, 2);
  if (im.opset() < 21) {
    Shape perChannel{groups, channels / groups}, flat{channels};
    auto spread = [&](const NodeEntry &v, const char *suffix) {
      NodeEntry col = im.op(n, "expand_dims", {{"axis", "1"}}, {v}, std::string(suffix) + "_col");
      NodeEntry wide = im.op(n, "broadcast_to", {{"shape", tupleText(perChannel)}}, {col},
                             std::string(suffix) + "_wide");
      return im.op(n, "reshape", {{"shape", tupleText(flat)}}, {wide}, suffix);
    };
    scale = spread(scale, "_scale");
    bias = spread(bias, "_bias");
  }
  return {im.op(n, "group_norm",
                {{"num_groups", std::to_string(groups)},
                 {"epsilon", floatText(im.attrFloat(n, "epsilon", 1e-5))}},
                {im.input(n, 0), scale, bias})};
}

std::vector<NodeEntry> layerNormalization(Importer &im, const onnx::NodeProto &n) {
  im.only(n, {"axis", "epsilon", "stash_type"});
  if (im.attrInt(n, "stash_type", 1) != 1)
    fail(im.where(n), ": stash_type ", im.attrInt(n, "stash_type", 1),
         " is not supported (statistics are computed in the input's type)");
  NodeEntry scale = im.input(n, 1);
  // Without B, a zero bias of the scale's shape.
  NodeEntry bias =
      im.hasInput(n, 2) ? im.input(n, 2) : im.op(n, "zeros_like", {}, {scale}, "_zero_bias");
  AttrDict a = {{"axis", std::to_string(im.attrInt(n, "axis", -1))},
                {"epsilon", floatText(im.attrFloat(n, "epsilon", 1e-5))}};
  return im.opOutputs(n, "layer_norm", a, {im.input(n, 0), scale, bias});
}

std::vector<NodeEntry> batchNormalization(Importer &im, const onnx::NodeProto &n) {
  im.only(n, {"epsilon", "momentum", "spatial", "is_test", "consumed_inputs", "training_mode"});
  if (im.attrInt(n, "training_mode", 0))
    return batchNormTraining(im, n);
  // Opset 1-6's is_test: 1 is inference (what this conversion is), 0 training.
  if (n.output_size() > 1 || im.attrInt(n, "is_test", 1) == 0)
    fail(im.where(n), ": training-mode outputs are not supported");
  return std::vector<NodeEntry>{
      im.op(n, "batch_norm", {{"epsilon", floatText(im.attrFloat(n, "epsilon", 1e-5))}},
            {im.input(n, 0), im.input(n, 1), im.input(n, 2), im.input(n, 3), im.input(n, 4)})};
}

} // namespace

ConverterList normalizationConverters() {
  return {
      {"InstanceNormalization", instanceNorm},         {"GroupNormalization", groupNorm},
      {"MeanVarianceNormalization", meanVarianceNorm}, {"LayerNormalization", layerNormalization},
      {"BatchNormalization", batchNormalization},
  };
}

} // namespace loupe::frontend
