"""The WebShop site as a pure state machine: pages, what they show, and transitions.

The original runs a Flask app, renders Jinja templates to HTML and parses that HTML back
with BeautifulSoup on every step. Here a page is a frozen, hashable `PageState`, a step is
a function from state and action to the next state, and a page's content is a tuple of
visible `Element`s computed straight from the state (`view_page`). The text renderers
(`webshop_gym.render`) are thin joins over those elements, and `available_actions` comes
from the same elements, so an agent can click exactly what it reads.

Pages and transitions follow the original (princeton-nlp/WebShop: ``SimServer.receive``
in ``web_agent_site/envs/web_agent_text_env.py`` and the templates in
``web_agent_site/templates/`` in the version its text env and published agent runs use,
with ``< Prev`` on item and sub-pages; the repository also holds a variant for the human
web interface with "Current Query" lines and "< Back to Results" buttons, which the text
env's ``< Prev`` handling does not understand):

- SEARCH: the instruction and a search bar. ``search[q]`` -> RESULTS page 1 of the top 50
  hits (the query is lower-cased, as the original lower-cased every argument).
- RESULTS: ``Back to Search``; ``< Prev`` only from page 2 on; ``Next >`` on every page,
  also past the last result (the original shows it unconditionally, and the page after the
  last one lists no products); 10 products per page, each a link named by its asin.
- ITEM: ``Back to Search``; ``< Prev`` back to the results page it came from; the options
  (clicking a value selects it, replacing the earlier value of that option);
  ``Description``, ``Features``, ``Reviews`` (and ``Attributes`` when shown) sub-pages;
  ``Buy Now`` -> DONE with a `Purchase`.
- SUB_PAGE: ``Back to Search``; ``< Prev`` back to the item page, options kept.
- DONE: the thank-you page; nothing is clickable.

``Back to Search`` starts the search page afresh, forgetting the query and which products
were visited (the original resets its session there, so text_rich stops marking those
links as clicked).

Where this deliberately differs from the original:

- ``search[...]`` works only on the search page, the only page with a search bar. The
  original ran a search from any page, even after the purchase, though only the search
  page offers one.
- The original's debugging prefixes of a query (``<r>`` random products without a seed,
  ``<a>`` which crashed, ``<c>``, ``<q>``) are not special: every query goes to the engine.
- A query that is only whitespace is an error (the original searched for the spaces).
- Clicks match case-insensitively on both sides; the original lower-cased only the
  argument, so an option value with upper-case letters could never be selected.
- Invalid actions come back as an error message instead of a silent no-op.

What still differs from the original by default, outside the pages' text:

- ``info["available_actions"]`` on an item page lists the clickables in page order; the
  original lists its buttons first, then the option values (the same set on every page).
- Search: the default engine ranks as the original's Lucene (the same top 50 and scores
  on all 622 reference queries of the 1k set, the same top 50 on 1,000 of 1,000 queries at
  1.18M products; `webshop_gym.search.bm25_index`). What can still differ: text in scripts
  other than Latin, Greek and Cyrillic is segmented more roughly than Lucene's UAX #29
  tokenizer does (`webshop_gym.search.analysis`); a query of more than 1,024 distinct
  terms gets hits where the original's Lucene raised an error; the ``"bm25s"`` and
  ``"rank_bm25"`` engines rank their own way.
- Rewards: with spaCy and a model installed, r_type uses spaCy's nouns as the original
  does (``en_core_web_lg`` for the paper's rewards); without, `webshop_gym.reward.approx_nouns`
  gives spaCy's reward on 99.99% of purchases over the 1k catalogue, whose names it learnt
  from, and about 98% over names it has not seen (against ``en_core_web_sm``;
  ``benchmarks/results/reward_agreement.md``). ``info["reward_breakdown"]["noun_extractor"]``
  says which ran.

Kept from the original, though odd: ``click[search]`` is never an action (the original
refuses it on every page, so an option whose value is "search" cannot be selected); an
option value that equals a button's text acts as that button (an option "description"
opens the Description tab), because the original dispatches on the clicked text before
it looks at what was clicked; when two options share a value, clicking it selects the
value of the option listed last.
"""

from __future__ import annotations

import enum
import functools
import json
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Literal, NamedTuple, Protocol

from webshop_gym.actions import SEARCH_PLACEHOLDER, click_action, parse_action

