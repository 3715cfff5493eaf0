"""The web shop's pages as people see them: the env's page plus a `SiteView`, and pictures.

Observations never change here: `render_html` without ``site`` is what agents read; with
a `SiteView` it is what the shop serves (see `webshop_gym.render.html`). This module works
out what the view holds: why the last action did nothing, in words for people (the env's
message names the valid actions for agents; a person sees the buttons instead), a
warning when so few actions are left that only a purchase still counts, which control
gets keyboard focus (the one just used, so a keyboard user keeps their place), the done
page's checks (asked against bought, from the reward's own matchers, one check at a
time), and a picture for every product, drawn here as SVG so that pages need nothing
from other hosts (the bundled catalogue's image addresses are placeholders, and the real
data's point at a store that may be out of reach).

Example:
    >>> from webshop_gym.data.catalog import load_catalog
    >>> svg = product_svg(load_catalog("mini").products[0], color=None)
    >>> svg.startswith("<svg") and "</svg>" in svg
    True
"""

from __future__ import annotations

import colorsys
import dataclasses
import hashlib
import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any
from urllib.parse import quote
from xml.sax.saxutils import escape

from webshop_gym.actions import click_action
from webshop_gym.data.model import Goal, Product
from webshop_gym.render.html import OutcomeRow, SiteView, render_html, template_environment
from webshop_gym.reward.colors import normalize_color
from webshop_gym.reward.original import attribute_matches, option_matches, price_reward
from webshop_gym.shop import NEXT_PAGE, PREV_PAGE, RESULTS_PER_PAGE, Page, PageState, view_page

if TYPE_CHECKING:
    from webshop_gym.envs import WebShopEnv
    from webshop_gym.web.visits import PageRecord

__all__ = [
    "PALETTE",
    "PEOPLE_NOTICES",
    "actions_warning",
    "image_url_for",
    "landing_page",
    "out_of_actions_page",
    "people_notice",
    "product_svg",
    "purchase_outcome",
    "trail_to",
    "visit_page",
]

# Notices the site itself gives (never the env): ``?notice=<key>`` on a page address.
PEOPLE_NOTICES = {
    "empty-search": "Type a word or two to search for. (A search of only spaces does nothing and "
    "cost no action.)",
    "visit-over": "This session is over: its pages are kept to look at, but nothing on them can be done. "
    "Start a new session to shop again.",
}

# Colour names (of the reward's colour list) that a picture can show, as RGB.
PALETTE: dict[str, str] = {
    "black": "#262626", "white": "#f4f4f4", "red": "#c62828", "blue": "#1e63c4",
    "navy": "#1d2b64", "green": "#2e7d32", "yellow": "#f2c318", "orange": "#ef6c00",
    "pink": "#ec6fa0", "purple": "#6a1b9a", "brown": "#6d4c41", "grey": "#9e9e9e",
    "gray": "#9e9e9e", "beige": "#dccbab", "gold": "#c9a227", "silver": "#c0c0c0",
    "khaki": "#bdb76b", "ivory": "#fbf8e6", "tan": "#d2b48c", "teal": "#00897b",
    "maroon": "#800000", "olive": "#6b6b1f", "coral": "#ff7f50", "lavender": "#b39ddb",
    "burgundy": "#800020", "charcoal": "#36454f", "cream": "#f7f0cf", "mint": "#98e0b0",
    "turquoise": "#40c8c0", "violet": "#8e24aa", "wine": "#722f37", "rose": "#e0607e",
    "plum": "#8e4585", "denim": "#1560bd", "camel": "#c19a6b", "copper": "#b87333",
    "bronze": "#cd7f32", "coffee": "#6f4e37", "chocolate": "#5a3825", "mustard": "#d4a017",
    "indigo": "#3f51b5", "magenta": "#c2185b", "aqua": "#26c6da", "lime": "#9ccc65",
    "peach": "#f6b48f", "nude": "#e3bc9a", "sand": "#d8c08f", "slate": "#5a6b7b",
    "steel": "#71797e", "taupe": "#8b7d6b", "rust": "#b7410e", "lilac": "#c8a2c8",
}  # fmt: skip
_WORD = re.compile(r"[a-z]+")


def colour_of(text: str) -> str | None:
    """The first palette colour named (as a whole word) in ``text``, or None."""
    for word in _WORD.findall(text.lower()):
        if word in PALETTE:
            return word
    return None


