"""Text to index terms, the way the original's Lucene index analyses it.

The original searches with Anserini's English analyzer: Lucene's ``StandardTokenizer``
(Unicode word segmentation, UAX #29), ``EnglishPossessiveFilter``, lower case, Lucene's
English stop words and ``PorterStemFilter``. This module follows each step in plain Python so
that the embedded BM25 engines index the same terms as the Lucene backend:

* `tokenize` keeps what UAX #29 keeps together: letters and digits, ``_``, letters joined
  by ``:``, ``.`` or an apostrophe (``size:m``, ``u.s.a``, ``don't``), digits joined by
  ``.``, ``,`` or ``;`` (``3.5mm``, ``10,000``), combining marks; emoji become tokens of
  their own, as do Chinese characters and Hiragana; tokens longer than 255 characters
  are cut, as Lucene cuts them.
* `porter_stem` is Lucene's Porter stemmer, which is Martin Porter's reference C
  implementation: the published algorithm plus its departures (words of one or two
  letters are left alone, ``-bli`` -> ``-ble``, ``-logi`` -> ``-log``). Snowball's
  ``porter`` (PyStemmer) is the published algorithm only: it differs on 27 of the 11,266
  distinct words of the 1k set, common ones among them (``technology``, ``assembly``,
  ``us``). This one takes about 13 us a word, and words are cached.

On the 1,000-product set the terms equal Lucene's for all 1,000 documents and all 622
reference queries, and the stems equal Lucene's on over 100,000 word forms; the Lucene
tests check both against Lucene itself (``tests/test_lucene.py``). Scripts outside Latin,
Greek and Cyrillic (Thai, Hebrew, Katakana next to Latin letters, ...) are segmented more
roughly than UAX #29 does.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

__all__ = ["LUCENE_STOP_WORDS", "analyze", "porter_stem", "tokenize"]

# Lucene's EnglishAnalyzer.ENGLISH_STOP_WORDS_SET, which Anserini's analyzer uses.
LUCENE_STOP_WORDS = frozenset(
    "a an and are as at be but by for if in into is it no not of on or such that the their then "
    "there these they this to was will with".split()
)
MAX_TOKEN_LENGTH = 255  # Lucene's StandardTokenizer cuts longer tokens into pieces this long

# UAX #29 word-break classes that may join two letters or two digits.
_MID_LETTER = ":\u00b7\u0387\u05f4\u2027\ufe13\ufe55\uff1a"
_MID_NUM_LET = ".'\u2018\u2019\u2024\ufe52\uff07\uff0e"
_MID_NUM = ",;\u037e\u0589\u060c\u060d\u066c\u07f8\u2044\ufe10\ufe14\ufe50\ufe54\uff0c\uff1b"
# Chinese characters and Hiragana: one token each.
_BMP_IDEOGRAPHS = ((0x3040, 0x309F), (0x3400, 0x4DBF), (0x4E00, 0x9FFF), (0xF900, 0xFAFF))
_IDEOGRAPHS = (
    "".join(f"{chr(first)}-{chr(last)}" for first, last in _BMP_IDEOGRAPHS) + "\U00020000-\U0003134f"
)
# Extended_Pictographic (emoji and pictographic symbols), which Lucene keeps as tokens.
_PICTOGRAPHS = (
    "\u00a9\u00ae\u203c\u2049\u2122\u2194-\u2199\u21a9\u21aa\u231a\u231b\u2328\u2388\u23cf"
    "\u23e9-\u23f3\u23f8-\u23fa\u25aa\u25ab\u25b6\u25c0\u25fb-\u25fe\u2600-\u2605\u2607-\u2612"
    "\u2614-\u2685\u2690-\u2705\u2708-\u2712\u2714\u2716\u271d\u2721\u2728\u2733\u2734\u2744"
    "\u2747\u274c\u274e\u2753-\u2755\u2757\u2763-\u2767\u2795-\u2797\u27a1\u27b0\u27bf\u2934"
    "\u2935\u2b05-\u2b07\u2b1b\u2b1c\u2b50\u2b55\u3030\u303d\u3297\u3299"
    "\U0001f000-\U0001f0ff\U0001f10d-\U0001f10f\U0001f12f\U0001f16c-\U0001f171\U0001f17e"
    "\U0001f17f\U0001f18e\U0001f191-\U0001f19a\U0001f1ad-\U0001f1e5\U0001f201-\U0001f20f"
    "\U0001f21a\U0001f22f\U0001f232-\U0001f23a\U0001f23c-\U0001f23f\U0001f249-\U0001f3fa"
    "\U0001f400-\U0001f53d\U0001f546-\U0001f64f\U0001f680-\U0001f6ff\U0001f774-\U0001f77f"
    "\U0001f7d5-\U0001f7ff\U0001f80c-\U0001f80f\U0001f848-\U0001f84f\U0001f85a-\U0001f85f"
    "\U0001f888-\U0001f88f\U0001f8ae-\U0001f8ff\U0001f90c-\U0001f93a\U0001f93c-\U0001f945"
    "\U0001f947-\U0001faff\U0001fc00-\U0001fffd"
)
_REGIONAL_INDICATORS = "\U0001f1e6-\U0001f1ff"  # flags are pairs of these
# The halfwidth (semi-)voiced sound marks are letters (Lm) to Python but Extend to UAX #29:
# they join the character before them, and alone (as in the kaomoji "(ﾟ∀ﾟ)") are no word.
_LETTER_EXTEND = frozenset({0xFF9E, 0xFF9F})
# Circled letters are letters to UAX #29 but not to Python.
_EXTRA_LETTERS = "\u24b6-\u24e9"
# Outside the Basic Multilingual Plane: the main blocks of letters, and the marks (emoji
# skin tones, tags, variation selectors) that extend the character before them.
_SUPPLEMENTARY_LETTERS = (
    "\U00010000-\U000100ff\U00010300-\U0001034f\U00010400-\U0001047f\U0001d400-\U0001d7ff"
)
_SUPPLEMENTARY_EXTEND = "\U0001f3fb-\U0001f3ff\U000e0020-\U000e007f\U000e0100-\U000e01ef"


def _class_ranges(code_points: list[int]) -> str:
    """A regex character class body for these code points (sorted), as ranges."""
    parts, start = [], None
    for i, cp in enumerate(code_points):
        if start is None:
            start = cp
        if i + 1 == len(code_points) or code_points[i + 1] != cp + 1:
            parts.append(re.escape(chr(start)) + ("-" + re.escape(chr(cp)) if cp > start else ""))
            start = None
    return "".join(parts)


@lru_cache(maxsize=1)
def _token_pattern() -> re.Pattern[str]:
    """The tokenizer's regex, built once from the Unicode tables of this Python."""
    letters, digits, extend = [], [], []
    for cp in range(0x10000):
        category = unicodedata.category(chr(cp))
        if (category in ("Mn", "Mc", "Me", "Cf") and cp != 0x200B) or cp in _LETTER_EXTEND:
            # Marks and format characters stay with the character before them (UAX #29
            # rule WB4); a zero-width space is a break.
            extend.append(cp)
        elif 0x3040 <= cp <= 0xFAFF and any(first <= cp <= last for first, last in _BMP_IDEOGRAPHS):
            continue
        elif category == "Nd":
            digits.append(cp)
        elif category[0] == "L" or category == "Nl":  # not "No" (1/2, superscripts)
            letters.append(cp)
    letter = f"{_class_ranges(letters)}{_EXTRA_LETTERS}{_SUPPLEMENTARY_LETTERS}"
    marks = f"{_class_ranges(extend)}{_SUPPLEMENTARY_EXTEND}"
    # One character class for the body of a word (the regex engine runs through it in its
    # tight loop); joiners are the slow path. "_" joins like a letter (UAX #29 ExtendNumLet).
    word = f"[{letter}{_class_ranges(digits)}_]"
    word_or_mark = f"[{letter}{_class_ranges(digits)}_{marks}]"
    # Python's own letter class is close enough around a joiner, and compiles faster.
    between_letters = f"(?<=[^\\W\\d_])[{_MID_LETTER}{_MID_NUM_LET}](?=[^\\W\\d_])"
    between_digits = f"(?<=\\d)[{_MID_NUM}{_MID_NUM_LET}](?=\\d)"
    extend_class = f"[{_class_ranges(extend)}{_SUPPLEMENTARY_EXTEND}]"
    # In an emoji sequence the zero-width joiner links the next emoji instead.
    emoji_extend = f"[{_class_ranges([cp for cp in extend if cp != 0x200D])}{_SUPPLEMENTARY_EXTEND}]"
    pictograph = f"[{_PICTOGRAPHS}]{emoji_extend}*"
    alternatives = (
        f"{word}{word_or_mark}*(?:(?:{between_letters}|{between_digits}){word_or_mark}+)*",
        f"[{_REGIONAL_INDICATORS}]{{1,2}}",
        f"{pictograph}(?:\u200d{pictograph})*",
        f"[{_IDEOGRAPHS}]{extend_class}*",
    )
    return re.compile("|".join(alternatives))


