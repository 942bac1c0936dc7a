// Exceptions thrown by smelt. Every user-facing failure is one of these, so the
// CLI can map each kind to its own exit code and nothing is ever printed or
// aborted from library code.
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

namespace smelt {

// Root of the hierarchy; catch this to handle every smelt failure.
class error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A configuration (or option) that breaks a rule. Holds every violation found,
// not just the first; what() joins them one per line.
class config_error : public error {
 public:
  explicit config_error(std::vector<std::string> violations);
  explicit config_error(const std::string& violation) : config_error(std::vector<std::string>{violation}) {}

  const std::vector<std::string>& violations() const noexcept { return violations_; }

 private:
  std::vector<std::string> violations_;
};

// A file that cannot be read, parsed or written.
class io_error : public error {
 public:
  using error::error;
};

// A request with no answer in the space searched (the solver), or runs no
// finite scaling law describes (fit_law).
class infeasible_error : public error {
 public:
  using error::error;
};

// A CUDA or cuBLAS failure (used by the kernels backend).
class cuda_error : public error {
 public:
  using error::error;
};

}  // namespace smelt
