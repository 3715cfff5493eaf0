"""Text observations: the original's ``text`` and ``text_rich`` modes, without HTML.

The original renders each page to HTML and converts it back to text with BeautifulSoup
(``WebAgentTextEnv.convert_html_to_text``): every visible text node of the page, in
document order, where a node that is only whitespace has already been collapsed by the
HTML parser to a single ``"\\n"`` (if it held a newline) or ``" "``. Nodes equal to
``"\\n"`` are dropped; then

- ``text`` (the original's ``simple=True``) joins the stripped nodes with ``" [SEP] "``;
- ``text_rich`` writes one node per line, buttons as ``[button] x [button_]``, option
  values as ``  [button] x [button_]`` or, when selected, ``  [clicked button] x
  [clicked button_]`` together with a ``You have clicked x.`` line put in front of the
  page, and product links on a line of their own as ``[button] x [button_]`` or, once
  visited, ``[clicked button] x [clicked button_]``.

Both renderers here join the page's `webshop_gym.shop.Element` list with the same rules,
so they produce the original's strings byte for byte, at a fraction of its cost.

Example:
    >>> from webshop_gym.data.model import Catalog
    >>> from webshop_gym.shop import Page, PageState
    >>> state = PageState(Page.SEARCH, "i need red shoes")
    >>> render_text(state, Catalog("empty", (), {}, {}))
    'WebShop [SEP] Instruction: [SEP] i need red shoes [SEP] Search'
    >>> render_text_rich(state, Catalog("empty", (), {}, {}))
    'WebShop\\nInstruction: \\ni need red shoes\\n[button] Search [button_]\\n'
"""

from __future__ import annotations

from collections.abc import Iterator

from webshop_gym.shop import Element, PageState, ProductSource, view_page

__all__ = ["SEPARATOR", "page_without_instruction", "render_text", "render_text_rich", "visible_nodes"]

SEPARATOR = " [SEP] "

# The characters BeautifulSoup treats as whitespace when it collapses whitespace-only
# text (BeautifulSoup.ASCII_SPACES); other Unicode spaces survive as text.
_ASCII_SPACES = "\x20\x0a\x09\x0c\x0d"


def _as_parsed(element: Element) -> str:
    """The text node BeautifulSoup's ``html.parser`` makes of the element's text."""
    text = element.text
    if element.preformatted or not text or text.strip(_ASCII_SPACES):
        return text
    return "\n" if "\n" in text else " "


def visible_nodes(
    state: PageState, catalog: ProductSource, show_attributes: bool = False
) -> Iterator[tuple[Element, str]]:
    """The page's elements with their text as the original's text conversion sees it.

    Yields (element, node text) for every element whose node the original keeps, i.e.
    all but those that are whitespace with a newline.
    """
    for element in view_page(state, catalog, show_attributes).elements:
        node = _as_parsed(element)
        if node and node != "\n":
            yield element, node


def render_text(state: PageState, catalog: ProductSource, show_attributes: bool = False) -> str:
    """The page as the original's ``text`` observation: visible text joined by `SEPARATOR`.

    Args:
        state: The page to render.
        catalog: Products by asin (a `webshop_gym.data.model.Catalog`).
        show_attributes: Whether item pages show the ``Attributes`` tab.

    Returns:
        The observation string.
    """
    return SEPARATOR.join(node.strip() for _, node in visible_nodes(state, catalog, show_attributes))


def render_text_rich(state: PageState, catalog: ProductSource, show_attributes: bool = False) -> str:
    """The page as the original's ``text_rich`` observation (its ``simple=False`` mode).

    Args:
        state: The page to render.
        catalog: Products by asin (a `webshop_gym.data.model.Catalog`).
        show_attributes: Whether item pages show the ``Attributes`` tab.

    Returns:
        The observation string: one line per text node, with button markers, each
        selected option announced by a ``You have clicked ...`` line at the top (the
        last one first, as the original prepends them one by one).
    """
    lines: list[str] = []
    announcements: list[str] = []
    for element, node in visible_nodes(state, catalog, show_attributes):
        kind = element.kind
        if kind == "button":
            lines.append(f"[button] {node} [button_]\n")
        elif kind == "option":
            if element.clicked:
                lines.append(f"  [clicked button] {node} [clicked button_]\n")
                announcements.append(f"You have clicked {node}.\n")
            else:
                lines.append(f"  [button] {node} [button_]\n")
        elif kind == "product_link":
            if element.clicked:
                lines.append(f"\n[clicked button] {node} [clicked button_]\n")
            else:
                lines.append(f"\n[button] {node} [button_]\n")
        else:
            lines.append(f"{node}\n")
    announcements.reverse()
    return "".join(announcements) + "".join(lines)


def page_without_instruction(observation: str, instruction: str) -> str:
    """A ``text`` page without the ``Instruction: [SEP] ... [SEP]`` header every page repeats.

    Prompts state the instruction once, so agents show pages without it.

    >>> page_without_instruction("WebShop [SEP] Instruction: [SEP] red shoes [SEP] Search", "red shoes")
    'WebShop [SEP] Search'
    >>> page_without_instruction("Back to Search [SEP] Next >", "red shoes")
    'Back to Search [SEP] Next >'
    """
    header = f"Instruction:{SEPARATOR}{instruction}{SEPARATOR}"
    return observation.replace(header, "", 1)