def tokenize(text: str) -> list[str]:
    """Splits text into words the way Lucene's StandardTokenizer does (case kept).

    >>> tokenize("Size:M, 10,000 mAh; it's 3.5mm (U.S.A.) ✔️ e-mail a_b")
    ['Size:M', '10,000', 'mAh', "it's", '3.5mm', 'U.S.A', '✔️', 'e', 'mail', 'a_b']
    """
    tokens: list[str] = []
    for token in _token_pattern().findall(text):
        if token.strip("_") == "":  # underscores alone are no word
            continue
        if len(token) > MAX_TOKEN_LENGTH:
            tokens.extend(token[i : i + MAX_TOKEN_LENGTH] for i in range(0, len(token), MAX_TOKEN_LENGTH))
        else:
            tokens.append(token)
    return tokens


def _consonant_pattern(word: str) -> str:
    """ "c" or "v" per letter; y is a consonant at the start and after a vowel."""
    pattern = []
    for i, ch in enumerate(word):
        if ch in "aeiou":
            pattern.append("v")
        elif ch == "y":
            pattern.append("c" if i == 0 or pattern[i - 1] == "v" else "v")
        else:
            pattern.append("c")
    return "".join(pattern)


class _PorterWord:
    """One word going through the Porter steps; ``k`` is its last index, ``j`` a suffix mark.

    Like the reference's buffer, ``b`` may keep characters past ``k`` (step 5 measures one).
    """

    __slots__ = ("b", "cv", "j", "k")

    def __init__(self, word: str) -> None:
        self.b = word
        self.cv = _consonant_pattern(word)
        self.k = len(word) - 1
        self.j = 0

    def measure(self) -> int:
        """m: the number of vowel-consonant sequences in b[0..j]."""
        return self.cv.count("vc", 0, self.j + 1)

    def vowel_in_stem(self) -> bool:
        return self.cv.find("v", 0, self.j + 1) >= 0

    def double_consonant(self, i: int) -> bool:
        return i >= 1 and self.b[i] == self.b[i - 1] and self.cv[i] == "c"

    def cvc(self, i: int) -> bool:
        """Consonant-vowel-consonant ending at i, the last not w, x or y (hop, not hoop)."""
        return i >= 2 and self.cv[i - 2 : i + 1] == "cvc" and self.b[i] not in "wxy"

    def ends(self, suffix: str) -> bool:
        if not self.b.endswith(suffix, 0, self.k + 1):
            return False
        self.j = self.k - len(suffix)
        return True

    def set_to(self, suffix: str) -> None:
        self.b = self.b[: self.j + 1] + suffix
        self.cv = _consonant_pattern(self.b)
        self.k = self.j + len(suffix)

    def replace_if_measured(self, suffix: str) -> None:
        if self.measure() > 0:
            self.set_to(suffix)

    def replace_first(self, rules: tuple[tuple[str, str], ...]) -> None:
        """The first rule whose suffix matches applies (if m > 0); later rules are not tried."""
        for suffix, replacement in rules:
            if self.ends(suffix):
                self.replace_if_measured(replacement)
                return

    def plurals_and_participles(self) -> None:  # step 1ab
        if self.b[self.k] == "s":
            if self.ends("sses"):
                self.k -= 2
            elif self.ends("ies"):
                self.set_to("i")
            elif self.b[self.k - 1] != "s":
                self.k -= 1
        if self.ends("eed"):
            if self.measure() > 0:
                self.k -= 1
        elif (self.ends("ed") or self.ends("ing")) and self.vowel_in_stem():
            self.k = self.j
            if self.ends("at"):
                self.set_to("ate")
            elif self.ends("bl"):
                self.set_to("ble")
            elif self.ends("iz"):
                self.set_to("ize")
            elif self.double_consonant(self.k):
                if self.b[self.k] not in "lsz":
                    self.k -= 1
            elif self.measure() == 1 and self.cvc(self.k):
                self.set_to("e")

    def terminal_y(self) -> None:  # step 1c
        if self.ends("y") and self.vowel_in_stem():
            self.set_to("i")

    def double_suffixes(self) -> None:  # step 2, keyed by the penultimate letter
        if self.k == 0:
            return
        self.replace_first(_STEP2_RULES.get(self.b[self.k - 1], ()))

    def ic_full_ness(self) -> None:  # step 3, keyed by the last letter
        self.replace_first(_STEP3_RULES.get(self.b[self.k], ()))

    def single_suffixes(self) -> None:  # step 4: drop -ant, -ence, ... when m > 1
        if self.k == 0:
            return
        for suffix in _STEP4_SUFFIXES.get(self.b[self.k - 1], ()):
            if self.ends(suffix):
                if suffix == "ion" and not (self.j >= 0 and self.b[self.j] in "st"):
                    continue
                if self.measure() > 1:
                    self.k = self.j
                return

    def final_e_and_ll(self) -> None:  # step 5
        self.j = self.k
        if self.b[self.k] == "e":
            m = self.measure()
            if m > 1 or (m == 1 and not self.cvc(self.k - 1)):
                self.k -= 1
        if self.b[self.k] == "l" and self.double_consonant(self.k) and self.measure() > 1:
            self.k -= 1


