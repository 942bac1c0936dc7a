// Megatron-LM's theoretical memory formula, term by term as
// megatron/training/theoretical_memory_usage.py writes it after pull request
// #4687 (expert parallelism): the same operations in the same order, in
// double precision where Python's arithmetic is a float, so that the bytes
// are Megatron's to the last bit before rounding. The mapping from a smelt
// config to Megatron's arguments and what the formula leaves out are in
// docs/memory.md ("The megatron convention").
#include "memory/megatron.hpp"

#include <algorithm>
#include <cmath>

#include "smelt/schedule.hpp"
#include "util/checked.hpp"

namespace smelt::memory_detail {
namespace {

using detail::mul;

// Megatron pads the vocabulary to a multiple of make_vocab_size_divisible_by (128) x tp.
std::int64_t padded_vocab(std::int64_t vocab, std::int64_t tp) {
  const std::int64_t multiple = mul(128, tp, "padded vocabulary");
  return mul((vocab + multiple - 1) / multiple, multiple, "padded vocabulary");
}

// Parameters per layer, as the formula groups them: split over tp, on every
// tensor-parallel rank, and routed experts split over etp x ep.
struct LayerParams {
  double tp = 0, replicated = 0, experts = 0;
};

struct Model {
  double h = 0, glu = 1, f = 0;  // f: ffn_hidden_size, the dense width (an all-MoE model's: the expert width)
  double attention = 0;
  LayerParams dense, moe;
  double final_norm = 0, embedding = 0;
  std::int64_t dense_layers = 0, moe_layers = 0, mtp_dense = 0, mtp_moe = 0;
  std::int64_t vocab = 0;
};

Model model_of(const ModelConfig& c, std::int64_t tp) {
  Model m;
  const auto& a = c.attention;
  const double h = static_cast<double>(c.hidden_size);
  const std::int64_t hi = c.hidden_size;
  m.h = h;
  m.glu = c.ffn.type == FfnType::gated ? 1.5 : 1.0;
  const double norm = c.norm == NormType::rmsnorm ? 1 : 2;
  const double n = static_cast<double>(a.num_heads);
  if (a.type == AttentionType::mla) {  // an integer in Megatron: its q, its kv latent (with norms), rope keys, output
    const auto& l = a.mla;
    const std::int64_t rope = l.qk_rope_head_dim, nope = l.qk_nope_head_dim, nn = a.num_heads;
    const std::int64_t ns = c.norm == NormType::rmsnorm ? 1 : 2;
    const std::int64_t q =
        l.q_lora_rank == 0 ? hi * nn * (nope + rope) : l.q_lora_rank * (hi + nn * (nope + rope) + ns);
    const std::int64_t kv = l.kv_lora_rank * (hi + nn * (nope + l.v_head_dim) + ns);
    m.attention = static_cast<double>(q + kv + hi * rope + (nn * l.v_head_dim) * hi);
  } else {  // 2 h h ((1 + g/n) (d n / h)): a float
    const double ratio = static_cast<double>(a.head_dim * a.num_heads) / h;
    m.attention = static_cast<double>(2 * hi * hi) * ((1 + (static_cast<double>(a.num_kv_heads) / n)) * ratio);
  }
  const bool moe = c.is_moe();
  const std::int64_t dense_width = c.ffn.dense_width > 0 ? c.ffn.dense_width : (moe ? c.moe.expert_width : 0);
  m.f = static_cast<double>(dense_width);
  const double e = moe ? static_cast<double>(c.moe.num_experts) : 1;
  const std::int64_t shared_width = moe ? c.moe.num_shared_experts * c.moe.shared_width : 0;
  const double norms = static_cast<double>(2 * hi) * norm;
  const double router = moe ? h * e + (c.ffn.bias ? e : 0) : 0;  // add_bias_linear: the router's bias
  const double gate = shared_width > 0 && c.moe.shared_gate ? h : 0;
  const double dense_mlp = static_cast<double>(2 * hi * dense_width) * m.glu;
  const double shared = static_cast<double>(2 * hi * shared_width) * m.glu;
  const double routed = moe ? static_cast<double>(2 * hi * c.moe.expert_width) * e * m.glu : 0;
  m.dense = {m.attention + dense_mlp, norms, 0};
  m.moe = {m.attention + shared, ((norms + 0) + router) + gate, routed};
  for (std::int64_t i = 0; i < c.num_layers; ++i) ++(c.is_moe_layer(i) ? m.moe_layers : m.dense_layers);
  (c.is_moe_layer(c.num_layers - 1) ? m.mtp_moe : m.mtp_dense) = c.mtp_modules;  // copies of the last layer
  m.final_norm = norm * h;
  m.vocab = padded_vocab(c.vocab_size, tp);
  m.embedding = static_cast<double>(mul(hi, m.vocab, "embedding parameters"));
  return m;
}

// min(1, m / pp) without interleaving (pp > 1), 1 + (pp - 1)/(pp vpp) with it; none for one stage.
double pipeline_scale(const ResolvedLayout& r, bool& applies) {
  const MemoryLayout& l = r.layout;
  const double pp = static_cast<double>(l.pp);
  applies = true;
  if (l.vpp > 1) return 1 + ((pp - 1) / (pp * static_cast<double>(l.vpp)));
  if (l.pp > 1) return std::min(1.0, static_cast<double>(r.microbatches) / pp);
  applies = false;
  return 1;
}

// Megatron's float rounded to the byte; detail::overflow (of `what`) where the bytes leave 64-bit integers, as
// the integer conventions' do (std::llround's result is unspecified there).
std::int64_t rounded(double bytes, const char* what) {
  if (!(std::fabs(bytes) < 0x1p63)) throw detail::overflow(what);
  return std::llround(bytes);
}

// Rounds Megatron's float to the byte, the last term taking what the rounded terms leave.
void add_rounded(MemoryPart& part, const std::vector<std::pair<const char*, double>>& terms, double total,
                 const char* what) {
  std::int64_t rest = rounded(total, what);
  for (std::size_t i = 0; i < terms.size(); ++i) {
    const std::int64_t bytes = i + 1 == terms.size() ? rest : rounded(terms[i].second, what);
    part.add(terms[i].first, bytes);
    rest = detail::add(rest, -bytes, what);
  }
}

}  // namespace

StageMemory megatron_stage(const ModelConfig& c, const ResolvedLayout& r) {
  const MemoryLayout& l = r.layout;
  const Model m = model_of(c, l.tp);
  const double pp = static_cast<double>(l.pp), tp = static_cast<double>(l.tp);
  const auto layers = [](const LayerParams& p, std::int64_t dense, std::int64_t moe, double LayerParams::*f,
                         const LayerParams& q) {
    return p.*f * static_cast<double>(dense) + q.*f * static_cast<double>(moe);
  };
  // The block's (and the MTP modules') parameters by group, then the first stage's shard of each.
  const double tp_block = layers(m.dense, m.dense_layers, m.moe_layers, &LayerParams::tp, m.moe);
  const double rep_block =
      layers(m.dense, m.dense_layers, m.moe_layers, &LayerParams::replicated, m.moe) + m.final_norm;
  const double exp_block = m.moe.experts * static_cast<double>(m.moe_layers);
  const double tp_mtp = layers(m.dense, m.mtp_dense, m.mtp_moe, &LayerParams::tp, m.moe);
  const double rep_mtp = layers(m.dense, m.mtp_dense, m.mtp_moe, &LayerParams::replicated, m.moe);
  const double exp_mtp = m.moe.experts * static_cast<double>(m.mtp_moe);
  double tp_shard = ((tp_block / pp) + tp_mtp + m.embedding) / tp;
  const double rep_shard = (rep_block / pp) + rep_mtp;
  const double exp_shard = ((exp_block / pp) + exp_mtp) / static_cast<double>(l.etp * l.ep);
  if (!c.tie_embeddings && l.pp == 1) tp_shard += m.embedding / tp;  // the output layer on the same stage

  // Bytes per parameter: weights + gradients + Adam's master copy and two moments, the last three sharded by
  // the distributed optimizer over dp (dense) or the expert data-parallel ranks (routed experts).
  const std::int64_t world = l.tp * l.pp * l.cp * l.dp;
  const double edp = static_cast<double>(world / (l.etp * l.ep * l.pp));
  const double pb = static_cast<double>(r.param_bytes), gb = static_cast<double>(r.grad_bytes);
  const double ob = static_cast<double>(3 * r.optimizer_bytes);
  const auto per_param = [&](double over) { return l.distributed_optimizer ? (pb + gb) + (ob / over) : pb + gb + ob; };
  const double dense_shard = tp_shard + rep_shard;
  const double weight_and_optimizer = dense_shard * per_param(static_cast<double>(l.dp)) + exp_shard * per_param(edp);

  StageMemory st;
  st.stage = 0;
  for (std::int64_t i : r.stage_layers.front()) st.layers.push_back(i + 1);
  st.weights.add("dense", rounded(dense_shard * pb, "weight bytes"));
  st.weights.add("routed_experts", rounded(exp_shard * pb, "weight bytes"));
  st.gradients.add("dense", rounded(dense_shard * gb, "gradient bytes"));
  st.gradients.add("routed_experts", rounded(exp_shard * gb, "gradient bytes"));
  const double optimizer =
      weight_and_optimizer - static_cast<double>(detail::add(st.weights.total, st.gradients.total, "weight bytes"));
  add_rounded(
      st.optimizer,
      {{"dense", dense_shard * per_param(static_cast<double>(l.dp)) - dense_shard * (pb + gb)}, {"routed_experts", 0}},
      optimizer, "optimizer bytes");

  // Activations: a dense layer of width f for every layer visit (a loop's visits each count), the embedding's
  // input and dropout for pp micro-batches, the pipeline's scale, and the output layer and loss on one stage.
  const double s = static_cast<double>(l.seq), b = static_cast<double>(l.micro_batch), h = m.h;
  const double visits = static_cast<double>(schedule(c).executed_layers());
  bool scaled = false;
  const double scale = pipeline_scale(r, scaled);
  const bool sp_path = l.sequence_parallel && l.recompute == Recompute::selective;
  double layers_act = sp_path ? (s * b * h) * (18 + (4 * (m.f / h))) : s * b * h * (10 + (24 / tp));
  layers_act = layers_act * visits;
  double act = layers_act;  // Python's order: float additions do not associate
  act += 8 * s * b * pp;
  act += s * b * h * pp;
  double embedding_act = 8 * s * b * pp + s * b * h * pp;  // the terms, for the report only
  if (scaled) {
    act *= scale;
    layers_act *= scale;
    embedding_act *= scale;
  }
  double output_act = 0;
  if (l.pp == 1) {
    if (sp_path) {
      output_act = s * b * h * 4 * (1 + (static_cast<double>(m.vocab) / h));
    } else {
      const double logits = s * b * static_cast<double>(m.vocab) / tp;
      output_act = (logits + s * b * h) * 2;
    }
    act += output_act;
  }
  const double factor = sp_path ? 1 / tp : 1.05;  // the SP path divides by tp; the other adds 5%
  act = sp_path ? act / tp : act * 1.05;
  add_rounded(st.activations,
              {{"layers", layers_act * factor}, {"embedding", embedding_act * factor}, {"output_and_loss", 0}}, act,
              "activation bytes");
  st.activations_per_micro_batch = 0;
  st.in_flight =
      l.vpp > 1 ? static_cast<std::int64_t>(std::ceil(scale * pp)) : (l.pp > 1 ? std::min(r.microbatches, l.pp) : 1);
  for (const MemoryPart* p : {&st.weights, &st.gradients, &st.optimizer, &st.activations})
    st.total = detail::add(st.total, p->total, "memory bytes");
  return st;
}

}  // namespace smelt::memory_detail
