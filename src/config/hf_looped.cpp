// The looped families' config.json readers (config/hf_looped.hpp). Keys and
// structure from each family's own modeling code, cited per reader; formulas
// in docs/counting.md, "Loop forms".
#include "config/hf_looped.hpp"

#include <fmt/format.h>

#include "config/hf_keys.hpp"
#include "smelt/detail/bounds.hpp"

namespace smelt::config_detail {

using namespace smelt::detail;  // the helpers every module shares

// Ouro / LoopLM (model_type "ouro"; configuration_ouro.py and modeling_ouro.py
// of ByteDance/Ouro-1.4B at Hub revision 574fa66cb8bf5abdc979642d01cf2b79b16bfab1):
// a Qwen2-shaped decoder without attention biases (q, k, v and o are
// bias-free), SwiGLU of intermediate_size, four RMSNorms a layer placed
// x + norm2(f(norm1(x))) around attention and around the MLP, the whole stack
// run total_ut_steps times with no residual scale; after every step the final
// norm (fed to the next step) and the early-exit gate Linear(H, 1) with a
// bias; KV slot step x layers + layer, one per visit. early_exit_threshold
// only picks which step's output is read: every step runs, so it costs nothing.
std::vector<LayerAttention> read_ouro(JsonObject& o, ModelConfig& c) {
  read_common(o, c);
  c.attention.head_dim = o.integer("head_dim", derived_head_dim(c));
  c.ffn.dense_width = o.integer("intermediate_size");
  c.norm_placement = NormPlacement::sandwich;
  const std::int64_t steps = o.integer("total_ut_steps", 4);
  if (steps < 1 || steps > kMaxLoops)
    o.violation("total_ut_steps", fmt::format("{}", steps), fmt::format("must be between 1 and {}", kMaxLoops));
  else if (sane_depth(c))
    c.loops.push_back({.first = 1,
                       .last = c.num_layers,
                       .count = steps,
                       .residual_scale = 1.0,
                       .norm_each_pass = true,
                       .exit_gate = true});
  return qwen_kinds(o, c);
}

namespace {

// A class-name key that must name the one module smelt reads for it.
void require_class(JsonObject& o, std::string_view key, std::string_view expected) {
  const std::string got = o.string(key, std::string(expected));
  if (got != expected)
    o.violation(key, fmt::format("\"{}\"", got), fmt::format("must be \"{}\" (the one this reader knows)", expected));
}

}  // namespace

// Huginn-0125 (model_type "huginn_raven"; raven_config_minimal.py and
// raven_modeling_minimal.py of tomg-group-umd/huginn-0125, and recpre/ of
// github.com/seal-rg/recurrent-pretraining at c1fbabccf7e02b2f63f5f9fab7f00a8c1032022d):
// n_layers_in_prelude blocks, then n_layers_in_recurrent_block blocks run r
// times (mean_recurrence at inference), then n_layers_in_coda blocks. Before
// every recurrence the adapter Linear(2H -> H, bias = config.bias) reads the
// state beside the prelude's output; ln_f norms the recurrence's output (fed
// to the coda) and again the coda's. SandwichBlock: x = norm_2(x + attn(norm_1(x))),
// x = norm_4(x + mlp(norm_3(x))). Attention: a fused Wqkv without bias, qk_bias
// on q and k only, n_kv = n_heads; GatedMLP of intermediate_size. Training runs
// the first r - mean_backprop_depth recurrences without gradients.
std::vector<LayerAttention> read_huginn(JsonObject& o, ModelConfig& c) {
  c.hidden_size = o.integer("n_embd");
  c.vocab_size = o.raw("padded_vocab_size") != nullptr ? o.integer("padded_vocab_size") : o.integer("vocab_size");
  c.context_length = o.integer("block_size", 4096);
  c.tie_embeddings = o.boolean("tie_embeddings", true);
  c.kv_cache_bytes = dtype_bytes(o);
  auto& a = c.attention;
  a.num_heads = o.integer("n_heads");
  a.num_kv_heads = a.num_heads;  // RavenConfig sets num_key_value_heads = n_heads
  if (a.num_heads > 0 && c.hidden_size % a.num_heads != 0)
    o.violation("n_heads", fmt::format("{}", a.num_heads), fmt::format("must divide n_embd = {}", c.hidden_size));
  a.head_dim = a.num_heads > 0 ? c.hidden_size / a.num_heads : 0;
  a.qk_bias = o.boolean("qk_bias", false);
  if (o.boolean("bias", false)) o.violation("bias", "true", "not read: no released Huginn has linear-layer biases");
  c.ffn.dense_width = o.integer("intermediate_size");
  c.norm_placement = NormPlacement::sandwich_residual;
  require_class(o, "block_class_name", "SandwichBlock");
  require_class(o, "mlp_class_name", "GatedMLP");
  require_class(o, "norm_class_name", "RMSNorm_llama");
  require_class(o, "injection_type", "linear");
  // Each part is bounded before the sum, which then stays far inside 64 bits.
  const auto part = [&](std::string_view key, std::int64_t lo) {
    const std::int64_t n = o.integer(key);
    o.violations().range(o.field(key), n, lo, kMaxLayers);
    return n;
  };
  const std::int64_t prelude = part("n_layers_in_prelude", 0);
  const std::int64_t core = part("n_layers_in_recurrent_block", 1);
  const std::int64_t coda = part("n_layers_in_coda", 0);
  const bool parts_ok =
      prelude >= 0 && prelude <= kMaxLayers && core >= 1 && core <= kMaxLayers && coda >= 0 && coda <= kMaxLayers;
  c.num_layers = parts_ok ? prelude + core + coda : 0;
  // n_layers is redundant but must agree, and be an integer whatever it says (RavenConfig reads it as one).
  if (o.raw("n_layers") != nullptr) {
    const std::size_t before = o.violations().size();
    const std::int64_t n = o.integer("n_layers");
    if (o.violations().size() == before && parts_ok && n != c.num_layers)
      o.violation("n_layers", fmt::format("{}", n),
                  fmt::format("must equal n_layers_in_prelude + n_layers_in_recurrent_block + n_layers_in_coda = {}",
                              c.num_layers));
  }
  const std::int64_t r = o.integer("mean_recurrence");
  const std::int64_t depth = o.integer("mean_backprop_depth", 0);
  if (r < 1 || r > kMaxLoops)
    o.violation("mean_recurrence", fmt::format("{}", r), fmt::format("must be between 1 and {}", kMaxLoops));
  if (depth < 0) o.violation("mean_backprop_depth", fmt::format("{}", depth), "must be at least 0");
  if (!parts_ok || r < 1 || r > kMaxLoops || depth < 0) return {};
  c.loops.push_back({.first = prelude + 1,
                     .last = prelude + core,
                     .count = r,
                     .residual_scale = 1.0,
                     .injection = Injection::linear,
                     .norm_after = true,
                     .backprop_passes = depth >= r ? 0 : depth});
  return {};
}

// Nanbeige4.2 (model_type "nanbeige"; modeling_nanbeige.py and configuration_nanbeige.py of Nanbeige/Nanbeige4.2-3B
// on the Hub, as SGLang's python/sglang/srt/models/nanbeige.py and configs/nanbeige.py, llama.cpp's
// src/models/nanbeige.cpp and mlx-lm's mlx_lm/models/nanbeige.py run it; commits in docs/config.md): a Llama
// decoder (pre-norm, GQA with head_dim, default hidden / heads; SwiGLU of intermediate_size; attention_bias and
// mlp_bias; qk_layernorm one RMSNorm(head_dim) on q and one on k) whose whole stack runs num_loops times with the
// same weights and no residual scale. After every loop the final norm model.norm, its output fed to the next loop;
// skip_loop_final_norm leaves it to the end alone. KV slot loop x layers + layer, one per visit. A non-empty
// loop_loss_weights makes the modeling code run len + 1 loops, which the engines (num_loops) do not: the two must
// agree. The options no released checkpoint enables (n-gram embeddings, hyper-connections, depth attention, the
// middle-block loop split and its KV sharing) carry weights or schedules smelt does not read: refused by name, as
// mlx-lm refuses them.
std::vector<LayerAttention> read_nanbeige(JsonObject& o, ModelConfig& c) {
  read_common(o, c);
  c.attention.head_dim = o.integer("head_dim", derived_head_dim(c));  // NanbeigeConfig: hidden / heads
  if (o.raw("kv_channels") != nullptr) {  // Megatron's name for head_dim, which the released config repeats
    const std::size_t before = o.violations().size();
    const std::int64_t channels = o.integer("kv_channels");
    if (o.violations().size() == before && channels != c.attention.head_dim)
      o.violation("kv_channels", fmt::format("{}", channels),
                  fmt::format("must equal head_dim = {} (the width the modeling code uses)", c.attention.head_dim));
  }
  read_attention_bias(o, c, false);
  c.ffn.bias = o.boolean("mlp_bias", false);
  if (o.boolean("qk_layernorm", false)) c.attention.qk_norm = QkNorm::per_head;
  c.ffn.dense_width = o.integer("intermediate_size");
  for (const char* key : {"enable_double_loop_split", "loop_share_kv", "enable_hyper_connection", "enable_mhc",
                          "enable_h_res_identity", "enable_depth_attention", "ngram_insert_all_layers"})
    if (o.boolean(key, false)) o.violation(key, "true", "not read: no released Nanbeige enables it");
  for (const char* key : {"emb_neighbor_num", "insert_ngram_layer_idx"})
    if (const auto* v = o.raw(key); v != nullptr && !(v->is_array() && v->empty()))
      o.violation(key, json_excerpt(*v), "not read: no released Nanbeige has n-gram embeddings");
  const std::int64_t loops = o.integer("num_loops", 2);  // NanbeigeConfig's default
  const bool norm_each_loop = !o.boolean("skip_loop_final_norm", false);
  if (const auto* w = o.raw("loop_loss_weights"); w != nullptr) {
    if (!w->is_array())
      o.violation("loop_loss_weights", json_excerpt(*w), "must be a list of numbers");
    else if (!w->empty() && static_cast<std::int64_t>(w->size()) + 1 != loops)
      o.violation("loop_loss_weights", json_excerpt(*w),
                  fmt::format("has {} entries: the modeling code then runs {} loops, num_loops = {} says otherwise",
                              w->size(), w->size() + 1, loops));
  }
  if (loops < 1 || loops > kMaxLoops)
    o.violation("num_loops", fmt::format("{}", loops), fmt::format("must be between 1 and {}", kMaxLoops));
  else if (loops > 1 && sane_depth(c))
    c.loops.push_back(
        {.first = 1, .last = c.num_layers, .count = loops, .residual_scale = 1.0, .norm_each_pass = norm_each_loop});
  return {};
}

}  // namespace smelt::config_detail