_STEP2_RULES = {
    "a": (("ational", "ate"), ("tional", "tion")),
    "c": (("enci", "ence"), ("anci", "ance")),
    "e": (("izer", "ize"),),
    "l": (("bli", "ble"), ("alli", "al"), ("entli", "ent"), ("eli", "e"), ("ousli", "ous")),
    "o": (("ization", "ize"), ("ation", "ate"), ("ator", "ate")),
    "s": (("alism", "al"), ("iveness", "ive"), ("fulness", "ful"), ("ousness", "ous")),
    "t": (("aliti", "al"), ("iviti", "ive"), ("biliti", "ble")),
    "g": (("logi", "log"),),
}
_STEP3_RULES = {
    "e": (("icate", "ic"), ("ative", ""), ("alize", "al")),
    "i": (("iciti", "ic"),),
    "l": (("ical", "ic"), ("ful", "")),
    "s": (("ness", ""),),
}
_STEP4_SUFFIXES = {
    "a": ("al",),
    "c": ("ance", "ence"),
    "e": ("er",),
    "i": ("ic",),
    "l": ("able", "ible"),
    "n": ("ant", "ement", "ment", "ent"),
    "o": ("ion", "ou"),
    "s": ("ism",),
    "t": ("ate", "iti"),
    "u": ("ous",),
    "v": ("ive",),
    "z": ("ize",),
}


