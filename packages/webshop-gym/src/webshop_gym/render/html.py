"""HTML observations: the page state rendered through Jinja templates, as the web shop serves it.

The ``html`` observation mode and the web shop (`webshop_gym.web`) both call `render_html`:
an agent reading HTML gets the original's page, and a person in a browser gets the same
page with more on it for people (``site=``, below).
Every visible text of a page comes from `webshop_gym.shop.view_page`, the same elements
the text modes join, and each element becomes exactly one text node in a tag that says
what it is (``<button>`` for buttons, ``<label>`` for option values, ``<a
class="product-link">`` for products, other tags for plain text), as in the original's
templates. So the original's HTML-to-text conversion (BeautifulSoup's visible text nodes)
turns this HTML back into the ``text`` and ``text_rich`` observations; a test checks that
on every page of the bundled and the real 1k catalogue. Nothing here parses HTML.

Clickables carry their action: buttons and option radios submit ``action=click[...]``,
product links hold it in ``data-action``, the search form posts ``search_query``. Links
and forms are relative to the page's own URL, so the same HTML works in any session of
the web shop, and ``/static/webshop.css`` + ``/static/webshop.js`` (package data beside
the templates) style it and make option radios and product links submit (as the
original's page script did). The done page also carries the reward breakdown as JSON in a
``<script type="application/json">`` block, which the page script shows as a table;
script content is not text to the HTML-to-text conversion, so the text modes stay the
original's.

The templates are compiled once per process (`template_environment`); autoescaping is
on for every template, and product text and queries are only ever template *data*.

The web shop serves people these pages with more on them (`SiteView`, ``site=``): the
reason an action did nothing, the actions left, the current query, pictures that work
offline, buttons where the observation has script-driven links and radios (so the site
works without JavaScript), no ``Next >`` past the last result, empty-tab notes, and a done
page that shows the rounded score and what was bought against what was asked. Without
``site`` (every observation) none of that is rendered: the observation is the original's
page, and a test pins its bytes.

Example:
    >>> from webshop_gym.data.model import Catalog
    >>> from webshop_gym.shop import Page, PageState
    >>> page = render_html(PageState(Page.SEARCH, "i need <red> shoes"), Catalog("empty", (), {}, {}))
    >>> "<h4>Instruction: <br>i need &lt;red&gt; shoes</h4>" in page
    True
"""

from __future__ import annotations

import functools
import itertools
import math
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import jinja2

from webshop_gym.actions import click_action
from webshop_gym.shop import NEXT_PAGE, RESULTS_PER_PAGE, Element, Page, PageState, ProductSource, view_page

__all__ = [
    "SCORE_LABEL",
    "STATIC_DIR",
    "TEMPLATE_DIR",
    "OutcomeRow",
    "PageLayoutError",
    "SiteView",
    "money",
    "render_html",
    "template_environment",
]

_RENDER_DIR = Path(__file__).resolve().parent
TEMPLATE_DIR = _RENDER_DIR / "templates"
STATIC_DIR = _RENDER_DIR / "static"

# The done page's score line (shop._done_elements); the elements before it are the
# original's hidden purchase record.
SCORE_LABEL = "Your score (min 0.0, max 1.0)"

_TEMPLATE_BY_PAGE = {
    Page.SEARCH: "search_page.html",
    Page.RESULTS: "results_page.html",
    Page.ITEM: "item_page.html",
    Page.SUB_PAGE: "sub_page.html",
    Page.DONE: "done_page.html",
}


def _no_image(asin: str, selected_options: Sequence[tuple[str, str]]) -> str:
    return ""


@dataclass(frozen=True)
class OutcomeRow:
    """One check of a purchase, as the done page shows it to a person."""

    check: str  # "Product type", "Attribute", "Option", "Price"
    asked: str
    bought: str
    matched: str  # "yes", "no" or "partly"
    asked_note: str = ""  # what the asked value is (e.g. the target product's category)
    bought_note: str = ""  # where the match was looked for (e.g. a list the shop never shows)


