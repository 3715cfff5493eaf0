"""Generate the bundled 497-product "mini" WebShop catalogue.

The mini catalogue is synthetic: invented brands, titles, descriptions, bullet points,
prices, options, attributes and human-style instructions over 8 product categories. It is
written in the official raw formats of WebShop (Yao et al. 2022) so that the loader that
reads the real data reads it unchanged:

* ``items_shuffle_mini.json``: a list of products like ``items_shuffle*.json``
  (``asin, name, full_description, small_description, pricing, images,
  product_category, category, query, page, average_rating, customization_options``).
* ``items_ins_v2_mini.json``: ``{asin: {attributes, instruction, instruction_attributes}}``
  like ``items_ins_v2*.json``; the instruction is templated ("Find me ...") as the
  original's synthetic goals expect.
* ``items_human_ins_mini.json``: ``{asin: [{asin, instruction, attributes, options,
  instruction_attributes, instruction_options, assignment_id, worker_id}]}`` like
  ``items_human_ins.json``; one or two instructions per product.

Every instruction is solvable: its attributes are attributes of its product, its options
are option values of its product (one per option name), every price is below $900 (so the
goal builder can draw a price limit above it), and the product text names the product type
and attributes that the instruction names, so a BM25 search for the instruction finds it.

The words (categories, brands, product types, attributes, options, phrasings) live in
``mini_catalog_tables.json`` beside this script; this script holds only the logic. The
output depends only on ``SEED`` and those tables: one ``random.Random(SEED)`` drives every
draw, consuming the tables in their file order, and the JSON is written with fixed
formatting (one record per line).

Usage::

    python scripts/make_mini_catalog.py             # into src/webshop_gym/data/mini/
    python scripts/make_mini_catalog.py --out DIR   # anywhere else
"""

from __future__ import annotations

import argparse
import json
import random
import re
import string
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

SEED = 20220707  # the WebShop paper's arXiv date
N_PRODUCTS = 497
DEFAULT_OUT = Path(__file__).resolve().parents[1] / "src" / "webshop_gym" / "data" / "mini"
TABLES_FILE = Path(__file__).resolve().with_name("mini_catalog_tables.json")
PRODUCTS_FILE = "items_shuffle_mini.json"
ATTRIBUTES_FILE = "items_ins_v2_mini.json"
HUMAN_FILE = "items_human_ins_mini.json"
# A reserved top-level domain (RFC 2606): the images of invented products exist nowhere.
IMAGE_ROOT = "https://webshop-gym.invalid/mini/"
CATEGORY_SEPARATOR = " › "
MAX_PRICE = 899.0  # the goal builder needs price limits (multiples of $10 up to $990) above it
SHARE_WITH_TWO_GOALS = 0.62
SHARE_WITH_PRICE_RANGE = 0.3
SHARE_UNRATED = 0.25

# ---------------------------------------------------------------------------------------
# The data model of the generator
# ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Option:
    """One option of a product type (colour, size, ...) and how shoppers ask for it.

    Attributes:
        name: The option name as Amazon writes it ("Color", "Size").
        values: Every value products of the type may offer, in page order.
        count: How many values one product offers (inclusive bounds).
        asks: Instruction fragments with ``{v}`` for the lower-cased value.
        run: Whether a product offers a contiguous run of ``values`` (sizes) rather
            than a sample (colours).
        share: The share of products of the type that offer the option at all.
        images: Whether each value carries an image, as colour swatches do.
    """

    name: str
    values: tuple[str, ...]
    count: tuple[int, int]
    asks: tuple[str, ...]
    run: bool = False
    share: float = 1.0
    images: bool = False


