// From the library's names to smelt-match's flags. The library names its own
// fields in every message (SearchSpace::align_hidden = 0: must be positive);
// the CLI shows its users the flags they typed (--align-hidden = 0: must be
// positive). A field's flag is "--" + its name in kebab-case, looked up in the
// option structs' field tables (include/smelt/option_fields.hpp); the few
// flags named otherwise are listed once, in flag_names.cpp. Fields inside a
// message are mentions (smelt/error.hpp): looked up, never searched for.
#pragma once

#include <string>
#include <string_view>

#include "smelt/error.hpp"
#include "smelt/option_fields.hpp"

namespace smelt::cli {

// How smelt-match spells one field.
struct FieldFlag {
  std::string field;     // "SearchSpace::free_heads"
  std::string flag;      // "--free-heads"; empty where only the negative exists
  std::string negative;  // a boolean's flag for false ("--keep-heads"), or empty
  std::string negative_help;
  std::string contradiction;  // why a boolean's flag and its negative cannot both be given
  std::string items;          // what a list's items are, for its messages ("token counts")
};

// The flag of `owner`::`name`.
FieldFlag field_flag(std::string_view owner, std::string_view name);

// A row's help: its doc, with "{name}" written as that field's flag, then its
// bounds ("1 to 2^24") where it has any that its doc does not say.
std::string help_text(std::string_view owner, std::string_view doc, OptionKind kind, double lo, double hi);

// The flag of a violation's field (one name, or several joined by ", "); a
// name that is no option (a config's JSON path) as it is.
std::string flag_of_field(std::string_view field);

// A mention as smelt-match writes it: the flag, "--min-head-dim = 32", a
// boolean's setting as its flag ("--keep-heads"), a list's as "--match
// flops,params" ("--depths none" for no item).
std::string flag_of(const FieldMention& mention);

// A violation, or a message, with its field and the fields its text mentions as flags.
std::string shown(const Violation& v);
std::string shown(const Message& m);

// A library error as smelt-match prints it: what(), with a config_error's
// violations and a cuda_error's text in flag names.
std::string describe(const smelt::error& e);

}  // namespace smelt::cli
