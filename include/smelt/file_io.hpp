// Reading and writing whole text files, bounded: every reader of configs, runs
// and law files takes its input through these, and every writer its output.
#pragma once

#include <cstddef>
#include <filesystem>
#include <string>
#include <string_view>

namespace smelt {

// The most bytes any reader takes in: JSON costs 3 to 24 times its size in
// memory once parsed, and a stream such as /dev/zero never ends.
inline constexpr std::size_t kMaxInputBytes = std::size_t{64} << 20;  // 64 MiB

// Writes through a uniquely named temporary file in the same directory and a
// rename, so a failure leaves nothing half-written and touches no other file.
// A symbolic link is written through (its target is replaced, the link kept);
// a directory is refused. Throws io_error naming the path and the cause.
void write_text_file(const std::filesystem::path& path, std::string_view text);

// Reads a whole file, or standard input for "-". Throws io_error naming the
// path and the cause: cannot open, a directory, a read error, or more than
// kMaxInputBytes.
std::string read_text_file(const std::filesystem::path& path);

// How messages name a file argument: "<stdin>" for "-", else the path.
std::string source_name(const std::filesystem::path& path);

}  // namespace smelt