if TYPE_CHECKING:
    from webshop_gym.data.model import Product
    from webshop_gym.search.engines import SearchEngine

__all__ = [
    "BACK_TO_SEARCH",
    "BUY_NOW",
    "NEXT_PAGE",
    "PREV_PAGE",
    "RESULTS_PER_PAGE",
    "SEARCH_RETURN_N",
    "SUB_PAGES",
    "Element",
    "ElementKind",
    "Page",
    "PageState",
    "PageView",
    "ProductSource",
    "Purchase",
    "Shop",
    "StepResult",
    "view_page",
]

# Numbers and button texts of the original (web_agent_site/engine/engine.py).
SEARCH_RETURN_N = 50
RESULTS_PER_PAGE = 10
BACK_TO_SEARCH = "Back to Search"
NEXT_PAGE = "Next >"
PREV_PAGE = "< Prev"
BUY_NOW = "Buy Now"
SEARCH_BUTTON = "Search"
SUB_PAGES = ("Description", "Features", "Reviews", "Attributes")

_SUB_PAGE_BY_KEY = {name.lower(): name for name in SUB_PAGES}
_BACK_KEY = BACK_TO_SEARCH.lower()
_NEXT_KEY = NEXT_PAGE.lower()
_PREV_KEY = PREV_PAGE.lower()
_BUY_KEY = BUY_NOW.lower()
_SEARCH_KEY = SEARCH_BUTTON.lower()

# How many page views (elements + clickables) to keep: an env step looks the same state
# up several times (step, available_actions, render), and vector envs interleave.
_VIEW_CACHE_SIZE = 1024


class Page(enum.Enum):
    """The kinds of page the site has."""

    SEARCH = "search"
    RESULTS = "results"
    ITEM = "item"
    SUB_PAGE = "sub_page"
    DONE = "done"


@dataclass(frozen=True, slots=True)
class PageState:
    """Everything that determines what the current page shows and where clicks lead.

    Frozen and hashable: equal states render identically, so states can key caches and
    be kept for search over trajectories. Copy it with `dataclasses.replace`.

    Attributes:
        page: Which page is shown.
        instruction: The goal's instruction text, shown on every page but DONE.
        keywords: The last query split on single spaces, as the original keeps it.
        result_asins: Asins of the last search's hits (at most 50), best first.
        page_number: The results page shown, or the one ITEM and SUB_PAGE return to.
        asin: The product of the ITEM / SUB_PAGE / DONE page.
        selected_options: Selected options as (name, value) pairs, in the order first
            selected (`dict()` of it maps name -> value).
        sub_page: ``"Description"``, ``"Features"``, ``"Reviews"`` or ``"Attributes"``
            on a SUB_PAGE.
        visited: Asins opened since the last ``Back to Search`` (text_rich marks them).
        reward: The score the DONE page shows; the shop does not compute rewards, so the
            environment sets it (``dataclasses.replace(state, reward=r)``). ``None``
            renders as the original renders a missing value, ``None``.
    """

    page: Page
    instruction: str
    keywords: tuple[str, ...] = ()
    result_asins: tuple[str, ...] = ()
    page_number: int = 1
    asin: str | None = None
    selected_options: tuple[tuple[str, str], ...] = ()
    sub_page: str | None = None
    visited: frozenset[str] = frozenset()
    reward: float | None = None

    @property
    def query(self) -> str:
        """The last search query (lower-cased)."""
        return " ".join(self.keywords)

    @property
    def page_results(self) -> tuple[str, ...]:
        """Asins listed on the current results page (empty past the last result)."""
        start = (self.page_number - 1) * RESULTS_PER_PAGE
        if start < 0:
            return ()
        return self.result_asins[start : start + RESULTS_PER_PAGE]


@dataclass(frozen=True, slots=True)
class Purchase:
    """What was bought: the product and the options selected when ``Buy Now`` was clicked."""

    asin: str
    options: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class StepResult:
    """The outcome of one action.

    Attributes:
        state: The next state; the same state when the action was invalid.
        error: Why the action was invalid and what is valid instead; None when it was valid.
        purchase: Set when the action bought a product (the episode is over).
    """

    state: PageState
    error: str | None = None
    purchase: Purchase | None = None


ElementKind = Literal["text", "button", "option", "product_link"]


