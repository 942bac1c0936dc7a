// The law-file reader (what fit --out writes and frontier reads): a file that
// reads writes back to JSON that reads to the same bytes.
#include "harness.hpp"
#include "smelt/detail/scaling_text.hpp"
#include "smelt/error.hpp"
#include "smelt/scaling_laws.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace smelt;
  try {
    const std::vector<Law> laws = detail::parse_law_file(fuzz::text_of(data, size), "<fuzz>");
    const std::string json = laws_to_json(laws);
    fuzz::require(laws_to_json(detail::parse_law_file(json, "<round trip>")) == json);
  } catch (const smelt::error&) {
  }
  return 0;
}
