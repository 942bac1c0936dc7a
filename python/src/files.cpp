// Files as the library reads them, for the Python side's own readers (the
// plots' reports and law files, export_hf's config and its family): the same
// bounded read (kMaxInputBytes, standard input for "-") and bounded JSON parse
// (depth, count of values, numbers a double holds) as every C++ reader, and
// the same "while reading WHAT 'PATH'" context on each error.
#include <filesystem>

#include <fmt/format.h>

#include "bindings.hpp"
#include "smelt/config_io.hpp"
#include "smelt/detail/excerpt.hpp"
#include "smelt/detail/json_text.hpp"
#include "smelt/detail/violations.hpp"
#include "smelt/error.hpp"
#include "smelt/export.hpp"
#include "smelt/file_io.hpp"

namespace smelt::python {
namespace {

// Reads `path` and runs `parse` on its text; an error from either carries
// "while reading WHAT 'SOURCE'", as read_config and read_laws write it.
template <class Parse>
auto read_within(const std::string& path, const std::string& what, Parse&& parse) {
  const std::string source = source_name(path);
  const std::string where = fmt::format("while reading {} '{}'", what, source);
  try {
    const std::string text = read_text_file(path);
    return parse(text, source);
  } catch (const config_error& e) {
    detail::throw_within(where, e.violations());
  } catch (const io_error& e) {
    throw io_error(fmt::format("{}: {}", where, e.what()));
  }
}

}  // namespace

std::string read_json_text(const std::string& path, const std::string& what) {
  return read_within(path, what, [](const std::string& text, const std::string& source) {
    detail::check_json_text(text, source);  // the bounds, and the parser's own line:column on malformed text
    // What the parser read, for Python's json.loads: nlohmann skips a UTF-8 byte order mark (which json.loads
    // refuses), and its lexer takes a NUL byte for the end of the input, so that what follows one is never read.
    constexpr std::string_view kBom = "\xEF\xBB\xBF";
    std::string_view read = text;
    if (read.substr(0, 3) == kBom) read.remove_prefix(3);
    return std::string(read.substr(0, read.find('\0')));
  });
}

std::pair<CheckedConfig, std::string> read_config_with_family(const std::string& path) {
  // One read: standard input cannot be read twice (the CLI's export does the same).
  return read_within(path, "config", [](const std::string& text, const std::string& source) {
    // Parsed once: parse_config's reading, then hf_family_of's answer (the model_type a Hugging Face config
    // names; the reading has refused one that is not a string) from the same JSON.
    ConfigWithFamily read = parse_config_with_family(text, source);
    return std::pair{std::move(read.config), std::move(read.model_type)};
  });
}

std::string name_excerpt(const std::string& name, std::size_t limit) { return detail::name_excerpt(name, limit); }

}  // namespace smelt::python
