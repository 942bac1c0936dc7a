// One stored layer's anatomy as the library counts it (docs/anatomy.md): its
// weight tensors, named as the reference model's torch.nn modules hold them,
// and its per-token matrix products. count() sums the same description, the
// time model lays its products out as GEMMs, the memory model reads its tensors.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "smelt/config.hpp"

namespace smelt {

struct LayerTensor {
  std::string name;            // within the layer: "attn.q_proj.weight"; an expert's "ffn.experts.*.up_proj.weight"
  std::string term;            // the ParamTerms field it is counted in: attention, norms, router, experts, ...
  std::int64_t elements = 0;   // one instance
  std::int64_t instances = 1;  // routed or shared experts: one tensor each
  bool trainable = true;       // false: DeepSeek's correction bias, which no optimizer steps
};

struct LayerProduct {
  std::string op;             // the FlopTerms field and the time model's op: attention_qkv, attention_out, router, ...
  std::int64_t n = 0, k = 0;  // x (1 x k) . W (k x n), all heads (GQA: Q, K and V fused, one product)
  std::int64_t times = 1;     // per token: top_k for the routed experts
};

struct LayerAnatomyReport {
  std::int64_t layer = 0;  // 0-based stored layer (1-based in the JSON)
  bool moe = false;
  std::vector<LayerTensor> tensors;        // in the reference model's order
  std::vector<LayerProduct> products;      // in the order a visit runs them
  std::int64_t qk_width = 0, v_width = 0;  // the attention core's query-key and value widths, all heads
  std::int64_t kv_elements = 0;            // cached per token
};

// Stored layer `layer` (0-based) of a validated config. Throws config_error
// when `layer` is not one of its layers.
LayerAnatomyReport layer_anatomy(const ModelConfig& config, std::int64_t layer);

// The report as ordered JSON text (`smelt-match anatomy --json`, smelt.layer_anatomy): "layer" 1-based, as the
// count report numbers layers, then "moe", "tensors", "products", "qk_width", "v_width", "kv_elements".
std::string anatomy_json(const LayerAnatomyReport& report);

}  // namespace smelt
