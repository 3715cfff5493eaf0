"""A small policy built from scratch: a BPE tokenizer trained on the shop's text, and a small Llama.

Nothing is downloaded. The tokenizer lower-cases (the env's clicks are case-insensitive),
is byte-level (any text encodes) and holds every product id of the catalogue as one
token, so clicking a product is one decision rather than ten characters to spell.

Example:
    >>> tokenizer = train_tokenizer(["i need red shoes", "click[buy now]"] * 50, vocab_size=300,
    ...                             whole_tokens=["b0example1"])
    >>> tokenizer.decode(tokenizer("Click[B0EXAMPLE1]")["input_ids"])
    'click[b0example1]'
    >>> len(tokenizer("b0example1")["input_ids"])
    1
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from shared_prompts import FEW_SHOT_EXAMPLE, PromptConfig, system_prompt

SPECIAL_TOKENS = ("<|pad|>", "<|system|>", "<|user|>", "<|assistant|>", "<|end|>")
CHAT_TEMPLATE = (
    "{% for message in messages %}<|{{ message['role'] }}|>{{ message['content'] }}<|end|>{% endfor %}"
    "{% if add_generation_prompt %}<|assistant|>{% endif %}"
)


def train_tokenizer(texts: Iterable[str], vocab_size: int = 3000, whole_tokens: Sequence[str] = ()) -> Any:
    """A lower-casing byte-level BPE tokenizer with a chat template (``<|end|>`` ends a turn)."""
    from tokenizers import AddedToken, Tokenizer, decoders, models, normalizers, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tokenizer = Tokenizer(models.BPE())
    tokenizer.normalizer = normalizers.Lowercase()
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=list(SPECIAL_TOKENS),
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tokenizer.train_from_iterator(texts, trainer)
    tokenizer.add_tokens([AddedToken(token.lower(), normalized=True) for token in ("[sep]", *whole_tokens)])
    return PreTrainedTokenizerFast(
        tokenizer_object=tokenizer,
        pad_token="<|pad|>",
        eos_token="<|end|>",
        additional_special_tokens=list(SPECIAL_TOKENS[1:4]),
        chat_template=CHAT_TEMPLATE,
        model_max_length=4096,
    )


def shop_texts(env: Any, prompt_config: PromptConfig | None = None) -> list[str]:
    """Tokenizer training text: every product's title, options and price, the split's
    instructions, and the prompt templates (pass a train-split env: no test instructions)."""
    unwrapped = env.unwrapped
    texts = [system_prompt(prompt_config or PromptConfig()), FEW_SHOT_EXAMPLE]
    for product in unwrapped.catalog:
        texts.append(f"{product.asin} [SEP] {product.title} [SEP] {product.price}")
        texts.extend(f"{name} [SEP] {' [SEP] '.join(values)}" for name, values in product.options.items())
    goals = unwrapped.all_goals
    texts.extend(goals[i].instruction_text for i in unwrapped.goal_indices)
    texts.append(
        "Instruction: Previous actions: | Observation: Available actions: - search[<query>] "
        "click[back to search] click[next >] click[< prev] click[buy now] click[description] "
        "click[features] click[reviews] <action> </action> Steps left: Back to Search [SEP] "
        "Page 1 (Total results: 50) [SEP] Next > [SEP] Price: $ Rating: N.A. [SEP] Buy Now"
    )
    return texts


def product_ids(env: Any) -> list[str]:
    """Every product id of the env's catalogue (lower case, as the env's clicks use them)."""
    return [product.asin.lower() for product in env.unwrapped.catalog]


def build_tiny_model(
    tokenizer: Any,
    hidden_size: int = 128,
    layers: int = 2,
    heads: int = 4,
    max_positions: int = 1024,
    product_tokens: Sequence[str] = (),
    copy_head: bool = True,
) -> Any:
    """A randomly initialised small Llama whose vocabulary is the tokenizer's.

    The embeddings of ``product_tokens`` (the whole-token product ids) share one random
    direction on top of their own: each id is seen too rarely for a small model to learn
    that it is a product, and without that common feature it cannot learn to find the
    products on a page and copy one into its answer.

    With ``copy_head``, the first attention head of the first layer starts as a copy head:
    its value/output maps project each token onto a random subspace and back, so whatever
    it attends to is written into the residual stream and, through the tied embeddings,
    raises that same token's logit. Training then only has to learn *where* to look; a
    model this small, trained for minutes, does not discover copying on its own.
    """
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    if hidden_size % heads:
        raise ValueError(f"tiny_hidden_size ({hidden_size}) must be a multiple of tiny_heads ({heads})")
    config = LlamaConfig(
        vocab_size=len(tokenizer),
        hidden_size=hidden_size,
        intermediate_size=hidden_size * 3,
        num_hidden_layers=layers,
        num_attention_heads=heads,
        num_key_value_heads=heads,
        max_position_embeddings=max_positions,
        tie_word_embeddings=True,
        pad_token_id=tokenizer.pad_token_id,
        eos_token_id=tokenizer.eos_token_id,
        bos_token_id=None,
    )
    model = LlamaForCausalLM(config)
    if copy_head:
        blocks: Any = model.model.layers
        _make_copy_head(blocks[0].self_attn, hidden_size, hidden_size // heads)
    if product_tokens:
        ids = tokenizer.convert_tokens_to_ids([token.lower() for token in product_tokens])
        embeddings: Any = model.get_input_embeddings().weight
        with torch.no_grad():
            shared = torch.randn(hidden_size) * config.initializer_range
            embeddings[ids] += shared
    return model


def _make_copy_head(attention: Any, hidden_size: int, head_dim: int) -> None:
    """Head 0 of ``attention``: value = a random orthonormal projection P, output = P^T."""
    import torch

    with torch.no_grad():
        projection = torch.linalg.qr(torch.randn(hidden_size, head_dim))[0].T  # (head_dim, hidden)
        attention.v_proj.weight[:head_dim] = projection
        attention.o_proj.weight[:, :head_dim] = projection.T
