// ReplTerminalTest: the `loupe` REPL driven through a pseudo-terminal as a person types — Ctrl-C
// at the prompt, inside a multi-line input and during a long command; Ctrl-D and :quit.
#include <gtest/gtest.h>

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <poll.h>
#include <pty.h>
#include <string>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

namespace {

using namespace std::chrono_literals;

/// A loupe process on a pseudo-terminal: what it printed so far, and keys to send.
class Terminal {
public:
  Terminal() {
    home_ =
        std::filesystem::temp_directory_path() / ("loupe-pty-test-" + std::to_string(::getpid()));
    std::filesystem::create_directories(home_);
    pid_ = forkpty(&fd_, nullptr, nullptr, nullptr);
    if (pid_ == 0) {
      ::setenv("HOME", home_.c_str(), 1);
      ::setenv("LOUPE_HISTORY", (home_ / "history").c_str(), 1);
      ::setenv("TERM", "dumb", 1);
      ::execl(LOUPE_REPL_BINARY, "loupe", static_cast<char *>(nullptr));
      std::_Exit(127);
    }
  }
  ~Terminal() {
    if (pid_ > 0 && !exited_) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
    ::close(fd_);
    std::filesystem::remove_all(home_);
  }

  /// Types keys after a short pause, as a person would: a control key typed ahead of the
  /// prompt reaches the terminal's line discipline rather than the line editor.
  void send(const std::string &keys) {
    std::this_thread::sleep_for(50ms);
    ASSERT_EQ(::write(fd_, keys.data(), keys.size()), (ssize_t)keys.size());
  }

  /// Reads until `text` appears after the last match (or the timeout); true when it did.
  bool waitFor(const std::string &text, std::chrono::milliseconds timeout = 20s) {
    auto end = std::chrono::steady_clock::now() + timeout;
    while (true) {
      size_t at = seen_.find(text, mark_);
      if (at != std::string::npos) {
        mark_ = at + text.size();
        return true;
      }
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          end - std::chrono::steady_clock::now());
      if (left.count() <= 0)
        return false;
      pollfd p{fd_, POLLIN, 0};
      if (::poll(&p, 1, static_cast<int>(left.count())) <= 0)
        continue;
      char buf[4096];
      ssize_t n = ::read(fd_, buf, sizeof buf);
      if (n <= 0)
        return false; // the process is gone
      seen_.append(buf, static_cast<size_t>(n));
    }
  }

  /// Everything printed since the last match.
  std::string sinceMark() const { return seen_.substr(mark_); }
  const std::string &all() const { return seen_; }

  /// Waits for the process to end; its exit status, or -1 if it did not end in time.
  int exitStatus(std::chrono::milliseconds timeout = 10s) {
    auto end = std::chrono::steady_clock::now() + timeout;
    while (std::chrono::steady_clock::now() < end) {
      int status;
      if (::waitpid(pid_, &status, WNOHANG) == pid_) {
        exited_ = true;
        return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
      }
      char buf[4096];
      pollfd p{fd_, POLLIN, 0};
      if (::poll(&p, 1, 50) > 0 && ::read(fd_, buf, sizeof buf) > 0)
        continue;
    }
    return -1;
  }

private:
  std::filesystem::path home_;
  int fd_ = -1;
  pid_t pid_ = -1;
  bool exited_ = false;
  std::string seen_;
  size_t mark_ = 0;
};

} // namespace

TEST(ReplTerminal, CtrlCClearsTheLineAndAbandonsAMultiLineInput) {
  Terminal t;
  ASSERT_TRUE(t.waitFor("loupe> ")) << t.all();
  t.send("x = Variable(\"x\")");
  ASSERT_TRUE(t.waitFor("Variable(\"x\")"));
  t.send("\x03"); // Ctrl-C at the prompt: the line is dropped, a fresh prompt
  ASSERT_TRUE(t.waitFor("^C")) << t.all();
  ASSERT_TRUE(t.waitFor("loupe> ")) << t.all();
  t.send("y = relu(\r");
  ASSERT_TRUE(t.waitFor("...> ")) << t.all(); // an open bracket asks for more
  t.send("\x03");
  ASSERT_TRUE(t.waitFor("loupe> ")) << t.all();
  t.send(":vars\r");
  ASSERT_TRUE(t.waitFor(":vars"));
  ASSERT_TRUE(t.waitFor("loupe> ")) << t.all();
  // Neither the abandoned line nor the abandoned multi-line input defined anything.
  EXPECT_EQ(t.all().find("<Symbol"), std::string::npos) << t.all();
  t.send("z = Variable(\"z\")\r:vars\r");
  ASSERT_TRUE(t.waitFor("<Symbol z>")) << t.all();
  // Keys typed ahead of the prompt go to the terminal's line discipline, where Ctrl-D is no
  // key: wait for the prompt as a person would.
  ASSERT_TRUE(t.waitFor("loupe> ")) << t.all();
  t.send("\x04"); // Ctrl-D ends the REPL
  EXPECT_EQ(t.exitStatus(), 0);
}

