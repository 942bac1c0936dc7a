"""Train a Baseline and its SMELT-derived looped twin side by side (docs/training.md).

The Baseline config (examples/train/tiny-baseline.json; a wider one is shrunk by smelt.torch.shrink) gets its
twin from smelt's solver (the paper's recipe: the middle half looped twice, residual updates scaled by 1/2,
matched on FLOPs, parameters and KV cache; the mismatch is printed), and both train with an existing engine on
the same generated text:

    python examples/train/train_pair.py --steps 50                       # one process, transformers' Trainer
    torchrun --nproc-per-node 2 examples/train/train_pair.py --parallel ddp    # Trainer wraps DDP itself
    torchrun --nproc-per-node 2 examples/train/train_pair.py --parallel fsdp   # torch's FSDP, every weight sharded

``--engine trainer`` (default, single process or DDP) is transformers' Trainer; ``--engine torch`` is a plain
loop over torch.distributed (DDP, or FSDP: FullyShardedDataParallel on the CPU, fully_shard on a GPU), whose
global batches do not depend on the number of processes, so a sharded run can be compared with a single one.
Each step's loss and tokens per second go to standard output and OUT/<model>/log.json (rank 0); each rank writes
OUT/<model>/rank<r>.json with the parameters it holds and a digest of the weights it sees.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import statistics
import time

import torch
import torch.distributed as dist

import smelt
import smelt.hf as sh
import smelt.torch as st

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
VOCAB = 256  # byte tokens
# torchrun's: this process's rank and the number of processes (1 and 0 when run alone)
RANK, WORLD = int(os.environ.get("RANK", "0")), int(os.environ.get("WORLD_SIZE", "1"))


def text(n_bytes: int, seed: int) -> torch.Tensor:
    """A generated public-domain corpus: sums written out ("17+25=42."), as bytes; learnable, so the loss falls."""
    rng = random.Random(seed)
    out = bytearray()
    while len(out) < n_bytes:
        a, b = rng.randrange(100), rng.randrange(100)
        out += f"{a}+{b}={a + b}. ".encode()
    return torch.tensor(list(out[:n_bytes]), dtype=torch.long)


def pair(baseline: str, hidden: int, align: int) -> tuple[dict[str, dict], float]:
    """The Baseline (shrunk when wider than ``hidden``, byte vocabulary) and its twin, derived at that size, with
    the twin's largest budget mismatch in percent: a shrunk config's few heads can leave the KV cache unmatched."""
    base = smelt.read_config(baseline).to_dict()
    if base["hidden_size"] > hidden:
        base = st.shrink(base, max_hidden=hidden, max_vocab=VOCAB)
    base["vocab_size"] = VOCAB
    match = smelt.derive(base, span="middle-half", loops=2, align_hidden=align)
    return {"baseline": base, "looped": match.best_config.to_dict()}, match.best.max_abs_mismatch_pct


def options() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--baseline", default=os.path.join(ROOT, "examples", "train", "tiny-baseline.json"))
    p.add_argument("--hidden", type=int, default=128, help="the shrunk hidden size's upper bound")
    p.add_argument("--align-hidden", type=int, default=8, help="the twin's hidden size, a multiple of this")
    p.add_argument("--steps", type=int, default=50)
    p.add_argument("--batch", type=int, default=8, help="sequences per step, over all processes")
    p.add_argument("--seq", type=int, default=64, help="tokens per sequence")
    p.add_argument("--lr", type=float, default=3e-3)
    p.add_argument("--dtype", choices=["float32", "bfloat16", "float64"], default="float32")
    p.add_argument("--engine", choices=["trainer", "torch"], default="trainer")
    p.add_argument("--parallel", choices=["none", "ddp", "fsdp"], default="none")
    p.add_argument("--gradient-checkpointing", action="store_true")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", default="train-out")
    p.add_argument("--only", choices=["baseline", "looped"], help="train one of the two")
    a = p.parse_args()
    if a.parallel == "none" and WORLD > 1:
        p.error(f"--parallel none: {WORLD} processes were started (torchrun): choose ddp or fsdp")
    if a.parallel == "fsdp" and a.engine == "trainer":
        a.engine = "torch"  # FSDP runs in the plain loop (docs/training.md)
    if a.parallel != "none" and "RANK" not in os.environ:
        p.error(f"--parallel {a.parallel}: start it with torchrun --nproc-per-node N")
    if a.batch % WORLD:
        p.error(f"--batch {a.batch}: must divide by the {WORLD} processes")
    return a


def device() -> torch.device:
    if torch.cuda.is_available():
        return torch.device("cuda", int(os.environ.get("LOCAL_RANK", "0")))
    return torch.device("cpu")


def digest(model: torch.nn.Module) -> str:
    h = hashlib.sha256()
    for name, p in sorted(model.named_parameters()):
        h.update(name.encode())
        h.update(p.detach().float().cpu().numpy().tobytes())
    return h.hexdigest()


class Blocks(torch.utils.data.Dataset):
    def __init__(self, tokens: torch.Tensor, seq: int) -> None:
        self.rows = tokens[: len(tokens) // seq * seq].view(-1, seq)

    def __len__(self) -> int:
        return len(self.rows)

    def __getitem__(self, i: int) -> dict:
        return {"input_ids": self.rows[i], "labels": self.rows[i]}


def train_trainer(model, data: Blocks, a, out: str, dtype: torch.dtype) -> list[dict]:
    import transformers

    steps: list[dict] = []

    class Log(transformers.TrainerCallback):
        def on_step_begin(self, args, state, control, **kw):
            self.t = time.perf_counter()

        def on_step_end(self, args, state, control, **kw):
            steps.append({"step": state.global_step, "seconds": time.perf_counter() - self.t})

        def on_log(self, args, state, control, logs=None, **kw):
            if logs and "loss" in logs and steps:
                steps[-1]["loss"] = logs["loss"]

    cpu = device().type == "cpu"
    args = transformers.TrainingArguments(
        output_dir=out, max_steps=a.steps, per_device_train_batch_size=a.batch // WORLD, learning_rate=a.lr,
        lr_scheduler_type="constant", weight_decay=0.0, logging_steps=1, report_to=[], save_strategy="no",
        seed=a.seed, use_cpu=cpu, ddp_backend="gloo" if cpu and WORLD > 1 else None,
        bf16=dtype == torch.bfloat16, gradient_checkpointing=a.gradient_checkpointing, disable_tqdm=True,
        dataloader_drop_last=True,
    )
    trainer = transformers.Trainer(model=model, args=args, train_dataset=data, callbacks=[Log()])
    trainer.train()
    return steps


def wrap(model, a):
    """DDP, or FSDP (every weight sharded, experts included): FullyShardedDataParallel on the CPU (torch 2.5's
    fully_shard needs CUDA streams), on a GPU fully_shard per stored layer outside the loops, then the root."""
    if a.parallel == "ddp":
        return torch.nn.parallel.DistributedDataParallel(model)
    if a.parallel == "fsdp" and device().type == "cuda":
        from torch.distributed._composable.fsdp import fully_shard

        looped = {i for v, (i, _) in enumerate(model.model.schedule) if model.model.visit_pass[v] > 0}
        for i, layer in enumerate(model.model.layers):
            if i not in looped:  # a looped layer stays in the root unit: gathered once a step, not once a visit
                fully_shard(layer)
        fully_shard(model)
        return model
    if a.parallel == "fsdp":
        from torch.distributed.fsdp import FullyShardedDataParallel

        # One unit for the whole model: a looped layer runs several times a forward, inside one gather.
        return FullyShardedDataParallel(model, use_orig_params=True, device_id=torch.device("cpu"))
    return model


def full_state(wrapped, a) -> dict | None:
    """Every weight, gathered on rank 0 (None elsewhere)."""
    rank = RANK
    if a.parallel != "fsdp":
        inner = wrapped.module if a.parallel == "ddp" else wrapped
        return inner.state_dict() if rank == 0 else None
    if device().type == "cpu":  # FullyShardedDataParallel: the whole weights, gathered inside this context
        from torch.distributed.fsdp import FullyShardedDataParallel

        with FullyShardedDataParallel.summon_full_params(wrapped, writeback=False):
            sd = {k: v.detach().clone() for k, v in wrapped.module.state_dict().items()}
        return sd if rank == 0 else None
    from torch.distributed.checkpoint.state_dict import StateDictOptions, get_model_state_dict

    sd = get_model_state_dict(wrapped, options=StateDictOptions(full_state_dict=True, cpu_offload=True))
    return sd if rank == 0 else None


def train_torch(model, data: Blocks, a, dtype: torch.dtype) -> tuple[list[dict], torch.nn.Module]:
    world, rank = WORLD, RANK
    if a.gradient_checkpointing:
        model.gradient_checkpointing_enable()
    wrapped = wrap(model, a)
    opt = torch.optim.AdamW(wrapped.parameters(), lr=a.lr, weight_decay=0.0)
    local = a.batch // world
    steps = []
    for step in range(a.steps):
        rows = [(step * a.batch + rank * local + i) % len(data) for i in range(local)]
        x = data.rows[rows].to(device())
        t = time.perf_counter()
        loss = wrapped(input_ids=x, labels=x).loss
        loss.backward()
        for p in wrapped.parameters():  # an expert no token reached: a zero gradient, as FSDP's flat ones have,
            if p.grad is None and p.requires_grad:  # so AdamW steps every weight the same way at any scale
                p.grad = torch.zeros_like(p)
        opt.step()
        opt.zero_grad(set_to_none=True)
        if device().type == "cuda":
            torch.cuda.synchronize()
        seconds = time.perf_counter() - t
        mean = loss.detach().clone()
        if world > 1:
            dist.all_reduce(mean)
            mean /= world
        steps.append({"step": step + 1, "loss": mean.item(), "seconds": seconds})
    return steps, wrapped


def run(name: str, native: dict, a, mismatch: float) -> None:
    rank = RANK
    dtype = getattr(torch, a.dtype)
    out = os.path.join(a.out, name)
    os.makedirs(out, exist_ok=True)
    model = sh.SmeltForCausalLM(sh.SmeltConfig(smelt=native, init_seed=a.seed)).to(device(), dtype)
    data = Blocks(text(a.batch * a.seq * (a.steps + 1), a.seed), a.seq)
    if a.engine == "trainer":
        steps = train_trainer(model, data, a, out, dtype)
        wrapped, held = model, sum(p.numel() for p in model.parameters())
    else:
        steps, wrapped = train_torch(model, data, a, dtype)
        held = sum(p.numel() for p in wrapped.parameters())  # FSDP: this rank's shard of every weight
    state = full_state(wrapped, a) if a.engine == "torch" else (model.state_dict() if rank == 0 else None)
    mine = {"rank": rank, "params_held": held, "digest": digest(model) if a.parallel != "fsdp" else None}
    with open(os.path.join(out, f"rank{rank}.json"), "w") as f:
        json.dump(mine, f)
    if rank != 0:
        return
    model.save_pretrained(out, state_dict=state)
    tokens = a.batch * a.seq
    for s in steps:
        s["tokens_per_s"] = tokens / s["seconds"]
        print(f"{name:8s} step {s['step']:3d}/{a.steps}  loss {s.get('loss', float('nan')):.4f}  "
              f"{s['tokens_per_s']:9.0f} tokens/s", flush=True)
    log = {"model": name, "params": smelt.count(native).to_dict()["params"]["total"],
           "forward_flops_per_token": smelt.count(native, context=a.seq).to_dict()["flops_per_token"]["forward"],
           "engine": a.engine, "parallel": a.parallel, "world": WORLD,
           "dtype": a.dtype, "device": str(device()), "steps": steps, "pair_mismatch_pct": mismatch,
           "median_step_seconds": statistics.median(s["seconds"] for s in steps)}
    with open(os.path.join(out, "log.json"), "w") as f:
        json.dump(log, f, indent=1)


def main() -> None:
    a = options()
    if "RANK" in os.environ and a.engine == "torch":
        dist.init_process_group("nccl" if torch.cuda.is_available() else "gloo")
        if torch.cuda.is_available():
            torch.cuda.set_device(device())
    torch.manual_seed(a.seed)
    models, mismatch = pair(a.baseline, a.hidden, a.align_hidden)
    if RANK == 0:
        print(f"the looped twin matches the Baseline's FLOPs, parameters and KV cache to {mismatch:.2f}%", flush=True)
    for name, native in models.items():
        if a.only in (None, name):
            run(name, native, a, mismatch)
    if dist.is_initialized():
        dist.barrier()
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
