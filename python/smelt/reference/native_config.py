"""smelt's reader of the native config in pure Python, for a checkpoint's own copy of the code (``save(...,
with_code=True)``), which runs without smelt: the same keys, types, words, defaults and rules as
src/config/native_json.cpp and src/config/validate.cpp, the same violations (field, value, rule) in the same order,
and the canonical dict ``smelt.Config.to_dict()`` gives. Where smelt is installed, SmeltConfig reads with smelt
itself; tests/python/test_hf_native.py holds the two readers to the same answers.

The bounds are include/smelt/detail/bounds.hpp's: they keep a model that config.json describes buildable (at most 65,536
layers, loops of at most 1,024 passes, widths of at most 2^24).
"""

from __future__ import annotations

import json
import math
from typing import Any

MAX_WIDTH = 1 << 24
MAX_LAYERS = 1 << 16
MAX_EXPERTS = 1 << 20
MAX_CONTEXT = 1 << 30
MAX_LOOPS = 1024
MAX_KV_BYTES = 64
MAX_VIOLATIONS = 100
EXCERPT_BYTES = 60
INT64 = (-(1 << 63), (1 << 63) - 1)

WORDS = {
    "attention_type": ("gqa", "mla"),
    "qk_norm": ("none", "per_head", "full"),
    "layer": ("full", "sliding", "chunked"),
    "ffn_type": ("gated", "plain"),
    "norm": ("rmsnorm", "layernorm"),
    "router_score": ("softmax", "sigmoid"),
    "router_form": ("plain", "deepseek", "llama4"),
    "norm_placement": ("pre", "sandwich", "sandwich_residual"),
    "injection": ("none", "linear"),
    "kv_policy": ("per_visit", "shared", "active"),
    "lora_target": ("q", "k", "v", "o", "gate", "up", "down"),
}
REQUIRED = object()


class NativeConfigError(ValueError):
    """A native config that breaks smelt's rules: ``violations`` as smelt.ConfigError holds them, (field, value,
    rule); ``str(e)`` one violation per line."""

    def __init__(self, violations: list[tuple[str, str, str]]) -> None:
        super().__init__("\n".join(text(v) for v in violations))
        self.violations = violations


def text(v: tuple[str, str, str]) -> str:
    field, value, rule = v
    return rule if not field else f"{field}: {rule}" if not value else f"{field} = {value}: {rule}"


def excerpt(s: str, limit: int = EXCERPT_BYTES) -> str:
    raw = s.encode("utf-8", "surrogatepass")
    if len(raw) <= limit:
        return s
    cut = limit
    while cut > 0 and raw[cut] & 0xC0 == 0x80:
        cut -= 1
    return raw[:cut].decode("utf-8", "replace") + "..."


def shown(value: Any) -> str:
    """A value as smelt's messages echo it: compact JSON, an object's keys in sorted order, cut at 60 bytes."""
    if isinstance(value, str):
        value = excerpt(value)
    try:
        out = json.dumps(value, ensure_ascii=False, separators=(",", ":"), sort_keys=True, default=repr)
    except (TypeError, ValueError, RecursionError):
        out = repr(value)
    return excerpt(out)


class Violations:
    def __init__(self) -> None:
        self.list: list[tuple[str, str, str]] = []
        self.found = 0

    def add(self, field: str, value: str, rule: str) -> None:
        if len(self.list) < MAX_VIOLATIONS:
            self.list.append((field, value, rule))
        elif len(self.list) == MAX_VIOLATIONS:
            self.list.append(("", "", f"(more violations after the first {MAX_VIOLATIONS} are not listed)"))
        self.found += 1

    def range(self, field: str, value: int, lo: int, hi: int) -> None:
        if lo <= value <= hi:
            return
        rule = "must be positive" if lo == 1 and value < lo else f"must be at least {lo}" if value < lo else (
            f"must be at most {hi}")
        self.add(field, str(value), rule)


