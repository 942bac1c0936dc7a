// Exit codes of smelt-match, one per failure kind (docs/cli.md), and the one
// place a library error becomes one.
#pragma once

#include "smelt/error.hpp"

namespace smelt::cli {

enum ExitCode : int {
  kOk = 0,
  kInternal = 1,    // a bug: please report it
  kBadInput = 2,    // invalid config, option or usage (config_error, overflow_error)
  kInfeasible = 3,  // no answer: outside the tolerance, a fit that does not converge (infeasible_error)
  kIo = 4,          // a file that cannot be read or written (io_error)
  kCuda = 5,        // a CUDA failure or a device that cannot run the request (cuda_error)
};

// The exit code of a library error; a plain smelt::error (none of its kinds) is a bug.
inline ExitCode exit_code_of(const smelt::error& e) {
  if (dynamic_cast<const config_error*>(&e)) return kBadInput;  // overflow_error too
  if (dynamic_cast<const infeasible_error*>(&e)) return kInfeasible;
  if (dynamic_cast<const io_error*>(&e)) return kIo;
  if (dynamic_cast<const cuda_error*>(&e)) return kCuda;
  return kInternal;
}

}  // namespace smelt::cli
