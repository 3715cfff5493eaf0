"""The nouns of product names, for the reward's r_type: spaCy's, or a distilled stand-in.

The original ran spaCy and kept the tokens tagged NOUN or PROPN. The model behind
the paper's rewards is ``en_core_web_lg``: the original's setup script installs it and its
2022 code loads it; a 2024 commit switched the code to ``en_core_web_sm``. When spaCy and
a model are installed we do exactly what the original does, with ``en_core_web_lg`` if
it is there, else ``en_core_web_sm``, or the model you name (`get_noun_extractor`,
``$WEBSHOP_GYM_NOUNS``); otherwise a documented rule-based approximation runs
(`approx_nouns`, the `NounTagger` below). `RewardBreakdown.noun_extractor` says which one ran. Neither model
can be installed from PyPI (``python -m spacy download en_core_web_lg`` fetches it from
GitHub); spaCy is imported only when a model is there to load, so a spaCy install
without models costs nothing.

The reward's r_type compares the nouns (tokens tagged NOUN or PROPN, lower-cased) of two
product names (`webshop_gym.reward.original.type_reward`). Without spaCy, `NounTagger` does
the two steps spaCy does, from data made from a spaCy model (``noun_tagger.json.gz``, built by
``packages/webshop-gym/scripts/build_noun_tagger.py``):

1. **Tokens**: spaCy's English tokenizer, run here by the same algorithm over the model's
   own rules (prefix, suffix and infix patterns, URL pattern, special cases): split on
   whitespace, peel prefixes and suffixes off each piece until none is left (stopping at
   a special case), then split what remains at its infixes. So ``"Women's"`` gives
   ``Women``, ``'s``; ``"T-Shirt"`` gives ``T``, ``-``, ``Shirt``; ``"100g"`` gives ``100``,
   ``g``.
2. **Nouns**: an averaged perceptron (Collins 2002) distilled from the model: trained on
   the model's NOUN/PROPN decisions for every token of the 1,000 product names of the
   official 1k catalogue, with features of each token (the word, its case, shape,
   prefix and suffixes) and of its neighbours.

On the catalogue it learnt from it reproduces the model's nouns almost everywhere; on
names it has not seen (tagged by a model trained on the other half of the names) it
agrees less often (figures: ``benchmarks/results/reward_agreement.md``). It tags each token
on its own, where spaCy reads the whole name (its tagger is a neural network over the
sentence), and the tokenizer skips spaCy's rarely used special-case matching across
affixes.

The tokenizer rules in the data file are spaCy's (MIT License, Copyright (C) 2016-2024
ExplosionAI GmbH, 2016 spaCy GmbH, 2015 Matthew Honnibal; the file's ``notice`` holds the
licence text).

>>> tagger = NounTagger.load()
>>> tagger.tokenize("Women's T-Shirt, 100g (Pack of 2)")
['Women', "'s", 'T', '-', 'Shirt', ',', '100', 'g', '(', 'Pack', 'of', '2', ')']
"""

from __future__ import annotations

import functools
import gzip
import importlib.util
import json
import os
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = [
    "APPROX_NOUN_EXTRACTOR",
    "DATA_FILE",
    "NOUNS_ENV",
    "NOUN_TAGS",
    "SPACY_MODELS",
    "NounExtractor",
    "NounExtractorKind",
    "NounTagger",
    "approx_nouns",
    "features",
    "get_noun_extractor",
    "load_spacy_nouns",
    "spacy_noun_extractor",
]

DATA_FILE = Path(__file__).with_name("noun_tagger.json.gz")
NOUN_TAGS = frozenset({"NOUN", "PROPN"})

NounExtractorKind = str
"""``"auto"``, ``"approx"``, ``"spacy"`` or ``"spacy:<model name or path>"`` (see `get_noun_extractor`)."""

NOUNS_ENV = "WEBSHOP_GYM_NOUNS"
"""Environment variable with the default noun extractor, read once per process: ``approx``,
``spacy``, ``spacy:<model name or path>`` or ``auto`` (the default)."""

