"""Pages as observations: pure functions from a page state to what an agent or a person sees.

- `text`: the original's ``text`` and ``text_rich`` observations (`render_text`,
  `render_text_rich`), the one ``" [SEP] "`` (`SEPARATOR`) every reader of text pages splits on,
  and `page_without_instruction`;
- `html`: the page as HTML through the Jinja ``templates/`` (compiled once), styled and
  scripted by ``static/``: the ``html`` observation and the web shop's pages.

Both join the elements `webshop_gym.shop.view_page` lists, so the modes agree node for node.
The text names import from here, as they did when this was one module; so does `render_html`.

Example:
    >>> from webshop_gym.data.model import Catalog
    >>> from webshop_gym.shop import Page, PageState
    >>> render_text(PageState(Page.SEARCH, "red shoes"), Catalog("empty", (), {}, {}))
    'WebShop [SEP] Instruction: [SEP] red shoes [SEP] Search'
"""

from __future__ import annotations

from webshop_gym.render.html import render_html
from webshop_gym.render.text import (
    SEPARATOR,
    page_without_instruction,
    render_text,
    render_text_rich,
    visible_nodes,
)

__all__ = [
    "SEPARATOR",
    "page_without_instruction",
    "render_html",
    "render_text",
    "render_text_rich",
    "visible_nodes",
]
