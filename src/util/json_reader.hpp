// Reading JSON objects field by field with errors that name the JSON path, the
// value and the rule, collected so that every violation is reported at once.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "smelt/detail/json_text.hpp"
#include "smelt/detail/nearest.hpp"
#include "smelt/detail/violations.hpp"
#include "smelt/error.hpp"

namespace smelt::detail {

// Parses JSON text (json_parse.cpp), within the bounds of
// include/smelt/detail/json_text.hpp (kMaxJsonDepth, kMaxJsonValues). Every failure is a config_error
// "SOURCE:LINE:COLUMN: ...": malformed JSON, nesting deeper than kMaxJsonDepth,
// a number beyond a double; "SOURCE: ..." for more than kMaxJsonValues values;
// text longer than kMaxInputBytes is refused unread.
nlohmann::json parse_json_text(std::string_view text, std::string_view source);

// A JSON value as a message shows it: compact, cut to kExcerptBytes and "...",
// without ever rendering more than that (a value may be 60 MB).
std::string json_excerpt(const nlohmann::json& value);

class JsonObject {
 public:
  // `path` is the prefix for messages ("" at the root, "attention" below it).
  JsonObject(const nlohmann::json& json, std::string path, Violations& violations);

  bool has(std::string_view key) const;
  const nlohmann::json* raw(std::string_view key);  // marks the key as known

  // Typed reads. Without a fallback, a missing key is a violation. On any
  // violation the fallback (or zero) is returned so reading can go on.
  std::int64_t integer(std::string_view key, std::optional<std::int64_t> fallback = std::nullopt);
  double number(std::string_view key, std::optional<double> fallback = std::nullopt);
  bool boolean(std::string_view key, std::optional<bool> fallback = std::nullopt);
  std::string string(std::string_view key, std::optional<std::string> fallback = std::nullopt);
  // A nested object; nullopt (and a violation unless optional) when absent or not an object.
  std::optional<JsonObject> object(std::string_view key, bool optional = false);

  // Reports every key that was never read, suggesting the nearest read one.
  void reject_unknown_keys();

  std::string field(std::string_view key) const;  // "path.key"
  void violation(Violation v) { violations_->add(std::move(v)); }
  // A violation of `key` in this object: "path.key = value: rule".
  void violation(std::string_view key, std::string value, std::string rule) {
    violation(Violation(field(key), std::move(value), std::move(rule)));
  }
  Violations& violations() { return *violations_; }
  const nlohmann::json& json() const { return *json_; }

 private:
  const nlohmann::json* find(std::string_view key, bool required);

  const nlohmann::json* json_;
  std::string path_;
  Violations* violations_;
  std::vector<std::string> known_;
};

}  // namespace smelt::detail
