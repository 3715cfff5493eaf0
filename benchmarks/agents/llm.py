"""LLM agents: a transformers causal LM (hub name or local folder) or an OpenAI-compatible endpoint.

Both ask the same way, through `shared_prompts`: the system prompt, then per turn the
instruction, the page, the available actions and the steps left; the answer is parsed by
`shared_prompts.parse_model_output`. The last ``history_turns`` turns (prompt and answer)
stay in the conversation, so the model sees what it did just before.

An answer without a readable action is sent to the env as it is (cut to 200 characters):
the env reports it as an invalid action and the step counts, which is what the model
earned. The raw answer of each step is kept in ``last_output`` for the trajectory.

Backends:

* `TransformersChat`: ``AutoModelForCausalLM`` + the tokenizer's chat template; greedy
  (``temperature=0``) or sampled; prompts of all env slots in one left-padded batch.
* `OpenAIChat`: ``POST {base_url}/chat/completions`` with the standard library only
  (a vLLM server, llama.cpp, any OpenAI-compatible service); slots are asked in parallel.
"""

from __future__ import annotations

import json
import os
import time
import urllib.error
import urllib.request
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Protocol

from benchmarks.agents.base import AgentFactory, Info
from shared_prompts import PromptConfig, parse_model_output, system_prompt, turn_prompt

Message = dict[str, str]
UNPARSED_ACTION_CHARS = 200


class ChatBackend(Protocol):
    """Answers conversations (lists of ``{"role", "content"}`` messages)."""

    def complete(self, conversations: Sequence[Sequence[Message]], seed: int | None = None) -> list[str]:
        """One answer per conversation."""


class TransformersChat:
    """A transformers causal LM with its chat template.

    Args:
        model: Hub name or local folder (nothing is downloaded if it is a folder).
        temperature: 0 for greedy decoding, else sampling at this temperature.
        top_p: Nucleus sampling mass (sampling only).
        max_new_tokens: Longest answer.
        device: ``"cpu"``, ``"cuda"``, ... (default: cuda when available).
        dtype: Torch dtype name for the weights (``"float32"``, ``"bfloat16"``, ``"auto"``).
    """

    def __init__(
        self,
        model: str,
        temperature: float = 0.0,
        top_p: float = 1.0,
        max_new_tokens: int = 128,
        device: str | None = None,
        dtype: str = "auto",
    ) -> None:
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer

        if temperature < 0:
            raise ValueError(f"temperature must be >= 0 (0 is greedy), got {temperature}")
        self.device = device or ("cuda" if torch.cuda.is_available() else "cpu")
        self.tokenizer = AutoTokenizer.from_pretrained(model)
        if self.tokenizer.chat_template is None:
            raise ValueError(
                f"the tokenizer of {model!r} has no chat template; use an instruction-tuned model"
            )
        self.tokenizer.padding_side = "left"
        self.tokenizer.truncation_side = "left"
        if self.tokenizer.pad_token is None:
            self.tokenizer.pad_token = self.tokenizer.eos_token
        loaded = AutoModelForCausalLM.from_pretrained(model, dtype=dtype)
        self.model = loaded.to(self.device).eval()  # type: ignore[arg-type]
        self.temperature = temperature
        self.top_p = top_p
        self.max_new_tokens = max_new_tokens
        limit = getattr(self.model.config, "max_position_embeddings", None) or self.tokenizer.model_max_length
        self.max_prompt_tokens = max(16, min(int(limit), 1 << 20) - max_new_tokens)

    def complete(self, conversations: Sequence[Sequence[Message]], seed: int | None = None) -> list[str]:
        import torch

        prompts = [
            self.tokenizer.apply_chat_template(list(c), tokenize=False, add_generation_prompt=True)
            for c in conversations
        ]
        # The chat template already wrote any special tokens the model expects.
        inputs = self.tokenizer(
            prompts,
            return_tensors="pt",
            padding=True,
            truncation=True,
            max_length=self.max_prompt_tokens,
            add_special_tokens=False,
        ).to(self.device)
        sampling: dict[str, Any] = {"do_sample": False}
        if self.temperature > 0:
            sampling = {"do_sample": True, "temperature": self.temperature, "top_p": self.top_p}
            if seed is not None:
                torch.manual_seed(seed)
        with torch.no_grad():
            output = self.model.generate(
                **inputs,
                max_new_tokens=self.max_new_tokens,
                pad_token_id=self.tokenizer.pad_token_id,
                **sampling,
            )
        new_tokens = output[:, inputs["input_ids"].shape[1] :]
        return self.tokenizer.batch_decode(new_tokens, skip_special_tokens=True)