def image_url_for(asin: str, selected_options: Sequence[tuple[str, str]]) -> str:
    """The shop's picture of a product; a chosen colour option colours it."""
    colours = [c for _, value in selected_options if (c := colour_of(value)) is not None]
    url = f"/img/{quote(asin, safe='')}.svg"
    return f"{url}?color={colours[-1]}" if colours else url


def _catalog_image_url(catalog: Any) -> Any:
    def image_url(asin: str, selected_options: Sequence[tuple[str, str]]) -> str:
        product = catalog.get(asin)
        image = product.main_image
        for _, value in selected_options:
            image = product.option_to_image.get(value) or image
        return str(image)

    return image_url


def _wrap(text: str, width: int, lines: int) -> list[str]:
    out: list[str] = []
    for word in text.split():
        if out and len(out[-1]) + 1 + len(word) <= width:
            out[-1] += " " + word
        elif len(out) < lines:
            out.append(word[:width])
        else:
            out[-1] = out[-1][: width - 1] + "…"
            break
    return out


def product_svg(product: Product, color: str | None) -> str:
    """A 320 x 320 SVG picture of ``product``: its colour, kind and name (no scripts, no links)."""
    colour = color if color in PALETTE else colour_of(product.title)
    if colour is not None:
        fill = PALETTE[colour]
    else:  # no colour named: a soft hue from the category, stable across runs
        hue = int(hashlib.sha256(product.product_category.encode()).hexdigest()[:4], 16) / 0xFFFF
        fill = "#" + "".join(f"{round(255 * c):02x}" for c in colorsys.hls_to_rgb(hue, 0.62, 0.45))
    red, green, blue = (int(fill[i : i + 2], 16) for i in (1, 3, 5))
    ink = "#111" if 0.299 * red + 0.587 * green + 0.114 * blue > 150 else "#fff"
    kind = (product.product_category.split("›")[-1].strip() or product.category or "product")[:28]
    title = _wrap(product.title or product.asin, 24, 4)
    texts = "".join(
        f'<text x="160" y="{150 + 24 * i}" font-size="18">{escape(line)}</text>'
        for i, line in enumerate(title)
    )
    label = escape(f"{kind} · {colour}" if colour else kind)
    return (
        '<svg xmlns="http://www.w3.org/2000/svg" width="320" height="320" viewBox="0 0 320 320" '
        'role="img" font-family="Helvetica, Arial, sans-serif" text-anchor="middle">'
        f"<title>{escape(product.title or product.asin)}</title>"
        '<rect width="320" height="320" fill="#f3f1ee"/>'
        f'<rect x="24" y="24" width="272" height="272" rx="28" fill="{fill}"/>'
        f'<g fill="{ink}"><text x="160" y="92" font-size="15" opacity="0.85">{label}</text>{texts}'
        f'<text x="160" y="272" font-size="13" opacity="0.7">{escape(product.asin)}</text></g></svg>'
    )


# -- notices for people -----------------------------------------------------------------

# The env's messages (webshop_gym.shop, webshop_gym.actions) name valid actions for agents;
# a person sees the buttons, so each is said in a few words, and unknown ones lose their
# action list.
_PEOPLE_MESSAGES: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"No clickable (['\"])(?P<what>.*)\1 on this page\.$", re.S),
     "there is no “{what}” to click on this page."),
    (re.compile(r"There is no search bar on this page"),
     "there is no search box on this page; Back to Search leads to one."),
    (re.compile(r"click\[search\] is not an action"), "type words in the search box to search."),
    (re.compile(r"Empty argument in "), "type a word or two to search for."),
    (re.compile(r"The search query holds characters"), "the search held characters that are not text."),
    (re.compile(r"The purchase is done"), "the purchase is done, so nothing more can be done here."),
    (re.compile(r"^(An action must be|Empty action|Malformed action|Unknown action kind)"),
     "the shop does not know that action."),
)  # fmt: skip
_ACTION_LIST = re.compile(r"\s*(Valid actions: .*|No action is valid on this page\.)$", re.S)


def people_notice(action_error: str) -> str:
    """The env's reason an action did nothing, said for a person ("" when it did something).

    Examples:
        >>> people_notice("No clickable 'x' on this page. Valid actions: click[back to search], click[b01].")
        'That did nothing: there is no “x” to click on this page. It used one action.'
        >>> people_notice("")
        ''
    """
    if not action_error:
        return ""
    reason = _ACTION_LIST.sub("", action_error)
    for pattern, message in _PEOPLE_MESSAGES:
        found = pattern.search(reason)
        if found is not None:
            reason = message.format(**{k: v[:80] for k, v in found.groupdict().items()})
            break
    return f"That did nothing: {reason} It used one action."