@dataclass(frozen=True)
class SiteView:
    """What the web shop shows a person beyond the observation (`render_html`'s ``site``).

    Attributes:
        image_url: A product's picture: ``(asin, selected options) -> URL``.
        notice: Why the last action did nothing ("" when it did something), for people.
        steps_left: Actions left in the session (None: not shown).
        warning: What still fits in the few actions left ("" when there are enough).
        goal_label: Which goal this is, e.g. "Goal 12 of 100 (test split)".
        new_session_url: Where a new session starts.
        same_goal_url: Where this goal starts again ("" when not offered).
        restart_url: Where this goal starts again, linked from the warning when too few
            actions are left to buy ("" for no link).
        focus: The action of the control that gets keyboard focus when the page opens
            (the control just used, or the way on); "" for none.
        score: The done page's score as a person reads it (rounded).
        score_band: How good the score is, for its colour: "full", "partial" or "low".
        score_words: The score in words, e.g. "Partial match".
        outcome: The done page's checks: what was asked against what was bought.
        outcome_formula: How the checks make the score.
    """

    image_url: Callable[[str, Sequence[tuple[str, str]]], str] = _no_image
    notice: str = ""
    steps_left: int | None = None
    warning: str = ""
    goal_label: str = ""
    new_session_url: str = "/"
    same_goal_url: str = ""
    restart_url: str = ""
    focus: str = ""
    score: str = ""
    score_band: str = ""
    score_words: str = ""
    outcome: Sequence[OutcomeRow] = field(default_factory=tuple)
    outcome_formula: str = ""


_AMOUNT = re.compile(r"\$\s?(\d[\d,]*(?:\.\d+)?)")


def money(text: str) -> str:
    """Prices as people write them: cents always shown, a range with an en dash.

    Only the web shop's pages use this; observations keep the catalogue's text.

    Examples:
        >>> money("$17.0")
        '$17.00'
        >>> money("Price: $0.01 to $2.99")
        'Price: $0.01 – $2.99'
        >>> money("$1234.5")
        '$1,234.50'
    """
    formatted = _AMOUNT.sub(lambda m: f"${float(m.group(1).replace(',', '')):,.2f}", text)
    return re.sub(r"(\$[\d,]+\.\d\d) to (?=\$)", r"\1 – ", formatted)


@functools.cache
def template_environment() -> jinja2.Environment:
    """The Jinja environment of the page templates: built once per process.

    Autoescaping is on for all templates (not only ``.html`` names) and undefined
    variables raise, so a template bug fails loudly instead of rendering blanks.
    """
    environment = jinja2.Environment(
        loader=jinja2.FileSystemLoader(TEMPLATE_DIR),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=False,
        auto_reload=False,  # templates are package data: compile each once, never re-stat
    )
    environment.globals["click"] = _click
    environment.globals["site"] = None  # observations; the web shop passes a SiteView
    environment.globals["focus"] = ""  # the web shop's autofocus target (SiteView.focus)
    environment.filters["money"] = money
    return environment


@functools.cache
def _template(page: Page) -> jinja2.Template:
    return template_environment().get_template(_TEMPLATE_BY_PAGE[page])


def _click(element: Element) -> str:
    """The action that clicks ``element`` (its target, as `available_actions` spells it)."""
    if element.target is None:
        raise ValueError(f"{element!r} is not clickable")
    return click_action(element.target)


def render_html(
    state: PageState,
    catalog: ProductSource,
    show_attributes: bool = False,
    reward_details: Mapping[str, Any] | None = None,
    site: SiteView | None = None,
) -> str:
    """The page ``state`` shows, as HTML.

    Args:
        state: The page to render.
        catalog: Products by asin (a `webshop_gym.data.model.Catalog`).
        show_attributes: Whether item pages show the ``Attributes`` tab.
        reward_details: On the done page, the reward breakdown to include as JSON data
            (`webshop_gym.reward.original.RewardBreakdown.as_dict`); ignored on other pages.
        site: The page as the web shop serves it to people (see the module docstring);
            None (observations): the original's page.

    Returns:
        A complete HTML document.
    """
    elements = view_page(state, catalog, show_attributes).elements
    context = _CONTEXT_BY_PAGE[state.page](state, elements, catalog)
    if state.page is Page.DONE:
        context["reward_details"] = dict(reward_details) if reward_details is not None else None
    if site is not None:
        context.update(_site_context(state, context, site))
    return _template(state.page).render(context)


