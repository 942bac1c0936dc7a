// The size bounds every config check, option check and reader shares (the
// library's, the CLI's and the Python bindings'), each with its reason. A value is checked against its bound before any
// arithmetic on it; with these bounds every product the counts form (width x width x experts x layers x context) stays
// inside the 64-bit and 128-bit integers chosen for it, and the checked arithmetic of util/checked.hpp (the library's
// own) catches the rest. The solver's knobs and the sweep's depths are bounded as the config fields they become, so
// that a candidate never fails validate(). In smelt::detail (include/smelt/detail/violations.hpp says why).
#pragma once

#include <cstdint>

namespace smelt::detail {

// Widths: hidden size, heads, head_dim, FFN and expert widths, LoRA ranks,
// vocabulary. The largest published models are near 2^17 (vocabularies).
inline constexpr std::int64_t kMaxWidth = std::int64_t{1} << 24;
// Stored layers, and so the executed depth a solve or sweep may ask for;
// per-layer lists (HF layer_types, moe.layers) are built only up to this.
inline constexpr std::int64_t kMaxLayers = std::int64_t{1} << 16;
// Routed and shared experts, and top-k.
inline constexpr std::int64_t kMaxExperts = std::int64_t{1} << 20;
// Context length, sliding window and chunk, in tokens (about 10^9): the
// causal score sums are products of two of these.
inline constexpr std::int64_t kMaxContext = std::int64_t{1} << 30;
// Passes over a looped span (loop.count).
inline constexpr std::int64_t kMaxLoops = 1024;
// Bytes per cached KV element (kv_cache_bytes): float64 is 8; 64 leaves room.
inline constexpr std::int64_t kMaxKvBytes = 64;
// Values one list option may hold (solver contexts, sweep spans, loops and
// depths): each value multiplies the work of a solve or a sweep.
inline constexpr std::int64_t kMaxListedValues = 64;

}  // namespace smelt::detail