# Actions a purchase still takes from each kind of page, and how.
_WAY_TO_BUY = {
    Page.ITEM: (1, "Buy Now"),
    Page.SUB_PAGE: (2, "< Prev back to the product, then Buy Now"),
    Page.RESULTS: (2, "open a product, then Buy Now"),
    Page.SEARCH: (3, "search, open a product, then Buy Now"),
}
WARN_AT = 3  # actions left


def _way_to_buy(state: PageState) -> tuple[int, str]:
    if state.page is Page.RESULTS and not state.page_results:
        return 4, "Back to Search, search, open a product, then Buy Now"
    return _WAY_TO_BUY.get(state.page, (0, ""))


def actions_warning(state: PageState, steps_left: int) -> str:
    """What still fits when ``steps_left`` <= 3: only Buy Now finishes the task.

    Examples:
        >>> actions_warning(PageState(Page.SUB_PAGE, "x", asin="B01"), 1)[:40]
        'Only 1 action left: too few to buy from '
    """
    if steps_left > WARN_AT or state.page not in _WAY_TO_BUY:
        return ""
    needed, how = _way_to_buy(state)
    left = f"{steps_left} action{'' if steps_left == 1 else 's'} left"
    if steps_left < needed:
        return (
            f"Only {left}: too few to buy from here ({how} takes {needed}), so this task can no "
            "longer end with a purchase."
        )
    if state.page is Page.ITEM:
        return f"{left.capitalize()}. Only Buy Now finishes the task: it buys this product as chosen."
    return f"{left.capitalize()}. Only Buy Now finishes the task, and from here that takes {needed}: {how}."


def _focus(state: PageState, actions: Sequence[str], came_from: Page | None, on_page: Sequence[str]) -> str:
    """The action of the control that gets keyboard focus when the page opens.

    The control just used where the new page has it (an option, Next >), else the one
    that opened the page just left (< Prev back from a tab or a product), else the way on
    (the first result, the first option value, the way back from a tab); "" for none.
    """
    available = set(on_page)
    if state.page is Page.RESULTS and state.page_number * RESULTS_PER_PAGE >= len(state.result_asins):
        available.discard(_NEXT)  # the site shows no Next > past the end
    candidates: list[str] = []
    if actions:
        if came_from in (Page.ITEM, Page.SUB_PAGE) and actions[-1] == _PREV:
            candidates += reversed(actions[:-1])  # up a level: what opened the page just left
        else:
            candidates.append(actions[-1])
        if came_from is Page.RESULTS and state.page is Page.RESULTS:
            candidates += [_NEXT, _PREV]  # paged to an end: the page button that is left
    if state.page is Page.RESULTS:
        candidates += [click_action(asin.lower()) for asin in state.page_results[:1]]
    elif state.page is Page.SUB_PAGE:
        candidates.append(_PREV)
    elif state.page is Page.ITEM and came_from is Page.RESULTS:  # just opened: its first option
        candidates = [a for a in on_page if a.startswith("click[") and a not in _ITEM_BUTTONS][:1]
    return next((a for a in candidates if a in available), "")


_NEXT, _PREV = click_action(NEXT_PAGE.lower()), click_action(PREV_PAGE.lower())
_ITEM_BUTTONS = frozenset(
    click_action(text)
    for text in ("back to search", "< prev", "description", "features", "reviews", "attributes", "buy now")
)


# -- the done page's checks --------------------------------------------------------------


def _last_level(category: str) -> str:
    return category.split("›")[-1].strip() or category


def purchase_outcome(
    goal: Goal, product: Product, price: float, options: Mapping[str, str], breakdown: Mapping[str, Any]
) -> tuple[list[OutcomeRow], str]:
    """Each check of the reward, asked against bought, and how they make the score.

    Uses the reward's own matchers one goal attribute / option at a time, so the rows
    add up to the breakdown's counts. Each row says where its match was looked for: the
    product type is the category of the product the goal was written from (which the
    instruction may name differently), attributes may match the product's attribute list
    (which the shop never shows) or its visible text, and each option row shows only the
    chosen value of its own option.
    """
    r_type = float(breakdown["r_type"])
    bought_kind = _last_level(product.product_category)
    rows = [
        OutcomeRow(
            "Product type",
            _last_level(goal.product_category) or goal.name,
            product.title or product.asin,
            "yes" if r_type == 1.0 else "no" if r_type == 0.0 else "partly",
            asked_note="the category of the product this goal was written from",
            bought_note=f"category: {bought_kind}" if bought_kind else "",
        )
    ]
    rows += [_attribute_row(product, attribute) for attribute in goal.attributes]
    rows += [_option_row(product, goal_option, options) for goal_option in goal.goal_options]
    within = price_reward(price, goal.price_upper)
    if within is not None:
        rows.append(
            OutcomeRow(
                "Price", f"at most ${goal.price_upper:,.2f}", f"${price:,.2f}", "yes" if within else "no"
            )
        )
    checks = len(rows) - 1
    satisfied = sum(row.matched == "yes" for row in rows[1:])
    formula = (
        f"Score = product type {r_type:g} × {satisfied} of {checks} checks matched "
        f"= {float(breakdown['total']):.2f}"
        if checks
        else f"Score = product type {r_type:g}"
    )
    return rows, formula


