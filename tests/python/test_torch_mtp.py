"""Multi-token prediction in the reference model against smelt's params.mtp and flops.terms.mtp.

DeepSeek-V3 technical report, section 2.2; counting.md, section 3.5; docs/reference-model.md, "Multi-token
prediction". Skipped without torch.
"""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
from torch.utils.flop_counter import FlopCounterMode  # noqa: E402

import smelt  # noqa: E402
import smelt.torch as st  # noqa: E402
from torch_support import deepseek_gqa, mixed, sigmoid_routed  # noqa: E402


def mixed_mtp() -> dict:
    """The mixed-switch config (LayerNorm, a tied head, its last layer chunked) with one MTP module."""
    return smelt.read_config({**mixed(), "mtp_modules": 1}).to_dict()


CASES = {
    "tiny-moe, sigmoid + bias, 2 modules": lambda: sigmoid_routed(bias=True, mtp=2),
    "deepseek-v3 with GQA, 4 layers": lambda: deepseek_gqa(num_layers=4),
    "mixed, 1 module": mixed_mtp,
}


def test_mtp_params_by_hand():
    # tiny-moe (H = 64) with one module: M 2*64*64 = 8,192; 3 norms 192; a layer like the last (MoE) one:
    # attention 64*(64 + 2*32) + 64*64 = 12,288, norms 128, router 64*8 + 8 = 520, experts 8*3*64*32 = 49,152,
    # shared 3*64*32 = 6,144: 68,232. In all 76,616, and the eight main terms are unchanged.
    cfg = sigmoid_routed(bias=True, mtp=1)
    model = st.build_model(cfg, device="meta")
    assert st.mtp_params(model) == 8_192 + 192 + 68_232 == 76_616
    report = smelt.count(cfg).to_dict()["params"]
    assert report["mtp"] == 76_616
    assert st.param_terms(model) == report["terms"]
    assert st.param_terms(model) == st.param_terms(st.build_model({**cfg, "mtp_modules": 0}, device="meta"))
    assert sum(p.numel() for p in model.parameters()) == report["total"] + report["mtp"]


@pytest.mark.parametrize("name", sorted(CASES))
def test_mtp_params_equal_smelt(name):
    cfg = CASES[name]()
    model = st.build_model(cfg, device="meta")
    report = smelt.count(cfg).to_dict()["params"]
    assert st.mtp_params(model) == report["mtp"] > 0
    assert st.param_terms(model) == report["terms"]
    # Each module's layer is shaped like the last one (MoE when it is), with full attention whatever the pattern.
    last = model.layers[-1]
    for module in model.mtp:
        assert module.layer.attn.kind == "full" and type(module.layer.ffn) is type(last.ffn)


def test_deepseek_v3_mtp_module_by_hand():
    # Shrunk DeepSeek-V3 (H = 112, its last layer MoE; MHA of 8 heads of 14 for its MLA): M 2*112^2 = 25,088,
    # norms 3*112 = 336; the layer: attention 112*336 + 112*112 = 50,176, norms 224, router 112*256 + 256
    # = 28,928, experts 256*3*112*32 = 2,752,512, shared 3*112*32 = 10,752. The same for 4 layers or all 61.
    cfg = deepseek_gqa(num_layers=4)
    model = st.build_model(cfg, device="meta")
    want = 25_088 + 336 + 50_176 + 224 + 28_928 + 2_752_512 + 10_752
    assert len(model.mtp) == 1 and want == 2_868_016
    assert st.mtp_params(model) == smelt.count(cfg).to_dict()["params"]["mtp"] == want


def measured_mtp(model, t: int) -> tuple[int, int, int]:
    """FlopCounterMode on the MTP modules' forward of t positions: (total, attention core, head)."""
    g = torch.Generator().manual_seed(0)
    tokens = torch.randint(0, model.config.vocab_size, (1, t + len(model.mtp)), generator=g)
    with torch.no_grad():
        _, hidden = st.trunk(model, tokens[:, :t])
    with FlopCounterMode(display=False) as fc:
        st.mtp_logits(model, hidden, tokens)
    per = {k: sum(v.values()) for k, v in fc.get_flop_counts().items()}
    # Called outside the model's forward, the modules are named from MTPModule down; the head is "Linear"
    # (untied) or counted only in "Global" (tied, F.linear on the embedding's weight).
    core = sum(n for k, n in per.items() if k.endswith("layer.attn"))
    projections = tuple(f"layer.attn.{p}_proj" for p in "qkvo")
    core -= sum(n for k, n in per.items() if k.endswith(projections))
    modules = sum(n for k, n in per.items() if k == "MTPModule")
    return per["Global"], core, per["Global"] - modules