def porter_stem(word: str) -> str:
    """Lucene's Porter stemmer (Porter's reference C version) for one lower-case word.

    >>> [porter_stem(w) for w in ("running", "technology", "assembly", "us", "caresses", "ponies")]
    ['run', 'technolog', 'assembl', 'us', 'caress', 'poni']
    """
    if len(word) <= 2:
        return word
    stemmer = _PorterWord(word)
    stemmer.plurals_and_participles()
    stemmer.terminal_y()
    stemmer.double_suffixes()
    stemmer.ic_full_ness()
    stemmer.single_suffixes()
    stemmer.final_e_and_ll()
    return stemmer.b[: stemmer.k + 1]


@lru_cache(maxsize=200_000)
def _stem(word: str) -> str:
    return porter_stem(word)


def analyze(text: str) -> list[str]:
    """Turns text into index terms the way the original's English analyzer does.

    >>> analyze("The Runner's Shoes, size:M 9.5! Technology US")
    ['runner', 'shoe', 'size:m', '9.5', 'technolog', 'us']
    """
    terms = []
    # Lucene lower-cases character by character: the dotted capital I becomes a plain i.
    for token in tokenize(text.replace("\u0130", "i").lower()):
        if len(token) >= 2 and token[-2] in "'’＇" and token[-1] == "s":
            token = token[:-2]
        if token and token not in LUCENE_STOP_WORDS:
            terms.append(_stem(token))
    return terms
