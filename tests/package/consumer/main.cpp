// Uses the installed package the way a user would.
#include <cstdio>

#include "smelt/count.hpp"
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
  const smelt::CostReport r = smelt::count(c);
  std::printf("consumer: smelt %s, mixtral total %lld\n", smelt::version, static_cast<long long>(r.params.total));
  return 0;
}