def _site_context(state: PageState, context: dict[str, Any], site: SiteView) -> dict[str, Any]:
    """What the site's version of a page adds or changes."""
    extra: dict[str, Any] = {"site": site, "query": state.query, "focus": site.focus}
    title = "Search"
    if state.page is Page.RESULTS:
        # The original offers "Next >" forever; a person gets it only where more results are.
        total = len(state.result_asins)
        has_next = state.page_number * RESULTS_PER_PAGE < total
        extra["navigation"] = [e for e in context["navigation"] if e.text != NEXT_PAGE or has_next]
        pages = max(1, math.ceil(total / RESULTS_PER_PAGE))
        extra["results_summary"] = (
            f"Page {state.page_number} of {pages} · {total} result{'' if total == 1 else 's'}"
        )
        title = f"Results for “{_shorten(state.query, 60)}”"
        if state.page_number > 1:
            title += f", page {state.page_number}"
    if state.page in (Page.ITEM, Page.SUB_PAGE) and state.asin is not None:
        product = context["product_record"]
        name = _shorten(product.title or product.asin, 60)
        title = name if state.page is Page.ITEM else f"{state.sub_page}: {name}"
    if state.page is Page.ITEM and state.asin is not None:
        extra["item_image_url"] = site.image_url(state.asin, state.selected_options)
        extra["no_reviews"] = not context["product_record"].reviews
        rating = context["rating"].text
        extra["rating_text"] = "No rating yet" if rating.endswith(": N.A.") else rating
    if state.page is Page.DONE:
        extra["instruction"] = state.instruction
        title = f"Your score: {site.score}" if site.score else "Purchase done"
    extra["page_title"] = f"{title} – WebShop"
    return extra


