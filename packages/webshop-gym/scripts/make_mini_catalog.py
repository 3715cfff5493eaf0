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

The output depends only on ``SEED``: one ``random.Random(SEED)`` drives every draw, in a
fixed order, and the JSON is written with fixed formatting (one record per line).

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

    ``attributes`` maps a phrase to ``(slot, sentence)``: the slot says where the phrase
    sits in an instruction ("adj": before the noun, "with": after "with", "for": after
    "for"); the sentence is the bullet point that explains it.
    """

    name: str
    brands: tuple[str, ...]
    attributes: dict[str, tuple[str, str]]
    types: tuple[ProductType, ...]
    closers: tuple[str, ...]


def words(text: str) -> tuple[str, ...]:
    """Splits ``"a | b | c"`` into ``("a", "b", "c")``: keeps the long data lists short."""
    return tuple(part.strip() for part in text.split("|"))


# ---------------------------------------------------------------------------------------
# Shared option value pools and phrasings
# ---------------------------------------------------------------------------------------

COLOR_ASKS = ("in {v}", "in {v} color", "in the color {v}", "in {v} please")
SIZE_ASKS = ("size {v}", "in size {v}", "in a size {v}")
FIT_ASKS = ("in size {v}", "size {v}", "in {v}")
AMOUNT_ASKS = ("in the {v} size", "in {v}", "the {v} one")
PACK_ASKS = ("in a {v}", "as a {v}", "{v}")
STYLE_ASKS = ("in {v}", "the {v} version", "in the {v} style")
FORMAT_ASKS = ("in {v}", "the {v} edition", "in {v} format")

SHOE_COLORS = words(
    "Black | White | Navy | Grey | Red | Royal Blue | Olive Green | Brown | Tan | Burgundy | Beige"
    " | Charcoal | Light Grey | Black White"
)
WOMENS_SHOE_COLORS = words(
    "Black | White | Blush Pink | Navy | Taupe | Grey | Lavender | Tan | Sage Green | Burgundy"
    " | Leopard | Cream | Mint"
)
MENS_SHOE_SIZES = tuple(str(s) for s in (7, 7.5, 8, 8.5, 9, 9.5, 10, 10.5, 11, 11.5, 12, 13, 14))
WOMENS_SHOE_SIZES = tuple(str(s) for s in (5, 5.5, 6, 6.5, 7, 7.5, 8, 8.5, 9, 9.5, 10, 11))
APPAREL_SIZES = words("X-Small | Small | Medium | Large | X-Large | XX-Large | 3X-Large")
APPAREL_COLORS = words(
    "Black | White | Heather Grey | Navy Blue | Olive | Maroon | Charcoal | Forest Green | Sky Blue"
    " | Mustard Yellow | Dusty Rose | Khaki | Burnt Orange | Teal"
)
GADGET_COLORS = words(
    "Black | White | Midnight Blue | Silver | Space Grey | Rose Gold | Sage Green | Coral Red"
)
HOME_COLORS = words(
    "Ivory | Charcoal Grey | Navy Blue | Sage Green | Blush Pink | Beige | Taupe | Mustard Yellow"
    " | Teal | Light Grey | Rust | White | Black | Dusty Blue"
)
KITCHEN_COLORS = words("Black | Stainless Steel | Matte White | Sage Green | Red | Cream | Navy | Grey")
GEAR_COLORS = words(
    "Black | Purple | Teal | Pink | Blue | Grey | Green | Orange | Lavender | Red | Midnight Navy"
)

# ---------------------------------------------------------------------------------------
# Categories
# ---------------------------------------------------------------------------------------

SHOES = Category(
    name="shoes",
    brands=words(
        "Stridewell | Trailmark | Pacefoot | Cobblerock | Ardenne | Softstep | Northkin | Velora"
        " | Bramblewood | Kestrel | Marlow & Finch | Dunmore | Tidewalk | Rivetline | Lunaro | Halden"
    ),
    attributes={
        "non slip": ("adj", "A non slip outsole grips wet floors and slick pavement."),
        "rubber sole": ("with", "The durable rubber sole adds traction and resists wear."),
        "arch support": ("with", "A contoured footbed with built in arch support eases foot fatigue."),
        "memory foam": ("with", "A memory foam insole molds to your foot for all day comfort."),
        "water resistant": ("adj", "The water resistant upper sheds puddles and light rain."),
        "waterproof": ("adj", "Seam sealed waterproof construction keeps feet dry through streams and snow."),
        "breathable mesh": ("with", "Breathable mesh panels let air flow so feet stay cool."),
        "lightweight": ("adj", "A lightweight build that never weighs you down."),
        "steel toe": ("adj", "An ASTM rated steel toe cap guards against falling objects."),
        "slip resistant": ("adj", "Slip resistant lugs hold firm on oily shop floors and loose gravel."),
        "leather upper": ("with", "A full grain leather upper softens and shapes to your foot."),
        "ankle support": ("with", "A high padded shaft gives ankle support on uneven ground."),
        "wide toe box": ("with", "A wide toe box gives toes room to spread naturally."),
        "open toe": ("adj", "An open toe design keeps you cool on hot summer days."),
        "adjustable strap": ("with", "An adjustable strap with hook and loop closure dials in the fit."),
        "faux fur lining": ("with", "Soft faux fur lining wraps your feet in warmth."),
        "machine washable": ("adj", "Machine washable on a gentle cycle for easy care."),
        "cushioned insole": ("with", "A cushioned insole softens every step."),
        "shock absorbing": ("adj", "A shock absorbing midsole cushions every heel strike."),
        "indoor outdoor": ("adj", "The indoor outdoor sole lets you step out to grab the mail."),
        "quick dry": ("adj", "Quick dry materials shrug off beach and pool water."),
        "padded collar": ("with", "A padded collar and tongue prevent rubbing at the heel."),
        "oil resistant": ("adj", "An oil resistant outsole stands up to garage and workshop floors."),
    },
    types=(
        ProductType(
            noun="Running Shoes",
            audience="Men's ",
            spoken=("running shoes", "men's running shoes"),
            article="a pair of",
            plural=True,
            query="men's running shoes",
            path=words("Clothing, Shoes & Jewelry | Men | Shoes | Athletic | Running | Road Running"),
            attributes=words(
                "non slip | breathable mesh | lightweight | arch support | memory foam"
                " | shock absorbing | rubber sole | water resistant"
            ),
            options=(
                Option("Color", SHOE_COLORS, (3, 7), COLOR_ASKS, images=True),
                Option("Size", MENS_SHOE_SIZES, (6, 12), SIZE_ASKS, run=True),
            ),
            price=(34.0, 139.0),
            extras=words(
                "Athletic Sneakers | Road Runners | Gym Trainers | Jogging Sneakers | Tennis Sneakers"
            ),
            blurbs=(
                "Built for daily miles, the {brand} {noun} pair a responsive midsole with a sock like fit.",
                "From easy jogs to tempo runs, {brand} {noun} keep a smooth, stable stride.",
                "The {brand} {noun} are made for runners who log miles before work and after dinner.",
            ),
            notes=(
                "True to size; order a half size up for a roomier fit.",
                "Reflective heel details add visibility at dawn and dusk.",
                "Backed by a 90 day comfort guarantee.",
            ),
        ),
        ProductType(
            noun="Walking Shoes",
            audience="Women's ",
            spoken=("walking shoes", "women's walking shoes"),
            article="a pair of",
            plural=True,
            query="women's walking shoes",
            path=words("Clothing, Shoes & Jewelry | Women | Shoes | Athletic | Walking"),
            attributes=words(
                "arch support | memory foam | wide toe box | lightweight | non slip | breathable mesh"
                " | machine washable | shock absorbing"
            ),
            options=(
                Option("Color", WOMENS_SHOE_COLORS, (3, 7), COLOR_ASKS, images=True),
                Option("Size", WOMENS_SHOE_SIZES, (6, 11), SIZE_ASKS, run=True),
            ),
            price=(29.0, 119.0),
            extras=words(
                "Casual Sneakers | Fashion Sneakers | Nurse Shoes | Travel Sneakers | Slip On Sneakers"
            ),
            blurbs=(
                "The {brand} {noun} turn long days on your feet into easy strolls.",
                "Designed with podiatrists, {brand} {noun} support errands, travel and shifts alike.",
                "Step out in the {brand} {noun}, an everyday pair that goes from the park to the office.",
            ),
            notes=(
                "Runs true to size in regular width.",
                "Pull tab at the heel makes them easy to put on.",
                "Great for nurses, teachers and travelers.",
            ),
        ),
        ProductType(
            noun="Hiking Boots",
            audience="Men's ",
            spoken=("hiking boots", "men's hiking boots"),
            article="a pair of",
            plural=True,
            query="men's hiking boots",
            path=words(
                "Clothing, Shoes & Jewelry | Men | Shoes | Outdoor | Hiking & Trekking | Hiking Boots"
            ),
            attributes=words(
                "waterproof | ankle support | rubber sole | leather upper | slip resistant"
                " | lightweight | padded collar | shock absorbing"
            ),
            options=(
                Option("Color", SHOE_COLORS[5:12], (2, 5), COLOR_ASKS, images=True),
                Option("Size", MENS_SHOE_SIZES, (6, 12), SIZE_ASKS, run=True),
            ),
            price=(59.0, 189.0),
            extras=words("Mid Trekking Boots | Backpacking Boots | Trail Boots | Outdoor Boots"),
            blurbs=(
                "The {brand} {noun} are built for rocky switchbacks and muddy trailheads.",
                "Whether it is a day hike or a week in the backcountry, {brand} {noun} keep you moving.",
                "{brand} {noun} bring a rugged lugged outsole and a supportive fit to every trail.",
            ),
            notes=(
                "Break in period is short thanks to a flexible forefoot.",
                "Gusseted tongue keeps out trail debris.",
                "Lace hooks lock the laces for a secure hold.",
            ),
        ),
        ProductType(
            noun="Rain Boots",
            audience="Women's ",
            spoken=("rain boots", "women's rain boots"),
            article="a pair of",
            plural=True,
            query="women's rain boots",
            path=words("Clothing, Shoes & Jewelry | Women | Shoes | Boots | Rain Boots"),
            attributes=words(
                "waterproof | non slip | faux fur lining | adjustable strap | cushioned insole"
                " | lightweight | rubber sole"
            ),
            options=(
                Option("Color", WOMENS_SHOE_COLORS, (3, 6), COLOR_ASKS, images=True),
                Option("Size", WOMENS_SHOE_SIZES, (6, 10), SIZE_ASKS, run=True),
            ),
            price=(26.0, 98.0),
            extras=words("Mid Calf Wellies | Garden Boots | Ankle Rain Booties | Tall Wellington Boots"),
            blurbs=(
                "Splash through puddles in the {brand} {noun}, made for wet commutes and garden chores.",
                "The {brand} {noun} pair a glossy finish with a comfortable, roomy shaft.",
                "{brand} {noun} keep spring showers and muddy walks from ruining your day.",
            ),
            notes=(
                "Wipe clean with a damp cloth.",
                "Wide calf fits over leggings and jeans.",
                "Whole sizes only; size up if between sizes.",
            ),
        ),
        ProductType(
            noun="Work Boots",
            audience="Men's ",
            spoken=("work boots", "men's work boots"),
            article="a pair of",
            plural=True,
            query="men's work & safety boots",
            path=words("Clothing, Shoes & Jewelry | Men | Shoes | Work & Safety | Boots"),
            attributes=words(
                "steel toe | oil resistant | slip resistant | leather upper | waterproof"
                " | padded collar | cushioned insole"
            ),
            options=(
                Option(
                    "Color",
                    words("Black | Brown | Tan | Wheat | Dark Brown | Grey"),
                    (2, 4),
                    COLOR_ASKS,
                    images=True,
                ),
                Option("Size", MENS_SHOE_SIZES, (7, 12), SIZE_ASKS, run=True),
            ),
            price=(49.0, 179.0),
            extras=words("Construction Boots | Industrial Boots | Safety Boots | Lace Up Work Shoes"),
            blurbs=(
                "The {brand} {noun} are made for long shifts on job sites and warehouse floors.",
                "{brand} {noun} combine a tough build with comfort that lasts a full shift.",
                "Built for contractors, mechanics and farmers, the {brand} {noun} handle hard work.",
            ),
            notes=(
                "Goodyear welt construction can be resoled.",
                "Electrical hazard rated outsole.",
                "Six inch shaft height.",
            ),
        ),
        ProductType(
            noun="Sandals",
            audience="Women's ",
            spoken=words("sandals | women's sandals | summer sandals"),
            article="a pair of",
            plural=True,
            query="women's flat sandals",
            path=words("Clothing, Shoes & Jewelry | Women | Shoes | Sandals | Flat Sandals"),
            attributes=words(
                "open toe | adjustable strap | arch support | quick dry | lightweight"
                " | cushioned insole | non slip"
            ),
            options=(
                Option("Color", WOMENS_SHOE_COLORS, (3, 7), COLOR_ASKS, images=True),
                Option("Size", WOMENS_SHOE_SIZES, (6, 11), SIZE_ASKS, run=True),
            ),
            price=(17.0, 79.0),
            extras=words(
                "Flat Slides | Beach Sandals | Gladiator Sandals | Strappy Flats | Slingback Sandals"
            ),
            blurbs=(
                "The {brand} {noun} are a warm weather staple for beach days and city walks.",
                "Dress them up or down: {brand} {noun} go from brunch to the boardwalk.",
                "{brand} {noun} bring a minimalist look and all day comfort to summer outfits.",
            ),
            notes=(
                "Packs flat for travel.",
                "Heel height about 1 inch.",
                "If you have wide feet, order a half size up.",
            ),
        ),
        ProductType(
            noun="Slippers",
            audience="Women's ",
            spoken=words("slippers | house slippers | women's slippers"),
            article="a pair of",
            plural=True,
            query="women's slippers",
            path=words("Clothing, Shoes & Jewelry | Women | Shoes | Slippers"),
            attributes=words(
                "memory foam | faux fur lining | machine washable | indoor outdoor | non slip"
                " | rubber sole | cushioned insole"
            ),
            options=(
                Option("Color", WOMENS_SHOE_COLORS, (3, 6), COLOR_ASKS, images=True),
                Option("Size", words("5-6 | 7-8 | 9-10 | 11-12"), (3, 4), SIZE_ASKS, run=True),
            ),
            price=(14.0, 59.0),
            extras=words(
                "Cozy House Shoes | Moccasin Slippers | Scuff Slippers | Bootie Slippers | Clog Slippers"
            ),
            blurbs=(
                "Slip into the {brand} {noun} after a long day and feel the difference.",
                "The {brand} {noun} make lazy weekend mornings even cozier.",
                "{brand} {noun} are the gift everyone on your list will actually use.",
            ),
            notes=(
                "Gift ready packaging.",
                "Sized in ranges; choose the range that includes your usual size.",
                "Plush cuff keeps out drafts.",
            ),
        ),
        ProductType(
            noun="Loafers",
            audience="Men's ",
            spoken=words("loafers | men's loafers | slip on loafers"),
            article="a pair of",
            plural=True,
            query="men's loafers & slip-ons",
            path=words("Clothing, Shoes & Jewelry | Men | Shoes | Loafers & Slip-Ons"),
            attributes=words(
                "leather upper | rubber sole | lightweight | cushioned insole | non slip | wide toe box"
            ),
            options=(
                Option(
                    "Color",
                    words("Black | Brown | Tan | Navy | Burgundy | Grey | Cognac"),
                    (2, 5),
                    COLOR_ASKS,
                    images=True,
                ),
                Option("Size", MENS_SHOE_SIZES, (6, 12), SIZE_ASKS, run=True),
            ),
            price=(32.0, 149.0),
            extras=words(
                "Penny Loafers | Driving Moccasins | Dress Shoes | Casual Boat Shoes | Tassel Loafers"
            ),
            blurbs=(
                "The {brand} {noun} finish a suit or chinos with a polished, easy going look.",
                "{brand} {noun} are handcrafted for men who want comfort without laces.",
                "From the office to a weekend dinner, the {brand} {noun} keep it sharp.",
            ),
            notes=(
                "Hand stitched moc toe.",
                "Comes with a cotton dust bag.",
                "Runs slightly large; consider a half size down.",
            ),
        ),
    ),
    closers=(
        "Pair them with jeans, shorts or joggers.",
        "Designed in our studio and tested on real feet.",
        "A dependable pair for every season.",
        "Makes a thoughtful gift.",
    ),
)

ELECTRONICS = Category(
    name="electronics",
    brands=words(
        "Voltaic | Soundry | Ampli | Nexlink | Corewave | Brightpath | Lumitek | Ohmie | Zephyr Audio"
        " | Pixelnest | Kinetic Labs | Tandem | Orbitron | Halo Digital | Sparkcell"
    ),
    attributes={
        "noise cancelling": ("adj", "Active noise cancelling hushes engines, chatter and office hum."),
        "long battery life": (
            "with",
            "Long battery life keeps the music going through a full week of commutes.",
        ),
        "water resistant": ("adj", "An IPX5 water resistant build survives sweat and rain."),
        "touch control": ("with", "Touch control lets you tap to play, pause and skip tracks."),
        "wireless charging": ("with", "Wireless charging works with any Qi pad."),
        "hands free calling": ("with", "Hands free calling keeps conversations clear on the go."),
        "deep bass": ("with", "Tuned drivers deliver deep bass and crisp highs."),
        "built in microphone": (
            "with",
            "A built in microphone picks up your voice clearly for calls and meetings.",
        ),
        "foldable design": ("with", "A foldable design collapses flat into the included pouch."),
        "lightweight": ("adj", "A lightweight build that is easy to carry all day."),
        "portable": ("adj", "A portable size that fits a backpack pocket."),
        "waterproof": ("adj", "Fully waterproof to IPX7, so it can float in the pool."),
        "stereo sound": ("with", "Dual drivers fill the room with 360 degree stereo sound."),
        "fast charging": ("adj", "Fast charging tops up phones to 50 percent in about 30 minutes."),
        "usb c port": ("with", "A usb c port charges in and out with one cable."),
        "led display": ("with", "An led display shows the exact remaining percentage."),
        "compact design": ("with", "A compact design slips into a jeans pocket."),
        "nylon braided": ("adj", "A nylon braided jacket survives thousands of bends."),
        "high speed": ("adj", "High speed transfer moves large files in seconds."),
        "tangle free": ("adj", "A tangle free flat profile coils neatly in a bag."),
        "ergonomic design": ("with", "An ergonomic design supports your palm through long workdays."),
        "silent click": ("with", "Silent click buttons keep shared spaces quiet."),
        "rechargeable battery": ("with", "A rechargeable battery lasts weeks between charges."),
        "plug and play": ("adj", "Plug and play setup needs no drivers."),
        "adjustable dpi": ("with", "Adjustable dpi lets you switch pointer speed on the fly."),
        "rgb backlit": ("adj", "Rgb backlit keys glow in customizable colors."),
        "hot swappable": ("adj", "Hot swappable sockets let you change switches without soldering."),
        "full hd": ("adj", "Full hd 1080p video keeps you sharp on every call."),
        "auto focus": ("with", "Auto focus keeps faces and documents crisp."),
        "wide angle": ("adj", "A wide angle lens fits the whole team in frame."),
        "privacy cover": ("with", "A sliding privacy cover blocks the lens when you are off camera."),
        "low light correction": ("with", "Low light correction brightens dim rooms automatically."),
    },
    types=(
        ProductType(
            noun="Wireless Earbuds",
            spoken=("wireless earbuds", "bluetooth earbuds"),
            article="a pair of",
            plural=True,
            query="earbud headphones",
            path=words(
                "Electronics | Headphones, Earbuds & Accessories | Headphones & Earbuds | Earbud Headphones"
            ),
            attributes=words(
                "noise cancelling | long battery life | water resistant | touch control"
                " | wireless charging | hands free calling | deep bass | built in microphone"
            ),
            options=(Option("Color", GADGET_COLORS, (2, 5), COLOR_ASKS, share=0.85, images=True),),
            price=(19.0, 179.0),
            extras=words(
                "Bluetooth 5.3 Headphones | In Ear Headphones | Sport Earphones | True Wireless Earphones"
            ),
            blurbs=(
                "The {brand} {noun} deliver rich sound in a pocketable charging case.",
                "{brand} {noun} pair in seconds and stay connected from the gym to the office.",
                "Small enough to forget, the {brand} {noun} are built for all day listening.",
            ),
            notes=(
                "Includes three sizes of silicone ear tips.",
                "Charging case adds four extra charges.",
                "Pairs with phones, tablets and laptops.",
            ),
        ),
        ProductType(
            noun="Over Ear Headphones",
            spoken=("over ear headphones", "headphones"),
            article="a pair of",
            plural=True,
            query="over-ear headphones",
            path=words(
                "Electronics | Headphones, Earbuds & Accessories | Headphones & Earbuds | Over-Ear Headphones"
            ),
            attributes=words(
                "noise cancelling | foldable design | long battery life | built in microphone"
                " | deep bass | lightweight | hands free calling"
            ),
            options=(Option("Color", GADGET_COLORS, (2, 4), COLOR_ASKS, share=0.85, images=True),),
            price=(29.0, 299.0),
            extras=words("Bluetooth Headset | Studio Headphones | Wireless Headphones | Travel Headphones"),
            blurbs=(
                "The {brand} {noun} wrap your ears in plush protein leather cushions.",
                "{brand} {noun} are tuned for podcasts, playlists and long flights.",
                "Work, study or unwind: the {brand} {noun} keep the focus on your audio.",
            ),
            notes=(
                "Includes a 3.5 mm audio cable for wired listening.",
                "Ten minute charge gives five hours of playback.",
                "Carrying pouch included.",
            ),
        ),
        ProductType(
            noun="Bluetooth Speaker",
            spoken=("bluetooth speaker", "speaker"),
            article="a",
            plural=False,
            query="portable bluetooth speakers",
            path=words(
                "Electronics | Portable Audio & Video | Portable Speakers & Docks"
                " | Portable Bluetooth Speakers"
            ),
            attributes=words(
                "portable | waterproof | stereo sound | deep bass | long battery life"
                " | built in microphone | lightweight"
            ),
            options=(
                Option("Color", (*GADGET_COLORS, "Forest Green"), (2, 5), COLOR_ASKS, share=0.8, images=True),
            ),
            price=(19.0, 149.0),
            extras=words("Outdoor Speaker | Wireless Speaker | Party Speaker | Shower Speaker"),
            blurbs=(
                "The {brand} {noun} brings room filling sound to picnics, patios and pool days.",
                "Clip the {brand} {noun} to a backpack and take your playlist anywhere.",
                "{brand} {noun}: big sound from a speaker that fits in one hand.",
            ),
            notes=(
                "Pair two speakers for a wider sound stage.",
                "Carabiner strap included.",
                "Charges over a usb cable (adapter not included).",
            ),
        ),
        ProductType(
            noun="Power Bank",
            spoken=("power bank", "phone power bank"),
            article="a",
            plural=False,
            query="portable power banks",
            path=words(
                "Electronics | Cell Phones & Accessories | Chargers & Power Adapters | Portable Power Banks"
            ),
            attributes=words(
                "fast charging | usb c port | led display | compact design | wireless charging | lightweight"
            ),
            options=(
                Option(
                    "Capacity",
                    words("5000mAh | 10000mAh | 20000mAh | 26800mAh"),
                    (1, 3),
                    AMOUNT_ASKS,
                    run=True,
                    share=0.85,
                ),
                Option("Color", GADGET_COLORS, (2, 4), COLOR_ASKS, share=0.6, images=True),
            ),
            price=(15.0, 89.0),
            extras=words("Battery Pack | External Battery | Phone Charger | Travel Battery"),
            blurbs=(
                "Never hunt for an outlet again: the {brand} {noun} keeps phones topped up all day.",
                "The {brand} {noun} charges phones, earbuds and tablets from one slim pack.",
                "{brand} {noun} is airline friendly and ready for long trips.",
            ),
            notes=(
                "Charges two devices at once.",
                "Overcharge and short circuit protection.",
                "Cable included; wall adapter sold separately.",
            ),
        ),
        ProductType(
            noun="USB C Charging Cable",
            spoken=("usb c cable", "usb c charging cable"),
            article="a",
            plural=False,
            query="usb cables",
            path=words(
                "Electronics | Computers & Accessories | Computer Accessories & Peripherals"
                " | Cables & Accessories | USB Cables"
            ),
            attributes=words("fast charging | nylon braided | high speed | tangle free | lightweight"),
            options=(
                Option("Size", words("3 ft | 6 ft | 10 ft"), (1, 3), AMOUNT_ASKS, run=True),
                Option("Color", GADGET_COLORS, (2, 4), COLOR_ASKS, share=0.6, images=True),
            ),
            price=(6.0, 29.0),
            extras=words("Charger Cord | Phone Charging Cord | Data Sync Cable | Type C Cord"),
            blurbs=(
                "The {brand} {noun} keeps phones, tablets and laptops charged at full speed.",
                "{brand} {noun}: one cord for the desk, the car and the nightstand.",
                "Replace frayed cords with the {brand} {noun}, built to last.",
            ),
            notes=(
                "Works with phones, tablets and laptops that charge over usb c.",
                "Lifetime replacement promise.",
                "Aluminum connector housings.",
            ),
        ),
        ProductType(
            noun="Wireless Mouse",
            spoken=("wireless mouse", "computer mouse"),
            article="a",
            plural=False,
            query="computer mice",
            path=words(
                "Electronics | Computers & Accessories | Computer Accessories & Peripherals"
                " | Keyboards, Mice & Accessories | Mice"
            ),
            attributes=words(
                "ergonomic design | silent click | rechargeable battery | plug and play"
                " | adjustable dpi | rgb backlit"
            ),
            options=(Option("Color", GADGET_COLORS, (2, 4), COLOR_ASKS, share=0.8, images=True),),
            price=(9.0, 79.0),
            extras=words("Cordless Mice | Laptop Mouse | Office Mouse | Gaming Mouse"),
            blurbs=(
                "The {brand} {noun} glides smoothly on desks, tables and mouse pads.",
                "{brand} {noun} connects through a tiny receiver that stores inside the shell.",
                "Work from anywhere with the {brand} {noun}, sized for medium and large hands.",
            ),
            notes=(
                "Works with Windows, Mac and Chromebook.",
                "Nano receiver included.",
                "Range up to 33 feet.",
            ),
        ),
        ProductType(
            noun="Mechanical Keyboard",
            spoken=("mechanical keyboard", "keyboard"),
            article="a",
            plural=False,
            query="computer keyboards",
            path=words(
                "Electronics | Computers & Accessories | Computer Accessories & Peripherals"
                " | Keyboards, Mice & Accessories | Keyboards"
            ),
            attributes=words(
                "rgb backlit | hot swappable | compact design | plug and play | ergonomic design"
            ),
            options=(
                Option(
                    "Style",
                    words("Red Switch | Blue Switch | Brown Switch | Silent Switch"),
                    (2, 4),
                    STYLE_ASKS,
                ),
                Option(
                    "Color",
                    words("Black | White | Space Grey | Sage Green"),
                    (1, 3),
                    COLOR_ASKS,
                    share=0.7,
                    images=True,
                ),
            ),
            price=(29.0, 169.0),
            extras=words("Gaming Keyboard | 60 Percent Keyboard | Tenkeyless Keyboard | Typing Keyboard"),
            blurbs=(
                "The {brand} {noun} turns every keystroke into a crisp, satisfying click.",
                "{brand} {noun} is built on an aluminum plate for a solid typing feel.",
                "Game, code or write with the {brand} {noun} and its double shot keycaps.",
            ),
            notes=("Detachable usb cable.", "Keycap puller included.", "Two step adjustable feet."),
        ),
        ProductType(
            noun="1080p Webcam",
            spoken=("webcam", "1080p webcam"),
            article="a",
            plural=False,
            query="webcams",
            path=words(
                "Electronics | Computers & Accessories | Computer Accessories & Peripherals | Webcams"
            ),
            attributes=words(
                "full hd | auto focus | wide angle | privacy cover | built in microphone"
                " | plug and play | low light correction"
            ),
            options=(
                Option("Color", words("Black | White | Silver"), (1, 2), COLOR_ASKS, share=0.4, images=True),
            ),
            price=(19.0, 129.0),
            extras=words("Streaming Camera | Video Call Camera | Computer Camera | Laptop Camera"),
            blurbs=(
                "The {brand} {noun} makes video calls, classes and streams look professional.",
                "{brand} {noun} clips onto monitors and laptops in seconds.",
                "Upgrade your video meetings with the {brand} {noun}.",
            ),
            notes=(
                "Universal clip fits monitors and laptops.",
                "Tripod thread on the base.",
                "Works with popular video call apps.",
            ),
        ),
    ),
    closers=(
        "Backed by an 18 month warranty and friendly support.",
        "Everything you need is in the box.",
        "A smart gift for students and remote workers.",
        "Tested for thousands of hours in our lab.",
    ),
)

APPAREL = Category(
    name="apparel",
    brands=words(
        "Harbor Thread | Fieldstone | Copper & Pine | Everloom | Wren | Mossgrove | Kinfolk Knit"
        " | Saltmarsh | Ridgeway | Linden Lane | Northpeak | Brisa | Tallow | Juniper Row"
    ),
    attributes={
        "machine wash": ("adj", "Machine wash cold and tumble dry low."),
        "moisture wicking": ("adj", "Moisture wicking fabric pulls sweat away from your skin."),
        "relaxed fit": ("adj", "A relaxed fit gives room to move without looking baggy."),
        "slim fit": ("adj", "A slim fit follows your shape for a tailored look."),
        "short sleeve": ("adj", "Short sleeve cut for warm days."),
        "long sleeve": ("adj", "Long sleeve cut with ribbed cuffs."),
        "crew neck": ("adj", "A classic crew neck that keeps its shape after washing."),
        "v neck": ("adj", "A flattering v neck neckline."),
        "organic cotton": ("with", "Made of soft organic cotton grown without synthetic pesticides."),
        "high waist": ("adj", "A high waist band sits above the navel and stays put."),
        "tummy control": ("with", "A wide waistband with tummy control smooths and supports."),
        "four way stretch": ("with", "Four way stretch fabric moves with every squat and lunge."),
        "squat proof": ("adj", "Squat proof and opaque, tested in bright studio light."),
        "side pockets": ("with", "Side pockets hold a phone or keys."),
        "fleece lined": ("adj", "Fleece lined inside for warmth on chilly mornings."),
        "drawstring hood": ("with", "An adjustable drawstring hood blocks the wind."),
        "kangaroo pocket": ("with", "A roomy kangaroo pocket warms your hands."),
        "knee length": ("adj", "A knee length hem that works for the office or a garden party."),
        "floral print": ("with", "An all over floral print that is bright without being loud."),
        "wrinkle free": ("adj", "Wrinkle free fabric comes out of a suitcase ready to wear."),
        "straight leg": ("adj", "A straight leg opening from hip to hem."),
        "stretch denim": ("with", "Stretch denim with a touch of elastane keeps its shape."),
        "button closure": ("with", "A metal button closure and zip fly."),
        "waterproof": ("adj", "Waterproof taped seams keep downpours out."),
        "packable": ("adj", "Packable into its own chest pocket."),
        "windproof": ("adj", "A windproof shell blocks gusts on exposed ridges."),
        "zip pockets": ("with", "Zip pockets keep valuables secure."),
        "elastic waist": ("with", "An elastic waist stretches for all day comfort."),
        "drawstring closure": ("with", "A drawstring closure lets you fine tune the waist."),
        "quick dry": ("adj", "Quick dry fabric goes from a swim to a hike."),
        "cargo pockets": ("with", "Bellowed cargo pockets carry a phone, wallet and snacks."),
        "cushioned sole": ("with", "A cushioned sole pads the heel and forefoot."),
        "arch compression": ("with", "Arch compression bands hug the midfoot."),
        "seamless toe": ("with", "A seamless toe closure prevents rubbing and blisters."),
        "breathable": ("adj", "A breathable knit lets heat escape."),
    },
    types=(
        ProductType(
            noun="T-Shirt",
            audience="Men's ",
            spoken=words("t-shirt | men's t-shirt | tee shirt"),
            article="a",
            plural=False,
            query="men's t-shirts & tanks",
            path=words("Clothing, Shoes & Jewelry | Men | Clothing | Shirts | T-Shirts"),
            attributes=words(
                "machine wash | moisture wicking | short sleeve | crew neck | relaxed fit"
                " | organic cotton | slim fit | v neck"
            ),
            options=(
                Option("Color", APPAREL_COLORS, (3, 8), COLOR_ASKS, images=True),
                Option("Size", APPAREL_SIZES[1:], (4, 6), FIT_ASKS, run=True),
            ),
            price=(9.0, 34.0),
            extras=words("Casual Tee | Basic Cotton Tee | Workout Shirt | Everyday Top | Pocket Tee"),
            blurbs=(
                "The {brand} {noun} is the soft, easy layer you will reach for every morning.",
                "{brand} {noun}: a wardrobe basic cut for everyday comfort.",
                "Wear the {brand} {noun} alone or under a flannel or blazer.",
            ),
            notes=("Tag free neck label.", "Model is 6 feet tall and wears a medium.", "Pre shrunk fabric."),
        ),
        ProductType(
            noun="Leggings",
            audience="Women's ",
            spoken=words("leggings | yoga leggings | women's leggings"),
            article="a pair of",
            plural=True,
            query="women's leggings",
            path=words("Clothing, Shoes & Jewelry | Women | Clothing | Active | Leggings"),
            attributes=words(
                "high waist | tummy control | four way stretch | squat proof | moisture wicking"
                " | side pockets | machine wash"
            ),
            options=(
                Option("Color", APPAREL_COLORS, (3, 8), COLOR_ASKS, images=True),
                Option("Size", APPAREL_SIZES[:6], (4, 6), FIT_ASKS, run=True),
            ),
            price=(12.0, 49.0),
            extras=words("Yoga Pants | Workout Tights | Running Tights | Athletic Pants"),
            blurbs=(
                "The {brand} {noun} feel like a second skin from sunrise yoga to evening errands.",
                "{brand} {noun} are made for studio classes, runs and lazy Sundays.",
                "Buttery soft and supportive, the {brand} {noun} go wherever you go.",
            ),
            notes=(
                "Full length 28 inch inseam.",
                "Gusseted crotch for freedom of movement.",
                "Hidden key pocket in the waistband.",
            ),
        ),
        ProductType(
            noun="Pullover Hoodie",
            audience="Men's ",
            spoken=words("hoodie | pullover hoodie | men's hoodie"),
            article="a",
            plural=False,
            query="men's fashion hoodies & sweatshirts",
            path=words("Clothing, Shoes & Jewelry | Men | Clothing | Fashion Hoodies & Sweatshirts"),
            attributes=words(
                "fleece lined | drawstring hood | kangaroo pocket | machine wash | relaxed fit"
                " | long sleeve | organic cotton"
            ),
            options=(
                Option("Color", APPAREL_COLORS, (3, 7), COLOR_ASKS, images=True),
                Option("Size", APPAREL_SIZES[1:], (4, 6), FIT_ASKS, run=True),
            ),
            price=(19.0, 69.0),
            extras=words("Hooded Sweatshirt | Casual Sweatshirt | Athletic Hoodie | Heavyweight Hoodie"),
            blurbs=(
                "The {brand} {noun} is your go to layer for cool evenings and weekend errands.",
                "{brand} {noun}: heavyweight comfort that only gets softer with every wash.",
                "Throw on the {brand} {noun} for the game, the gym or the couch.",
            ),
            notes=(
                "Ribbed cuffs and hem.",
                "Double stitched seams for durability.",
                "Size up for an oversized look.",
            ),
        ),
        ProductType(
            noun="Summer Dress",
            audience="Women's ",
            spoken=words("summer dress | casual dress | women's dress"),
            article="a",
            plural=False,
            query="women's casual dresses",
            path=words("Clothing, Shoes & Jewelry | Women | Clothing | Dresses | Casual"),
            attributes=words(
                "short sleeve | v neck | knee length | floral print | side pockets | wrinkle free"
                " | machine wash"
            ),
            options=(
                Option("Color", APPAREL_COLORS, (3, 7), COLOR_ASKS, images=True),
                Option("Size", APPAREL_SIZES[:6], (4, 6), FIT_ASKS, run=True),
            ),
            price=(19.0, 64.0),
            extras=words("Sundress | Swing Dress | Beach Dress | Tunic Dress | Midi Dress"),
            blurbs=(
                "The {brand} {noun} is an effortless one piece outfit for warm weather.",
                "{brand} {noun}: flowy, flattering and easy to pack.",
                "From farmers markets to weddings, the {brand} {noun} fits the occasion.",
            ),
            notes=(
                "Lightweight woven fabric.",
                "Model wears a size small.",
                "Pairs well with sandals or sneakers.",
            ),
        ),
        ProductType(
            noun="Jeans",
            audience="Men's ",
            spoken=words("jeans | men's jeans | denim jeans"),
            article="a pair of",
            plural=True,
            query="men's jeans",
            path=words("Clothing, Shoes & Jewelry | Men | Clothing | Jeans"),
            attributes=words(
                "slim fit | straight leg | stretch denim | button closure | machine wash | relaxed fit"
            ),
            options=(
                Option(
                    "Color",
                    words("Dark Rinse | Mid Blue | Vintage Indigo | Black | Grey | Raw Denim"),
                    (2, 5),
                    COLOR_ASKS,
                    images=True,
                ),
                Option(
                    "Size",
                    words(
                        "28W x 30L | 30W x 30L | 30W x 32L | 32W x 30L | 32W x 32L | 34W x 32L"
                        " | 34W x 34L | 36W x 32L | 38W x 32L | 40W x 32L"
                    ),
                    (5, 9),
                    SIZE_ASKS,
                    run=True,
                ),
            ),
            price=(24.0, 89.0),
            extras=words("Denim Pants | Five Pocket Jeans | Classic Jeans | Work Jeans"),
            blurbs=(
                "The {brand} {noun} are cut from durable denim that breaks in beautifully.",
                "{brand} {noun}: a clean wash and a fit that works with boots or sneakers.",
                "Every closet needs the {brand} {noun}, the pair you wear three days a week.",
            ),
            notes=(
                "Classic five pocket styling.",
                "Inseam measured in inches.",
                "Wash inside out to keep the color.",
            ),
        ),
        ProductType(
            noun="Rain Jacket",
            audience="Women's ",
            spoken=words("rain jacket | women's rain jacket | raincoat"),
            article="a",
            plural=False,
            query="women's raincoats",
            path=words("Clothing, Shoes & Jewelry | Women | Clothing | Coats, Jackets & Vests | Raincoats"),
            attributes=words("waterproof | packable | windproof | zip pockets | breathable | machine wash"),
            options=(
                Option("Color", APPAREL_COLORS, (3, 6), COLOR_ASKS, images=True),
                Option("Size", APPAREL_SIZES[:6], (4, 6), FIT_ASKS, run=True),
            ),
            price=(29.0, 129.0),
            extras=words("Hooded Raincoat | Outdoor Shell | Lightweight Windbreaker | Hiking Jacket"),
            blurbs=(
                "The {brand} {noun} keeps you dry from the bus stop to the trailhead.",
                "{brand} {noun}: a hooded shell that is ready whenever the forecast turns.",
                "Stay out longer in the {brand} {noun}, built for wet and windy days.",
            ),
            notes=(
                "Adjustable hood with a stiff brim.",
                "Hook and loop cuffs.",
                "Drop tail hem for extra coverage.",
            ),
        ),
        ProductType(
            noun="Cargo Shorts",
            audience="Men's ",
            spoken=words("cargo shorts | men's cargo shorts | shorts"),
            article="a pair of",
            plural=True,
            query="men's shorts",
            path=words("Clothing, Shoes & Jewelry | Men | Clothing | Shorts | Cargo"),
            attributes=words(
                "elastic waist | drawstring closure | quick dry | relaxed fit | cargo pockets | machine wash"
            ),
            options=(
                Option("Color", APPAREL_COLORS, (3, 6), COLOR_ASKS, images=True),
                Option("Size", APPAREL_SIZES[1:], (4, 6), FIT_ASKS, run=True),
            ),
            price=(16.0, 49.0),
            extras=words("Hiking Shorts | Casual Shorts | Twill Shorts | Outdoor Shorts"),
            blurbs=(
                "The {brand} {noun} carry everything you need for a day outdoors.",
                "{brand} {noun}: rugged twill shorts for camping, fishing and yard work.",
                "Hit the trail or the backyard grill in the {brand} {noun}.",
            ),
            notes=(
                "Ten inch inseam.",
                "Belt loops for a belt if you want one.",
                "Reinforced stitching at stress points.",
            ),
        ),
        ProductType(
            noun="Athletic Crew Socks",
            spoken=("crew socks", "athletic socks"),
            article="some",
            plural=True,
            query="athletic socks",
            path=words("Clothing, Shoes & Jewelry | Men | Clothing | Socks | Athletic Socks"),
            attributes=words(
                "cushioned sole | moisture wicking | arch compression | seamless toe | breathable"
            ),
            options=(
                Option(
                    "Color",
                    words("Black | White | Heather Grey | Assorted | Navy Blue"),
                    (2, 4),
                    COLOR_ASKS,
                    images=True,
                ),
                Option("Size", words("Medium | Large | X-Large"), (2, 3), FIT_ASKS, run=True),
                Option(
                    "Item Package Quantity",
                    words("Pack of 3 | Pack of 6 | Pack of 12"),
                    (1, 3),
                    PACK_ASKS,
                    run=True,
                    share=0.6,
                ),
            ),
            price=(9.0, 36.0),
            extras=words("Running Socks | Training Socks | Sport Socks | Work Socks"),
            blurbs=(
                "The {brand} {noun} keep feet comfortable through runs, lifts and long shifts.",
                "{brand} {noun}: performance socks for the gym and every day after.",
                "Restock your drawer with the {brand} {noun}.",
            ),
            notes=(
                "Reinforced heel and toe for durability.",
                "Fits men's shoe sizes 6 to 12 in medium and large.",
                "Cotton and polyester blend.",
            ),
        ),
    ),
    closers=(
        "Designed for everyday comfort.",
        "Ethically made in certified factories.",
        "Check the size chart in the images before ordering.",
        "A closet staple you will wear for years.",
    ),
)

FITNESS = Category(
    name="fitness",
    brands=words(
        "IronPeak | Flexcore | Summit Strength | Zenmat | Kettlehaus | Pulsefit | Momentum"
        " | Balance Lab | Hydrava | Corestack | Vigor | Apex Motion | Ridgeback | Tempo Athletics"
    ),
    attributes={
        "non slip": ("adj", "A non slip, grippy top layer stays put in downward dog."),
        "extra thick": ("adj", "Extra thick cushioning protects knees and wrists."),
        "eco friendly": ("adj", "Made of eco friendly natural rubber and recyclable materials."),
        "carrying strap": ("with", "A carrying strap makes it easy to take to class."),
        "alignment lines": ("with", "Printed alignment lines help you square up every pose."),
        "sweat proof": ("adj", "A sweat proof top layer wipes clean after hot sessions."),
        "lightweight": ("adj", "A lightweight build you can carry anywhere."),
        "neoprene coated": ("adj", "Neoprene coated for a soft, colorful grip."),
        "anti roll": ("adj", "An anti roll hexagonal shape stays where you set it down."),
        "contoured grip": ("with", "A contoured grip fills the hand for a secure hold."),
        "cast iron": ("adj", "A single piece of solid cast iron with no welds or seams."),
        "flat bottom": ("with", "A flat bottom sits stable for renegade rows."),
        "wide handle": ("with", "A wide handle fits two hands for swings."),
        "powder coated": ("adj", "A powder coated finish improves grip and resists chipping."),
        "latex free": ("adj", "Latex free material is safe for sensitive skin."),
        "door anchor": ("with", "A door anchor turns any doorway into a cable station."),
        "ankle straps": ("with", "Padded ankle straps for kickbacks and leg work."),
        "foam handles": ("with", "Foam handles stay comfortable during high rep sets."),
        "adjustable length": ("with", "Adjustable length fits users up to 6 feet 6 inches."),
        "tangle free": ("adj", "A tangle free swivel keeps the cable from twisting."),
        "ball bearings": ("with", "Sealed ball bearings in the handles spin smoothly."),
        "weighted handles": ("with", "Weighted handles build shoulder and forearm strength."),
        "high density": ("adj", "High density foam keeps its shape after months of use."),
        "textured surface": ("with", "A textured surface with ridges and knobs targets knots."),
        "deep tissue massage": ("for", "Great for deep tissue massage of the back, calves and IT band."),
        "muscle recovery": ("for", "Speeds muscle recovery after hard workouts."),
        "bpa free": ("adj", "Bpa free, food grade materials throughout."),
        "leak proof": ("adj", "A leak proof lid survives a tumble in your gym bag."),
        "double wall insulated": ("adj", "Double wall insulated steel keeps water cold for 24 hours."),
        "time marker": ("with", "A time marker on the side helps you hit daily hydration goals."),
        "straw lid": ("with", "A flip up straw lid for one handed sipping."),
        "heart rate monitor": ("with", "A continuous heart rate monitor tracks effort around the clock."),
        "sleep tracking": ("with", "Sleep tracking scores your nights and suggests a bedtime."),
        "water resistant": ("adj", "Water resistant to 50 meters for swims and showers."),
        "long battery life": ("with", "Long battery life of up to 10 days per charge."),
        "step counter": ("with", "A step counter and distance tracker record every walk."),
        "built in gps": ("with", "Built in gps maps runs and rides without your phone."),
    },
    types=(
        ProductType(
            noun="Yoga Mat",
            spoken=("yoga mat", "exercise mat"),
            article="a",
            plural=False,
            query="yoga mats",
            path=words("Sports & Outdoors | Exercise & Fitness | Yoga | Yoga Mats"),
            attributes=words(
                "non slip | extra thick | eco friendly | carrying strap | alignment lines"
                " | sweat proof | lightweight"
            ),
            options=(
                Option("Color", GEAR_COLORS, (3, 7), COLOR_ASKS, images=True),
                Option("Size", words("4mm | 6mm | 8mm | 10mm"), (1, 3), AMOUNT_ASKS, run=True, share=0.7),
            ),
            price=(16.0, 99.0),
            extras=words("Pilates Mat | Workout Mat | Floor Exercise Mat | Home Gym Mat"),
            blurbs=(
                "The {brand} {noun} gives you a stable base for yoga, pilates and stretching.",
                "{brand} {noun}: studio quality grip for home practice.",
                "Roll out the {brand} {noun} anywhere, from the living room to the park.",
            ),
            notes=(
                "Measures 72 x 24 inches.",
                "Wipe with mild soap and water.",
                "Free of phthalates and heavy metals.",
            ),
        ),
        ProductType(
            noun="Dumbbells",
            spoken=("dumbbells", "hand weights"),
            article="a set of",
            plural=True,
            query="dumbbells",
            path=words("Sports & Outdoors | Exercise & Fitness | Strength Training Equipment | Dumbbells"),
            attributes=words("neoprene coated | anti roll | contoured grip | powder coated | cast iron"),
            options=(
                Option(
                    "Size",
                    words("3 lb | 5 lb | 8 lb | 10 lb | 12 lb | 15 lb | 20 lb"),
                    (3, 6),
                    AMOUNT_ASKS,
                    run=True,
                ),
                Option("Style", ("Pair", "Single"), (2, 2), ("sold as a {v}", "as a {v}"), share=0.5),
            ),
            price=(12.0, 119.0),
            extras=words("Hand Weights | Free Weights | Hex Weights | Home Gym Weights"),
            blurbs=(
                "The {brand} {noun} are a home gym essential for curls, presses and rows.",
                "{brand} {noun}: build strength at home without a gym membership.",
                "Add resistance to cardio and toning routines with the {brand} {noun}.",
            ),
            notes=(
                "Weight is printed on both ends.",
                "Sold as a pair unless you choose single.",
                "Store on any standard dumbbell rack.",
            ),
        ),
        ProductType(
            noun="Resistance Bands Set",
            spoken=("resistance bands", "exercise bands"),
            article="a set of",
            plural=True,
            query="resistance bands",
            path=words("Sports & Outdoors | Exercise & Fitness | Accessories | Exercise Bands"),
            attributes=words("latex free | door anchor | ankle straps | foam handles | lightweight"),
            options=(
                Option(
                    "Size",
                    words("Light | Medium | Heavy | X-Heavy | Set of 5"),
                    (2, 5),
                    ("in {v}", "the {v} one"),
                    run=True,
                ),
            ),
            price=(9.0, 49.0),
            extras=words("Exercise Bands | Workout Bands | Stretch Bands | Tube Bands"),
            blurbs=(
                "The {brand} {noun} replaces a rack of weights with a travel pouch.",
                "{brand} {noun}: full body training at home, in hotels or at the park.",
                "Stack bands from the {brand} {noun} to dial in the exact resistance you need.",
            ),
            notes=(
                "Includes a travel pouch and exercise guide.",
                "Each band is labeled with its resistance.",
                "Inspect bands before every use.",
            ),
        ),
        ProductType(
            noun="Jump Rope",
            spoken=("jump rope", "skipping rope"),
            article="a",
            plural=False,
            query="jump ropes",
            path=words("Sports & Outdoors | Exercise & Fitness | Cardio Training | Jump Ropes"),
            attributes=words(
                "adjustable length | tangle free | ball bearings | weighted handles | lightweight"
            ),
            options=(Option("Color", GEAR_COLORS, (2, 5), COLOR_ASKS, share=0.8, images=True),),
            price=(7.0, 39.0),
            extras=words("Speed Rope | Skipping Rope | Crossfit Rope | Boxing Rope"),
            blurbs=(
                "The {brand} {noun} turns ten minutes into a full cardio workout.",
                "{brand} {noun}: double unders, boxing drills and warm ups made easy.",
                "Toss the {brand} {noun} in your bag and train anywhere.",
            ),
            notes=(
                "Spare cable included.",
                "Cut the cable to your height in minutes.",
                "Suitable for adults and teens.",
            ),
        ),
        ProductType(
            noun="Foam Roller",
            spoken=("foam roller", "massage roller"),
            article="a",
            plural=False,
            query="foam rollers",
            path=words("Sports & Outdoors | Exercise & Fitness | Accessories | Foam Rollers"),
            attributes=words(
                "high density | textured surface | deep tissue massage | muscle recovery | lightweight"
            ),
            options=(
                Option("Size", words("12 Inch | 18 Inch | 24 Inch | 36 Inch"), (1, 3), AMOUNT_ASKS, run=True),
                Option("Color", GEAR_COLORS, (2, 4), COLOR_ASKS, share=0.6, images=True),
            ),
            price=(12.0, 59.0),
            extras=words("Massage Roller | Recovery Roller | Physical Therapy Roller | Trigger Point Roller"),
            blurbs=(
                "The {brand} {noun} works out tight spots before and after training.",
                "{brand} {noun}: a physical therapist favorite for home use.",
                "Roll out stiffness with the {brand} {noun} in five minutes a day.",
            ),
            notes=("Supports up to 500 pounds.", "Free online video guide.", "Hollow core design."),
        ),
        ProductType(
            noun="Kettlebell",
            spoken=("kettlebell", "kettle bell"),
            article="a",
            plural=False,
            query="kettlebells",
            path=words("Sports & Outdoors | Exercise & Fitness | Strength Training Equipment | Kettlebells"),
            attributes=words("cast iron | flat bottom | wide handle | powder coated | neoprene coated"),
            options=(
                Option(
                    "Size",
                    words("10 lb | 15 lb | 20 lb | 25 lb | 30 lb | 35 lb | 40 lb | 50 lb"),
                    (3, 7),
                    AMOUNT_ASKS,
                    run=True,
                ),
            ),
            price=(19.0, 129.0),
            extras=words(
                "Strength Training Weight | Competition Kettlebell | Swing Weight | Home Gym Kettlebell"
            ),
            blurbs=(
                "The {brand} {noun} is the one piece of equipment for swings, squats and presses.",
                "{brand} {noun}: a compact full body workout in a single weight.",
                "Build power and grip with the {brand} {noun}.",
            ),
            notes=(
                "Weight marked in pounds and kilograms.",
                "Protect floors with a mat.",
                "Color coded by weight.",
            ),
        ),
        ProductType(
            noun="Sports Water Bottle",
            spoken=("water bottle", "sports water bottle"),
            article="a",
            plural=False,
            query="sports water bottles",
            path=words("Sports & Outdoors | Sports & Fitness | Accessories | Sports Water Bottles"),
            attributes=words(
                "bpa free | leak proof | double wall insulated | time marker | straw lid | lightweight"
            ),
            options=(
                Option("Size", words("24 oz | 32 oz | 40 oz | 64 oz"), (1, 3), AMOUNT_ASKS, run=True),
                Option("Color", GEAR_COLORS, (3, 6), COLOR_ASKS, images=True),
            ),
            price=(9.0, 44.0),
            extras=words("Gym Bottle | Hydration Bottle | Motivational Bottle | Travel Bottle"),
            blurbs=(
                "The {brand} {noun} keeps you hydrated from morning meetings to evening workouts.",
                "{brand} {noun}: one bottle for the gym, the office and the trail.",
                "Drink more water every day with the {brand} {noun}.",
            ),
            notes=(
                "Fits most gym bag side pockets.",
                "Hand wash the lid for best results.",
                "Wide mouth fits ice cubes.",
            ),
        ),
        ProductType(
            noun="Fitness Tracker",
            spoken=("fitness tracker", "activity tracker"),
            article="a",
            plural=False,
            query="activity & fitness trackers",
            path=words(
                "Sports & Outdoors | Exercise & Fitness | Fitness Technology | Activity & Fitness Trackers"
            ),
            attributes=words(
                "heart rate monitor | sleep tracking | water resistant | long battery life"
                " | step counter | built in gps"
            ),
            options=(Option("Color", GEAR_COLORS, (2, 5), COLOR_ASKS, images=True),),
            price=(24.0, 199.0),
            extras=words("Smart Watch | Activity Band | Health Watch | Sport Band"),
            blurbs=(
                "The {brand} {noun} turns daily movement into goals you can see.",
                "{brand} {noun}: your workouts, sleep and stress on one slim band.",
                "Wear the {brand} {noun} day and night and learn what moves you.",
            ),
            notes=(
                "Syncs with a free phone app.",
                "Interchangeable band.",
                "Magnetic charging cable included.",
            ),
        ),
    ),
    closers=(
        "Built to last through thousands of workouts.",
        "Suitable for beginners and seasoned athletes.",
        "Train at home on your own schedule.",
        "Covered by a one year warranty.",
    ),
)

HOME = Category(
    name="home",
    brands=words(
        "Hearthside | Linenwood | Cozyhaus | Willow & Wick | Maple Row | Dwell Lane | Quiet Nest"
        " | Oakhollow | Fernbrook | Lumen & Co | Softfold | Stillwater Home | Birchmont | Casa Clara"
    ),
    attributes={
        "double sided": ("adj", "A double sided pattern lets you flip the look with the season."),
        "hidden zipper": ("with", "A hidden zipper makes removing the insert a snap."),
        "machine washable": ("adj", "Machine washable on a cold gentle cycle."),
        "soft velvet": ("with", "Made of soft velvet with a subtle sheen."),
        "farmhouse style": ("adj", "A farmhouse style look that suits rustic and modern rooms."),
        "deep pocket": ("adj", "Deep pocket fitted sheets hold mattresses up to 16 inches."),
        "wrinkle free": ("adj", "Wrinkle free weave looks crisp straight out of the dryer."),
        "hypoallergenic": ("adj", "Hypoallergenic and resistant to dust mites."),
        "fade resistant": ("adj", "Fade resistant dyes keep colors rich wash after wash."),
        "brushed microfiber": ("adj", "Brushed microfiber feels silky against your skin."),
        "egyptian cotton": ("adj", "Long staple egyptian cotton gets softer over time."),
        "thermal insulated": (
            "adj",
            "Thermal insulated layers keep rooms warm in winter and cool in summer.",
        ),
        "noise reducing": ("adj", "Dense, noise reducing fabric softens street sound."),
        "grommet top": ("adj", "Grommet top panels slide easily along the rod."),
        "room darkening": ("adj", "Room darkening weave helps you sleep past sunrise."),
        "energy saving": ("adj", "Energy saving design lowers heating and cooling bills."),
        "reversible": ("adj", "Reversible with a different shade on each side."),
        "sherpa lined": ("adj", "Sherpa lined reverse for extra warmth."),
        "all season": ("adj", "All season weight that is warm but never stuffy."),
        "highly absorbent": ("adj", "Highly absorbent loops dry you off fast."),
        "quick dry": ("adj", "Quick dry weave prevents musty smells."),
        "turkish cotton": ("adj", "Woven from turkish cotton for a plush, spa like feel."),
        "lint free": ("adj", "Lint free after the first wash."),
        "non slip backing": ("with", "A non slip backing keeps it in place on hardwood and tile."),
        "stain resistant": ("adj", "Stain resistant fibers make spills easy to blot."),
        "low pile": ("adj", "Low pile height lets doors swing over it."),
        "pet friendly": ("adj", "Pet friendly weave that resists claws and hair."),
        "dimmable": ("adj", "Dimmable with five brightness levels."),
        "usb charging port": ("with", "A usb charging port on the base charges your phone."),
        "eye caring": ("adj", "Eye caring flicker free light reduces strain."),
        "touch control": ("with", "Touch control on the base switches modes with a tap."),
        "adjustable arm": ("with", "An adjustable arm and head aim light exactly where you need it."),
        "soy wax": ("adj", "Hand poured soy wax burns cleaner than paraffin."),
        "long lasting": ("adj", "Long lasting burn time of up to 60 hours."),
        "lead free wick": ("with", "A lead free wick made of braided cotton."),
        "essential oils": ("with", "Scented with essential oils."),
    },
    types=(
        ProductType(
            noun="Throw Pillow Covers",
            spoken=("throw pillow covers", "pillow covers"),
            article="some",
            plural=True,
            query="decorative pillows",
            path=words(
                "Home & Kitchen | Bedding | Decorative Pillows, Inserts & Covers | Throw Pillow Covers"
            ),
            attributes=words(
                "double sided | hidden zipper | machine washable | soft velvet | farmhouse style"
            ),
            options=(
                Option("Color", HOME_COLORS, (3, 7), COLOR_ASKS, images=True),
                Option(
                    "Size",
                    words("16 x 16 Inch | 18 x 18 Inch | 20 x 20 Inch | 22 x 22 Inch"),
                    (1, 3),
                    AMOUNT_ASKS,
                    run=True,
                ),
            ),
            price=(9.0, 39.0),
            extras=words("Cushion Cases | Couch Pillow Shams | Sofa Cushion Covers | Accent Pillow Cases"),
            blurbs=(
                "The {brand} {noun} refresh a sofa, bed or reading nook in minutes.",
                "{brand} {noun}: an easy way to bring texture and color to any room.",
                "Layer the {brand} {noun} for a cozy, collected look.",
            ),
            notes=(
                "Set of 2 covers; inserts not included.",
                "Measure your insert before ordering.",
                "Slight color variation between screens is normal.",
            ),
        ),
        ProductType(
            noun="Bed Sheet Set",
            spoken=("sheet set", "bed sheet set"),
            article="a",
            plural=False,
            query="sheet & pillowcase sets",
            path=words("Home & Kitchen | Bedding | Sheets & Pillowcases | Sheet & Pillowcase Sets"),
            attributes=words(
                "deep pocket | wrinkle free | hypoallergenic | fade resistant | brushed microfiber"
                " | egyptian cotton"
            ),
            options=(
                Option(
                    "Size",
                    words("Twin | Twin XL | Full | Queen | King | California King"),
                    (3, 6),
                    FIT_ASKS,
                    run=True,
                ),
                Option("Color", HOME_COLORS, (3, 8), COLOR_ASKS, images=True),
            ),
            price=(22.0, 149.0),
            extras=words("4 Piece Bedding | Fitted and Flat Sheets | Sateen Sheets | Percale Bedding"),
            blurbs=(
                "The {brand} {noun} makes every night feel like a hotel stay.",
                "{brand} {noun}: cool in summer, cozy in winter.",
                "Upgrade your bed with the {brand} {noun}.",
            ),
            notes=(
                "Includes a flat sheet, a fitted sheet and two pillowcases.",
                "Elastic all around the fitted sheet.",
                "Wash before first use.",
            ),
        ),
        ProductType(
            noun="Blackout Curtains",
            spoken=("blackout curtains", "curtains"),
            article="some",
            plural=True,
            query="window coverings",
            path=words("Home & Kitchen | Home Décor | Window Treatments | Curtains & Drapes | Panels"),
            attributes=words(
                "thermal insulated | noise reducing | grommet top | room darkening | energy saving"
                " | machine washable"
            ),
            options=(
                Option("Color", HOME_COLORS, (3, 7), COLOR_ASKS, images=True),
                Option(
                    "Size",
                    words("42 x 63 Inch | 52 x 63 Inch | 52 x 84 Inch | 52 x 95 Inch | 52 x 108 Inch"),
                    (2, 4),
                    AMOUNT_ASKS,
                    run=True,
                ),
            ),
            price=(16.0, 79.0),
            extras=words("Window Drapes | Bedroom Curtain Panels | Living Room Drapes | Window Panels"),
            blurbs=(
                "The {brand} {noun} block streetlights and morning sun for deeper sleep.",
                "{brand} {noun}: privacy and calm for bedrooms and nurseries.",
                "Hang the {brand} {noun} and turn any room into a dark, quiet retreat.",
            ),
            notes=(
                "Sold as a set of 2 panels.",
                "Fits rods up to 1.6 inches in diameter.",
                "Tie backs included.",
            ),
        ),
        ProductType(
            noun="Throw Blanket",
            spoken=("throw blanket", "blanket"),
            article="a",
            plural=False,
            query="bed blankets",
            path=words("Home & Kitchen | Bedding | Blankets & Throws | Throws"),
            attributes=words("reversible | sherpa lined | all season | machine washable | hypoallergenic"),
            options=(
                Option("Color", HOME_COLORS, (3, 8), COLOR_ASKS, images=True),
                Option(
                    "Size", words("50 x 60 Inch | 60 x 80 Inch | 90 x 90 Inch"), (1, 3), AMOUNT_ASKS, run=True
                ),
            ),
            price=(14.0, 69.0),
            extras=words("Couch Throw | Fleece Blanket | Sofa Blanket | Knit Throw"),
            blurbs=(
                "The {brand} {noun} is made for movie nights and afternoon naps.",
                "{brand} {noun}: drape it over a sofa or the foot of the bed.",
                "Wrap up in the {brand} {noun} and stay a while.",
            ),
            notes=("Will not shed after washing.", "Arrives folded in a gift ready bag.", "Tumble dry low."),
        ),
        ProductType(
            noun="Bath Towels",
            spoken=("bath towels", "towels"),
            article="some",
            plural=True,
            query="bath towels",
            path=words("Home & Kitchen | Bath | Towels | Bath Towels"),
            attributes=words("highly absorbent | quick dry | turkish cotton | lint free | fade resistant"),
            options=(
                Option("Color", HOME_COLORS, (3, 8), COLOR_ASKS, images=True),
                Option(
                    "Item Package Quantity",
                    words("Set of 2 | Set of 4 | Set of 6 | Set of 8"),
                    (1, 3),
                    PACK_ASKS,
                    run=True,
                ),
            ),
            price=(16.0, 79.0),
            extras=words("Bathroom Towels | Hotel Towels | Spa Towels | Shower Towels"),
            blurbs=(
                "The {brand} {noun} bring a spa feel to everyday showers.",
                "{brand} {noun}: thick, plush and built for years of washing.",
                "Wrap yourself in the {brand} {noun} after a long soak.",
            ),
            notes=(
                "Each towel measures 27 x 54 inches.",
                "Wash separately before first use.",
                "Avoid fabric softener to keep towels absorbent.",
            ),
        ),
        ProductType(
            noun="Area Rug",
            spoken=("area rug", "rug"),
            article="an",
            plural=False,
            query="area rugs",
            path=words("Home & Kitchen | Home Décor | Rugs, Pads & Protectors | Area Rugs"),
            attributes=words(
                "non slip backing | stain resistant | low pile | machine washable | pet friendly"
                " | fade resistant"
            ),
            options=(
                Option(
                    "Size",
                    words("2 x 3 Feet | 3 x 5 Feet | 5 x 7 Feet | 6 x 9 Feet | 8 x 10 Feet"),
                    (2, 5),
                    AMOUNT_ASKS,
                    run=True,
                ),
                Option("Color", HOME_COLORS, (2, 5), COLOR_ASKS, images=True),
            ),
            price=(29.0, 299.0),
            extras=words("Living Room Carpet | Bedroom Rug | Vintage Rug | Boho Rug | Moroccan Rug"),
            blurbs=(
                "The {brand} {noun} grounds a living room, bedroom or entry with soft color.",
                "{brand} {noun}: a timeless pattern that hides everyday wear.",
                "Finish the room with the {brand} {noun}.",
            ),
            notes=(
                "Spot clean with mild detergent.",
                "Lies flat within a day of unrolling.",
                "Pattern may vary slightly by size.",
            ),
        ),
        ProductType(
            noun="LED Desk Lamp",
            spoken=("desk lamp", "led desk lamp"),
            article="a",
            plural=False,
            query="desk lamps",
            path=words("Tools & Home Improvement | Lighting & Ceiling Fans | Lamps & Shades | Desk Lamps"),
            attributes=words(
                "dimmable | usb charging port | eye caring | touch control | adjustable arm | energy saving"
            ),
            options=(
                Option(
                    "Color",
                    words("Black | White | Silver | Brass | Sage Green"),
                    (1, 3),
                    COLOR_ASKS,
                    share=0.8,
                    images=True,
                ),
            ),
            price=(18.0, 99.0),
            extras=words("Reading Light | Study Lamp | Office Lamp | Table Lamp"),
            blurbs=(
                "The {brand} {noun} lights homework, crafts and late night reading.",
                "{brand} {noun}: a slim, modern lamp for desks and nightstands.",
                "Brighten your workspace with the {brand} {noun}.",
            ),
            notes=(
                "Three color temperatures.",
                "Adapter included.",
                "Bulb is built in and lasts 50000 hours.",
            ),
        ),
        ProductType(
            noun="Scented Candle",
            spoken=("scented candle", "candle"),
            article="a",
            plural=False,
            query="candles",
            path=words("Home & Kitchen | Home Décor | Candles & Holders | Candles | Jar Candles"),
            attributes=words("soy wax | long lasting | lead free wick | essential oils"),
            options=(
                Option(
                    "Scent",
                    words(
                        "Lavender | Vanilla Bean | Sea Salt | Eucalyptus | Amber Musk | Fresh Linen"
                        " | Cedarwood | Lemon Verbena"
                    ),
                    (2, 5),
                    ("with a {v} scent", "that smells like {v}", "in {v}"),
                    images=True,
                ),
                Option("Size", words("4 oz | 8 oz | 14 oz"), (1, 3), AMOUNT_ASKS, run=True, share=0.6),
            ),
            price=(9.0, 39.0),
            extras=words("Jar Candle | Aromatherapy Candle | Home Fragrance | Gift Candle"),
            blurbs=(
                "The {brand} {noun} fills a room with a warm, natural fragrance.",
                "{brand} {noun}: a calming glow for baths, dinners and quiet evenings.",
                "Light the {brand} {noun} and let the day melt away.",
            ),
            notes=(
                "Trim the wick to a quarter inch before each burn.",
                "Reusable glass jar with a lid.",
                "Hand poured in small batches.",
            ),
        ),
    ),
    closers=(
        "Designed to make home feel like home.",
        "Thoughtfully packaged with minimal plastic.",
        "A simple upgrade for any room.",
        "Loved by thousands of happy homes.",
    ),
)

ACCESSORIES = Category(
    name="accessories",
    brands=words(
        "Carrow | Ashby & Finch | Sterling Row | Nomadique | Pike Street | Veldt | Orrin | Marisol"
        " | Blackfen | Tern & Tide | Greyhaven | Solvane | Abbot Lane | Quillon"
    ),
    attributes={
        "water resistant": ("adj", "Water resistant fabric shrugs off rain and spills."),
        "usb charging port": ("with", "A built in usb charging port lets you charge your phone on the move."),
        "anti theft": ("adj", "An anti theft hidden pocket sits against your back."),
        "laptop compartment": ("with", "A padded laptop compartment fits up to 15.6 inch laptops."),
        "luggage strap": ("with", "A luggage strap slides over suitcase handles."),
        "lightweight": ("adj", "A lightweight build for all day carry."),
        "multiple pockets": ("with", "Multiple pockets keep cables, pens and keys organized."),
        "rfid blocking": ("adj", "Rfid blocking lining protects your cards from skimming."),
        "genuine leather": ("adj", "Crafted from genuine leather that develops a rich patina."),
        "slim design": ("with", "A slim design that does not bulge in a front pocket."),
        "gift box": ("with", "Arrives in a gift box, ready to give."),
        "id window": ("with", "A clear id window for quick access to your license."),
        "polarized": ("adj", "Polarized lenses cut glare from water, snow and roads."),
        "uv protection": ("with", "Full uv protection blocks 100 percent of UVA and UVB rays."),
        "scratch resistant": ("adj", "Scratch resistant lenses stay clear season after season."),
        "spring hinges": ("with", "Spring hinges flex for a comfortable fit on any face."),
        "stainless steel": ("adj", "A stainless steel case and buckle resist rust."),
        "quartz movement": ("with", "Precise Japanese quartz movement."),
        "luminous hands": ("with", "Luminous hands glow in the dark."),
        "date display": ("with", "A date display window at three o'clock."),
        "leather band": ("with", "A soft leather band with a quick release pin."),
        "cut to fit": ("adj", "A cut to fit strap trims to your exact waist size."),
        "automatic buckle": ("with", "An automatic buckle with a ratchet track instead of holes."),
        "reversible": ("adj", "Reversible with a different color on each side."),
        "adjustable strap": ("with", "An adjustable strap fits most head sizes."),
        "washed cotton": ("adj", "Washed cotton twill that feels broken in from day one."),
        "breathable": ("adj", "Breathable eyelets keep your head cool."),
        "low profile": ("adj", "A low profile crown that sits close to the head."),
        "extra long": ("adj", "Extra long so you can wrap it twice."),
        "cashmere feel": ("with", "A soft cashmere feel without the itch."),
        "winter warm": ("adj", "Winter warm and cozy on the coldest days."),
        "machine washable": ("adj", "Machine washable on a wool cycle."),
        "vegan leather": ("adj", "Made of vegan leather that looks and feels premium."),
        "zipper closure": ("with", "A zipper closure keeps belongings secure."),
    },
    types=(
        ProductType(
            noun="Laptop Backpack",
            spoken=("laptop backpack", "backpack"),
            article="a",
            plural=False,
            query="laptop backpacks",
            path=words("Clothing, Shoes & Jewelry | Luggage & Travel Gear | Backpacks | Laptop Backpacks"),
            attributes=words(
                "water resistant | usb charging port | anti theft | laptop compartment"
                " | luggage strap | lightweight | multiple pockets"
            ),
            options=(
                Option(
                    "Color",
                    (*GEAR_COLORS[:6], "Charcoal", "Navy", "Khaki"),
                    (2, 5),
                    COLOR_ASKS,
                    images=True,
                ),
            ),
            price=(24.0, 119.0),
            extras=words(
                "Travel Backpack | Business Bag | College Bookbag | Work Daypack | Commuter Backpack"
            ),
            blurbs=(
                "The {brand} {noun} carries a workday, a weekend trip or a full class load.",
                "{brand} {noun}: organized, comfortable and ready for the commute.",
                "From airport security to the lecture hall, the {brand} {noun} keeps up.",
            ),
            notes=(
                "Padded shoulder straps and back panel.",
                "Holds up to 30 liters.",
                "Lifetime warranty on zippers.",
            ),
        ),
        ProductType(
            noun="Bifold Wallet",
            audience="Men's ",
            spoken=words("wallet | bifold wallet | men's wallet"),
            article="a",
            plural=False,
            query="men's wallets",
            path=words(
                "Clothing, Shoes & Jewelry | Men | Accessories"
                " | Wallets, Card Cases & Money Organizers | Wallets"
            ),
            attributes=words("rfid blocking | genuine leather | slim design | gift box | id window"),
            options=(
                Option(
                    "Color",
                    words("Black | Brown | Tan | Dark Brown | Navy | Cognac"),
                    (2, 4),
                    COLOR_ASKS,
                    images=True,
                ),
            ),
            price=(12.0, 69.0),
            extras=words("Card Holder | Minimalist Wallet | Front Pocket Wallet | Classic Wallet"),
            blurbs=(
                "The {brand} {noun} holds cards and cash without the bulk.",
                "{brand} {noun}: clean stitching and a timeless shape.",
                "Carry the {brand} {noun} every day for years.",
            ),
            notes=(
                "Holds 8 to 12 cards.",
                "Full length bill compartment.",
                "Measures 4.3 x 3.5 inches closed.",
            ),
        ),
        ProductType(
            noun="Sunglasses",
            spoken=("sunglasses", "shades"),
            article="a pair of",
            plural=True,
            query="sunglasses",
            path=words(
                "Clothing, Shoes & Jewelry | Men | Accessories | Sunglasses & Eyewear Accessories"
                " | Sunglasses"
            ),
            attributes=words("polarized | uv protection | lightweight | scratch resistant | spring hinges"),
            options=(
                Option(
                    "Color",
                    words(
                        "Black Grey | Tortoise Brown | Gold Green | Silver Blue | Matte Black | Clear Pink"
                    ),
                    (2, 5),
                    COLOR_ASKS,
                    images=True,
                ),
            ),
            price=(12.0, 159.0),
            extras=words("Aviator Shades | Square Shades | Round Shades | Sports Eyewear | Driving Glasses"),
            blurbs=(
                "The {brand} {noun} are made for long drives, beach days and ball games.",
                "{brand} {noun}: classic frames with modern lens technology.",
                "See clearly in bright sun with the {brand} {noun}.",
            ),
            notes=(
                "Includes a hard case and cleaning cloth.",
                "Unisex fit for medium faces.",
                "Lens width 55 mm.",
            ),
        ),
        ProductType(
            noun="Analog Watch",
            audience="Men's ",
            spoken=words("watch | analog watch | wrist watch"),
            article="a",
            plural=False,
            query="men's wrist watches",
            path=words("Clothing, Shoes & Jewelry | Men | Watches | Wrist Watches"),
            attributes=words(
                "water resistant | stainless steel | quartz movement | luminous hands | date display"
                " | leather band"
            ),
            options=(
                Option(
                    "Color",
                    words("Black | Silver | Gold | Rose Gold | Blue | Brown | Green"),
                    (2, 4),
                    COLOR_ASKS,
                    images=True,
                ),
            ),
            price=(19.0, 349.0),
            extras=words("Dress Watch | Casual Wristwatch | Minimalist Watch | Business Watch | Field Watch"),
            blurbs=(
                "The {brand} {noun} pairs a clean dial with everyday durability.",
                "{brand} {noun}: understated style for the office and the weekend.",
                "Mark every moment with the {brand} {noun}.",
            ),
            notes=("Case diameter 40 mm.", "Two year warranty.", "Mineral crystal glass."),
        ),
        ProductType(
            noun="Leather Belt",
            audience="Men's ",
            spoken=words("belt | leather belt | men's belt"),
            article="a",
            plural=False,
            query="men's belts",
            path=words("Clothing, Shoes & Jewelry | Men | Accessories | Belts"),
            attributes=words("genuine leather | cut to fit | automatic buckle | reversible | gift box"),
            options=(
                Option(
                    "Color",
                    words("Black | Brown | Tan | Dark Brown | Cognac"),
                    (2, 4),
                    COLOR_ASKS,
                    images=True,
                ),
                Option("Size", words("30 | 32 | 34 | 36 | 38 | 40 | 42 | 44"), (4, 7), SIZE_ASKS, run=True),
            ),
            price=(14.0, 59.0),
            extras=words("Dress Belt | Casual Belt | Jeans Belt | Work Belt"),
            blurbs=(
                "The {brand} {noun} finishes jeans, chinos and suits alike.",
                "{brand} {noun}: a classic buckle on a belt built to last.",
                "Upgrade your everyday look with the {brand} {noun}.",
            ),
            notes=("Order your pant waist size.", "Belt width 1.38 inches.", "Buckle is removable."),
        ),
        ProductType(
            noun="Baseball Cap",
            spoken=words("baseball cap | cap | dad hat"),
            article="a",
            plural=False,
            query="baseball caps",
            path=words("Clothing, Shoes & Jewelry | Men | Accessories | Hats & Caps | Baseball Caps"),
            attributes=words("adjustable strap | washed cotton | breathable | low profile | uv protection"),
            options=(
                Option(
                    "Color",
                    (*GEAR_COLORS[:6], "Khaki", "Navy", "Olive", "White"),
                    (3, 7),
                    COLOR_ASKS,
                    images=True,
                ),
            ),
            price=(9.0, 34.0),
            extras=words("Dad Hat | Sports Hat | Trucker Cap | Golf Cap"),
            blurbs=(
                "The {brand} {noun} is the easy finishing touch for weekends and game days.",
                "{brand} {noun}: a classic six panel shape that goes with everything.",
                "Block the sun in style with the {brand} {noun}.",
            ),
            notes=("One size fits most.", "Pre curved brim.", "Hand wash cold."),
        ),
        ProductType(
            noun="Winter Scarf",
            spoken=("scarf", "winter scarf"),
            article="a",
            plural=False,
            query="women's scarves & wraps",
            path=words(
                "Clothing, Shoes & Jewelry | Women | Accessories | Scarves & Wraps"
                " | Cold Weather Scarves & Wraps"
            ),
            attributes=words("extra long | cashmere feel | winter warm | reversible | machine washable"),
            options=(Option("Color", HOME_COLORS, (3, 7), COLOR_ASKS, images=True),),
            price=(9.0, 49.0),
            extras=words("Knit Shawl | Blanket Scarf | Plaid Wrap | Fringe Scarf"),
            blurbs=(
                "The {brand} {noun} layers over coats and sweaters all season.",
                "{brand} {noun}: the cozy accessory you will wear every day until spring.",
                "Wrap up in the {brand} {noun} on frosty mornings.",
            ),
            notes=("Measures 75 x 12 inches.", "Fringed ends.", "Makes a lovely holiday gift."),
        ),
        ProductType(
            noun="Crossbody Bag",
            audience="Women's ",
            spoken=("crossbody bag", "crossbody purse"),
            article="a",
            plural=False,
            query="women's cross-body handbags",
            path=words("Clothing, Shoes & Jewelry | Women | Handbags & Wallets | Cross-Body Bags"),
            attributes=words(
                "vegan leather | adjustable strap | multiple pockets | zipper closure | lightweight"
                " | rfid blocking"
            ),
            options=(Option("Color", WOMENS_SHOE_COLORS, (3, 6), COLOR_ASKS, images=True),),
            price=(16.0, 89.0),
            extras=words("Shoulder Purse | Small Handbag | Camera Bag | Travel Purse"),
            blurbs=(
                "The {brand} {noun} holds a phone, wallet and keys with hands free ease.",
                "{brand} {noun}: a compact bag for errands, concerts and travel.",
                "Go light with the {brand} {noun}.",
            ),
            notes=("Measures 9 x 6 x 2.5 inches.", "Strap drop up to 24 inches.", "Gold tone hardware."),
        ),
    ),
    closers=(
        "Designed to be used every day.",
        "A finishing touch for any outfit.",
        "Thoughtful details, made to last.",
        "Backed by our one year quality promise.",
    ),
)

KITCHEN = Category(
    name="kitchen",
    brands=words(
        "Copperline | Saltbrook | Emberly | Forge & Fennel | Kitchara | Pantrywise | Oliveto"
        " | Brightbake | Sagewood | Cuisinova | Steelnest | Mirepoix | Hearth & Ladle | Tavola"
    ),
    attributes={
        "non stick": ("adj", "A non stick coating releases eggs and pancakes with no oil."),
        "pfoa free": ("adj", "Pfoa free coating for worry free cooking."),
        "dishwasher safe": ("adj", "Dishwasher safe for quick cleanup."),
        "oven safe": ("adj", "Oven safe up to 500 degrees."),
        "induction compatible": ("adj", "Induction compatible base works on every stovetop."),
        "stay cool handle": ("with", "A stay cool handle stays comfortable over a hot burner."),
        "granite coating": ("with", "A speckled granite coating resists scratches."),
        "high carbon steel": ("adj", "Forged from high carbon steel for lasting sharpness."),
        "ergonomic handle": ("with", "An ergonomic handle reduces wrist fatigue."),
        "razor sharp": ("adj", "Razor sharp edge hand polished to 15 degrees."),
        "full tang": ("adj", "Full tang construction for balance and strength."),
        "blade guard": ("with", "A blade guard protects the edge in a drawer."),
        "gift box": ("with", "Presented in a gift box."),
        "juice groove": ("with", "A deep juice groove catches drippings from roasts."),
        "non slip feet": ("with", "Non slip feet keep it steady on the counter."),
        "reversible": ("adj", "Reversible, with one side for meat and one for produce."),
        "organic bamboo": ("adj", "Made of sustainably harvested organic bamboo."),
        "auto shut off": ("with", "Auto shut off turns the power off when water boils."),
        "bpa free": ("adj", "Bpa free materials everywhere that touches food or water."),
        "fast boiling": ("adj", "Fast boiling 1500 watt heater."),
        "temperature control": ("with", "Temperature control presets for green tea, coffee and more."),
        "stainless steel": ("adj", "Brushed stainless steel body resists rust and stains."),
        "boil dry protection": ("with", "Boil dry protection guards against running empty."),
        "leak proof": ("adj", "Leak proof locking lids seal in soups and sauces."),
        "microwave safe": ("adj", "Microwave safe for easy reheating."),
        "airtight lids": ("with", "Airtight lids keep leftovers fresh longer."),
        "stackable": ("adj", "Stackable design saves cabinet space."),
        "freezer safe": ("adj", "Freezer safe for batch cooking."),
        "vacuum insulated": ("adj", "Vacuum insulated to keep drinks cold for 24 hours or hot for 12."),
        "straw lid": ("with", "A slide straw lid with two reusable straws."),
        "sweat proof": ("adj", "A sweat proof exterior leaves no rings on the table."),
        "cup holder friendly": ("adj", "A cup holder friendly base for the commute."),
        "heat resistant": ("adj", "Heat resistant silicone handles up to 450 degrees."),
        "non scratch": ("adj", "Non scratch heads protect coated pans."),
        "utensil holder": ("with", "A matching utensil holder keeps the counter tidy."),
        "wooden handles": ("with", "Wooden handles made of natural acacia."),
        "rust resistant": ("adj", "Rust resistant aluminized steel."),
        "heavy duty": ("adj", "Heavy duty gauge that never buckles."),
        "warp resistant": ("adj", "Warp resistant rolled rims keep it flat in a hot oven."),
    },
    types=(
        ProductType(
            noun="Frying Pan",
            spoken=words("frying pan | skillet | nonstick frying pan"),
            article="a",
            plural=False,
            query="skillets",
            path=words("Home & Kitchen | Kitchen & Dining | Cookware | Pots & Pans | Skillets"),
            attributes=words(
                "non stick | pfoa free | dishwasher safe | oven safe | induction compatible"
                " | stay cool handle | granite coating"
            ),
            options=(
                Option("Size", words("8 Inch | 10 Inch | 11 Inch | 12 Inch"), (1, 3), AMOUNT_ASKS, run=True),
                Option("Color", KITCHEN_COLORS, (1, 3), COLOR_ASKS, share=0.5, images=True),
            ),
            price=(17.0, 99.0),
            extras=words("Omelette Pan | Egg Pan | Saute Pan | Chef Pan"),
            blurbs=(
                "The {brand} {noun} is the everyday pan for eggs, stir fries and seared fish.",
                "{brand} {noun}: even heating from edge to edge.",
                "Cook breakfast through dinner with the {brand} {noun}.",
            ),
            notes=(
                "Use medium heat for best results.",
                "Glass lid sold separately.",
                "Limited lifetime warranty.",
            ),
        ),
        ProductType(
            noun="Chef Knife",
            spoken=("chef knife", "kitchen knife"),
            article="a",
            plural=False,
            query="chef's knives",
            path=words("Home & Kitchen | Kitchen & Dining | Kitchen Knives & Accessories | Chef's Knives"),
            attributes=words(
                "high carbon steel | ergonomic handle | razor sharp | full tang | blade guard | gift box"
            ),
            options=(
                Option("Size", words("6 Inch | 8 Inch | 10 Inch"), (1, 3), AMOUNT_ASKS, run=True, share=0.7),
            ),
            price=(14.0, 149.0),
            extras=words("Cooking Knife | Santoku Style Knife | Professional Knife | Kitchen Blade"),
            blurbs=(
                "The {brand} {noun} slices, dices and minces with effortless control.",
                "{brand} {noun}: the one knife every home cook needs.",
                "Prep faster with the {brand} {noun}.",
            ),
            notes=(
                "Hand wash and dry immediately.",
                "Hone regularly to keep the edge.",
                "Not for cutting bones or frozen food.",
            ),
        ),
        ProductType(
            noun="Cutting Board",
            spoken=("cutting board", "chopping board"),
            article="a",
            plural=False,
            query="cutting boards",
            path=words("Home & Kitchen | Kitchen & Dining | Kitchen Utensils & Gadgets | Cutting Boards"),
            attributes=words("juice groove | non slip feet | reversible | organic bamboo | dishwasher safe"),
            options=(
                Option("Size", words("Small | Medium | Large | Extra Large"), (1, 3), FIT_ASKS, run=True),
                Option(
                    "Item Package Quantity", ("Set of 2", "Set of 3"), (1, 2), PACK_ASKS, run=True, share=0.4
                ),
            ),
            price=(12.0, 69.0),
            extras=words("Carving Board | Serving Board | Butcher Block | Prep Board"),
            blurbs=(
                "The {brand} {noun} gives you a roomy, knife friendly surface for daily prep.",
                "{brand} {noun}: from chopping vegetables to serving cheese.",
                "Prep, carve and serve on the {brand} {noun}.",
            ),
            notes=(
                "Oil occasionally to keep it looking new.",
                "Hanging hole for easy storage.",
                "Gentle on knife edges.",
            ),
        ),
        ProductType(
            noun="Electric Kettle",
            spoken=("electric kettle", "tea kettle"),
            article="an",
            plural=False,
            query="electric kettles",
            path=words("Home & Kitchen | Kitchen & Dining | Coffee, Tea & Espresso | Electric Kettles"),
            attributes=words(
                "auto shut off | bpa free | fast boiling | temperature control | stainless steel"
                " | boil dry protection"
            ),
            options=(
                Option("Size", words("1.0 Liter | 1.5 Liter | 1.7 Liter"), (1, 3), AMOUNT_ASKS, run=True),
                Option("Color", KITCHEN_COLORS, (1, 4), COLOR_ASKS, share=0.7, images=True),
            ),
            price=(19.0, 119.0),
            extras=words("Hot Water Boiler | Tea Maker | Water Heater | Cordless Kettle"),
            blurbs=(
                "The {brand} {noun} heats water for tea, coffee and oatmeal in minutes.",
                "{brand} {noun}: faster than the stove and easier to pour.",
                "Start every morning with the {brand} {noun}.",
            ),
            notes=(
                "Cordless pot lifts off a 360 degree base.",
                "Water window with level marks.",
                "Descale monthly with vinegar.",
            ),
        ),
        ProductType(
            noun="Food Storage Containers",
            spoken=("food storage containers", "meal prep containers"),
            article="some",
            plural=True,
            query="food storage containers",
            path=words(
                "Home & Kitchen | Kitchen & Dining | Storage & Organization | Food Storage"
                " | Food Storage Containers"
            ),
            attributes=words(
                "bpa free | leak proof | microwave safe | airtight lids | stackable | freezer safe"
                " | dishwasher safe"
            ),
            options=(
                Option(
                    "Size", words("10 Piece | 14 Piece | 20 Piece | 24 Piece"), (1, 3), AMOUNT_ASKS, run=True
                ),
            ),
            price=(14.0, 59.0),
            extras=words("Meal Prep Containers | Lunch Boxes | Pantry Containers | Leftover Containers"),
            blurbs=(
                "The {brand} {noun} keep leftovers, lunches and pantry staples organized.",
                "{brand} {noun}: meal prep made simple.",
                "Clear the clutter with the {brand} {noun}.",
            ),
            notes=(
                "Lids snap on in one motion.",
                "Nesting bases store inside each other.",
                "Label friendly lids.",
            ),
        ),
        ProductType(
            noun="Insulated Tumbler",
            spoken=words("tumbler | insulated tumbler | travel mug"),
            article="a",
            plural=False,
            query="travel & to-go tumblers",
            path=words("Home & Kitchen | Kitchen & Dining | Travel & To-Go Drinkware | Tumblers"),
            attributes=words(
                "vacuum insulated | leak proof | straw lid | sweat proof | dishwasher safe"
                " | cup holder friendly | bpa free"
            ),
            options=(
                Option("Size", words("20 oz | 30 oz | 40 oz"), (1, 3), AMOUNT_ASKS, run=True),
                Option("Color", (*KITCHEN_COLORS, "Lilac", "Seafoam"), (3, 7), COLOR_ASKS, images=True),
            ),
            price=(12.0, 49.0),
            extras=words("Coffee Cup | Iced Coffee Cup | Drink Tumbler | Car Cup"),
            blurbs=(
                "The {brand} {noun} keeps iced coffee icy through the longest afternoon.",
                "{brand} {noun}: your drink, your temperature, all day long.",
                "Take the {brand} {noun} from the kitchen to the car to the desk.",
            ),
            notes=("Fits most car cup holders.", "Handle available on the 40 oz size.", "Do not microwave."),
        ),
        ProductType(
            noun="Kitchen Utensil Set",
            spoken=("kitchen utensil set", "utensil set"),
            article="a",
            plural=False,
            query="kitchen utensil sets",
            path=words(
                "Home & Kitchen | Kitchen & Dining | Kitchen Utensils & Gadgets | Kitchen Utensil Sets"
            ),
            attributes=words(
                "heat resistant | bpa free | non scratch | dishwasher safe | utensil holder | wooden handles"
            ),
            options=(
                Option("Color", KITCHEN_COLORS, (2, 5), COLOR_ASKS, images=True),
                Option(
                    "Size", words("5 Piece | 12 Piece | 24 Piece"), (1, 3), AMOUNT_ASKS, run=True, share=0.6
                ),
            ),
            price=(14.0, 59.0),
            extras=words("Spatula Set | Cooking Tools | Silicone Utensils | Kitchen Gadgets"),
            blurbs=(
                "The {brand} {noun} covers flipping, stirring, serving and scraping.",
                "{brand} {noun}: every tool a busy kitchen needs in one set.",
                "Replace mismatched spoons with the {brand} {noun}.",
            ),
            notes=(
                "Includes a turner, spoon, ladle, spatula and tongs.",
                "Seamless heads leave no place for food to hide.",
                "Hanging loops on every handle.",
            ),
        ),
        ProductType(
            noun="Baking Sheet",
            spoken=words("baking sheet | sheet pan | cookie sheet"),
            article="a",
            plural=False,
            query="baking sheets",
            path=words("Home & Kitchen | Kitchen & Dining | Bakeware | Baking & Cookie Sheets"),
            attributes=words(
                "non stick | rust resistant | heavy duty | warp resistant | oven safe | dishwasher safe"
            ),
            options=(
                Option(
                    "Size", words("Quarter Sheet | Half Sheet | Jelly Roll"), (1, 3), AMOUNT_ASKS, run=True
                ),
                Option(
                    "Item Package Quantity", ("Set of 2", "Set of 3"), (1, 2), PACK_ASKS, run=True, share=0.5
                ),
            ),
            price=(11.0, 49.0),
            extras=words("Cookie Pan | Roasting Pan | Sheet Pan | Bakeware Tray"),
            blurbs=(
                "The {brand} {noun} roasts vegetables and bakes cookies evenly every time.",
                "{brand} {noun}: the workhorse pan of the home kitchen.",
                "Bake, roast and toast on the {brand} {noun}.",
            ),
            notes=(
                "Fits standard home ovens.",
                "Rolled edges for a secure grip.",
                "Use parchment for sticky bakes.",
            ),
        ),
    ),
    closers=(
        "Designed by home cooks for home cooks.",
        "A smart addition to any kitchen.",
        "Makes a great housewarming or wedding gift.",
        "Backed by a satisfaction guarantee.",
    ),
)

BOOKS = Category(
    name="books",
    brands=words(
        "Margaret Ellison | Theo Vance | Priya Raman | Jonah Whitfield | Clara Benning"
        " | Samuel Okafor | Lena Hartwell | Marco Delacroix | Ava Lindqvist | Elias Thorne"
        " | Nora Castellanos | Felix Brandt | Hazel Moreau | Owen Fairley | Ines Valdez"
        " | Grace Whitmore"
    ),
    attributes={
        "full color photos": ("with", "Full color photos show every finished dish."),
        "step by step instructions": ("with", "Step by step instructions walk you through each technique."),
        "beginner friendly": ("adj", "Beginner friendly explanations assume no experience."),
        "budget friendly": ("adj", "Budget friendly ingredients you can find at any grocery store."),
        "vegetarian recipes": ("with", "Includes a chapter of vegetarian recipes."),
        "family friendly": ("adj", "Family friendly picks that please picky eaters."),
        "large print": ("adj", "Set in large print for comfortable reading."),
        "award winning": ("adj", "From an award winning author."),
        "bestselling": ("adj", "The bestselling author's most gripping story yet."),
        "standalone": ("adj", "A standalone story; no need to read anything else first."),
        "reading group guide": ("with", "Includes a reading group guide with discussion questions."),
        "twist ending": ("with", "A twist ending readers will not see coming."),
        "illustrated maps": ("with", "Illustrated maps help you follow the journey."),
        "full color illustrations": ("with", "Full color illustrations on every page."),
        "bedtime reading": ("for", "Perfect for bedtime reading."),
        "early readers": ("for", "Short sentences are ideal for early readers."),
        "rhyming text": ("with", "Playful rhyming text that kids love to repeat."),
        "read aloud": ("adj", "A read aloud favorite for classrooms and story time."),
        "practical exercises": ("with", "Practical exercises at the end of each chapter."),
        "journal prompts": ("with", "Journal prompts help you put ideas into practice."),
        "stress relief": ("for", "Great for stress relief after a long day."),
        "goal setting": ("for", "A clear framework for goal setting."),
        "pull out map": ("with", "A pull out map with city and regional detail."),
        "insider tips": ("with", "Insider tips from locals on where to eat and stay."),
        "pocket size": ("adj", "Pocket size format that fits a day bag."),
        "sample itineraries": ("with", "Sample itineraries for three, seven and fourteen day trips."),
        "extensively researched": ("adj", "Extensively researched with hundreds of sources."),
        "primary sources": ("with", "Draws on letters, diaries and other primary sources."),
        "single sided pages": ("with", "Single sided pages prevent bleed through."),
        "thick paper": ("with", "Printed on thick paper that takes markers and pencils."),
        "intricate designs": ("with", "Intricate designs to keep you absorbed for hours."),
    },
    types=(
        ProductType(
            noun="Cookbook",
            spoken=("cookbook", "recipe book"),
            article="a",
            plural=False,
            query="cookbooks",
            path=words("Books | Cookbooks, Food & Wine | Quick & Easy"),
            attributes=words(
                "full color photos | step by step instructions | beginner friendly | budget friendly"
                " | vegetarian recipes | family friendly"
            ),
            options=(
                Option("Format", words("Paperback | Hardcover | Kindle | Spiral-bound"), (2, 4), FORMAT_ASKS),
            ),
            price=(9.0, 39.0),
            extras=(),
            names=words(
                "Salt and Ember | The Sunday Table | Skillet Suppers | The Green Pantry"
                " | Weeknight Kitchen | Small Plates Big Flavor | One Pot Wonders | The Bread Drawer"
                " | Market Day | Supper in Thirty | The Spice Shelf"
            ),
            subtitles=(
                "A Cookbook of 100 Simple Recipes",
                "A Cookbook for Busy Families",
                "Everyday Recipes, A Cookbook",
                "The Home Cook's Cookbook",
            ),
            blurbs=(
                "In this cookbook, {brand} shares the recipes that fill a home kitchen with warmth.",
                "{brand} turns weeknight dinners into something to look forward to in this cookbook.",
                "This cookbook from {brand} gathers dishes for every season and occasion.",
            ),
            notes=(
                "Includes a pantry guide and shopping lists.",
                "Recipes list prep and cook times.",
                "Lay flat binding on the spiral-bound format.",
            ),
        ),
        ProductType(
            noun="Mystery Novel",
            spoken=("mystery novel", "mystery book"),
            article="a",
            plural=False,
            query="mystery",
            path=words("Books | Mystery, Thriller & Suspense | Mystery"),
            attributes=words(
                "large print | award winning | bestselling | standalone | reading group guide | twist ending"
            ),
            options=(
                Option("Format", words("Paperback | Hardcover | Kindle | Audio CD"), (2, 4), FORMAT_ASKS),
            ),
            price=(7.0, 32.0),
            extras=(),
            names=words(
                "The Silent Orchard | The Glass Harbor | The Last Alibi | Drowned Ledger"
                " | The Winter Witness | A Key Beneath the Stairs | The Vanishing Ferry"
                " | Murder at Hollow Manor | The Crimson Lighthouse | What the Gardener Saw"
            ),
            subtitles=("A Mystery Novel", "A Detective Mystery Novel", "A Small Town Mystery Novel"),
            blurbs=(
                "In this mystery novel by {brand}, a quiet town hides a decades old secret.",
                "{brand} returns with a mystery novel full of suspects, secrets and red herrings.",
                "A detective with nothing to lose follows one last lead in this mystery novel by {brand}.",
            ),
            notes=("Approximately 350 pages.", "A perfect beach read.", "Soon to be a limited series."),
        ),
        ProductType(
            noun="Science Fiction Novel",
            spoken=("science fiction novel", "sci fi novel"),
            article="a",
            plural=False,
            query="science fiction",
            path=words("Books | Science Fiction & Fantasy | Science Fiction"),
            attributes=words(
                "large print | award winning | bestselling | standalone | reading group guide"
                " | illustrated maps"
            ),
            options=(
                Option("Format", words("Paperback | Hardcover | Kindle | Audio CD"), (2, 4), FORMAT_ASKS),
            ),
            price=(7.0, 34.0),
            extras=(),
            names=words(
                "Tides of Kepler | The Long Orbit | Ashes of Meridian | Starfall Protocol"
                " | The Quiet Colony | Children of the Drift | Echoes from Vela | The Salt Moon"
                " | Signal at the Edge | The Clockwork Sea"
            ),
            subtitles=(
                "A Science Fiction Novel",
                "A Space Opera Science Fiction Novel",
                "A Science Fiction Novel of First Contact",
            ),
            blurbs=(
                "In this science fiction novel by {brand}, a generation ship finds its course changed.",
                "{brand} imagines humanity's first colony beyond the sun in this science fiction novel.",
                "An engineer hears a signal that could end a war in this science fiction novel by {brand}.",
            ),
            notes=(
                "Approximately 420 pages.",
                "Includes an excerpt from the next book.",
                "Glossary of ships and worlds.",
            ),
        ),
        ProductType(
            noun="Picture Book",
            spoken=words("picture book | children's picture book | kids book"),
            article="a",
            plural=False,
            query="children's books",
            path=words(
                "Books | Children's Books | Growing Up & Facts of Life"
                " | Friendship, Social Skills & School Life"
            ),
            attributes=words(
                "full color illustrations | bedtime reading | early readers | rhyming text | read aloud"
            ),
            options=(Option("Format", words("Hardcover | Paperback | Board Book"), (2, 3), FORMAT_ASKS),),
            price=(6.0, 22.0),
            extras=(),
            names=words(
                "Otter Finds a Friend | The Moon Who Could Not Sleep | Benny Bear Goes to School"
                " | Puddle Jump | Little Fox and the Big Storm | Where the Fireflies Go"
                " | Hello, Garden | Ten Tiny Tugboats | Mabel Learns to Share | Goodnight, Busy City"
            ),
            subtitles=(
                "A Picture Book for Kids Ages 3 to 5",
                "A Children's Picture Book",
                "A Picture Book About Friendship",
            ),
            blurbs=(
                "This picture book by {brand} celebrates kindness, courage and friendship.",
                "{brand} wrote this picture book for little listeners and the grown ups who read to them.",
                "A gentle picture book from {brand} about growing up and trying new things.",
            ),
            notes=("Recommended for ages 3 to 5.", "32 pages.", "Sturdy pages for little hands."),
        ),
        ProductType(
            noun="Self-Help Guide",
            spoken=("self-help book", "self help guide"),
            article="a",
            plural=False,
            query="self-help",
            path=words("Books | Self-Help | Personal Transformation"),
            attributes=words(
                "practical exercises | journal prompts | bestselling | large print | stress relief"
                " | goal setting"
            ),
            options=(
                Option("Format", words("Paperback | Hardcover | Kindle | Audio CD"), (2, 4), FORMAT_ASKS),
            ),
            price=(9.0, 29.0),
            extras=(),
            names=words(
                "Quiet Momentum | The Small Yes | Unhurried | The Morning Ledger | Enough for Today"
                " | Steady Ground | The Habit Garden | Begin Again Tomorrow | Less Noise"
                " | The Kind Mind"
            ),
            subtitles=(
                "A Self-Help Guide to Building Habits That Last",
                "A Self-Help Guide to Calm and Focus",
                "A Self-Help Guide to a Simpler Life",
            ),
            blurbs=(
                "In this self-help book, {brand} shows how small daily choices add up to lasting change.",
                "{brand} offers a warm, science based self-help book for anyone feeling stuck.",
                "This self-help book by {brand} blends research and stories into a clear plan.",
            ),
            notes=(
                "Approximately 240 pages.",
                "Chapter summaries for quick review.",
                "Notes and index included.",
            ),
        ),
        ProductType(
            noun="Travel Guide",
            spoken=("travel guide", "travel guidebook"),
            article="a",
            plural=False,
            query="travel guides",
            path=words("Books | Travel | Europe"),
            attributes=words(
                "pull out map | insider tips | pocket size | sample itineraries | full color photos"
            ),
            options=(Option("Format", ("Paperback", "Kindle"), (1, 2), FORMAT_ASKS, share=0.8),),
            price=(9.0, 29.0),
            extras=(),
            names=words(
                "Portugal | Iceland | Scotland | Greece | Japan | Peru | Vietnam | Morocco"
                " | New Zealand | Norway | Ireland"
            ),
            subtitles=(
                "The Essential Travel Guide",
                "A Complete Travel Guide",
                "Travel Guide and Phrasebook",
            ),
            blurbs=(
                "This travel guide by {brand} covers the highlights and the hidden corners.",
                "{brand} has traveled every road in this travel guide so you can plan with confidence.",
                "Plan the trip of a lifetime with this travel guide from {brand}.",
            ),
            notes=(
                "Updated edition with current prices and opening hours.",
                "Includes a phrasebook section.",
                "Color coded chapters by region.",
            ),
        ),
        ProductType(
            noun="History Book",
            spoken=("history book", "book about history"),
            article="a",
            plural=False,
            query="world history",
            path=words("Books | History | World"),
            attributes=words(
                "extensively researched | primary sources | illustrated maps | award winning"
                " | bestselling | large print"
            ),
            options=(
                Option("Format", words("Paperback | Hardcover | Kindle | Audio CD"), (2, 4), FORMAT_ASKS),
            ),
            price=(11.0, 39.0),
            extras=(),
            names=words(
                "The Salt Roads | Empires of the River | The Iron Century | Ships of the Silk Trade"
                " | The Year the Bells Fell Silent | Bridges and Borders | The Paper Kingdom"
                " | The Lighthouse Keepers | Cities of Ash and Stone | The Cartographers"
            ),
            subtitles=(
                "A History Book of the Ancient World",
                "A History Book of Trade and Empire",
                "A Narrative History Book",
            ),
            blurbs=(
                "In this history book, {brand} tells the story of the people who shaped an era.",
                "{brand} brings the past to life in a sweeping, readable history book.",
                "This history book by {brand} follows merchants, sailors and rulers across centuries.",
            ),
            notes=(
                "Approximately 480 pages.",
                "Notes, bibliography and index.",
                "Sixteen pages of photographs.",
            ),
        ),
        ProductType(
            noun="Adult Coloring Book",
            spoken=("coloring book", "adult coloring book"),
            article="an",
            plural=False,
            query="coloring books for grown-ups",
            path=words("Books | Crafts, Hobbies & Home | Coloring Books for Grown-Ups"),
            attributes=words(
                "stress relief | single sided pages | thick paper | beginner friendly | intricate designs"
            ),
            options=(Option("Format", ("Paperback", "Spiral-bound"), (1, 2), FORMAT_ASKS),),
            price=(6.0, 19.0),
            extras=(),
            names=words(
                "Mandala Meadow | Ocean Dreams | Secret Forest | Cozy Cottages | Botanical Bliss"
                " | City at Night | Mindful Animals | Seasons in Bloom | Kaleidoscope Patterns"
                " | Sweet Treats"
            ),
            subtitles=(
                "An Adult Coloring Book with 50 Designs",
                "An Adult Coloring Book for Relaxation",
                "An Adult Coloring Book",
            ),
            blurbs=(
                "This adult coloring book by {brand} invites you to slow down and create.",
                "{brand} drew every page of this adult coloring book by hand.",
                "Unwind with this adult coloring book from {brand}.",
            ),
            notes=(
                "50 original designs.",
                "8.5 x 11 inch pages.",
                "Works with colored pencils and gel pens.",
            ),
        ),
    ),
    closers=(
        "Readers call it impossible to put down.",
        "A thoughtful gift for any reader.",
        "Available wherever books are sold.",
        "Printed on responsibly sourced paper.",
    ),
)

CATEGORIES: tuple[Category, ...] = (SHOES, ELECTRONICS, APPAREL, FITNESS, HOME, ACCESSORIES, KITCHEN, BOOKS)

# Words that read as an acronym in titles.
ACRONYMS = {"usb": "USB", "led": "LED", "rgb": "RGB", "hd": "HD", "uv": "UV", "rfid": "RFID", "bpa": "BPA",
            "pfoa": "PFOA", "gps": "GPS", "dpi": "DPI", "id": "ID", "c": "C"}  # fmt: skip
OPENERS = words(
    "i need | i am looking for | i'm looking for | i want | i want to buy | find me | can you find me"
    " | show me | i would like | get me | looking for | help me find | i'd like to order"
    " | please find | i am searching for"
)
WORKER_ALPHABET = string.ascii_uppercase + string.digits
WORD = re.compile(r"\w+")
# Adjectives that name a material or a cut: "a soy wax candle", never "a candle that is soy wax".
PREFIX_ONLY = frozenset(
    words(
        "soy wax | cast iron | organic bamboo | stainless steel | genuine leather | vegan leather"
        " | high carbon steel | egyptian cotton | turkish cotton | brushed microfiber | washed cotton"
        " | full hd | rgb backlit | indoor outdoor | steel toe | open toe | grommet top | knee length"
        " | short sleeve | long sleeve | crew neck | v neck | high waist | large print | pocket size"
        " | nylon braided | neoprene coated | powder coated | double wall insulated"
        " | vacuum insulated | extra long"
    )
)

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
