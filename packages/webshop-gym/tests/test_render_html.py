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
from webshop_gym.data.catalog import load_catalog
from webshop_gym.data.model import Catalog, Product, Review
from webshop_gym.render import render_text, visible_nodes
from webshop_gym.render_html import render_html, template_environment
from webshop_gym.scripted import ExpertPolicy
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
