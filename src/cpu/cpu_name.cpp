#include "cpu/cpu_name.hpp"

#include <fstream>

namespace smelt::cpu {

std::string cpu_name() {
  std::ifstream in("/proc/cpuinfo");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("model name", 0) != 0) continue;
    const auto colon = line.find(':');
    if (colon == std::string::npos) break;
    const auto first = line.find_first_not_of(" \t", colon + 1);
    if (first != std::string::npos) return line.substr(first);
  }
  return "unknown CPU";
}

}  // namespace smelt::cpu
