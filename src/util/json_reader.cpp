#include "util/json_reader.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "smelt/detail/excerpt.hpp"
#include "smelt/error.hpp"

namespace smelt::detail {

namespace {

// Appends `v` compactly, stopping once `out` holds more than `limit` bytes.
void render(const nlohmann::json& v, std::string& out, std::size_t limit) {
  if (out.size() > limit) return;
  constexpr auto kReplace = nlohmann::json::error_handler_t::replace;
  if (v.is_string()) {
    // Only the head of a long string is escaped: the rest would be cut anyway.
    out += nlohmann::json(excerpt(v.get_ref<const std::string&>(), limit)).dump(-1, ' ', false, kReplace);
  } else if (v.is_array()) {
    out += '[';
    for (std::size_t i = 0; i < v.size() && out.size() <= limit; ++i) {
      if (i > 0) out += ',';
      render(v[i], out, limit);
    }
    out += ']';
  } else if (v.is_object()) {
    out += '{';
    bool first = true;
    for (auto it = v.begin(); it != v.end() && out.size() <= limit; ++it, first = false) {
      if (!first) out += ',';
      out += nlohmann::json(excerpt(it.key(), limit)).dump(-1, ' ', false, kReplace) + ':';
      render(it.value(), out, limit);
    }
    out += '}';
  } else {
    out += v.dump();  // a number, a boolean or null: a few bytes
  }
}

}  // namespace

std::string json_excerpt(const nlohmann::json& value) {
  std::string out;
  render(value, out, kExcerptBytes);
  return excerpt(out);
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
  // Close means at most a third of the word differs (at least 2 edits allowed).
  const std::size_t allowed = std::max<std::size_t>(2, word.size() / 3);
  std::string best;
  std::size_t best_distance = std::numeric_limits<std::size_t>::max();
  for (const auto& k : known) {
    // Lengths further apart than that are never close: skipping them also keeps
    // a 60 MB key from costing an edit distance against every known word.
    if (k.size() > word.size() + allowed || word.size() > k.size() + allowed) continue;
    const std::size_t d = edit_distance(word, k);
    if (d < best_distance) best_distance = d, best = k;
  }
  return best_distance <= allowed ? best : "";
}

JsonObject::JsonObject(const nlohmann::json& json, std::string path, Violations& violations)
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
    if (required) violation(key, "", "missing (required)");
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
  violation(key, json_excerpt(*v), "must be an integer");
  return fallback.value_or(0);
}

double JsonObject::number(std::string_view key, std::optional<double> fallback) {
  const auto* v = find(key, !fallback);
  if (!v) return fallback.value_or(0.0);
  if (v->is_number()) return v->get<double>();
  violation(key, json_excerpt(*v), "must be a number");
  return fallback.value_or(0.0);
}

bool JsonObject::boolean(std::string_view key, std::optional<bool> fallback) {
  const auto* v = find(key, !fallback);
  if (!v) return fallback.value_or(false);
  if (v->is_boolean()) return v->get<bool>();
  violation(key, json_excerpt(*v), "must be true or false");
  return fallback.value_or(false);
}

std::string JsonObject::string(std::string_view key, std::optional<std::string> fallback) {
  const auto* v = find(key, !fallback);
  if (!v) return fallback.value_or("");
  if (v->is_string()) return v->get<std::string>();
  violation(key, json_excerpt(*v), "must be a string");
  return fallback.value_or("");
}

std::optional<JsonObject> JsonObject::object(std::string_view key, bool optional) {
  const auto* v = find(key, !optional);
  if (!v) return std::nullopt;
  if (!v->is_object()) {
    violation(key, json_excerpt(*v), "must be an object");
    return std::nullopt;
  }
  return JsonObject(*v, field(key), *violations_);
}

void JsonObject::reject_unknown_keys() {
  for (const auto& [key, value] : json_->items()) {
    if (std::find(known_.begin(), known_.end(), key) != known_.end()) continue;
    const std::string hint = nearest(key, known_);
    violation(excerpt(key), "", hint.empty() ? "unknown key" : fmt::format("unknown key (did you mean \"{}\"?)", hint));
  }
}

}  // namespace smelt::detail
