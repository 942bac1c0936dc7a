#include "options.hpp"

#include <cstdint>
#include <limits>

#include <fmt/format.h>

#include "smelt/excerpt.hpp"
#include "smelt/nearest.hpp"

namespace smelt::python {
namespace {

using json = nlohmann::ordered_json;

bool is_int64(const json& v) {
  if (!v.is_number_integer()) return false;
  return !v.is_number_unsigned() ||
         v.get<std::uint64_t>() <= static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max());
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

void Keywords::range(const char* key, std::optional<KnobRange>& out) {
  const json* v = take(key);
  if (!v) return;
  if (is_int64(*v)) {
    out = KnobRange{v->get<std::int64_t>(), v->get<std::int64_t>()};
  } else if (v->is_array() && v->size() == 2 && is_int64((*v)[0]) && is_int64((*v)[1])) {
    out = KnobRange{(*v)[0].get<std::int64_t>(), (*v)[1].get<std::int64_t>()};
  } else {
    type_error("SearchSpace", key, *v, "must be an integer or a pair (lo, hi) of integers");
  }
}

void Keywords::read(SearchSpace& s) {
  range("hidden", s.hidden);
  range("experts", s.experts);
  range("head_dim", s.head_dim);
  range("kv_heads", s.kv_heads);
  range("heads", s.heads);
  range("expert_width", s.expert_width);
  integer("SearchSpace", "align_hidden", s.align_hidden);
  integer("SearchSpace", "align_experts", s.align_experts);
  integer("SearchSpace", "align_head_dim", s.align_head_dim);
  integer("SearchSpace", "min_head_dim", s.min_head_dim);
  integer("SearchSpace", "max_head_dim", s.max_head_dim);
  integer("SearchSpace", "align_ffn", s.align_ffn);
  boolean("SearchSpace", "free_heads", s.free_heads);
  if (const json* v = take("attention_ratio")) {
    if (v->is_number() && !v->is_boolean())
      s.attention_ratio = {v->get<double>(), v->get<double>()};
    else if (v->is_array() && v->size() == 2 && (*v)[0].is_number() && (*v)[1].is_number() && !(*v)[0].is_boolean() &&
             !(*v)[1].is_boolean())
      s.attention_ratio = {(*v)[0].get<double>(), (*v)[1].get<double>()};
    else
      type_error("SearchSpace", "attention_ratio", *v, "must be a ratio or a pair (lo, hi) of ratios");
  }
  if (const json* v = take("ffn")) {
    if (v->is_string())
      errors_.collect([&] { s.ffn = parse_ffn_scaling(v->get<std::string>(), "SearchSpace::ffn"); });
    else
      type_error("SearchSpace", "ffn", *v, "must be \"proportional\", \"fixed\" or \"searched\"");
  }
}

void Keywords::read(MatchOptions& o) {
  if (const json* v = take("match")) {
    const json list = v->is_string() ? json::array({*v}) : *v;
    if (!list.is_array()) {
      type_error("MatchOptions", "match", *v, "must be a list of budgets: \"flops\", \"params\", \"kv\"");
    } else {
      o.match.clear();
      for (const json& word : list) {
        if (!word.is_string()) {
          type_error("MatchOptions", "match", word, "must be a budget: \"flops\", \"params\" or \"kv\"");
          continue;
        }
        errors_.collect([&] {
          const Budget b = parse_budget(word.get<std::string>(), "MatchOptions::match");
          if (std::find(o.match.begin(), o.match.end(), b) == o.match.end()) o.match.push_back(b);
        });
      }
    }
  }
  boolean("MatchOptions", "flops_with_head", o.flops_with_head);
  if (const json* v = take("contexts")) {
    const json list = is_int64(*v) ? json::array({*v}) : *v;
    if (!list.is_array()) type_error("MatchOptions", "contexts", *v, "must be a token count or a list of them");
    for (const json& t : list.is_array() ? list : json::array()) {
      if (is_int64(t))
        o.contexts.push_back(t.get<std::int64_t>());
      else
        type_error("MatchOptions", "contexts", t, "must be a token count (an integer)");
    }
  }
  number("MatchOptions", "tolerance_pct", o.tolerance_pct);
  integer("MatchOptions", "top", o.top);
  boolean("MatchOptions", "relaxations", o.relaxations);
}

void Keywords::read(LoopRecipe& r) {
  if (const json* v = take("span")) {
    if (v->is_string())
      errors_.collect([&] { r.span = parse_loop_span(v->get<std::string>(), "LoopRecipe::span"); });
    else if (v->is_array() && v->size() == 2 && is_int64((*v)[0]) && is_int64((*v)[1]))
      r.span = LoopSpan::layers((*v)[0].get<std::int64_t>(), (*v)[1].get<std::int64_t>());
    else
      type_error("LoopRecipe", "span", *v,
                 "must be \"middle-half\", \"full\", a fraction \"0.25\", layers \"4-9\" or a pair (first, last)");
  }
  integer("LoopRecipe", "loops", r.loops);
  if (const json* v = take("residual_scale")) {
    if (v->is_number() && !v->is_boolean())
      r.residual_scale = v->get<double>();
    else
      type_error("LoopRecipe", "residual_scale", *v, "must be a number");
  }
  if (const json* v = take("depth")) {
    if (is_int64(*v))
      r.depth = v->get<std::int64_t>();
    else
      type_error("LoopRecipe", "depth", *v, "must be an integer");
  }
}

void Keywords::read(SweepOptions& o) {
  const auto numbers = [&](const char* key, std::vector<double>& out) {
    const json* v = take(key);
    if (!v) return;
    if (!v->is_array()) return type_error("SweepOptions", key, *v, "must be a list of numbers");
    out.clear();
    for (const json& x : *v) {
      if (x.is_number() && !x.is_boolean())
        out.push_back(x.get<double>());
      else
        type_error("SweepOptions", key, x, "must be a number");
    }
  };
  numbers("spans", o.spans);
  numbers("depths", o.depths);
  if (const json* v = take("loops")) {
    if (!v->is_array()) return type_error("SweepOptions", "loops", *v, "must be a list of integers");
    o.loops.clear();
    for (const json& x : *v) {
      if (is_int64(x))
        o.loops.push_back(x.get<std::int64_t>());
      else
        type_error("SweepOptions", "loops", x, "must be an integer");
    }
  }
}

void Keywords::read(FitOptions& o) {
  number("FitOptions", "huber_delta", o.huber_delta);
  integer("FitOptions", "bootstrap", o.bootstrap);
  if (const json* v = take("seed")) {
    if (v->is_number_unsigned() || (is_int64(*v) && v->get<std::int64_t>() >= 0))
      o.seed = v->get<std::uint64_t>();
    else
      type_error("FitOptions", "seed", *v, "must be an integer in [0, 2^64)");
  }
  integer("FitOptions", "threads", o.threads);
  integer("FitOptions", "max_iterations", o.max_iterations);
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
