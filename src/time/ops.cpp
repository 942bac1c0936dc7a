// The ops of one GPU's step (docs/time.md, "The ops"). A layer's GEMMs are its
// anatomy's products (src/anatomy), the ones count() sums, sharded as the
// layout says: at tp = cp = ep = 1 the forward GEMMs and attention cores sum to
// count()'s FLOPs (tests/unit/time).
#include "time/ops.hpp"

#include <algorithm>
#include <cmath>

#include "anatomy/layer_anatomy.hpp"
#include "count/layer_cost.hpp"
#include "memory/visit_runs.hpp"

namespace smelt::time_detail {
namespace {

using i64 = std::int64_t;

double dbl(i64 v) { return static_cast<double>(v); }

Op elementwise(std::string_view name, double bytes) {
  Op op;
  op.name = name;
  op.kind = OpKind::elementwise;
  op.bytes = bytes;
  return op;
}

// A collective of `bytes` (the whole buffer one rank holds) over `ranks`; `span` is how many consecutive
// ranks the group covers, which decides its link (roofline.cpp). groups: the kind of collective (docs/time.md).
enum class Collective { all_reduce, all_to_all, send };
Op collective(std::string_view name, Collective kind, double bytes, i64 ranks, i64 span) {
  Op op;
  op.name = name;
  op.kind = OpKind::collective;
  op.bytes = bytes;
  op.m = ranks;
  op.n = span;
  op.k = static_cast<i64>(kind);
  return op;
}

struct Builder {
  const OpContext& x;
  std::vector<Op> ops;
  i64 layer = 0, visit = 0;

  double e() const { return dbl(x.r.activation_bytes); }
  double w() const { return dbl(x.r.param_bytes); }
  const MemoryLayout& l() const { return x.r.layout; }

  void add(Op op) {
    op.layer = layer;
    op.visit = visit;
    ops.push_back(op);
  }
  void add_gemm(std::string_view name, i64 m, i64 n, i64 k) { add(gemm(name, m, n, k, e(), w())); }
  void tp_reduce(i64 rows) {
    if (l().tp > 1)
      add(collective("tp_all_reduce", Collective::all_reduce, dbl(rows) * dbl(x.c.hidden_size) * e(), l().tp, l().tp));
  }
  void norm(i64 rows, i64 width) { add(elementwise("norms", 2 * dbl(rows) * dbl(width) * e())); }
  void residual(i64 rows) { add(elementwise("residual", 3 * dbl(rows) * dbl(x.c.hidden_size) * e())); }

  i64 on_rank(const anatomy::Dim& d) const { return d.on_rank(l().tp, l().etp); }
  void add_product(const anatomy::Product& p, i64 rows) {
    add_gemm(anatomy::name(p.op), rows, p.n_on_rank(l().tp, l().etp), on_rank(p.k));
  }

  // An FFN's two products (gate and up, then down) on `rows` rows; `groups` experts of it (grouped) or one.
  void ffn(const anatomy::Product& up_product, const anatomy::Product& down_product, i64 rows, i64 groups) {
    const bool gated = x.c.ffn.type == FfnType::gated;
    const std::string_view name = anatomy::name(up_product.op);
    const i64 wd = on_rank(down_product.k);
    Op up = gemm(name, rows, up_product.n_on_rank(l().tp, l().etp), on_rank(up_product.k), e(), w());
    Op down = gemm(name, rows, down_product.n_on_rank(l().tp, l().etp), wd, e(), w());
    for (Op* op : {&up, &down})
      if (groups > 0) {
        op->kind = OpKind::grouped_gemm;
        op->groups = groups;
        op->flops *= dbl(groups);
        op->bytes *= dbl(groups);
      }
    add(up);
    add(elementwise("activation", (gated ? 3 : 2) * dbl(rows) * dbl(wd) * dbl(std::max<i64>(groups, 1)) * e()));
    add(down);
  }

