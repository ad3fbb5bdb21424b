// Image: the ONNX converters of image operators — Resize (and Upsample), DepthToSpace and
// SpaceToDepth.
#include "frontend/onnx/Converters.h"

#include "core/Error.h"
#include "core/Memory.h"
#include "core/Shape.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <vector>

namespace loupe::frontend {

namespace {

// Resize (and Upsample, its older form) of the last two axes of 4-D data by constant scales
// or sizes: resize2d with ONNX's coordinate and rounding modes. Opset 10's Resize and Upsample
// map coordinates asymmetrically and round nearest neighbours down.
std::vector<NodeEntry> resize(Importer &im, const onnx::NodeProto &n) {
  bool legacy = n.op_type() == "Upsample" || im.opset() < 11;
  im.only(n, {"mode", "coordinate_transformation_mode", "nearest_mode", "cubic_coeff_a",
              "exclude_outside", "extrapolation_value", "scales", "antialias", "axes",
              "keep_aspect_ratio_policy"});
  if (im.attrInt(n, "antialias", 0) != 0)
    fail(im.where(n), ": antialias is not supported");
  std::string mode = im.attrString(n, "mode", "nearest");
  if (mode != "nearest" && mode != "linear" && mode != "cubic")
    fail(im.where(n), ": mode ", mode, " is not one of nearest, linear, cubic");
  std::string coords =
      legacy ? "asymmetric" : im.attrString(n, "coordinate_transformation_mode", "half_pixel");
  if (coords == "tf_crop_and_resize" || coords == "half_pixel_symmetric")
    fail(im.where(n), ": coordinate_transformation_mode ", coords, " is not supported");
  if (mode != "nearest" && coords == "tf_half_pixel_for_nn")
    fail(im.where(n), ": tf_half_pixel_for_nn is for nearest neighbours only");
  std::string rounding = legacy ? "floor" : im.attrString(n, "nearest_mode", "round_prefer_floor");
  NodeEntry x = im.input(n, 0);
  std::optional<Shape> shape = im.inferredShape(x);
  if (!shape || shape->size() != 4)
    fail(im.where(n), ": the data's shape must be known and 4-D (N, C, H, W)");
  // The scales: an attribute (Upsample before opset 9), input 1 (opset 9-10) or input 2;
  // else the sizes, input 3.
  std::vector<double> scales;
  if (const auto *a = im.attr(n, "scales"))
    scales.assign(a->floats().begin(), a->floats().end());
  int scalesAt = legacy ? 1 : 2;
  if (scales.empty() && im.hasInput(n, scalesAt)) {
    const Tensor *t = im.constant(n, scalesAt);
    if (!t)
      fail(im.where(n), ": scales must be a constant (an initializer or Constant)");
    scales = t->data;
  }
  std::vector<int64_t> sizes;
  if (scales.empty()) {
    if (legacy || !im.hasInput(n, 3))
      fail(im.where(n), ": needs scales or sizes");
    sizes = im.constInts(n, 3, "sizes");
  }
  const Shape &d = *shape;
  // Opset 18: scales or sizes for the listed axes only; the others keep their size.
  std::vector<int64_t> axes = im.attrInts(n, "axes");
  bool partial = !axes.empty();
  if (!partial)
    axes = {0, 1, 2, 3};
  size_t given = scales.empty() ? sizes.size() : scales.size();
  if (given != axes.size())
    fail(im.where(n), ": ", scales.empty() ? "sizes" : "scales", " must have ", axes.size(),
         " values (", partial ? "one per axis in axes" : "N, C, H, W", "), got ", given);
  std::vector<double> fullScales(4, 1.0);
  std::vector<int64_t> fullSizes(d.begin(), d.end());
  std::vector<int64_t> listed = distinctAxes(im, n, axes, 4);
  for (size_t i = 0; i < listed.size(); ++i) {
    if (scales.empty())
      fullSizes[static_cast<size_t>(listed[i])] = sizes[i];
    else
      fullScales[static_cast<size_t>(listed[i])] = scales[i];
  }
  // keep_aspect_ratio_policy (opset 18) with sizes: one scale for the listed axes, the
  // largest (not_smaller) or smallest (not_larger) of their sizes' ratios, each size then
  // rounded from it; the coordinates use that scale.
  std::string policy = im.attrString(n, "keep_aspect_ratio_policy", "stretch");
  if (policy != "stretch" && policy != "not_larger" && policy != "not_smaller")
    fail(im.where(n), ": keep_aspect_ratio_policy ", policy,
         " is not one of stretch, not_larger, not_smaller");
  std::optional<double> kept;
  if (!sizes.empty() && policy != "stretch") {
    for (int64_t a : listed) {
      double r = static_cast<double>(fullSizes[static_cast<size_t>(a)]) /
                 static_cast<double>(d[static_cast<size_t>(a)]);
      kept = !kept ? r : policy == "not_larger" ? std::min(*kept, r) : std::max(*kept, r);
    }
    for (int64_t a : listed)
      fullSizes[static_cast<size_t>(a)] = static_cast<int64_t>(
          std::floor(*kept * static_cast<double>(d[static_cast<size_t>(a)]) + 0.5));
  }
  if (scales.empty())
    sizes = fullSizes;
  else
    scales = fullScales;
  for (double v : scales)
    if (!(v > 0 && v <= 1e6))
      fail(im.where(n), ": scales must be positive and at most 1e6");
  auto sized = [&](size_t k) {
    if (!sizes.empty())
      return sizes[k];
    double out = std::floor(static_cast<double>(d[k]) * scales[k]);
    if (out >= static_cast<double>(kMaxElements))
      fail(im.where(n), ": the output size along axis ", k, " would be ", out);
    return static_cast<int64_t>(out);
  };
  for (size_t k : {0, 1})
    if (sized(k) != d[k])
      fail(im.where(n), ": only H and W can be resized (axes 2 and 3)");
  int64_t oh = sized(2), ow = sized(3);
  if (oh <= 0 || ow <= 0)
    fail(im.where(n), ": the output size (", oh, ", ", ow, ") must be positive");
  auto scaleText = [&](size_t k) {
    return floatText(sizes.empty() ? scales[k]
                     : kept && std::count(listed.begin(), listed.end(), static_cast<int64_t>(k))
                         ? *kept
                         : 0.0);
  };
  AttrDict cubic;
  if (mode == "cubic")
    cubic = {{"cubic_alpha", floatText(im.attrFloat(n, "cubic_coeff_a", -0.75))},
             {"cubic_exclude", std::to_string(im.attrInt(n, "exclude_outside", 0) ? 1 : 0)}};
  AttrDict a = {{"size", tupleText({oh, ow})},
                {"method", mode == "nearest" ? "nearest_neighbor" : mode},
                {"coordinate_transformation_mode", coords},
                {"rounding_method", rounding},
                {"scale_h", scaleText(2)},
                {"scale_w", scaleText(3)}};
  a.insert(a.end(), cubic.begin(), cubic.end());
  return {im.op(n, "resize2d", a, {x})};
}

// DepthToSpace and SpaceToDepth: a reshape to 6-D, a transpose that moves the block between
// the channels and the spatial axes, and a reshape back (ONNX's own definition).
Converter depthSpace(bool toSpace) {
  return [toSpace](Importer &im, const onnx::NodeProto &n) {
    im.only(n, {"blocksize", "mode"});
    Shape d = shapeNow(im, n, 0, 4);
    if (d.size() != 4)
      fail(im.where(n), ": the data must be 4-D (N, C, H, W)");
    int64_t b = im.attrInt(n, "blocksize", 0), N = d[0], C = d[1], H = d[2], W = d[3];
    if (b <= 0)
      fail(im.where(n), ": blocksize must be positive");
    // The products below stay within int64: b*b divides C (toSpace) or b divides H and W, and
    // the result's element count is the input's.
    if (toSpace ? b > C / b : b > H || b > W)
      fail(im.where(n), ": blocksize ", b, " is too large for ", shapeToList(d));
    Shape first, last;
    std::vector<int64_t> perm;
    if (toSpace) {
      if (C % (b * b) != 0)
        fail(im.where(n), ": the channels (", C, ") must divide by blocksize² (", b * b, ")");
      bool crd = im.attrString(n, "mode", "DCR") == "CRD";
      first = crd ? Shape{N, C / (b * b), b, b, H, W} : Shape{N, b, b, C / (b * b), H, W};
      perm = crd ? std::vector<int64_t>{0, 1, 4, 2, 5, 3} : std::vector<int64_t>{0, 3, 4, 1, 5, 2};
      last = {N, C / (b * b), H * b, W * b};
    } else {
      if (H % b != 0 || W % b != 0)
        fail(im.where(n), ": H and W (", H, ", ", W, ") must divide by blocksize (", b, ")");
      first = {N, C, H / b, b, W / b, b};
      perm = {0, 3, 5, 1, 2, 4};
      last = {N, C * b * b, H / b, W / b};
    }
    NodeEntry x = im.op(n, "reshape", {{"shape", tupleText(first)}}, {im.input(n, 0)}, "_split");
    x = im.op(n, "transpose", {{"axes", tupleText(perm)}}, {x}, "_move");
    return std::vector<NodeEntry>{im.op(n, "reshape", {{"shape", tupleText(last)}}, {x})};
  };
}

} // namespace

ConverterList imageConverters() {
  return {
      {"DepthToSpace", depthSpace(true)},
      {"SpaceToDepth", depthSpace(false)},
      {"Resize", resize},
      {"Upsample", resize},
  };
}

} // namespace loupe::frontend
