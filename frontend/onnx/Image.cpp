// Image: the ONNX converters of image operators — Resize (and Upsample), GridSample, RoiAlign,
// DepthToSpace and SpaceToDepth.
#include "frontend/onnx/Converters.h"

#include "core/DType.h"
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
      im.notConstant(n, scalesAt, "scales");
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

// The nodes of a sampling op built from elementwise ops (GridSample, RoiAlign), each named by
// the ONNX node and a counter.
struct Sampling {
  Sampling(Importer &importer, const onnx::NodeProto &node, std::string prefix)
      : im(importer), n(node), prefix(std::move(prefix)) {}
  NodeEntry op(const char *name, AttrDict attrs, std::vector<NodeEntry> ins) {
    return im.op(n, name, std::move(attrs), std::move(ins), prefix + std::to_string(made++));
  }
  NodeEntry withScalar(const char *name, double v, const NodeEntry &e) {
    return op(name, {{"scalar", floatText(v)}}, {e});
  }
  NodeEntry mul(const NodeEntry &a, const NodeEntry &b) { return op("broadcast_mul", {}, {a, b}); }
  NodeEntry add(const NodeEntry &a, const NodeEntry &b) { return op("broadcast_add", {}, {a, b}); }
  NodeEntry sub(const NodeEntry &a, const NodeEntry &b) { return op("broadcast_sub", {}, {a, b}); }
  /// Clamped into [0, size - 1], a pixel coordinate inside an axis of `size`.
  NodeEntry clamp(const NodeEntry &e, int64_t size) {
    return op("clip", {{"a_min", "0"}, {"a_max", floatText(static_cast<double>(size - 1))}}, {e});
  }
  /// 1 where `e` is inside [lo, hi], else 0, in dtype `real`.
  NodeEntry inside(const NodeEntry &e, double lo, double hi, const std::string &real) {
    NodeEntry c = op("clip", {{"a_min", floatText(lo)}, {"a_max", floatText(hi)}}, {e});
    return op("cast", {{"dtype", real}}, {op("broadcast_equal", {}, {c, e})});
  }
  Importer &im;
  const onnx::NodeProto &n;
  std::string prefix;
  int made = 0;
};

