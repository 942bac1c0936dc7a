// Korthikanti et al. 2022, "Reducing Activation Recomputation in Large
// Transformer Models" (arXiv:2205.05198), section 4: bytes one transformer
// layer keeps with 16-bit activations and 1-byte dropout masks, s tokens, b
// sequences, h hidden, a heads, t tensor-parallel ranks:
//   no parallelism                     sbh (34 + 5as/h)            (eq. 1)
//   tensor parallel                    sbh (10 + 24/t + 5as/(ht))  (eq. 2)
//   tensor + sequence parallel         sbh (34/t + 5as/(ht))       (eq. 3)
//   selective recompute                the 5as/(ht) term dropped   (eq. 5/6)
//   full recompute                     2sbh (/t with sequence parallelism)
// The formula knows no experts, loops or MLA: a layer visit is one layer of
// width h with a heads, whatever its FFN. Context parallelism divides s for
// every term but the keys of the score term. Nothing outside the layers.
#include <cmath>

#include "memory/activations.hpp"

namespace smelt::memory_detail {

MemoryPart korthikanti_visit(const ActivationInput& in, std::int64_t, Recompute recompute) {
  const MemoryLayout& l = in.r.layout;
  const double s = static_cast<double>(l.seq), b = static_cast<double>(l.micro_batch);
  const double h = static_cast<double>(in.config.hidden_size), a = static_cast<double>(in.config.attention.num_heads);
  const double t = static_cast<double>(l.tp), cp = static_cast<double>(l.cp);
  const double sbh = s / cp * b * h;
  MemoryPart out;
  if (recompute == Recompute::full) {
    out.add("layer_input", std::llround(2 * sbh / (l.sequence_parallel ? t : 1)));
    return out;
  }
  const double linear = l.sequence_parallel ? 34 / t : l.tp > 1 ? 10 + 24 / t : 34;
  out.add("sbh", std::llround(sbh * linear));
  if (recompute == Recompute::none) out.add("attention_scores", std::llround(5 * a * (s / cp) * s * b / t));
  return out;
}

MemoryPart korthikanti_outside(const ActivationInput&, bool, bool) { return {}; }

}  // namespace smelt::memory_detail