@pytest.mark.parametrize("name", sorted(CASES))
def test_mtp_forward_flops_equal_smelt(name):
    cfg, t = CASES[name](), 16
    model = st.build_model(cfg, seed=0)
    total, core, head = measured_mtp(model, t)
    d, h, v = cfg["mtp_modules"], cfg["hidden_size"], cfg["vocab_size"]
    q = cfg["attention"]["num_heads"] * cfg["attention"]["head_dim"]
    assert head == d * t * 2 * h * v  # the shared head runs once more per module
    assert core == d * t * 2 * 2 * q * t  # Q K^T and softmax V over the full T x T scores
    # smelt charges the causal average (T + 1)/2 keys (full attention in every module): measured * (T + 1)/(2T).
    own = smelt.count(cfg, context=t).to_dict()["flops_per_token"]["terms"]["mtp"]
    assert total - core + core * (t + 1) // (2 * t) == own * t
    # smelt's per module: 2*(2H*H) + the last layer's forward (full attention) + 2*H*V.
    full = {**cfg["attention"], "pattern": ["full"], "window": 0, "chunk": 0}
    last = smelt.count({**cfg, "attention": full}, context=t, every_layer=True).to_dict()["layers"][-1]
    assert own == d * (2 * 2 * h * h + last["flops_per_visit"]["total"] + 2 * h * v)


def test_tiny_moe_mtp_flops_by_hand():
    # Per token, per module at T = 16: M 2*2*64*64 = 16,384; the layer: QKV 2*64*128 = 16,384, O 8,192,
    # scores + values 2*2*64*8.5 = 2,176, router 2*64*8 = 1,024, top-2 experts 2*2*3*64*32 = 24,576, shared
    # 12,288: 64,640; the head 2*64*1000 = 128,000. 209,024 per module; measured: the core at 2*2*64*16 = 4,096.
    cfg = sigmoid_routed(bias=True, mtp=1)
    assert smelt.count(cfg, context=16).to_dict()["flops_per_token"]["terms"]["mtp"] == 209_024
    model = st.build_model(cfg, seed=0)
    total, core, _ = measured_mtp(model, 16)
    assert (total, core) == (16 * (209_024 - 2_176 + 4_096), 16 * 4_096) == (3_375_104, 65_536)
    # A training step on one sequence of 16 + 1 + 1 tokens: 3 x (the main forward 8,617,984 + 3,375,104).
    tokens = torch.randint(0, 1000, (1, 18), generator=torch.Generator().manual_seed(0))
    with FlopCounterMode(display=False) as fc:
        model.loss(tokens).backward()
    assert fc.get_total_flops() == 3 * (8_617_984 + 3_375_104) == 35_979_264


@pytest.mark.parametrize("name", sorted(CASES))
def test_a_training_step_with_mtp_is_3x_forward_plus_mtp(name):
    # smelt's training = 3 x (forward + mtp); FlopCounterMode on loss(tokens).backward(), the main model on
    # T tokens and each module on T positions, is that after the attention conversion of both parts.
    cfg, t = CASES[name](), 16
    d = cfg["mtp_modules"]
    model = st.build_model(cfg, seed=0)
    tokens = torch.randint(0, cfg["vocab_size"], (2, t + d + 1), generator=torch.Generator().manual_seed(0))
    with FlopCounterMode(display=False) as fc:
        model.loss(tokens).backward()
    q = cfg["attention"]["num_heads"] * cfg["attention"]["head_dim"]
    main = smelt.count(cfg, context=t, convention="flop-counter").to_dict()["flops_per_token"]["forward_per_sequence"]
    own = smelt.count(cfg, context=t).to_dict()["flops_per_token"]
    mtp = own["terms"]["mtp"] * t + d * t * 2 * q * (t - 1)  # 4qT measured where smelt has 2q(T + 1), per token
    assert fc.get_total_flops() == 2 * 3 * (main + mtp)  # a batch of 2 sequences
    assert own["training"] == 3 * (own["forward"] + own["terms"]["mtp"])
    # Every trained parameter of every module takes part: its norms (its own final norm, not the main model's),
    # M, the layer; the routed experts only where tokens were routed to them.
    for k, module in enumerate(model.mtp):
        for name, p in module.named_parameters():
            if p.requires_grad and not name.startswith("layer.ffn.experts."):
                assert p.grad is not None and p.grad.abs().sum() > 0, f"mtp.{k}.{name}"


