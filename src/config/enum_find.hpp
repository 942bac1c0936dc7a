// Lookups of the words of the enums a config lists many of (config/enums.cpp),
// without the thrown config_error of parse_*: a reader checks each entry of a
// long list with these, and throws the message only for the ones it lists.
#pragma once

#include <optional>
#include <string_view>

#include "smelt/config.hpp"

namespace smelt::config_detail {

std::optional<LayerAttention> find_layer_attention(std::string_view s);
std::optional<LoraTarget> find_lora_target(std::string_view s);

}  // namespace smelt::config_detail
