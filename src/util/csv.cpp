#include "util/csv.hpp"

#include <fmt/format.h>

#include "smelt/error.hpp"
#include "util/json_reader.hpp"

namespace smelt::detail {
namespace {

std::string trim(std::string_view s) {
  const auto first = s.find_first_not_of(" \t\r");
  if (first == std::string_view::npos) return "";
  return std::string(s.substr(first, s.find_last_not_of(" \t\r") - first + 1));
}

}  // namespace

std::vector<std::vector<std::string>> read_csv(std::string_view text, std::string_view source) {
  std::vector<std::vector<std::string>> records;
  std::vector<std::string> record;
  std::string field;
  bool quoted = false, any = false;
  std::size_t line = 1, fields = 0;
  // As many fields as a JSON input may hold values: each costs about 90 bytes
  // held, so 64 MiB of "1\n" would take 3 GB.
  auto count_field = [&] {
    if (++fields > kMaxJsonValues)
      throw config_error(
          fmt::format("{}:{}: more than {} CSV fields (the limit on input)", source, line, kMaxJsonValues));
  };
  auto end_record = [&] {
    count_field();
    record.push_back(quoted ? field : trim(field));
    if (record.size() > 1 || !record[0].empty() || any) records.push_back(std::move(record));
    record.clear(), field.clear(), quoted = any = false;
  };
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char ch = text[i];
    if (ch == '"' && trim(field).empty() && !quoted) {  // an opening quote
      field.clear(), quoted = any = true;
      for (++i;; ++i) {
        if (i >= text.size()) throw config_error(fmt::format("{}:{}: unterminated quoted field", source, line));
        if (text[i] == '"' && i + 1 < text.size() && text[i + 1] == '"') {
          field += '"', ++i;
        } else if (text[i] == '"') {
          break;
        } else {
          if (text[i] == '\n') ++line;
          field += text[i];
        }
      }
      const auto next = text.find_first_not_of(" \t\r", i + 1);
      if (next != std::string_view::npos && text[next] != ',' && text[next] != '\n')
        throw config_error(fmt::format("{}:{}: text after a closing quote", source, line));
    } else if (ch == ',') {
      count_field();
      record.push_back(quoted ? field : trim(field));
      field.clear(), quoted = false, any = true;
    } else if (ch == '\n') {
      end_record();
      ++line;
    } else if (!quoted) {
      field += ch;
    }
  }
  if (!field.empty() || !record.empty() || any) end_record();
  return records;
}

// Appends only: GCC 12 at -O3 reports a false -Wrestrict overlap inside
// memcpy for `"," + std::string` (its bug 105651), which -Werror makes fatal.
std::string csv_field(std::string_view text) {
  if (text.find_first_of(",\"\r\n") == std::string_view::npos) return std::string(text);
  std::string out = "\"";
  for (const char c : text) {
    if (c == '"') out += '"';
    out += c;
  }
  out += '"';
  return out;
}

std::string csv_record(const std::vector<std::string>& fields) {
  std::string out;
  for (std::size_t i = 0; i < fields.size(); ++i) {
    if (i > 0) out += ',';
    out += csv_field(fields[i]);
  }
  out += '\n';
  return out;
}

}  // namespace smelt::detail
