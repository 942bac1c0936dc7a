// The measured step's router (step_model.hpp): scores, top-k choices, mixing weights and the permutation that
// groups tokens by expert, and the router's backward. Private to the bench module.
#pragma once

#include <cstdint>
#include <vector>

namespace smelt::cpu {

// The choices of one MoE visit: chosen[t k + j] the j-th expert of token t, mix its weight (the chosen scores over
// their sum), count and start the tokens per expert and where they begin in slot order, slots[r] the assignment
// (t k + j) in slot r.
template <class T>
struct TokenRoutes {
  std::vector<std::int64_t> chosen, count, start, slots;
  std::vector<T> mix;
};

// `scores` holds the router's logits [tokens x experts] and becomes its softmax (or sigmoid); top-k by score (the
// lower index wins ties), or round-robin (token t gets experts (t k + j) mod E) when `balanced`, or the experts
// `replay` gives (tokens x top_k, a routing recorded before). The one routing of the bench module: the reference
// forward (reference.cpp) and the CPU training step (src/step/model.cpp) both route through it.
template <class T>
void route_tokens(T* scores, std::int64_t tokens, std::int64_t experts, std::int64_t top_k, bool softmax, bool balanced,
                  TokenRoutes<T>& out, const std::vector<std::int64_t>* replay = nullptr);

// The logits' gradient [tokens x experts] from the mixing weights' (dmix, per assignment): through the
// renormalisation over the chosen scores, then the softmax (or sigmoid).
template <class T>
void route_backward(const T* scores, const TokenRoutes<T>& routes, const T* dmix, std::int64_t tokens,
                    std::int64_t experts, std::int64_t top_k, bool softmax, T* dlogits);

}  // namespace smelt::cpu