SPACY_MODELS: tuple[str, ...] = ("en_core_web_lg", "en_core_web_sm")
"""spaCy models tried in order: the paper's (the original's setup installs it), then the small one."""

# ---------------------------------------------------------------------------------------
# Choosing the extractor: spaCy when a model is installed, else the approximation
# ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class NounExtractor:
    """Finds the nouns of a product name, lower-cased, in order, duplicates kept.

    Attributes:
        name: ``"spacy:<model>"`` or ``"approx"``; reported in `webshop_gym.reward.original.RewardBreakdown`.
        nouns: The extraction function (cached per name string).
    """

    name: str
    nouns: Callable[[str], tuple[str, ...]]


# The original also listed "PNOUN", which no spaCy model emits.
_SPACY_NOUN_TAGS = frozenset({"NOUN", "PROPN", "PNOUN"})


def spacy_noun_extractor(nlp: Any, model: str) -> NounExtractor:
    """Wraps a loaded spaCy pipeline: nouns are tokens tagged NOUN or PROPN, as the original.

    Args:
        nlp: A callable spaCy ``Language`` (or anything whose call returns tokens with
            ``text`` and ``pos_``).
        model: The model name, used in `NounExtractor.name`.
    """

    @functools.lru_cache(maxsize=1 << 16)
    def nouns(name: str) -> tuple[str, ...]:
        return tuple(token.text.lower() for token in nlp(name) if token.pos_ in _SPACY_NOUN_TAGS)

    return NounExtractor(name=f"spacy:{model}", nouns=nouns)


def approx_nouns(name: str) -> tuple[str, ...]:
    """spaCy's NOUN/PROPN tokens of a product name, without spaCy (`NounTagger`, below).

    spaCy's English tokenizer rules, run by spaCy's algorithm, and a tagger distilled from
    ``en_core_web_sm`` 3.8 on the 1,000 product names of the official 1k catalogue.
    Deterministic; on those names it gives the model's nouns for 992 of 1,000 (its tokens
    for 994), on names it has not seen for about 43% (the words it errs on rarely change
    the reward: ``benchmarks/results/reward_agreement.md``).

    Args:
        name: A product name.

    Returns:
        The nouns, lower-cased, in order, duplicates kept (the original divides by the
        count of the goal's nouns, duplicates included).

    Examples:
        >>> approx_nouns("Set of 4 Women's Cotton T-Shirts, 12oz, for Summer")
        ('women', 'cotton', 't', 'shirts', 'oz', 'summer')
    """
    return NounTagger.load().nouns(name)


APPROX_NOUN_EXTRACTOR = NounExtractor(name="approx", nouns=approx_nouns)


def _model_installed(model: str) -> bool:
    """Whether a spaCy model (package name or folder) is there, without importing spaCy (~2 s)."""
    path = Path(model).expanduser()
    if path.is_dir():
        return True
    try:  # model packages (en_core_web_lg, ...) are importable Python packages
        return model.isidentifier() and importlib.util.find_spec(model) is not None
    except (ImportError, ValueError):
        return False


@functools.cache
def load_spacy_nouns(model: str | None = None) -> NounExtractor | None:
    """spaCy nouns from ``model`` (a name or a folder), or else the first installed of `SPACY_MODELS`.

    Returns:
        The extractor, or None when spaCy or the model is not installed. spaCy itself is
        imported only once a model is found.
    """
    candidates = [m for m in ((model,) if model else SPACY_MODELS) if _model_installed(m)]
    if not candidates:
        return None
    try:
        import spacy
    except ImportError:
        return None
    for candidate in candidates:
        try:
            return spacy_noun_extractor(spacy.load(candidate), candidate)
        except (OSError, ImportError):  # OSError [E050]: not a loadable model
            continue
    return None


