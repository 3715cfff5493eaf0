"""The embedded analyzer against what Lucene's analyzer (Anserini 0.25, Lucene 9) gives.

Every expectation below is Lucene's own output for the input, recorded from
``io.anserini.analysis.DefaultEnglishAnalyzer`` / ``StandardAnalyzer``; the Lucene tests
(`test_lucene.py`) also compare with Lucene live on the whole 1k set.
"""

from __future__ import annotations

import pytest

from webshop_gym.search.analysis import LUCENE_STOP_WORDS, analyze, porter_stem, tokenize
from webshop_gym.search.engines import analyze as engines_analyze

# Lucene's PorterStemFilter; Snowball's "porter" differs on technology, assembly,
# incredibly, possibly, us and os.
LUCENE_STEMS = {
    "technology": "technolog",
    "technologies": "technolog",
    "assembly": "assembl",
    "assemblies": "assembl",
    "incredibly": "incred",
    "possibly": "possibl",
    "comfortably": "comfort",
    "biology": "biologi",
    "us": "us",
    "os": "os",
    "caresses": "caress",
    "ponies": "poni",
    "ties": "ti",
    "cats": "cat",
    "feed": "feed",
    "agreed": "agre",
    "plastered": "plaster",
    "motoring": "motor",
    "sing": "sing",
    "conflated": "conflat",
    "troubled": "troubl",
    "sized": "size",
    "hopping": "hop",
    "tanned": "tan",
    "falling": "fall",
    "hissing": "hiss",
    "fizzed": "fizz",
    "failing": "fail",
    "filing": "file",
    "happy": "happi",
    "sky": "sky",
    "relational": "relat",
    "conditional": "condit",
    "rational": "ration",
    "valency": "valenc",
    "hesitancy": "hesit",
    "digitizer": "digit",
    "radically": "radic",
    "differently": "differ",
    "analogously": "analog",
    "vietnamization": "vietnam",
    "predication": "predic",
    "operator": "oper",
    "feudalism": "feudal",
    "decisiveness": "decis",
    "hopefulness": "hope",
    "callousness": "callous",
    "formality": "formal",
    "sensitivity": "sensit",
    "sensibility": "sensibl",
    "triplicate": "triplic",
    "formative": "form",
    "formalize": "formal",
    "electricity": "electr",
    "electrical": "electr",
    "hopeful": "hope",
    "goodness": "good",
    "revival": "reviv",
    "allowance": "allow",
    "inference": "infer",
    "airliner": "airlin",
    "gyroscopic": "gyroscop",
    "adjustable": "adjust",
    "defensible": "defens",
    "irritant": "irrit",
    "replacement": "replac",
    "adjustment": "adjust",
    "dependent": "depend",
    "adoption": "adopt",
    "communism": "commun",
    "activate": "activ",
    "angularity": "angular",
    "homologous": "homolog",
    "effective": "effect",
    "bowdlerize": "bowdler",
    "probate": "probat",
    "rate": "rate",
    "cease": "ceas",
    "controlling": "control",
    "rolling": "roll",
    "steadying": "steadi",
    "generalizations": "gener",
    "oscillators": "oscil",
}


@pytest.mark.parametrize(("word", "stem"), sorted(LUCENE_STEMS.items()))
def test_porter_stem_is_lucenes(word: str, stem: str) -> None:
    assert porter_stem(word) == stem


@pytest.mark.parametrize(
    ("text", "tokens"),
    [
        ("size:m wash:hand", ["size:m", "wash:hand"]),
        (
            "10,000 1,2,3 1;2 1.2.3 3.5mm $5.99 1'2",
            ["10,000", "1,2,3", "1;2", "1.2.3", "3.5mm", "5.99", "1'2"],
        ),
        (
            "1.please a.1 1.a a'1 a:1 1:2 a::b a..b 1..2 a;b",
            [
                "1",
                "please",
                "a",
                "1",
                "1",
                "a",
                "a",
                "1",
                "a",
                "1",
                "1",
                "2",
                "a",
                "b",
                "a",
                "b",
                "1",
                "2",
                "a",
                "b",
            ],
        ),
        (
            "u.s.a. a.b.c rock'n'roll it\u2019s dogs' x",
            ["u.s.a", "a.b.c", "rock'n'roll", "it\u2019s", "dogs", "x"],
        ),
        (
            "5-pack e-mail AT&T 1/2 #1 50% x20",
            ["5", "pack", "e", "mail", "AT", "T", "1", "2", "1", "50", "x20"],
        ),
        ("a_b _a __", ["a_b", "_a"]),
        (
            "\u4e2d\u6587\u5b57 \u3072\u3089\u304c\u306a",
            ["\u4e2d", "\u6587", "\u5b57", "\u3072", "\u3089", "\u304c", "\u306a"],
        ),
        (
            "\u2764\u2764 \u2714\ufe0f\u2714\ufe0f a\u2764b",
            ["\u2764", "\u2764", "\u2714\ufe0f", "\u2714\ufe0f", "a", "\u2764", "b"],
        ),
        (
            "\U0001f44d\U0001f3fb ok \U0001f468\u200d\U0001f469\u200d\U0001f467 \U0001f1fa\U0001f1f8",
            [
                "\U0001f44d\U0001f3fb",
                "ok",
                "\U0001f468\u200d\U0001f469\u200d\U0001f467",
                "\U0001f1fa\U0001f1f8",
            ],
        ),
        (
            "1\ufe0f\u20e3 \u2122abc abc\u2122 \u00ae",
            ["1\ufe0f\u20e3", "\u2122", "abc", "abc", "\u2122", "\u00ae"],
        ),
        (
            "2\u00bd \u2460 \u24d0b na\u0308ive x\u200db a\u00adb x\u200bb",
            ["2", "\u24d0b", "na\u0308ive", "x\u200db", "a\u00adb", "x", "b"],
        ),
    ],
)
def test_tokenize_is_lucenes_standard_tokenizer(text: str, tokens: list[str]) -> None:
    assert tokenize(text) == tokens


def test_long_tokens_are_cut_as_lucene_cuts_them() -> None:
    assert [len(t) for t in tokenize("a" * 600)] == [255, 255, 90]
    assert [len(t) for t in tokenize("ab" * 200 + " x")] == [255, 145, 1]


def test_analyze_drops_possessives_and_stop_words_then_stems() -> None:
    assert analyze("The Runner's SHOES, it\u2019s for the US market") == ["runner", "shoe", "us", "market"]
    assert analyze("\u0130stanbul") == ["istanbul"]  # Lucene lower-cases char by char
    assert analyze(" ".join(sorted(LUCENE_STOP_WORDS))) == []
    assert analyze("") == [] and analyze("!!! ...") == []


def test_engines_use_this_analyzer() -> None:
    assert engines_analyze is analyze
