// step_time(): the ops of the most loaded pipeline stage, timed, and the
// step they make (docs/time.md, "The step").
#include "smelt/time.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <new>
#include <optional>
#include <set>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "count/count_impl.hpp"
#include "count/layer_cost.hpp"
#include "memory/division.hpp"
#include "memory/model_state.hpp"
#include "memory/resolved_layout.hpp"
#include "smelt/count.hpp"
#include "smelt/detail/bounds.hpp"
#include "smelt/schedule.hpp"
#include "time/ops.hpp"
#include "time/roofline.hpp"
#include "time/step_time.hpp"
#include "time/weight_elements.hpp"
#include "util/checked.hpp"
#include "util/enum_names.hpp"
#include "util/mention.hpp"
#include "util/option_bounds.hpp"

namespace smelt {
namespace {

using time_detail::kind_elements;
using time_detail::KindElements;
using time_detail::weight_elements;
using time_detail::WeightElements;

using i64 = std::int64_t;
using time_detail::OpContext;

constexpr detail::EnumNames<OpKind, 6> kOpKinds{{{OpKind::gemm, "gemm"},
                                                 {OpKind::grouped_gemm, "grouped_gemm"},
                                                 {OpKind::attention, "attention"},
                                                 {OpKind::elementwise, "elementwise"},
                                                 {OpKind::collective, "collective"},
                                                 {OpKind::bubble, "bubble"}}};
constexpr detail::EnumNames<Bound, 4> kBounds{{{Bound::compute, "compute"},
                                               {Bound::memory, "memory"},
                                               {Bound::communication, "communication"},
                                               {Bound::overhead, "overhead"}}};

double dbl(i64 v) { return static_cast<double>(v); }

void check(const TimeOptions& o, detail::Violations& errors) {
  for (const char* name : {"decode_batch", "decode_context"}) detail::check_integer(o, name, errors);
  const auto& row = detail::option_row<TimeOptions>("imbalance");
  if (!(o.imbalance >= row.lo && o.imbalance <= row.hi))
    errors.add(detail::option_name<TimeOptions>("imbalance"), fmt::format("{}", o.imbalance),
               fmt::format("must be in [{}, {}]: the most loaded expert over the mean", row.lo, row.hi));
}

// Times every op; the step's sums.
void finish(StepTime& step, const HardwareSpec& hw, Dtype dtype) {
  step.seconds = step.flops = 0;
  for (Op& op : step.ops) {
    // The stages' ops were timed when the most loaded was chosen; the step's own (reductions, update) not yet.
    if (op.kind != OpKind::bubble && op.seconds == 0) time_detail::put_time(op, hw, dtype);
    const double times = dbl(op.times);
    step.seconds += op.seconds * times;
    step.flops += op.flops * times;
    step.seconds_by_bound[static_cast<int>(op.bound)] += op.seconds * times;
  }
}

double seconds_of(std::vector<Op>& ops, const HardwareSpec& hw, Dtype dtype) {
  double s = 0;
  for (Op& op : ops) time_detail::put_time(op, hw, dtype), s += op.seconds * dbl(op.times);
  return s;
}

Op step_collective(std::string_view name, double bytes, i64 ranks, i64 span) {
  Op op;
  op.name = name;
  op.kind = OpKind::collective;
  op.bytes = bytes;
  op.m = ranks, op.n = span, op.k = 0;
  return op;
}

// What decides a stage's ops up to their layer numbers: its kinds of visit with their visits, and whether it is
// the first or the last. Stages alike in these take the same time (a pipeline of 65,536 one-layer stages has three
// such shapes), so each shape is timed once.
std::vector<i64> stage_shape(const std::vector<time_detail::VisitKind>& kinds, bool first, bool last) {
  std::vector<i64> out{first ? 1 : 0, last ? 1 : 0};
  for (const time_detail::VisitKind& k : kinds)
    out.insert(out.end(),
               {k.moe ? 1 : 0, static_cast<i64>(k.attention), k.recomputed ? 1 : 0, k.no_grad ? 1 : 0, k.visits});
  return out;
}

// model_state()'s weight elements, from count()'s report.
auto counted_elements(const ModelConfig& c, const CostReport& cost) {
  return [&c, &cost](const memory_detail::ResolvedLayout& ur, i64 stage) {
    const i64 stages = static_cast<i64>(ur.stage_layers.size());
    const auto& layers = ur.stage_layers[static_cast<std::size_t>(stage)];
    return weight_elements(memory_detail::model_state(c, cost, ur, layers, stage == 0, stage == stages - 1), ur);
  };
}

// Each stage's kinds of visit in a training step.
std::vector<std::vector<time_detail::VisitKind>> training_kinds(const ModelConfig& c,
                                                                const memory_detail::ResolvedLayout& r,
                                                                const TimeOptions& o, const LayerSchedule& plan) {
  const MemoryLayout& l = r.layout;
  const OpContext x{c, r, o, plan, l.micro_batch * l.seq / l.cp};
  std::vector<std::vector<time_detail::VisitKind>> out;
  out.reserve(r.stage_layers.size());
  for (const auto& layers : r.stage_layers) out.push_back(time_detail::visit_kinds(x, layers));
  return out;
}

// The training step: the most loaded stage's micro-batches, the pipeline's bubble, the gradients' reduction
// and the optimizer's update.
// `plan` the config's schedule, `stage_kinds` each stage's kinds of visit (time_detail::visit_kinds()).
// `elements_of(ur, stage)`: the stage's WeightElements on the unsharded layout `ur`.
// `forward`, where not null, receives the forward alone (the report's).
template <class ElementsOf>
StepTime training_step(const ModelConfig& c, const ElementsOf& elements_of, const memory_detail::ResolvedLayout& r,
                       const LayerSchedule& plan, const std::vector<std::vector<time_detail::VisitKind>>& stage_kinds,
                       const TimeOptions& o, const HardwareSpec& hw, StepTime* forward) {
  const MemoryLayout& l = r.layout;
  const Dtype dtype = l.activation_dtype;
  const OpContext x{c, r, o, plan, l.micro_batch * l.seq / l.cp};
  const i64 stages = static_cast<i64>(r.stage_layers.size());
  std::vector<Op> worst_fwd, worst_bwd;
  double worst = -1, worst_fwd_s = 0;
  i64 worst_stage = 0;
  std::set<std::vector<i64>> timed;  // the shapes of the stages timed so far
  for (i64 s = 0; s < stages; ++s) {
    const bool first = s == 0, last = s == stages - 1;
    const std::vector<time_detail::VisitKind>& kinds = stage_kinds[static_cast<std::size_t>(s)];
    // A stage shaped like one timed before takes its time, which is no more than the worst's.
    if (!timed.insert(stage_shape(kinds, first, last)).second) continue;
    std::vector<Op> fwd = time_detail::forward_ops(x, kinds, first, last);
    std::vector<Op> bwd = time_detail::backward_ops(fwd);
    const double f = seconds_of(fwd, hw, dtype), t = f + seconds_of(bwd, hw, dtype);
    if (t > worst) worst = t, worst_fwd_s = f, worst_stage = s, worst_fwd = std::move(fwd), worst_bwd = std::move(bwd);
  }
  const i64 micro_batches = r.microbatches;
  const double tokens = dbl(micro_batches) * dbl(l.micro_batch) * dbl(l.seq) * dbl(l.dp);
  const double bubble_chunks = dbl(l.pp - 1) / dbl(l.vpp);
  const auto bubble = [&](double per_micro_batch) {
    Op op;
    op.name = "pipeline_bubble";
    op.kind = OpKind::bubble;
    op.seconds = bubble_chunks * per_micro_batch;
    op.bound = Bound::overhead;
    return op;
  };

  if (forward) {  // the report's forward alone; the solver's candidates need only the step's time
    forward->ops = worst_fwd;
    for (Op& op : forward->ops) op.times *= micro_batches;
    if (l.pp > 1) forward->ops.push_back(bubble(worst_fwd_s));
    forward->tokens = tokens;
    finish(*forward, hw, dtype);
  }

  StepTime step;
  step.tokens = tokens;
  step.ops = std::move(worst_fwd);
  step.ops.insert(step.ops.end(), worst_bwd.begin(), worst_bwd.end());
  if (l.pp > 1) {  // each micro-batch's activations sent on, and their gradients back
    const double bytes = dbl(x.tokens) * dbl(c.hidden_size) * dbl(r.activation_bytes) / dbl(l.tp);
    for (int i = 0; i < 2; ++i) {
      Op send = step_collective("pp_send", bytes, 2, 2 * l.tp * l.cp * l.dp);
      send.k = 2;
      step.ops.push_back(send);
    }
  }
  for (Op& op : step.ops) op.times *= micro_batches;
  if (l.pp > 1) step.ops.push_back(bubble(worst));

  // The gradients reduced over the data-parallel ranks, and the update: once per step, not overlapped.
  MemoryLayout unsharded = l;
  unsharded.zero = 0;
  unsharded.distributed_optimizer = false;
  memory_detail::ResolvedLayout ur = r;
  ur.layout = unsharded;
  const WeightElements elements = elements_of(ur, worst_stage);
  const double expert_elements = elements.experts, dense_elements = elements.dense;
  const i64 dense_dp = l.dp * l.cp;
  if (dense_dp > 1)
    step.ops.push_back(
        step_collective("dp_gradients", dense_elements * dbl(r.grad_bytes), dense_dp, l.tp * l.cp * l.dp));
  if (r.expert_dp > 1 && expert_elements > 0)
    step.ops.push_back(
        step_collective("dp_gradients", expert_elements * dbl(r.grad_bytes), r.expert_dp, l.tp * l.cp * l.dp));
  // The gradient buffer zeroed for the next step's accumulation (Megatron-LM's DistributedDataParallel
  // zero_grad_buffer; the measured step's too): one write of every local gradient.
  Op zero;
  zero.name = "zero_grad";
  zero.kind = OpKind::elementwise;
  zero.bytes = (dense_elements + expert_elements) * dbl(r.grad_bytes);
  step.ops.push_back(zero);
  // Adam: weights, gradients and moments read, weights and moments written, and a master copy of the weights read
  // and written where the optimizer keeps one (its dtype differs from the weights', as memory() counts it); over
  // the ranks that shard the optimizer state.
  const bool master = l.optimizer_dtype != l.param_dtype;
  const double per_element = dbl(2 * r.param_bytes + r.grad_bytes + (master ? 6 : 4) * r.optimizer_bytes);
  const bool sharded = l.distributed_optimizer || l.zero >= 1;
  Op update;
  update.name = "optimizer";
  update.kind = OpKind::elementwise;
  update.bytes =
      per_element * (dense_elements / dbl(sharded ? dense_dp : 1) + expert_elements / dbl(sharded ? r.expert_dp : 1));
  step.ops.push_back(update);
  finish(step, hw, dtype);
  return step;
}

// One decode step: every sequence of the batch adds a token; it passes every stage in turn. Stages of one shape
// share their rows (and the send after them), each row's `times` counting them all.
StepTime decode_step(const ModelConfig& c, const memory_detail::ResolvedLayout& r, const TimeOptions& o,
                     const HardwareSpec& hw) {
  const MemoryLayout& l = r.layout;
  const i64 batch = o.decode_batch > 0 ? o.decode_batch : l.batch;
  const i64 context = o.decode_context > 0 ? o.decode_context : l.context;
  const LayerSchedule plan = schedule(c);
  const OpContext x{c, r, o, plan, batch, true, context};
  StepTime step;
  const i64 stages = static_cast<i64>(r.stage_layers.size());
  struct Rows {
    std::size_t from = 0;
    std::vector<i64> times;  // one stage's
  };
  std::map<std::vector<i64>, Rows> rows;  // each shape's rows in step.ops
  for (i64 s = 0; s < stages; ++s) {
    const bool first = s == 0, last = s == stages - 1;
    const std::vector<time_detail::VisitKind> kinds =
        time_detail::visit_kinds(x, r.stage_layers[static_cast<std::size_t>(s)]);
    std::vector<i64> shape = stage_shape(kinds, first, last);
    if (const auto seen = rows.find(shape); seen != rows.end()) {
      for (std::size_t i = 0; i < seen->second.times.size(); ++i)
        step.ops[seen->second.from + i].times += seen->second.times[i];
      continue;
    }
    Rows mine{step.ops.size(), {}};
    const std::vector<Op> ops = time_detail::forward_ops(x, kinds, first, last);
    step.ops.insert(step.ops.end(), ops.begin(), ops.end());
    if (!last) {
      Op send = step_collective("pp_send", dbl(batch) * dbl(c.hidden_size) * dbl(r.activation_bytes), 2,
                                2 * l.tp * l.cp * l.dp);
      send.k = 2;
      step.ops.push_back(send);
    }
    for (std::size_t i = mine.from; i < step.ops.size(); ++i) mine.times.push_back(step.ops[i].times);
    rows.emplace(std::move(shape), std::move(mine));
  }
  step.tokens = dbl(batch);
  finish(step, hw, l.activation_dtype);
  return step;
}

}  // namespace

std::string_view to_string(OpKind v) { return detail::name_of(kOpKinds, v); }
std::string_view to_string(Bound v) { return detail::name_of(kBounds, v); }

namespace {

// The layout as the step runs it: Megatron's mixed precision where the layout leaves a dtype open (bf16 weights and
// activations, fp32 gradients and Adam state), resolved for training; the options' and the layout's errors at once.
memory_detail::ResolvedLayout resolve(const ModelConfig& c, const MemoryLayout& layout, const TimeOptions& options) {
  detail::Violations errors;
  check(options, errors);
  MemoryLayout l = layout;
  l.convention = MemoryConvention::smelt;
  const auto open = [](Dtype& d, Dtype to) {
    if (d == Dtype::automatic) d = to;
  };
  open(l.param_dtype, Dtype::bf16);
  open(l.activation_dtype, Dtype::bf16);
  open(l.grad_dtype, Dtype::fp32);
  open(l.optimizer_dtype, Dtype::fp32);
  l.inference = false;
  memory_detail::ResolvedLayout r;
  errors.collect([&] { r = memory_detail::resolve_layout(c, l); });
  errors.throw_if_any();
  return r;
}

// The report of a resolved layout.
TimeReport report_of(const ModelConfig& c, const MemoryLayout& layout, const memory_detail::ResolvedLayout& r,
                     const HardwareSpec& hw, const TimeOptions& options) {
  const MemoryLayout& l = r.layout;

  TimeReport report;
  report.model = c.name;
  report.hardware = hw;
  report.layout = r.layout;
  report.layout.inference = layout.inference;
  report.layout.microbatches = r.microbatches;
  report.options = options;
  const CostReport cost = count(c, CountOptions{false, r.layout.seq});
  const LayerSchedule plan = schedule(c);
  report.training = training_step(c, counted_elements(c, cost), r, plan, training_kinds(c, r, options, plan), options,
                                  hw, &report.forward);
  report.decode = decode_step(c, r, options, hw);
  report.forward_seconds_per_token = report.forward.seconds_per_token();
  report.training_seconds_per_token = report.training.seconds_per_token();
  report.decode_seconds_per_token = report.decode.seconds_per_token();
  const double gpus = dbl(l.tp) * dbl(l.pp) * dbl(l.cp) * dbl(l.dp);
  report.model_flops_utilization = cost.flops.training * report.training.tokens /
                                   (gpus * hw.peak_flops(r.layout.activation_dtype) * report.training.seconds);
  report.assumptions = {
      "no communication overlaps compute: every collective's time adds to the step's",
      "1F1B pipeline: the bubble is (pp - 1) / vpp micro-batches of the most loaded stage",
      "each expert-parallel rank's experts receive imbalance x top_k x its tokens",
      "decode: one batch passes every stage in turn (no pipelining of decode batches)",
  };
  if (hw.gemm_table)
    report.assumptions.push_back(fmt::format(
        "{}: each GEMM's rate read from the calibration {}, linear in log2 of each dimension between its shapes",
        hw.name, hw.calibration.empty() ? std::string("in the spec file") : hw.calibration));
  if (!hw.calibrated)
    report.assumptions.push_back(fmt::format(
        "{}: the data sheet's peaks and smelt's default efficiencies, not calibrated on the device", hw.name));
  return report;
}

}  // namespace

void time_detail::check_options(const TimeOptions& options, detail::Violations& errors) { check(options, errors); }

double time_detail::training_seconds_per_token(const ModelConfig& c, const MemoryLayout& layout, const HardwareSpec& hw,
                                               const TimeOptions& options) {
  const memory_detail::ResolvedLayout r = resolve(c, layout, options);
  return memory_detail::named_failures(c, r, "time report", [&] {
    const LayerSchedule plan = schedule(c);
    const CostReport cost = count(c, CountOptions{false, r.layout.seq});
    return training_step(c, counted_elements(c, cost), r, plan, training_kinds(c, r, options, plan), options, hw,
                         nullptr)
        .seconds_per_token();
  });
}

time_detail::TrainingShape time_detail::training_shape(const ModelConfig& c, const MemoryLayout& layout,
                                                       const TimeOptions& options) {
  TrainingShape shape;
  shape.r = resolve(c, layout, options);
  shape.schedule = schedule(c);
  time_detail::count_layer_kinds(c, shape);
  shape.kinds = memory_detail::named_failures(c, shape.r, "time report",
                                              [&] { return training_kinds(c, shape.r, options, shape.schedule); });
  return shape;
}

double time_detail::training_seconds_per_token(const ModelConfig& c, const TrainingShape& shape, const HardwareSpec& hw,
                                               const TimeOptions& options) {
  return memory_detail::named_failures(c, shape.r, "time report", [&] {
    if (std::optional<KindElements> kinds = kind_elements(c, shape))
      return training_step(
                 c, [&](const memory_detail::ResolvedLayout& ur, i64 stage) { return kinds->of(c, ur, stage); },
                 shape.r, shape.schedule, shape.kinds, options, hw, nullptr)
          .seconds_per_token();
    const CostReport cost = count(c, CountOptions{false, shape.r.layout.seq});
    return training_step(c, counted_elements(c, cost), shape.r, shape.schedule, shape.kinds, options, hw, nullptr)
        .seconds_per_token();
  });
}

TimeReport step_time(const CheckedConfig& checked, const MemoryLayout& layout, const HardwareSpec& hw,
                     const TimeOptions& options) {
  const ModelConfig& c = checked;
  const memory_detail::ResolvedLayout r = resolve(c, layout, options);
  return memory_detail::named_failures(c, r, "time report", [&] { return report_of(c, layout, r, hw, options); });
}

}  // namespace smelt
