"""The shop's pages and transitions, including the original's quirks."""

from __future__ import annotations

import dataclasses
import functools
import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from webshop_gym.data.catalog import load_catalog
from webshop_gym.data.model import Catalog, Product, Review
from webshop_gym.render.text import render_text_rich
from webshop_gym.search.engines import build_engine
from webshop_gym.shop import Page, PageState, Purchase, Shop, StepResult


def make_product(
    asin: str,
    title: str = "",
    *,
    options: dict[str, tuple[str, ...]] | None = None,
    description: str = "A fine product.",
    bullet_points: tuple[str, ...] = ("Works well",),
    attributes: tuple[str, ...] = ("natural",),
    reviews: tuple[Review, ...] = (),
) -> Product:
    return Product(
        asin=asin,
        name=title or f"Product {asin}",
        title=title or f"Product {asin}",
        description=description,
        bullet_points=bullet_points,
        price="$10.99",
        pricing=(10.99,),
        options=options or {},
        option_to_image={},
        attributes=attributes,
        category="beauty",
        product_category="Beauty & Personal Care › Deodorant",
        query="deodorant",
        main_image="",
        rating="N.A.",
        reviews=reviews,
    )


DEODORANT = make_product(
    "B078GWRC1J",
    "Bright Citrus Deodorant by Earth Mama | Natural and Safe for Sensitive Skin",
    options={
        "scent": ("assorted scents", "bright citrus", "calming lavender"),
        "size": ("travel set (4-pack)", "3 ounce (pack of 1)"),
    },
)
FILLERS = tuple(make_product(f"B0000000{i:02d}") for i in range(60))
CATALOG = Catalog("test", (DEODORANT, *FILLERS), {}, {})
INSTRUCTION = "i would like a 3 ounce bottle of bright citrus deodorant"


class FakeEngine:
    """Returns fixed hits and records the queries it was asked."""

    def __init__(self, hits: list[str]) -> None:
        self.hits = hits
        self.calls: list[tuple[str, int]] = []

    def search(self, query: str, k: int = 50) -> list[str]:
        self.calls.append((query, k))
        return self.hits[:k]


# 55 hits, one unknown to the catalogue: the shop keeps the top 50 known ones.
HITS = ["B078GWRC1J", "NOT_IN_CAT", *(p.asin for p in FILLERS[:53])]


@pytest.fixture
def engine() -> FakeEngine:
    return FakeEngine(list(HITS))


@pytest.fixture
def shop(engine: FakeEngine) -> Shop:
    return Shop(CATALOG, engine)


def ok(result: StepResult) -> PageState:
    assert result.error is None, result.error
    return result.state


@pytest.fixture
def results(shop: Shop) -> PageState:
    return ok(shop.step(shop.start(INSTRUCTION), "search[Bright Citrus  Deodorant]"))


@pytest.fixture
def item(shop: Shop, results: PageState) -> PageState:
    return ok(shop.step(results, "click[B078GWRC1J]"))


# --- search page ------------------------------------------------------------------------


def test_start_is_the_search_page(shop: Shop) -> None:
    state = shop.start(INSTRUCTION)
    assert state == PageState(Page.SEARCH, INSTRUCTION)
    assert shop.available_actions(state) == ("search[<query>]",)


def test_search_lists_top_50_known_hits(shop: Shop, engine: FakeEngine, results: PageState) -> None:
    # The query goes to the engine lower-cased (the original lower-cases every argument)
    # with k = 50; hits missing from the catalogue are dropped after taking the top 50.
    assert engine.calls == [("bright citrus  deodorant", 50)]
    assert results.page is Page.RESULTS
    assert results.page_number == 1
    assert results.result_asins == tuple(a for a in HITS[:50] if a != "NOT_IN_CAT")
    assert len(results.result_asins) == 49
    # Keywords are the query split on single spaces, as the original keeps them.
    assert results.keywords == ("bright", "citrus", "", "deodorant")
    assert results.query == "bright citrus  deodorant"


def test_search_with_no_hits_shows_an_empty_results_page() -> None:
    shop = Shop(CATALOG, FakeEngine([]))
    state = ok(shop.step(shop.start(INSTRUCTION), "search[zzz]"))
    assert state.result_asins == ()
    assert shop.available_actions(state) == ("click[back to search]", "click[next >]")


# --- results pages ----------------------------------------------------------------------


def test_first_results_page_has_no_prev(shop: Shop, results: PageState) -> None:
    actions = shop.available_actions(results)
    assert actions[:2] == ("click[back to search]", "click[next >]")
    assert "click[< prev]" not in actions
    # Products are listed by lower-cased asin, like the original's clickables.
    assert actions[2:] == tuple(f"click[{a.lower()}]" for a in results.result_asins[:10])
    result = shop.step(results, "click[< Prev]")
    assert result.state == results
    assert result.error is not None and "No clickable '< Prev'" in result.error


