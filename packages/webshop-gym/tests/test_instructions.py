"""`webshop_gym.data.instructions`: the clauses goals.py writes, read back exactly.

The agents (expert, page readers, the benchmarks' heuristic) each had their own price
clause regex; on every goal of the mini catalogue and the real 1k set they gave what this
one parser gives (checked once when they were merged). These tests keep that: every real
instruction reads back as the goal that wrote it.
"""

from __future__ import annotations

import string

import pytest
from hypothesis import given
from hypothesis import strategies as st

from webshop_gym.data.catalog import load_catalog
from webshop_gym.data.goals import NO_PRICE_LIMIT, PRICE_LIMITS, build_goals
from webshop_gym.data.instructions import option_clause, price_clause, split_option_clause, split_price_clause
from webshop_gym.data.locations import resolve_catalog

WORDS = st.text(alphabet=string.ascii_lowercase + string.digits + " '-&/", min_size=1, max_size=40)
NAMES = st.from_regex(r"[a-z][a-z ]{0,12}", fullmatch=True).map(str.strip).filter(bool)
VALUES = (
    st.text(alphabet=string.ascii_lowercase + string.digits + " -./", min_size=1, max_size=15)
    .map(str.strip)
    .filter(bool)
)


def request_text(text: str) -> bool:
    """A product instruction: no clause of its own at its end, no ``with name:`` in it."""
    return split_price_clause(text)[1] is None and split_option_clause(text)[1] == {}


@given(
    WORDS.filter(request_text),
    st.sampled_from(PRICE_LIMITS) | st.floats(0.01, 1e5).map(lambda x: round(x, 2)),
)
def test_the_price_clause_reads_back(request, limit):
    assert split_price_clause(request + price_clause(limit)) == (request, limit)
    assert split_price_clause(request) == (request, None)


@given(
    WORDS.filter(request_text),
    st.dictionaries(NAMES, VALUES.filter(lambda v: ":" not in v), max_size=4),
    st.sampled_from(PRICE_LIMITS) | st.none(),
)
def test_a_synthetic_instruction_reads_back(request, options, limit):
    text = request + option_clause(sorted(options.items())) + ("" if limit is None else price_clause(limit))
    body, read_limit = split_price_clause(text)
    assert read_limit == limit
    assert split_option_clause(body) == (request, options)


def _goal_sets(webshop_1k):
    for catalog in (load_catalog(resolve_catalog("mini")), load_catalog(webshop_1k)):
        for source in ("human", "synthetic"):
            yield f"{catalog.name}:{source}", build_goals(catalog, source)


# Synthetic goals whose product instruction holds " with " itself ("shorts with drawstring
# closure with color: ..."): the parser must keep those words in the request, not read them
# as part of the first option's name. Counted so that the test is known to cover them.
REQUESTS_WITH_THEIR_OWN_WITH = {"mini:synthetic": 4285, "webshop-1k:synthetic": 5716}


def test_every_real_instruction_reads_back_as_its_goal(webshop_1k):
    for name, goals in _goal_sets(webshop_1k):
        own_with = 0
        for goal in goals:
            body, limit = split_price_clause(goal.instruction_text)
            has_limit = goal.price_upper < NO_PRICE_LIMIT
            assert limit == (goal.price_upper if has_limit else None), (name, goal.instruction_text)
            assert body + (price_clause(goal.price_upper) if has_limit else "") == goal.instruction_text
            request, options = split_option_clause(body)
            if not name.endswith("synthetic"):
                continue
            wanted = [(k.lower(), v.strip()) for k, v in goal.goal_options]
            assert list(options.items()) == wanted, goal.instruction_text
            assert body == request + option_clause(goal.goal_options), goal.instruction_text
            own_with += wanted != [] and " with " in request
        if name.endswith("synthetic"):
            assert own_with == REQUESTS_WITH_THEIR_OWN_WITH[name], name


@pytest.mark.parametrize(
    "typed", ["shoes, And Price Lower Than  1,200.50 dollars ", "shoes and price lower than 1200.5dollars"]
)
def test_a_typed_price_clause_is_read_too(typed):
    assert split_price_clause(typed) == ("shoes", 1200.5)


def test_a_clause_whose_number_does_not_read_is_cut_without_a_limit():
    assert split_price_clause("shoes, and price lower than 1.2.3 dollars") == ("shoes", None)
