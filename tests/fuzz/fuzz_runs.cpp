// The training-runs reader (CSV or JSON, told apart by the first character).
// The first byte picks the law form and whether a label column is read.
#include "harness.hpp"
#include "smelt/detail/scaling_text.hpp"
#include "smelt/error.hpp"
#include "smelt/scaling_runs.hpp"

#include <cmath>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace smelt;
  if (size == 0) return 0;
  const LawForm form = (data[0] & 1) != 0 ? LawForm::smelt : LawForm::chinchilla;
  const std::string label = (data[0] & 2) != 0 ? "arch" : "";
  try {
    for (const Run& r : detail::parse_runs(fuzz::text_of(data + 1, size - 1), "<fuzz>", form, label))
      fuzz::require(std::isfinite(r.d) && std::isfinite(r.loss) && r.loss > 0);
  } catch (const smelt::error&) {
  }
  return 0;
}
