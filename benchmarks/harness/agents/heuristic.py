"""A strong hand-written agent: reads the instruction and the pages, never the goal.

What it does, in order:

1. **Reads the instruction**: its price limit, the options it spells out (synthetic
   goals say ``with color: black, and size: large``), and its content words (filler
   words such as "i need", "please" dropped).
2. **Searches** the content words (without the price clause), plus the option values it
   spells out (search documents hold the option text).
3. **Ranks the results** by how many instruction words and word pairs each title holds,
   whether its price fits the limit, and the engine's order.
4. **Opens the best few results** (as the step budget allows) and scores each item page:
   title match, how many of its options have a value the instruction asks for, price fit.
   It stops early on an item whose price fits and whose options hold every value the
   instruction spells out.
5. **Buys the best item**: goes back to it if needed, selects per option the value that
   best matches the instruction (most wanted first; a value for every option as steps
   allow, since an extra selection never lowers the reward), then ``Buy Now`` with the
   last step at the latest.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field

from webshop_gym.actions import click_action, search_action
from webshop_gym.agents import pages
from webshop_gym.agents.pages import (
    FILLER_WORDS,
    ItemPage,
    ResultEntry,
    instruction_query,
    read_item,
    read_results,
    tokens,
)
from webshop_gym.agents.protocol import AgentFactory, Info
from webshop_gym.data.instructions import split_option_clause, split_price_clause

# Score weights, tuned on the dev splits (mini and 1k), never on test.
PRICE_OVER_PENALTY = 6.0  # per unit of probability that the price is over the limit
PAIR_WEIGHT = 0.5  # an instruction word pair in the title, on top of its two words
RANK_WEIGHT = 0.15  # per place down the engine's ranking
SPELLED_OPTION_WEIGHT = 3.0  # an option holding the exact value the instruction spells out
MATCHED_OPTION_WEIGHT = 3.0  # an option with a value named in a (human) instruction
# Where the instruction spells its options out, other loose matches are mostly chance.
MATCHED_OPTION_WEIGHT_WHEN_SPELLED = 0.0


@dataclass(frozen=True)
class Wants:
    """What an instruction asks for, as far as its text tells.

    Attributes:
        words: Content words (no filler, no price clause, no spelled-out options).
        pairs: Adjacent content-word pairs (attribute phrases such as "machine washable").
        phrase: The instruction's tokens joined by spaces, padded (for phrase lookups).
        spelled: Options the instruction spells out, name -> value (synthetic goals).
        limit: The price limit, if any.
        query: The search keywords.
    """

    words: frozenset[str]
    pairs: frozenset[tuple[str, str]]
    phrase: str
    spelled: dict[str, str] = field(default_factory=dict)
    limit: float | None = None
    query: str = ""


def read_wants(instruction: str) -> Wants:
    """What an instruction asks for.

    >>> wants = read_wants("Find me washable pillows with size: 28 x 28, and price lower than 40.00 dollars")
    >>> sorted(wants.words), wants.spelled, wants.limit, wants.query
    (['pillow', 'washable'], {'size': '28 x 28'}, 40.0, 'washable pillows 28 x 28')
    """
    without_price, limit = split_price_clause(instruction)
    # Synthetic goals spell their options out: " with name: value, and name: value".
    body, spelled = split_option_clause(without_price.strip())
    content = [w for w in tokens(body) if w not in FILLER_WORDS]
    return Wants(
        words=frozenset(content),
        pairs=frozenset(itertools.pairwise(content)),
        phrase=" " + " ".join(tokens(without_price)) + " ",
        spelled=spelled,
        limit=limit,
        query=" ".join([instruction_query(body), *spelled.values()]),
    )


def title_match(title: str, wants: Wants) -> float:
    """Instruction words and word pairs found in a title."""
    words = [w for w in tokens(title) if w not in FILLER_WORDS]
    return len(wants.words & set(words)) + PAIR_WEIGHT * len(wants.pairs & set(itertools.pairwise(words)))


def price_fit(price_text: str, limit: float | None) -> float:
    """1 when the price is within the limit, 0 when over it, the chance of fitting for a range
    (and 1 when there is no limit or no readable price: nothing speaks against the item)."""
    return pages.price_fit(price_text, limit, unknown=1.0)


def result_score(entry: ResultEntry, wants: Wants) -> float:
    """How promising a search result looks from its title, price and rank."""
    fit = price_fit(entry.price, wants.limit)
    return title_match(entry.title, wants) - PRICE_OVER_PENALTY * (1.0 - fit) - RANK_WEIGHT * entry.rank


@dataclass(frozen=True)
class OptionChoice:
    """The value to select for one option, and how sure the choice is.

    ``strength`` 3: the instruction spells this option out and the value equals it;
    2: the value appears word for word in the instruction; 1: most of its words do;
    0: nothing matches (any value is as good, and selecting one cannot lower the reward).
    """

    name: str
    value: str
    strength: int


def choose_option(name: str, values: tuple[str, ...], wants: Wants) -> OptionChoice:
    """The value of one option that best matches the instruction."""
    spelled = wants.spelled.get(name.lower())
    spelled_values = [spelled] if spelled is not None else list(wants.spelled.values())
    for value in values:
        if any(value.lower() == s.lower() for s in spelled_values):
            return OptionChoice(name, value, 3)
    best, best_key = values[0], (0, 0.0, 0)
    for value in values:
        words = tokens(value)
        if not words:
            continue
        if f" {' '.join(words)} " in wants.phrase:
            key = (2, 1.0, len(words))
        else:
            share = sum(f" {w} " in wants.phrase for w in words) / len(words)
            key = (1 if share >= 0.5 else 0, share, len(words))
        if key > best_key:
            best, best_key = value, key
    return OptionChoice(name, best, best_key[0])


def choose_options(item: ItemPage, wants: Wants) -> list[OptionChoice]:
    """One choice per option of an item, the surest first."""
    choices = [choose_option(name, values, wants) for name, values in item.options.items()]
    return sorted(choices, key=lambda c: -c.strength)


def item_score(item: ItemPage, wants: Wants) -> tuple[float, bool]:
    """An item page's score, and whether it has all the instruction asks of options and price."""
    choices = choose_options(item, wants)
    spelled_found = sum(c.strength == 3 for c in choices)
    matched = sum(c.strength in (1, 2) for c in choices)
    fit = price_fit(item.price, wants.limit)
    score = (
        title_match(item.title, wants)
        + SPELLED_OPTION_WEIGHT * spelled_found
        + (MATCHED_OPTION_WEIGHT_WHEN_SPELLED if wants.spelled else MATCHED_OPTION_WEIGHT) * matched
        - PRICE_OVER_PENALTY * (1.0 - fit)
    )
    if wants.spelled:
        complete = spelled_found == len(wants.spelled) and fit == 1.0
    else:
        complete = bool(choices) and all(c.strength >= 2 for c in choices) and fit == 1.0
    return score, complete


