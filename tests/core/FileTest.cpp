// FileTest: atomic whole-file writes (old file intact on every failure, no temporary file left
// behind, permissions kept), whole-file reads, and the size and memory checks of core/Memory.
#include "core/File.h"
#include "core/Error.h"
#include "core/Memory.h"
#include "core/Tensor.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <sys/stat.h>
#include <unistd.h>

using namespace loupe;
namespace fs = std::filesystem;

namespace {

// A fresh folder under the test's temporary folder, removed at the end.
struct Scratch {
  fs::path dir;
  Scratch() {
    dir = fs::temp_directory_path() /
          ("loupe-file-test-" + std::to_string(::getpid()) + "-" +
           ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir);
    fs::create_directories(dir);
  }
  ~Scratch() {
    std::error_code ec;
    fs::permissions(dir, fs::perms::owner_all, ec);
    fs::remove_all(dir, ec);
  }
  size_t entries() const {
    return static_cast<size_t>(std::distance(fs::directory_iterator(dir), {}));
  }
};

std::string errorOf(const std::function<void()> &f) {
  try {
    f();
  } catch (const Error &e) {
    return e.what();
  }
  return "";
}

} // namespace

TEST(File, WritesReplaceTheFileAndKeepItsPermissions) {
  Scratch s;
  std::string p = (s.dir / "a.txt").string();
  writeFileAtomically(p, "one");
  EXPECT_EQ(readFile(p), "one");
  ::chmod(p.c_str(), 0640);
  writeFileAtomically(p, std::string("two\0three", 9));
  EXPECT_EQ(readFile(p), std::string("two\0three", 9));
  struct stat st;
  ASSERT_EQ(::stat(p.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0640u);
  EXPECT_EQ(s.entries(), 1u); // no temporary file left
}

TEST(File, AFailedWriteLeavesTheOldFileAndNoTemporaryFile) {
  Scratch s;
  // A folder where the file should be: nothing is written.
  fs::create_directories(s.dir / "sub");
  EXPECT_EQ(errorOf([&] { writeFileAtomically((s.dir / "sub").string(), "x"); }),
            (s.dir / "sub").string() + ": is a folder, not a file");
  // A disk that is full: the device is written in place and the error says so.
  EXPECT_EQ(errorOf([] { writeFileAtomically("/dev/full", "x"); }),
            "/dev/full: write failed: No space left on device");
  // A folder that cannot be written to: the old file keeps its contents. (As root permissions
  // do not stop writes; /proc cannot take new files for anyone.)
  std::string p = (s.dir / "kept.txt").string();
  writeFileAtomically(p, "old");
  std::string target = p;
  if (::geteuid() == 0) {
    target = "/proc/loupe-file-test.txt";
  } else {
    fs::permissions(s.dir, fs::perms::owner_read | fs::perms::owner_exec);
  }
  std::string err = errorOf([&] { writeFileAtomically(target, "new"); });
  EXPECT_NE(err.find(target + ": cannot write: "), std::string::npos) << err;
  fs::permissions(s.dir, fs::perms::owner_all);
  EXPECT_EQ(readFile(p), "old");
  EXPECT_EQ(s.entries(), 2u); // sub/ and kept.txt
}

TEST(File, ReadsSayWhatIsWrong) {
  Scratch s;
  EXPECT_EQ(errorOf([&] { readFile(s.dir.string()); }),
            s.dir.string() + ": is a folder, not a file");
  EXPECT_EQ(errorOf([&] { readFile((s.dir / "missing").string()); }),
            (s.dir / "missing").string() + ": cannot open: No such file or directory");
  EXPECT_EQ(readFile("/dev/null"), "");
}

TEST(Memory, SizesAreCheckedWhereShapesBecomeAllocations) {
  EXPECT_EQ(checkedNumElements({2, 3, 4}), 24);
  EXPECT_EQ(checkedNumElements({}), 1);
  EXPECT_EQ(checkedNumElements({5, 0}), 0);
  EXPECT_EQ(errorOf([] {
              checkedNumElements({-3, 2});
            }),
            "shape (-3, 2) has a negative dimension -3");
  EXPECT_EQ(errorOf([] {
              checkedNumElements({int64_t{1} << 40, int64_t{1} << 20});
            }),
            "shape (1099511627776, 1048576) has more than 2^56 elements");
  // 2^56 exactly is allowed, one more element is not.
  EXPECT_EQ(checkedNumElements({int64_t{1} << 28, int64_t{1} << 28}), kMaxElements);
  EXPECT_NE(errorOf([] { checkedNumElements({(int64_t{1} << 28) + 1, int64_t{1} << 28}); }), "");
  EXPECT_EQ(formatBytes(512), "512 B");
  EXPECT_EQ(formatBytes(1536), "1.5 KiB");
  EXPECT_EQ(formatBytes(80e12), "72.8 TiB");
  EXPECT_EQ(describeTensor({100000, 100000, 1000}, kFloat32), "100000×100000×1000 float32");
  // More than this machine has: a clear error instead of std::bad_alloc, naming what needs it.
  ASSERT_GT(machineMemoryBytes(), 0u);
  std::string err = errorOf([] {
    requireTensorMemory("input 'x'", {100000, 100000, 1000}, kFloat32);
  });
  EXPECT_EQ(
      err.rfind("input 'x' needs 72.8 TiB (100000×100000×1000 float32); this machine has ", 0), 0u)
      << err;
  EXPECT_EQ(errorOf([] { requireTensorMemory("input 'x'", {1000, 1000}, kFloat32); }), "");
  // A memory limit below the machine's is checked instead, and named; 0 lifts it. Sizes parse
  // with binary units.
  EXPECT_EQ(parseBytes("2048"), 2048u);
  EXPECT_EQ(parseBytes("1.5GiB"), 1610612736u);
  EXPECT_EQ(parseBytes("64 MiB"), 67108864u);
  for (const char *bad : {"0", "-1KiB", "lots", "1GB", "1e30TiB", ""})
    EXPECT_NE(errorOf([bad] { parseBytes(bad); }).find("is not a size in bytes"), std::string::npos)
        << bad;
  setMemoryLimit(parseBytes("4MiB"));
  EXPECT_EQ(errorOf([] {
              requireTensorMemory("input 'x'", {1000, 1000}, kFloat32);
            }),
            "input 'x' needs 7.6 MiB (1000×1000 float32); the memory limit is 4.0 MiB");
  EXPECT_EQ(errorOf([] { requireTensorMemory("input 'x'", {100, 100}, kFloat32); }), "");
  setMemoryLimit(0);
  EXPECT_EQ(errorOf([] { requireTensorMemory("input 'x'", {1000, 1000}, kFloat32); }), "");
  EXPECT_NE(errorOf([] {
              Tensor t({-1, 4}, kFloat32);
            }).find("negative dimension"),
            std::string::npos);
}