@dataclass(frozen=True)
class ProductType:
    """One kind of product within a category.

    Attributes:
        noun: Words that every title of the type contains ("Running Shoes").
        spoken: How a shopper names the type in an instruction (lower case).
        article: "a", "a pair of", "some" or "" before the spoken name.
        plural: Whether the spoken name is plural ("are" rather than "is").
        query: The ``query`` field: the search that found the product on Amazon.
        path: The ``product_category`` levels.
        attributes: The attribute phrases products of the type draw from.
        options: The options products of the type may offer.
        price: Low and high bound of a product's base price in dollars.
        extras: Title words that are no attribute ("Athletic", "Classic").
        blurbs: Description openers with ``{brand}`` and ``{noun}``.
        notes: Bullet points that name no attribute (care, sizing, warranty).
        audience: Prefix of the noun in titles ("Men's ").
        names: Titles of works (books): the title becomes ``"{name}: {subtitle}"``.
        subtitles: Book subtitles, containing the noun.
    """

    noun: str
    spoken: tuple[str, ...]
    article: str
    plural: bool
    query: str
    path: tuple[str, ...]
    attributes: tuple[str, ...]
    options: tuple[Option, ...]
    price: tuple[float, float]
    extras: tuple[str, ...]
    blurbs: tuple[str, ...]
    notes: tuple[str, ...]
    audience: str = ""
    names: tuple[str, ...] = ()
    subtitles: tuple[str, ...] = ()


@dataclass(frozen=True)
class Category:
    """A category: its brands, attribute phrases, product types and description closers.

    Attributes:
        name: The ``category`` field ("shoes").
        brands: Invented brands (authors, for books); each product type deals them out.
        attributes: Maps a phrase to ``(slot, sentence)``: the slot says where the phrase
            sits in an instruction ("adj": before the noun, "with": after "with", "for":
            after "for"); the sentence is the bullet point that explains it.
        types: The product types, dealt out in turn.
        closers: Sentences that end a description.
    """

    name: str
    brands: tuple[str, ...]
    attributes: dict[str, tuple[str, str]]
    types: tuple[ProductType, ...]
    closers: tuple[str, ...]


# ---------------------------------------------------------------------------------------
# The tables
# ---------------------------------------------------------------------------------------


def load_option(record: dict[str, Any], pools: dict[str, Any]) -> Option:
    """Builds an option from its table record.

    Args:
        record: The option's record; its ``values`` and ``asks`` are either lists or the
            name of a shared list in ``pools``.
        pools: The shared lists: ``{"values": {name: [...]}, "asks": {name: [...]}}``.

    Returns:
        The option, with tuples where the record has lists.
    """

    def shared(field: str) -> tuple[str, ...]:
        value = record[field]
        return tuple(pools[field][value] if isinstance(value, str) else value)

    return Option(
        name=record["name"],
        values=shared("values"),
        count=(record["count"][0], record["count"][1]),
        asks=shared("asks"),
        run=record.get("run", False),
        share=record.get("share", 1.0),
        images=record.get("images", False),
    )


def load_product_type(record: dict[str, Any], pools: dict[str, Any]) -> ProductType:
    """Builds a product type from its table record (see ``load_option`` for ``pools``)."""
    return ProductType(
        noun=record["noun"],
        spoken=tuple(record["spoken"]),
        article=record["article"],
        plural=record["plural"],
        query=record["query"],
        path=tuple(record["path"]),
        attributes=tuple(record["attributes"]),
        options=tuple(load_option(option, pools) for option in record["options"]),
        price=(float(record["price"][0]), float(record["price"][1])),
        extras=tuple(record["extras"]),
        blurbs=tuple(record["blurbs"]),
        notes=tuple(record["notes"]),
        audience=record.get("audience", ""),
        names=tuple(record.get("names", ())),
        subtitles=tuple(record.get("subtitles", ())),
    )


def load_category(record: dict[str, Any], pools: dict[str, Any]) -> Category:
    """Builds a category from its table record (see ``load_option`` for ``pools``)."""
    return Category(
        name=record["name"],
        brands=tuple(record["brands"]),
        attributes={phrase: (slot, sentence) for phrase, (slot, sentence) in record["attributes"].items()},
        types=tuple(load_product_type(kind, pools) for kind in record["types"]),
        closers=tuple(record["closers"]),
    )