class Element(NamedTuple):
    """One visible piece of a page, in page order (a named tuple: pages build many).

    Attributes:
        kind: ``"text"`` (plain text), ``"button"``, ``"option"`` (a selectable option
            value) or ``"product_link"`` (an asin on the results page).
        text: The text exactly as the original's template puts it in the page, before any
            whitespace handling (e.g. a bullet point keeps the template's leading space).
        clicked: Options: whether text_rich marks it as clicked; product links: whether
            the product was visited.
        target: What ``click[...]`` names to click it (``None``: not clickable that way,
            like the search page's Search button).
        option_name: For options, the option the value belongs to.
        preformatted: Text inside ``<pre>`` on the DONE page, whose whitespace HTML
            parsing keeps as is.
    """

    kind: ElementKind
    text: str
    clicked: bool = False
    target: str | None = None
    option_name: str | None = None
    preformatted: bool = False


@dataclass(frozen=True, slots=True)
class PageView:
    """A page's visible elements, its clickables and the actions valid on it."""

    elements: tuple[Element, ...]
    clickables: Mapping[str, Element]  # lower-cased click argument -> what it clicks
    actions: tuple[str, ...]


class ProductSource(Protocol):
    """What the shop needs of a catalogue: products by asin."""

    def get(self, asin: str) -> Product: ...

    def __contains__(self, asin: object) -> bool: ...

    def __hash__(self) -> int: ...


def _text(text: str) -> Element:
    return Element("text", text)


def _button(text: str) -> Element:
    return Element("button", text, target=text.lower())


_BACK_BUTTON = _button(BACK_TO_SEARCH)
_PREV_BUTTON = _button(PREV_PAGE)
_NEXT_BUTTON = _button(NEXT_PAGE)
_BUY_BUTTON = _button(BUY_NOW)
_TAB_BUTTONS = tuple(_button(tab) for tab in SUB_PAGES)


def _instruction_header(instruction: str, with_space: bool) -> list[Element]:
    # search_page.html: <h4>Instruction: <br>{{ instruction_text }}</h4>; every other page
    # (results, item, sub-pages): <h4>Instruction:<br>{{ instruction_text }}</h4>.
    # An empty instruction makes no text node at all.
    header = [_text("Instruction: " if with_space else "Instruction:")]
    if instruction:
        header.append(_text(instruction))
    return header


def _search_elements(state: PageState) -> list[Element]:
    # search_page.html: the <h2>WebShop</h2> logo, the instruction, the search button
    # (clicked through search[...], never click[...]).
    return [
        _text("WebShop"),
        *_instruction_header(state.instruction, with_space=True),
        Element("button", SEARCH_BUTTON),
    ]


def _results_elements(state: PageState, catalog: ProductSource) -> list[Element]:
    # results_page.html: Back to Search; "Page N (Total results: T)"; "< Prev" only when
    # page > 1 and "Next >" always; then per product its asin link, title and price.
    elements = _instruction_header(state.instruction, with_space=False)
    elements.append(_BACK_BUTTON)
    elements.append(_text(f"Page {state.page_number} (Total results: {len(state.result_asins)})"))
    if state.page_number > 1:
        elements.append(_PREV_BUTTON)
    elements.append(_NEXT_BUTTON)
    for asin in state.page_results:
        product = catalog.get(asin)
        elements.append(Element("product_link", asin, clicked=asin in state.visited, target=asin.lower()))
        if product.title:
            elements.append(_text(product.title))
        if product.price:
            elements.append(_text(product.price))
    return elements


def _item_url_text(state: PageState) -> str:
    # text_rich marks an option value v as clicked when '"v"' occurs in the page URL,
    # which the original builds as .../item_page/<session>/<asin>/<keywords joined by
    # '+'>/<page>/<json.dumps(selected options)>. json.dumps escapes '"' and non-ASCII
    # characters, so such values never show as clicked, and a quoted search term can make
    # an unselected value look clicked; both are reproduced for identical observations.
    # (The session id and base URL hold no quotes, so they cannot take part in a match.)
    options_json = json.dumps(dict(state.selected_options))
    return f"{state.asin}/{'+'.join(state.keywords)}/{state.page_number}/{options_json}"


