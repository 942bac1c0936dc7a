"""smelt's reference model in one flat package, laid out as transformers ships a model's own code
(docs/reference-model.md, docs/training.md).

``configuration_smelt.py`` (``SmeltConfig``) and ``modeling_smelt.py`` (``SmeltForCausalLM``) are the two files
transformers loads; every other module here is one they import relatively, so transformers' own code-shipping
(``custom_object_save``) copies the closure beside a checkpoint's config.json and ``from_pretrained(...,
trust_remote_code=True)`` runs it without smelt installed. None of them imports smelt's core outside a guarded
``try``; only those two import transformers, so the modules of the model itself need torch alone:

- ``reference_model``: ``ReferenceModel`` (embedding, the layers on the loop schedule, final norm, head) and its
  ``Block``; ``attention`` (GQA and the masks), ``mla``, ``moe`` (``FFN``, the router, ``MoE``), ``mtp``, ``lora``,
  ``common`` (norms, RoPE), ``kv_cache`` (``KVCache``, ``generate``);
- ``native_config``: smelt's reader of the native config in pure Python, and the routing choices it resolves;
- ``smelt_cache``, ``loss``, ``checkpoint``: the transformers cache, the training losses and the safetensors
  header reader of ``SmeltForCausalLM``; ``args``: the integer checks.

``smelt.torch`` builds the model of any config smelt reads (``build_model``) and checks it against smelt's counts;
``smelt.hf`` registers the two classes, saves configs and starts from a released checkpoint.
"""
