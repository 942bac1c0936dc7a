#include "solver_options.hpp"

namespace smelt::cli {

SolverFlags::SolverFlags(CLI::App* sub, bool recipe, std::vector<std::string_view> skip_match)
    : recipe_(recipe ? std::optional<OptionFlags<LoopRecipe>>(std::in_place, sub) : std::nullopt),
      space_(sub),
      match_(sub, std::move(skip_match)),
      // --context is MatchOptions::contexts here (a serving layout caches the config's context), and
      // --memory-limit stands for the device.
      layout_(sub, {"context", "device_memory"}),
      time_(sub) {}

SolverSetup SolverFlags::setup() const {
  detail::Violations errors;
  SolverSetup s;
  if (recipe_) recipe_->apply(s.recipe, errors);
  space_.apply(s.space, errors);
  match_.apply(s.options, errors);
  layout_.apply(s.options.memory_layout, errors);
  time_.apply(s.options.time_options, errors);
  errors.throw_if_any();
  return s;
}

std::string match_list(const MatchResult& r) {
  std::string out;
  for (const Budget b : r.options.match) out += (out.empty() ? "" : ", ") + std::string(to_string(b));
  return out;
}

}  // namespace smelt::cli
