// smelt against transformers itself: tiny configs built with transformers'
// own config classes and saved with save_pretrained, and the exact parameter
// counts per term and KV cache of the model transformers builds from each
// (tests/data/transformers/, made by tests/transformers/make_hf_data.py; the
// versions are in expected.json). Every term agrees to the integer.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <set>
#include <string>

#include <nlohmann/json.hpp>

#include "smelt/config_io.hpp"
#include "smelt/count.hpp"
#include "smelt/error.hpp"
#include "smelt/file_io.hpp"

using namespace smelt;

namespace {

std::string data_path(const std::string& name) { return SMELT_SOURCE_DIR "/tests/data/transformers/" + name; }

const nlohmann::json& expected() {
  static const nlohmann::json j = nlohmann::json::parse(read_text_file(data_path("expected.json")));
  return j;
}

std::int64_t term(const ParamTerms& t, const std::string& name) {
  if (name == "embedding") return t.embedding;
  if (name == "lm_head") return t.lm_head;
  if (name == "attention") return t.attention;
  if (name == "norms") return t.norms;
  if (name == "router") return t.router;
  if (name == "experts") return t.experts;
  if (name == "shared_experts") return t.shared_experts;
  if (name == "dense_ffn") return t.dense_ffn;
  FAIL("unknown term " << name);
  return 0;
}

// The case's config as smelt imports it; a failed import fails this case only, so the others still run.
std::optional<ModelConfig> import_case(const nlohmann::json& c) {
  try {
    return read_config(data_path(c.at("config").get<std::string>()));
  } catch (const error& e) {
    FAIL_CHECK("import failed: " << e.what());
    return std::nullopt;
  }
}

// Tokens a layer's cache keeps after a forward of T tokens in transformers:
// DynamicSlidingWindowLayer keeps window - 1 (chunk - 1) between steps, the
// next token's own key and value making the window whole. smelt counts the
// whole window (docs/counting.md, section 7): one token more.
std::int64_t transformers_held(const ModelConfig& c, LayerAttention kind, std::int64_t t) {
  switch (kind) {
    case LayerAttention::sliding:
      return std::min(c.attention.window - 1, t);
    case LayerAttention::chunked:
      return std::min(c.attention.chunk - 1, t);
    case LayerAttention::full:
      break;
  }
  return t;
}

}  // namespace

TEST_CASE("the transformers-made data covers every supported model_type and names its versions", "[hf_transformers]") {
  const auto& e = expected();
  CHECK(e.at("transformers").get<std::string>() == "5.24.0");
  CHECK(e.at("torch").get<std::string>() == "2.15.0");
  CHECK(e.at("not_built").empty());  // every family's model class builds with this version
  std::set<std::string> seen;
  for (const auto& c : e.at("cases")) {
    const auto config = nlohmann::json::parse(read_text_file(data_path(c.at("config").get<std::string>())));
    seen.insert(config.at("model_type").get<std::string>());
  }
  // Every family but Ouro, Huginn and Nanbeige, whose modeling code is the Hub's remote code only (no transformers
  // class), and smelt's own (python/smelt/hf, checked against these families by tests/python/test_torch_hf_class.py).
  auto supported = supported_hf_model_types();
  for (const char* remote : {"ouro", "huginn_raven", "nanbeige", "smelt"})
    supported.erase(std::find(supported.begin(), supported.end(), remote));
  CHECK(std::vector<std::string>(seen.begin(), seen.end()) == supported);
  CHECK(e.at("cases").size() >= 28);
}

TEST_CASE("smelt's parameter terms equal those of the model transformers builds, to the integer", "[hf_transformers]") {
  for (const auto& c : expected().at("cases")) {
    const std::string name = c.at("case").get<std::string>();
    INFO("case " << name << " (" << c.at("note").get<std::string>() << ")");
    const auto imported = import_case(c);
    if (!imported) continue;
    const ModelConfig& config = *imported;
    CHECK(config.tie_embeddings == c.at("tied").get<bool>());
    const CostReport r = count(config);
    const auto& want = c.at("params");
    for (const auto& t : expected().at("terms")) {
      INFO("term " << t.get<std::string>());
      CHECK(term(r.params.terms, t.get<std::string>()) == want.at(t.get<std::string>()).get<std::int64_t>());
    }
    CHECK(r.params.total == want.at("total").get<std::int64_t>());
  }
}

TEST_CASE("smelt's KV cache per layer equals what transformers' DynamicCache holds", "[hf_transformers]") {
  for (const auto& c : expected().at("cases")) {
    const std::string name = c.at("case").get<std::string>();
    INFO("case " << name);
    const auto imported = import_case(c);
    if (!imported) continue;
    const ModelConfig& config = *imported;
    const auto& kv = c.at("kv_cache");
    const auto tokens = kv.at("tokens").get<std::int64_t>();
    const auto& per_layer = kv.at("elements_per_layer");
    const CostReport r = count(config, CountOptions{.context_length = tokens});
    REQUIRE(r.layers.size() == per_layer.size());
    for (std::size_t i = 0; i < r.layers.size(); ++i) {
      const LayerCost& l = r.layers[i];
      INFO("layer " << l.layer);
      CHECK(l.kv_elements_per_visit * transformers_held(config, l.attention, tokens) ==
            per_layer[i].get<std::int64_t>());
    }
    // The element size is the config's dtype wherever it names one (transformers then builds in it).
    if (!c.at("config_dtype").is_null()) CHECK(config.kv_cache_bytes == kv.at("element_bytes").get<std::int64_t>());
  }
}
