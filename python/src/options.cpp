#include "options.hpp"

#include <cstdint>
#include <limits>

#include <fmt/format.h>

#include "smelt/detail/excerpt.hpp"
#include "smelt/detail/nearest.hpp"

namespace smelt::python {
namespace {

using json = nlohmann::ordered_json;

bool is_int64(const json& v) {
  if (!v.is_number_integer()) return false;
  return !v.is_number_unsigned() ||
         v.get<std::uint64_t>() <= static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max());
}

bool is_real(const json& v) { return v.is_number() && !v.is_boolean(); }

// One value or a pair (lo, hi) as a Range (KnobRange, RatioRange); false for anything else.
template <class Range, class IsItem>
bool read_range(const json& v, IsItem is_item, Range& out) {
  using T = decltype(Range::lo);
  if (is_item(v)) {
    out = Range{v.get<T>(), v.get<T>()};
    return true;
  }
  if (!(v.is_array() && v.size() == 2 && is_item(v[0]) && is_item(v[1]))) return false;
  out = Range{v[0].get<T>(), v[1].get<T>()};
  return true;
}

// A value as messages show it, cut (a hostile value can be megabytes long).
std::string shown(const json& v) { return detail::excerpt(v.dump()); }

}  // namespace

Keywords::Keywords(const std::string& text, std::string function) : function_(std::move(function)) {
  kw_ = json::parse(text, nullptr, false);
  if (!kw_.is_object()) throw config_error(fmt::format("{}: keyword arguments must be an object", function_));
}

const json* Keywords::take(const char* key) {
  known_.insert(key);
  const auto it = kw_.find(key);
  return it == kw_.end() || it->is_null() ? nullptr : &*it;  // None is the default
}

void Keywords::type_error(const char* owner, const char* key, const json& v, const char* rule) {
  errors_.add(fmt::format("{}::{}", owner, key), shown(v), rule);
}

template <class T>
void Keywords::integer(const char* owner, const char* key, T& out) {
  if (const json* v = take(key)) {
    if (is_int64(*v))
      out = static_cast<T>(v->get<std::int64_t>());
    else
      type_error(owner, key, *v, "must be an integer");
  }
}

void Keywords::number(const char* owner, const char* key, double& out) {
  if (const json* v = take(key)) {
    if (v->is_number() && !v->is_boolean())
      out = v->get<double>();
    else
      type_error(owner, key, *v, "must be a number");
  }
}

void Keywords::boolean(const char* owner, const char* key, bool& out) {
  if (const json* v = take(key)) {
    if (v->is_boolean())
      out = v->get<bool>();
    else
      type_error(owner, key, *v, "must be True or False");
  }
}

void Keywords::value(const char* owner, const char* key, std::int64_t& out) { integer(owner, key, out); }

void Keywords::value(const char* owner, const char* key, std::optional<std::int64_t>& out) {
  if (const json* v = take(key)) {
    if (is_int64(*v))
      out = v->get<std::int64_t>();
    else
      type_error(owner, key, *v, "must be an integer");
  }
}

void Keywords::value(const char* owner, const char* key, std::uint64_t& out) {
  if (const json* v = take(key)) {
    if (v->is_number_unsigned() || (is_int64(*v) && v->get<std::int64_t>() >= 0))
      out = v->get<std::uint64_t>();
    else
      type_error(owner, key, *v, "must be an integer in [0, 2^64)");
  }
}

void Keywords::value(const char* owner, const char* key, double& out) { number(owner, key, out); }

void Keywords::value(const char* owner, const char* key, std::optional<double>& out) {
  if (const json* v = take(key)) {
    if (v->is_number() && !v->is_boolean())
      out = v->get<double>();
    else
      type_error(owner, key, *v, "must be a number");
  }
}

void Keywords::value(const char* owner, const char* key, bool& out) { boolean(owner, key, out); }

void Keywords::value(const char* owner, const char* key, std::optional<KnobRange>& out) {
  if (const json* v = take(key)) {
    KnobRange r;
    if (read_range(*v, is_int64, r))
      out = r;
    else
      type_error(owner, key, *v, "must be an integer or a pair (lo, hi) of integers");
  }
}

void Keywords::value(const char* owner, const char* key, RatioRange& out) {
  if (const json* v = take(key); v && !read_range(*v, is_real, out))
    type_error(owner, key, *v, "must be a ratio or a pair (lo, hi) of ratios");
}

void Keywords::value(const char* owner, const char* key, FfnScaling& out) {
  if (const json* v = take(key)) {
    if (v->is_string())
      errors_.collect([&] { out = parse_ffn_scaling(v->get<std::string>(), fmt::format("{}::{}", owner, key)); });
    else
      type_error(owner, key, *v, "must be \"proportional\", \"fixed\" or \"searched\"");
  }
}

// A word of an enum (or a device's capacity): `parse` reads it, naming the field.
template <class T, class Parse>
void Keywords::word(const char* owner, const char* key, T& out, Parse parse, const char* rule) {
  if (const json* v = take(key)) {
    if (v->is_string())
      errors_.collect([&] { out = parse(v->get<std::string>(), fmt::format("{}::{}", owner, key)); });
    else
      type_error(owner, key, *v, rule);
  }
}

