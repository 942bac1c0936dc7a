// smelt-match anatomy CONFIG [--layer N] [--json]: one stored layer as the
// library counts it (docs/anatomy.md): its weight tensors, per-token products
// and attention core.
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "commands.hpp"
#include "exit_codes.hpp"
#include "smelt/anatomy.hpp"
#include "smelt/config_io.hpp"
#include "smelt/error.hpp"
#include "table.hpp"

namespace smelt::cli {
namespace {

struct AnatomyArgs {
  std::string config;
  std::int64_t layer = 1;
  bool json = false;
};

std::string text(const ModelConfig& c, const LayerAnatomyReport& a) {
  std::string out = fmt::format("{}, layer {} of {} ({})\n\n", shown_name(c.name), a.layer + 1, c.num_layers,
                                a.moe ? "MoE" : "dense");
  std::vector<std::vector<std::string>> rows{{"tensor", "term", "elements", "instances", "trained"}};
  for (const LayerTensor& t : a.tensors)
    rows.push_back(
        {t.name, t.term, fmt::format("{}", t.elements), fmt::format("{}", t.instances), t.trainable ? "yes" : "no"});
  out += render_cells(rows, 2) + "\n";
  std::vector<std::vector<std::string>> products{{"product", "n", "k", "per token"}};
  for (const LayerProduct& p : a.products)
    products.push_back({p.op, fmt::format("{}", p.n), fmt::format("{}", p.k), fmt::format("{}", p.times)});
  out += render_cells(products, 1) + "\n";
  out += fmt::format("attention core: query-key width {}, value width {}, KV cache {} elements a token\n", a.qk_width,
                     a.v_width, a.kv_elements);
  return out;
}

int run_anatomy(const AnatomyArgs& args) {
  const ModelConfig c = read_config(args.config);
  if (args.layer < 1 || args.layer > c.num_layers)
    throw config_error(fmt::format("--layer = {}: must be a stored layer, 1 to {}", args.layer, c.num_layers));
  const LayerAnatomyReport a = layer_anatomy(c, args.layer - 1);
  std::cout << (args.json ? anatomy_json(a) : text(c, a));
  return kOk;
}

}  // namespace

Run add_anatomy(CLI::App& app) {
  auto args = std::make_shared<AnatomyArgs>();
  auto* sub = app.add_subcommand(
      "anatomy", "One stored layer as smelt counts it: its weight tensors, per-token products and attention core");
  sub->add_option("CONFIG", args->config, "Model config: smelt native JSON or Hugging Face config.json")->required();
  sub->add_option("--layer", args->layer, "Stored layer, 1-based (default: the first)");
  sub->add_flag("--json", args->json, "Print ordered JSON instead of text");
  return [args] { return run_anatomy(*args); };
}

}  // namespace smelt::cli
