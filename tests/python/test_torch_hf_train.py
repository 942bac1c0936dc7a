"""smelt.hf's training side (docs/training.md): the loss from labels (next-token, MTP, load balancing) against
hand composition and transformers' Mixtral, gradient checkpointing through Trainer, bf16, and the refusals.
Skipped without torch and transformers."""

from __future__ import annotations

import json

import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
if not transformers.utils.is_torch_available():
    pytest.skip(f"transformers {transformers.__version__} cannot use torch {torch.__version__}",
                allow_module_level=True)

import torch.nn.functional as F  # noqa: E402

import smelt  # noqa: E402
import smelt.hf as sh  # noqa: E402
import smelt.torch as st  # noqa: E402
from smelt.torch import mtp_logits, trunk  # noqa: E402
from test_torch_hf import CASES as FAMILIES, _randomise  # noqa: E402
from torch_support import derived_looped, example  # noqa: E402

sh.register()
Auto = transformers.AutoModelForCausalLM


def tokens(vocab: int, b: int = 2, t: int = 12, seed: int = 1) -> torch.Tensor:
    return torch.randint(0, vocab, (b, t), generator=torch.Generator().manual_seed(seed))


def tiny_moe(**change) -> dict:
    return dict(st.shrink(example("tiny-moe.json")), **change)  # span 2-3 twice: 6 visits of 4 layers


def test_labels_give_the_mean_next_token_loss_ignoring_minus_100():
    native = derived_looped()
    model = Auto.from_config(sh.SmeltConfig(smelt=native), dtype=torch.float64)
    x = tokens(native["vocab_size"])
    labels = x.clone()
    labels[0, 5] = labels[1, 2] = -100  # two of the 22 targets left out: 20 terms
    out = model(x, labels=labels)
    logp = torch.log_softmax(out.logits, dim=-1)
    terms = [-logp[b, i, labels[b, i + 1]] for b in range(2) for i in range(11) if labels[b, i + 1] != -100]
    assert len(terms) == 20
    assert abs(out.loss.item() - (sum(terms) / 20).item()) < 1e-12


def test_mtp_depths_join_the_loss_with_lambda_over_d():
    native = tiny_moe(mtp_modules=2)
    model = Auto.from_config(sh.SmeltConfig(smelt=native, mtp_loss_weight=0.3), dtype=torch.float64)
    x = tokens(native["vocab_size"])
    got = model(x, labels=x).loss
    # By hand with smelt.torch's modules: main on all 11 shifted targets; depth k on the first T - D - 1 = 9
    # positions, its logits at i against token i + k + 1; L = L_main + 0.3 / 2 (L_1 + L_2).
    logits, hidden = trunk(model.model, x)
    v = native["vocab_size"]
    main = F.cross_entropy(logits[:, :-1].reshape(-1, v), x[:, 1:].reshape(-1))
    depths = mtp_logits(model.model, hidden[:, :9], x)
    mtp = sum(F.cross_entropy(lg.reshape(-1, v), x[:, k + 1 : k + 10].reshape(-1)) for k, lg in enumerate(depths, 1))
    assert abs(got.item() - (main + 0.3 / 2 * mtp).item()) < 1e-12
    assert abs(got.item() - main.item()) > 1e-3  # the depths move it


def test_the_load_balancing_loss_by_hand():
    from smelt.reference.loss import load_balancing_loss

    # E = 2, top-1, 4 tokens with probabilities (0.9, 0.1), (0.8, 0.2), (0.3, 0.7), (0.6, 0.4): choices 0, 0, 1, 0,
    # so f = (3/4, 1/4); P = ((0.9 + 0.8 + 0.3 + 0.6) / 4, ...) = (0.65, 0.35); 2 x (0.75 x 0.65 + 0.25 x 0.35)
    # = 2 x 0.575 = 1.15. Balanced choices and probabilities give 1.
    probs = torch.tensor([[0.9, 0.1], [0.8, 0.2], [0.3, 0.7], [0.6, 0.4]], dtype=torch.float64)
    assert abs(load_balancing_loss([probs.log()], 2, 1).item() - 1.15) < 1e-12
    # Two router calls (a looped layer's two visits) count as one pool of 8 rows.
    assert abs(load_balancing_loss([probs[:2].log(), probs[2:].log()], 2, 1).item() - 1.15) < 1e-12
    even = torch.tensor([[0.5, 0.5], [0.5, 0.5]], dtype=torch.float64)
    assert abs(load_balancing_loss([even.log()], 2, 2).item() - 2.0) < 1e-12  # k = 2: f sums to 2 over the slots


