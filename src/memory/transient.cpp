// The backward pass's peak beyond what a training step holds (weights,
// gradients, optimizer state, saved activations): the temporaries at the
// first op of the backward that allocates most, under the smelt convention,
// as the reference model's backward on one rank allocates them (measured to
// the byte with the profiler's allocator events, benchmarks/memory_peak.py;
// docs/memory.md, "The backward's peak"). N = b s tokens, e activation
// bytes, H hidden, V vocabulary, n_h heads of d_v value width.
#include <algorithm>

#include "memory/activations.hpp"
#include "util/checked.hpp"

namespace smelt::memory_detail {
namespace {

std::int64_t term(const MemoryPart& p, std::string_view name) {
  for (const MemoryTerm& t : p.terms)
    if (t.name == name) return t.bytes;
  return 0;
}

// Parameters of one FFN of `width`: its projections and biases.
std::int64_t ffn_params(const ModelConfig& c, std::int64_t width) {
  const bool gated = c.ffn.type == FfnType::gated;
  return (gated ? 3 : 2) * c.hidden_size * width + (c.ffn.bias ? (gated ? 2 : 1) * width + c.hidden_size : 0);
}

}  // namespace

// The gradients of a looped last layer's FFN or MoE, its FFN norm and its output projection: autograd holds
// them until the layer's earlier visit adds its own. The stage's last visit is its last layer's last: a later
// visit number than 1 means the layer runs more than once.
std::int64_t pending_gradient_elements(const ModelConfig& c, bool moe, std::int64_t last_visit) {
  if (last_visit < 2) return 0;
  const auto& a = c.attention;
  const std::int64_t h = c.hidden_size, d_v = a.type == AttentionType::mla ? a.mla.v_head_dim : a.head_dim;
  std::int64_t n = (c.norm == NormType::layernorm ? 2 : 1) * h + a.num_heads * d_v * h + (a.out_bias ? h : 0);
  if (moe) {
    const auto& m = c.moe;
    n += m.num_experts * ffn_params(c, m.expert_width) + m.num_shared_experts * ffn_params(c, m.shared_width);
    n += h * m.num_experts + (m.router_bias && m.router_score == RouterScore::softmax ? m.num_experts : 0);
    n += m.shared_gate ? h : 0;
  } else {
    n += ffn_params(c, c.ffn.dense_width);
  }
  return n;
}

MemoryPart smelt_transient(const ActivationInput& in, const StageMemory& st, const VisitRun& last_visit) {
  const ModelConfig& c = in.config;
  const MemoryLayout& l = in.r.layout;
  const auto& a = c.attention;
  const auto& m = c.moe;
  // Sizes of tensors the stage already holds: each fits 64 bits, and so do these few sums of them.
  const std::int64_t b = l.micro_batch, s = l.seq, n = detail::mul(b, s, "tokens"), h = c.hidden_size;
  const std::int64_t v = c.vocab_size, e = in.r.activation_bytes, pe = in.r.param_bytes;
  const std::int64_t heads = a.num_heads, d_v = a.type == AttentionType::mla ? a.mla.v_head_dim : a.head_dim;
  const MemoryPart& t = st.activations;
  const MemoryPart& last = last_visit.activations;
  const std::int64_t nh = detail::mul(n, h, "activation elements") * e;
  const std::int64_t loss_saved = term(t, "targets") + term(t, "loss_weight");
  const std::int64_t after_loss =
      term(t, "log_probabilities") + loss_saved + term(t, "head_input") + term(t, "final_norm");
  // The head's weight gradient waits for the weight's other use: the embedding (tied) or the main head after the
  // MTP heads'.
  const std::int64_t head = c.tie_embeddings || c.mtp_modules > 0 ? detail::mul(v, h, "parameters") * pe : 0;
  MemoryPart out;
  struct Point {
    const char* name;
    std::int64_t bytes;
  };
  std::vector<Point> points;
  // The first op of the backward: the cross-entropy's gradients of the log-probabilities and the logits.
  points.push_back({"loss_backward", 2 * detail::mul(n, v, "activation elements") * e - loss_saved});
  // The last visit's attention core: the gradients of its probabilities and scores, of the values and of the
  // residual stream, once the loss, head, final norm, that visit's FFN and norm and the attention's output
  // input and values are freed.
  const std::int64_t core =
      2 * detail::mul(detail::mul(b * heads, s, "activation elements"), s + (a.sinks ? 1 : 0), "activation elements") *
      e;
  const std::int64_t values = detail::mul(n, heads * d_v, "activation elements") * e;
  const std::int64_t freed = after_loss + term(last, "ffn_norm") + term(last, "ffn") + term(last, "moe") + 2 * values;
  points.push_back(
      {"attention_backward",
       core + values + nh + head + pending_gradient_elements(c, last_visit.moe, last_visit.last_visit) * pe - freed});
  const bool moe_last = last_visit.moe;
  if (moe_last && m.router_form != RouterForm::llama4) {
    // The weighted sum of the routed experts' outputs: the gradients of the weighted outputs, of the experts'
    // outputs and of their product with the weights, that product's sum over H; less the shared experts (and
    // gate) already freed, plus the shared experts' input gradient waiting for the router's.
    const std::int64_t nk = detail::mul(n, m.top_k, "activation elements");
    std::int64_t shared =
        m.num_shared_experts * (c.ffn.type == FfnType::gated ? 4 : 2) * detail::mul(n, m.shared_width, "elements") * e;
    shared += m.shared_gate ? n * e + nh : 0;
    const std::int64_t waiting = m.num_shared_experts > 0 ? nh : 0;
    points.push_back({"moe_backward", 2 * nk * h * e + nk * e + nh + waiting + head - after_loss - shared});
  }
  const std::int64_t width = moe_last ? m.shared_width : c.ffn.dense_width;
  if (c.ffn.type == FfnType::gated && width > 0 && (!moe_last || m.num_shared_experts > 0)) {
    // The first gated FFN of the backward (dense, or the last shared expert): the gradients of SiLU's output
    // and of the up projection, and of the residual stream and the FFN's output.
    const std::int64_t gate = moe_last && m.shared_gate ? -n * e : 0;
    const std::int64_t more = moe_last && m.num_shared_experts > 1 ? nh : 0;
    points.push_back({"ffn_backward",
                      2 * detail::mul(n, width, "activation elements") * e + 2 * nh + gate + more + head - after_loss});
  }
  const Point& peak =
      *std::max_element(points.begin(), points.end(), [](const Point& x, const Point& y) { return x.bytes < y.bytes; });
  if (peak.bytes > 0) out.add(peak.name, peak.bytes);
  return out;
}

}  // namespace smelt::memory_detail
