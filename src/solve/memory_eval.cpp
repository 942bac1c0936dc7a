// MemoryEvaluator: memory()'s total for one training stage under the smelt convention, the same arithmetic as
// src/memory's model_state(), smelt_visit(), smelt_outside() and smelt_transient() term by term (the same
// roundings, the same checked products), summed without naming the terms. Held equal to memory() by
// tests/unit/solve/memory_eval_test.cpp.
#include "solve/memory_eval.hpp"

#include <algorithm>

#include "anatomy/layer_anatomy.hpp"
#include "count/count_impl.hpp"
#include "memory/activations.hpp"
#include "memory/division.hpp"
#include "memory/model_state.hpp"
#include "memory/visit_runs.hpp"
#include "smelt/error.hpp"
#include "smelt/schedule.hpp"
#include "util/checked.hpp"

namespace smelt::solve_detail {

using namespace smelt::detail;  // the helpers every module shares
namespace {

using i64 = std::int64_t;
using memory_detail::ceil_div;
using memory_detail::Shard;

constexpr i64 kIndexBytes = 8;  // as activations_smelt.cpp

// The activations of one candidate: its visits' saved tensors (the anatomy's, src/anatomy/saved_activations.cpp),
// divided as the layout shards them, as activations_smelt.cpp does, summed without naming the terms.
struct Act {
  const ModelConfig& c;
  const Shard& sh;
  i64 b, s, n, h, e;

