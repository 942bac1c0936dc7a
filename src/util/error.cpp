#include "smelt/error.hpp"

#include "smelt/detail/excerpt.hpp"
#include "util/mention.hpp"

namespace smelt {
namespace {

// A part of a message longer than this echoes a value no reader cut: a safety
// net, far above any message smelt writes itself.
constexpr std::size_t kMaxPartBytes = 4096;

std::string cut(std::string text) { return text.size() > kMaxPartBytes ? detail::excerpt(text, kMaxPartBytes) : text; }

// Marked mentions taken out of the rule (util/mention.hpp), then every part cut;
// a mention a cut reaches is dropped (it names no field any more).
std::vector<Violation> cut_parts(std::vector<Violation> violations) {
  for (auto& v : violations) {
    if (v.rule.find(detail::kMentionBegin) != std::string::npos) {
      Message m = detail::resolve_mentions(v.rule);
      v.rule = std::move(m.text);
      v.mentions.insert(v.mentions.end(), m.mentions.begin(), m.mentions.end());
    }
    v.field = cut(std::move(v.field));
    v.value = cut(std::move(v.value));
    v.rule = cut(std::move(v.rule));
    while (!v.mentions.empty() && v.mentions.back().offset + v.mentions.back().length > v.rule.size())
      v.mentions.pop_back();
  }
  return violations;
}

std::string join_lines(const std::vector<Violation>& violations) {
  std::string out;
  for (const auto& v : violations) {
    if (!out.empty()) out += '\n';
    out += v.text();
  }
  return out;
}

}  // namespace

namespace detail {

Message resolve_mentions(std::string_view marked) {
  Message out;
  for (std::size_t i = 0; i < marked.size();) {
    const std::size_t end = marked[i] == kMentionBegin ? marked.find(kMentionEnd, i) : std::string_view::npos;
    if (end == std::string_view::npos) {
      out.text += marked[i++];
      continue;
    }
    const std::string_view inside = marked.substr(i + 1, end - i - 1);
    const std::size_t bar = inside.find(kMentionValue);
    FieldMention m{out.text.size(), 0, std::string(inside.substr(0, bar)), ""};
    out.text += m.field;
    if (bar != std::string_view::npos) {
      m.value = inside.substr(bar + 1);
      out.text += " = " + m.value;
    }
    m.length = out.text.size() - m.offset;
    out.mentions.push_back(std::move(m));
    i = end + 1;
  }
  return out;
}

}  // namespace detail

std::string Violation::text() const {
  // A rule still marked (a Violation no config_error holds yet) reads in the library's names.
  const std::string plain =
      rule.find(detail::kMentionBegin) == std::string::npos ? rule : detail::resolve_mentions(rule).text;
  if (field.empty()) return plain;
  if (value.empty()) return field + ": " + plain;
  return field + " = " + value + ": " + plain;
}

config_error::config_error(std::vector<Violation> violations)
    : error(join_lines(violations = cut_parts(std::move(violations)))), violations_(std::move(violations)) {}

std::vector<std::string> config_error::lines() const {
  std::vector<std::string> out;
  out.reserve(violations_.size());
  for (const auto& v : violations_) out.push_back(v.text());
  return out;
}

cuda_error::cuda_error(Violation violation) : error(violation.text()) {
  Message m = detail::resolve_mentions(violation.rule);
  violation.rule = std::move(m.text);
  violation.mentions = std::move(m.mentions);
  violation_ = std::move(violation);
}

}  // namespace smelt
