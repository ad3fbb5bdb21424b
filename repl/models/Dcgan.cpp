// Dcgan: nnvm.testing.dcgan's generator — a dense projection of the code to 4x4 maps, three
// transposed-convolution blocks (batch norm, relu) doubling the size, a last one to the image,
// tanh.
#include "repl/models/Zoo.h"

namespace loupe::models {

namespace {

// A stride-2, 4x4 transposed convolution from `in` maps to `out`-sized ones, with the padding
// and output padding nnvm.testing.dcgan derives from the target size.
std::string deconv(NetWriter &w, const std::string &data, int64_t channels, int64_t target,
                   const std::string &name) {
  int64_t k = 4, stride = 2, pad = (k - 1) / 2, adj = (target + 2 * pad - k) % stride;
  return w.let("conv2d_transpose(" + data + ", channels=" + std::to_string(channels) +
               ", kernel_size=(4, 4), strides=(2, 2), padding=(" + std::to_string(pad) + ", " +
               std::to_string(pad) + "), output_padding=(" + std::to_string(adj) + ", " +
               std::to_string(adj) + "), use_bias=False, name=\"" + name + "\")");
}

std::string dcgan(const Options &o) {
  const int64_t ngf = 128;
  NetWriter w;
  std::string x = w.variable("data", {o.batch, o.sample.at(0)}, o.dtype);
  x = w.let(dense(x, "g1", 4 * 4 * ngf * 8, false));
  x = w.let(unary("relu", x, "g1_relu"));
  x = w.let("reshape(" + x + ", shape=(-1, " + std::to_string(ngf * 8) +
            ", 4, 4), name=\"g1_reshape\")");
  int64_t size = 4, ch = ngf * 8;
  for (int g = 2; g <= 4; ++g) {
    std::string p = "g" + std::to_string(g);
    ch /= 2;
    size *= 2;
    x = deconv(w, x, ch, size, p + "_deconv");
    x = w.let(batchNorm(x, p + "_bn", 1e-5 + 1e-12));
    x = w.let(unary("relu", x, p + "_relu"));
  }
  x = deconv(w, x, 3, size * 2, "g5_deconv");
  return w.finish(w.let(unary("tanh", x, "g5_tanh")));
}

} // namespace

void addDcgan(std::vector<Network> &z) {
  z.push_back(
      {"dcgan",
       "DCGAN generator: a random code (100 values) to a 3x64x64 image (nnvm.testing.dcgan)",
       {100},
       0,
       dcgan});
}

} // namespace loupe::models
