// Exceptions thrown by smelt. Every user-facing failure is one of these, so the
// CLI can map each kind to its own exit code and nothing is ever printed or
// aborted from library code.
#pragma once

#include <cstddef>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace smelt {

// Root of the hierarchy; catch this to handle every smelt failure. A plain
// smelt::error (none of the kinds below) is a bug, never the input's fault.
class error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// An option field named inside a message: where (the byte offset and length of
// its name in the text), which field ("SearchSpace::min_head_dim") and, for a
// setting ("SearchSpace::free_heads = false"), the value it is set to. A
// caller names the field its own way (smelt-match by its flag) by looking the
// field up, never by searching the text.
struct FieldMention {
  std::size_t offset = 0;
  std::size_t length = 0;
  std::string field;
  std::string value;  // empty: the field alone

  friend bool operator==(const FieldMention& a, const FieldMention& b) {
    return a.offset == b.offset && a.length == b.length && a.field == b.field && a.value == b.value;
  }
};

// A text in the library's names, with the option fields it names.
struct Message {
  std::string text;
  std::vector<FieldMention> mentions;
};

// `text` with each mention replaced by what `name` makes of it ("field" or
// "field = value" in the library's own words).
template <class Name>
std::string with_names(const std::string& text, const std::vector<FieldMention>& mentions, Name&& name) {
  std::string out;
  std::size_t at = 0;
  for (const FieldMention& m : mentions) {
    out.append(text, at, m.offset - at);
    out += name(m);
    at = m.offset + m.length;
  }
  out.append(text, at, std::string::npos);
  return out;
}

// One broken rule: the field it is about, the value found and the rule. Fields
// are named as the library spells them: a config's JSON path
// ("attention.num_kv_heads") or an option's struct and member
// ("SearchSpace::align_hidden"), never a command-line flag. A message about no
// single field (malformed JSON at line:column, a file with no rows) has only a
// rule.
struct Violation {
  std::string field;  // one field, or several joined by ", "
  std::string value;  // as shown in the message ("0", "\"4..9\""); may be empty
  std::string rule;
  std::vector<FieldMention> mentions;  // the option fields `rule` names

  Violation(std::string message) : rule(std::move(message)) {}  // NOLINT: a plain message converts
  Violation(const char* message) : rule(message) {}             // NOLINT: as does a literal
  Violation(std::string field_, std::string value_, std::string rule_)
      : field(std::move(field_)), value(std::move(value_)), rule(std::move(rule_)) {}

  // "field = value: rule", "field: rule" without a value, "rule" without a field.
  std::string text() const;

  // Written out: kernels' device code includes this header as C++17.
  friend bool operator==(const Violation& a, const Violation& b) {
    return a.field == b.field && a.value == b.value && a.rule == b.rule;
  }
};

// A configuration (or option) that breaks a rule. Holds every violation found,
// not just the first; what() joins their texts one per line.
class config_error : public error {
 public:
  explicit config_error(std::vector<Violation> violations);
  explicit config_error(Violation violation) : config_error(std::vector<Violation>{std::move(violation)}) {}

  const std::vector<Violation>& violations() const noexcept { return violations_; }
  std::vector<std::string> lines() const;  // each violation's text()

 private:
  std::vector<Violation> violations_;
};

// A number too large to compute exactly in 64-bit integers (a product of
// sizes, FLOPs x tokens): the input's fault, so a kind of config_error.
class overflow_error : public config_error {
 public:
  using config_error::config_error;
};

// A file that cannot be read, parsed or written.
class io_error : public error {
 public:
  using error::error;
};

// A request with no answer: a fit that converges from no start, runs no finite
// scaling law describes.
class infeasible_error : public error {
 public:
  using error::error;
};

// A CUDA or cuBLAS failure, or a device that cannot run the request (too little
// memory): the machine's limit, not the input's fault. Used by the kernels backend.
class cuda_error : public error {
 public:
  using error::error;
  // About one option field (BenchOptions::backend): what() is the violation's text.
  explicit cuda_error(Violation violation);

  // The violation, when the error is about an option field; else nullptr.
  const Violation* violation() const noexcept { return violation_ ? &*violation_ : nullptr; }

 private:
  std::optional<Violation> violation_;
};

}  // namespace smelt
