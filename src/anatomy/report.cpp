// The public view of a layer's anatomy (smelt/anatomy.hpp): the private
// anatomy's lists, their terms and ops named.
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "anatomy/layer_anatomy.hpp"
#include "smelt/anatomy.hpp"
#include "smelt/error.hpp"

namespace smelt {

LayerAnatomyReport layer_anatomy(const ModelConfig& config, std::int64_t layer) {
  if (layer < 0 || layer >= config.num_layers)
    throw config_error(
        fmt::format("layer = {}: must be a 0-based stored layer, 0 to {}", layer, config.num_layers - 1));
  const bool moe = config.is_moe_layer(layer);
  const anatomy::LayerAnatomy a = anatomy::layer_anatomy(config, moe);
  LayerAnatomyReport out;
  out.layer = layer;
  out.moe = moe;
  for (const anatomy::Tensor& t : a.tensors)
    out.tensors.push_back({t.name, anatomy::name(t.term), t.elements, t.instances, t.trainable});
  for (const anatomy::Product& p : a.products) {
    const std::int64_t n = p.columns("product width");
    out.products.push_back({anatomy::name(p.op), n, p.k.whole("product width"), p.times});
  }
  out.qk_width = a.sums.core.qk.whole("query width");
  out.v_width = a.sums.core.v.whole("value width");
  out.kv_elements = a.sums.core.kv.whole("KV cache elements");
  return out;
}

std::string anatomy_json(const LayerAnatomyReport& a) {
  nlohmann::ordered_json j;
  j["layer"] = a.layer + 1;
  j["moe"] = a.moe;
  j["tensors"] = nlohmann::ordered_json::array();
  for (const LayerTensor& t : a.tensors)
    j["tensors"].push_back({{"name", t.name},
                            {"term", t.term},
                            {"elements", t.elements},
                            {"instances", t.instances},
                            {"trainable", t.trainable}});
  j["products"] = nlohmann::ordered_json::array();
  for (const LayerProduct& p : a.products)
    j["products"].push_back({{"op", p.op}, {"n", p.n}, {"k", p.k}, {"times", p.times}});
  j["qk_width"] = a.qk_width;
  j["v_width"] = a.v_width;
  j["kv_elements"] = a.kv_elements;
  return j.dump(2) + "\n";
}

}  // namespace smelt