  void attention(const anatomy::LayerAnatomy& parts, i64 l0) {
    const auto& a = x.c.attention;
    const i64 n = x.tokens;
    for (const anatomy::Product& p : parts.products)
      if (p.op == anatomy::Op::attention_qkv) add_product(p, n);
    const i64 qk_width = on_rank(parts.sums.core.qk), v_width = on_rank(parts.sums.core.v);
    const i64 kv_elements = on_rank(parts.sums.core.kv);
    const LayerAttention kind = x.c.attention_at(l0);
    const i64 score_per_pair = 2 * (qk_width + v_width);
    Op core;
    core.name = "attention_core";
    core.kind = OpKind::attention;
    if (x.decode) {
      // One query per sequence against the keys it holds; the cache is read once.
      const i64 held = count_detail::tokens_held(a, kind, x.context);
      core.m = x.tokens, core.n = held;
      core.flops = dbl(x.tokens) * dbl(held) * dbl(score_per_pair);
      core.bytes =
          dbl(x.tokens) * (dbl(held) * dbl(kv_elements) * dbl(x.c.kv_cache_bytes) + dbl(qk_width + v_width) * e());
    } else {
      // Each of the micro-batch's sequences attends its pairs; cp ranks share them evenly.
      const i64 seq = l().seq;
      const i64 pairs = count_detail::attended_pairs(x.c.attention, kind, seq);
      core.m = seq / l().cp, core.n = seq;
      core.flops = dbl(l().micro_batch) * dbl(pairs) * dbl(score_per_pair) / dbl(l().cp);
      // Fused (flash) attention: Q, K, V read once, the output written once.
      core.bytes = dbl(n) * dbl(2 * qk_width + 2 * v_width + kv_elements) * e();
    }
    add(core);
    for (const anatomy::Product& p : parts.products)
      if (p.op == anatomy::Op::attention_out) add_product(p, n);
  }

  // The products of `op`, in the anatomy's order.
  static anatomy::List<const anatomy::Product*, 4> of(const anatomy::LayerAnatomy& a, anatomy::Op op) {
    anatomy::List<const anatomy::Product*, 4> out;
    for (const anatomy::Product& p : a.products)
      if (p.op == op) out.push_back(&p);
    return out;
  }

  void moe(const anatomy::LayerAnatomy& parts) {
    const auto& m = x.c.moe;
    const i64 h = x.c.hidden_size, n = x.tokens, ep = l().ep;
    add_product(*of(parts, anatomy::Op::router)[0], n);
    add(elementwise("router_topk", 2 * dbl(n) * dbl(m.num_experts) * 4));
    // The most loaded expert-parallel rank: its experts receive imbalance x the mean of top_k x its tokens.
    const double routed = dbl(n) * dbl(m.top_k) * x.o.imbalance;
    const i64 local = m.num_experts / ep;
    i64 groups = local;
    double rows = routed / dbl(local);
    if (x.decode) {  // only the experts some token picks are read: the expected number of distinct ones
      const double hit = dbl(local) * (1 - std::pow(1 - 1 / dbl(local), routed));
      groups = std::max<i64>(1, std::llround(hit));
      rows = routed / dbl(groups);
    }
    add(elementwise("permute", 2 * dbl(n) * dbl(m.top_k) * dbl(h) * e()));
    if (ep > 1) add(collective("ep_all_to_all", Collective::all_to_all, routed * dbl(h) * e(), ep, l().etp * ep));
    const i64 grouped_rows = std::max<i64>(1, std::llround(rows));
    const auto experts = of(parts, anatomy::Op::experts);
    ffn(*experts[0], *experts[1], grouped_rows, groups);
    // The grouped GEMMs' FLOPs as routed (rows x groups may round): exact at ep = 1 without decode.
    for (auto it = ops.end() - 3; it != ops.end(); ++it)
      if (it->kind == OpKind::grouped_gemm) it->flops = it->flops / (dbl(grouped_rows) * dbl(groups)) * routed;
    if (ep > 1) add(collective("ep_all_to_all", Collective::all_to_all, routed * dbl(h) * e(), ep, l().etp * ep));
    add(elementwise("unpermute", (dbl(n) * dbl(m.top_k) + dbl(n)) * dbl(h) * e()));
    // The shared experts as one FFN, then their gate.
    const auto shared = of(parts, anatomy::Op::shared_experts);
    std::size_t next = 0;
    if (m.num_shared_experts > 0) ffn(*shared[0], *shared[1], n, 0), next = 2;
    for (; next < shared.size(); ++next) add_product(*shared[next], n);
  }

