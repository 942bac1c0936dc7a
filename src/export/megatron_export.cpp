// export_megatron: Megatron-LM's model arguments (megatron/training/arguments.py)
// for the physical model. docs/export.md maps each field and says why.
//
// Two arguments are always written although they may equal a default:
// --kv-channels (Megatron defaults it to hidden / heads, wrong for any config
// that shrinks or widens heads) and --moe-ffn-hidden-size (Megatron defaults
// it to --ffn-hidden-size). Per-layer patterns use the Python-list form that
// --moe-layer-freq and --window-attn-skip-freq accept, so every MoE layer
// pattern and every sliding/full pattern can be written. What Megatron has no
// argument for is a config_error, except the loop: the arguments describe its
// stored layers, and comment lines give the span and count to add by hand.
#include <algorithm>
#include <string>
#include <string_view>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "export/export_text.hpp"
#include "export/moe_layers.hpp"
#include "smelt/count.hpp"
#include "smelt/detail/excerpt.hpp"
#include "smelt/detail/violations.hpp"
#include "smelt/error.hpp"
#include "smelt/export.hpp"

namespace smelt {
namespace {

using i64 = std::int64_t;

class Writer {
 public:
  void add(std::string flag, std::string value = {}) { out.arguments.emplace_back(std::move(flag), std::move(value)); }
  void add(std::string flag, i64 value) { add(std::move(flag), fmt::format("{}", value)); }
  void comment(std::string text) { out.comments.push_back(std::move(text)); }
  MegatronArguments out;
};

// Megatron's integer form of a per-layer 0/1 list when there is one, else
// the list: --moe-layer-freq N marks layer i (0-based) when i % N == 0;
// --window-attn-skip-freq N keeps layer i sliding unless (i + 1) % N == 0.
// The only candidate N is read off the first layer the rule treats apart,
// so a 65536-layer list costs one pass, not one per N.
std::string layer_pattern(const std::vector<int>& flags, bool moe_form) {
  const int apart = moe_form ? 1 : 0;  // the value of the layers N picks out
  std::size_t n = flags.size();
  for (std::size_t i = moe_form ? 1 : 0; i < flags.size(); ++i) {
    if (flags[i] == apart) {
      n = moe_form ? i : i + 1;
      break;
    }
  }
  bool follows = n > 0;
  for (std::size_t i = 0; follows && i < flags.size(); ++i) {
    const bool picked = moe_form ? i % n == 0 : (i + 1) % n == 0;
    follows = flags[i] == (picked ? apart : 1 - apart);
  }
  return follows ? fmt::format("{}", n) : fmt::format("[{}]", fmt::join(flags, ","));
}

void attention(const ModelConfig& c, Writer& w, detail::Violations& bad) {
  const auto& a = c.attention;
  w.add("--num-attention-heads", a.num_heads);
  if (a.type == AttentionType::mla) {
    const auto& m = a.mla;
    w.add("--kv-channels", m.v_head_dim);  // unused by MLA, written so no default stands in
    w.add("--multi-latent-attention");
    if (m.q_lora_rank > 0) w.add("--q-lora-rank", m.q_lora_rank);
    w.add("--kv-lora-rank", m.kv_lora_rank);
    w.add("--qk-head-dim", m.qk_nope_head_dim);
    w.add("--qk-pos-emb-head-dim", m.qk_rope_head_dim);
    w.add("--v-head-dim", m.v_head_dim);
  } else {
    if (a.num_kv_heads < a.num_heads) {
      w.add("--group-query-attention");
      w.add("--num-query-groups", a.num_kv_heads);
    }
    w.add("--kv-channels", a.head_dim);
  }
  if (a.qk_norm == QkNorm::per_head) w.add("--qk-layernorm");
  if (a.qk_norm == QkNorm::full)
    bad.add("attention.qk_norm", "\"full\"",
            "Megatron-LM cannot express it (--qk-layernorm normalises each head, \"per_head\"; none spans all heads)");
  if (a.sinks) w.add("--softmax-type", "learnable");
  // Megatron's window: (left, right) tokens; left = window, as gpt-oss's published conversion writes 128,0.
  std::vector<int> sliding;
  bool any_sliding = false;
  for (i64 i = 0; i < c.num_layers; ++i) {
    const LayerAttention kind = c.attention_at(i);
    if (kind == LayerAttention::chunked) {
      std::vector<std::string_view> words;
      for (const auto k : a.pattern) words.push_back(to_string(k));
      bad.add("attention.pattern", fmt::format("[\"{}\"]", fmt::join(words, "\", \"")),
              "Megatron-LM cannot express chunked attention (it has sliding windows only)");
      return;
    }
    sliding.push_back(kind == LayerAttention::sliding ? 1 : 0);
    any_sliding = any_sliding || kind == LayerAttention::sliding;
  }
  if (!any_sliding) return;
  w.add("--window-size", fmt::format("{},0", a.window));
  const bool all = std::find(sliding.begin(), sliding.end(), 0) == sliding.end();
  if (!all) w.add("--window-attn-skip-freq", layer_pattern(sliding, false));
}

// Megatron's add_bias_linear (on unless --disable-bias-linear) puts biases on
// every linear layer; --add-qkv-bias adds them on q, k and v alone.
void biases(const ModelConfig& c, Writer& w, detail::Violations& bad) {
  const bool qkv = c.attention.qkv_bias;
  const bool rest = c.attention.out_bias;
  const bool ffn = c.ffn.bias;
  if (qkv && rest && ffn) return;
  if (!rest && !ffn) {
    w.add("--disable-bias-linear");
    if (qkv) w.add("--add-qkv-bias");
    return;
  }
  bad.add("attention.out_bias, ffn.bias", fmt::format("{}, {}", rest, ffn),
          "Megatron-LM cannot express them apart (--disable-bias-linear switches the output projection's and the "
          "FFN's biases together, and with them q, k and v's)");
}

// Megatron's router (megatron/core/transformer/moe/router.py) has a bias
// exactly when add_bias_linear is on, and adds an expert bias
// (--moe-router-enable-expert-bias, a buffer that TransformerConfig accepts
// with sigmoid scores only) on request.
void router_bias(const ModelConfig& c, Writer& w, detail::Violations& bad) {
  const auto& m = c.moe;
  const bool linear_biases = c.attention.qkv_bias && c.attention.out_bias && c.ffn.bias;
  if (linear_biases) {
    if (!m.router_bias)
      bad.add("moe.router_bias", "false",
              "Megatron-LM cannot express it beside linear-layer biases (add_bias_linear gives the router a bias "
              "too)");
    return;  // the router linear's bias is the router bias
  }
  if (!m.router_bias) return;
  if (m.router_score != RouterScore::sigmoid) {
    bad.add("moe.router_bias", "true",
            fmt::format("Megatron-LM cannot express it with moe.router_score = \"{}\" and no linear-layer biases "
                        "(its expert bias, --moe-router-enable-expert-bias, is for sigmoid scores only)",
                        to_string(m.router_score)));
    return;
  }
  w.add("--moe-router-enable-expert-bias");
}

void moe(const ModelConfig& c, Writer& w, detail::Violations& bad) {
  const auto& m = c.moe;
  if (!c.is_moe()) return;
  w.add("--num-experts", m.num_experts);
  w.add("--moe-ffn-hidden-size", m.expert_width);
  w.add("--moe-router-topk", m.top_k);
  std::vector<int> flags;
  for (const bool is_moe : export_detail::moe_layer_flags(c)) flags.push_back(is_moe ? 1 : 0);
  w.add("--moe-layer-freq", layer_pattern(flags, true));
  w.add("--moe-router-score-function", std::string(to_string(m.router_score)));
  if (m.num_shared_experts > 0) {
    // Megatron's shared experts are one MLP of the summed width: the same weights and FLOPs.
    w.add("--moe-shared-expert-intermediate-size", m.num_shared_experts * m.shared_width);
    if (m.shared_gate) w.add("--moe-shared-expert-gate");
  }  // a gate without a shared expert is refused by validate()
  router_bias(c, w, bad);
}

// A flag and a value as text() writes them: --lower-case-words, and numbers,
// words and Python lists of numbers. Nothing a shell or a line reader could
// split differently.
bool plain_flag(std::string_view flag) {
  if (flag.size() < 3 || flag.substr(0, 2) != "--") return false;
  return std::all_of(flag.begin() + 2, flag.end(),
                     [](char ch) { return (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') || ch == '-'; });
}

bool plain_value(std::string_view value) {
  return std::all_of(value.begin(), value.end(), [](char ch) {
    return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == ',' || ch == '.' ||
           ch == '-' || ch == '_' || ch == '[' || ch == ']';
  });
}

}  // namespace

std::string MegatronArguments::text() const {
  detail::Violations bad;
  for (std::size_t i = 0; i < arguments.size(); ++i) {
    const auto& [flag, value] = arguments[i];
    if (!plain_flag(flag))
      bad.add(fmt::format("MegatronArguments::arguments[{}].flag", i),
              export_detail::ascii_literal(detail::excerpt(flag)),
              "must be -- and lower-case letters, digits and hyphens");
    if (!plain_value(value))
      bad.add(fmt::format("MegatronArguments::arguments[{}].value", i),
              export_detail::ascii_literal(detail::excerpt(value)),
              "must be letters, digits and , . - _ [ ] (a number, a word or a list)");
  }
  bad.throw_if_any();
  std::string out;
  for (const auto& line : comments) out += "# " + detail::one_line(line) + "\n";
  for (const auto& [flag, value] : arguments) out += value.empty() ? flag + "\n" : flag + " " + value + "\n";
  return out;
}

namespace {

// The loop as the change to Megatron-Core's TransformerBlock runs it (docs/export.md, "Running a loop in
// Megatron-Core"): the stored layers in the order they execute, a span's passes as "4-9 x 2".
std::string executed_order(const ModelConfig& c) {
  std::vector<std::string> runs;
  std::int64_t next = 1;
  std::int64_t visits = 0;
  const auto plain = [&](std::int64_t upto) {
    if (next > upto) return;
    runs.push_back(next == upto ? fmt::format("{}", next) : fmt::format("{}-{}", next, upto));
    visits += upto - next + 1;
  };
  for (const LoopConfig& l : c.loops) {
    if (!l.active()) continue;
    plain(l.first - 1);
    runs.push_back(fmt::format("{} x {}", format_span(l), l.count));
    visits += (l.last - l.first + 1) * l.count;
    next = l.last + 1;
  }
  plain(c.num_layers);
  return fmt::format(
      "executed order (1-based, Megatron's layer_number): {}: {} layer visits (docs/export.md, "
      "\"Running a loop in Megatron-Core\")",
      fmt::join(runs, ", "), visits);
}

// What the looped families add (config.hpp): what stores parameters Megatron-LM's arguments cannot build is
// refused, as any lost field; what only changes the run of a pass is said in a comment beside the loop's.
void looped_family(const ModelConfig& c, Writer& w, detail::Violations& bad) {
  constexpr std::string_view kNone = "Megatron-LM's arguments build no such module";
  if (c.norm_placement != NormPlacement::pre)
    bad.add("norm_placement", fmt::format("\"{}\"", to_string(c.norm_placement)),
            "Megatron-LM's layers are pre-norm: its arguments build two norms a layer, not four");
  if (c.attention.qk_bias) bad.add("attention.qk_bias", "true", std::string(kNone) + " (--add-qkv-bias biases v too)");
  for (std::size_t i = 0; i < c.loops.size(); ++i) {
    const LoopConfig& l = c.loops[i];
    const std::string name = c.loops.size() == 1 ? std::string("loop") : fmt::format("loops[{}]", i);
    if (l.exit_gate) bad.add(name + ".exit_gate", "true", std::string(kNone));
    if (l.injection != Injection::none)
      bad.add(name + ".injection", fmt::format("\"{}\"", to_string(l.injection)), std::string(kNone));
    if (l.lora_rank > 0) bad.add(name + ".lora_rank", fmt::format("{}", l.lora_rank), std::string(kNone));
    if (l.norm_each_pass || l.norm_after)
      w.comment(fmt::format("layers {}: the final norm also runs {} (its weights, no more parameters)", format_span(l),
                            l.norm_each_pass ? "after every pass" : "after the last pass"));
    if (l.backprop_passes > 0)
      w.comment(fmt::format("layers {}: the backward runs through the last {} of the {} passes only", format_span(l),
                            l.backprop_passes, l.count));
    if (l.kv_policy != KvPolicy::per_visit)
      w.comment(fmt::format("layers {}: KV cache policy \"{}\" across passes", format_span(l), to_string(l.kv_policy)));
  }
}

}  // namespace

MegatronArguments export_megatron(const ModelConfig& c) {
  validate(c);
  export_detail::require_utf8_name(c);
  Writer w;
  detail::Violations bad;
  w.comment(fmt::format("Megatron-LM arguments for {} (the physical model: {} stored layers)",
                        export_detail::ascii_literal(c.name), c.num_layers));
  for (const LoopConfig& l : c.loops) {
    if (!l.active()) continue;
    w.comment(
        fmt::format("Megatron-LM has no shared-weight layer loop: these arguments train the {} layers once "
                    "each. Run layers {} ({}-based) {} times with the same weights, scaling their residual "
                    "updates by {}, in your own change to the model",
                    c.num_layers, format_span(l), 1, l.count, l.residual_scale));
  }
  if (c.looped()) w.comment(executed_order(c));
  w.comment(fmt::format("vocabulary: {} (from the tokenizer; Megatron-LM pads it to --make-vocab-size-divisible-by)",
                        c.vocab_size));
  w.add("--num-layers", c.num_layers);
  w.add("--hidden-size", c.hidden_size);
  attention(c, w, bad);
  if (c.ffn.dense_width > 0 || !c.is_moe()) {
    w.add("--ffn-hidden-size", c.ffn.dense_width);
  } else {
    // No dense FFN layer (validate() requires a width for one): Megatron still wants a value, unused.
    w.add("--ffn-hidden-size", c.moe.expert_width);
    w.comment("no layer is a dense FFN: --ffn-hidden-size (unused) is the expert width");
  }
  if (c.ffn.type == FfnType::gated) w.add("--swiglu");
  w.add("--normalization", c.norm == NormType::rmsnorm ? "RMSNorm" : "LayerNorm");
  biases(c, w, bad);
  moe(c, w, bad);
  if (c.mtp_modules > 0) w.add("--mtp-num-layers", c.mtp_modules);
  // Rotary positions have no parameters; the base and scaling are not in a ModelConfig.
  w.add("--position-embedding-type", "rope");
  w.comment(
      "positions: rotary (no parameters); the rotary base and scaling are not in the config: add --rotary-base "
      "(Megatron-LM's default 10000) and --rotary-scaling-factor as the model has them");
  w.add("--seq-length", c.context_length);
  w.add("--max-position-embeddings", c.context_length);
  if (!c.tie_embeddings) w.add("--untie-embeddings-and-output-weights");
  looped_family(c, w, bad);
  bad.throw_if_any();
  return std::move(w.out);
}

}  // namespace smelt