// GridSample (opset 16) of 4-D data: X (N, C, H, W) sampled at the points of grid (N, Ho, Wo,
// 2), x (along W) then y in [-1, 1], as PyTorch's grid_sample does (it wrote the tests'
// outputs): the points unnormalised (align_corners: -1 and 1 are the corner pixels' centres,
// else their outer edges), moved in by the padding mode (border: clamped; reflection: mirrored
// at the edges, then clamped) — for bicubic each tap is moved instead — and read as the nearest
// pixel (halves to even), the bilinear blend of four, or the bicubic (A = -0.75) blend of
// sixteen; a tap outside the image reads 0. Built from elementwise ops and a gather_nd of X with
// its channels last, one per tap.
std::vector<NodeEntry> gridSample(Importer &im, const onnx::NodeProto &n) {
  im.only(n, {"align_corners", "mode", "padding_mode"});
  std::string mode = im.attrString(n, "mode", "bilinear");
  std::string padding = im.attrString(n, "padding_mode", "zeros");
  bool align = im.attrInt(n, "align_corners", 0) != 0;
  if (mode != "bilinear" && mode != "nearest" && mode != "bicubic")
    fail(im.where(n), ": mode ", mode, " is not one of bilinear, nearest, bicubic");
  if (padding != "zeros" && padding != "border" && padding != "reflection")
    fail(im.where(n), ": padding_mode ", padding, " is not one of zeros, border, reflection");
  NodeEntry x = im.input(n, 0), grid = im.input(n, 1);
  std::optional<Shape> xs = im.inferredShape(x), gs = im.inferredShape(grid);
  if (!xs || xs->size() != 4)
    fail(im.where(n), ": the data's shape must be known and 4-D (N, C, H, W)");
  if (!gs || gs->size() != 4 || (*gs)[3] != 2 || (*gs)[0] != (*xs)[0])
    fail(im.where(n), ": the grid's shape must be known and (N, H_out, W_out, 2), N as the data's");
  const int64_t N = (*xs)[0], H = (*xs)[2], W = (*xs)[3], Ho = (*gs)[1], Wo = (*gs)[2];
  int dt = im.inferredDType(grid);
  if (dt < 0 || dt != im.inferredDType(x))
    fail(im.where(n), ": the data and the grid must have one known float dtype");
  const std::string real(dtypeName(dt)); // the masks' and weights' dtype
  Sampling b(im, n, "_gs");
  // The grid's x and y planes (N, Ho, Wo), unnormalised to pixel coordinates.
  auto coordinate = [&](int64_t axis, int64_t size) {
    NodeEntry plane =
        b.op("reshape", {{"shape", tupleText({N, Ho, Wo})}},
             {b.op("strided_slice",
                   {{"begin", tupleText({axis})}, {"end", tupleText({axis + 1})}, {"axes", "(3,)"}},
                   {grid})});
    NodeEntry from1 = b.withScalar("__add_scalar__", 1, plane);
    double s = static_cast<double>(size);
    return align
               ? b.withScalar("__mul_scalar__", (s - 1) / 2, from1)
               : b.withScalar("__sub_scalar__", 0.5, b.withScalar("__mul_scalar__", s / 2, from1));
  };
  // PyTorch's reflect_coordinates: mirrored into [low, high] (twice each given), through
  // |c - low| split into whole spans (flips) and the rest; an odd flip counts from the far end.
  auto reflect = [&](const NodeEntry &c, double twiceLow, double twiceHigh) {
    if (twiceLow == twiceHigh)
      return b.op("zeros_like", {}, {c});
    double low = twiceLow / 2, span = (twiceHigh - twiceLow) / 2;
    NodeEntry a = b.op("abs", {}, {b.withScalar("__sub_scalar__", low, c)});
    NodeEntry flips = b.op("floor", {}, {b.withScalar("__div_scalar__", span, a)});
    NodeEntry extra = b.sub(a, b.withScalar("__mul_scalar__", span, flips));
    NodeEntry half = b.op("floor", {}, {b.withScalar("__mul_scalar__", 0.5, flips)});
    NodeEntry odd = b.sub(flips, b.withScalar("__mul_scalar__", 2, half));
    NodeEntry far = b.withScalar("__rsub_scalar__", span, b.withScalar("__mul_scalar__", 2, extra));
    return b.add(b.withScalar("__add_scalar__", low, extra), b.mul(odd, far));
  };
  // The padding mode applied to a coordinate (a point, or a bicubic tap).
  auto pad = [&](const NodeEntry &c, int64_t size) {
    if (padding == "border")
      return b.clamp(c, size);
    if (padding == "reflection") {
      double s = static_cast<double>(size);
      return b.clamp(align ? reflect(c, 0, 2 * (s - 1)) : reflect(c, -1, 2 * s - 1), size);
    }
    return c;
  };
  // X with its channels last, and one tap: the pixel at (yi, xi), integral planes, times
  // `weight` where it is inside the image and 0 elsewhere — (N, Ho, Wo, C).
  NodeEntry channelsLast = b.op("transpose", {{"axes", "(0, 2, 3, 1)"}}, {x});
  auto tap = [&](const NodeEntry &yi, const NodeEntry &xi, const NodeEntry &weight) {
    NodeEntry yc = b.clamp(yi, H), xc = b.clamp(xi, W);
    NodeEntry inside = b.mul(b.inside(yi, 0, static_cast<double>(H - 1), real),
                             b.inside(xi, 0, static_cast<double>(W - 1), real));
    auto index = [&](const NodeEntry &c) {
      return b.op("expand_dims", {{"axis", "3"}}, {b.op("cast", {{"dtype", "int64"}}, {c})});
    };
    NodeEntry at = b.op("concatenate", {{"axis", "3"}}, {index(yc), index(xc)});
    NodeEntry pixels = b.op("gather_nd", {{"batch_dims", "1"}}, {channelsLast, at});
    return b.mul(pixels, b.op("expand_dims", {{"axis", "3"}}, {b.mul(inside, weight)}));
  };
  NodeEntry cx = coordinate(0, W), cy = coordinate(1, H);
  std::optional<NodeEntry> sum;
  auto accumulate = [&](const NodeEntry &t) { sum = sum ? b.add(*sum, t) : t; };
  if (mode == "nearest") {
    accumulate(tap(b.op("round", {}, {pad(cy, H)}), b.op("round", {}, {pad(cx, W)}),
                   b.op("ones_like", {}, {cx})));
  } else if (mode == "bilinear") {
    NodeEntry px = pad(cx, W), py = pad(cy, H);
    NodeEntry x0 = b.op("floor", {}, {px}), y0 = b.op("floor", {}, {py});
    NodeEntry x1 = b.withScalar("__add_scalar__", 1, x0),
              y1 = b.withScalar("__add_scalar__", 1, y0);
    NodeEntry wx1 = b.sub(px, x0), wy1 = b.sub(py, y0);
    NodeEntry wx0 = b.withScalar("__rsub_scalar__", 1, wx1),
              wy0 = b.withScalar("__rsub_scalar__", 1, wy1);
    accumulate(tap(y0, x0, b.mul(wy0, wx0)));
    accumulate(tap(y0, x1, b.mul(wy0, wx1)));
    accumulate(tap(y1, x0, b.mul(wy1, wx0)));
    accumulate(tap(y1, x1, b.mul(wy1, wx1)));
  } else {
    // Bicubic: taps floor(c) - 1 … floor(c) + 2, weighted by the cubic convolution kernel at
    // their distances 1 + t, t, 1 - t, 2 - t (t the fraction), each tap padded on its own.
    const double A = -0.75;
    auto cubic = [&](const NodeEntry &d, double c3, double c2, double c1, double c0) {
      NodeEntry v = b.withScalar("__add_scalar__", c2, b.withScalar("__mul_scalar__", c3, d));
      v = b.withScalar("__add_scalar__", c1, b.mul(v, d));
      return b.withScalar("__add_scalar__", c0, b.mul(v, d));
    };
    auto weights = [&](const NodeEntry &t) {
      return std::vector<NodeEntry>{
          cubic(b.withScalar("__add_scalar__", 1, t), A, -5 * A, 8 * A, -4 * A),
          cubic(t, A + 2, -(A + 3), 0, 1),
          cubic(b.withScalar("__rsub_scalar__", 1, t), A + 2, -(A + 3), 0, 1),
          cubic(b.withScalar("__rsub_scalar__", 2, t), A, -5 * A, 8 * A, -4 * A)};
    };
    NodeEntry x0 = b.op("floor", {}, {cx}), y0 = b.op("floor", {}, {cy});
    std::vector<NodeEntry> wx = weights(b.sub(cx, x0)), wy = weights(b.sub(cy, y0));
    for (int i = 0; i < 4; ++i) {
      NodeEntry yi = pad(b.withScalar("__add_scalar__", i - 1, y0), H);
      for (int j = 0; j < 4; ++j)
        accumulate(tap(yi, pad(b.withScalar("__add_scalar__", j - 1, x0), W), b.mul(wy[i], wx[j])));
    }
  }
  return {im.op(n, "transpose", {{"axes", "(0, 3, 1, 2)"}}, {*sum})};
}

