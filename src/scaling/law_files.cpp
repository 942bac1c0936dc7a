// Law files: what `smelt-match fit --out` writes and `frontier` reads
// (docs/scaling.md). Ordered JSON; doubles are written in their shortest
// round-trip form, so reading a file back gives the same bits.
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "smelt/detail/scaling_text.hpp"
#include "smelt/detail/violations.hpp"
#include "smelt/error.hpp"
#include "smelt/file_io.hpp"
#include "smelt/scaling_laws.hpp"
#include "util/json_reader.hpp"

namespace smelt {
namespace {

using nlohmann::ordered_json;
constexpr int kLawSchemaVersion = 1;
// Every report names what it is beside its schema_version (docs/json-schema.md);
// a law file without the key (written before it existed) is still read.
constexpr const char* kLawKind = "laws";

ordered_json law_json(const Law& law) {
  const std::vector<std::string> names = parameter_names(law.form);
  if (law.params.size() != names.size())
    throw config_error(fmt::format("law '{}': has {} parameters; the {} form has {}", law.label, law.params.size(),
                                   to_string(law.form), names.size()));
  ordered_json j;
  j["form"] = std::string(to_string(law.form));
  j["label"] = law.label;
  j["params"] = ordered_json::object();
  for (std::size_t i = 0; i < names.size(); ++i) j["params"][names[i]] = law.params[i];
  j["objective"] = law.objective;
  j["rmse_log_loss"] = law.rmse_log_loss;
  j["runs"] = law.runs;
  j["starts"] = law.starts;
  j["converged_starts"] = law.converged_starts;
  j["converged"] = law.converged;
  j["status"] = law.status;
  j["bootstrap"] = ordered_json::array();
  for (const auto& sample : law.bootstrap) j["bootstrap"].push_back(sample);
  j["ci"] = ordered_json::object();
  if (law.ci_low.size() == names.size() && law.ci_high.size() == names.size())
    for (std::size_t i = 0; i < names.size(); ++i) j["ci"][names[i]] = {law.ci_low[i], law.ci_high[i]};
  return j;
}

// `count` numbers, or a violation naming `field` and the rule.
std::vector<double> numbers(const nlohmann::json& v, std::size_t count, const std::string& field,
                            const std::string& rule, detail::Violations& violations) {
  std::vector<double> out;
  if (v.is_array() && v.size() == count)
    for (const auto& x : v)
      if (x.is_number()) out.push_back(x.get<double>());
  if (out.size() != count) {
    violations.add(fmt::format("{} = {}: must be {}", field, detail::json_excerpt(v), rule));
    out.clear();
  }
  return out;
}

Law read_law(const nlohmann::json& json, const std::string& path, detail::Violations& violations) {
  Law law;
  if (!json.is_object()) {
    violations.add(fmt::format("{}: must be a law object", path));
    return law;
  }
  detail::JsonObject o(json, path, violations);
  const std::size_t before = violations.size();
  const std::string form = o.string("form");
  if (violations.size() != before) return law;  // missing or not a string
  try {
    law.form = parse_law_form(form, o.field("form"));
  } catch (const config_error& e) {
    violations.merge(e);
    o.reject_unknown_keys();
    return law;
  }
  const std::vector<std::string> names = parameter_names(law.form);
  const std::string list = fmt::format("{}", fmt::join(names, ", "));
  law.label = o.string("label", "");
  if (auto params = o.object("params")) {
    for (const auto& name : names) law.params.push_back(params->number(name));
    params->reject_unknown_keys();
  }
  law.objective = o.number("objective", 0.0);
  law.rmse_log_loss = o.number("rmse_log_loss", 0.0);
  law.runs = o.integer("runs", 0);
  law.starts = o.integer("starts", 0);
  law.converged_starts = o.integer("converged_starts", 0);
  law.converged = o.boolean("converged", false);
  law.status = o.string("status", "");
  if (const auto* b = o.raw("bootstrap")) {
    if (!b->is_array())
      violations.add(fmt::format("{} = {}: must be an array", o.field("bootstrap"), detail::json_excerpt(*b)));
    for (std::size_t i = 0; b->is_array() && i < b->size(); ++i) {
      const std::string rule = fmt::format("an array of {} numbers ({})", names.size(), list);
      auto sample = numbers((*b)[i], names.size(), fmt::format("{}[{}]", o.field("bootstrap"), i), rule, violations);
      if (!sample.empty()) law.bootstrap.push_back(std::move(sample));
    }
  }
  if (auto ci = o.object("ci", true); ci && !ci->json().empty()) {
    for (const auto& name : names) {
      const auto* v = ci->raw(name);
      if (!v) {
        violations.add(fmt::format("{}: missing (required when ci lists any parameter)", ci->field(name)));
        continue;
      }
      const auto bounds = numbers(*v, 2, ci->field(name), "[low, high]", violations);
      if (bounds.empty()) continue;
      law.ci_low.push_back(bounds[0]);
      law.ci_high.push_back(bounds[1]);
    }
    ci->reject_unknown_keys();
    if (law.ci_low.size() != names.size()) {
      law.ci_low.clear();
      law.ci_high.clear();
    }
  }
  o.reject_unknown_keys();
  return law;
}

std::vector<Law> parse_laws(const nlohmann::json& json, detail::Violations& violations) {
  std::vector<Law> laws;
  if (json.is_object() && !json.contains("laws") && !json.contains("schema_version") && !json.contains("kind")) {
    laws.push_back(read_law(json, "", violations));  // a single hand-written law
    return laws;
  }
  if (!json.is_object()) {
    violations.add("top level: must be a law file ({\"schema_version\": 1, \"laws\": [...]}) or a single law object");
    return laws;
  }
  detail::JsonObject o(json, "", violations);
  const std::int64_t version = o.integer("schema_version");
  if (o.has("schema_version") && version != kLawSchemaVersion)
    violations.add(fmt::format("schema_version = {}: must be {}", version, kLawSchemaVersion));
  if (o.has("kind")) {
    const auto* kind = o.raw("kind");
    if (!kind->is_string() || kind->get<std::string>() != kLawKind)
      violations.add(
          fmt::format("kind = {}: must be \"{}\", the kind of a law file", detail::json_excerpt(*kind), kLawKind));
  }
  const auto* list = o.raw("laws");
  if (!list)
    violations.add("laws: missing (required)");
  else if (!list->is_array() || list->empty())
    violations.add(fmt::format("laws = {}: must be a non-empty array of law objects", detail::json_excerpt(*list)));
  else
    for (std::size_t i = 0; i < list->size(); ++i)
      laws.push_back(read_law((*list)[i], fmt::format("laws[{}]", i), violations));
  o.reject_unknown_keys();
  return laws;
}

}  // namespace

std::string laws_to_json(const std::vector<Law>& laws) {
  ordered_json j;
  j["schema_version"] = kLawSchemaVersion;
  j["kind"] = kLawKind;
  j["laws"] = ordered_json::array();
  for (const Law& law : laws) j["laws"].push_back(law_json(law));
  return j.dump(2) + "\n";
}

std::vector<Law> read_laws(const std::filesystem::path& path) {
  try {
    return detail::parse_law_file(read_text_file(path), source_name(path));
  } catch (const io_error& e) {
    throw io_error(fmt::format("while reading laws '{}': {}", source_name(path), e.what()));
  }
}

std::vector<Law> detail::parse_law_file(std::string_view text, const std::string& source) {
  detail::Violations violations;
  std::vector<Law> laws;
  try {
    laws = parse_laws(detail::parse_json_text(text, source), violations);
  } catch (const config_error& e) {
    violations = {};
    violations.merge(e);
  }
  if (violations.empty()) return laws;
  detail::throw_within(fmt::format("while reading laws '{}'", source), violations.list());
}

}  // namespace smelt
