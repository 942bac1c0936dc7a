#include "flag_names.hpp"

#include <array>
#include <cctype>
#include <utility>

namespace smelt::cli {
namespace {

// Library names (struct::member, or a phrase the library writes) and what the
// CLI writes instead. A phrase comes before the name it holds: the first
// match at a position wins.
constexpr std::array<std::pair<std::string_view, std::string_view>, 42> kFlags{{
    // derive and sweep (solver_options.cpp)
    {"LoopRecipe::span", "--span"},
    {"LoopRecipe::loops", "--loops"},
    {"LoopRecipe::residual_scale", "--residual-scale"},
    {"LoopRecipe::depth", "--depth"},
    {"SearchSpace::hidden", "--hidden"},
    {"SearchSpace::experts", "--experts"},
    {"SearchSpace::head_dim", "--head-dim"},
    {"SearchSpace::kv_heads", "--kv-heads"},
    {"SearchSpace::heads", "--heads"},
    {"SearchSpace::free_heads = false", "--keep-heads"},
    {"SearchSpace::free_heads", "--free-heads"},
    {"SearchSpace::max_head_dim", "--max-head-dim"},
    {"SearchSpace::attention_ratio", "--attention-ratio"},
    {"SearchSpace::align_hidden", "--align-hidden"},
    {"SearchSpace::align_experts", "--align-experts"},
    {"SearchSpace::align_head_dim", "--align-head-dim"},
    {"SearchSpace::min_head_dim", "--min-head-dim"},
    {"SearchSpace::align_ffn", "--align-ffn"},
    {"SearchSpace::ffn", "--ffn"},
    {"SearchSpace::expert_width", "--expert-width"},
    {"MatchOptions::match = flops,params", "--match flops,params"},
    {"MatchOptions::match", "--match"},
    {"MatchOptions::flops_with_head", "--flops-with-head"},
    {"MatchOptions::contexts", "--context"},
    {"MatchOptions::tolerance_pct", "--tolerance"},
    {"MatchOptions::top", "--top"},
    // sweep
    {"SweepOptions::spans", "--spans"},
    {"SweepOptions::loops", "--loops"},
    {"SweepOptions::depths = []", "--depths none"},
    {"SweepOptions::depths", "--depths"},
    // bench
    {"BenchOptions::backend", "--backend"},
    {"BenchOptions::tokens", "--tokens"},
    {"BenchOptions::context", "--context"},
    {"BenchOptions::moe_only", "--moe-only"},
    {"BenchOptions::balanced", "--balanced"},
    {"BenchOptions::warmup", "--warmup"},
    {"BenchOptions::repetitions", "--repetitions"},
    {"BenchOptions::force", "--force"},
    // fit
    {"FitOptions::bootstrap", "--bootstrap"},
    {"FitOptions::huber_delta", "--delta"},
    {"FitOptions::threads", "--threads"},
    // export
    {"export_hf::family", "--family"},
}};

bool is_name_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

}  // namespace

std::string to_flags(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size();) {
    bool replaced = false;
    if (i == 0 || !is_name_char(text[i - 1])) {
      for (const auto& [name, flag] : kFlags) {
        const std::size_t end = i + name.size();
        if (text.substr(i, name.size()) != name || (end < text.size() && is_name_char(text[end]))) continue;
        out += flag;
        i = end;
        replaced = true;
        break;
      }
    }
    if (!replaced) out += text[i++];
  }
  return out;
}

std::string describe(const smelt::error& e) {
  const auto* config = dynamic_cast<const smelt::config_error*>(&e);
  // A cuda_error may name BenchOptions::backend; other errors' texts hold file
  // names, which are never rewritten.
  if (dynamic_cast<const smelt::cuda_error*>(&e)) return to_flags(e.what());
  if (!config) return e.what();
  std::string out;
  for (const auto& v : config->violations()) {
    if (!out.empty()) out += '\n';
    out += to_flags(v.text());
  }
  return out;
}

}  // namespace smelt::cli
