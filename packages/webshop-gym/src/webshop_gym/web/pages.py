"""The web shop's pages as people see them: the env's page plus a `SiteView`, and pictures.

Observations never change here: `render_html` without ``site`` is what agents read; with
a `SiteView` it is what the shop serves (see `webshop_gym.render_html`). This module works
out what the view holds: why the last action did nothing, the actions left, the done
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
import hashlib
import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any
from urllib.parse import quote
from xml.sax.saxutils import escape

from webshop_gym.data.model import Goal, Product
from webshop_gym.render_html import OutcomeRow, SiteView, render_html, template_environment
from webshop_gym.reward import attribute_matches, option_matches, price_reward
from webshop_gym.shop import Page, PageState

if TYPE_CHECKING:
    from webshop_gym.envs import WebShopEnv
    from webshop_gym.web.visits import PageRecord

__all__ = [
    "PALETTE",
    "image_url_for",
    "landing_page",
    "out_of_actions_page",
    "product_svg",
    "purchase_outcome",
    "visit_page",
]

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


# -- the done page's checks --------------------------------------------------------------


def _last_level(category: str) -> str:
    return category.split("›")[-1].strip() or category


def purchase_outcome(
    goal: Goal, product: Product, price: float, options: Mapping[str, str], breakdown: Mapping[str, Any]
) -> tuple[list[OutcomeRow], str]:
    """Each check of the reward, asked against bought, and how they make the score.

    Uses the reward's own matchers one goal attribute / option at a time, so the rows
    add up to the breakdown's counts.
    """
    r_type = float(breakdown["r_type"])
    rows = [
        OutcomeRow(
            "Product type",
            _last_level(goal.product_category) or goal.name,
            product.title or product.asin,
            "yes" if r_type == 1.0 else "no" if r_type == 0.0 else "partly",
        )
    ]
    for attribute in goal.attributes:
        matched = attribute_matches(product, [attribute]) == 1
        rows.append(
            OutcomeRow(
                "Attribute",
                attribute,
                "in the product" if matched else "not in the product",
                "yes" if matched else "no",
            )
        )
    chosen = ", ".join(f"{name}: {value}" for name, value in options.items()) or "none chosen"
    for goal_option in goal.goal_options:
        asked = goal_option if isinstance(goal_option, str) else f"{goal_option[0]}: {goal_option[1]}"
        matched = option_matches([goal_option], options.values()) == 1
        rows.append(OutcomeRow("Option", asked, chosen, "yes" if matched else "no"))
    within = price_reward(price, goal.price_upper)
    if within is not None:
        rows.append(
            OutcomeRow(
                "Price", f"at most ${goal.price_upper:.2f}", f"${price:.2f}", "yes" if within else "no"
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


def score_text(score: float | None) -> str:
    """The done page's score for people: two decimals (the observation keeps the full float)."""
    return "None" if score is None else f"{score:.2f}"


# -- whole pages ---------------------------------------------------------------------------


def _site_view(env: WebShopEnv, product_images: str, **fields: Any) -> SiteView:
    image_url = image_url_for if product_images == "generated" else _catalog_image_url(env.catalog)
    return SiteView(image_url=image_url, **fields)


def goal_label(goal_index: int, env: WebShopEnv) -> str:
    return f"Goal {goal_index} of {len(env.goal_indices)} ({env._arguments['split']} split)"


def landing_page(env: WebShopEnv, goal_index: int, product_images: str) -> str:
    """Goal ``goal_index``'s search page before the visitor's first action (no session yet)."""
    state = PageState(Page.SEARCH, env.goal_at(goal_index).instruction_text)
    site = _site_view(env, product_images, steps_left=env.max_steps, goal_label=goal_label(goal_index, env))
    return render_html(state, env.catalog, env.show_attributes, site=site)


def visit_page(env: WebShopEnv, goal_index: int, record: PageRecord, product_images: str) -> str:
    """Page ``record`` of a visit, as served (the out-of-actions page once actions ran out)."""
    if record.truncated and not record.terminated:
        return out_of_actions_page(env, goal_index, record)
    fields: dict[str, Any] = {
        "notice": record.action_error,
        "steps_left": record.steps_left,
        "goal_label": goal_label(goal_index, env),
    }
    if record.state.page is Page.DONE:
        fields["score"] = score_text(record.state.reward)
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
    return render_html(record.state, env.catalog, env.show_attributes, site=site)


def out_of_actions_page(env: WebShopEnv, goal_index: int, record: PageRecord) -> str:
    """The page a visitor who used every action sees: what happened and the ways on."""
    return (
        template_environment()
        .get_template("out_of_actions.html")
        .render(
            max_steps=env.max_steps,
            instruction=record.state.instruction,
            notice=record.action_error,
            same_goal_url=f"/?goal={goal_index}",
        )
    )