def _item_elements(state: PageState, product: Product, show_attributes: bool) -> list[Element]:
    # item_page.html: Back to Search, < Prev, then per option its name and its values
    # (radio buttons with labels), the title, "Price: ...", "Rating: ...", the sub-page
    # buttons and Buy Now.
    elements = _instruction_header(state.instruction, with_space=False)
    elements.append(_BACK_BUTTON)
    elements.append(_PREV_BUTTON)
    url_text = _item_url_text(state) if product.options else ""
    for option_name, values in product.options.items():
        if option_name:
            elements.append(_text(option_name))
        for value in values:
            # An empty value has no label text to show; a blank one shows but cannot be
            # clicked, as click[] with nothing in the brackets is no action.
            if value:
                clicked = f'"{value}"' in url_text
                target = value if value.strip() else None
                elements.append(Element("option", value, clicked, target, option_name))
    if product.title:
        elements.append(_text(product.title))
    elements.append(_text(f"Price: {product.price}"))
    elements.append(_text(f"Rating: {product.rating}"))
    elements.extend(_TAB_BUTTONS if show_attributes else _TAB_BUTTONS[:3])
    elements.append(_BUY_BUTTON)
    return elements


def _sub_page_elements(state: PageState, product: Product) -> list[Element]:
    # description_page.html, features_page.html, review_page.html, attributes_page.html:
    # Back to Search and < Prev, then the tab's content.
    elements = _instruction_header(state.instruction, with_space=False)
    elements.append(_BACK_BUTTON)
    elements.append(_PREV_BUTTON)
    if state.sub_page == "Description":
        # <p class="product-info">{{product_info.Description}}</p>
        if product.description:
            elements.append(_text(product.description))
    elif state.sub_page == "Features":
        # <li><p class="product-info"> {{bulletpoint}}</p></li>: note the leading space.
        elements.extend(_text(f" {point}") for point in product.bullet_points)
    elif state.sub_page == "Reviews":
        # <h4>"{{review.title}}"</h4>, <span>{{review.score}}</span>, star icons (no
        # text), <p class="content">{{review.body}}</p>.
        for review in product.reviews:
            elements.append(_text(f'"{review.title}"'))
            if review.score:
                elements.append(_text(review.score))
            if review.body:
                elements.append(_text(review.body))
    elif state.sub_page == "Attributes":
        # <li><p class="attribute"> {{attribute}}</p></li>, then category, query and
        # product category headings.
        elements.extend(_text(f" {attribute}") for attribute in product.attributes)
        for value in (product.category, product.query, product.product_category):
            if value:
                elements.append(_text(value))
    return elements


