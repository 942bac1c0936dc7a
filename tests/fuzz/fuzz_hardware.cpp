// The hardware spec reader (smelt-match time --hardware FILE): a spec it accepts
// gives every op of a small looped MoE's step a finite, non-negative time.
#include <cmath>

#include "harness.hpp"
#include "smelt/config_io.hpp"
#include "smelt/error.hpp"
#include "smelt/hardware.hpp"
#include "smelt/time.hpp"

namespace {

const smelt::CheckedConfig& subject() {
  static const smelt::CheckedConfig config = smelt::parse_checked_config(
      R"({"schema_version": 1, "name": "fuzz", "vocab_size": 64, "num_layers": 4, "hidden_size": 32,
          "context_length": 16, "attention": {"type": "gqa", "num_heads": 2, "num_kv_heads": 1, "head_dim": 16},
          "ffn": {"type": "gated", "dense_width": 64},
          "moe": {"num_experts": 4, "top_k": 2, "expert_width": 16, "layers": {"first_dense": 1}},
          "loop": {"span": "2-3", "count": 2}})",
      "<fuzz subject>");
  return config;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace smelt;
  const CheckedConfig& config = subject();  // outside the try: the subject itself must read
  try {
    const HardwareSpec hw = parse_hardware_spec(fuzz::text_of(data, size), "<fuzz>");
    MemoryLayout layout;
    layout.seq = 16;
    const TimeReport r = step_time(config, layout, hw);
    for (const StepTime* s : {&r.training, &r.forward, &r.decode}) {
      fuzz::require(std::isfinite(s->seconds) && s->seconds >= 0);
      for (const Op& op : s->ops) fuzz::require(std::isfinite(op.seconds) && op.seconds >= 0);
    }
  } catch (const smelt::error&) {
  }
  return 0;
}