  void visit_ops(i64 l0) {
    const i64 n = x.tokens, h = x.c.hidden_size;
    const anatomy::LayerAnatomy parts = anatomy::layer_anatomy(x.c, x.c.is_moe_layer(l0));
    const bool sandwich = parts.sums.sublayer_norms == 4;  // a norm on each sublayer's output too
    norm(n, h);
    attention(parts, l0);
    tp_reduce(n);
    if (sandwich) norm(n, h);
    residual(n);
    norm(n, h);
    if (parts.sums.moe) {
      moe(parts);
    } else {
      const auto dense = of(parts, anatomy::Op::dense_ffn);
      ffn(*dense[0], *dense[1], n, 0);
    }
    tp_reduce(n);
    if (sandwich) norm(n, h);
    residual(n);
  }

  // What the spans run beside their layers at each pass's end (Ouro): the final norm after every pass but
  // the last, the exit gate H -> 1 after every pass. On the last stage, where the spans end (validate()).
  void loop_extras() {
    const i64 n = x.tokens, h = x.c.hidden_size;
    for (const LoopConfig& span : x.c.loops) {
      if (span.first == 0) continue;
      if (span.norm_each_pass && span.count > 1) {
        norm(n, h);
        ops.back().times = span.count - 1;
      }
      if (span.norm_after) norm(n, h);
      if (span.exit_gate) {
        add_gemm("loop_extras", n, 1, h);
        ops.back().times = span.count;
      }
      // The adapter before every pass and each layer's LoRA products on every pass; a pass truncated
      // backprop leaves forward-only runs them without a backward.
      const i64 untrained = x.decode || span.backprop_passes == 0 ? 0 : span.count - span.backprop_passes;
      const auto per_pass = [&](i64 m, i64 cols, i64 inner, i64 per) {
        for (const bool no_grad : {false, true}) {
          const i64 times = (no_grad ? untrained : span.count - untrained) * per;
          if (times == 0) continue;
          add_gemm("loop_extras", m, cols, inner);
          ops.back().times = times;
          ops.back().no_grad = no_grad;
        }
      };
      if (span.injection == Injection::linear) per_pass(n, h, 2 * h, 1);
      for (const LoraTarget t : span.lora_rank > 0 ? span.lora_targets : std::vector<LoraTarget>{}) {
        const ProjectionShape s = projection_shape(x.c, t);
        per_pass(n, span.lora_rank, s.in, span.last - span.first + 1);   // A: in -> rank
        per_pass(n, s.out, span.lora_rank, span.last - span.first + 1);  // B: rank -> out
      }
    }
  }