def test_the_load_balancing_loss_is_mixtral_s(tmp_path):
    cls, kwargs = FAMILIES["mixtral"]
    cfg = getattr(transformers, cls)(**dict(kwargs, output_router_logits=True, router_aux_loss_coef=0.02))
    hf = Auto.from_config(cfg, attn_implementation="eager", experts_implementation="eager").double().eval()
    _randomise(hf, seed=0)
    ours = sh.SmeltForCausalLM.from_family(cfg, hf.state_dict(), router_aux_loss_coef=0.02).eval()
    x = tokens(128)
    with torch.no_grad():
        want, got = hf(x, labels=x), ours(x, labels=x, output_router_logits=True)
    assert len(got.router_logits) == 2  # one per MoE visit
    assert abs(want.aux_loss.item() - got.aux_loss.item()) < 1e-6  # transformers sums in float32
    assert want.aux_loss.item() > 1.0  # E x sum f P is 1 when balanced; random routers are not
    assert abs(want.loss.item() - got.loss.item()) < 1e-6


def test_a_looped_moe_layer_gives_a_router_call_per_visit():
    native = tiny_moe()
    model = Auto.from_config(sh.SmeltConfig(smelt=native, router_aux_loss_coef=0.01), dtype=torch.float64)
    x = tokens(native["vocab_size"])
    out = model(x, labels=x, output_router_logits=True)
    moe_visits = sum(1 for i, _ in model.model.schedule if hasattr(model.model.layers[i].ffn, "router"))
    assert len(out.router_logits) == moe_visits
    no_aux = Auto.from_config(sh.SmeltConfig(smelt=native), dtype=torch.float64)(x, labels=x)
    assert abs(out.loss.item() - (no_aux.loss + 0.01 * out.aux_loss).item()) < 1e-12


def _one_sgd_step(native: dict, checkpointing: bool, tmp_path) -> dict:
    """The weight change of one Trainer step with SGD at lr 1: minus the gradient."""
    model = Auto.from_config(sh.SmeltConfig(smelt=native))
    before = {k: v.detach().clone() for k, v in model.named_parameters()}
    x = tokens(native["vocab_size"], b=1, t=16)
    data = [{"input_ids": x[0], "labels": x[0]}]
    args = transformers.TrainingArguments(
        output_dir=str(tmp_path / str(checkpointing)), max_steps=1, per_device_train_batch_size=1,
        learning_rate=1.0, optim="sgd", lr_scheduler_type="constant", weight_decay=0.0, max_grad_norm=0.0,
        gradient_checkpointing=checkpointing, use_cpu=True, report_to=[], save_strategy="no", logging_steps=1,
        disable_tqdm=True,
    )
    trainer = transformers.Trainer(model=model, args=args, train_dataset=data)
    trainer.train()
    assert model.model.recompute == ("full" if checkpointing else "none")
    return {k: before[k] - v.detach() for k, v in model.named_parameters()}


def test_trainer_with_gradient_checkpointing_gives_the_same_gradients(tmp_path):
    native = derived_looped()
    plain, recomputed = _one_sgd_step(native, False, tmp_path), _one_sgd_step(native, True, tmp_path)
    worst = max((plain[k] - recomputed[k]).abs().max().item() for k in plain)
    assert worst < 1e-6
    assert max(g.abs().max().item() for g in plain.values()) > 1e-3  # a real step was taken