// RoiAlign (opset 10, 16) of 4-D data: per region of interest (rois' x1, y1, x2, y2, scaled by
// spatial_scale; with half_pixel shifted by half a pixel, else at least one pixel wide) and
// image (batch_indices), an output_height × output_width grid of bins, each the average (or,
// as ONNX Runtime does, the maximum) of sampling_ratio² bilinear samples at the bin's sub-cell
// centres: a sample more than a pixel outside the image counts 0, and one nearer is taken at
// the border. The regions are data, so the samples' places are computed in the graph and read
// by a gather_nd per corner; sampling_ratio must be given (0 sizes it by each region).
std::vector<NodeEntry> roiAlign(Importer &im, const onnx::NodeProto &n) {
  im.only(n, {"coordinate_transformation_mode", "mode", "output_height", "output_width",
              "sampling_ratio", "spatial_scale"});
  std::string coords = im.attrString(n, "coordinate_transformation_mode",
                                     im.opset() >= 16 ? "half_pixel" : "output_half_pixel");
  std::string mode = im.attrString(n, "mode", "avg");
  if (coords != "half_pixel" && coords != "output_half_pixel")
    fail(im.where(n), ": coordinate_transformation_mode ", coords,
         " is not one of half_pixel, output_half_pixel");
  if (mode != "avg" && mode != "max")
    fail(im.where(n), ": mode ", mode, " is not one of avg, max");
  int64_t oh = im.attrInt(n, "output_height", 1), ow = im.attrInt(n, "output_width", 1),
          grid = im.attrInt(n, "sampling_ratio", 0);
  if (oh <= 0 || ow <= 0)
    fail(im.where(n), ": output_height and output_width must be positive");
  if (grid <= 0)
    fail(im.where(n), ": sampling_ratio ", grid,
         " (samples sized by each region, which is data) is not supported; give a positive one");
  double scale = im.attrFloat(n, "spatial_scale", 1);
  NodeEntry x = im.input(n, 0), rois = im.input(n, 1);
  std::optional<Shape> xs = im.inferredShape(x), rs = im.inferredShape(rois);
  if (!xs || xs->size() != 4)
    fail(im.where(n), ": the data's shape must be known and 4-D (N, C, H, W)");
  if (!rs || rs->size() != 2 || (*rs)[1] != 4)
    fail(im.where(n), ": the rois' shape must be known and (num_rois, 4)");
  int dt = im.inferredDType(x);
  if (dt < 0 || dt != im.inferredDType(rois))
    fail(im.where(n), ": the data and the rois must have one known float dtype");
  const std::string real(dtypeName(dt));
  const int64_t R = (*rs)[0], C = (*xs)[1], H = (*xs)[2], W = (*xs)[3];
  Sampling b(im, n, "_ra");
  double offset = coords == "half_pixel" ? 0.5 : 0;
  // One axis: the samples' coordinates (R, out * grid) from columns lo and hi of rois, with
  // whether each is near enough the image and its two neighbouring pixels and weights.
  struct Axis {
    NodeEntry valid, low, high, wLow, wHigh;
  };
  auto axis = [&](int64_t lo, int64_t hi, int64_t out, int64_t size) {
    auto column = [&](int64_t k) {
      return b.withScalar(
          "__sub_scalar__", offset,
          b.withScalar(
              "__mul_scalar__", scale,
              b.op("strided_slice",
                   {{"begin", tupleText({k})}, {"end", tupleText({k + 1})}, {"axes", "(1,)"}},
                   {rois})));
    };
    NodeEntry start = column(lo), length = b.sub(column(hi), start);
    if (offset == 0) // output_half_pixel: a region at least one pixel wide
      length = b.op("clip", {{"a_min", "1"}, {"a_max", "3.4e38"}}, {length});
    NodeEntry bin = b.withScalar("__div_scalar__", static_cast<double>(out), length);
    Tensor where({1, out * grid}, dt);
    for (int64_t p = 0; p < out; ++p)
      for (int64_t i = 0; i < grid; ++i)
        where.data[static_cast<size_t>(p * grid + i)] =
            static_cast<double>(p) + (static_cast<double>(i) + 0.5) / static_cast<double>(grid);
    NodeEntry c =
        b.add(start, b.mul(bin, im.constantParam(n, "_ra_at" + std::to_string(b.made++), where)));
    NodeEntry inside = b.clamp(c, size);
    NodeEntry low = b.op("floor", {}, {inside});
    NodeEntry high = b.clamp(b.withScalar("__add_scalar__", 1, low), size);
    NodeEntry wHigh = b.sub(inside, low);
    return Axis{b.inside(c, -1, static_cast<double>(size), real), low, high,
                b.withScalar("__rsub_scalar__", 1, wHigh), wHigh};
  };
  Axis ay = axis(1, 3, oh, H), ax = axis(0, 2, ow, W);
  const int64_t Sy = oh * grid, Sx = ow * grid;
  Shape plane = {R, Sy, Sx};
  auto rows = [&](const NodeEntry &e) { return b.op("expand_dims", {{"axis", "2"}}, {e}); };
  auto cols = [&](const NodeEntry &e) { return b.op("expand_dims", {{"axis", "1"}}, {e}); };
  auto index = [&](const NodeEntry &e) {
    return b.op("expand_dims", {{"axis", "3"}},
                {b.op("cast", {{"dtype", "int64"}},
                      {b.op("broadcast_to", {{"shape", tupleText(plane)}}, {e})})});
  };
  NodeEntry image = index(b.op("reshape", {{"shape", tupleText({R, 1, 1})}},
                               {b.op("cast", {{"dtype", real}}, {im.input(n, 2)})}));
  NodeEntry valid = b.mul(rows(ay.valid), cols(ax.valid));
  NodeEntry channelsLast = b.op("transpose", {{"axes", "(0, 2, 3, 1)"}}, {x});
  std::optional<NodeEntry> pooled;
  for (const auto &[yi, wy] : {std::pair{ay.low, ay.wLow}, std::pair{ay.high, ay.wHigh}})
    for (const auto &[xi, wx] : {std::pair{ax.low, ax.wLow}, std::pair{ax.high, ax.wHigh}}) {
      NodeEntry at =
          b.op("concatenate", {{"axis", "3"}}, {image, index(rows(yi)), index(cols(xi))});
      NodeEntry corner =
          b.mul(b.op("gather_nd", {}, {channelsLast, at}),
                b.op("expand_dims", {{"axis", "3"}}, {b.mul(valid, b.mul(rows(wy), cols(wx)))}));
      pooled = !pooled         ? corner
               : mode == "avg" ? b.add(*pooled, corner)
                               : b.op("broadcast_max", {}, {*pooled, corner});
    }
  // The samples of a bin together: (R, oh, grid, ow, grid, C), reduced over the grids.
  NodeEntry bins = b.op("reshape", {{"shape", tupleText({R, oh, grid, ow, grid, C})}}, {*pooled});
  NodeEntry reduced = mode == "avg"
                          ? b.withScalar("__div_scalar__", static_cast<double>(grid * grid),
                                         b.op("sum", {{"axis", "(2, 4)"}}, {bins}))
                          : b.op("max", {{"axis", "(2, 4)"}}, {bins});
  return {im.op(n, "transpose", {{"axes", "(0, 3, 1, 2)"}}, {reduced})};
}

} // namespace

ConverterList imageConverters() {
  return {
      {"DepthToSpace", depthSpace(true)},
      {"SpaceToDepth", depthSpace(false)},
      {"GridSample", gridSample},
      {"RoiAlign", roiAlign},
      {"Resize", resize},
      {"Upsample", resize},
  };
}

} // namespace loupe::frontend