class HeuristicAgent:
    """Searches the instruction's keywords, compares the best results, buys the best match.

    Args:
        max_visits: Item pages to compare at most.
        margin: Only results whose score is within this of the best result's are opened.

    Example:
        >>> import gymnasium as gym
        >>> import webshop_gym
        >>> env = gym.make("WebShop-Mini-Text-v0", split="test")
        >>> agent = HeuristicAgent()
        >>> observation, info = env.reset(seed=0, options={"goal_index": 1})
        >>> agent.reset()
        >>> while True:
        ...     observation, reward, terminated, truncated, info = env.step(agent.act(observation, info))
        ...     if terminated or truncated:
        ...         break
        >>> info["success"]
        True
    """

    def __init__(self, max_visits: int = 5, margin: float = 4.0) -> None:
        if max_visits < 1:
            raise ValueError(f"max_visits must be at least 1, got {max_visits}")
        self.max_visits = max_visits
        self.margin = margin
        self.reset()

    def reset(self, seed: int | None = None) -> None:
        del seed  # deterministic
        self._wants: Wants | None = None
        self._searches = 0
        self._ranked: list[tuple[float, ResultEntry]] = []
        self._scores: dict[str, tuple[float, bool, int]] = {}  # asin -> score, complete, options
        self._current: str | None = None
        self._committed: str | None = None
        self._selected: set[str] = set()

    def act(self, observation: str, info: Info) -> str:
        if self._wants is None:
            self._wants = read_wants(str(info["instruction"]))
        page = info["page"]
        if page == "search":
            return self._search()
        if page == "results":
            return self._on_results(observation, info)
        if page == "item":
            return self._on_item(observation, info)
        return click_action("< prev")  # a sub-page (the heuristic never opens one) or done

    # -- pages -----------------------------------------------------------------------------

    def _search(self) -> str:
        assert self._wants is not None
        self._searches += 1
        self._ranked = []
        query = self._wants.query
        if self._searches > 1:  # the first query found nothing: keep the first few words
            query = " ".join(query.split()[:3]) or query
        return search_action(query)

    def _on_results(self, observation: str, info: Info) -> str:
        assert self._wants is not None
        available = list(info["available_actions"])
        entries = read_results(observation, available)
        if not entries:
            return click_action("back to search") if self._searches < 2 else available[0]
        if not self._ranked:
            scored = [(result_score(e, self._wants), e) for e in entries]
            self._ranked = sorted(scored, key=lambda pair: (-pair[0], pair[1].rank))
        on_page = {e.asin for e in entries}
        target = (
            self._committed if self._committed in on_page else self._next_to_open(int(info["steps_left"]))
        )
        if target is None:
            target = self._best_asin() or self._ranked[0][1].asin
            self._committed = target
        return self._open(target)

    def _on_item(self, observation: str, info: Info) -> str:
        assert self._wants is not None
        item = read_item(observation, list(info["available_actions"]))
        steps_left = int(info["steps_left"])
        if item is None or self._current is None:
            return click_action("buy now")
        if self._current not in self._scores:
            score, complete = item_score(item, self._wants)
            self._scores[self._current] = (score, complete, len(item.options))
        if self._committed is None:
            best = self._best_asin()
            _, complete, _ = self._scores[self._current]
            explore = not complete and self._next_to_open(steps_left - 1) is not None
            if explore or best != self._current:
                if not explore:
                    self._committed = best
                return click_action("< prev")
            self._committed = self._current
        return self._select_or_buy(item, steps_left)

    # -- decisions ---------------------------------------------------------------------------

    def _open(self, asin: str) -> str:
        if asin != self._current:
            self._selected = set()
        self._current = asin
        return click_action(asin)

    def _best_asin(self) -> str | None:
        if not self._scores:
            return None
        return max(self._scores, key=lambda asin: self._scores[asin][0])

    def _next_to_open(self, steps_left: int) -> str | None:
        """The next result worth opening, if the budget still allows a comparison."""
        if len(self._scores) >= self.max_visits or not self._ranked:
            return None
        # Opening one more and coming back to the best costs: open, back, open the best,
        # its options, buy.
        options = max((n for _, _, n in self._scores.values()), default=2)
        if self._scores and steps_left < 4 + options:
            return None
        top = self._ranked[0][0]
        for score, entry in self._ranked:
            if entry.asin not in self._scores and score >= top - self.margin:
                return entry.asin
        return None

    def _select_or_buy(self, item: ItemPage, steps_left: int) -> str:
        assert self._wants is not None
        if steps_left > 1:
            for choice in choose_options(item, self._wants):
                if choice.name not in self._selected:
                    self._selected.add(choice.name)
                    return click_action(choice.value)
        return click_action("buy now")


def factory(max_visits: int = 5, margin: float = 4.0) -> AgentFactory:
    """Heuristic agents; ``max_visits`` item pages compared, results within ``margin`` of the best."""
    return lambda: HeuristicAgent(max_visits=max_visits, margin=margin)
