// Uses the installed package the way a user would, and as smelt-match does
// (the CLI builds on the public headers alone: the violations collector and
// the bounds it checks options against).
#include <cstdio>

#include "smelt/count.hpp"
#include "smelt/detail/bounds.hpp"
#include "smelt/detail/violations.hpp"
#include "smelt/version.hpp"

int main() {
  smelt::ModelConfig c;
  c.name = "mixtral-8x7b";
  c.vocab_size = 32000;
  c.num_layers = 32;
  c.hidden_size = 4096;
  c.attention.num_heads = 32;
  c.attention.num_kv_heads = 8;
  c.attention.head_dim = 128;
  c.moe.num_experts = 8;
  c.moe.top_k = 2;
  c.moe.expert_width = 14336;
  smelt::detail::Violations violations;
  violations.range("context_length", c.context_length, 1, smelt::detail::kMaxContext);
  if (!violations.empty()) return 1;
  const smelt::CostReport r = smelt::count(c);
  std::printf("consumer: smelt %s, mixtral total %lld\n", smelt::version, static_cast<long long>(r.params.total));
  return 0;
}