@functools.cache
def get_noun_extractor(kind: NounExtractorKind = "auto") -> NounExtractor:
    """The noun extractor of the given kind (loaded once per process).

    Args:
        kind: ``"spacy"`` (the first installed model of `SPACY_MODELS`; raise if none),
            ``"spacy:<model>"`` (that model, by package name or folder; raise if it does
            not load), ``"approx"``, or ``"auto"``: the extractor ``$WEBSHOP_GYM_NOUNS``
            names if set, else spaCy when a model of `SPACY_MODELS` loads, else the
            approximation. Envs use ``"auto"``, so the variable picks their model too
            (vector-env workers inherit it).

    Raises:
        RuntimeError: spaCy nouns asked for, but spaCy or the model is missing.
        ValueError: An unknown kind.
    """
    if kind == "auto":
        kind = os.environ.get(NOUNS_ENV) or "auto"
    if kind == "approx":
        return APPROX_NOUN_EXTRACTOR
    name, _, model = kind.partition(":")
    if name not in ("auto", "spacy") or (name == "auto" and model):
        raise ValueError(
            f"unknown noun extractor {kind!r}: use auto, approx, spacy or spacy:<model name or path>"
        )
    spacy_nouns = load_spacy_nouns(model or None)
    if spacy_nouns is not None:
        return spacy_nouns
    if name == "spacy":
        wanted = model or " or ".join(SPACY_MODELS)
        raise RuntimeError(
            f"spaCy nouns requested, but spaCy or the model {wanted} is missing: "
            "pip install 'webshop-gym[spacy]' && python -m spacy download en_core_web_lg"
        )
    return APPROX_NOUN_EXTRACTOR


# ---------------------------------------------------------------------------------------
# The approximation: spaCy's tokenizer rules and a distilled tagger
# ---------------------------------------------------------------------------------------

_SPACES = re.compile(r"(\s+)")


def _shape(word: str) -> str:
    """spaCy's word shape: X for upper-case letters, x lower, d digits, runs cut at four."""
    shape = []
    last, run = "", 0
    for ch in word:
        kind = "X" if ch.isupper() else "x" if ch.isalpha() else "d" if ch.isdigit() else ch
        run = run + 1 if kind == last else 1
        last = kind
        if run <= 4:
            shape.append(kind)
    return "".join(shape)


def features(tokens: Sequence[str], i: int) -> list[str]:
    """The tagger's features of token ``i``: the word, its shape and affixes, its neighbours."""
    word = tokens[i]
    lower = word.lower()
    before = tokens[i - 1] if i > 0 else "<s>"
    after = tokens[i + 1] if i + 1 < len(tokens) else "</s>"
    before2 = tokens[i - 2] if i > 1 else "<s>"
    after2 = tokens[i + 2] if i + 2 < len(tokens) else "</s>"
    position = "first" if i == 0 else "last" if i == len(tokens) - 1 else "inside"
    return [
        "bias",
        "w=" + lower,
        "W=" + word,
        "shape=" + _shape(word),
        "suffix3=" + lower[-3:],
        "suffix2=" + lower[-2:],
        "prefix1=" + lower[:1],
        "prefix3=" + lower[:3],
        "w-1=" + before.lower(),
        "w+1=" + after.lower(),
        "shape-1=" + _shape(before),
        "shape+1=" + _shape(after),
        "w-2=" + before2.lower(),
        "w+2=" + after2.lower(),
        "position=" + position,
        "w,w+1=" + lower + " " + after.lower(),
        "w-1,w=" + before.lower() + " " + lower,
    ]


