"""Sizes for lesson figures: what each layer type keeps per token, and MoE parameter counts.

All cache/state functions count bytes for ``layers`` layers, at
``bytes_per_value`` bytes per stored number (2 for bf16). Set bytes_per_value=1
to count values instead of bytes.

    standard attention  2 * H_kv * d_head per token    a K and a V vector per KV head
    MLA                 (d_latent + d_rope) per token  one compressed latent shared by all heads
    KDA                 H * d_k * d_v in total          a fixed matrix per head, whatever the length
"""
import numbers

# K3's backbone as the course's sources describe it: 23 blocks of three KDA layers and one
# Gated MLA layer, then one more Gated MLA layer on top. 96 is the head count Lesson 3's cache
# diagram draws. Head and latent dimensions are not given by the sources, so none are fixed here.
K3_BLOCKS = 23
K3_KDA_LAYERS = 3 * K3_BLOCKS
K3_MLA_LAYERS = K3_BLOCKS + 1
K3_LAYERS = K3_KDA_LAYERS + K3_MLA_LAYERS
K3_HEADS = 96


def _counts(**values):
    """Raise ValueError unless every value is a non-negative int."""
    for name, val in values.items():
        if isinstance(val, bool) or not isinstance(val, numbers.Integral) or val < 0:
            raise ValueError(f"{name} must be a non-negative integer; got {val!r}")


def _bytes(bytes_per_value):
    """Return bytes_per_value if it is a positive number, else raise ValueError."""
    if isinstance(bytes_per_value, bool) or not isinstance(bytes_per_value, numbers.Real) \
            or not 0 < bytes_per_value < float("inf"):
        raise ValueError(f"bytes_per_value must be a positive number; got {bytes_per_value!r}")
    return bytes_per_value


def attention_cache_per_token(num_kv_heads, head_dim, *, layers=1, bytes_per_value=2):
    """Return the K/V cache bytes one token adds: 2 * num_kv_heads * head_dim * layers * bytes."""
    _counts(num_kv_heads=num_kv_heads, head_dim=head_dim, layers=layers)
    return 2 * num_kv_heads * head_dim * layers * _bytes(bytes_per_value)


def attention_cache(seq_len, num_kv_heads, head_dim, *, layers=1, bytes_per_value=2):
    """Return the K/V cache bytes for a whole sequence: seq_len times the per-token size."""
    _counts(seq_len=seq_len)
    return seq_len * attention_cache_per_token(
        num_kv_heads, head_dim, layers=layers, bytes_per_value=bytes_per_value)


def mla_cache_per_token(latent_dim, rope_dim=0, *, layers=1, bytes_per_value=2):
    """Return the MLA cache bytes one token adds: (latent_dim + rope_dim) * layers * bytes."""
    _counts(latent_dim=latent_dim, rope_dim=rope_dim, layers=layers)
    return (latent_dim + rope_dim) * layers * _bytes(bytes_per_value)


def mla_cache(seq_len, latent_dim, rope_dim=0, *, layers=1, bytes_per_value=2):
    """Return the MLA cache bytes for a whole sequence: seq_len times the per-token size."""
    _counts(seq_len=seq_len)
    return seq_len * mla_cache_per_token(
        latent_dim, rope_dim, layers=layers, bytes_per_value=bytes_per_value)


def kda_state(num_heads, d_k, d_v, *, layers=1, bytes_per_value=2):
    """Return the KDA state bytes: num_heads * d_k * d_v * layers * bytes, independent of length."""
    _counts(num_heads=num_heads, d_k=d_k, d_v=d_v, layers=layers)
    return num_heads * d_k * d_v * layers * _bytes(bytes_per_value)


def kda_state_per_token(seq_len, num_heads, d_k, d_v, *, layers=1, bytes_per_value=2):
    """Return the KDA state bytes shared out over seq_len tokens (shrinks as 1/seq_len)."""
    _counts(seq_len=seq_len)
    if seq_len == 0:
        raise ValueError("seq_len must be >= 1 to share the state over tokens")
    return kda_state(num_heads, d_k, d_v, layers=layers, bytes_per_value=bytes_per_value) / seq_len


def expert_params(d_model, d_ff, *, gated=True):
    """Return the weights in one feed-forward expert: 3 * d_model * d_ff if gated (SwiGLU), else 2 *."""
    _counts(d_model=d_model, d_ff=d_ff)
    return (3 if gated else 2) * d_model * d_ff


def moe_params(d_model, d_ff, num_experts, top_k, *, shared_experts=0, gated=True, router=True):
    """Return {per_expert, router, total, active, active_fraction} for one mixture-of-experts layer.

    total counts every routed and shared expert plus the router (d_model *
    num_experts); active counts what one token touches: top_k routed experts,
    the shared experts and the router.
    """
    _counts(num_experts=num_experts, top_k=top_k, shared_experts=shared_experts)
    if top_k > num_experts:
        raise ValueError(f"top_k must be <= num_experts ({num_experts}); got {top_k}")
    per = expert_params(d_model, d_ff, gated=gated)
    route = d_model * num_experts if router else 0
    total = (num_experts + shared_experts) * per + route
    active = (top_k + shared_experts) * per + route
    return {"per_expert": per, "router": route, "total": total, "active": active,
            "active_fraction": active / total if total else 0.0}


def cache_comparison(seq_lens, *, attention, mla, kda, layers=1, bytes_per_value=2):
    """Return one dict per length with the bytes held by attention, MLA and KDA.

    attention = (num_kv_heads, head_dim), mla = (latent_dim, rope_dim),
    kda = (num_heads, d_k, d_v).
    """
    kw = {"layers": layers, "bytes_per_value": bytes_per_value}
    return [{"seq_len": n,
             "attention": attention_cache(n, *attention, **kw),
             "mla": mla_cache(n, *mla, **kw),
             "kda": kda_state(*kda, **kw)} for n in seq_lens]


def sequence_memory(seq_len, *, heads, head_dim, latent_dim, kda_layers, mla_layers, bytes_per_value=2):
    """Return the bytes one sequence of seq_len tokens holds, by layer type, as exact integers.

    attention: standard attention (a K and a V per head and token) in all kda_layers +
    mla_layers layers; mla: the latent cache of the mla_layers layers; kda: the fixed state of
    the kda_layers layers (d_k = d_v = head_dim); hybrid: mla + kda, the mix K3 uses.
    """
    _counts(bytes_per_value=bytes_per_value)
    attention = attention_cache(seq_len, heads, head_dim, layers=kda_layers + mla_layers,
                                bytes_per_value=bytes_per_value)
    mla = mla_cache(seq_len, latent_dim, layers=mla_layers, bytes_per_value=bytes_per_value)
    kda = kda_state(heads, head_dim, head_dim, layers=kda_layers, bytes_per_value=bytes_per_value)
    return {"seq_len": seq_len, "attention": attention, "mla": mla, "kda": kda, "hybrid": mla + kda}