def _nearest(word: str, known: list[str]) -> str:
    allowed = max(2, len(word) // 3)
    best, best_d = "", None
    for k in known:
        if len(k) > len(word) + allowed or len(word) > len(k) + allowed:
            continue
        row = list(range(len(k) + 1))
        for i in range(1, len(word) + 1):
            diagonal, row[0] = row[0], i
            for j in range(1, len(k) + 1):
                up = row[j]
                row[j] = min(row[j] + 1, row[j - 1] + 1, diagonal + (word[i - 1] != k[j - 1]))
                diagonal = up
        if best_d is None or row[-1] < best_d:
            best, best_d = k, row[-1]
    return best if best_d is not None and best_d <= allowed else ""


class _Object:
    """One JSON object being read (util/json_reader.cpp's JsonObject)."""

    def __init__(self, data: dict, path: str, violations: Violations) -> None:
        self.data, self.path, self.v, self.known = data, path, violations, []

    def field(self, key: str) -> str:
        return f"{self.path}.{key}" if self.path else key

    def violation(self, key: str, value: str, rule: str) -> None:
        self.v.add(self.field(key), value, rule)

    def find(self, key: str, required: bool) -> Any:
        self.known.append(key)
        value = self.data.get(key)
        if value is None and required:
            self.violation(key, "", "missing (required)")
        return value

    def raw(self, key: str) -> Any:
        return self.find(key, False)

    def integer(self, key: str, fallback: Any = REQUIRED) -> int:
        value = self.find(key, fallback is REQUIRED)
        if value is None:
            return 0 if fallback is REQUIRED else fallback
        if isinstance(value, int) and not isinstance(value, bool) and INT64[0] <= value <= INT64[1]:
            return int(value)
        if isinstance(value, float) and math.isfinite(value) and value == math.floor(value) and abs(value) < 9.0e15:
            return int(value)
        self.violation(key, shown(value), "must be an integer")
        return 0 if fallback is REQUIRED else fallback

    def number(self, key: str, fallback: Any = REQUIRED) -> float:
        value = self.find(key, fallback is REQUIRED)
        if value is None:
            return 0.0 if fallback is REQUIRED else fallback
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return float(value)
        self.violation(key, shown(value), "must be a number")
        return 0.0 if fallback is REQUIRED else fallback

    def boolean(self, key: str, fallback: Any = REQUIRED) -> bool:
        value = self.find(key, fallback is REQUIRED)
        if value is None:
            return False if fallback is REQUIRED else fallback
        if isinstance(value, bool):
            return value
        self.violation(key, shown(value), "must be true or false")
        return False if fallback is REQUIRED else fallback

    def string(self, key: str, fallback: Any = REQUIRED) -> str:
        value = self.find(key, fallback is REQUIRED)
        if value is None:
            return "" if fallback is REQUIRED else fallback
        if isinstance(value, str):
            return value
        self.violation(key, shown(value), "must be a string")
        return "" if fallback is REQUIRED else fallback

    def word(self, key: str, fallback: str, kind: str) -> str:
        """A word of ``kind``; a bad one reads as the first word (the enum's zero, as smelt's reader does)."""
        word = self.string(key, fallback)
        if word in WORDS[kind]:
            return word
        self.violation(key, f'"{excerpt(word)}"', "must be one of " + ", ".join(WORDS[kind]))
        return WORDS[kind][0]

    def object(self, key: str, optional: bool = False) -> _Object | None:
        value = self.find(key, not optional)
        if value is None:
            return None
        if not isinstance(value, dict):
            self.violation(key, shown(value), "must be an object")
            return None
        return _Object(value, self.field(key), self.v)

    def words(self, key: str, rule: str, kind: str) -> list[str]:
        out = []
        items = self.raw(key)
        if not isinstance(items, list):
            self.violation(key, shown(items), rule)
            return out
        for i, item in enumerate(items):
            field = f"{self.field(key)}[{i}]"
            if not isinstance(item, str):
                self.v.add(field, shown(item), "must be a string")
            elif item not in WORDS[kind]:
                self.v.add(field, f'"{excerpt(item)}"', "must be one of " + ", ".join(WORDS[kind]))
            else:
                out.append(item)
        return out

    def reject_unknown_keys(self) -> None:
        for key in self.data:
            if key in self.known:
                continue
            hint = _nearest(str(key), self.known)
            self.v.add(self.field(excerpt(str(key))), "", f'unknown key (did you mean "{hint}"?)' if hint else
                       "unknown key")


def _span(text: str) -> tuple[int, int] | None:
    def number(s: str) -> int | None:  # std::from_chars of an int64: digits with an optional leading '-'
        digits = s[1:] if s.startswith("-") else s
        if not digits or not digits.isascii() or not digits.isdigit():
            return None
        n = int(s)
        return n if INT64[0] <= n <= INT64[1] else None

    first, dash, last = text.partition("-")
    a = number(first)
    b = number(last) if dash else a
    return None if a is None or b is None else (a, b)


def _read_attention(a: _Object, c: dict) -> None:
    at: dict[str, Any] = {"type": a.word("type", "gqa", "attention_type"), "num_heads": a.integer("num_heads")}
    if at["type"] == "gqa":
        at["num_kv_heads"], at["head_dim"] = a.integer("num_kv_heads"), a.integer("head_dim")
    else:
        at["q_lora_rank"] = a.integer("q_lora_rank", 0)
        for key in ("kv_lora_rank", "qk_nope_head_dim", "qk_rope_head_dim", "v_head_dim"):
            at[key] = a.integer(key)
    at["qkv_bias"] = a.boolean("qkv_bias", False)
    at["qk_bias"] = a.boolean("qk_bias", False)
    at["out_bias"] = a.boolean("out_bias", False)
    at["qk_norm"] = a.word("qk_norm", "none", "qk_norm")
    at["sinks"] = a.boolean("sinks", False)
    at["pattern"] = ["full"]
    if a.raw("pattern") is not None:
        at["pattern"] = a.words("pattern", 'must be an array of "full", "sliding" or "chunked"', "layer")
    at["window"] = a.integer("window", 0)
    at["chunk"] = a.integer("chunk", 0)
    a.reject_unknown_keys()
    c["attention"] = at


def default_router_form(moe: dict) -> str:
    """The router form a native config has when it does not name one (smelt's default_router_form())."""
    if moe["router_score"] == "softmax":
        return "plain"
    return "deepseek" if moe["router_bias"] else "llama4"


def default_renormalize(form: str) -> bool:
    """Whether a config of router form ``form`` renormalises when it does not say (smelt's default_renormalize()):
    every form but Llama 4's."""
    return form != "llama4"


def _read_moe(m: _Object, c: dict) -> None:
    moe: dict[str, Any] = {key: m.integer(key) for key in ("num_experts", "top_k", "expert_width")}
    moe["num_shared_experts"] = m.integer("num_shared_experts", 0)
    moe["shared_width"] = m.integer("shared_width", 0)
    moe["shared_gate"] = m.boolean("shared_gate", False)
    moe["router_bias"] = m.boolean("router_bias", False)
    moe["router_score"] = m.word("router_score", "softmax", "router_score")
    moe["router_form"] = m.word("router_form", default_router_form(moe), "router_form")
    moe["renormalize"] = m.boolean("renormalize", default_renormalize(moe["router_form"]))
    moe["clamped_swiglu"] = None
    clamp = m.object("clamped_swiglu", True)
    if clamp is not None:
        moe["clamped_swiglu"] = {"alpha": clamp.number("alpha"), "limit": clamp.number("limit")}
        clamp.reject_unknown_keys()
    moe["layers"] = {"first_dense": 0, "every": 1, "phase": 0}
    layers = m.raw("layers")
    if isinstance(layers, list):
        listed = []
        for i, x in enumerate(layers):
            if isinstance(x, int) and not isinstance(x, bool) and INT64[0] <= x <= INT64[1]:
                listed.append(int(x))
            else:
                m.violation(f"layers[{i}]", shown(x), "must be an integer")
        if not layers:
            m.violation("layers", "[]", "must list at least one layer")
        if listed:
            moe["layers"] = listed
    elif isinstance(layers, dict):
        rule = _Object(layers, m.field("layers"), m.v)
        moe["layers"] = {"first_dense": rule.integer("first_dense", 0), "every": rule.integer("every", 1),
                         "phase": rule.integer("phase", 0)}
        rule.reject_unknown_keys()
    elif layers is not None:
        m.violation("layers", shown(layers), 'must be a list of 1-based layers or {"first_dense", "every", "phase"}')
    m.reject_unknown_keys()
    c["moe"] = moe


def _read_loop(o: _Object) -> dict:
    loop: dict[str, Any] = {"first": 0, "last": 0}
    span = o.string("span")
    if span:
        parsed = _span(span)
        if parsed is None:
            o.violation("span", f'"{excerpt(span)}"', 'must be a 1-based inclusive layer span such as "4-9"')
        else:
            loop["first"], loop["last"] = parsed
    loop["count"] = o.integer("count", 2)
    loop["residual_scale"] = o.number("residual_scale", 1.0 / loop["count"] if loop["count"] > 0 else 1.0)
    for key in ("norm_each_pass", "exit_gate"):
        loop[key] = o.boolean(key, False)
    loop["injection"] = o.word("injection", "none", "injection")
    loop["injection_bias"] = o.boolean("injection_bias", False)
    loop["norm_after"] = o.boolean("norm_after", False)
    loop["backprop_passes"] = o.integer("backprop_passes", 0)
    loop["kv_policy"] = o.word("kv_policy", "per_visit", "kv_policy")
    loop["kv_keep"] = []
    keep = o.raw("kv_keep")
    if keep is not None:
        if not isinstance(keep, list):
            o.violation("kv_keep", shown(keep), "must be a list of fractions in (0, 1]")
        for i, x in enumerate(keep if isinstance(keep, list) else []):
            if isinstance(x, (int, float)) and not isinstance(x, bool):
                loop["kv_keep"].append(float(x))
            else:
                o.violation(f"kv_keep[{i}]", shown(x), "must be a number")
    loop["lora_rank"] = o.integer("lora_rank", 0)
    loop["lora_targets"] = []
    if o.raw("lora_targets") is not None:
        loop["lora_targets"] = o.words(
            "lora_targets", 'must be a list of "q", "k", "v", "o", "gate", "up", "down"', "lora_target")
    o.reject_unknown_keys()
    return loop


def _read_loops(root: _Object, c: dict) -> None:
    c["loops"] = []
    one = root.object("loop", True)
    if one is not None:
        c["loops"].append(_read_loop(one))
    items = root.raw("loops")
    if items is None:
        return
    if c["loops"]:
        root.violation("loops", shown(items), 'give either "loop" (one span) or "loops" (several), not both')
        return
    if not isinstance(items, list) or not items:
        root.violation("loops", shown(items), 'must be a non-empty list of {"span", "count", ...}')
        return
    for i, item in enumerate(items):
        if not isinstance(item, dict):
            root.violation(f"loops[{i}]", shown(item), "must be an object")
            continue
        c["loops"].append(_read_loop(_Object(item, f"{root.field('loops')}[{i}]", root.v)))


# The rules (src/config/validate.cpp), on the config as read: fields named as the native config names them.


def _is_moe_layer(c: dict, layer: int) -> bool:
    m = c.get("moe")
    if m is None or m["num_experts"] <= 0:
        return False
    if isinstance(m["layers"], list):
        return layer + 1 in c["moe_set"]
    f, n, p = m["layers"]["first_dense"], m["layers"]["every"], m["layers"]["phase"]
    return layer >= f and n > 0 and layer % n == p


def _check_attention(c: dict, v: Violations) -> None:
    a = c["attention"]
    v.range("attention.num_heads", a["num_heads"], 1, MAX_WIDTH)
    if a["type"] == "gqa":
        v.range("attention.num_kv_heads", a["num_kv_heads"], 1, MAX_WIDTH)
        v.range("attention.head_dim", a["head_dim"], 1, MAX_WIDTH)
        if a["num_heads"] > 0 and a["num_kv_heads"] > 0 and a["num_heads"] % a["num_kv_heads"] != 0:
            v.add("attention.num_kv_heads", str(a["num_kv_heads"]),
                  f"must divide attention.num_heads = {a['num_heads']}")
        if a["qk_bias"] and a["qkv_bias"]:
            v.add("attention.qk_bias", "true", "not with attention.qkv_bias, which biases q and k already")
    else:
        v.range("attention.q_lora_rank", a["q_lora_rank"], 0, MAX_WIDTH)
        v.range("attention.kv_lora_rank", a["kv_lora_rank"], 1, MAX_WIDTH)
        v.range("attention.qk_nope_head_dim", a["qk_nope_head_dim"], 0, MAX_WIDTH)
        v.range("attention.qk_rope_head_dim", a["qk_rope_head_dim"], 0, MAX_WIDTH)
        v.range("attention.v_head_dim", a["v_head_dim"], 1, MAX_WIDTH)
        if a["qkv_bias"]:
            v.add("attention.qkv_bias", "true", 'not supported with attention.type = "mla"')
        if a["qk_bias"]:
            v.add("attention.qk_bias", "true", 'not supported with attention.type = "mla"')
        if a["qk_norm"] != "none":
            v.add("attention.qk_norm", f'"{a["qk_norm"]}"', 'must be "none" with attention.type = "mla"')
        nope, rope = a["qk_nope_head_dim"], a["qk_rope_head_dim"]
        if nope + rope <= 0 and nope >= 0 and rope >= 0:
            v.add("attention.qk_nope_head_dim + attention.qk_rope_head_dim", "0", "must be positive")
    pattern = a["pattern"]
    if not pattern:
        v.add("attention.pattern", "[]", "must list at least one layer kind")
    elif len(pattern) > c["num_layers"] > 0:
        v.add("", "", f"attention.pattern has {len(pattern)} entries: must have at most num_layers = "
              f"{c['num_layers']}")
    for kind, key in (("sliding", "window"), ("chunked", "chunk")):
        if kind in pattern:
            v.range(f"attention.{key}", a[key], 1, MAX_CONTEXT)
        elif a[key] != 0:
            v.add(f"attention.{key}", str(a[key]), f'must be 0 when attention.pattern has no "{kind}" layer')


def _check_routing(c: dict, v: Violations) -> None:
    m = c["moe"]
    form, score = m["router_form"], m["router_score"]
    if form == "plain" and score != "softmax":
        v.add("moe.router_form", '"plain"',
              'routes softmax scores only: with moe.router_score "sigmoid" use "deepseek" or "llama4"')
    if form == "deepseek" and score == "softmax" and not m["router_bias"]:
        v.add("moe.router_form", '"deepseek"',
              'without moe.router_bias, softmax scores route as "plain" (the same choice and weights): say "plain"')
    if form == "llama4" and (score != "sigmoid" or m["router_bias"] or m["renormalize"]):
        v.add("moe.router_form", '"llama4"', 'needs moe.router_score "sigmoid", moe.router_bias false and '
              f'moe.renormalize false (Llama 4\'s router; they are "{score}", {str(m["router_bias"]).lower()}, '
              f'{str(m["renormalize"]).lower()})')
    clamp = m["clamped_swiglu"]
    if clamp is None:
        return
    for key in ("alpha", "limit"):
        if not (math.isfinite(clamp[key]) and clamp[key] > 0):
            v.add(f"moe.clamped_swiglu.{key}", _number(clamp[key]), "must be a finite number above 0")
    if c["ffn"]["type"] != "gated":
        v.add("moe.clamped_swiglu", "", 'needs ffn.type "gated" (a SwiGLU to clamp)')


def _check_moe(c: dict, v: Violations) -> None:
    m, n = c["moe"], c["num_layers"]
    v.range("moe.num_experts", m["num_experts"], 1, MAX_EXPERTS)
    v.range("moe.top_k", m["top_k"], 1, MAX_EXPERTS)
    if m["num_experts"] > 0 and m["top_k"] > m["num_experts"]:
        v.add("moe.top_k", str(m["top_k"]), f"must be at most moe.num_experts = {m['num_experts']}")
    v.range("moe.expert_width", m["expert_width"], 1, MAX_WIDTH)
    v.range("moe.num_shared_experts", m["num_shared_experts"], 0, MAX_EXPERTS)
    if m["num_shared_experts"] > 0:
        v.range("moe.shared_width", m["shared_width"], 1, MAX_WIDTH)
    elif m["shared_width"] != 0 or m["shared_gate"]:
        v.add("moe.shared_width", f"{m['shared_width']}, moe.shared_gate = {str(m['shared_gate']).lower()}",
              "must be 0 and false without shared experts")
    _check_routing(c, v)
    if isinstance(m["layers"], list):
        seen: set[int] = set()
        for i, layer in enumerate(m["layers"]):
            if layer < 1 or layer > n:
                v.add(f"moe.layers[{i}]", str(layer), f"must be a 1-based layer in 1..{n}")
            elif layer in seen:
                v.add(f"moe.layers[{i}]", str(layer), "listed twice")
            else:
                seen.add(layer)
    else:
        rule = m["layers"]
        v.range("moe.layers.first_dense", rule["first_dense"], 0, max(n - 1, 0))
        v.range("moe.layers.every", rule["every"], 1, max(n, 1))
        if rule["every"] > 0:
            v.range("moe.layers.phase", rule["phase"], 0, rule["every"] - 1)


def _projection(c: dict, target: str) -> tuple[int, int]:
    a, h = c["attention"], c["hidden_size"]
    q = a["num_heads"] * a.get("head_dim", 0)
    kv = a.get("num_kv_heads", 0) * a.get("head_dim", 0)
    w = c["ffn"]["dense_width"]
    return {"q": (h, q), "k": (h, kv), "v": (h, kv), "o": (q, h), "gate": (h, w), "up": (h, w), "down": (w, h)}[target]


def _check_lora(c: dict, loop: dict, name: str, v: Violations) -> None:
    rank, targets = loop["lora_rank"], loop["lora_targets"]
    v.range(f"{name}.lora_rank", rank, 0, MAX_WIDTH)
    if rank > 0 and not targets:
        v.add(f"{name}.lora_targets", "[]", f"must name the projections a rank of {rank} adapts")
    if rank == 0 and targets:
        v.add(f"{name}.lora_rank", "0", "must be positive, since lora_targets are given")
    seen: set[str] = set()
    for i, t in enumerate(targets):
        field, word = f"{name}.lora_targets[{i}]", f'"{t}"'
        ffn = t in ("gate", "up", "down")
        if t in seen:
            v.add(field, word, "listed twice")
        elif not ffn and c["attention"]["type"] == "mla":
            v.add(field, word, 'not with attention.type = "mla" (its projections are not q, k, v)')
        elif ffn and t == "gate" and c["ffn"]["type"] == "plain":
            v.add(field, word, "a plain FFN has no gate")
        elif rank > 0:
            first = loop["first"] - 1  # smelt's loop stops at once on a negative first layer
            last = min(loop["last"], c["num_layers"])
            moe = ffn and first >= 0 and any(_is_moe_layer(c, x) for x in range(first, last))
            s_in, s_out = _projection(c, t)
            if moe:
                v.add(field, word, "needs dense layers: the span holds MoE layers, whose experts this LoRA does not "
                      "adapt")
            elif rank > min(s_in, s_out):
                v.add(f"{name}.lora_rank", str(rank), f"must be at most {min(s_in, s_out)}, the smaller side of {t} "
                      f"({s_in} -> {s_out})")
        seen.add(t)


def _number(x: float) -> str:
    """A double as fmt's "{}" writes it (shortest round trip)."""
    if math.isnan(x):
        return "nan"
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    r = repr(x)
    return r[:-2] if r.endswith(".0") else r


def _check_span(c: dict, loop: dict, name: str, v: Violations) -> None:
    n = c["num_layers"]
    v.range(f"{name}.count", loop["count"], 1, MAX_LOOPS)
    s = loop["residual_scale"]
    if not (math.isfinite(s) and s > 0):
        v.add(f"{name}.residual_scale", _number(s), "must be a positive finite number")
    first, last, count = loop["first"], loop["last"], loop["count"]
    if first == 0 and last == 0 and count == 1:
        return
    span = f"{first}-{last}"
    if first < 1 or last > n or first > last:
        v.add(f"{name}.span", f'"{span}"', f"must satisfy 1 <= first <= last <= num_layers = {n}")
    v.range(f"{name}.backprop_passes", loop["backprop_passes"], 0, max(count, 0))
    _check_lora(c, loop, name, v)
    keep = "[" + ", ".join(_number(x) for x in loop["kv_keep"]) + "]"
    active = loop["kv_policy"] == "active"
    if active and len(loop["kv_keep"]) != count:
        v.add(f"{name}.kv_keep", keep, f'must give one fraction per pass (count = {count}) with kv_policy = "active"')
    if not active and loop["kv_keep"]:
        v.add(f"{name}.kv_keep", keep, 'only with kv_policy = "active"')
    for i, x in enumerate(loop["kv_keep"]):
        if not 0 < x <= 1:
            v.add(f"{name}.kv_keep[{i}]", _number(x), "must be in (0, 1]")
    if loop["norm_after"] and loop["norm_each_pass"]:
        v.add(f"{name}.norm_after", "true", "not with norm_each_pass, which norms after every pass already")
    for key in ("norm_each_pass", "exit_gate"):
        if loop[key] and last != n:
            v.add(f"{name}.{key}", "true", f'needs a span that ends at the last layer ({n}), not "{span}"')


def _check_dense_width(c: dict, v: Violations) -> None:
    m, n = c.get("moe"), c["num_layers"]
    if m is not None and m["num_experts"] > 0 and isinstance(m["layers"], dict) and m["layers"]["every"] >= 1 and (
            n >= 2):
        rule = m["layers"]
        any_dense = rule["first_dense"] > 0 or rule["every"] >= 2 or rule["phase"] != 0
    else:
        any_dense = any(not _is_moe_layer(c, i) for i in range(n))
    width = c["ffn"]["dense_width"]
    if any_dense or width != 0:
        if any_dense and width <= 0:
            v.add("ffn.dense_width", str(width), "must be positive, since some layers are dense")
        else:
            v.range("ffn.dense_width", width, 0, MAX_WIDTH)


def rules(c: dict) -> list[tuple[str, str, str]]:
    """validate_fields: every rule the fields of a read config break, named as in the native config."""
    m = c.get("moe")
    c = dict(c, moe_set=set(m["layers"]) if m is not None and isinstance(m["layers"], list) else set())
    v = Violations()
    v.range("vocab_size", c["vocab_size"], 1, MAX_WIDTH)
    v.range("num_layers", c["num_layers"], 1, MAX_LAYERS)
    v.range("hidden_size", c["hidden_size"], 1, MAX_WIDTH)
    v.range("context_length", c["context_length"], 1, MAX_CONTEXT)
    v.range("kv_cache_bytes", c["kv_cache_bytes"], 1, MAX_KV_BYTES)
    v.range("mtp_modules", c["mtp_modules"], 0, MAX_LAYERS)
    _check_attention(c, v)
    if m is not None and (m["num_experts"] > 0 or m["top_k"] != 0 or m["expert_width"] != 0):
        _check_moe(c, v)
    one = len(c["loops"]) == 1
    for i, loop in enumerate(c["loops"]):
        _check_span(c, loop, "loop" if one else f"loops[{i}]", v)
    for i in range(1, len(c["loops"])):
        a, b = c["loops"][i - 1], c["loops"][i]
        if a["first"] > 0 and b["first"] > 0 and b["first"] <= a["last"]:
            v.add(f"loops[{i}].span", f'"{b["first"]}-{b["last"]}"', f'must start after loops[{i - 1}].span '
                  f'"{a["first"]}-{a["last"]}" ends: spans are disjoint and in layer order')
    if 0 < c["num_layers"] <= MAX_LAYERS:
        _check_dense_width(c, v)
    return v.list


def _covers(reported: str, field: str) -> bool:
    return bool(reported) and (field == reported or (field.startswith(reported) and field[len(reported):][:1] == "."))


def _canonical(c: dict) -> dict:
    """The config as smelt's writer lays it out (config_json): what ``smelt.Config.to_dict()`` gives."""
    out: dict[str, Any] = {"schema_version": 1}
    for key in ("name", "vocab_size", "tie_embeddings", "num_layers", "hidden_size", "norm"):
        out[key] = c[key]
    if c["norm_placement"] != "pre":
        out["norm_placement"] = c["norm_placement"]
    out["context_length"], out["kv_cache_bytes"] = c["context_length"], c["kv_cache_bytes"]
    a = dict(c["attention"])
    if not a["qk_bias"]:
        del a["qk_bias"]
    out["attention"] = a
    out["ffn"] = dict(c["ffn"])
    if c.get("moe") is not None and c["moe"]["num_experts"] > 0:
        m = dict(c["moe"])
        # the routing choices only where they differ from their defaults, before the layers (config_json)
        layers, form, renormalize, clamp = m.pop("layers"), m.pop("router_form"), m.pop("renormalize"), \
            m.pop("clamped_swiglu")
        if form != default_router_form(m):
            m["router_form"] = form
        if renormalize != default_renormalize(form):
            m["renormalize"] = renormalize
        if clamp is not None:
            m["clamped_swiglu"] = clamp
        m["layers"] = layers
        out["moe"] = m
    spans = [_span_json(loop) for loop in c["loops"]]
    if len(spans) == 1 and c["loops"][0]["first"] > 0:
        out["loop"] = spans[0]
    elif len(spans) > 1:
        out["loops"] = spans
    out["mtp_modules"] = c["mtp_modules"]
    return out


def _span_json(loop: dict) -> dict:
    s: dict[str, Any] = {"span": f"{loop['first']}-{loop['last']}", "count": loop["count"],
                         "residual_scale": loop["residual_scale"]}
    for key in ("norm_each_pass", "exit_gate"):
        if loop[key]:
            s[key] = True
    if loop["injection"] != "none":
        s["injection"] = loop["injection"]
    for key in ("injection_bias", "norm_after"):
        if loop[key]:
            s[key] = True
    if loop["backprop_passes"] != 0:
        s["backprop_passes"] = loop["backprop_passes"]
    if loop["kv_policy"] != "per_visit":
        s["kv_policy"] = loop["kv_policy"]
    if loop["kv_keep"]:
        s["kv_keep"] = loop["kv_keep"]
    if loop["lora_rank"] != 0 or loop["lora_targets"]:
        s["lora_rank"], s["lora_targets"] = loop["lora_rank"], loop["lora_targets"]
    return s


def read(native: Any, path: str = "smelt") -> dict:
    """The native config ``native`` (a dict, as config.json holds it under ``path``) as smelt reads it: the
    canonical dict, or NativeConfigError with smelt's violations, fields named ``path.<field>``."""
    return _canonical(resolve(native, path))


def resolve(native: Any, path: str = "smelt") -> dict:
    """``read``, but every field present with its default resolved (the canonical dict leaves defaults out), the
    loops as one list ``loops`` of spans with 1-based ``first`` and ``last``: what model_config.py types."""
    if not isinstance(native, dict):
        raise NativeConfigError([("", "", f"config.json: {path or 'top level'} must be a JSON object")])
    v = Violations()
    root = _Object(native, path, v)
    version = root.integer("schema_version")
    if not v.list and version != 1:
        raise NativeConfigError([(root.field("schema_version"), str(version), "must be 1")])
    c: dict[str, Any] = {"name": root.string("name", ""), "vocab_size": root.integer("vocab_size")}
    c["tie_embeddings"] = root.boolean("tie_embeddings", False)
    c["num_layers"] = root.integer("num_layers")
    c["hidden_size"] = root.integer("hidden_size")
    c["norm"] = root.word("norm", "rmsnorm", "norm")
    c["norm_placement"] = root.word("norm_placement", "pre", "norm_placement")
    c["context_length"] = root.integer("context_length", 4096)
    c["kv_cache_bytes"] = root.integer("kv_cache_bytes", 2)
    c["attention"] = {"type": "gqa", "num_heads": 0, "num_kv_heads": 0, "head_dim": 0, "qkv_bias": False,
                      "qk_bias": False, "out_bias": False, "qk_norm": "none", "sinks": False, "pattern": ["full"],
                      "window": 0, "chunk": 0}
    a = root.object("attention")
    if a is not None:
        _read_attention(a, c)
    c["ffn"] = {"type": "gated", "bias": False, "dense_width": 0}
    f = root.object("ffn", True)
    if f is not None:
        c["ffn"] = {"type": f.word("type", "gated", "ffn_type"), "bias": f.boolean("bias", False),
                    "dense_width": f.integer("dense_width", 0)}
        f.reject_unknown_keys()
    m = root.object("moe", True)
    if m is not None:
        _read_moe(m, c)
    _read_loops(root, c)
    c["mtp_modules"] = root.integer("mtp_modules", 0)
    root.reject_unknown_keys()
    if v.list:
        for rule in rules(c):
            if not any(_covers(r[0], root.field(rule[0]) if rule[0] else rule[0]) for r in v.list):
                v.add(*rule)
    else:
        for rule in rules(c):
            v.add(*rule)
    if v.list:
        raise NativeConfigError([_under(x, path) for x in v.list])
    return c


def _under(v: tuple[str, str, str], path: str) -> tuple[str, str, str]:
    """A rule names fields as the native config does ("loop.span"); here they are under ``path``."""
    field, value, rule = v
    if not field or not path or field.startswith(path + "."):
        return v
    return ", ".join(f"{path}.{part}" for part in field.split(", ")), value, rule
