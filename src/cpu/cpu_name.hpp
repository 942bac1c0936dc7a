// The CPU's model name, as the backends report their device. Private to the
// bench module.
#pragma once

#include <string>

namespace smelt::cpu {

// /proc/cpuinfo's first "model name", or "unknown CPU" where there is none.
std::string cpu_name();

}  // namespace smelt::cpu
