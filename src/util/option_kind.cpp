#include "smelt/option_fields.hpp"
#include "util/enum_names.hpp"

namespace smelt {
namespace {

constexpr detail::EnumNames<OptionKind, 9> kKinds{{
    {OptionKind::integer, "integer"},
    {OptionKind::number, "number"},
    {OptionKind::boolean, "boolean"},
    {OptionKind::range, "range"},
    {OptionKind::ratio_range, "ratio range"},
    {OptionKind::word, "word"},
    {OptionKind::integer_list, "integer list"},
    {OptionKind::number_list, "number list"},
    {OptionKind::word_list, "word list"},
}};

}  // namespace

std::string_view to_string(OptionKind kind) { return detail::name_of(kKinds, kind); }

}  // namespace smelt