  void head_and_loss() {
    const i64 n = x.tokens, h = x.c.hidden_size, v = x.c.vocab_size / l().tp;
    norm(n, h);
    add_gemm("lm_head", n, v, h);
    // Softmax and cross-entropy over the logits in fp32: read, written, read again for the gradient.
    if (!x.decode) add(elementwise("loss", 3 * dbl(n) * dbl(v) * 4));
  }
};

}  // namespace

Op gemm(std::string_view name, i64 m, i64 n, i64 k, double act_bytes, double weight_bytes) {
  Op op;
  op.name = name;
  op.kind = OpKind::gemm;
  op.m = m, op.n = n, op.k = k, op.groups = 1;
  op.flops = 2 * dbl(m) * dbl(n) * dbl(k);
  op.bytes = (dbl(m) * dbl(k) + dbl(m) * dbl(n)) * act_bytes + dbl(k) * dbl(n) * weight_bytes;
  return op;
}

std::vector<VisitKind> visit_kinds(const OpContext& x, const std::vector<i64>& layers) {
  const MemoryLayout& l = x.r.layout;
  memory_detail::StageVisitOptions options;
  // Full recompute: the first recompute_layers visits of the stage (all when 0) run forward again. Truncated
  // backprop: a span's passes before its last backprop_passes run without gradients. Neither in decode.
  if (!x.decode && l.recompute == Recompute::full)
    options.recomputed = l.recompute_layers > 0 ? l.recompute_layers : memory_detail::StageVisitOptions::kAll;
  options.truncated_backprop = !x.decode;
  std::vector<VisitKind> kinds;
  for (const memory_detail::StageVisitRun& run :
       memory_detail::stage_visit_runs(x.c, x.schedule, layers.front(), layers.back(), options)) {
    const auto same = std::find_if(kinds.begin(), kinds.end(), [&](const VisitKind& k) {
      return k.moe == run.moe && k.attention == run.attention && k.recomputed == run.recomputed &&
             k.no_grad == run.no_grad;
    });
    if (same != kinds.end())
      same->visits += run.visits();
    else
      kinds.push_back({run.moe, run.attention, run.recomputed, run.no_grad, run.first, run.first_pass, run.visits()});
  }
  return kinds;
}

std::vector<Op> forward_ops(const OpContext& x, const std::vector<VisitKind>& kinds, bool first, bool last) {
  Builder b{x, {}};
  b.ops.reserve(64 + 32 * static_cast<std::size_t>(x.c.mtp_modules));
  const i64 n = x.tokens, h = x.c.hidden_size;
  if (first) b.add(elementwise("embedding", dbl(n) * dbl(h) * (b.e() + b.w())));
  // Each kind's ops built once, at its first visit; its rows run once for every visit of that kind (Op::times).
  const MemoryLayout& l = x.r.layout;
  for (const VisitKind& k : kinds) {
    b.layer = k.layer + 1, b.visit = k.visit + 1;
    const std::size_t from = b.ops.size();
    b.visit_ops(k.layer);
    // Selective recompute: the attention cores alone.
    for (std::size_t i = from; i < b.ops.size(); ++i) {
      b.ops[i].times = k.visits;
      b.ops[i].no_grad = k.no_grad;
      b.ops[i].recomputed =
          !k.no_grad &&
          (k.recomputed || (!x.decode && l.recompute == Recompute::selective && b.ops[i].kind == OpKind::attention));
    }
  }
  b.layer = b.visit = 0;
  if (last) {
    b.loop_extras();
    b.head_and_loss();
    if (!x.decode)
      for (i64 module = 0; module < x.c.mtp_modules; ++module) {
        // A multi-token-prediction module (DeepSeek-V3): two norms, the 2H -> H projection, one layer shaped like
        // the last (full attention), the shared head and its loss.
        b.norm(n, 2 * h);
        b.add_gemm("mtp", n, h, 2 * h);
        const std::size_t from = b.ops.size();
        b.visit_ops(x.c.num_layers - 1);
        b.head_and_loss();
        for (std::size_t i = from; i < b.ops.size(); ++i)
          b.ops[i].name = b.ops[i].kind == OpKind::collective ? b.ops[i].name : std::string_view("mtp");
      }
  }
  return b.ops;
}

std::vector<Op> backward_ops(const std::vector<Op>& forward) {
  std::vector<Op> out;
  out.reserve(forward.size() * 3);
  for (std::size_t j = forward.size(); j-- > 0;) {
    const Op& f = forward[j];
    if (f.no_grad) continue;  // a pass before the last backprop_passes: forward only
    if (f.recomputed) {
      Op again = f;
      again.name = "recompute";
      out.push_back(again);
    }
    Op b = f;
    b.backward = true;
    switch (f.kind) {
      case OpKind::gemm:
      case OpKind::grouped_gemm: {
        // The input's gradient (m x n by n x k) and the weight's (k x m by m x n): twice the forward's FLOPs.
        Op dgrad = f, wgrad = f;
        dgrad.backward = wgrad.backward = true;
        std::swap(dgrad.n, dgrad.k);
        wgrad.m = f.k, wgrad.n = f.n, wgrad.k = f.m;
        out.push_back(dgrad);
        out.push_back(wgrad);
        continue;
      }
      case OpKind::attention:
        b.flops = 2 * f.flops;  // count()'s convention: a backward of twice the forward's FLOPs
        b.bytes = 2 * f.bytes;
        break;
      case OpKind::elementwise:
        b.bytes = 2 * f.bytes;
        break;
      case OpKind::collective:
      case OpKind::bubble:
        break;
    }
    out.push_back(b);
  }
  return out;
}

}  // namespace smelt::time_detail
