"""HTML observations: the same page as the text modes, and safe with any product text.

The check is the original's own: parse the HTML with BeautifulSoup (``html.parser``),
keep the visible text nodes (not in head, script, style, title, meta; not comments; not
the bare newlines between tags), and compare them, with the kind of tag each sits in
(button, option label, product link, plain text), to the elements the text modes join.
"""

from __future__ import annotations

import dataclasses
import itertools
import json
from pathlib import Path

import gymnasium as gym
import pytest
from bs4 import BeautifulSoup, Comment
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import webshop_gym  # noqa: F401
from webshop_gym.agents.scripted import ExpertPolicy
from webshop_gym.data.catalog import load_catalog
from webshop_gym.data.model import Catalog, Product, Review
from webshop_gym.render.html import render_html, template_environment
from webshop_gym.render.text import render_text, visible_nodes
from webshop_gym.shop import SUB_PAGES, Page, PageState, Shop

INVISIBLE_PARENTS = {"style", "script", "head", "title", "meta", "[document]"}
HOSTILE_TITLE = (
    "<script>window.pwned = 1; alert(1)</script> Zyzzyva \"sandals\" & 'clogs' {{ 7*7 }} {% raw %}"
)


def html_nodes(html: str) -> list[tuple[str, str]]:
    """(kind, text) of each visible text node, as the original's text env reads HTML."""
    nodes = []
    for text in BeautifulSoup(html, "html.parser").find_all(string=True):
        if text.parent.name in INVISIBLE_PARENTS or isinstance(text, Comment) or text == "\n":
            continue
        if text.parent.name == "button":
            kind = "button"
        elif text.parent.name == "label":
            kind = "option"
        elif text.parent.get("class") == ["product-link"]:
            kind = "product_link"
        else:
            kind = "text"
        nodes.append((kind, str(text)))
    return nodes


def assert_same_page(state: PageState, catalog: Catalog, show_attributes: bool = False) -> str:
    html = render_html(state, catalog, show_attributes, reward_details={"total": 0.5})
    expected = [(element.kind, node) for element, node in visible_nodes(state, catalog, show_attributes)]
    got = html_nodes(html)
    assert got == expected, next((g, e) for g, e in itertools.zip_longest(got, expected) if g != e)
    assert " [SEP] ".join(text.strip() for _, text in got) == render_text(state, catalog, show_attributes)
    return html