_HIDDEN_LIST = "matched against the product's attribute list, which the shop does not show"


def _attribute_row(product: Product, attribute: str) -> OutcomeRow:
    # attribute_matches: fuzzy against the attribute list first, else a substring of the
    # lower-cased title, bullet points or description. Where it is visible, say so.
    places = [
        place
        for place, text in (
            ("title", product.title),
            ("features", " ".join(product.bullet_points)),
            ("description", product.description),
        )
        if attribute in text.lower()
    ]
    if places:
        where = places[0] if len(places) == 1 else ", ".join(places[:-1]) + " and " + places[-1]
        return OutcomeRow("Attribute", attribute, f"in the product's {where}", "yes")
    hidden = dataclasses.replace(product, title="", bullet_points=(), description="")
    if attribute_matches(hidden, [attribute]) == 1:
        return OutcomeRow(
            "Attribute", attribute, "in the product's attribute list", "yes", bought_note=_HIDDEN_LIST
        )
    return OutcomeRow(
        "Attribute",
        attribute,
        "not found",
        "no",
        bought_note="in neither the product's title, features and description nor its attribute list "
        "(which the shop does not show)",
    )


def _option_row(
    product: Product, goal_option: str | tuple[str, str], chosen: Mapping[str, str]
) -> OutcomeRow:
    asked = goal_option if isinstance(goal_option, str) else f"{goal_option[0]}: {goal_option[1]}"
    for chosen_name, value in chosen.items():
        if option_matches([goal_option], [value]) == 1:
            return OutcomeRow("Option", asked, f"{chosen_name}: {value}" if chosen_name else value, "yes")
    # Not matched: the same option's choice, if the product has that option at all.
    name: str | None = goal_option[0] if not isinstance(goal_option, str) else None
    if name is None or name not in product.options:
        name = next(
            (n for n, values in product.options.items() if option_matches([goal_option], values)), name
        )
    if name is None:  # a human goal's bare value: a colour or a size asks for that option
        kind = _option_kind(goal_option if isinstance(goal_option, str) else goal_option[1])
        name = next((n for n in product.options if kind and kind in n.lower()), None)
    if name is not None and name in chosen:
        return OutcomeRow("Option", asked, f"{name}: {chosen[name]}" if name else chosen[name], "no")
    if name is not None and name in product.options:
        return OutcomeRow("Option", asked, f"no {name} chosen" if name else "none chosen", "no")
    return OutcomeRow("Option", asked, "not offered", "no", bought_note="this product has no such option")


_SIZE = re.compile(r"\b(?:x*-?small|x*-?large|medium|\d+(?:\.\d+)?(?:\s*(?:wide|narrow|w|m))?)\b", re.I)


def _option_kind(value: str) -> str:
    # "color" or "size" for values that are plainly one (the usual option names), else "".
    if colour_of(value) is not None or normalize_color(value) != value:
        return "colo"  # matches "color" and "colour"
    return "size" if _SIZE.search(value) else ""


def score_text(score: float | None) -> str:
    """The done page's score for people: two decimals (the observation keeps the full float)."""
    return "None" if score is None else f"{score:.2f}"


SCORE_BANDS = (  # (lowest score, band, words): the score's colour and what it means
    (1.0, "full", "Everything matched: a success."),
    (0.5, "partial", "A partial match."),
    (0.0, "low", "A poor match."),
)


def score_band(score: float | None) -> tuple[str, str]:
    """The band (colour) and words of a done page's score.

    Examples:
        >>> score_band(1.0), score_band(0.33)[0], score_band(0.75)[0]
        (('full', 'Everything matched: a success.'), 'low', 'partial')
    """
    if score is None:
        return "", ""
    for lowest, band, words in SCORE_BANDS:
        if score >= lowest - 1e-9:
            return band, words
    return SCORE_BANDS[-1][1:]