TEST(ReplTerminal, CtrlCStopsARunningCommandAndKeepsTheState) {
  Terminal t;
  ASSERT_TRUE(t.waitFor("loupe> "));
  t.send(":set cache off\r:model resnet-50\r");
  ASSERT_TRUE(t.waitFor("step 0: model", 60s)) << t.all();
  ASSERT_TRUE(t.waitFor("loupe> "));
  t.send(":build opt_level=3\r");
  std::this_thread::sleep_for(400ms); // the build takes seconds without the cache
  t.send("\x03");
  ASSERT_TRUE(t.waitFor("interrupted", 60s)) << t.all();
  ASSERT_TRUE(t.waitFor("loupe> ")) << t.all();
  EXPECT_EQ(t.all().find("step 1:"), std::string::npos) << t.all();
  // The REPL is still there, at step 0; a small build then works and numbers the kernels from
  // the start (the interrupted build used up no function names).
  t.send(":history\r");
  ASSERT_TRUE(t.waitFor("* 0  model resnet-50", 10s)) << t.all();
  t.send("x = Variable(\"x\", shape=(1, 2))\r:graph relu(x)\r:build\r");
  ASSERT_TRUE(t.waitFor("func_name='fuse_relu')", 30s)) << t.all();
  t.send(":quit\r");
  EXPECT_EQ(t.exitStatus(), 0);
}

TEST(ReplTerminal, ABuildShowsProgressOnTheTerminalOnly) {
  const char *script = ":set cache off\n:model squeezenet1.1 classes=10\n:build opt_level=3\n";
  Terminal t;
  ASSERT_TRUE(t.waitFor("loupe> "));
  for (const char *p = script; *p; ++p)
    t.send(std::string(1, *p == '\n' ? '\r' : *p));
  // The status line counts kernels as they compile, then is erased (\r, clear to the end of
  // the line) before the deploy graph is printed.
  ASSERT_TRUE(t.waitFor("building: 1/", 60s)) << t.all();
  ASSERT_TRUE(t.waitFor("\r\x1b[K", 60s)) << t.all();
  ASSERT_TRUE(t.waitFor("step 1: build opt_level=3", 60s)) << t.all();
  t.send(":quit\r");
  EXPECT_EQ(t.exitStatus(), 0);
  // The same build with its output in a pipe has no status line at all.
  std::string out = std::filesystem::temp_directory_path() /
                    ("loupe-progress-" + std::to_string(::getpid()) + ".txt");
  std::string cmd = std::string("printf '") +
                    ":set cache off\\n:model squeezenet1.1 classes=10\\n"
                    ":build opt_level=3\\n' | " LOUPE_REPL_BINARY " > " +
                    out + " 2>&1";
  ASSERT_EQ(std::system(cmd.c_str()), 0);
  std::ifstream in(out);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::filesystem::remove(out);
  EXPECT_NE(text.find("step 1: build opt_level=3"), std::string::npos) << text;
  EXPECT_EQ(text.find("building:"), std::string::npos) << text;
  EXPECT_EQ(text.find('\r'), std::string::npos);
}

// Tab completes a path with slashes in a command (libedit's word breaks are the command's, not
// an expression's), and a node name of the current graph.
TEST(ReplTerminal, TabCompletesPathsAndNodeNames) {
  Terminal t;
  ASSERT_TRUE(t.waitFor("loupe> "));
  std::string dir = std::string(LOUPE_SOURCE_DIR) + "/tests/onnx/data/blocks/test_mobilenetv3_";
  t.send(":load " + dir + "\t");
  ASSERT_TRUE(t.waitFor("test_mobilenetv3_block/")) << t.all();
  t.send("model.onnx\r");
  ASSERT_TRUE(t.waitFor("step 0: load")) << t.all();
  ASSERT_TRUE(t.waitFor("loupe> "));
  t.send(":apply InferShape InferType\r");
  ASSERT_TRUE(t.waitFor("step 1: apply")) << t.all();
  ASSERT_TRUE(t.waitFor("loupe> "));
  t.send(":why globala\t");
  ASSERT_TRUE(t.waitFor("globalaveragepool_5")) << t.all();
  t.send("hardswish_4\r");
  ASSERT_TRUE(t.waitFor("not fused")) << t.all();
  t.send(":quit\r");
  EXPECT_EQ(t.exitStatus(), 0);
}