def test_each_depth_sees_the_token_k_ahead_and_no_further():
    # Depth k's logits at position i read tokens up to i + k: changing token i + k changes them, changing
    # token i + k + 1 (its own target) does not.
    cfg = sigmoid_routed(bias=True, mtp=2)
    model = st.build_model(cfg, seed=0)
    t, i = 8, 3
    tokens = torch.randint(0, 1000, (1, t + 2), generator=torch.Generator().manual_seed(1))

    def depth(k, toks):
        _, hidden = st.trunk(model, toks[:, :t])
        return st.mtp_logits(model, hidden, toks)[k - 1][0, i]

    with torch.no_grad():
        for k in (1, 2):
            seen, target = tokens.clone(), tokens.clone()
            seen[0, i + k] = (seen[0, i + k] + 1) % 1000
            target[0, i + k + 1] = (target[0, i + k + 1] + 1) % 1000
            assert (depth(k, seen) - depth(k, tokens)).abs().max() > 1e-3
            # Equal up to rounding: the experts' batches hold other tokens, so their sums round differently.
            assert torch.allclose(depth(k, target), depth(k, tokens), rtol=0, atol=1e-5)


def test_without_mtp_the_loss_is_the_next_token_loss():
    cfg = sigmoid_routed(bias=False)
    model = st.build_model(cfg, seed=0)
    assert model.mtp is None
    tokens = torch.randint(0, 1000, (2, 9), generator=torch.Generator().manual_seed(0))
    with torch.no_grad():
        want = torch.nn.functional.cross_entropy(model(tokens[:, :8]).logits.reshape(-1, 1000), tokens[:, 1:].reshape(-1))
        assert torch.equal(model.loss(tokens), want)


def test_the_loss_with_mtp_is_main_plus_lambda_over_d_times_the_depths():
    # L = L_main + (lambda / D) * (L_1 + L_2), D = 2: a sequence of T + D + 1 = 11 tokens, the main model on the
    # first T = 8 (targets 1..8), depth k on the embeddings of tokens k..k + 7 (targets k + 1..k + 8).
    model = st.build_model(sigmoid_routed(bias=True, mtp=2), seed=0)
    tokens = torch.randint(0, 1000, (2, 11), generator=torch.Generator().manual_seed(3))
    ce = torch.nn.functional.cross_entropy
    with torch.no_grad():
        logits, hidden = st.trunk(model, tokens[:, :8])
        d1, d2 = st.mtp_logits(model, hidden, tokens)
        depths = enumerate((logits, d1, d2))
        parts = [ce(lg.reshape(-1, 1000), tokens[:, k + 1 : k + 9].reshape(-1)) for k, lg in depths]
        assert torch.allclose(model.loss(tokens, mtp_weight=0.3), parts[0] + 0.3 / 2 * (parts[1] + parts[2]))
        assert torch.allclose(model.loss(tokens), model.loss(tokens, mtp_weight=0.3))  # DeepSeek-V3's 0.3
        assert not torch.allclose(model.loss(tokens, mtp_weight=0.0), model.loss(tokens))


def test_too_short_a_sequence_is_refused():
    model = st.build_model(sigmoid_routed(bias=True, mtp=2), seed=0)
    with pytest.raises(ValueError, match=r"tokens has 3 positions: training needs at least D \+ 2 = 4"):
        model.loss(torch.zeros(1, 3, dtype=torch.long))


def test_a_short_training_run_with_mtp_lowers_both_losses():
    # tiny-moe with sigmoid routing, the correction bias and one MTP module learns "the next token is this
    # one + 1 mod 64" (so the token two ahead is + 2) with AdamW, 60 steps of 8 x 17 tokens: the main and the
    # MTP loss start near ln(1000) = 6.91 and fall below 1 (measured, means of 3 steps: main 6.80 -> 0.12,
    # MTP 6.71 -> 0.12).
    cfg = sigmoid_routed(bias=True, mtp=1)
    model = st.build_model(cfg, seed=0)
    opt = torch.optim.AdamW(model.parameters(), lr=3e-3)
    g = torch.Generator().manual_seed(0)
    main, mtp = [], []
    for _ in range(60):
        start = torch.randint(0, 64, (8, 1), generator=g)
        x = (start + torch.arange(17)) % 64
        logits, hidden = st.trunk(model, x[:, :15])
        (depth1,) = st.mtp_logits(model, hidden, x)
        pairs = ((logits, x[:, 1:16]), (depth1, x[:, 2:17]))  # the next token, and the one after it
        losses = [torch.nn.functional.cross_entropy(lg.reshape(-1, 1000), y.reshape(-1)) for lg, y in pairs]
        main.append(losses[0].item())
        mtp.append(losses[1].item())
        total = losses[0] + losses[1]  # model.loss(x, mtp_weight=1.0), its two parts kept apart
        opt.zero_grad()
        total.backward()
        opt.step()
    assert sum(main[:3]) / 3 > 6.0 and sum(mtp[:3]) / 3 > 6.0
    assert sum(main[-3:]) / 3 < 1.0 and sum(mtp[-3:]) / 3 < 1.0
    assert model.mtp[0].layer.ffn.router.e_score_correction_bias.abs().sum() == 0  # never trained