# -- whole pages ---------------------------------------------------------------------------


def _site_view(env: WebShopEnv, product_images: str, **fields: Any) -> SiteView:
    image_url = image_url_for if product_images == "generated" else _catalog_image_url(env.catalog)
    return SiteView(image_url=image_url, **fields)


def goal_label(goal_index: int, env: WebShopEnv, audience: str = "research") -> str:
    """Which goal this is: with its split for researchers, without jargon for crowd workers."""
    if audience == "crowd":
        return "Shopping task"
    return f"Goal {goal_index} of {len(env.goal_indices)} ({env._arguments['split']} split)"


def landing_page(
    env: WebShopEnv, goal_index: int, product_images: str, *, audience: str = "research", notice: str = ""
) -> str:
    """Goal ``goal_index``'s search page before the visitor's first action (no session yet).

    ``notice`` is a key of `PEOPLE_NOTICES` (others are ignored).
    """
    state = PageState(Page.SEARCH, env.goal_at(goal_index).instruction_text)
    site = _site_view(
        env,
        product_images,
        steps_left=env.max_steps,
        goal_label=goal_label(goal_index, env, audience),
        notice=PEOPLE_NOTICES.get(notice, ""),
        warning=actions_warning(state, env.max_steps),
    )
    return render_html(state, env.catalog, env.show_attributes, site=site)


def visit_page(
    env: WebShopEnv,
    goal_index: int,
    record: PageRecord,
    product_images: str,
    *,
    trail: Sequence[PageRecord] = (),
    audience: str = "research",
    notice: str = "",
) -> str:
    """Page ``record`` of a visit, as served (the out-of-actions page once actions ran out).

    Args:
        env: The visit's env (its catalogue, goal and prices).
        goal_index: The visit's goal.
        record: The page.
        product_images: ``ServerConfig.product_images``.
        trail: The visit's pages from its first to ``record`` (`trail_to`): the last
            action's control gets keyboard focus back.
        audience: ``ServerConfig.audience``.
        notice: A key of `PEOPLE_NOTICES` (the site's own notice; others are ignored).
    """
    if record.truncated and not record.terminated:
        return out_of_actions_page(env, goal_index, record)
    state = record.state
    fields: dict[str, Any] = {
        "notice": PEOPLE_NOTICES.get(notice, "") or people_notice(record.action_error),
        "steps_left": record.steps_left,
        "warning": actions_warning(state, record.steps_left),
        # Too few actions left to buy: the warning links to this goal's start.
        "restart_url": f"/?goal={goal_index}" if record.steps_left < _way_to_buy(state)[0] else "",
        "goal_label": goal_label(goal_index, env, audience),
        "same_goal_url": f"/?goal={goal_index}",
    }
    if state.page is not Page.DONE:
        on_page = view_page(state, env.catalog, env.show_attributes).actions
        actions = [str(page.action) for page in trail[1:]]
        came_from = trail[-2].state.page if len(trail) >= 2 else None
        fields["focus"] = _focus(state, actions, came_from, on_page)
    else:
        fields["score"] = score_text(state.reward)
        fields["score_band"], fields["score_words"] = score_band(state.reward)
        fields["steps_left"] = None
        if record.purchase is not None and env.goal is not None:
            asin = record.purchase["purchased_asin"]
            rows, formula = purchase_outcome(
                env.goal,
                env.catalog[asin],
                env.prices[asin],
                record.purchase["purchased_options"],
                record.purchase["reward_breakdown"],
            )
            fields["outcome"], fields["outcome_formula"] = tuple(rows), formula
    site = _site_view(env, product_images, **fields)
    return render_html(state, env.catalog, env.show_attributes, site=site)


def trail_to(pages: Sequence[PageRecord], number: int) -> list[PageRecord]:
    """The pages from a visit's first page to page ``number``, each made by an action on the one before."""
    trail = [pages[number]]
    while (parent := getattr(trail[-1], "parent", None)) is not None and len(trail) <= len(pages):
        trail.append(pages[parent])
    return trail[::-1]


def out_of_actions_page(env: WebShopEnv, goal_index: int, record: PageRecord) -> str:
    """The page a visitor who used every action sees: what happened and the ways on."""
    return (
        template_environment()
        .get_template("out_of_actions.html")
        .render(
            max_steps=env.max_steps,
            instruction=record.state.instruction,
            notice=people_notice(record.action_error).removeprefix("That did nothing: "),
            same_goal_url=f"/?goal={goal_index}",
            page_title="Out of actions – WebShop",
        )
    )
