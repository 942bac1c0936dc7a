// The anatomy of one stored layer, computed once from (config, layer): its
// weight tensors, its per-token matrix products and its attention core's
// widths (docs/anatomy.md). count sums it, time lays its products out as
// GEMMs under a layout, memory reads its tensors. A new layer term, family or
// loop form is added here once.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <type_traits>

#include "smelt/config.hpp"
#include "util/checked.hpp"

namespace smelt::anatomy {

// The parameter term a tensor is counted in (ParamTerms' fields of a layer).
enum class Term { attention, norms, router, experts, shared_experts, dense_ffn };

// The FLOP term a product is counted in (FlopTerms' matrix fields), which is also the name of the op that runs it.
enum class Op { attention_qkv, attention_out, router, experts, shared_experts, dense_ffn };

// The op's word: "attention_qkv", "attention_out", "router", "experts", "shared_experts", "dense_ffn".
const char* name(Op op);
// The term's word, as ParamTerms names its field: "attention", "norms", "router", "experts", ...
const char* name(Term term);

// How a parallel layout divides a dimension of `heads` blocks of `per_head` (Megatron-LM's sharding).
enum class Split {
  none,      // whole on every rank: norms, the router, the KV latent of MLA, a shared gate's single column
  tp,        // by head (or FFN column) over tensor parallelism
  kv_heads,  // by KV head over tensor parallelism, a head replicated where tp exceeds the KV heads
  etp,       // a routed expert's width over expert tensor parallelism
};

struct Dim {
  std::int64_t heads = 0;     // blocks the split divides (heads; an FFN's columns; 1)
  std::int64_t per_head = 1;  // elements of each block
  Split split = Split::none;

  // Elements of the whole dimension (checked).
  std::int64_t whole(const char* what) const { return detail::mul(heads, per_head, what); }
  // Elements one rank holds at tensor parallelism `tp` and expert tensor parallelism `etp`.
  std::int64_t on_rank(std::int64_t tp, std::int64_t etp) const;
};

// A weight tensor as the reference model's torch.nn modules hold it: `instances` of it (routed or shared experts).
struct Tensor {
  Term term = Term::attention;
  const char* name = "";  // the module's attribute: q_proj.weight, experts.down_proj.bias, ...
  std::int64_t elements = 0;
  std::int64_t instances = 1;
  bool trainable = true;  // false: DeepSeek's correction bias, which the optimizer never steps
};

// A per-token matrix product x (1 x k) . W (k x n), made `times` per token (top_k for the routed experts). `n`
// may have a second block fused beside the first (GQA's K and V beside Q: one GEMM).
struct Product {
  Op op = Op::attention_qkv;
  Dim n, k;
  Dim n_fused{.heads = 0};
  std::int64_t times = 1;

  // Multiply-accumulates per token, unsharded (checked).
  std::int64_t macs(const char* what) const {
    return detail::mul(times, detail::mul(columns(what), k.whole(what), what), what);
  }
  // Output columns, all heads, the fused block's included (checked).
  std::int64_t columns(const char* what) const {
    const std::int64_t c = n.whole(what);
    return n_fused.heads > 0 ? detail::add(c, n_fused.whole(what), what) : c;
  }
  // Output columns one rank computes.
  std::int64_t n_on_rank(std::int64_t tp, std::int64_t etp) const;
};

// The attention core: the query-key and value widths (all heads), the KV elements cached per token, and the
// elements the q, k or latent norms pass through.
struct Core {
  Dim qk, v, kv;
  std::int64_t normed = 0;
};

// A list of at most N trivial values, kept inline and left unconstructed past its size: building an anatomy
// allocates and clears nothing (the solver counts millions).
template <class T, std::size_t N>
class List {
  static_assert(std::is_trivially_copyable_v<T> && std::is_trivially_destructible_v<T>);
  union Slot {
    Slot() {}  // NOLINT: constructs nothing; push_back constructs the value
    T value;
  };

 public:
  void push_back(const T& v) {
    if (size_ == N) [[unlikely]]
      full();
    std::construct_at(&slots_[size_++].value, v);
  }
  const T* begin() const { return &slots_[0].value; }
  const T* end() const { return begin() + size_; }
  std::size_t size() const { return size_; }
  const T& operator[](std::size_t i) const { return slots_.at(i).value; }

 private:
  [[noreturn, gnu::noinline, gnu::cold]] static void full() { throw std::length_error("smelt::anatomy::List: full"); }

  std::array<Slot, N> slots_;
  std::size_t size_ = 0;
};

// What a layer's tensors and products sum to, and its attention core: all that count and the memory model's
// weights read (the solver's path, millions of layers: no lists).
struct LayerSums {
  bool moe = false;
  Core core;
  std::int64_t sublayer_norms = 2;  // 2 (pre-norm) or 4 (sandwich: one more on each sublayer's output)
  std::array<std::int64_t, 6> param_sums{}, mac_sums{};  // by Term and by Op (checked)
  std::int64_t trainable_tensors = 0;  // tensors the optimizer steps (each instance one; AdamW's `step` per tensor)
  std::int64_t frozen_params = 0;      // parameter elements without gradients (DeepSeek's correction bias)

  // Parameter elements of `term`, summed over its tensors and their instances.
  std::int64_t params(Term term) const { return param_sums[static_cast<std::size_t>(term)]; }
  // Multiply-accumulates per token of the products of `op`.
  std::int64_t macs(Op op) const { return mac_sums[static_cast<std::size_t>(op)]; }
};

struct LayerAnatomy {
  LayerSums sums;
  List<Tensor, 48>
      tensors;  // in the reference model's order (torch's named_parameters: a module's own, then its submodules')
  List<Product, 12> products;  // in the order a visit runs them
};

// A stored layer of `c`, MoE or dense as `moe` says (c.is_moe_layer(layer) for a given layer): nothing else
// about the layer changes its anatomy (its attention kind changes the pairs it attends, not its tensors).
LayerAnatomy layer_anatomy(const ModelConfig& c, bool moe);
// Its sums alone, the same arithmetic without the lists.
LayerSums layer_sums(const ModelConfig& c, bool moe);

}  // namespace smelt::anatomy
