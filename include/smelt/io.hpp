// Reading and writing model configs: smelt's native JSON (docs/config.md) and
// Hugging Face config.json files, detected from their keys.
#pragma once

#include <cstddef>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "smelt/config.hpp"

namespace smelt {

enum class ConfigFormat { native, huggingface };

// Native JSON: a top-level "schema_version"; Hugging Face: a "model_type".
// Every parse validates the result; failures throw config_error (bad values,
// every violation listed; malformed JSON gives line and column) or io_error
// (a file that cannot be read).
ModelConfig parse_config(std::string_view text, std::string_view source = "<config>");
ModelConfig parse_native_config(std::string_view text, std::string_view source = "<config>");
ModelConfig parse_hf_config(std::string_view text, std::string_view source = "<config.json>");
ConfigFormat detect_format(std::string_view text, std::string_view source = "<config>");

// Reads a file of either format; errors carry "while reading config 'PATH'".
// "-" reads standard input (named "<stdin>" in messages).
ModelConfig read_config(const std::filesystem::path& path);

// The model_type values parse_hf_config understands, sorted.
std::vector<std::string> supported_hf_model_types();

// Canonical native JSON (fixed key order, two-space indent, final newline):
// to_json(parse_native_config(to_json(c))) == to_json(c), byte for byte.
std::string to_json(const ModelConfig& config);

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