def test_next_and_prev_move_between_pages(shop: Shop, results: PageState) -> None:
    page2 = ok(shop.step(results, "click[Next >]"))
    assert page2.page_number == 2
    assert page2.page_results == results.result_asins[10:20]
    assert shop.available_actions(page2)[:3] == (
        "click[back to search]",
        "click[< prev]",
        "click[next >]",
    )
    assert ok(shop.step(page2, "click[< prev]")) == results


def test_next_stays_past_the_last_result(shop: Shop, results: PageState) -> None:
    # The original shows "Next >" on every results page; past the last hit it lists nothing.
    state = results
    for _ in range(5):
        state = ok(shop.step(state, "click[next >]"))
    assert state.page_number == 6
    assert state.page_results == ()
    assert shop.available_actions(state) == (
        "click[back to search]",
        "click[< prev]",
        "click[next >]",
    )


def test_product_links_match_any_case(shop: Shop, results: PageState) -> None:
    for text in ("B078GWRC1J", "b078gwrc1j", "  B078gwrc1J "):
        state = ok(shop.step(results, f"click[{text}]"))
        assert state.page is Page.ITEM
        assert state.asin == "B078GWRC1J"
        assert state.visited == frozenset({"B078GWRC1J"})


def test_only_products_on_the_current_page_are_clickable(shop: Shop, results: PageState) -> None:
    off_page = results.result_asins[15]
    result = shop.step(results, f"click[{off_page}]")
    assert result.state == results
    assert result.error is not None


# --- item page --------------------------------------------------------------------------


def test_item_page_actions_in_page_order(shop: Shop, item: PageState) -> None:
    assert shop.available_actions(item) == (
        "click[back to search]",
        "click[< prev]",
        "click[assorted scents]",
        "click[bright citrus]",
        "click[calming lavender]",
        "click[travel set (4-pack)]",
        "click[3 ounce (pack of 1)]",
        "click[description]",
        "click[features]",
        "click[reviews]",
        "click[buy now]",
    )


def test_attributes_tab_only_when_shown(engine: FakeEngine, item: PageState) -> None:
    with_tab = Shop(CATALOG, engine, show_attributes=True)
    assert "click[attributes]" in with_tab.available_actions(item)
    assert ok(with_tab.step(item, "click[Attributes]")).sub_page == "Attributes"
    without = Shop(CATALOG, engine)
    assert "click[attributes]" not in without.available_actions(item)
    assert without.step(item, "click[attributes]").state == item


def test_selecting_options_replaces_the_value_of_that_option(shop: Shop, item: PageState) -> None:
    state = ok(shop.step(item, "click[Calming Lavender]"))
    state = ok(shop.step(state, "click[3 ounce (pack of 1)]"))
    state = ok(shop.step(state, "click[bright citrus]"))
    # The scent is replaced in place: options keep the order they were first chosen in.
    assert state.selected_options == (("scent", "bright citrus"), ("size", "3 ounce (pack of 1)"))
    assert dict(state.selected_options) == {"scent": "bright citrus", "size": "3 ounce (pack of 1)"}
    assert state.page is Page.ITEM


def test_buy_now_ends_with_a_purchase(shop: Shop, item: PageState) -> None:
    state = ok(shop.step(item, "click[bright citrus]"))
    result = shop.step(state, "click[Buy Now]")
    assert result.error is None
    assert result.purchase == Purchase("B078GWRC1J", {"scent": "bright citrus"})
    assert result.state.page is Page.DONE
    assert shop.available_actions(result.state) == ()
    for action in ("click[buy now]", "click[back to search]", "search[shoes]", "nonsense"):
        after = shop.step(result.state, action)
        assert after.state == result.state
        assert after.purchase is None
        assert after.error is not None


def test_buy_without_options(shop: Shop, item: PageState) -> None:
    assert shop.step(item, "click[buy now]").purchase == Purchase("B078GWRC1J", {})


def test_prev_from_item_returns_to_its_results_page(shop: Shop, results: PageState) -> None:
    page2 = ok(shop.step(results, "click[next >]"))
    asin = page2.page_results[0]
    item = ok(shop.step(page2, f"click[{asin}]"))
    sub = ok(shop.step(item, "click[features]"))
    back = ok(shop.step(ok(shop.step(sub, "click[< prev]")), "click[< prev]"))
    assert back == dataclasses.replace(page2, visited=frozenset({asin}))


