"""Text observations against the original's strings.

Fixtures are built from observations published with ReAct's WebShop runs (the search,
results and item pages of "i would like a 3 ounce bottle of bright citrus deodorant for
sensitive skin"); every other expectation is derived from the original's templates
(princeton-nlp/WebShop, web_agent_site/templates/) as its text env converts them: visible
text nodes in document order, whitespace-only nodes collapsed by the HTML parser to
"\\n" (dropped) or " ", then joined with " [SEP] " (text) or written one per line with
button markers (text_rich). Each test names the template it follows.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from webshop_gym.data.catalog import load_catalog
from webshop_gym.data.model import Catalog, Product, Review
from webshop_gym.render.text import render_text, render_text_rich, visible_nodes
from webshop_gym.shop import Page, PageState, Shop, view_page

INSTRUCTION = (
    "i would like a 3 ounce bottle of bright citrus deodorant for sensitive skin, "
    "and price lower than 50.00 dollars"
)
BRIGHT_CITRUS = (
    "Bright Citrus Deodorant by Earth Mama | Natural and Safe for Sensitive Skin, "
    "Pregnancy and Breastfeeding, Contains Organic Calendula 3-Ounce"
)
GINGER_FRESH = (
    "Ginger Fresh Deodorant by Earth Mama | Natural and Safe for Sensitive Skin, "
    "Pregnancy and Breastfeeding, Contains Organic Calendula 3-Ounce"
)
BARREL_AND_OAK = (
    "Barrel and Oak - Aluminum-Free Deodorant, Deodorant for Men, Essential Oil-Based "
    "Scent, 24-Hour Odor Protection, Cedar & Patchouli Blend, Gentle on Sensitive Skin "
    "(Mountain Sage, 2.7 oz, 2-Pack)"
)


def make_product(asin: str, title: str, price: str = "$10.99", **fields: object) -> Product:
    values: dict[str, object] = {
        "asin": asin,
        "name": title,
        "title": title,
        "description": "",
        "bullet_points": (),
        "price": price,
        "pricing": (10.99,),
        "options": {},
        "option_to_image": {},
        "attributes": (),
        "category": "beauty",
        "product_category": "Beauty & Personal Care › Personal Care › Deodorants",
        "query": "deodorant",
        "main_image": "",
        "rating": "N.A.",
        "reviews": (),
    }
    values.update(fields)
    return Product(**values)  # type: ignore[arg-type]


EARTH_MAMA = make_product(
    "B078GWRC1J",
    BRIGHT_CITRUS,
    options={
        "scent": (
            "assorted scents",
            "bright citrus",
            "calming lavender",
            "ginger fresh",
            "simply non-scents",
        ),
        "size": ("travel set (4-pack)", "3 ounce (pack of 1)", "3-ounce (2-pack)"),
    },
    description="Earth Mama's deodorant is made with organic calendula.",
    bullet_points=("Aluminum free", "Safe for pregnancy"),
    attributes=("natural", "sensitive skin"),
    reviews=(Review("Works!", "No smell all day.", "5"), Review("Meh", "", "2")),
)
PRODUCTS = (
    EARTH_MAMA,
    make_product("B078GTKVXY", GINGER_FRESH),
    make_product("B08KBVJ4XN", BARREL_AND_OAK, "$15.95"),
    *(make_product(f"B0FILLER{i:02d}", f"Filler deodorant {i}", "$5.0 to $9.5") for i in range(47)),
)
CATALOG = Catalog("fixture", PRODUCTS, {}, {})
HEADER = f"Instruction: [SEP] {INSTRUCTION}"


class FixedEngine:
    def search(self, query: str, k: int = 50) -> list[str]:
        return [p.asin for p in PRODUCTS][:k]


def shop(show_attributes: bool = False) -> Shop:
    return Shop(CATALOG, FixedEngine(), show_attributes)


def go(state: PageState, *actions: str, show_attributes: bool = False) -> PageState:
    for action in actions:
        result = shop(show_attributes).step(state, action)
        assert result.error is None, result.error
        state = result.state
    return state


START = PageState(Page.SEARCH, INSTRUCTION)
RESULTS = go(START, "search[3 ounce bright citrus deodorant sensitive skin]")
ITEM = go(RESULTS, "click[B078GWRC1J]")


# --- published observations -------------------------------------------------------------


def test_search_page_as_published() -> None:
    # search_page.html: <h2>WebShop</h2>, <h4>Instruction: <br>{{ instruction_text }}</h4>,
    # the search button.
    assert render_text(START, CATALOG) == (f"WebShop [SEP] Instruction: [SEP] {INSTRUCTION} [SEP] Search")


def test_results_page_as_published() -> None:
    # results_page.html: the instruction header, Back to Search, "Page 1 (Total results:
    # 50)", Next > (no < Prev on page 1), then asin, title and price of each product.
    fillers = " [SEP] ".join(
        f"B0FILLER{i:02d} [SEP] Filler deodorant {i} [SEP] $5.0 to $9.5" for i in range(7)
    )
    assert render_text(RESULTS, CATALOG) == (
        f"{HEADER} [SEP] Back to Search [SEP] Page 1 (Total results: 50) [SEP] Next > "
        f"[SEP] B078GWRC1J [SEP] {BRIGHT_CITRUS} [SEP] $10.99 "
        f"[SEP] B078GTKVXY [SEP] {GINGER_FRESH} [SEP] $10.99 "
        f"[SEP] B08KBVJ4XN [SEP] {BARREL_AND_OAK} [SEP] $15.95 [SEP] {fillers}"
    )


def test_item_page_as_published() -> None:
    # item_page.html: Back to Search, < Prev, each option's name and values, the title,
    # "Price: ...", "Rating: ...", the sub-page buttons and Buy Now.
    assert render_text(ITEM, CATALOG) == (
        f"{HEADER} [SEP] Back to Search [SEP] < Prev [SEP] scent [SEP] assorted scents "
        "[SEP] bright citrus [SEP] calming lavender [SEP] ginger fresh [SEP] simply non-scents "
        "[SEP] size [SEP] travel set (4-pack) [SEP] 3 ounce (pack of 1) [SEP] 3-ounce (2-pack) "
        f"[SEP] {BRIGHT_CITRUS} [SEP] Price: $10.99 [SEP] Rating: N.A. [SEP] Description "
        "[SEP] Features [SEP] Reviews [SEP] Buy Now"
    )


# --- text_rich ---------------------------------------------------------------------------


def test_rich_search_page() -> None:
    # search_page.html; text_rich keeps each node unstripped ("Instruction: ").
    assert render_text_rich(START, CATALOG) == (
        f"WebShop\nInstruction: \n{INSTRUCTION}\n[button] Search [button_]\n"
    )


def test_rich_results_page_marks_visited_products() -> None:
    # results_page.html; product links sit on a line of their own, clicked once visited.
    back = go(ITEM, "click[< prev]")
    rich = render_text_rich(back, CATALOG)
    assert rich.startswith(
        f"Instruction:\n{INSTRUCTION}\n[button] Back to Search [button_]\n"
        "Page 1 (Total results: 50)\n[button] Next > [button_]\n"
        f"\n[clicked button] B078GWRC1J [clicked button_]\n{BRIGHT_CITRUS}\n$10.99\n"
        f"\n[button] B078GTKVXY [button_]\n{GINGER_FRESH}\n$10.99\n"
    )
    assert render_text_rich(RESULTS, CATALOG).count("[clicked button]") == 0
    # Back to Search forgets visited products, as the original's session reset does.
    again = go(back, "click[back to search]", "search[deodorant]")
    assert "[clicked button]" not in render_text_rich(again, CATALOG)


def test_rich_item_page_announces_selected_options() -> None:
    # item_page.html; each selected option's label is marked and announced at the top,
    # the one further down the page first (the original prepends as it goes).
    state = go(ITEM, "click[3 ounce (pack of 1)]", "click[bright citrus]")
    assert render_text_rich(state, CATALOG) == (
        "You have clicked 3 ounce (pack of 1).\n"
        "You have clicked bright citrus.\n"
        f"Instruction:\n{INSTRUCTION}\n"
        "[button] Back to Search [button_]\n"
        "[button] < Prev [button_]\n"
        "scent\n"
        "  [button] assorted scents [button_]\n"
        "  [clicked button] bright citrus [clicked button_]\n"
        "  [button] calming lavender [button_]\n"
        "  [button] ginger fresh [button_]\n"
        "  [button] simply non-scents [button_]\n"
        "size\n"
        "  [button] travel set (4-pack) [button_]\n"
        "  [clicked button] 3 ounce (pack of 1) [clicked button_]\n"
        "  [button] 3-ounce (2-pack) [button_]\n"
        f"{BRIGHT_CITRUS}\n"
        "Price: $10.99\n"
        "Rating: N.A.\n"
        "[button] Description [button_]\n"
        "[button] Features [button_]\n"
        "[button] Reviews [button_]\n"
        "[button] Buy Now [button_]\n"
    )
    # The plain text mode does not show selections at all.
    assert render_text(state, CATALOG) == render_text(ITEM, CATALOG)


def test_rich_clicked_marks_follow_the_original_url_check() -> None:
    # The original marks a label clicked when '"value"' occurs in the page URL, which
    # holds the query and json.dumps(selected options): a value with a '"' is escaped
    # there and never shows as clicked, and a quoted query word marks a value that was
    # never selected.
    sizes = make_product("B0SIZES001", "Pillow", options={"size": ('20"x20"', "red")})
    catalog = Catalog("sizes", (sizes,), {}, {})
    sizes_shop = Shop(catalog, type("E", (), {"search": lambda self, q, k=50: ["B0SIZES001"]})())
    state = START
    for action in ('search["red" pillow]', "click[b0sizes001]", 'click[20"x20"]'):
        state = sizes_shop.step(state, action).state
    assert state.selected_options == (("size", '20"x20"'),)
    rich = render_text_rich(state, catalog)
    assert '  [button] 20"x20" [button_]\n' in rich
    assert rich.startswith("You have clicked red.\n")
    assert "  [clicked button] red [clicked button_]\n" in rich


def test_attributes_button_when_shown() -> None:
    # item_page.html: {% if show_attrs %} adds the Attributes button before Buy Now.
    text = render_text(ITEM, CATALOG, show_attributes=True)
    assert text.endswith("[SEP] Description [SEP] Features [SEP] Reviews [SEP] Attributes [SEP] Buy Now")


# --- other pages -------------------------------------------------------------------------


def test_results_page_two_and_past_the_end() -> None:
    # results_page.html: from page 2 on, "< Prev" precedes "Next >"; past the last result
    # the page lists nothing but still offers "Next >".
    page2 = go(RESULTS, "click[next >]")
    assert render_text(page2, CATALOG).startswith(
        f"{HEADER} [SEP] Back to Search [SEP] Page 2 (Total results: 50) [SEP] < Prev "
        "[SEP] Next > [SEP] B0FILLER07 [SEP] Filler deodorant 7 [SEP] $5.0 to $9.5"
    )
    page6 = dataclasses.replace(RESULTS, page_number=6)
    assert render_text(page6, CATALOG) == (
        f"{HEADER} [SEP] Back to Search [SEP] Page 6 (Total results: 50) [SEP] < Prev [SEP] Next >"
    )


def test_description_page() -> None:
    # description_page.html: Back to Search, < Prev, the description.
    state = go(ITEM, "click[description]")
    assert render_text(state, CATALOG) == (
        f"{HEADER} [SEP] Back to Search [SEP] < Prev [SEP] "
        "Earth Mama's deodorant is made with organic calendula."
    )


def test_features_page() -> None:
    # features_page.html: <li><p> {{bulletpoint}}</p></li>; the leading space is stripped
    # in text mode and kept in text_rich.
    state = go(ITEM, "click[features]")
    assert render_text(state, CATALOG) == (
        f"{HEADER} [SEP] Back to Search [SEP] < Prev [SEP] Aluminum free [SEP] Safe for pregnancy"
    )
    assert render_text_rich(state, CATALOG).endswith(
        "[button] < Prev [button_]\n Aluminum free\n Safe for pregnancy\n"
    )


def test_reviews_page() -> None:
    # review_page.html: "{{review.title}}" in quotes, the score, star icons (no text), the
    # body; an empty body makes no text.
    state = go(ITEM, "click[reviews]")
    assert render_text(state, CATALOG) == (
        f'{HEADER} [SEP] Back to Search [SEP] < Prev [SEP] "Works!" [SEP] 5 '
        '[SEP] No smell all day. [SEP] "Meh" [SEP] 2'
    )


def test_attributes_page() -> None:
    # attributes_page.html: " {{attribute}}" items, then category, query and product
    # category.
    state = go(ITEM, "click[attributes]", show_attributes=True)
    assert render_text(state, CATALOG) == (
        f"{HEADER} [SEP] Back to Search [SEP] < Prev [SEP] natural [SEP] sensitive skin "
        "[SEP] beauty [SEP] deodorant [SEP] Beauty & Personal Care › Personal Care › Deodorants"
    )


def test_done_page() -> None:
    # done_page.html as the text env renders it (only asin, options and reward given):
    # hidden blocks are still text, missing values read "None" or nothing, options are
    # Flask's tojson (sorted keys, <>&' escaped).
    state = go(ITEM, "click[bright citrus]", "click[3 ounce (pack of 1)]", "click[buy now]")
    state = dataclasses.replace(state, reward=0.75)
    assert render_text(state, CATALOG) == (
        "Thank you for shopping with us! [SEP] Your code: [SEP] None [SEP] (Paste it in your "
        "MTurk interface.) [SEP] Purchased [SEP] asin [SEP] B078GWRC1J [SEP] options [SEP] "
        '{"scent": "bright citrus", "size": "3 ounce (pack of 1)"} [SEP] attrs [SEP] None '
        "[SEP] category [SEP] None [SEP] query [SEP] None [SEP] product category [SEP] None "
        "[SEP] Target [SEP] asin [SEP] options [SEP] attrs [SEP] price upper [SEP] instuction "
        "text [SEP] category [SEP] product category [SEP] query [SEP] Goal [SEP] None [SEP] "
        "Reward [SEP] Your score (min 0.0, max 1.0) [SEP] 0.75 [SEP] Reward Details [SEP] None"
    )
    assert render_text_rich(state, CATALOG).startswith(
        "Thank you for shopping with us!\nYour code: \nNone\n (Paste it in your MTurk interface.)\n"
    )
    unscored = dataclasses.replace(state, reward=None, selected_options=(("size", "<a & 'b'>"),))
    assert '{"size": "\\u003ca \\u0026 \\u0027b\\u0027\\u003e"}' in render_text(unscored, CATALOG)
    assert "(min 0.0, max 1.0) [SEP] None [SEP]" in render_text(unscored, CATALOG)


# --- whitespace as the original's HTML parser leaves it ----------------------------------


@pytest.mark.parametrize(
    ("description", "tail"),
    [
        ("", "< Prev"),  # no text node at all
        ("\n   \n", "< Prev"),  # collapsed to "\n", which is dropped
        ("   ", "< Prev [SEP] "),  # collapsed to " ", stripped to an empty segment
        ("\xa0", "< Prev [SEP] "),  # not ASCII whitespace: kept, then stripped
        ("  two  spaces \n", "< Prev [SEP] two  spaces"),
    ],
)
def test_whitespace_only_text(description: str, tail: str) -> None:
    product = make_product("B0WHITE001", "White", description=description)
    catalog = Catalog("white", (product,), {}, {})
    state = dataclasses.replace(ITEM, page=Page.SUB_PAGE, asin="B0WHITE001", sub_page="Description")
    assert render_text(state, catalog).endswith(tail)


def test_empty_bullet_point_leaves_an_empty_segment() -> None:
    # features_page.html puts a space before each bullet point, so an empty one is a " "
    # node: an empty segment in text, a " " line in text_rich.
    product = make_product("B0WHITE002", "White", bullet_points=("a", "", "b"))
    catalog = Catalog("white", (product,), {}, {})
    state = dataclasses.replace(ITEM, page=Page.SUB_PAGE, asin="B0WHITE002", sub_page="Features")
    assert render_text(state, catalog).endswith("< Prev [SEP] a [SEP]  [SEP] b")
    assert render_text_rich(state, catalog).endswith("< Prev [button_]\n a\n \n b\n")


# --- the element list both renderers join ------------------------------------------------


def test_elements_describe_the_page() -> None:
    view = view_page(ITEM, CATALOG)
    kinds = [e.kind for e in view.elements]
    assert kinds[:4] == ["text", "text", "button", "button"]
    options = [e for e in view.elements if e.kind == "option"]
    assert [(e.option_name, e.text) for e in options[:2]] == [
        ("scent", "assorted scents"),
        ("scent", "bright citrus"),
    ]
    assert [node for _, node in visible_nodes(ITEM, CATALOG)] == [e.text for e in view.elements]
    links = [e for e in view_page(RESULTS, CATALOG).elements if e.kind == "product_link"]
    assert [e.text for e in links[:2]] == ["B078GWRC1J", "B078GTKVXY"]
    assert links[0].target == "b078gwrc1j"


def test_every_real_product_page_renders(webshop_1k: Path) -> None:
    catalog = load_catalog(webshop_1k)
    for product in catalog:
        item = PageState(Page.ITEM, "find it", ("q",), (product.asin,), 1, product.asin)
        text = render_text(item, catalog, show_attributes=True)
        assert f"[SEP] Price: {product.price} [SEP] Rating: {product.rating} [SEP]" in text
        assert render_text_rich(item, catalog).count("[button]") >= 6
        for tab in ("Description", "Features", "Reviews", "Attributes"):
            sub = dataclasses.replace(item, page=Page.SUB_PAGE, sub_page=tab)
            assert render_text(sub, catalog).startswith("Instruction: [SEP] find it [SEP] Back to Search")
