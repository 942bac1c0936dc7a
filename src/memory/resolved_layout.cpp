// MemoryLayout's checks: each field within its row's bounds, then the rules
// that tie the layout to the config (docs/memory.md, "Layouts").
#include "memory/resolved_layout.hpp"

#include <numeric>
#include <string>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "smelt/detail/violations.hpp"
#include "util/checked.hpp"
#include "util/mention.hpp"
#include "util/option_bounds.hpp"

namespace smelt::memory_detail {
namespace {

std::string field(std::string_view name) { return detail::option_name<MemoryLayout>(name); }

// `what` must divide `of` (a size of the config or the layout).
void divides(detail::Violations& errors, std::string_view name, std::int64_t value, std::int64_t of,
             std::string_view of_what) {
  if (value > 0 && of % value != 0)
    errors.add(field(name), std::to_string(value), fmt::format("must divide {} ({})", of_what, of));
}

Dtype or_default(Dtype given, Dtype fallback) { return given == Dtype::automatic ? fallback : given; }

}  // namespace

void check_shards(const ModelConfig& config, const MemoryLayout& l, detail::Violations& errors) {
  const auto& a = config.attention;
  divides(errors, "tp", l.tp, a.num_heads, "attention.num_heads");
  if (a.type == AttentionType::gqa && l.tp > 0 && a.num_kv_heads % l.tp != 0 && l.tp % a.num_kv_heads != 0)
    errors.add(field("tp"), std::to_string(l.tp),
               fmt::format("must divide attention.num_kv_heads ({}) or be a multiple of it (KV heads replicated)",
                           a.num_kv_heads));
  if (config.ffn.dense_width > 0) divides(errors, "tp", l.tp, config.ffn.dense_width, "ffn.dense_width");
  if (config.is_moe()) {
    divides(errors, "ep", l.ep, config.moe.num_experts, "moe.num_experts");
    divides(errors, "etp", l.etp, config.moe.expert_width, "moe.expert_width");
    if (config.moe.num_shared_experts > 0) divides(errors, "tp", l.tp, config.moe.shared_width, "moe.shared_width");
  } else {
    if (l.ep > 1) errors.add(field("ep"), std::to_string(l.ep), "must be 1 for a dense config (it has no experts)");
    if (l.etp > 1) errors.add(field("etp"), std::to_string(l.etp), "must be 1 for a dense config (it has no experts)");
  }
}

ResolvedLayout resolve_layout(const ModelConfig& config, const MemoryLayout& layout) {
  detail::Violations errors;
  for (const auto& row : OptionTable<MemoryLayout>::fields)
    if (std::holds_alternative<std::int64_t MemoryLayout::*>(row.member))
      detail::check_integer(layout, row.name, errors);
  const auto& split_row = detail::option_row<MemoryLayout>("pp_layers");
  for (std::int64_t n : layout.pp_layers)
    if (n < 1 || !detail::within(split_row, static_cast<double>(n))) {
      errors.add(field("pp_layers"), fmt::format("{}", fmt::join(layout.pp_layers, ",")),
                 n < 1 ? std::string("every stage must hold at least 1 layer")
                       : fmt::format("every stage holds at most {} layers", detail::integer_bound(split_row.hi)));
      break;
    }
  errors.throw_if_any();  // the arithmetic below needs every value in its bounds

  ResolvedLayout r;
  r.layout = layout;
  MemoryLayout& l = r.layout;
  if (l.seq == 0) l.seq = config.context_length;
  if (l.context == 0) l.context = config.context_length;
  const bool smelt = l.convention == MemoryConvention::smelt;
  l.param_dtype = or_default(l.param_dtype, smelt ? Dtype::fp32 : Dtype::bf16);
  l.grad_dtype = or_default(l.grad_dtype, smelt ? l.param_dtype : Dtype::fp32);
  l.optimizer_dtype = or_default(l.optimizer_dtype, smelt ? l.param_dtype : Dtype::fp32);
  l.activation_dtype = or_default(l.activation_dtype, l.param_dtype);
  r.param_bytes = bytes_of(l.param_dtype);
  r.grad_bytes = bytes_of(l.grad_dtype);
  r.optimizer_bytes = bytes_of(l.optimizer_dtype);
  r.activation_bytes = bytes_of(l.activation_dtype);

  const auto& a = config.attention;
  check_shards(config, l, errors);
  // Megatron's rule: the expert grid (ep x etp) tiles the dense grid (tp x cp x dp) of each pipeline stage.
  const std::int64_t dense_ranks = detail::mul(detail::mul(l.tp, l.cp, "ranks"), l.dp, "ranks");
  const std::int64_t expert_ranks = detail::mul(l.ep, l.etp, "ranks");
  if (dense_ranks % expert_ranks != 0) {
    // Named by the sizes that make the grid: ep, etp, or both.
    const std::string rule =
        fmt::format("ep x etp ({}) must divide tp x cp x dp ({}): the expert ranks tile each stage's ranks",
                    expert_ranks, dense_ranks);
    if (l.ep > 1 && l.etp > 1)
      errors.add(fmt::format("{}, {}: {}", detail::mention(field("ep"), std::to_string(l.ep)),
                             detail::mention(field("etp"), std::to_string(l.etp)), rule));
    else
      errors.add(field(l.ep > 1 ? "ep" : "etp"), std::to_string(l.ep > 1 ? l.ep : l.etp), rule);
  } else {
    r.expert_dp = dense_ranks / expert_ranks;
  }

  divides(errors, "cp", l.cp, l.seq, "the sequence length");
  if (l.cp > 1)
    for (LayerAttention kind : a.pattern) {
      if (kind == LayerAttention::chunked && (l.seq / l.cp) % a.chunk != 0)
        errors.add(field("cp"), std::to_string(l.cp),
                   fmt::format("must leave whole chunks on each rank: the sequence ({}) / cp must be a multiple of "
                               "attention.chunk ({})",
                               l.seq, a.chunk));
      if (kind == LayerAttention::sliding && l.seq / l.cp < a.window)
        errors.add(field("cp"), std::to_string(l.cp),
                   fmt::format("must leave at least attention.window ({}) tokens on each rank (the sequence, {}, / cp)",
                               a.window, l.seq));
      if (kind != LayerAttention::full) break;
    }
  if (l.sequence_parallel && l.seq % detail::mul(l.tp, l.cp, "ranks") != 0)
    errors.add(field("sequence_parallel"), "true",
               fmt::format("needs the sequence ({}) divisible by tp x cp ({})", l.seq, l.tp * l.cp));
  if (l.zero > 0 && l.distributed_optimizer)
    errors.add(field("zero"), std::to_string(l.zero),
               fmt::format("{}: choose ZeRO or the distributed optimizer, not both",
                           detail::mention("MemoryLayout::distributed_optimizer", "true")));
  if (l.recompute_layers > 0 && l.recompute != Recompute::full)
    errors.add(field("recompute_layers"), std::to_string(l.recompute_layers),
               "counts the layers of full recompute: needs recompute = full");
  if (!smelt && r.activation_bytes != 2)
    errors.add(field("activation_dtype"), std::string(to_string(l.activation_dtype)),
               fmt::format("must be bf16 or fp16 under the {} convention (its bytes are 16-bit activations)",
                           to_string(l.convention)));
  if (l.convention == MemoryConvention::megatron) {  // what Megatron-LM's formula has no term for
    const auto refuse = [&](std::string_view name, std::string value, std::string_view rule) {
      errors.add(field(name), std::move(value), fmt::format("the megatron convention {}", rule));
    };
    if (l.inference) refuse("inference", "true", "counts training memory only");
    if (l.zero > 0) refuse("zero", std::to_string(l.zero), "knows the distributed optimizer, not ZeRO");
    if (!l.pp_layers.empty())
      refuse("pp_layers", fmt::format("{}", fmt::join(l.pp_layers, ",")), "splits the layers evenly (L / pp)");
  }

  // Pipeline stages: the stored layers, split as given or as evenly as possible (the first stages one more).
  const std::int64_t n = config.num_layers;
  if (l.pp > n) errors.add(field("pp"), std::to_string(l.pp), fmt::format("must be at most the layers ({})", n));
  std::vector<std::int64_t> split = l.pp_layers;
  if (!split.empty()) {
    if (static_cast<std::int64_t>(split.size()) != l.pp)
      errors.add(field("pp_layers"), fmt::format("{}", fmt::join(split, ",")),
                 fmt::format("must list {} stages (pp), not {}", l.pp, split.size()));
    else if (std::accumulate(split.begin(), split.end(), std::int64_t{0}) != n)
      errors.add(field("pp_layers"), fmt::format("{}", fmt::join(split, ",")),
                 fmt::format("must sum to the layers ({}), not {}", n,
                             std::accumulate(split.begin(), split.end(), std::int64_t{0})));
  } else if (l.pp <= n) {
    for (std::int64_t s = 0; s < l.pp; ++s) split.push_back(n / l.pp + (s < n % l.pp ? 1 : 0));
  }
  if (l.vpp > 1) {
    if (l.pp == 1) errors.add(field("vpp"), std::to_string(l.vpp), "needs a pipeline (pp of at least 2)");
    for (std::int64_t layers : split)
      if (layers % l.vpp != 0) {
        errors.add(field("vpp"), std::to_string(l.vpp),
                   fmt::format("must divide every stage's layers ({})", fmt::join(split, ",")));
        break;
      }
  }
  errors.throw_if_any();

  std::int64_t next = 0;
  for (std::int64_t layers : split) {
    r.stage_layers.emplace_back();
    for (std::int64_t i = 0; i < layers; ++i) r.stage_layers.back().push_back(next++);
  }
  r.microbatches = l.microbatches > 0 ? l.microbatches : l.pp;
  return r;
}

}  // namespace smelt::memory_detail