class NounTagger:
    """spaCy's tokenizer rules and a distilled noun tagger (see the module docstring).

    Args:
        tokenizer: ``prefix``, ``suffix``, ``infix``, ``url`` and ``token_match`` patterns
            (strings or None) and ``specials`` (text -> its tokens), as spaCy has them.
        weights: Feature -> weight; a token is a noun when its features' weights add up
            to more than 0.
    """

    def __init__(self, tokenizer: Mapping[str, Any], weights: Mapping[str, float]) -> None:
        def compiled(name: str) -> re.Pattern[str] | None:
            pattern = tokenizer.get(name)
            return re.compile(pattern) if pattern else None

        self._prefix, self._suffix, self._infix = compiled("prefix"), compiled("suffix"), compiled("infix")
        self._url, self._token_match = compiled("url"), compiled("token_match")
        self._specials: dict[str, list[str]] = dict(tokenizer["specials"])
        self._weights = dict(weights)
        self.nouns: Callable[[str], tuple[str, ...]] = functools.lru_cache(maxsize=1 << 16)(self._nouns)

    @classmethod
    def from_data(cls, data: Mapping[str, Any]) -> NounTagger:
        return cls(data["tokenizer"], data["weights"])

    @classmethod
    @functools.cache
    def load(cls) -> NounTagger:
        """The tagger shipped with the package (read once per process, ~50 ms)."""
        return cls.from_data(json.loads(gzip.decompress(DATA_FILE.read_bytes())))

    def tokenize(self, text: str) -> list[str]:
        """spaCy's tokens of ``text`` (whitespace other than single spaces becomes tokens, as in spaCy)."""
        tokens: list[str] = []
        for piece in _SPACES.split(text):
            if not piece:
                continue
            if piece.isspace():
                if piece != " ":
                    tokens.append(piece[1:] if tokens else piece)  # one space goes with the word
                continue
            tokens.extend(self._tokenize_piece(piece))
        return tokens

    def _tokenize_piece(self, string: str) -> list[str]:
        if string in self._specials:
            return list(self._specials[string])
        prefixes: list[str] = []
        suffixes: list[str] = []
        last = -1
        while string and len(string) != last:
            if self._token_match and self._token_match.match(string):
                break
            if string in self._specials:
                break
            last = len(string)
            prefix = self._prefix.match(string) if self._prefix else None
            pre = prefix.end() - prefix.start() if prefix else 0
            if pre and string[pre:] in self._specials:
                prefixes.append(string[:pre])
                string = string[pre:]
                break
            suffix = self._suffix.search(string[pre:]) if self._suffix else None
            suf = suffix.end() - suffix.start() if suffix else 0
            if suf and string[:-suf] in self._specials:
                suffixes.append(string[-suf:])
                string = string[:-suf]
                break
            if pre and suf and pre + suf <= len(string):
                prefixes.append(string[:pre])
                suffixes.append(string[-suf:])
                string = string[pre:-suf]
            elif pre:
                prefixes.append(string[:pre])
                string = string[pre:]
            elif suf:
                suffixes.append(string[-suf:])
                string = string[:-suf]
        return prefixes + self._split_infixes(string) + suffixes[::-1]

    def _split_infixes(self, string: str) -> list[str]:
        if not string:
            return []
        if string in self._specials:
            return list(self._specials[string])
        if (self._token_match and self._token_match.match(string)) or (self._url and self._url.match(string)):
            return [string]
        tokens: list[str] = []
        start = 0
        for match in self._infix.finditer(string) if self._infix else ():
            if match.start() == 0:  # an infix at the very start does not split
                continue
            if match.start() != start:
                tokens.append(string[start : match.start()])
            if match.start() != match.end():
                tokens.append(string[match.start() : match.end()])
            start = match.end()
        if string[start:]:
            tokens.append(string[start:])
        return tokens

    def is_noun(self, tokens: Sequence[str], i: int) -> bool:
        """Whether token ``i`` is a noun (NOUN or PROPN) by the tagger."""
        if tokens[i].isspace():
            return False
        weights = self._weights
        return sum(weights.get(f, 0.0) for f in features(tokens, i)) > 0

    def _nouns(self, name: str) -> tuple[str, ...]:
        tokens = self.tokenize(name)
        return tuple(token.lower() for i, token in enumerate(tokens) if self.is_noun(tokens, i))
