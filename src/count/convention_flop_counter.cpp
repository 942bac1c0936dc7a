// PyTorch's FlopCounterMode convention (torch/utils/flop_counter.py), rebuilt
// from smelt's own terms. FlopCounterMode charges 2·m·n·k to every mm, addmm
// (not the bias add), bmm and baddbmm, and to the fused attention kernels a
// formula that ignores is_causal; eager attention multiplies the full T x T
// matrices and masks afterwards. So against smelt's count only the attention
// products change: the causal average A = P / T becomes T on every visit,
// whatever the layer's window or chunk. Elementwise work is never counted,
// and Hugging Face's models do not run MTP modules.
#include "smelt/convention.hpp"
#include "smelt/count.hpp"

namespace smelt {

FlopCounterFlops flop_counter_flops(const ModelConfig& config, std::int64_t context_length) {
  CountOptions options;
  options.context_length = context_length;
  const CostReport r = count(config, options);  // validates the config and the context
  const auto& a = config.attention;
  const bool mla = a.type == AttentionType::mla;
  const double heads = static_cast<double>(a.num_heads);
  const double qk_width =
      heads * static_cast<double>(mla ? a.mla.qk_nope_head_dim + a.mla.qk_rope_head_dim : a.head_dim);
  const double v_width = heads * static_cast<double>(mla ? a.mla.v_head_dim : a.head_dim);
  const double t = static_cast<double>(r.context_length);
  const double visits = static_cast<double>(r.executed_layers);

  FlopCounterFlops f;
  f.context_length = r.context_length;
  f.per_token = r.flops.terms;
  f.per_token.attention_scores = visits * 2.0 * qk_width * t;  // Q K^T: T x T scores of width qk per head
  f.per_token.attention_values = visits * 2.0 * v_width * t;   // softmax · V
  f.per_token.elementwise = 0;
  f.per_token.mtp = 0;
  return f;
}

}  // namespace smelt
