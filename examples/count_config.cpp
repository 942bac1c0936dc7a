// The smallest use of the library: read a config (native or Hugging Face),
// count it, print the headline numbers.
#include <cstdio>
#include <exception>

#include "smelt/config_io.hpp"
#include "smelt/count.hpp"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: count_config CONFIG.json\n");
    return 2;
  }
  try {
    const smelt::ModelConfig config = smelt::read_config(argv[1]);
    const smelt::CostReport r = smelt::count(config);
    std::printf("%s: %lld parameters, %lld active, %.6g forward FLOPs/token, %.6g KV bytes/token\n", r.model.c_str(),
                static_cast<long long>(r.params.total), static_cast<long long>(r.params.active), r.flops.forward,
                r.kv.bytes_per_token);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 2;
  }
  return 0;
}
