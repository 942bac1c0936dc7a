#include "solve/knob_range.hpp"

#include <fmt/format.h>

#include "util/mention.hpp"

namespace smelt::solve_detail {

using namespace smelt::detail;  // the helpers every module shares

std::string range_text(const KnobRange& r) {
  return r.lo == r.hi ? fmt::format("{}", r.lo) : fmt::format("{}:{}", r.lo, r.hi);
}

std::vector<std::int64_t> list_multiples(std::int64_t lo, std::int64_t hi, std::int64_t align) {
  std::vector<std::int64_t> out;
  if (lo > hi) return out;
  out.reserve(static_cast<std::size_t>(count_multiples(lo, hi, align)));
  for (std::int64_t v = (lo + align - 1) / align * align; v <= hi; v += align) out.push_back(v);
  return out;
}

std::int64_t check_knob(const std::string& field, const KnobRange& r, std::int64_t max, std::int64_t align,
                        const std::string& align_field, Violations& errors) {
  if (r.lo < 1 || r.hi < r.lo) {
    errors.add(field, range_text(r), "must be a positive value or a range LO:HI with LO <= HI");
    return 0;
  }
  if (r.hi > max) {
    errors.add(field, range_text(r), fmt::format("must be at most {}", max));
    return 0;
  }
  if (align < 1 || align > max) return 0;  // an alignment is bounded as the knob it aligns
  const std::int64_t n = count_multiples(r.lo, r.hi, align);
  if (n == 0)
    errors.add(
        field, range_text(r),
        fmt::format("{} {}", r.lo == r.hi ? "must be a multiple of" : "contains no multiple of",
                    align_field.find("::") == std::string::npos ? fmt::format("{} = {}", align_field, align)
                                                                : mention(align_field, fmt::format("{}", align))));
  return n;
}

}  // namespace smelt::solve_detail
