// Naming an option field inside a message as a mention (smelt/error.hpp's
// FieldMention), not as bare text: mention() marks the name where the message
// is written; the violation, or the Message, keeps the plain text and where
// each name lies in it, so that a caller looks the field up instead of
// searching the text for names.
#pragma once

#include <string>
#include <string_view>

#include "smelt/error.hpp"

namespace smelt::detail {

// The marks around a mention while its message is being written: they never
// leave the library (resolve_mentions takes them out).
inline constexpr char kMentionBegin = '\x1e';
inline constexpr char kMentionValue = '\x1f';
inline constexpr char kMentionEnd = '\x1d';

// "SearchSpace::min_head_dim", marked.
inline std::string mention(std::string_view field) {
  return std::string(1, kMentionBegin).append(field).append(1, kMentionEnd);
}

// "SearchSpace::free_heads = false", marked as the setting of a field.
inline std::string mention(std::string_view field, std::string_view value) {
  return std::string(1, kMentionBegin).append(field).append(1, kMentionValue).append(value).append(1, kMentionEnd);
}

// `marked` without its marks, in the library's names, and where each mention lies.
Message resolve_mentions(std::string_view marked);

}  // namespace smelt::detail