class OpenAIChat:
    """Any OpenAI-compatible chat completions endpoint (vLLM, llama.cpp server, ...).

    Args:
        base_url: Up to and including ``/v1``, e.g. ``http://127.0.0.1:8000/v1``.
        model: The model name the server knows.
        api_key: Bearer token; default ``$OPENAI_API_KEY`` (none sent when unset).
        temperature: Sampling temperature (0 asks for greedy decoding).
        max_tokens: Longest answer.
        timeout: Seconds per request.
        retries: Attempts per request on connection errors and 429 / 5xx answers.
        parallel: Requests in flight at once.
    """

    def __init__(
        self,
        base_url: str,
        model: str,
        api_key: str | None = None,
        temperature: float = 0.0,
        max_tokens: int = 128,
        timeout: float = 60.0,
        retries: int = 3,
        parallel: int = 8,
    ) -> None:
        if not base_url.startswith(("http://", "https://")):
            raise ValueError(f"base_url must start with http:// or https://, got {base_url!r}")
        self.url = base_url.rstrip("/") + "/chat/completions"
        self.model = model
        self.api_key = api_key if api_key is not None else os.environ.get("OPENAI_API_KEY")
        self.temperature = temperature
        self.max_tokens = max_tokens
        self.timeout = timeout
        self.retries = max(1, retries)
        self.parallel = max(1, parallel)

    def _post(self, messages: Sequence[Message], seed: int | None) -> str:
        body: dict[str, Any] = {
            "model": self.model,
            "messages": list(messages),
            "temperature": self.temperature,
            "max_tokens": self.max_tokens,
        }
        if seed is not None:
            body["seed"] = seed
        headers = {"Content-Type": "application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        request = urllib.request.Request(self.url, json.dumps(body).encode(), headers, method="POST")
        for attempt in range(self.retries):
            try:
                with urllib.request.urlopen(request, timeout=self.timeout) as response:
                    answer = json.loads(response.read().decode())
                break
            except urllib.error.HTTPError as error:
                detail = error.read().decode(errors="replace")[:300]
                if error.code not in (429, 500, 502, 503, 504) or attempt == self.retries - 1:
                    raise RuntimeError(f"{self.url} answered HTTP {error.code}: {detail}") from error
            except (urllib.error.URLError, TimeoutError, ConnectionError) as error:
                if attempt == self.retries - 1:
                    raise RuntimeError(
                        f"cannot reach {self.url} ({error}); is the server running and is base_url right?"
                    ) from error
            time.sleep(0.5 * 2**attempt)
        try:
            return str(answer["choices"][0]["message"]["content"] or "")
        except (KeyError, IndexError, TypeError) as error:
            raise RuntimeError(
                f"{self.url} sent no choices[0].message.content: {str(answer)[:300]}"
            ) from error

    def complete(self, conversations: Sequence[Sequence[Message]], seed: int | None = None) -> list[str]:
        if len(conversations) == 1:
            return [self._post(conversations[0], seed)]
        with ThreadPoolExecutor(min(self.parallel, len(conversations))) as pool:
            return list(pool.map(lambda c: self._post(c, seed), conversations))


class LLMAgent:
    """Plays through a chat backend with the shared prompts.

    Args:
        backend: Where answers come from (shared by all slots of a run).
        prompts: How prompts are written.
        history_turns: Earlier turns (prompt and answer) kept in the conversation.
    """

    def __init__(
        self, backend: ChatBackend, prompts: PromptConfig | None = None, history_turns: int = 2
    ) -> None:
        self.backend = backend
        self.prompts = prompts or PromptConfig()
        self.history_turns = max(0, history_turns)
        self.reset()

    def reset(self, seed: int | None = None) -> None:
        self._seed = seed
        self._turns: list[tuple[str, str]] = []
        self.last_output: str | None = None

    def conversation(self, observation: str, info: Info) -> list[Message]:
        """The messages the model answers next."""
        messages = [{"role": "system", "content": system_prompt(self.prompts)}]
        for prompt, answer in self._turns[-self.history_turns :] if self.history_turns else []:
            messages += [{"role": "user", "content": prompt}, {"role": "assistant", "content": answer}]
        prompt = turn_prompt(
            str(info["instruction"]),
            observation,
            list(info["available_actions"]),
            int(info["steps_left"]),
            self.prompts,
        )
        messages.append({"role": "user", "content": prompt})
        return messages

    def _answer(self, messages: list[Message], output: str) -> str:
        self._turns.append((messages[-1]["content"], output))
        self.last_output = output
        parsed = parse_model_output(output)
        return parsed.action if parsed.action is not None else output.strip()[:UNPARSED_ACTION_CHARS]

    def _step_seed(self) -> int | None:
        return None if self._seed is None else self._seed * 1000 + len(self._turns)

    def act(self, observation: str, info: Info) -> str:
        messages = self.conversation(observation, info)
        (output,) = self.backend.complete([messages], seed=self._step_seed())
        return self._answer(messages, output)

    @classmethod
    def act_batch(
        cls, agents: Sequence[LLMAgent], observations: Sequence[str], infos: Sequence[Info]
    ) -> list[str]:
        """Asks the (shared) backend for all slots at once."""
        conversations = [a.conversation(o, i) for a, o, i in zip(agents, observations, infos, strict=True)]
        outputs = agents[0].backend.complete(conversations, seed=agents[0]._step_seed())
        return [a._answer(m, out) for a, m, out in zip(agents, conversations, outputs, strict=True)]


def factory(
    model: str = "",
    base_url: str = "",
    temperature: float = 0.0,
    top_p: float = 1.0,
    max_new_tokens: int = 128,
    device: str = "",
    dtype: str = "auto",
    history_turns: int = 2,
    few_shot: bool = False,
    think: bool = True,
    api_key_env: str = "OPENAI_API_KEY",
    cpu_threads: int = 0,
) -> AgentFactory:
    """LLM agents sharing one backend.

    ``model`` alone: a transformers model (hub name or local folder). ``base_url`` (and
    ``model``, the name the server knows): an OpenAI-compatible endpoint. ``cpu_threads``
    > 0 sets torch's CPU threads (1 is fastest for tiny models on a busy machine).
    """
    if not model:
        raise ValueError(
            "the llm agent needs model=<hub name or folder> (and base_url=... for an HTTP endpoint)"
        )
    backend: ChatBackend
    if base_url:
        backend = OpenAIChat(
            base_url,
            model,
            api_key=os.environ.get(api_key_env),
            temperature=temperature,
            max_tokens=max_new_tokens,
        )
    else:
        if cpu_threads > 0:
            import torch

            torch.set_num_threads(cpu_threads)
        backend = TransformersChat(model, temperature, top_p, max_new_tokens, device or None, dtype)
    prompts = PromptConfig(few_shot=few_shot, think=think)
    return lambda: LLMAgent(backend, prompts, history_turns)
