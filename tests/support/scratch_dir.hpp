// A folder of this test process's own under the system's temporary directory,
// for the files the tests write: its name is drawn at random and created
// exclusively, so two runs at once (or a file someone else left there) never
// share a path. It is removed when the process exits.
#pragma once

#include <cstdint>
#include <filesystem>
#include <random>
#include <stdexcept>
#include <string>

namespace smelt::test {

inline const std::filesystem::path& scratch_dir() {
  struct Dir {
    std::filesystem::path path;
    Dir() {
      std::random_device seed;
      std::mt19937_64 draw((std::uint64_t{seed()} << 32) ^ seed());
      for (int attempt = 0; attempt < 100; ++attempt) {
        path = std::filesystem::temp_directory_path() / ("smelt-tests-" + std::to_string(draw()));
        if (std::filesystem::create_directory(path)) return;  // false: the name was taken
      }
      throw std::runtime_error("cannot create a scratch folder under " +
                               std::filesystem::temp_directory_path().string());
    }
    ~Dir() {
      std::error_code ignored;
      std::filesystem::remove_all(path, ignored);
    }
    Dir(const Dir&) = delete;
    Dir& operator=(const Dir&) = delete;
  };
  static const Dir dir;
  return dir.path;
}

// `name` inside scratch_dir().
inline std::filesystem::path scratch_path(const std::string& name) { return scratch_dir() / name; }

}  // namespace smelt::test
