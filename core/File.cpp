// File: reading whole files and writing them through a temporary file and a rename.
#include "core/File.h"

#include "core/Error.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace loupe {

namespace {

// Writes all of `bytes` to `fd`; false (errno set) on failure.
bool writeAll(int fd, const std::string &bytes) {
  size_t done = 0;
  while (done < bytes.size()) {
    ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

} // namespace

std::string readFile(const std::string &path) {
  struct stat st;
  bool known = ::stat(path.c_str(), &st) == 0;
  if (known && S_ISDIR(st.st_mode))
    fail(path, ": is a folder, not a file");
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    fail(path, ": cannot open: ", std::strerror(errno));
  std::string bytes;
  // Sized once for a regular file: appending chunk by chunk would hold up to twice a model's
  // bytes while the string grows.
  if (known && S_ISREG(st.st_mode) && st.st_size > 0)
    bytes.reserve(static_cast<size_t>(st.st_size));
  char buf[1 << 16];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0) {
      int err = errno;
      ::close(fd);
      fail(path, ": read error: ", std::strerror(err));
    }
    if (n == 0)
      break;
    bytes.append(buf, static_cast<size_t>(n));
  }
  ::close(fd);
  return bytes;
}

void writeFileAtomically(const std::string &path, const std::string &bytes) {
  if (path.empty())
    fail("cannot write a file with an empty name");
  struct stat st;
  bool exists = ::stat(path.c_str(), &st) == 0;
  if (exists && S_ISDIR(st.st_mode))
    fail(path, ": is a folder, not a file");
  if (exists && !S_ISREG(st.st_mode)) {
    // A device or a pipe cannot be replaced by a rename (and must not be): write in place.
    int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
    if (fd < 0)
      fail(path, ": cannot open for writing: ", std::strerror(errno));
    bool ok = writeAll(fd, bytes);
    int err = errno;
    ::close(fd);
    if (!ok)
      fail(path, ": write failed: ", std::strerror(err));
    return;
  }
  size_t slash = path.find_last_of('/');
  std::string folder = slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
  std::string name = slash == std::string::npos ? path : path.substr(slash + 1);
  std::string tmp = (folder == "/" ? "" : folder) + "/." + name + ".XXXXXX";
  int fd = ::mkstemp(tmp.data());
  if (fd < 0)
    fail(path, ": cannot write: ", std::strerror(errno));
  // Keep the permissions an existing file had (mkstemp makes it 0600), else the usual ones.
  mode_t mode = exists ? st.st_mode & 07777 : 0644;
  if (!exists) {
    mode_t mask = ::umask(0);
    ::umask(mask);
    mode &= ~mask;
  }
  ::fchmod(fd, mode);
  bool ok = writeAll(fd, bytes) && ::fsync(fd) == 0;
  int err = errno;
  if (::close(fd) != 0 && ok) {
    ok = false;
    err = errno;
  }
  if (!ok) {
    ::unlink(tmp.c_str());
    fail(path, ": write failed: ", std::strerror(err), " (the file is unchanged)");
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    err = errno;
    ::unlink(tmp.c_str());
    fail(path, ": cannot replace the file: ", std::strerror(err), " (the file is unchanged)");
  }
}

} // namespace loupe