  template <class List>
  i64 sum(const List& saved, bool ffn_only = false) const {
    i64 t = 0;
    for (const anatomy::Saved& x : saved)
      if (!ffn_only || x.group == anatomy::Group::ffn || x.group == anatomy::Group::moe)
        t = add(t, sh.of(x), "memory bytes");
    return t;
  }
  i64 residual_norm() const { return sum(anatomy::saved_norm(c, n, h, e)); }
  // A visit's FFN or MoE, the transient's "ffn" or "moe" term.
  i64 ffn_part(bool moe_layer) const {
    return sum(anatomy::saved_activations(c, moe_layer, Recompute::none, {b, s, e}), true);
  }
  i64 visit(bool moe_layer, Recompute recompute) const {
    return sum(anatomy::saved_activations(c, moe_layer, recompute, {b, s, e}));
  }
};

}  // namespace

bool MemoryEvaluator::prepare(const ModelConfig& c) {
  const MemoryLayout& l = layout_;
  if (l.convention != MemoryConvention::smelt || l.inference || l.pp != 1 || l.vpp != 1 ||
      c.attention.type != AttentionType::gqa || c.mtp_modules > 0) {
    state_ = State::unsupported;
    return false;
  }
  try {
    require_modelled(c);
    resolved_ = memory_detail::resolve_layout(c, l);
  } catch (const error&) {
    state_ = State::unsupported;  // memory() refuses it for what every candidate shares: its own error decides
    return false;
  }
  const memory_detail::ResolvedLayout& r = *resolved_;
  if (r.stage_layers.size() != 1 || r.layout.vpp != 1) {
    state_ = State::unsupported;
    return false;
  }
  layer_kinds_ = layer_kinds(c);
  for (i64 i = 0; i < c.num_layers; ++i) {
    if (c.is_moe_layer(i))
      ++moe_layers_;
    else
      ++dense_layers_;
  }
  memory_detail::StageVisitOptions visit_options;
  if (r.layout.recompute == Recompute::full)
    visit_options.recomputed =
        r.layout.recompute_layers > 0 ? r.layout.recompute_layers : memory_detail::StageVisitOptions::kAll;
  const LayerSchedule plan = schedule(c);
  const i64 last = c.num_layers - 1;
  const i64 stage_visits = memory_detail::stage_visits(plan, 0, last);
  for (const memory_detail::StageVisitRun& v : memory_detail::stage_visit_runs(c, plan, 0, last, visit_options)) {
    const Recompute recompute = r.layout.recompute != Recompute::full ? r.layout.recompute
                                : v.recomputed                        ? Recompute::full
                                                                      : Recompute::none;
    VisitKind& k = kinds_[static_cast<std::size_t>((v.moe ? 3 : 0) + static_cast<int>(recompute))];
    k.moe = v.moe;
    k.recompute = recompute;
    k.visits = add(k.visits, v.visits(), "layer visits");
    if (v.last_ordinal == stage_visits - 1) {
      have_last_ = true;
      last_ = {v.moe, recompute, 0};
      last_visit_ = v.last_pass + 1;
    }
  }
  state_ = State::ready;
  return true;
}

std::optional<std::int64_t> MemoryEvaluator::bytes(const ModelConfig& c) {
  if (state_ == State::unsupported) return std::nullopt;
  {
    Violations errors;
    memory_detail::check_shards(c, layout_, errors);
    if (!errors.empty()) return std::nullopt;  // memory() names the rules it breaks
  }
  if (state_ == State::unprepared && !prepare(c)) return std::nullopt;
  try {
    return count(c);
  } catch (const overflow&) {
    return std::nullopt;  // memory() names the inputs that size it
  }
}

i64 MemoryEvaluator::count(const ModelConfig& c) const {
  const memory_detail::ResolvedLayout& r = *resolved_;
  const MemoryLayout& l = r.layout;

  // Weights, gradients and optimizer state (model_state()): each term's elements summed over the layers, each
  // layer's share rounded up, then each term over the data-parallel ranks.
  enum Term { attention, norms, router, shared_experts, dense_ffn, embedding, lm_head, loop_extras_term, kTerms };
  i64 dense[kTerms] = {};
  i64 experts = 0;
  // A layer's parameters depend on whether it is MoE alone (src/anatomy): one sum of each kind.
  anatomy::LayerSums sums[2];
  bool made[2] = {false, false};
  const auto sums_of = [&](bool moe) -> const anatomy::LayerSums& {
    if (!made[moe]) sums[moe] = anatomy::layer_sums(c, moe), made[moe] = true;
    return sums[moe];
  };
  for (const LayerKind& k : layer_kinds_.kinds) {
    if (k.first_layer < 0) continue;
    const anatomy::LayerSums& p = sums_of(k.moe);
    const i64 layers = static_cast<i64>(k.layers);
    const auto split = [&](anatomy::Term t, i64 by) { return mul(layers, ceil_div(p.params(t), by), "parameters"); };
    dense[attention] = add(dense[attention], split(anatomy::Term::attention, l.tp), "parameters");
    dense[norms] = add(dense[norms], split(anatomy::Term::norms, 1), "parameters");
    dense[router] = add(dense[router], split(anatomy::Term::router, 1), "parameters");
    dense[shared_experts] = add(dense[shared_experts], split(anatomy::Term::shared_experts, l.tp), "parameters");
    dense[dense_ffn] = add(dense[dense_ffn], split(anatomy::Term::dense_ffn, l.tp), "parameters");
    experts =
        add(experts, mul(layers, ceil_div(p.params(anatomy::Term::experts) / l.ep, l.etp), "parameters"), "parameters");
  }
  const i64 h = c.hidden_size;
  const i64 vocab = mul(c.vocab_size, h, "embedding parameters");
  dense[embedding] = ceil_div(vocab, l.tp);
  dense[lm_head] = c.tie_embeddings ? 0 : ceil_div(vocab, l.tp);  // one stage: a tied head is the embedding
  dense[norms] = add(dense[norms], c.norm == NormType::layernorm ? 2 * h : h, "parameters");
  dense[loop_extras_term] = count_detail::loop_extras(c).params;
  const i64 frozen = moe_layers_ > 0 ? mul(moe_layers_, sums_of(true).frozen_params, "parameters") : 0;
  const i64 norm_tensors = c.norm == NormType::layernorm ? 2 : 1;
  i64 tensors = 0;
  if (moe_layers_ > 0)
    tensors = add(tensors, mul(moe_layers_, sums_of(true).trainable_tensors, "parameter tensors"), "parameter tensors");
  if (dense_layers_ > 0)
    tensors =
        add(tensors, mul(dense_layers_, sums_of(false).trainable_tensors, "parameter tensors"), "parameter tensors");
  tensors += 1 + (dense[lm_head] > 0 ? 1 : 0) + norm_tensors;  // the embedding, the head, the final norm

  i64 state = 0;
  const i64 dense_dp = l.distributed_optimizer ? mul(l.dp, l.cp, "ranks") : l.dp;
  const i64 expert_dp = l.distributed_optimizer ? r.expert_dp : l.dp;
  const bool master = l.optimizer_dtype != l.param_dtype;
  const auto fill = [&](i64 elements, i64 dp, i64 frozen_part) {
    const i64 w = l.zero >= 3 ? ceil_div(elements, dp) : elements;
    state = add(state, mul(w, r.param_bytes, "weight bytes"), "memory bytes");
    const i64 trainable = elements - frozen_part;
    const i64 g = l.zero >= 2 ? ceil_div(trainable, dp) : trainable;
    state = add(state, mul(g, r.grad_bytes, "gradient bytes"), "memory bytes");
    const i64 o = l.zero >= 1 || l.distributed_optimizer ? ceil_div(trainable, dp) : trainable;
    state = add(state, mul(o, 2 * r.optimizer_bytes, "optimizer bytes"), "memory bytes");
    if (master) state = add(state, mul(o, r.optimizer_bytes, "optimizer bytes"), "memory bytes");
  };
  for (int t = 0; t < kTerms; ++t)
    if (dense[t] > 0) fill(dense[t], dense_dp, t == router ? frozen : 0);
  if (experts > 0) fill(experts, expert_dp, 0);
  state = add(state, mul(tensors, 4, "optimizer bytes"), "memory bytes");  // AdamW's step, per tensor

  // Activations of one micro-batch (one stage: one in flight), each kind of visit once times its visits.
  const Shard sh{l.tp, l.cp, l.etp, l.sequence_parallel && l.tp > 1};
  const Act x{c, sh, l.micro_batch, l.seq, mul(l.micro_batch, l.seq, "tokens"), h, r.activation_bytes};
  i64 activations = 0;
  for (const VisitKind& k : kinds_)
    if (k.visits > 0)
      activations = add(activations, mul(x.visit(k.moe, k.recompute), k.visits, "activation bytes"), "memory bytes");
  // Outside the layers (smelt_outside(), first and last stage).
  const i64 token_ids = sh.positional(mul(x.b, x.s + 1, "tokens"), kIndexBytes);
  const i64 final_norm = x.residual_norm();
  const i64 head_input = sh.replicated(mul(x.n, h, "activation elements"), x.e);
  const i64 log_probabilities = sh.sharded(mul(x.n, c.vocab_size, "activation elements"), x.e);
  const i64 targets = x.b > 1 && x.s > 1 ? sh.replicated(x.n, kIndexBytes) : 0;
  const i64 loss_weight = x.e;
  for (const i64 t : {token_ids, final_norm, head_input, log_probabilities, targets, loss_weight})
    activations = add(activations, t, "memory bytes");

  i64 transient = 0;
  const bool one_rank = l.tp == 1 && l.cp == 1 && l.ep == 1 && l.etp == 1;
  if (one_rank && have_last_) {
    // smelt_transient(): the largest of the backward's first peaks, beyond what the stage holds.
    const auto& a = c.attention;
    const auto& m = c.moe;
    const i64 b = x.b, s = x.s, n = x.n, v = c.vocab_size, e = x.e, pe = r.param_bytes;
    const i64 heads = a.num_heads, d_v = a.head_dim;
    const i64 nh = mul(n, h, "activation elements") * e;
    const i64 loss_saved = targets + loss_weight;
    const i64 after_loss = log_probabilities + loss_saved + head_input + final_norm;
    const i64 head = c.tie_embeddings ? mul(v, h, "parameters") * pe : 0;
    const bool full = last_.recompute == Recompute::full;
    const i64 last_ffn_norm = full ? 0 : final_norm;  // the visit's FFN norm: the same norm over the residual
    const i64 last_ffn = full ? 0 : x.ffn_part(last_.moe);
    i64 peak = 2 * mul(n, v, "activation elements") * e - loss_saved;
    const i64 core =
        2 * mul(mul(b * heads, s, "activation elements"), s + (a.sinks ? 1 : 0), "activation elements") * e;
    const i64 values = mul(n, heads * d_v, "activation elements") * e;
    const i64 freed = after_loss + last_ffn_norm + last_ffn + 2 * values;
    peak = std::max(peak, core + values + nh + head +
                              memory_detail::pending_gradient_elements(c, last_.moe, last_visit_) * pe - freed);
    if (last_.moe && m.router_form != RouterForm::llama4) {
      const i64 nk = mul(n, m.top_k, "activation elements");
      i64 shared =
          m.num_shared_experts * (c.ffn.type == FfnType::gated ? 4 : 2) * mul(n, m.shared_width, "elements") * e;
      shared += m.shared_gate ? n * e + nh : 0;
      const i64 waiting = m.num_shared_experts > 0 ? nh : 0;
      peak = std::max(peak, 2 * nk * h * e + nk * e + nh + waiting + head - after_loss - shared);
    }
    const i64 width = last_.moe ? m.shared_width : c.ffn.dense_width;
    if (c.ffn.type == FfnType::gated && width > 0 && (!last_.moe || m.num_shared_experts > 0)) {
      const i64 gate = last_.moe && m.shared_gate ? -n * e : 0;
      const i64 more = last_.moe && m.num_shared_experts > 1 ? nh : 0;
      peak = std::max(peak, 2 * mul(n, width, "activation elements") * e + 2 * nh + gate + more + head - after_loss);
    }
    if (peak > 0) transient = peak;
  }
  return add(add(state, activations, "memory bytes"), transient, "memory bytes");
}

}  // namespace smelt::solve_detail