# JSON keeps lists and object keys in file order, so the draws see the same sequences
# as when these tables were Python literals.
TABLES: dict[str, Any] = json.loads(TABLES_FILE.read_text(encoding="utf-8"))
CATEGORIES: tuple[Category, ...] = tuple(load_category(category, TABLES) for category in TABLES["categories"])
ACRONYMS: dict[str, str] = TABLES["acronyms"]  # words that read as an acronym in titles
OPENERS: tuple[str, ...] = tuple(TABLES["openers"])
# Adjectives that name a material or a cut: "a soy wax candle", never "a candle that is soy wax".
PREFIX_ONLY = frozenset(TABLES["prefix_only"])
WORKER_ALPHABET = string.ascii_uppercase + string.digits
WORD = re.compile(r"\w+")

# ---------------------------------------------------------------------------------------
# Products
# ---------------------------------------------------------------------------------------


@dataclass
class Draft:
    """A generated product with what the instruction writers need to know about it."""

    raw: dict[str, Any]
    category: Category
    kind: ProductType
    brand: str
    attributes: list[str]
    options: dict[str, list[str]]  # option name -> values, as written in the product file


def title_case(phrase: str) -> str:
    """Title-cases an attribute phrase, keeping acronyms upper case ("usb c" -> "USB C")."""
    return " ".join(ACRONYMS.get(word, word[:1].upper() + word[1:]) for word in phrase.split())


def make_asins(rng: random.Random, n: int) -> list[str]:
    """``n`` distinct 10-character asins shaped like Amazon's ("B0" + 8 of [0-9A-Z])."""
    alphabet = string.digits + string.ascii_uppercase
    asins: list[str] = []
    seen: set[str] = set()
    while len(asins) < n:
        asin = "B0" + "".join(rng.choice(alphabet) for _ in range(8))
        if asin not in seen:
            seen.add(asin)
            asins.append(asin)
    return asins


def pick_values(rng: random.Random, option: Option) -> list[str]:
    """The values one product offers: a contiguous run (sizes) or an ordered sample."""
    low, high = option.count
    count = min(rng.randint(low, high), len(option.values))
    if option.run:
        start = rng.randint(0, len(option.values) - count)
        return list(option.values[start : start + count])
    chosen = set(rng.sample(range(len(option.values)), count))
    return [v for i, v in enumerate(option.values) if i in chosen]


def format_price(amount: float) -> str:
    return f"${amount:.2f}"


def draw_price(rng: random.Random, kind: ProductType, has_options: bool) -> str:
    """A price like "$24.99", or for some products with options a range "$19.99 - $27.99"."""
    low, high = kind.price
    base = rng.randint(int(low), int(high)) + rng.choice((0.99, 0.95, 0.49, 0.0, 0.97, 0.89))
    if has_options and rng.random() < SHARE_WITH_PRICE_RANGE:
        top = min(base * rng.uniform(1.12, 1.7), MAX_PRICE)
        top = int(top) + rng.choice((0.99, 0.95, 0.49))
        return f"{format_price(base)} - {format_price(top)}"
    return format_price(base)


def draw_rating(rng: random.Random) -> float | int | str:
    """An average rating as the raw files write it: a number, or "" when unrated."""
    if rng.random() < SHARE_UNRATED:
        return ""
    rating = round(rng.uniform(3.4, 5.0), 1)
    return int(rating) if rating == int(rating) else rating


def make_title(rng: random.Random, kind: ProductType, brand: str, attributes: list[str], name: str) -> str:
    """A title: brand, product noun, one or two key features and a descriptor."""
    if kind.names:
        return f"{name}: {rng.choice(kind.subtitles)}"
    features = [title_case(a) for a in rng.sample(attributes, min(len(attributes), rng.randint(1, 2)))]
    extra = rng.choice(kind.extras)
    noun = f"{kind.audience}{kind.noun}"
    if rng.random() < 0.5:
        return f"{brand} {noun} {' '.join(features)} {extra}"
    return f"{brand} {' '.join(features)} {noun}, {extra}"


def join_words(items: Sequence[str]) -> str:
    """Joins like a person writes a list: "a", "a and b", "a, b and c"."""
    if len(items) <= 1:
        return "".join(items)
    return f"{', '.join(items[:-1])} and {items[-1]}"


