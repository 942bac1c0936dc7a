#pragma once
// How many random cases a property test draws. A sanitizer build (SMELT_SANITIZE) draws one in eight, at least
// one: AddressSanitizer and UndefinedBehaviorSanitizer look for memory errors and undefined behaviour, which a
// few cases reach through the same code as many, and a sanitized -O0 build runs the solver's brute force 30 to 40
// times slower (the whole suite's largest cost there). The statistics over the cases (how much work the search
// saves, how few spaces are empty) hold over the full draw only, so a sanitizer build skips them: the Release tree
// draws every case and checks them.
#include <algorithm>

namespace smelt::test {

#ifdef SMELT_TEST_SANITIZED
inline constexpr bool every_case = false;
#else
inline constexpr bool every_case = true;
#endif

constexpr int property_cases(int n) { return every_case ? n : std::max(1, n / 8); }

}  // namespace smelt::test
