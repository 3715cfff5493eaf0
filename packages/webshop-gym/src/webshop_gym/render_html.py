"""Moved to `webshop_gym.render.html`; this module keeps the old import path working."""

from webshop_gym.render.html import (
    SCORE_LABEL,
    STATIC_DIR,
    TEMPLATE_DIR,
    OutcomeRow,
    PageLayoutError,
    SiteView,
    money,
    render_html,
    template_environment,
)

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
