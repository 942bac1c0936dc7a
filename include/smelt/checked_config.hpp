// A config that validate() accepted, kept together with that fact: solve() and
// sweep() take one without validating it again, so that a config read once is
// validated once on every path, however many solves a derive (its relaxations)
// or a sweep (its rows) runs on it.
#pragma once

#include <utility>

#include "smelt/config.hpp"

namespace smelt {

class CheckedConfig;

namespace detail {
// For the readers, which validate what they read (src/count/accept.cpp): the
// config as checked, without checking it again.
CheckedConfig checked_as_read(ModelConfig config);
}  // namespace detail

class CheckedConfig {
 public:
  // Runs validate() (include/smelt/count.hpp): throws config_error (every
  // violation) or overflow_error.
  explicit CheckedConfig(ModelConfig config);

  const ModelConfig& get() const noexcept { return config_; }
  operator const ModelConfig&() const noexcept { return config_; }  // NOLINT: it reads as the config it holds
  ModelConfig release() && { return std::move(config_); }

 private:
  struct AsRead {};
  CheckedConfig(ModelConfig config, AsRead) : config_(std::move(config)) {}
  friend CheckedConfig detail::checked_as_read(ModelConfig config);

  ModelConfig config_;
};

}  // namespace smelt