def _shorten(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


# -- from the page's elements to the templates' regions ---------------------------------
#
# The templates lay elements out as the original's pages do (instruction box, button bar,
# product grid, option toolbar, ...). These functions cut the element list into those
# regions, in order and without dropping or adding any element; `_Cursor` raises if the
# elements do not have the shape a region expects, so a change to `view_page` that the
# layout does not know fails the HTML tests instead of rendering a different text.


class PageLayoutError(RuntimeError):
    """The page's elements are not in the shape its template lays out (a bug, never input)."""


class _Cursor:
    """Walks a page's elements in order, taking them region by region."""

    def __init__(self, elements: Sequence[Element]) -> None:
        self.elements = elements
        self.index = 0

    def peek(self) -> Element | None:
        return self.elements[self.index] if self.index < len(self.elements) else None

    def take(self, kind: str | None = None, text: str | None = None) -> Element:
        element = self.peek()
        if (
            element is None
            or (kind is not None and element.kind != kind)
            or (text is not None and element.text != text)
        ):
            raise PageLayoutError(
                f"page layout out of step with view_page: expected {kind or 'any'} {text or ''!r} "
                f"at element {self.index}, found {element!r}"
            )
        self.index += 1
        return element

    def take_while(self, kind: str) -> list[Element]:
        taken = []
        while (element := self.peek()) is not None and element.kind == kind:
            taken.append(self.take())
        return taken

    def take_texts(self, count: int) -> list[Element]:
        return [self.take("text") for _ in range(count)]

    def done(self) -> None:
        if self.index != len(self.elements):
            raise PageLayoutError(
                f"page layout out of step with view_page: {self.elements[self.index :]!r} left over"
            )


def _search_context(state: PageState, elements: Sequence[Element], catalog: ProductSource) -> dict[str, Any]:
    cursor = _Cursor(elements)
    logo = cursor.take("text")
    header = cursor.take_while("text")
    search_button = cursor.take("button")
    cursor.done()
    return {"logo": logo, "header": header, "search_button": search_button}


@dataclass(frozen=True)
class _ProductCard:
    link: Element
    title: Element | None
    price: Element | None
    image: str
    visited: bool


def _results_context(state: PageState, elements: Sequence[Element], catalog: ProductSource) -> dict[str, Any]:
    cursor = _Cursor(elements)
    header = cursor.take_while("text")
    back = cursor.take("button")
    page_info = cursor.take("text")
    navigation = cursor.take_while("button")
    cards = []
    while cursor.peek() is not None:
        link = cursor.take("product_link")
        product = catalog.get(link.text)
        title = cursor.take("text", product.title) if product.title else None
        price = cursor.take("text", product.price) if product.price else None
        cards.append(_ProductCard(link, title, price, product.main_image, link.clicked))
    cursor.done()
    return {"header": header, "back": back, "page_info": page_info, "navigation": navigation, "cards": cards}


@dataclass(frozen=True)
class _OptionValue:
    element: Element
    checked: bool
    input_id: str


@dataclass(frozen=True)
class _OptionGroup:
    heading: Element | None
    values: list[_OptionValue]


def _option_groups(elements: Sequence[Element], selected: Mapping[str, str]) -> list[_OptionGroup]:
    """Option-name headings and their values (a group without values keeps its heading)."""
    groups: list[_OptionGroup] = []
    current: _OptionGroup | None = None
    for element in elements:
        if element.kind == "text":
            current = _OptionGroup(element, [])
            groups.append(current)
            continue
        if current is None or (
            current.values and current.values[-1].element.option_name != element.option_name
        ):
            current = _OptionGroup(None, [])
            groups.append(current)
        checked = element.option_name is not None and selected.get(element.option_name) == element.text
        current.values.append(_OptionValue(element, checked, ""))
    # Ids only label the radios (<label for=...>): numbered, never built from product text.
    counter = itertools.count()
    return [
        _OptionGroup(
            group.heading,
            [_OptionValue(v.element, v.checked, f"option-{next(counter)}") for v in group.values],
        )
        for group in groups
    ]


def _item_image(state: PageState, main_image: str, option_to_image: Mapping[str, str | None]) -> str:
    # The original's page script swaps in the image of a selected option value that has one.
    image = main_image
    for _, value in state.selected_options:
        image = option_to_image.get(value) or image
    return image


def _item_context(state: PageState, elements: Sequence[Element], catalog: ProductSource) -> dict[str, Any]:
    product = catalog.get(state.asin or "")
    cursor = _Cursor(elements)
    header = cursor.take_while("text")
    back = cursor.take("button")
    prev = cursor.take("button")
    middle: list[Element] = []
    while (element := cursor.peek()) is not None and element.kind != "button":
        middle.append(cursor.take())
    tabs_and_buy = cursor.take_while("button")
    cursor.done()
    # The middle run ends with [title], "Price: ...", "Rating: ..."; before them, options.
    trailing = 3 if product.title else 2
    if len(middle) < trailing or any(e.kind != "text" for e in middle[-trailing:]):
        raise PageLayoutError(f"page layout out of step with view_page: item details {middle[-trailing:]!r}")
    option_elements, details = middle[:-trailing], middle[-trailing:]
    title = details[0] if product.title else None
    return {
        "header": header,
        "back": back,
        "prev": prev,
        "image": _item_image(state, product.main_image, product.option_to_image),
        "option_groups": _option_groups(option_elements, dict(state.selected_options)),
        "title": title,
        "price": details[-2],
        "rating": details[-1],
        "tabs": tabs_and_buy[:-1],
        "buy": tabs_and_buy[-1],
        "product_record": product,
    }


@dataclass(frozen=True)
class _ReviewView:
    title: Element
    score: Element | None
    body: Element | None
    stars: int


def _stars(score: str) -> int:
    try:
        return max(0, min(5, int(float(score))))
    except ValueError:
        return 0


def _reviews(cursor: _Cursor, reviews: Sequence[Any]) -> Iterator[_ReviewView]:
    for review in reviews:
        title = cursor.take("text", f'"{review.title}"')
        score = cursor.take("text", review.score) if review.score else None
        body = cursor.take("text", review.body) if review.body else None
        yield _ReviewView(title, score, body, _stars(review.score))


def _sub_page_context(
    state: PageState, elements: Sequence[Element], catalog: ProductSource
) -> dict[str, Any]:
    product = catalog.get(state.asin or "")
    cursor = _Cursor(elements)
    context: dict[str, Any] = {"sub_page": state.sub_page, "product_record": product}
    context["header"] = cursor.take_while("text")
    context["back"] = cursor.take("button")
    context["prev"] = cursor.take("button")
    if state.sub_page == "Reviews":
        context["reviews"] = list(_reviews(cursor, product.reviews))
    elif state.sub_page == "Attributes":
        context["items"] = cursor.take_texts(len(product.attributes))
        context["extra"] = cursor.take_while("text")
    else:  # Description: one paragraph or none; Features: one item per bullet point
        context["items"] = cursor.take_while("text")
    cursor.done()
    return context


def _done_context(state: PageState, elements: Sequence[Element], catalog: ProductSource) -> dict[str, Any]:
    cursor = _Cursor(elements)
    thanks = cursor.take("text")
    record = []
    while (element := cursor.peek()) is not None and element.text != SCORE_LABEL:
        record.append(cursor.take())
    score_label = cursor.take("text", SCORE_LABEL)
    score = cursor.take("text")
    details_label = cursor.take("text")
    details = cursor.take("text")
    cursor.done()
    return {
        "thanks": thanks,
        "record": record,
        "score_label": score_label,
        "score": score,
        "details_label": details_label,
        "details": details,
    }


_CONTEXT_BY_PAGE = {
    Page.SEARCH: _search_context,
    Page.RESULTS: _results_context,
    Page.ITEM: _item_context,
    Page.SUB_PAGE: _sub_page_context,
    Page.DONE: _done_context,
}
