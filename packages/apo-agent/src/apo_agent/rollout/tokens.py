"""What the policy reads each turn, as token ids, and which of those ids the agent said.

Sampled tokens are never re-tokenised: an episode's sequences are built by concatenating
the ids of the chat-template text around each turn with the ids the model sampled. The
agent mask is True exactly on sampled ids, so log-probabilities and losses see only the
agent's own tokens, across all turns.

Two context modes (`TrainConfig.context`):

* ``"full"``: one sequence per episode, the whole conversation
  ``[system] user_1 assistant_1 user_2 assistant_2 ...``. Turn t's prompt is the previous
  sequence plus the template text that closes the assistant turn and opens the next user
  turn (found by rendering the chat template around a placeholder).
* ``"last_observation"``: one sequence per turn, ``[system] user_t assistant_t``, where
  ``user_t`` holds the instruction, the previous actions (as text) and only the current
  page. Sequences stay short whatever the episode length, which is what a small model
  trained from scratch needs; the page state plus the action history is enough to act
  on WebShop (selected options and the search query are in the history).

In both modes the page is shown without the instruction header that every WebShop page
repeats (`webshop_gym.render.page_without_instruction`; the turn prompt states the
instruction once).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from apo_agent.config import ContextMode, DecodingConfig, SearchQuery, check_decoding
from apo_agent.model.constrained import ActionConstraint, ActionVocabulary, stop_token_ids
from apo_agent.model.sequences import TokenSequence
from shared_prompts import PromptConfig, system_prompt, turn_prompt
from webshop_gym.render import page_without_instruction

_PLACEHOLDER = "ASSISTANT_TURN_PLACEHOLDER_7f3a"


class PromptEncoder:
    """Turns env observations into prompt token ids with a tokenizer's chat template.

    Args:
        tokenizer: A transformers tokenizer with a chat template.
        prompt_config: How shared-prompts writes the prompts.
        context: ``"full"`` or ``"last_observation"`` (see the module docstring).
        use_system_prompt: Whether contexts start with the system prompt.
        max_prompt_tokens: Longer prompts keep their last tokens.
        constrain_actions: Sample answers only among the page's actions
            (`apo_agent.model.constrained`); answers without thoughts only.
        search_query: Under ``constrain_actions``: ``"free"`` queries, or ``"instruction"``
            (the only search is the instruction itself).
    """

    def __init__(
        self,
        tokenizer: Any,
        prompt_config: PromptConfig,
        context: ContextMode = "full",
        use_system_prompt: bool = True,
        max_prompt_tokens: int = 8192,
        constrain_actions: bool = False,
        search_query: SearchQuery = "free",
    ) -> None:
        if getattr(tokenizer, "chat_template", None) is None:
            raise ValueError(
                "the tokenizer has no chat template; use an instruct/chat model "
                "or set tokenizer.chat_template"
            )
        self.tokenizer = tokenizer
        self.prompt_config = prompt_config
        self.context = context
        self.use_system_prompt = use_system_prompt
        self.max_prompt_tokens = max_prompt_tokens
        self.stop_ids = stop_token_ids(tokenizer)
        check_decoding(prompt_config.think, constrain_actions, search_query)
        self.constrain_actions = constrain_actions
        self.search_query = search_query
        self._vocabulary: ActionVocabulary | None = None
        self._system = (
            [{"role": "system", "content": system_prompt(prompt_config)}] if use_system_prompt else []
        )
        self._end_of_turn = self._end_of_turn_text()

    def encode_text(self, text: str) -> list[int]:
        return list(self.tokenizer(text, add_special_tokens=False)["input_ids"])

    def user_message(self, observation: str, info: dict[str, Any], previous_actions: list[str]) -> str:
        instruction = info.get("instruction", "")
        return turn_prompt(
            instruction,
            page_without_instruction(observation, instruction),
            info.get("available_actions", []),
            int(info.get("steps_left", 0)),
            self.prompt_config,
            previous_actions=previous_actions if self.context == "last_observation" else (),
        )

    def first_prompt_ids(self, user: str) -> list[int]:
        """``[system] user`` and the generation prompt that opens the assistant turn."""
        text = self.tokenizer.apply_chat_template(
            [*self._system, {"role": "user", "content": user}], tokenize=False, add_generation_prompt=True
        )
        return self.encode_text(text)

    def next_turn_ids(self, user: str, previous_ended_with_stop: bool) -> list[int]:
        """The ids that follow a sampled assistant turn: close it, add ``user``, open the next one."""
        messages = [
            *self._system,
            {"role": "user", "content": "u"},
            {"role": "assistant", "content": _PLACEHOLDER},
            {"role": "user", "content": user},
        ]
        text = self.tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
        tail = text[text.index(_PLACEHOLDER) + len(_PLACEHOLDER) :]
        if previous_ended_with_stop and self._end_of_turn and tail.startswith(self._end_of_turn):
            tail = tail[len(self._end_of_turn) :]  # the model already said it
        return self.encode_text(tail)

    def constraint(self, info: dict[str, Any]) -> ActionConstraint | None:
        """What this page allows the answer to be (None unless ``constrain_actions``)."""
        if not self.constrain_actions:
            return None
        if self._vocabulary is None:  # decoding the whole vocabulary once
            self._vocabulary = ActionVocabulary(self.tokenizer, self.stop_ids)
        fixed_query = info.get("instruction", "") if self.search_query == "instruction" else None
        return ActionConstraint.for_page(self._vocabulary, info.get("available_actions", []), fixed_query)

    def answer_ids(self, answer: str) -> list[int]:
        """A demonstration answer as the model should sample it, ending with the stop token."""
        return [*self.encode_text(answer), self.stop_ids[0]]

    def _end_of_turn_text(self) -> str:
        """The stop token's text when the template writes it right after an assistant message."""
        messages = [
            *self._system,
            {"role": "user", "content": "u"},
            {"role": "assistant", "content": _PLACEHOLDER},
        ]
        text = self.tokenizer.apply_chat_template(messages, tokenize=False)
        after = text[text.index(_PLACEHOLDER) + len(_PLACEHOLDER) :]
        for stop in self.stop_ids:
            token = self.tokenizer.convert_ids_to_tokens(stop)
            if isinstance(token, str) and token and after.startswith(token):
                return token
        return ""


