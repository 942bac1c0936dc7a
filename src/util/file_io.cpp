// Reading whole files with a size bound, and replacing files atomically. POSIX
// calls rather than iostreams: a stream reports neither a directory nor the
// errno of a failed read, so both used to read as an empty file.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <string>

#include <fmt/format.h>

#include "smelt/error.hpp"
#include "smelt/file_io.hpp"

namespace smelt {
namespace {

namespace fs = std::filesystem;

std::string limit_text() {
  return fmt::format("the {} MiB ({} bytes) input limit", kMaxInputBytes >> 20, kMaxInputBytes);
}

// Closes a descriptor on every path out of a scope.
class Descriptor {
 public:
  explicit Descriptor(int fd, bool owned = true) : fd_(fd), owned_(owned) {}
  Descriptor(const Descriptor&) = delete;
  Descriptor& operator=(const Descriptor&) = delete;
  ~Descriptor() {
    if (owned_ && fd_ >= 0) ::close(fd_);
  }
  int get() const { return fd_; }
  // Closes now, returning close()'s errno (0 on success): a write can fail there.
  int close() {
    const int rc = owned_ && fd_ >= 0 ? ::close(fd_) : 0;
    fd_ = -1;
    return rc == 0 ? 0 : errno;
  }

 private:
  int fd_;
  bool owned_;
};

// The file a write to `path` replaces: symbolic links followed (the link
// itself is kept), even when the last one dangles. 40 hops, as Linux allows.
fs::path write_target(const fs::path& path) {
  fs::path p = path;
  for (int hops = 0; hops < 40; ++hops) {
    std::error_code ec;
    if (!fs::is_symlink(fs::symlink_status(p, ec))) return p;
    const fs::path to = fs::read_symlink(p, ec);
    if (ec) return p;  // unreadable link: let the write report why
    p = to.is_absolute() ? to : p.parent_path() / to;
  }
  throw io_error(fmt::format("cannot write '{}': {}", path.string(), std::strerror(ELOOP)));
}

// A new, empty file beside `target` that no other writer has: O_EXCL with a
// name that differs per process, call and time, retried on a clash. Created
// with mode 0666 so the umask applies as it would to `target` itself.
Descriptor create_temp(const fs::path& target, fs::path& temp, const std::string& shown) {
  static std::atomic<unsigned> calls{0};
  for (int attempt = 0; attempt < 100; ++attempt) {
    const auto tick = std::chrono::steady_clock::now().time_since_epoch().count();
    temp = target;
    temp += fmt::format(".{}-{}-{:x}.tmp", ::getpid(), calls++, static_cast<unsigned long long>(tick) & 0xffffff);
    const int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd >= 0) return Descriptor(fd);
    if (errno != EEXIST) throw io_error(fmt::format("cannot write '{}': {}", shown, std::strerror(errno)));
  }
  throw io_error(fmt::format("cannot write '{}': no unused temporary name beside it", shown));
}

// Writes all of `text` to `fd`; 0 or the errno of the failed write.
int write_all(int fd, std::string_view text) {
  for (std::size_t done = 0; done < text.size();) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return errno;
    done += static_cast<std::size_t>(n);
  }
  return 0;
}

}  // namespace

std::string source_name(const fs::path& path) { return path == "-" ? "<stdin>" : path.string(); }

std::string read_text_file(const fs::path& path) {
  const std::string name = source_name(path);
  const bool standard_input = path == "-";
  Descriptor in(standard_input ? STDIN_FILENO : ::open(path.c_str(), O_RDONLY | O_CLOEXEC), !standard_input);
  if (in.get() < 0) throw io_error(fmt::format("cannot open '{}': {}", name, std::strerror(errno)));
  struct stat st {};
  if (::fstat(in.get(), &st) == 0) {
    if (S_ISDIR(st.st_mode)) throw io_error(fmt::format("cannot read '{}': {}", name, std::strerror(EISDIR)));
    if (S_ISREG(st.st_mode) && static_cast<std::uint64_t>(st.st_size) > kMaxInputBytes)
      throw io_error(fmt::format("cannot read '{}': {} bytes is more than {}", name, st.st_size, limit_text()));
  }
  // Chunks up to one byte past the limit: a pipe or /dev/zero has no size to
  // check first, and a regular file may grow while it is read.
  std::string text;
  constexpr std::size_t kChunk = std::size_t{1} << 16;
  for (;;) {
    const std::size_t have = text.size();
    const std::size_t want = std::min(kChunk, kMaxInputBytes + 1 - have);
    text.resize(have + want);
    const ssize_t got = ::read(in.get(), text.data() + have, want);
    if (got < 0 && errno == EINTR) {
      text.resize(have);
      continue;
    }
    if (got < 0) throw io_error(fmt::format("cannot read '{}': {}", name, std::strerror(errno)));
    text.resize(have + static_cast<std::size_t>(got));
    if (got == 0) break;
    if (text.size() > kMaxInputBytes) throw io_error(fmt::format("cannot read '{}': more than {}", name, limit_text()));
  }
  return text;
}

void write_text_file(const fs::path& path, std::string_view text) {
  const std::string shown = path.string();
  // A device or a pipe (/dev/stdout, /dev/null, a FIFO) is written as it is:
  // replacing it by a regular file would break it, and it has no half-written state.
  if (struct stat st{}; ::stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode)) {
    Descriptor out(::open(path.c_str(), O_WRONLY | O_CLOEXEC));
    if (out.get() < 0) throw io_error(fmt::format("cannot write '{}': {}", shown, std::strerror(errno)));
    int error = write_all(out.get(), text);
    if (const int closing = out.close(); error == 0) error = closing;
    if (error != 0) throw io_error(fmt::format("cannot write '{}': {}", shown, std::strerror(error)));
    return;
  }
  const fs::path target = write_target(path);
  struct stat existing {};
  const bool exists = ::stat(target.c_str(), &existing) == 0;
  if (exists && S_ISDIR(existing.st_mode))
    throw io_error(fmt::format("cannot write '{}': {}", shown, std::strerror(EISDIR)));

  fs::path temp;
  Descriptor out = create_temp(target, temp, shown);
  // Every failure from here removes the temporary file and reports its own errno
  // (read before the clean-up, which may set another).
  const auto fail = [&](int error) {
    out.close();
    ::unlink(temp.c_str());
    throw io_error(fmt::format("cannot write '{}': {}", shown, std::strerror(error)));
  };
  if (exists && S_ISREG(existing.st_mode) && ::fchmod(out.get(), existing.st_mode & 07777) != 0) fail(errno);
  if (const int error = write_all(out.get(), text); error != 0) fail(error);
  if (const int error = out.close(); error != 0) fail(error);
  if (::rename(temp.c_str(), target.c_str()) != 0) fail(errno);
}

}  // namespace smelt