def test_prev_from_item_forgets_its_options(shop: Shop, results: PageState, item: PageState) -> None:
    chosen = ok(shop.step(item, "click[bright citrus]"))
    back = ok(shop.step(chosen, "click[< prev]"))
    # The original re-renders the results page, which resets the session's options.
    assert back == dataclasses.replace(results, visited=frozenset({"B078GWRC1J"}))
    assert ok(shop.step(back, "click[b078gwrc1j]")).selected_options == ()


# --- sub-pages --------------------------------------------------------------------------


@pytest.mark.parametrize("tab", ["Description", "Features", "Reviews"])
def test_sub_pages_go_back_to_the_item_with_options_kept(shop: Shop, item: PageState, tab: str) -> None:
    state = ok(shop.step(item, "click[bright citrus]"))
    sub = ok(shop.step(state, f"click[{tab.lower()}]"))
    assert sub.page is Page.SUB_PAGE
    assert sub.sub_page == tab
    assert shop.available_actions(sub) == ("click[back to search]", "click[< prev]")
    assert ok(shop.step(sub, "click[< Prev]")) == state
    # Tabs are not clickable from a sub-page, nor is buying.
    assert shop.step(sub, "click[features]").state == sub
    assert shop.step(sub, "click[buy now]").state == sub


def test_back_to_search_starts_afresh(shop: Shop, item: PageState) -> None:
    sub = ok(shop.step(ok(shop.step(item, "click[bright citrus]")), "click[reviews]"))
    for state in (sub, item):
        fresh = ok(shop.step(state, "click[Back to Search]"))
        # The original resets its session there: query, options and visited products go.
        assert fresh == shop.start(INSTRUCTION)


# --- invalid actions --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("action", "message"),
    [
        ("", "Empty action"),
        ("buy", "Malformed action"),
        ("Click[buy now]", "Unknown action kind"),
        ("click[]", "Empty argument"),
        ("click[nothing here]", "No clickable 'nothing here' on this page."),
        ("click[search]", "click[search] is not an action."),
        ("search[deodorant]", "There is no search bar on this page"),
        ("click[next >]", "No clickable 'next >'"),
        ("click[B000000020]", "No clickable"),  # a result, but not on this page
    ],
)
def test_invalid_actions_leave_the_state_and_say_why(
    shop: Shop, item: PageState, action: str, message: str
) -> None:
    result = shop.step(item, action)
    assert result.state is item
    assert result.purchase is None
    assert result.error is not None
    assert result.error.startswith(message)
    # ... and what is valid instead.
    assert "Valid actions: click[back to search], click[< prev]" in result.error


def test_invalid_on_search_page(shop: Shop) -> None:
    start = shop.start(INSTRUCTION)
    for action in ("click[search]", "click[Search]", "click[buy now]", "search[ ]"):
        result = shop.step(start, action)
        assert result.state is start
        assert result.error is not None and "Valid actions: search[<query>]." in result.error
    assert "search[your keywords] searches" in (shop.step(start, "click[search]").error or "")


def test_lone_surrogates_in_a_query_are_refused(shop: Shop, engine: FakeEngine) -> None:
    start = shop.start(INSTRUCTION)
    result = shop.step(start, "search[shoes \ud800]")
    assert result.state is start
    assert result.error is not None and "not valid text" in result.error
    assert engine.calls == []


# --- the original's quirks that are kept ------------------------------------------------


def test_option_named_like_a_button_acts_as_the_button(engine: FakeEngine) -> None:
    # The original dispatches on the clicked text before it looks at what was clicked, so
    # an option value "description" opens the Description tab and cannot be selected.
    odd = make_product("B0ODD00001", "Odd", options={"style": ("description", "plain")})
    shop = Shop(Catalog("odd", (odd,), {}, {}), FakeEngine(["B0ODD00001"]))
    item = ok(shop.step(ok(shop.step(shop.start("x"), "search[odd]")), "click[b0odd00001]"))
    actions = shop.available_actions(item)
    assert actions.count("click[description]") == 1
    assert ok(shop.step(item, "click[description]")).page is Page.SUB_PAGE
    assert ok(shop.step(item, "click[plain]")).selected_options == (("style", "plain"),)


def test_shared_option_value_selects_the_last_option() -> None:
    # The original's clickables are a dict keyed by value: the last radio button wins.
    odd = make_product("B0ODD00002", "Odd", options={"size": ("large", "small"), "fit": ("large",)})
    shop = Shop(Catalog("odd", (odd,), {}, {}), FakeEngine(["B0ODD00002"]))
    item = ok(shop.step(ok(shop.step(shop.start("x"), "search[odd]")), "click[b0odd00002]"))
    assert shop.available_actions(item).count("click[large]") == 1
    assert ok(shop.step(item, "click[large]")).selected_options == (("fit", "large"),)