class EpisodeContext:
    """The growing token record of one episode: prompts, sampled answers and the agent mask.

    Call `prompt` with each observation, then `record` with the ids the model sampled;
    in between, `constraint` says what the answer may be (constrained decoding).
    """

    def __init__(self, encoder: PromptEncoder) -> None:
        self.encoder = encoder
        self.sequences: list[TokenSequence] = []
        self.actions: list[str] = []
        self.truncated_prompts = 0
        self.constraint: ActionConstraint | None = None
        self._ended_with_stop = False

    def prompt(self, observation: str, info: dict[str, Any]) -> list[int]:
        """The ids the next action is conditioned on (also appended to the record)."""
        user = self.encoder.user_message(observation, info, self.actions)
        self.constraint = self.encoder.constraint(info)
        if self.encoder.context == "last_observation" or not self.sequences:
            sequence = TokenSequence()
            sequence.extend(self.encoder.first_prompt_ids(user), agent=False)
            self.sequences.append(sequence)
        else:
            self.sequences[-1].extend(self.encoder.next_turn_ids(user, self._ended_with_stop), agent=False)
        sequence = self.sequences[-1]
        if len(sequence.ids) > self.encoder.max_prompt_tokens:
            # Keep the newest tokens; a cut never starts inside an answer (its log-probs
            # would lack their context), so the dropped part extends past any agent tokens.
            self.truncated_prompts += 1
            drop = len(sequence.ids) - self.encoder.max_prompt_tokens
            while drop < len(sequence.ids) and sequence.agent_mask[drop]:
                drop += 1
            sequence.ids, sequence.agent_mask = sequence.ids[drop:], sequence.agent_mask[drop:]
            sequence.allowed, sequence.logprobs = sequence.allowed[drop:], sequence.logprobs[drop:]
        return list(sequence.ids)

    def record(self, sampled_ids: list[int], action: str, logprobs: Sequence[float] | None = None) -> None:
        """Appends the sampled ids (agent tokens, with the engine's log-probs when given) and
        remembers the action taken."""
        allowed = self.constraint.allowed_along(sampled_ids) if self.constraint is not None else None
        self.sequences[-1].extend(list(sampled_ids), agent=True, allowed=allowed, logprobs=logprobs)
        self._ended_with_stop = bool(sampled_ids) and sampled_ids[-1] in self.encoder.stop_ids
        self.actions.append(action)


def prompt_encoder(tokenizer: Any, config: DecodingConfig) -> PromptEncoder:
    """The prompt encoder ``config`` describes, for ``tokenizer``."""
    prompt_config = PromptConfig(think=config.think, max_observation_chars=config.max_observation_chars)
    return PromptEncoder(
        tokenizer,
        prompt_config,
        config.context,
        config.system_prompt,
        config.max_prompt_tokens,
        constrain_actions=config.constrain_actions,
        search_query=config.search_query,
    )
