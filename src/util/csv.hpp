// CSV as smelt reads and writes it (RFC 4180): comma-separated fields, double
// quotes around a field that holds a comma, a quote or a line break, doubled
// quotes inside. The runs reader and the sweep report use it.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace smelt::detail {

// Splits CSV text into records of fields. Quoted fields may hold commas,
// doubled quotes and line breaks; unquoted fields are trimmed of spaces, tabs
// and carriage returns; blank lines are skipped. Throws config_error
// "SOURCE:LINE: ..." for an unterminated quoted field, text after a closing
// quote, and more than kMaxJsonValues fields (util/json_reader.hpp).
std::vector<std::vector<std::string>> read_csv(std::string_view text, std::string_view source);

// One field as written: quoted (with doubled quotes) only when it holds a
// comma, a quote or a line break.
std::string csv_field(std::string_view text);

// One record: the fields, each through csv_field, joined by commas, and "\n".
std::string csv_record(const std::vector<std::string>& fields);

}  // namespace smelt::detail