def test_option_values_match_case_insensitively() -> None:
    # The original lower-cased only the argument, so upper-case values were unselectable;
    # here both sides are compared lower-cased, and the catalogue's value is kept.
    odd = make_product("B0ODD00003", "Odd", options={"color": ("Navy Blue",)})
    shop = Shop(Catalog("odd", (odd,), {}, {}), FakeEngine(["B0ODD00003"]))
    item = ok(shop.step(ok(shop.step(shop.start("x"), "search[odd]")), "click[b0odd00003]"))
    assert "click[Navy Blue]" in shop.available_actions(item)
    assert ok(shop.step(item, "click[navy blue]")).selected_options == (("color", "Navy Blue"),)


# --- properties -------------------------------------------------------------------------


def test_states_are_hashable_values(shop: Shop, item: PageState) -> None:
    again = ok(
        shop.step(
            ok(shop.step(shop.start(INSTRUCTION), "search[bright citrus  deodorant]")), "click[b078gwrc1j]"
        )
    )
    assert again == item
    assert hash(again) == hash(item)
    assert len({item, again, shop.start(INSTRUCTION)}) == 2
    with pytest.raises(dataclasses.FrozenInstanceError):
        item.page = Page.DONE  # type: ignore[misc]


_RICH_CLICKABLE = re.compile(r"\[(?:clicked )?button\] (.*?) \[(?:clicked )?button_\]")


def _walk_states(shop: Shop, start: PageState) -> list[PageState]:
    """Every state reachable from ``start`` by clicks (no search), breadth first."""
    seen = {start}
    frontier = [start]
    while frontier:
        state = frontier.pop()
        for action in shop.available_actions(state):
            if action.startswith("search["):
                continue
            nxt = shop.step(state, action).state
            # "Next >" never ends; stop a page past the last result.
            if nxt not in seen and nxt.page_number <= 6 and len(seen) < 400:
                seen.add(nxt)
                frontier.append(nxt)
    return sorted(seen, key=repr)


def test_available_actions_are_the_clickables_text_rich_shows(shop: Shop, results: PageState) -> None:
    states = _walk_states(shop, results)
    assert {s.page for s in states} == set(Page)
    for state in states:
        shown = [t.lower() for t in _RICH_CLICKABLE.findall(render_text_rich(state, CATALOG))]
        clicks = [
            a[len("click[") : -1].lower() for a in shop.available_actions(state) if a.startswith("click[")
        ]
        # The search page's Search button is shown but clicked through search[...].
        assert clicks == [t for t in dict.fromkeys(shown) if t != "search"], state
        for action in shop.available_actions(state):
            if not action.startswith("search["):
                assert shop.step(state, action).error is None


@functools.cache
def _fuzz_states() -> tuple[PageState, ...]:
    shop = Shop(CATALOG, FakeEngine(list(HITS)))
    start = shop.start(INSTRUCTION)
    results = ok(shop.step(start, "search[deodorant]"))
    return (start, *_walk_states(shop, results)[:80])


@settings(max_examples=300, deadline=None)
@given(st.integers(0, 10_000), st.text(max_size=60), st.sampled_from(["", "click[", "search["]))
def test_random_actions_never_raise(seed: int, text: str, prefix: str) -> None:
    shop = Shop(CATALOG, FakeEngine(list(HITS)))
    states = _fuzz_states()
    state = states[seed % len(states)]
    action = prefix + text + ("]" if prefix and seed % 2 else "")
    result = shop.step(state, action)
    assert isinstance(result, StepResult)
    if result.error is not None:
        assert result.state is state
        assert result.purchase is None


# --- real data --------------------------------------------------------------------------


def test_real_catalogue_episode(webshop_1k: Path) -> None:
    catalog = load_catalog(webshop_1k)
    shop = Shop(catalog, build_engine(catalog, "bm25s"))
    # A product whose option values are all distinct (so each click selects its own).
    product = next(
        p
        for p in catalog
        if p.options
        and len({v for vs in p.options.values() for v in vs}) == sum(map(len, p.options.values()))
    )
    results = ok(shop.step(shop.start("buy it"), f"search[{product.title}]"))
    assert 0 < len(results.result_asins) <= 50
    assert all(asin in catalog for asin in results.result_asins)
    assert product.asin in results.page_results
    item = ok(shop.step(results, f"click[{product.asin}]"))
    chosen = {name: values[-1] for name, values in product.options.items()}
    for value in chosen.values():
        item = ok(shop.step(item, f"click[{value.upper()}]"))
    result = shop.step(item, "click[buy now]")
    assert result.purchase == Purchase(product.asin, chosen)