def make_description(
    rng: random.Random, category: Category, kind: ProductType, brand: str, attributes: list[str]
) -> str:
    """An opener, a highlights line naming every attribute, and a closer."""
    opener = rng.choice(kind.blurbs).format(brand=brand, noun=kind.noun)
    highlights = rng.choice(("Highlights: {}.", "Key features: {}.", "What you get: {}.", "Features: {}."))
    closer = rng.choice(category.closers)
    return f"{opener} {highlights.format(join_words(attributes))} {closer}"


def make_bullets(
    rng: random.Random, category: Category, kind: ProductType, attributes: list[str]
) -> list[str]:
    """One bullet point per attribute (the first leads), then notes, 3 to 6 in all."""
    style = rng.randrange(3)
    bullets = []
    for phrase in attributes:
        sentence = category.attributes[phrase][1]
        if style == 0:
            bullets.append(f"{phrase.upper()}: {sentence}")
        elif style == 1:
            bullets.append(f"{title_case(phrase)} - {sentence}")
        else:
            bullets.append(sentence)
    wanted = max(3, min(6, len(bullets) + rng.randint(1, 2)))
    notes = rng.sample(kind.notes, min(len(kind.notes), wanted - len(bullets)))
    return bullets + notes


def make_options(rng: random.Random, kind: ProductType) -> dict[str, list[str]]:
    options: dict[str, list[str]] = {}
    for option in kind.options:
        if rng.random() < option.share:
            options[option.name] = pick_values(rng, option)
    return options


def raw_options(kind: ProductType, options: dict[str, list[str]], asin: str) -> dict[str, Any] | str:
    """Options in the raw structure: name -> [{value, image}] (swatches) or [{value}]."""
    if not options:
        return ""
    specs = {o.name: o for o in kind.options}
    result: dict[str, Any] = {}
    for name, values in options.items():
        if specs[name].images:
            result[name] = [
                {"value": v, "image": f"{IMAGE_ROOT}{asin}-{name[0].lower()}{i}.jpg"}
                for i, v in enumerate(values)
            ]
        else:
            result[name] = [{"value": v} for v in values]
    return result


