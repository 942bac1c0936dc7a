// The rules a ModelConfig's fields must satisfy (validate.cpp): sizes within
// their bounds (include/smelt/detail/bounds.hpp), heads that divide, spans inside the
// model, every violation at once. The config's readers end with it; validate()
// and count() (include/smelt/count.hpp) add count's own rule, that every total
// fits in 64-bit integers.
#pragma once

#include "smelt/config.hpp"

namespace smelt::config_detail {

// Throws config_error listing every violated rule, each naming the field path,
// the value and the rule.
void validate_fields(const ModelConfig& config);

}  // namespace smelt::config_detail