def _tojson(value: object) -> str:
    # Flask's `tojson` filter: sorted keys, ASCII only, and <, >, &, ' escaped for HTML.
    text = json.dumps(value, sort_keys=True)
    for char, escaped in (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026"), ("'", "\\u0027")):
        text = text.replace(char, escaped)
    return text


def _done_elements(state: PageState) -> list[Element]:
    # done_page.html as the text env renders it: only asin, options and reward are given,
    # so the MTurk code and the purchased attributes/category/query render as "None", the
    # goal fields as nothing and the goal itself as "None". The "display:none" block is
    # still text to the original's HTML-to-text conversion, so it is part of the page.
    def pre(text: str) -> Element:
        return Element("text", text, preformatted=True)

    elements = [
        _text("Thank you for shopping with us!"),
        _text("Your code: "),
        pre("None"),
        _text(" (Paste it in your MTurk interface.)"),
        _text("Purchased"),
        _text("asin"),
    ]
    if state.asin:
        elements.append(pre(state.asin))
    elements += [_text("options"), pre(_tojson(dict(state.selected_options)))]
    for label in ("attrs", "category", "query", "product category"):
        elements += [_text(label), pre("None")]
    elements.append(_text("Target"))
    for label in ("asin", "options", "attrs", "price upper", "instuction text"):
        elements.append(_text(label))
    for label in ("category", "product category", "query"):
        elements.append(_text(label))
    elements += [
        _text("Goal "),
        pre("None"),
        _text("Reward"),
        _text("Your score (min 0.0, max 1.0)"),
        pre("None" if state.reward is None else str(float(state.reward))),
        _text("Reward Details "),
        pre("None"),
    ]
    return elements


def _click_key(target: str) -> str:
    # How a click argument and a clickable's text are compared: the parser strips the
    # argument, and matching ignores case.
    return target.strip().lower()


def _clickables_and_actions(
    elements: tuple[Element, ...], has_search_bar: bool
) -> tuple[dict[str, Element], tuple[str, ...]]:
    """What each click argument clicks, and the valid actions in page order."""
    # The original maps clickable text -> element with buttons and product links first and
    # option values after, so an option overrides a button of the same text and the last
    # of several equal option values wins.
    clickables: dict[str, Element] = {}
    options: list[tuple[str, Element]] = []
    actions = [SEARCH_PLACEHOLDER] if has_search_bar else []
    seen: set[str] = set()
    for element in elements:
        target = element.target
        if target is None:
            continue
        key = _click_key(target)
        if element.kind == "option":
            options.append((key, element))
        else:
            clickables[key] = element
        # click[search] is refused on every page (the original's step excludes it).
        if key not in seen and key != _SEARCH_KEY:
            seen.add(key)
            actions.append(click_action(target))
    clickables.update(options)
    clickables.pop(_SEARCH_KEY, None)
    return clickables, tuple(actions)


@functools.lru_cache(maxsize=_VIEW_CACHE_SIZE)
def view_page(state: PageState, catalog: ProductSource, show_attributes: bool = False) -> PageView:
    """The visible elements, clickables and valid actions of the page ``state`` shows.

    The one description of what each page contains: the text renderers, the
    available actions and the click dispatch all read it. Cached per (state, catalogue,
    show_attributes), since states are immutable.

    Args:
        state: The page.
        catalog: Products by asin (a `webshop_gym.data.model.Catalog`).
        show_attributes: Whether item pages show the ``Attributes`` tab.

    Returns:
        The `PageView`.
    """
    if state.page is Page.SEARCH:
        elements = _search_elements(state)
    elif state.page is Page.RESULTS:
        elements = _results_elements(state, catalog)
    elif state.page is Page.ITEM:
        elements = _item_elements(state, catalog.get(_require_asin(state)), show_attributes)
    elif state.page is Page.SUB_PAGE:
        elements = _sub_page_elements(state, catalog.get(_require_asin(state)))
    else:
        elements = _done_elements(state)
    frozen = tuple(elements)
    clickables, actions = _clickables_and_actions(frozen, state.page is Page.SEARCH)
    return PageView(frozen, clickables, actions)


def _require_asin(state: PageState) -> str:
    if state.asin is None:
        raise ValueError(f"a {state.page.name} page needs an asin: {state!r}")
    return state.asin


class Shop:
    """The WebShop site over one catalogue and one search engine.

    Example:
        >>> from webshop_gym.data.model import Catalog
        >>> class NoHits:
        ...     def search(self, query: str, k: int = 50) -> list[str]:
        ...         return []
        >>> shop = Shop(Catalog("empty", (), {}, {}), NoHits())
        >>> state = shop.start("i need red shoes")
        >>> shop.available_actions(state)
        ('search[<query>]',)
        >>> result = shop.step(state, "search[red shoes]")
        >>> result.state.page, result.state.keywords, result.error
        (<Page.RESULTS: 'results'>, ('red', 'shoes'), None)
        >>> shop.step(result.state, "click[Buy Now]").error[:36]
        "No clickable 'Buy Now' on this page."
    """

    def __init__(self, catalog: ProductSource, engine: SearchEngine, show_attributes: bool = False) -> None:
        """Creates the shop.

        Args:
            catalog: The products (a `webshop_gym.data.model.Catalog`).
            engine: Ranks products for a query: ``search(query, k) -> list[asin]``.
            show_attributes: Whether item pages have the ``Attributes`` tab.
        """
        self.catalog = catalog
        self.engine = engine
        self.show_attributes = show_attributes

    def start(self, instruction: str) -> PageState:
        """The search page an episode starts on."""
        return PageState(Page.SEARCH, instruction)

    def view(self, state: PageState) -> PageView:
        """The elements, clickables and valid actions of ``state``'s page."""
        return view_page(state, self.catalog, self.show_attributes)

    def available_actions(self, state: PageState) -> tuple[str, ...]:
        """The full action strings valid on ``state``'s page, in page order.

        ``search[<query>]`` first when the page has the search bar, then ``click[...]`` for
        every clickable: button texts lower-cased and asins lower-cased, as the
        original's clickables are, option values as they are.
        """
        return self.view(state).actions

    def step(self, state: PageState, action: str) -> StepResult:
        """Applies ``action`` to ``state``. Never raises for any action text.

        Args:
            state: The current page.
            action: ``search[keywords]`` or ``click[button text]``.

        Returns:
            The next state; for an invalid action the same state and an error message.
        """
        parsed = parse_action(action)
        if isinstance(parsed, str):
            return StepResult(state, self._with_valid_actions(parsed, state))
        if state.page is Page.DONE:
            return StepResult(state, "The purchase is done and the episode is over: no action is valid now.")
        if parsed.kind == "search":
            return self._search(state, parsed.arg)
        return self._click(state, parsed.arg)

    def _with_valid_actions(self, message: str, state: PageState) -> str:
        actions = self.available_actions(state)
        if not actions:
            return f"{message} No action is valid on this page."
        return f"{message} Valid actions: {', '.join(actions)}."

    def _search(self, state: PageState, arg: str) -> StepResult:
        if state.page is not Page.SEARCH:
            message = "There is no search bar on this page; click[back to search] leads to the search page."
            return StepResult(state, self._with_valid_actions(message, state))
        query = arg.lower()
        try:
            query.encode("utf-8")
        except UnicodeEncodeError:
            message = "The search query holds characters that are not valid text (lone surrogates)."
            return StepResult(state, self._with_valid_actions(message, state))
        hits = self.engine.search(query, SEARCH_RETURN_N)[:SEARCH_RETURN_N]
        # The original keeps the engine's order and drops hits missing from the catalogue.
        results = tuple(asin for asin in hits if asin in self.catalog)
        next_state = replace(
            state,
            page=Page.RESULTS,
            keywords=tuple(query.split(" ")),
            result_asins=results,
            page_number=1,
            asin=None,
            selected_options=(),
            sub_page=None,
        )
        return StepResult(next_state)

    def _click(self, state: PageState, arg: str) -> StepResult:
        key = _click_key(arg)
        if key == _SEARCH_KEY:
            if state.page is Page.SEARCH:
                message = "click[search] is not an action: search[your keywords] searches."
            else:
                message = "click[search] is not an action."
            return StepResult(state, self._with_valid_actions(message, state))
        target = self.view(state).clickables.get(key)
        if target is None:
            return StepResult(state, self._with_valid_actions(f"No clickable {arg!r} on this page.", state))
        # Dispatch on the clicked text first, in the original's order (SimServer.receive).
        if key == _BUY_KEY:
            asin = _require_asin(state)
            purchase = Purchase(asin, dict(state.selected_options))
            return StepResult(replace(state, page=Page.DONE, sub_page=None), purchase=purchase)
        if key == _BACK_KEY:
            return StepResult(PageState(Page.SEARCH, state.instruction))
        if key == _NEXT_KEY and state.page is Page.RESULTS:
            return StepResult(replace(state, page_number=state.page_number + 1))
        if key == _PREV_KEY:
            if state.page is Page.RESULTS:
                return StepResult(replace(state, page_number=state.page_number - 1))
            if state.page is Page.SUB_PAGE:
                return StepResult(replace(state, page=Page.ITEM, sub_page=None))
            if state.page is Page.ITEM:
                # Back to the results page the item was opened from; like the original,
                # which re-renders that page, this forgets the item's selected options.
                return StepResult(replace(state, page=Page.RESULTS, asin=None, selected_options=()))
        sub_page = _SUB_PAGE_BY_KEY.get(key)
        if sub_page is not None:
            return StepResult(replace(state, page=Page.SUB_PAGE, sub_page=sub_page))
        if target.kind == "product_link":
            asin = target.text
            next_state = replace(
                state, page=Page.ITEM, asin=asin, selected_options=(), visited=state.visited | {asin}
            )
            return StepResult(next_state)
        if target.kind == "option" and target.option_name is not None:
            return StepResult(
                replace(
                    state, selected_options=_select(state.selected_options, target.option_name, target.text)
                )
            )
        # Unreachable with the pages above: every button is dispatched by its text.
        return StepResult(state, self._with_valid_actions(f"Clicking {arg!r} does nothing here.", state))


def _select(options: tuple[tuple[str, str], ...], name: str, value: str) -> tuple[tuple[str, str], ...]:
    """Selects ``value`` for option ``name``, keeping the order options were first chosen."""
    for index, (selected_name, _) in enumerate(options):
        if selected_name == name:
            return (*options[:index], (name, value), *options[index + 1 :])
    return (*options, (name, value))
