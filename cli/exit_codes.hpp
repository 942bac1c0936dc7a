// Exit codes of smelt-match, one per failure kind (docs/cli.md).
#pragma once

namespace smelt::cli {

enum ExitCode : int {
  kOk = 0,
  kInternal = 1,    // a bug: please report it
  kBadInput = 2,    // invalid config, option or usage
  kInfeasible = 3,  // no answer meets the request (solver)
  kIo = 4,          // a file that cannot be read or written
  kCuda = 5,        // a CUDA failure (bench)
};

}  // namespace smelt::cli
