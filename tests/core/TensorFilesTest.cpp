// TensorFilesTest: tensors in and out of files — .npz archives (NumPy's own, read with libzip;
// written in order), raw .bin inputs, the hint for anything else — and :run compare='s
// allclose figures, matched by name or by position across two models (issue 56, part 4).
#include "TestUtil.h"

#include "core/File.h"
#include "core/Npy.h"
#include "core/Npz.h"
#include "core/TensorDiff.h"

#include <cmath>
#include <filesystem>
#include <string>
#include <unistd.h>

namespace loupe::test {
namespace {

const std::string kData = std::string(LOUPE_SOURCE_DIR) + "/tests/data/";

std::filesystem::path scratch(const std::string &name) {
  auto dir = std::filesystem::temp_directory_path() /
             ("loupe-files-" + name + "-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

// tests/data/two_arrays.npz is numpy.savez(y=int64 [1, 2], x=float32 arange(6) as (2, 3)): stored
// entries, in the keywords' order; compressed.npz is numpy.savez_compressed(x=arange(6.) / 4 as
// (2, 3)), deflated.
TEST(Npz, ReadsNumPysArchivesInTheirOrder) {
  auto arrays = readNpz(kData + "two_arrays.npz");
  ASSERT_EQ(arrays.size(), 2u);
  EXPECT_EQ(arrays[0].first, "y");
  EXPECT_EQ(arrays[0].second.dtype, kInt64);
  EXPECT_EQ(arrays[0].second.data, (std::vector<double>{1, 2}));
  EXPECT_EQ(arrays[1].first, "x");
  EXPECT_EQ(arrays[1].second.shape, (Shape{2, 3}));
  EXPECT_EQ(arrays[1].second.data, (std::vector<double>{0, 1, 2, 3, 4, 5}));
  auto deflated = readNpz(kData + "compressed.npz");
  ASSERT_EQ(deflated.size(), 1u);
  EXPECT_EQ(deflated[0].second.dtype, kFloat64);
  EXPECT_EQ(deflated[0].second.data, (std::vector<double>{0, 0.25, 0.5, 0.75, 1, 1.25}));
}

TEST(Npz, WritesInOrderWithPlainEntryNamesAndReadsBack) {
  auto dir = scratch("npz");
  std::string path = (dir / "out.npz").string();
  Tensor a({2}, kFloat32), b({1, 2}, kInt32);
  a.data = {0.5, -1};
  b.data = {7, -8};
  writeNpz(path, {{"z/../logits", a}, {"aux", b}});
  auto back = readNpz(path);
  ASSERT_EQ(back.size(), 2u);
  EXPECT_EQ(back[0].first, "z_.._logits"); // an untrusted name stays a plain entry name
  EXPECT_EQ(back[0].second.data, a.data);
  EXPECT_EQ(back[1].first, "aux");
  EXPECT_EQ(back[1].second.dtype, kInt32);
  EXPECT_EQ(back[1].second.data, b.data);
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir), {}), 1); // no temporary left
  std::filesystem::remove_all(dir);
}

TEST(Npz, UnreadableFilesAreOneLineErrors) {
  EXPECT_THROW(
      {
        try {
          readNpz(kData + "ramp_2x3.npy");
        } catch (const Error &e) {
          EXPECT_EQ(std::string(e.what()).rfind(kData + "ramp_2x3.npy: not a .npz file (", 0), 0u)
              << e.what();
          throw;
        }
      },
      Error);
  EXPECT_THROW(readNpz(kData + "no_such.npz"), Error);
  // Every cut of an archive, and every byte of it flipped, is an Error or a correct read: never
  // a crash (the fuzzer's corpus goes further).
  std::string bytes = readFile(kData + "two_arrays.npz");
  for (size_t cut = 0; cut < bytes.size(); cut += 7)
    try {
      auto arrays = parseNpz(bytes.substr(0, cut), "cut");
      EXPECT_LE(arrays.size(), 2u);
    } catch (const Error &) {
    }
  for (size_t at = 0; at < bytes.size(); ++at) {
    std::string flipped = bytes;
    flipped[at] = static_cast<char>(~flipped[at]);
    try {
      (void)parseNpz(flipped, "flipped");
    } catch (const Error &) {
    }
  }
}

// allclose by hand: atol 0.1 + rtol 0.1·|expected|. Expected [10, 0.05, -2, 0, NaN]; got
// [10.9, 0.2, -2.5, 0, NaN]: 10.9 is within 0.1 + 1 = 1.1; 0.2 misses 0.105 by 0.045; -2.5 misses
// 0.3 by 0.2; 0 and the two NaNs agree. The relative error skips |expected| <= atol (0.05, 0, and
// NaN): 0.9 / 10 and 0.5 / 2, so 0.25.
TEST(CompareClose, CountsWithinToleranceAndKeepsTheWorstMisses) {
  Tensor got({5}, kFloat32), want({5}, kFloat32);
  got.data = {10.9, 0.2, -2.5, 0, NAN};
  want.data = {10, 0.05, -2, 0, NAN};
  CloseReport r = compareClose(got, want, 0.1, 0.1);
  EXPECT_EQ(r.total, 5u);
  EXPECT_EQ(r.within, 3u);
  EXPECT_NEAR(r.maxAbs, 0.9, 1e-12);
  EXPECT_NEAR(r.maxRel, 0.25, 1e-12);
  EXPECT_EQ(r.relCounted, 2u);
  ASSERT_EQ(r.worst.size(), 2u);
  EXPECT_EQ(r.worst[0].index, 2u);
  EXPECT_NEAR(r.worst[0].excess, 0.2, 1e-12);
  EXPECT_EQ(r.worst[1].index, 1u);
  EXPECT_NEAR(r.worst[1].excess, 0.045, 1e-12);
  // A NaN against a number misses by infinity.
  got.data[3] = NAN;
  EXPECT_EQ(compareClose(got, want, 0.1, 0.1, 1).worst[0].index, 3u);
}

const char *kModel = "x = Variable(\"x\", shape=(2, 3))\n"
                     "y = x * 2 + 1\n"
                     ":graph y\n"
                     ":build";

// Inputs from a .npz (the array named as the input, or FILE.npz:KEY) and a raw .bin (the input's
// shape and dtype); x = arange(6) gives y = 2x + 1 = [1, 3, 5, 7, 9, 11].
TEST(RunFiles, InputsFromNpzAndRawBin) {
  Engine e;
  run(e, kModel);
  for (const char *how : {"two_arrays.npz", "two_arrays.npz:x", "ramp_2x3_float32.bin"})
    EXPECT_NE(
        output(e, std::string(":run x=") + kData + how).find("  values [1, 3, 5, 7, 9, 11]\n"),
        std::string::npos)
        << how;
  EXPECT_EQ(output(e, ":run x=" + kData + "two_arrays.npz:w"),
            "error: " + kData +
                "two_arrays.npz has no array 'w' (it holds y, x); name one with x=" + kData +
                "two_arrays.npz:KEY\n");
  EXPECT_EQ(output(e, ":run x=" + kData + "two_arrays.npz:y"),
            "error: " + kData +
                "two_arrays.npz:y holds shape [2] but input 'x' has shape [2, 3]\n");
  EXPECT_EQ(output(e, ":run x=" + kData + "hanging_tune_worker.sh"),
            "error: x=" + kData +
                "hanging_tune_worker.sh: not a tensor file Loupe reads; give a .npy file, a .npz "
                "(the array named 'x', or FILE.npz:KEY), an ONNX .pb TensorProto, or a .bin of "
                "raw float32 bytes of shape (2, 3)\n");
  auto dir = scratch("bin");
  std::string shortBin = (dir / "short.bin").string();
  writeNpy(shortBin, Tensor({1}, kFloat32)); // 132 bytes, not 24
  EXPECT_EQ(output(e, ":run x=" + shortBin),
            "error: " + shortBin +
                " holds 132 bytes but x (2, 3) float32 takes 24 (raw bytes in C order, "
                "little-endian)\n");
  std::filesystem::remove_all(dir);
}

// Two models that name their outputs differently: a .npz saved from one pairs with the other's
// outputs by position, and :run says so. On ramp_2x3 (x = 1 … 6), 2x + 1.001 differs from
// 2x + 1 by 1e-3 everywhere: within atol 1e-2, and at NumPy's defaults none is within
// (1e-3 > 1e-8 + 1e-5·|y|); the relative error is largest at the smallest value, 1e-3 / 3, and
// the worst misses are the smallest values (the least allowance).
TEST(RunFiles, CompareAcrossModelsByPosition) {
  auto dir = scratch("compare");
  std::string npz = (dir / "float.npz").string();
  Engine a;
  run(a, "x = Variable(\"x\", shape=(2, 3))\ny = relu(x * 2 + 1, name=\"float_out\")\n"
         ":graph y\n:build");
  EXPECT_NE(output(a, ":run x=" + kData + "ramp_2x3.npy save=" + npz)
                .find("saved 1 output in " + npz + ": float_out\n"),
            std::string::npos);
  Engine b;
  run(b, "x = Variable(\"x\", shape=(2, 3))\ny = relu(x * 2 + 1.001, name=\"int8_out\")\n"
         ":graph y\n:build");
  std::string said = output(b, ":run x=" + kData + "ramp_2x3.npy compare=" + npz + " check=off");
  EXPECT_NE(said.find("note: compare: " + npz +
                      " names its outputs otherwise; matched by position: int8_out with "
                      "float_out\n"),
            std::string::npos)
      << said;
  EXPECT_NE(said.find("  vs " + npz +
                      ":float_out: 0 of 6 within atol 1e-08 + rtol 1e-05·|expected| (0%), max abs "
                      "error 1.0e-03, max rel error 3.3e-04 where |expected| > atol\n"),
            std::string::npos)
      << said;
  EXPECT_NE(said.find("    worst: (0, 0) 3.001 vs 3, (0, 1) 5.001 vs 5, (0, 2) 7.001 vs 7\n"),
            std::string::npos)
      << said;
  said = output(b, ":run x=" + kData + "ramp_2x3.npy compare=" + npz + " atol=1e-2 check=off");
  EXPECT_NE(said.find(": 6 of 6 within atol 0.01 + rtol 1e-05·|expected| (100%), "),
            std::string::npos)
      << said;
  EXPECT_EQ(said.find("    worst:"), std::string::npos) << said;
  std::filesystem::remove_all(dir);
}

} // namespace
} // namespace loupe::test