def test_bf16_trains_and_stays_near_float32():
    native = derived_looped()
    x = tokens(native["vocab_size"])
    losses = {}
    for dtype in (torch.float32, torch.bfloat16):
        model = Auto.from_config(sh.SmeltConfig(smelt=native), dtype=dtype)
        assert model.dtype == dtype
        out = model(x, labels=x)
        out.loss.backward()
        assert all(torch.isfinite(p.grad).all() for p in model.parameters() if p.grad is not None)
        losses[dtype] = out.loss.item()
    assert abs(losses[torch.float32] - losses[torch.bfloat16]) < 0.05


def test_bad_inputs_are_named(tmp_path):
    native = derived_looped()
    with pytest.raises(smelt.ConfigError, match=r'^smelt\.loop\.span = "4-19": must satisfy'):
        sh.SmeltConfig(smelt=dict(native, loop=dict(native["loop"], span="4-19")))
    h = native["hidden_size"]
    with pytest.raises(smelt.ConfigError, match=rf"^hidden_size = 7: must equal smelt.hidden_size \({h}\)"):
        sh.SmeltConfig(smelt=native, hidden_size=7)
    with pytest.raises(ValueError, match=r"^routing = \{'renormalise': True\}: is no longer read"):
        sh.SmeltConfig(smelt=native, routing={"renormalise": True})
    model = Auto.from_config(sh.SmeltConfig(smelt=native)).eval()
    x = tokens(native["vocab_size"])
    with torch.no_grad():
        cache = model(x, use_cache=True).past_key_values
        with pytest.raises(ValueError, match=r"^past_key_values: this SmeltCache holds 2 sequences, the input has 3"):
            model(tokens(native["vocab_size"], b=3, t=1), past_key_values=cache)
        with pytest.raises(TypeError, match=r"^past_key_values = DynamicCache: must be a SmeltCache"):
            model(x, past_key_values=transformers.DynamicCache(config=model.config))
        with pytest.raises(ValueError, match=r"^attention_mask: has zeros: padded rows are not supported"):
            model(x, attention_mask=torch.ones_like(x).index_fill(1, torch.tensor([0]), 0))
        with pytest.raises(TypeError, match=r"^SmeltForCausalLM.forward\(\): inputs_embeds = Tensor\(2, 12, "):
            model(x, inputs_embeds=torch.zeros(2, 12, native["hidden_size"]))
    # A directory: no smelt block; another schema version; weights of another shape.
    model.save_pretrained(tmp_path)
    good = json.loads((tmp_path / "config.json").read_text())
    (tmp_path / "config.json").write_text(json.dumps({"model_type": "smelt"}))
    with pytest.raises(ValueError, match=r"^config.smelt: missing: a SmeltConfig holds the native smelt config"):
        Auto.from_pretrained(tmp_path)
    (tmp_path / "config.json").write_text(json.dumps(dict(good, smelt=dict(good["smelt"], schema_version=2))))
    with pytest.raises(smelt.ConfigError, match=r"^smelt.schema_version = 2: must be 1$"):
        Auto.from_pretrained(tmp_path)
    # head_dim + 4: k_proj is (n_kv (d + 4), H) in the config, (n_kv d, H) in the checkpoint.
    a = good["smelt"]["attention"]
    wider = dict(good["smelt"], attention=dict(a, head_dim=a["head_dim"] + 4))
    (tmp_path / "config.json").write_text(json.dumps(dict(good, smelt=wider)))
    kv, d, h = a["num_kv_heads"], a["head_dim"], native["hidden_size"]
    with pytest.raises(ValueError, match=rf"^weights do not fit the config \(\d+ tensors\): model.layers.0.attn.k_proj."
                       rf"weight: checkpoint shape \({kv * d}, {h}\), this config's \({kv * (d + 4)}, {h}\); "):
        Auto.from_pretrained(tmp_path)