void Keywords::value(const char* owner, const char* key, Dtype& out) {
  word(owner, key, out, parse_dtype, "must be \"fp32\", \"bf16\", \"fp16\" or \"auto\"");
}
void Keywords::value(const char* owner, const char* key, Recompute& out) {
  word(owner, key, out, parse_recompute, "must be \"none\", \"selective\" or \"full\"");
}
void Keywords::value(const char* owner, const char* key, MemoryConvention& out) {
  word(owner, key, out, parse_memory_convention, "must be \"smelt\" or \"korthikanti\"");
}
void Keywords::value(const char* owner, const char* key, DeviceMemory& out) {
  if (const json* v = take(key)) {
    if (is_int64(*v) && v->get<std::int64_t>() >= 0)
      out = {v->get<std::int64_t>(), ""};
    else if (v->is_string())
      errors_.collect([&] { out = parse_device_memory(v->get<std::string>(), fmt::format("{}::{}", owner, key)); });
    else
      type_error(owner, key, *v,
                 "must be bytes (an integer of at least 0), bytes with a unit (\"141GiB\") or a device");
  }
}

void Keywords::value(const char* owner, const char* key, std::string& out) {
  if (const json* v = take(key)) {
    if (v->is_string())
      out = v->get<std::string>();
    else
      type_error(owner, key, *v, "must be a string");
  }
}

void Keywords::value(const char* owner, const char* key, LoopSpan& out) {
  if (const json* v = take(key)) {
    if (v->is_string())
      errors_.collect([&] { out = parse_loop_span(v->get<std::string>(), fmt::format("{}::{}", owner, key)); });
    else if (v->is_array() && v->size() == 2 && is_int64((*v)[0]) && is_int64((*v)[1]))
      out = LoopSpan::layers((*v)[0].get<std::int64_t>(), (*v)[1].get<std::int64_t>());
    else
      type_error(owner, key, *v,
                 "must be \"middle-half\", \"full\", a fraction \"0.25\", layers \"4-9\" or a pair (first, last)");
  }
}

void Keywords::value(const char* owner, const char* key, std::vector<Budget>& out) {
  const json* v = take(key);
  if (!v) return;
  const json list = v->is_string() ? json::array({*v}) : *v;
  if (!list.is_array()) return type_error(owner, key, *v, "must be a list of budgets: \"flops\", \"params\", \"kv\"");
  out.clear();
  for (const json& word : list) {
    if (!word.is_string()) {
      type_error(owner, key, word, "must be a budget: \"flops\", \"params\" or \"kv\"");
      continue;
    }
    errors_.collect([&] {
      const Budget b = parse_budget(word.get<std::string>(), fmt::format("{}::{}", owner, key));
      if (std::find(out.begin(), out.end(), b) == out.end()) out.push_back(b);
    });
  }
}

// A list of items (one item is a list of one): "must be ITEM or a list of them", each item "must be ITEM".
template <class T, class IsItem>
void Keywords::list(const char* owner, const char* key, std::vector<T>& out, IsItem is_item, const char* item) {
  const json* v = take(key);
  if (!v) return;
  const json items = is_item(*v) ? json::array({*v}) : *v;
  if (!items.is_array()) return type_error(owner, key, *v, fmt::format("must be {} or a list of them", item).c_str());
  out.clear();
  for (const json& x : items) {
    if (is_item(x))
      out.push_back(x.get<T>());
    else
      type_error(owner, key, x, fmt::format("must be {}", item).c_str());
  }
}

void Keywords::value(const char* owner, const char* key, std::vector<std::int64_t>& out) {
  list(owner, key, out, is_int64, "an integer");
}

void Keywords::value(const char* owner, const char* key, std::vector<double>& out) {
  list(owner, key, out, is_real, "a number");
}

std::string Keywords::text(const char* key, const std::string& fallback) {
  const json* v = take(key);
  if (!v) return fallback;
  if (v->is_string()) return v->get<std::string>();
  errors_.add(key, shown(*v), "must be a string");
  return fallback;
}

std::vector<std::pair<std::string, std::string>> Keywords::renames(const char* key) {
  std::vector<std::pair<std::string, std::string>> out;
  const json* v = take(key);
  if (!v) return out;
  if (!v->is_object()) {
    errors_.add(key, shown(*v), "must be a dict of column names {\"OLD\": \"NEW\"}");
    return out;
  }
  for (const auto& [from, to] : v->items()) {
    if (to.is_string())
      out.emplace_back(from, to.get<std::string>());
    else
      errors_.add(fmt::format("{}[\"{}\"]", key, detail::excerpt(from)), shown(to), "must be a column name");
  }
  return out;
}

void Keywords::finish() {
  const std::vector<std::string> known(known_.begin(), known_.end());
  for (const auto& [key, value] : kw_.items()) {
    if (known_.count(key) > 0) continue;
    // The nearest name, or one this key begins ("tolerance" for tolerance_pct).
    std::string hint = detail::nearest(key, known);
    for (const std::string& k : known)
      if (hint.empty() && k.starts_with(key + "_")) hint = k;
    errors_.add(fmt::format("{}() got an unknown keyword argument '{}'{}", function_, detail::excerpt(key),
                            hint.empty() ? "" : fmt::format(" (did you mean '{}'?)", hint)));
  }
  errors_.throw_if_any();
}

}  // namespace smelt::python
