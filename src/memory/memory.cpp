// memory(): each pipeline stage's weights, gradients, optimizer state and the
// activations of the micro-batches it holds at its peak; the most loaded
// stage is what one GPU must hold (docs/memory.md).
#include "smelt/memory.hpp"

#include <algorithm>
#include <new>
#include <string>
#include <string_view>

#include <fmt/format.h>

#include "memory/activations.hpp"
#include "memory/megatron.hpp"
#include "memory/model_state.hpp"
#include "memory/resolved_layout.hpp"
#include "memory/visit_runs.hpp"
#include "smelt/count.hpp"
#include "smelt/detail/violations.hpp"
#include "smelt/error.hpp"
#include "smelt/schedule.hpp"
#include "util/checked.hpp"
#include "util/enum_names.hpp"
#include "util/mention.hpp"
#include "util/option_bounds.hpp"

namespace smelt {
namespace {

using detail::add;
using detail::mul;
using memory_detail::ActivationInput;
using memory_detail::ResolvedLayout;

// Layer-visit chunks whose activations stage s holds at its peak, out of vpp
// per micro-batch: one more than the warm-up micro-batches of Megatron-LM's
// 1F1B schedule (pipeline rank s of pp warms up with pp - s - 1, or with
// 2 (pp - s - 1) + (vpp - 1) pp chunks when interleaved), at most all of them.
std::int64_t chunks_in_flight(const ResolvedLayout& r, std::int64_t s) {
  const MemoryLayout& l = r.layout;
  const std::int64_t warmup = l.vpp == 1 ? l.pp - s - 1 : 2 * (l.pp - s - 1) + (l.vpp - 1) * l.pp;
  return std::min(warmup + 1, mul(r.microbatches, l.vpp, "micro-batches"));
}

// `part` x num / den, term by term (rounded down).
MemoryPart scaled(const MemoryPart& part, std::int64_t num, std::int64_t den) {
  MemoryPart out;
  for (const MemoryTerm& t : part.terms) out.add(t.name, mul(t.bytes, num, "activation bytes") / den);
  return out;
}

void add_all(MemoryPart& to, const MemoryPart& from) {
  for (const MemoryTerm& t : from.terms) to.add(t.name, t.bytes);
}

// The KV cache's term for each kind of attention layer.
constexpr detail::EnumNames<LayerAttention, 3> kKvTerms{{{LayerAttention::full, "full_attention"},
                                                         {LayerAttention::sliding, "sliding_attention"},
                                                         {LayerAttention::chunked, "chunked_attention"}}};

// The KV cache of the stage's attention visits: batch x the tokens each visit
// holds at the context x its elements per token, heads split over tp (KV
// heads replicated where tp exceeds them).
MemoryPart kv_cache(const ModelConfig& c, const CostReport& cost, const ResolvedLayout& r,
                    const std::vector<std::int64_t>& layers) {
  const MemoryLayout& l = r.layout;
  std::int64_t split = 1;
  if (c.attention.type == AttentionType::gqa) split = std::min(l.tp, c.attention.num_kv_heads);
  MemoryPart out;
  for (std::int64_t i : layers) {
    const LayerCost& lc = cost.layers[static_cast<std::size_t>(i)];
    const std::int64_t per_visit = mul(lc.kv_elements_per_visit, lc.kv_tokens_held, "KV cache bytes");
    const std::int64_t bytes = mul(mul(per_visit, lc.visits, "KV cache bytes"), c.kv_cache_bytes, "KV cache bytes");
    out.add(detail::name_of(kKvTerms, lc.attention), mul(bytes / split, l.batch, "KV cache bytes"));
  }
  return out;
}

}  // namespace

// The activation model knows pre-norm layers and bare spans only: what a sandwich norm or a span's per-pass
// norm and gate keep for the backward is not modelled yet, so such a config is refused, never undercounted.
void require_modelled(const ModelConfig& c) {
  detail::Violations v;
  if (c.norm_placement != NormPlacement::pre)
    v.add("norm_placement", fmt::format("\"{}\"", to_string(c.norm_placement)),
          "not modelled by the memory model yet (only \"pre\")");
  for (std::size_t i = 0; i < c.loops.size(); ++i)
    if (const LoopConfig& l = c.loops[i]; l.norm_each_pass || l.exit_gate || l.norm_after ||
                                          l.injection != Injection::none || l.backprop_passes > 0 || l.lora_rank > 0 ||
                                          l.kv_policy != KvPolicy::per_visit)
      v.add(c.loops.size() == 1 ? std::string("loop") : fmt::format("loops[{}]", i),
            fmt::format("\"{}\"", format_span(l)),
            "a span's per-pass norm, exit gate, adapter, LoRA, truncated backprop and KV policy are not modelled "
            "by the memory model yet");
  v.throw_if_any();
}

namespace memory_detail {
namespace {

// Whether an overflow of `quantity` comes from the config's size alone (its parameters), not from the tokens.
bool of_parameters(std::string_view quantity) {
  for (std::string_view q : {"weight bytes", "gradient bytes", "optimizer bytes", "parameters", "parameter tensors",
                             "padded vocabulary", "embedding parameters"})
    if (quantity == q) return true;
  return false;
}

}  // namespace

Violation out_of_memory_violation(const ModelConfig& c, const MemoryLayout& l, std::string_view what) {
  return Violation(fmt::format("out of memory: the {} of {} layers over {} stages could not be allocated", what,
                               c.num_layers,
                               detail::mention(detail::option_name<MemoryLayout>("pp"), std::to_string(l.pp))));
}

Violation overflow_violation(const ModelConfig& c, const MemoryLayout& l, std::string_view quantity) {
  if (of_parameters(quantity))
    return Violation(
        fmt::format("{} overflow 64-bit integers: the config is too large (hidden_size = {}, "
                    "num_layers = {}, vocab_size = {})",
                    quantity, c.hidden_size, c.num_layers, c.vocab_size));
  const auto setting = [&](std::string_view name, std::int64_t value) {
    return detail::mention(detail::option_name<MemoryLayout>(name), std::to_string(value));
  };
  const std::string tokens = l.inference ? setting("batch", l.batch) + ", " + setting("context", l.context)
                                         : setting("micro_batch", l.micro_batch) + ", " + setting("seq", l.seq);
  return Violation(fmt::format("{}: {} overflow 64-bit integers", tokens, quantity));
}

}  // namespace memory_detail

namespace {

MemoryReport count_memory(const ModelConfig& c, const ResolvedLayout& r) {
  const MemoryLayout& l = r.layout;
  CountOptions count_options;
  count_options.context_length = l.inference ? l.context : l.seq;
  const CostReport cost = count(c, count_options);
  const ActivationInput in{c, r, {l.tp, l.cp, l.etp, l.sequence_parallel && l.tp > 1}};
  const bool smelt = l.convention == MemoryConvention::smelt;
  const auto visit_of = smelt ? memory_detail::smelt_visit : memory_detail::korthikanti_visit;
  const auto outside_of = smelt ? memory_detail::smelt_outside : memory_detail::korthikanti_outside;
  const LayerSchedule plan = schedule(c);
  // Full recompute covers each stage's first recompute_layers visits (all of them when 0).
  memory_detail::StageVisitOptions visit_options;
  if (l.recompute == Recompute::full)
    visit_options.recomputed = l.recompute_layers > 0 ? l.recompute_layers : memory_detail::StageVisitOptions::kAll;
  // The backward's transient peak is modelled on one model-parallel rank (transient.cpp).
  const bool one_rank = l.tp == 1 && l.pp == 1 && l.cp == 1 && l.ep == 1 && l.etp == 1;

  MemoryReport report;
  report.model = c.name;
  report.layout = l;
  if (l.convention == MemoryConvention::megatron) {
    report.stages.push_back(memory_detail::megatron_stage(c, r));
    report.total = report.stages.front().total;
    if (l.device_memory.bytes > 0)
      report.fraction_of_device = static_cast<double>(report.total) / static_cast<double>(l.device_memory.bytes);
    report.assumptions.push_back(
        "Megatron-LM's formula: the first pipeline stage is the most loaded (it holds L / pp layers, the MTP "
        "modules and the embedding); every layer visit keeps the activations of a dense layer of the dense width; "
        "the vocabulary padded to a multiple of 128 x tp");
    return report;
  }
  const std::int64_t stages = static_cast<std::int64_t>(r.stage_layers.size());
  report.stages.reserve(r.stage_layers.size());
  for (std::int64_t s = 0; s < stages; ++s) {
    const auto& layers = r.stage_layers[static_cast<std::size_t>(s)];
    const bool first = s == 0, last = s == stages - 1;
    StageMemory st;
    st.stage = s;
    for (std::int64_t i : layers) st.layers.push_back(i + 1);
    auto state = memory_detail::model_state(c, cost, r, layers, first, last);
    st.weights = std::move(state.weights);
    if (l.inference) {
      st.kv_cache = kv_cache(c, cost, r, layers);
    } else {
      st.gradients = std::move(state.gradients);
      st.optimizer = std::move(state.optimizer);
      st.layer_visits = memory_detail::stage_visits(plan, layers.front(), layers.back());
      // Each kind of visit (MoE or dense, attention kind, recompute mode) once, with how many visits it has, the
      // kinds in the order of their first visits; its terms depend on the layer only through its kind.
      struct Kind {
        std::size_t run;  // its first run in st.visit_runs
        std::int64_t visits;
      };
      std::vector<Kind> kinds;
      std::size_t last_run = 0;  // the run of the stage's last visit
      for (const memory_detail::StageVisitRun& v :
           memory_detail::stage_visit_runs(c, plan, layers.front(), layers.back(), visit_options)) {
        VisitRun run;
        run.first_layer = v.first + 1;
        run.last_layer = v.last + 1;
        run.step = v.step;
        run.first_visit = v.first_pass + 1;
        run.last_visit = v.last_pass + 1;
        run.count = v.visits();
        run.moe = v.moe;
        run.attention = v.attention;
        run.recompute = l.recompute != Recompute::full ? l.recompute : v.recomputed ? Recompute::full : Recompute::none;
        const auto same = std::find_if(kinds.begin(), kinds.end(), [&](const Kind& k) {
          const VisitRun& o = st.visit_runs[k.run];
          return o.moe == run.moe && o.attention == run.attention && o.recompute == run.recompute;
        });
        if (same != kinds.end()) {
          run.activations = st.visit_runs[same->run].activations;
          same->visits += run.count;
        } else {
          run.activations = visit_of(in, v.first, run.recompute);
          kinds.push_back({st.visit_runs.size(), run.count});
        }
        if (v.last_ordinal == st.layer_visits - 1) last_run = st.visit_runs.size();
        st.visit_runs.push_back(std::move(run));
      }
      MemoryPart per_micro_batch;
      for (const auto& [first_of_kind, visits_of_kind] : kinds)
        for (const MemoryTerm& t : st.visit_runs[first_of_kind].activations.terms)
          per_micro_batch.add(t.name, mul(t.bytes, visits_of_kind, "activation bytes"));
      add_all(per_micro_batch, outside_of(in, first, last));
      st.activations_per_micro_batch = per_micro_batch.total;
      st.in_flight = chunks_in_flight(r, s);
      st.activations = scaled(per_micro_batch, st.in_flight, l.vpp);
      if (smelt && one_rank && !st.visit_runs.empty())
        st.transient = memory_detail::smelt_transient(in, st, st.visit_runs[last_run]);
    }
    for (const MemoryPart* p :
         {&st.weights, &st.gradients, &st.optimizer, &st.activations, &st.kv_cache, &st.transient})
      st.total = add(st.total, p->total, "memory bytes");
    report.stages.push_back(std::move(st));
  }
  for (std::size_t s = 0; s < report.stages.size(); ++s)
    if (report.stages[s].total > report.stages[report.worst_stage].total) report.worst_stage = s;
  report.total = report.stages[report.worst_stage].total;
  if (l.device_memory.bytes > 0)
    report.fraction_of_device = static_cast<double>(report.total) / static_cast<double>(l.device_memory.bytes);
  if (c.is_moe() && !l.inference)
    report.assumptions.push_back(
        "routing is balanced: every expert receives tokens (so holds gradients and optimizer state), and each "
        "expert-parallel rank receives top_k x its tokens");
  if (smelt && !l.inference)
    report.assumptions.push_back(
        one_rank ? "the backward's peak: the largest temporaries of the reference model's backward on one rank "
                   "(transient), with gradients kept between steps"
                 : "no backward transient: it is modelled on one model-parallel rank (tp = pp = cp = ep = 1) only");
  if (l.vpp > 1)
    report.assumptions.push_back(
        "interleaving: a stage's activations per micro-batch are spread evenly over its vpp chunks");
  return report;
}

}  // namespace

MemoryReport memory(const CheckedConfig& checked, const MemoryLayout& layout) {
  const ModelConfig& c = checked;
  require_modelled(c);
  const ResolvedLayout r = memory_detail::resolve_layout(c, layout);
  return memory_detail::named_failures(c, r, "memory report", [&] { return count_memory(c, r); });
}

}  // namespace smelt
