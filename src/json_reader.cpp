#include "json_reader.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "smelt/error.hpp"

namespace smelt::detail {

nlohmann::json parse_json_text(std::string_view text, std::string_view source) {
  try {
    return nlohmann::json::parse(text.begin(), text.end());
  } catch (const nlohmann::json::parse_error& e) {
    // nlohmann gives a byte offset (1-based, one past the offending byte).
    const std::size_t at = std::min<std::size_t>(e.byte > 0 ? e.byte - 1 : 0, text.size());
    std::size_t line = 1;
    std::size_t column = 1;
    for (std::size_t i = 0; i < at; ++i) {
      if (text[i] == '\n') {
        ++line;
        column = 1;
      } else {
        ++column;
      }
    }
    std::string what = e.what();
    // Keep nlohmann's explanation, drop its "[json.exception...] parse error at ...: " prefix.
    const auto cut = what.find(": syntax error");
    if (cut != std::string::npos) what = what.substr(cut + 2);
    throw config_error(fmt::format("{}:{}:{}: malformed JSON: {}", source, line, column, what));
  }
}

namespace {
std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = up;
    }
  }
  return row[b.size()];
}
}  // namespace

std::string nearest(std::string_view word, const std::vector<std::string>& known) {
  std::string best;
  std::size_t best_distance = std::numeric_limits<std::size_t>::max();
  for (const auto& k : known) {
    const std::size_t d = edit_distance(word, k);
    if (d < best_distance) best_distance = d, best = k;
  }
  // Close means at most a third of the word differs (at least 2 edits allowed).
  return best_distance <= std::max<std::size_t>(2, word.size() / 3) ? best : "";
}

JsonObject::JsonObject(const nlohmann::json& json, std::string path, std::vector<std::string>& violations)
    : json_(&json), path_(std::move(path)), violations_(&violations) {}

std::string JsonObject::field(std::string_view key) const {
  return path_.empty() ? std::string(key) : fmt::format("{}.{}", path_, key);
}

bool JsonObject::has(std::string_view key) const { return json_->contains(key); }

const nlohmann::json* JsonObject::raw(std::string_view key) { return find(key, false); }

const nlohmann::json* JsonObject::find(std::string_view key, bool required) {
  known_.emplace_back(key);
  const auto it = json_->find(key);
  if (it == json_->end() || it->is_null()) {
    if (required) violation(fmt::format("{}: missing (required)", field(key)));
    return nullptr;
  }
  return &*it;
}

std::int64_t JsonObject::integer(std::string_view key, std::optional<std::int64_t> fallback) {
  const auto* v = find(key, !fallback);
  if (!v) return fallback.value_or(0);
  if (v->is_number_integer() &&
      !(v->is_number_unsigned() && v->get<std::uint64_t>() > static_cast<std::uint64_t>(INT64_MAX)))
    return v->get<std::int64_t>();
  if (v->is_number_float()) {
    const double d = v->get<double>();
    if (std::isfinite(d) && d == std::floor(d) && std::fabs(d) < 9.0e15) return static_cast<std::int64_t>(d);
  }
  violation(fmt::format("{} = {}: must be an integer", field(key), v->dump()));
  return fallback.value_or(0);
}

double JsonObject::number(std::string_view key, std::optional<double> fallback) {
  const auto* v = find(key, !fallback);
  if (!v) return fallback.value_or(0.0);
  if (v->is_number()) return v->get<double>();
  violation(fmt::format("{} = {}: must be a number", field(key), v->dump()));
  return fallback.value_or(0.0);
}

bool JsonObject::boolean(std::string_view key, std::optional<bool> fallback) {
  const auto* v = find(key, !fallback);
  if (!v) return fallback.value_or(false);
  if (v->is_boolean()) return v->get<bool>();
  violation(fmt::format("{} = {}: must be true or false", field(key), v->dump()));
  return fallback.value_or(false);
}

std::string JsonObject::string(std::string_view key, std::optional<std::string> fallback) {
  const auto* v = find(key, !fallback);
  if (!v) return fallback.value_or("");
  if (v->is_string()) return v->get<std::string>();
  violation(fmt::format("{} = {}: must be a string", field(key), v->dump()));
  return fallback.value_or("");
}

std::optional<JsonObject> JsonObject::object(std::string_view key, bool optional) {
  const auto* v = find(key, !optional);
  if (!v) return std::nullopt;
  if (!v->is_object()) {
    violation(fmt::format("{} = {}: must be an object", field(key), v->dump()));
    return std::nullopt;
  }
  return JsonObject(*v, field(key), *violations_);
}

void JsonObject::reject_unknown_keys() {
  for (const auto& [key, value] : json_->items()) {
    if (std::find(known_.begin(), known_.end(), key) != known_.end()) continue;
    const std::string hint = nearest(key, known_);
    violation(hint.empty() ? fmt::format("{}: unknown key", field(key))
                           : fmt::format("{}: unknown key (did you mean \"{}\"?)", field(key), hint));
  }
}

}  // namespace smelt::detail
