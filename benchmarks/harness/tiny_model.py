"""A tiny chat model built from nothing: for pipeline checks of the LLM agent, never for scores.

    python -m benchmarks.harness.tiny_model /tmp/tiny-chat-model

Trains a small byte-level BPE tokenizer on WebShop-like text (the prompts, actions and a
few pages), gives it a chat template, and saves it with a randomly initialised two-layer
Llama. Nothing is downloaded. The model's answers are noise; what it proves is that the
LLM agent loads a local model by path, applies its chat template, generates, parses and
acts through the runner.
"""

from __future__ import annotations

import argparse
from pathlib import Path

CHAT_TEMPLATE = (
    "{% for message in messages %}<|{{ message['role'] }}|>{{ message['content'] }}<|end|>{% endfor %}"
    "{% if add_generation_prompt %}<|assistant|>{% endif %}"
)
SPECIAL_TOKENS = ["<|pad|>", "<|end|>", "<|system|>", "<|user|>", "<|assistant|>"]


def _training_text() -> list[str]:
    from shared_prompts import PromptConfig, format_model_output, system_prompt, turn_prompt

    pages = [
        "WebShop [SEP] Instruction: [SEP] i need red running shoes [SEP] Search",
        "Back to Search [SEP] Page 1 (Total results: 50) [SEP] Next > [SEP] B0EXAMPLE1 [SEP] Trail Shoe",
        "Back to Search [SEP] < Prev [SEP] size [SEP] 9 [SEP] 10 [SEP] Price: $40.0 [SEP] Buy Now",
    ]
    actions = [
        "search[red running shoes]",
        "click[b0example1]",
        "click[9]",
        "click[buy now]",
        "click[< prev]",
    ]
    texts = [system_prompt(PromptConfig(few_shot=True)), *pages]
    texts += [turn_prompt("i need red running shoes", page, actions, 10) for page in pages]
    texts += [format_model_output(action, "choose") for action in actions]
    return texts


def build_tiny_chat_model(path: str | Path, seed: int = 0) -> Path:
    """Writes a tiny random Llama and its locally trained tokenizer to ``path``.

    Args:
        path: The folder to create (or overwrite files in).
        seed: Seeds the weights.

    Returns:
        The folder, loadable with ``AutoModelForCausalLM.from_pretrained`` and
        ``AutoTokenizer.from_pretrained``.
    """
    import torch
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    path = Path(path)
    path.mkdir(parents=True, exist_ok=True)
    core = Tokenizer(models.BPE())
    core.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    core.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=600,
        special_tokens=SPECIAL_TOKENS,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    core.train_from_iterator(_training_text(), trainer=trainer)
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=core,
        pad_token="<|pad|>",
        eos_token="<|end|>",
        bos_token="<|assistant|>",
        chat_template=CHAT_TEMPLATE,
        model_max_length=2048,
    )
    tokenizer.save_pretrained(path)

    torch.manual_seed(seed)
    config = LlamaConfig(
        vocab_size=len(tokenizer),
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=2,
        num_key_value_heads=2,
        max_position_embeddings=2048,
        pad_token_id=tokenizer.pad_token_id,
        eos_token_id=tokenizer.eos_token_id,
        bos_token_id=tokenizer.bos_token_id,
    )
    LlamaForCausalLM(config).save_pretrained(path)
    return path


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("path", type=Path, help="folder to write the model and tokenizer to")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    print(build_tiny_chat_model(args.path, args.seed))


if __name__ == "__main__":
    main()
