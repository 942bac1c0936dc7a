// ExecuTorch's params.json import (with block_repeat_config): a file that
// imports is a valid ModelConfig, its export reads back to the same config or
// names what it cannot hold, and it counts into layer runs holding every layer once.
#include "harness.hpp"
#include "smelt/config_io.hpp"
#include "smelt/count.hpp"
#include "smelt/error.hpp"
#include "smelt/export.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace smelt;
  try {
    const std::string_view text = fuzz::text_of(data, size);
    if (detect_format(text, "<fuzz>") != ConfigFormat::executorch) return 0;
    const ModelConfig c = parse_config(text, "<fuzz>");
    fuzz::require_layer_runs(c, count(c));
    ModelConfig back = parse_config(export_executorch(c), "<round trip>");
    back.name = c.name;
    fuzz::require(back == c);
  } catch (const smelt::error&) {
  }
  return 0;
}
