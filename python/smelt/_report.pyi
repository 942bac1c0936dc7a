# Stubs of the typed reports (python/smelt/_report.py), so that editors
# complete the documented keys (docs/json-schema.md). Every other key reads as Any.
from typing import Any, Iterator

class Node:
    def __init__(self, data: dict[str, Any]) -> None: ...
    def __getattr__(self, name: str) -> Any: ...
    def __getitem__(self, key: str) -> Any: ...
    def __contains__(self, key: object) -> bool: ...
    def __iter__(self) -> Iterator[str]: ...
    def keys(self) -> list[str]: ...
    def to_dict(self) -> dict[str, Any]: ...
    def to_json(self) -> str: ...

class ParamTerms(Node):
    embedding: int
    lm_head: int
    attention: int
    norms: int
    router: int
    experts: int
    shared_experts: int
    dense_ffn: int
    loop_extras: int

class Params(Node):
    """Parameter counts, in elements."""

    total: int
    embedding: int
    lm_head: int
    non_embedding: int
    active: int
    active_non_embedding: int
    mtp: int
    terms: ParamTerms

class FlopTerms(Node):
    attention_qkv: float
    attention_out: float
    attention_scores: float
    attention_values: float
    router: float
    experts: float
    shared_experts: float
    dense_ffn: float
    elementwise: float
    loop_extras: float
    lm_head: float
    mtp: float

class Flops(Node):
    """FLOPs per token (forward = 2 x multiply-accumulates; training = 3 x (forward + mtp))."""

    forward: float
    forward_non_embedding: float
    training: float
    terms: FlopTerms

class KvCache(Node):
    """KV cache: bytes (elements) per token of context, bytes of one full sequence."""

    bytes_per_token: float
    elements_per_token: float
    bytes_at_context: int
    element_bytes: int

class Sparsity(Node):
    """The SMELT paper's S = 1 - (F / F0) N0 / N and the reference (F0, N0) it was measured against."""

    S: float
    reference: str
    reference_model: str | None
    flops_forward_non_embedding: float
    params_non_embedding: int
    reference_flops_forward_non_embedding: float
    reference_params_non_embedding: int

class _LayerCost(Node):
    """What one layer costs: the fields a layer and a run of layers share."""

    kind: str
    attention: str
    visits: int
    params: Node
    active_params: int
    flops_per_visit: Node
    kv_elements_per_token_held: int
    kv_tokens_held: int
    kv_bytes_per_visit: float

class Layer(_LayerCost):
    layer: int

class LayerRun(_LayerCost):
    first: int
    last: int
    step: int
    count: int
    @property
    def layer_numbers(self) -> range: ...

class CountReport(Node):
    schema_version: int
    kind: str
    model: str
    convention: str
    context_length: int
    layers_stored: int
    layers_executed: int
    params: Params
    flops: Flops
    flops_per_token: Flops
    kv: KvCache
    kv_cache: KvCache
    sparsity: Sparsity
    layer_runs: list[LayerRun]
    layers: list[Layer]  # with smelt.count(..., every_layer=True)

class Config(Node):
    name: str
    num_layers: int
    hidden_size: int
    vocab_size: int
    context_length: int
    def __init__(self, text: str) -> None: ...

class MatchResult(Node):
    schema_version: int
    kind: str
    baseline: Node
    recipe: Node
    space_size: int
    evaluated: int
    within_tolerance: bool
    why: list[str]
    relaxations: list[Node]
    best: Node
    alternatives: list[Node]
    @property
    def best_config(self) -> Config: ...

class SweepReport(Node):
    rows: list[Node]

class MemoryReport(Node):
    total: int
    worst_rank: Node
    per_stage: list[Node]
    layout: Node
    fraction_of_device: float

class Laws(Node):
    laws: list[Node]

class FrontierReport(Node):
    reference: str
    sparsity: float
    laws: list[Node]
    budgets: list[Node]