def every_page(catalog: Catalog, products: list[Product], instruction: str) -> list[PageState]:
    """Search, results (pages 1, 2 and past the end), item (options chosen), each tab, done."""
    shop = Shop(catalog, engine=None, show_attributes=True)  # type: ignore[arg-type]  (no searches)
    asins = tuple(p.asin for p in products)
    states = [PageState(Page.SEARCH, instruction), PageState(Page.SEARCH, "")]
    results = PageState(Page.RESULTS, instruction, ("q",), asins)
    states += [dataclasses.replace(results, page_number=n) for n in range(1, len(asins) // 10 + 3)]
    for product in products:
        item = dataclasses.replace(
            results, page=Page.ITEM, asin=product.asin, visited=frozenset({product.asin})
        )
        for values in product.options.values():
            if values and values[0].strip():
                step = shop.step(item, f"click[{values[0]}]")
                item = step.state if step.error is None else item
        states.append(item)
        states += [dataclasses.replace(item, page=Page.SUB_PAGE, sub_page=tab) for tab in SUB_PAGES]
        states.append(dataclasses.replace(item, page=Page.DONE, reward=0.25))
    return states


@pytest.mark.parametrize("which", ["mini", "1k"])
def test_html_text_nodes_are_the_text_modes_on_every_page_kind(which: str, webshop_1k: Path) -> None:
    catalog = load_catalog("mini" if which == "mini" else webshop_1k)
    products = list(catalog)[::5]  # every 5th product: all page kinds, diverse real text
    kinds = set()
    for state in every_page(catalog, products, "i need <b>red</b> & 'blue' shoes"):
        assert_same_page(state, catalog, show_attributes=True)
        kinds.add((state.page, state.sub_page))
    assert len(kinds) == 5 + len(SUB_PAGES) - 1


def test_selected_options_and_visited_products_are_marked(webshop_1k: Path) -> None:
    catalog = load_catalog("mini")
    product = next(p for p in catalog if len(p.options) >= 2)
    states = every_page(catalog, [product], "x")
    item = next(s for s in states if s.page is Page.ITEM)
    soup = BeautifulSoup(render_html(item, catalog), "html.parser")
    checked = {soup.find("label", attrs={"for": r["id"]}).get_text() for r in soup.select("input[checked]")}
    assert checked == {value for _, value in item.selected_options} and checked
    results = next(s for s in states if s.page is Page.RESULTS)
    visited = dataclasses.replace(results, visited=frozenset({product.asin}))
    links = BeautifulSoup(render_html(visited, catalog), "html.parser").select("a.product-link[data-visited]")
    assert [link.get_text() for link in links] == [product.asin]


def test_clickables_carry_the_actions_the_env_lists() -> None:
    env = gym.make("WebShop-Mini-HTML-v0", split="test")
    observation, info = env.reset(seed=0, options={"goal_index": 0})
    expert = ExpertPolicy(env)
    while True:
        soup = BeautifulSoup(observation, "html.parser")
        in_page = {b["value"] for b in soup.select("button[name=action]")}
        in_page |= {r["value"] for r in soup.select("input[type=radio]")}
        in_page |= {a["data-action"] for a in soup.select("a.product-link")}
        if soup.select_one("#search_input") is not None:
            in_page.add("search[<query>]")
        assert in_page == set(info["available_actions"])
        observation, _, terminated, truncated, info = env.step(expert.act(observation, info))
        if terminated or truncated:
            break
    assert info["success"]


def test_html_env_matches_the_text_env_step_by_step() -> None:
    html_env = gym.make("WebShop-Mini-HTML-v0", split="test", show_attributes=True)
    text_env = gym.make("WebShop-Mini-Text-v0", split="test", show_attributes=True)
    for goal in range(4):
        html, info = html_env.reset(seed=goal, options={"goal_index": goal})
        text, _ = text_env.reset(seed=goal, options={"goal_index": goal})
        expert = ExpertPolicy(text_env)
        for step in itertools.count():
            assert html == render_html(
                html_env.unwrapped.state, html_env.unwrapped.catalog, True, _details(html)
            )
            assert " [SEP] ".join(t.strip() for _, t in html_nodes(html)) == text
            action = expert.act(text, info) if step % 3 else "click[features]"
            html, html_reward, *html_end, _ = html_env.step(action)
            text, text_reward, *text_end, info = text_env.step(action)
            assert (html_reward, html_end) == (text_reward, text_end)
            if any(text_end):
                break
        assert info["page"] == "done"
        assert_done_page_carries_breakdown(html, info)


def _details(html: str) -> dict | None:
    data = BeautifulSoup(html, "html.parser").find("script", id="reward-details")
    return json.loads(data.string) if data is not None else None


def assert_done_page_carries_breakdown(html: str, info: dict) -> None:
    assert _details(html) == info["reward_breakdown"]
    score = BeautifulSoup(html, "html.parser").select_one("#reward pre.score").get_text()
    assert score == str(float(info["score"]))


def hostile_catalog() -> Catalog:
    base = load_catalog("mini").products[0]
    evil = dataclasses.replace(
        base,
        asin="B0EVIL0001",
        title=HOSTILE_TITLE,
        description="</p><script>alert('description')</script><img src=x onerror=alert(2)>",
        bullet_points=("<iframe src='javascript:alert(3)'></iframe>", "{{ config }}"),
        options={"color": ('"><script>alert(4)</script>', "{{ 7*7 }}", "plain")},
        option_to_image={"plain": "javascript:alert(5)"},
        main_image='x" onerror="alert(6)',
        reviews=(Review("<b>bold</b>", "<script>alert(7)</script>", "5"),),
        attributes=("<svg onload=alert(8)>",),
    )
    return Catalog("hostile", (evil,), {}, {})


def test_product_text_renders_inert_on_every_page() -> None:
    catalog = hostile_catalog()
    product = catalog.products[0]
    for state in every_page(catalog, [product], "<script>alert('instruction')</script>"):
        html = assert_same_page(state, catalog, show_attributes=True)
        soup = BeautifulSoup(html, "html.parser")
        scripts = soup.find_all("script")
        assert all(
            s.get("src") == "/static/webshop.js" or s.get("type") == "application/json" for s in scripts
        )
        assert soup.find_all(["iframe", "svg", "b"]) == []
        assert not any(attribute.startswith("on") for tag in soup.find_all(True) for attribute in tag.attrs)
        assert "49" not in html  # {{ 7*7 }} is text, never template code
    item = next(s for s in every_page(catalog, [product], "x") if s.page is Page.ITEM)
    html = render_html(item, catalog)
    assert "&lt;script&gt;window.pwned = 1; alert(1)&lt;/script&gt;" in html
    assert "{{ 7*7 }}" in html and "{% raw %}" in html
    image = BeautifulSoup(html, "html.parser").find("img", id="product-image")
    assert image["src"] == 'x" onerror="alert(6)' and "onerror" not in image.attrs


def test_done_page_breakdown_json_cannot_close_its_script() -> None:
    catalog = hostile_catalog()
    done = PageState(Page.DONE, "x", asin="B0EVIL0001", reward=1.0)
    html = render_html(done, catalog, reward_details={"noun_extractor": "</script><script>alert(9)</script>"})
    assert "</script><script>" not in html
    assert _details(html) == {"noun_extractor": "</script><script>alert(9)</script>"}


def test_templates_are_compiled_once_per_process(monkeypatch) -> None:
    catalog = load_catalog("mini")
    states = every_page(catalog, list(catalog)[:2], "x")
    for state in states:
        render_html(state, catalog)  # every template compiled by now
    loader = template_environment().loader
    calls = []
    monkeypatch.setattr(loader, "get_source", lambda *args: calls.append(args) or pytest.fail("recompiled"))
    for state in states:
        render_html(state, catalog)
    assert calls == []
    assert template_environment().autoescape is True


printable = st.text(st.characters(blacklist_categories=("Cs",)), max_size=40)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(title=printable, description=printable, option=printable, review=printable, bullet=printable)
def test_any_product_text_round_trips(
    title: str, description: str, option: str, review: str, bullet: str
) -> None:
    base = load_catalog("mini").products[0]
    product = dataclasses.replace(
        base,
        title=title,
        description=description,
        bullet_points=(bullet,),
        options={"size": (option.strip(), "m")} if option.strip() else {"size": ("m",)},
        reviews=(Review(review, review, "4"),),
    )
    catalog = Catalog("any", (product,), {}, {})
    for state in every_page(catalog, [product], title):
        assert_same_page(state, catalog, show_attributes=True)


# sha256 over every page kind's observation (`every_page` of every 5th product, with and
# without the Attributes tab), taken before the web shop's own pages were added: what the
# site shows people may change, what agents read may not.
PINNED_OBSERVATION_DIGESTS = {
    "mini": {
        "html": "aa4434738b6add5746492cb6eba6a7b38fdf0bb0d2b65485f6d37f4e6c274c21",
        "html_plain": "f827cd5565bfd832e30a82f4fb1c5683598fb0d6850e4ab2ce7ce094ae2d7f06",
        "text": "497f3c4bcd68a0e19c5959b0c32f17ba5c8cc0af1679fe6fc4842676f753cacc",
        "text_rich": "98f6c5ea8b2f9971e2a112c3f6ada82974e62407404adbe193da673e6b0d3d0a",
    },
    "1k": {
        "html": "b0fe7364145e0def0a733b88c8d14f1e58ea5b50d997dbd02da8a3fdb039a78f",
        "html_plain": "710a79e89d15e38a1e94cb03c7f972e972fac02e4a35279c5b2c46e7c2373573",
        "text": "e87344fbe45e14ac44eddda883d5dc4fbae31074ccbdf3c7f02ff4547b5c8cf6",
        "text_rich": "21bba4d7616141122ad0f0100411efd855ff8a728e30e1106f2e0f2b283b82c4",
    },
}


@pytest.mark.parametrize("which", ["mini", "1k"])
def test_observations_are_byte_for_byte_as_pinned(which: str, webshop_1k: Path) -> None:
    import hashlib

    from webshop_gym.render.text import render_text_rich

    catalog = load_catalog("mini" if which == "mini" else webshop_1k)
    renderers = {
        "html": lambda s, c, a: render_html(s, c, a, {"total": 0.5, "r_type": 1.0}),
        "html_plain": render_html,
        "text": render_text,
        "text_rich": render_text_rich,
    }
    states = every_page(catalog, list(catalog)[::5], "i need <b>red</b> & 'blue' shoes")
    digests = {}
    for mode, render in renderers.items():
        digest = hashlib.sha256()
        for show_attributes in (False, True):
            for state in states:
                digest.update(render(state, catalog, show_attributes).encode())
                digest.update(b"\0")
        digests[mode] = digest.hexdigest()
    assert digests == PINNED_OBSERVATION_DIGESTS[which]


# -- the pages the web shop serves people (site=SiteView(...)) ------------------------------


def site_page(state: PageState, catalog: Catalog, **view) -> BeautifulSoup:
    from webshop_gym.render.html import SiteView

    site = SiteView(image_url=lambda asin, options: f"/img/{asin}.svg", **view)
    return BeautifulSoup(render_html(state, catalog, True, site=site), "html.parser")


def test_site_pages_work_without_javascript() -> None:
    """Issue 28.10: every clickable is a submit button of a form (no script-driven links or radios)."""
    catalog = load_catalog("mini")
    product = next(p for p in catalog if len(p.options) >= 2)
    for state in every_page(catalog, [product], "x"):
        soup = site_page(state, catalog)
        assert soup.select("a.product-link, input[type=radio], [data-action]") == []
        clickables = {b["value"] for b in soup.select("form[method=post] button[type=submit][name=action]")}
        actions = set(Shop(catalog, engine=None, show_attributes=True).available_actions(state))  # type: ignore[arg-type]
        if state.page is Page.RESULTS and state.page_number * 10 >= len(state.result_asins):
            actions.discard("click[next >]")
        assert clickables == actions - {"search[<query>]"}
        if state.page is Page.SEARCH:
            assert soup.select_one("form input#search_input[name=search_query]") is not None
        assert soup.select_one("link[rel=icon]")["href"] == "/favicon.ico"


def test_site_results_link_titles_and_pictures_and_end_where_the_results_end() -> None:
    catalog = load_catalog("mini")
    asins = tuple(p.asin for p in list(catalog)[:25])
    results = PageState(Page.RESULTS, "x", ("red", "shoes"), asins)
    soup = site_page(results, catalog)
    card = soup.select_one("button.product-card")
    assert card.select_one("img")["src"] == f"/img/{asins[0]}.svg"
    assert card.select_one(".product-title").get_text() == catalog[asins[0]].title
    assert soup.select_one(".current-query q").get_text() == "red shoes"
    assert soup.find("button", string="Next >") is not None
    last = site_page(dataclasses.replace(results, page_number=3), catalog)
    assert last.find("button", string="Next >") is None and len(last.select(".product-card")) == 5
    past = site_page(dataclasses.replace(results, page_number=4), catalog)
    assert past.find("button", string="Next >") is None
    assert "No products on this page" in past.select_one(".empty-note").get_text()
    nothing = site_page(PageState(Page.RESULTS, "x", ("zzz",), ()), catalog)
    assert nothing.find("button", string="Next >") is None
    assert "No products match this search" in nothing.select_one(".empty-note").get_text()
    # The observation keeps the original's Next > past the end.
    assert "Next &gt;</button>" in render_html(PageState(Page.RESULTS, "x", ("zzz",), ()), catalog)


def test_site_tabs_say_when_they_are_empty() -> None:
    base = load_catalog("mini").products[0]
    bare = dataclasses.replace(base, description="", bullet_points=(), reviews=(), attributes=())
    catalog = Catalog("bare", (bare,), {}, {})
    item = PageState(Page.ITEM, "x", asin=bare.asin)
    expected = {
        "Reviews": "No reviews yet.",
        "Description": "No description.",
        "Features": "No features listed.",
        "Attributes": "No attributes listed.",
    }
    for tab, note in expected.items():
        state = dataclasses.replace(item, page=Page.SUB_PAGE, sub_page=tab)
        soup = site_page(state, catalog)
        assert soup.select_one(".empty-note").get_text() == note
        assert soup.select_one(".sub-page-title").get_text() == tab
        assert "empty-note" not in render_html(state, catalog, True)  # observations: as the original


def test_site_item_page_shows_the_query_the_options_chosen_and_the_notice() -> None:
    catalog = load_catalog("mini")
    product = next(p for p in catalog if len(p.options) >= 2)
    item = next(s for s in every_page(catalog, [product], "x") if s.page is Page.ITEM)
    soup = site_page(item, catalog, notice="That did nothing: x.", steps_left=7, goal_label="Goal 3")
    chosen = {b.get_text() for b in soup.select("button.option.selected")}
    assert chosen == {value for _, value in item.selected_options}
    assert all(b["aria-pressed"] == "true" for b in soup.select("button.option.selected"))
    assert soup.select_one(".current-query q").get_text() == "q"
    assert soup.select_one("#notice").get_text() == "That did nothing: x."
    assert soup.select_one(".site-bar").get_text(" ", strip=True).startswith("Goal 3 · 7 actions left")
    assert soup.select_one("#product-image")["src"] == f"/img/{product.asin}.svg"


# -- issue 43: the pages for people ------------------------------------------------------


def test_money_for_people() -> None:
    from webshop_gym.render.html import money

    assert money("$17.0") == "$17.00"
    assert money("$0.01 to $2.99") == "$0.01 – $2.99"
    assert money("Price: $32.0 to $41.99") == "Price: $32.00 – $41.99"
    assert money("$1234.5") == "$1,234.50" and money("$1,234.5") == "$1,234.50"
    assert money("N.A.") == "N.A."


def test_site_pages_have_their_own_titles_and_observations_keep_webshop() -> None:
    catalog = load_catalog("mini")
    product = next(p for p in catalog if p.options)
    titles = {}
    for state in every_page(catalog, [product], "x"):
        soup = site_page(state, catalog, score="0.25")
        titles[(state.page, state.sub_page, state.page_number)] = soup.title.get_text()
        assert BeautifulSoup(render_html(state, catalog), "html.parser").title.get_text() == "WebShop"
    assert titles[(Page.SEARCH, None, 1)] == "Search – WebShop"
    assert titles[(Page.RESULTS, None, 1)] == "Results for “q” – WebShop"
    assert titles[(Page.RESULTS, None, 2)] == "Results for “q”, page 2 – WebShop"
    assert titles[(Page.ITEM, None, 1)].startswith(product.title[:30])
    assert titles[(Page.SUB_PAGE, "Description", 1)].startswith("Description: " + product.title[:30])
    assert titles[(Page.DONE, None, 1)] == "Your score: 0.25 – WebShop"


def test_site_results_put_the_title_first_prices_as_money_and_pages_at_both_ends() -> None:
    base = load_catalog("mini").products
    products = [
        dataclasses.replace(p, price="$17.0" if i % 2 else "$0.01 to $2.99") for i, p in enumerate(base[:25])
    ]
    catalog = Catalog("priced", tuple(products), {}, {})
    results = PageState(Page.RESULTS, "x", ("q",), tuple(p.asin for p in products), page_number=2)
    soup = site_page(results, catalog)
    card = soup.select_one("button.product-card")
    texts = [span.get_text(" ", strip=True) for span in card.select(".product-text > span")]
    assert texts[0] == products[10].title  # the title is the label, the code comes last and small
    assert texts[1] == "$0.01 – $2.99" and texts[2] == f"Item {products[10].asin}"
    assert soup.select_one(".result .product-price").get_text() == "$0.01 – $2.99"
    assert {e.get_text() for e in soup.select(".product-price")} == {"$17.00", "$0.01 – $2.99"}
    for pager in ("#pager-top", "#pager-bottom"):  # < Prev and Next > above and below the list
        assert [b.get_text() for b in soup.select(f"{pager} button")] == ["< Prev", "Next >"]
        assert soup.select_one(f"{pager} .page-info").get_text() == "Page 2 of 3 · 25 results"
    # The observation keeps the catalogue's text and the original's layout.
    assert "$0.01 to $2.99" in render_html(results, catalog) and "pager-bottom" not in render_html(
        results, catalog
    )


def test_site_item_page_puts_title_and_price_before_options_and_buy_now_after_them() -> None:
    catalog = load_catalog("mini")
    product = next(p for p in catalog if len(p.options) >= 2 and " to " in p.price)
    item = PageState(Page.ITEM, "x", ("q",), (product.asin,), asin=product.asin)
    soup = site_page(item, catalog)
    main = soup.select_one(".item-main")
    order = [e.get("class", [e.name])[0] for e in main.find_all(recursive=False)]
    assert order[:3] == ["item-title", "item-price", "item-rating"]
    assert order[3:-2] == ["option-group"] * len(product.options) and order[-2:] == ["buy-bar", "button-bar"]
    assert main.select_one(".item-price").get_text() == "Price: " + money_of(product.price)
    assert " – $" in main.select_one(".item-price").get_text()
    assert main.select_one(".item-rating").get_text() == "No rating yet"  # "Rating: N.A."
    # No reviews on the product: the tab says so and cannot be clicked.
    reviews = main.select_one("button[value='click[reviews]']")
    assert reviews.get_text() == "No reviews" and reviews.has_attr("disabled")


def money_of(text: str) -> str:
    from webshop_gym.render.html import money

    return money(text)


def test_site_autofocus_goes_to_the_control_named_and_never_into_observations() -> None:
    catalog = load_catalog("mini")
    product = next(p for p in catalog if len(p.options) >= 2)
    value = next(iter(product.options.values()))[1]
    item = PageState(Page.ITEM, "x", ("q",), (product.asin,), asin=product.asin)
    soup = site_page(item, catalog, focus=f"click[{value}]")
    [focused] = soup.select("[autofocus]")
    assert focused["value"] == f"click[{value}]" and "option" in focused["class"]
    sub = dataclasses.replace(item, page=Page.SUB_PAGE, sub_page="Features")
    [focused] = site_page(sub, catalog, focus="click[< prev]").select("[autofocus]")
    assert focused.get_text() == "< Prev"
    results = PageState(Page.RESULTS, "x", ("q",), tuple(p.asin for p in list(catalog)[:3]))
    first = f"click[{results.result_asins[0].lower()}]"
    [focused] = site_page(results, catalog, focus=first).select("[autofocus]")
    assert focused["value"] == first
    assert all("autofocus" not in render_html(s, catalog) for s in (item, sub, results))


def test_site_search_box_refuses_only_spaces_in_the_browser() -> None:
    catalog = load_catalog("mini")
    search = site_page(PageState(Page.SEARCH, "x"), catalog).select_one("#search_input")
    assert search["pattern"] == r".*\S.*" and search.has_attr("required") and search["title"]
    assert "pattern=" not in render_html(PageState(Page.SEARCH, "x"), catalog)


def test_site_warning_and_done_page_extras() -> None:
    catalog = load_catalog("mini")
    product = catalog.products[0]
    done = PageState(Page.DONE, "i want red shorts", asin=product.asin, reward=1 / 3)
    soup = site_page(
        done, catalog, score="0.33", score_band="low", score_words="A poor match.", same_goal_url="/?goal=7"
    )
    assert soup.select_one(".goal-recap q").get_text() == "i want red shorts"
    assert "score-low" in soup.select_one("#reward")["class"]
    assert soup.select_one("#reward .score").get_text() == "0.33"
    assert soup.select_one("a#same-goal")["href"] == "/?goal=7"
    assert soup.select_one("a#same-goal").get_text() == "Try this goal again"
    item = PageState(Page.ITEM, "x", asin=product.asin)
    assert site_page(item, catalog, warning="2 actions left.").select_one("#actions-warning").get_text() == (
        "2 actions left."
    )
    assert site_page(item, catalog).select_one("#actions-warning") is None
