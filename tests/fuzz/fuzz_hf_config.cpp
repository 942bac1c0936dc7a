// The Hugging Face config.json import: a config that imports is a valid
// ModelConfig, writes to native JSON that reads back, and can be counted into
// layer runs that hold every layer once.
#include "harness.hpp"
#include "smelt/config_io.hpp"
#include "smelt/count.hpp"
#include "smelt/error.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace smelt;
  try {
    const ModelConfig c = parse_hf_config(fuzz::text_of(data, size), "<fuzz>");
    const std::string json = to_json(c);
    fuzz::require(to_json(parse_native_config(json, "<round trip>")) == json);
    fuzz::require_layer_runs(c, count(c));
  } catch (const smelt::error&) {
  }
  return 0;
}
