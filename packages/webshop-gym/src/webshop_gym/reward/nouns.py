"""The nouns of a product name as spaCy finds them, without spaCy.

The reward's r_type compares the nouns (tokens tagged NOUN or PROPN, lower-cased) of two
product names (`webshop_gym.reward.type_reward`). Without spaCy, `NounTagger` does the two
steps spaCy does, from data made from a spaCy model (``noun_tagger.json.gz``, built by
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
import json
import re
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

__all__ = ["DATA_FILE", "NOUN_TAGS", "NounTagger", "features"]

DATA_FILE = Path(__file__).with_name("noun_tagger.json.gz")
NOUN_TAGS = frozenset({"NOUN", "PROPN"})

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