def make_products(rng: random.Random) -> list[Draft]:
    """Every product, category by category, then shuffled as ``items_shuffle`` is."""
    counts = [N_PRODUCTS // len(CATEGORIES)] * len(CATEGORIES)
    for i in range(N_PRODUCTS - sum(counts)):
        counts[i] += 1
    asins = make_asins(rng, N_PRODUCTS)
    drafts: list[Draft] = []
    for category, count in zip(CATEGORIES, counts, strict=True):
        brands_by_type: dict[int, list[str]] = {}
        names_by_type: dict[int, list[str]] = {}
        for t, kind in enumerate(category.types):
            brands_by_type[t] = rng.sample(category.brands, len(category.brands))
            names_by_type[t] = rng.sample(kind.names, len(kind.names)) if kind.names else []
        for i in range(count):
            t = i % len(category.types)
            kind = category.types[t]
            asin = asins[len(drafts)]
            brand = brands_by_type[t].pop()
            name = names_by_type[t].pop() if kind.names else ""
            attributes = rng.sample(kind.attributes, rng.randint(2, min(5, len(kind.attributes))))
            options = make_options(rng, kind)
            title = make_title(rng, kind, brand, attributes, name)
            raw = {
                "asin": asin,
                "name": title,
                "full_description": make_description(rng, category, kind, brand, attributes),
                "small_description": make_bullets(rng, category, kind, attributes),
                "pricing": draw_price(rng, kind, bool(options)),
                "images": [f"{IMAGE_ROOT}{asin}-{k}.jpg" for k in range(rng.randint(1, 4))],
                "product_category": CATEGORY_SEPARATOR.join(kind.path),
                "average_rating": draw_rating(rng),
                "customization_options": raw_options(kind, options, asin),
                "category": category.name,
                "query": kind.query,
                "page": rng.randint(1, 40),
            }
            drafts.append(Draft(raw, category, kind, brand, attributes, options))
    rng.shuffle(drafts)
    return drafts


# ---------------------------------------------------------------------------------------
# Instructions
# ---------------------------------------------------------------------------------------


def with_article(article: str, rest: str) -> str:
    """Puts "a"/"an" (by the next word's sound) or another article before ``rest``."""
    if article in ("a", "an"):
        first = rest.split()[0]
        vowel = first[0] in "aeiou" and not first.startswith(("usb", "uv", "one", "eu", "uni", "use", "uten"))
        article = "an" if vowel or first in ("hd", "led", "rgb") else "a"
    return f"{article} {rest}" if article else rest


def templated_instruction(draft: Draft) -> tuple[str, list[str]]:
    """The original's synthetic instruction: "Find me <adj> <query> with <...> for <...>"."""
    slots: dict[str, list[str]] = {"adj": [], "with": [], "for": []}
    for phrase in draft.attributes:
        slots[draft.category.attributes[phrase][0]].append(phrase)
    text = (
        f"Find me {', '.join(slots['adj'])} {draft.kind.query}"
        if slots["adj"]
        else f"Find me {draft.kind.query}"
    )
    if slots["with"]:
        text += f" with {', '.join(slots['with'])}"
    if slots["for"]:
        text += f" for {', '.join(slots['for'])}"
    return text, slots["adj"] + slots["with"] + slots["for"]


def option_clause(rng: random.Random, draft: Draft, chosen: list[tuple[str, str]]) -> str:
    specs = {o.name: o for o in draft.kind.options}
    parts = [rng.choice(specs[name].asks).format(v=value.lower()) for name, value in chosen]
    if not parts:
        return ""
    text = ", ".join(parts) if len(parts) == 1 or rng.random() < 0.5 else join_words(parts)
    # "the 8 inch one" reads as an afterthought: it needs the comma.
    return f", {text}" if text.startswith("the ") or rng.random() < 0.4 else f" {text}"


def human_instruction(
    rng: random.Random, draft: Draft, attributes: list[str], chosen: list[tuple[str, str]]
) -> str:
    """A lower-case, shopper-style request naming the product type, attributes and options."""
    slot_of = draft.category.attributes
    adjs = [a for a in attributes if slot_of[a][0] == "adj"]
    withs = [a for a in attributes if slot_of[a][0] == "with"]
    fors = [a for a in attributes if slot_of[a][0] == "for"]
    kind = draft.kind
    # Only names whose words the product's search document holds, so a search finds it.
    document = set(
        WORD.findall(
            " ".join(
                [draft.raw["name"], draft.raw["full_description"], draft.raw["small_description"][0]]
            ).lower()
        )
    )
    names = [s for s in kind.spoken if set(WORD.findall(s)) <= document]
    noun = rng.choice(names)
    brand, tail = "", ""
    if rng.random() < 0.12:  # some shoppers name the brand (the author, for books)
        if kind.names:
            tail = f" by {draft.brand.lower()}"
        else:
            brand = f"{draft.brand.lower()} "
    opener = rng.choice(OPENERS)
    if withs:
        tail += f" with {join_words(withs)}"
    if fors:
        tail += f" for {join_words(fors)}"
    options = option_clause(rng, draft, chosen)
    if adjs and not set(adjs) & PREFIX_ONLY and rng.random() < 0.35:
        verb = "are" if kind.plural else "is"
        body = with_article(kind.article, f"{brand}{noun}") + f" that {verb} {join_words(adjs)}" + tail
    else:
        described = (join_words(adjs) if rng.random() < 0.5 else ", ".join(adjs)) + " " if adjs else ""
        body = with_article(kind.article, f"{brand}{described}{noun}") + tail
    return f"{opener} {body}{options}"


def draw_goal(rng: random.Random, draft: Draft) -> tuple[list[str], list[tuple[str, str]]]:
    """1-3 of the product's attributes and 0-3 option values (at most one per option)."""
    attributes = rng.sample(draft.attributes, rng.randint(1, min(3, len(draft.attributes))))
    chosen: list[tuple[str, str]] = []
    for name, values in draft.options.items():
        if len(chosen) < 3 and rng.random() < 0.7:
            chosen.append((name, rng.choice(values)))
    return attributes, chosen


def make_human_instructions(rng: random.Random, drafts: list[Draft]) -> dict[str, list[dict[str, Any]]]:
    """One or two instructions per product, written by a small pool of invented workers."""
    workers = [
        "A" + "".join(rng.choice(WORKER_ALPHABET) for _ in range(rng.randint(11, 13))) for _ in range(24)
    ]
    result: dict[str, list[dict[str, Any]]] = {}
    written: set[str] = set()  # no two goals read the same
    for draft in drafts:
        entries: list[dict[str, Any]] = []
        seen: set[tuple[tuple[str, ...], tuple[tuple[str, str], ...]]] = set()
        wanted = 2 if rng.random() < SHARE_WITH_TWO_GOALS else 1
        for _ in range(8):  # a second instruction must ask for something else than the first
            if len(entries) == wanted:
                break
            attributes, chosen = draw_goal(rng, draft)
            key = (tuple(sorted(attributes)), tuple(sorted(chosen)))
            instruction = human_instruction(rng, draft, attributes, chosen)
            if key in seen or instruction in written:
                continue
            seen.add(key)
            written.add(instruction)
            entries.append(
                {
                    "asin": draft.raw["asin"],
                    "instruction": instruction,
                    "attributes": list(draft.attributes),
                    "options": [f"{n.lower()}: {v.lower()}" for n, v in chosen] or [""],
                    "instruction_attributes": attributes,
                    "instruction_options": [v.lower() for _, v in chosen],
                    "assignment_id": "".join(rng.choice(WORKER_ALPHABET) for _ in range(30)),
                    "worker_id": rng.choice(workers),
                }
            )
        result[draft.raw["asin"]] = entries
    return result


def make_attribute_file(drafts: list[Draft]) -> dict[str, dict[str, Any]]:
    result: dict[str, dict[str, Any]] = {}
    for draft in drafts:
        instruction, instruction_attributes = templated_instruction(draft)
        result[draft.raw["asin"]] = {
            "attributes": list(draft.attributes),
            "instruction": instruction,
            "instruction_attributes": instruction_attributes,
        }
    return result


# ---------------------------------------------------------------------------------------
# Checks and output
# ---------------------------------------------------------------------------------------


def check_text(drafts: list[Draft]) -> None:
    """Product text must name only the product's own attributes.

    The reward also credits a goal attribute found anywhere in a product's title, bullet
    points or description, so a product that mentions an attribute it lacks would be a
    false match for goals asking for it.
    """
    problems = []
    for draft in drafts:
        text = " ".join(
            [draft.raw["name"], draft.raw["full_description"], *draft.raw["small_description"]]
        ).lower()
        problems += [
            f"{draft.raw['asin']} mentions {phrase!r} but lacks it: {text}"
            for phrase in draft.category.attributes
            if phrase in text and phrase not in draft.attributes
        ]
        problems += [
            f"{draft.raw['asin']} never mentions its attribute {p!r}"
            for p in draft.attributes
            if p not in text
        ]
    if problems:
        raise AssertionError("\n".join(problems))


def dumps_records(data: list[Any] | dict[str, Any]) -> str:
    """JSON with one record per line: stable, diff-friendly and compact."""
    if isinstance(data, list):
        body = ",\n".join(json.dumps(item, ensure_ascii=False) for item in data)
        return f"[\n{body}\n]\n"
    body = ",\n".join(
        f"{json.dumps(k, ensure_ascii=False)}: {json.dumps(v, ensure_ascii=False)}" for k, v in data.items()
    )
    return f"{{\n{body}\n}}\n"


def generate(seed: int = SEED) -> dict[str, str]:
    """The three files' contents, keyed by file name."""
    rng = random.Random(seed)
    drafts = make_products(rng)
    check_text(drafts)
    human = make_human_instructions(rng, drafts)
    return {
        PRODUCTS_FILE: dumps_records([d.raw for d in drafts]),
        ATTRIBUTES_FILE: dumps_records(make_attribute_file(drafts)),
        HUMAN_FILE: dumps_records(human),
    }


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--out", type=Path, default=DEFAULT_OUT, help=f"output directory (default: {DEFAULT_OUT})"
    )
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    for name, text in generate().items():
        (args.out / name).write_text(text, encoding="utf-8", newline="\n")
        print(f"wrote {args.out / name} ({len(text.encode('utf-8')):,} bytes)")


if __name__ == "__main__":
    main()
