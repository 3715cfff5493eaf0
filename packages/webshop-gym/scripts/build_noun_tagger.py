"""Builds ``webshop_gym/reward/noun_tagger.json.gz``: spaCy's tokenizer rules and a tagger distilled from it.

    python packages/webshop-gym/scripts/build_noun_tagger.py --model en_core_web_lg \\
        [--data DIR] [--folds 2]

Run it where spaCy and the model are installed (``pip install 'webshop-gym[spacy]'``,
``python -m spacy download en_core_web_lg``, or any English spaCy 3 pipeline by name or
folder). It writes what `webshop_gym.reward.nouns` needs to find the nouns of product names
the way spaCy does, without spaCy:

* the model's English tokenizer rules: its prefix, suffix, infix and URL patterns and
  its special cases (spaCy's own regular expressions, run by the same algorithm);
* an averaged perceptron (Collins 2002), trained on the model's NOUN/PROPN decisions for
  every token of the catalogue's product names, with features of the word, its shape
  and affixes and its neighbours.

With ``--folds N`` it also tags every name with a model trained on the other folds only
(``--held-out`` saves those nouns; ``benchmarks.fidelity.reward_agreement --held-out`` turns them
into rewards): how the tagger does on names it has not seen.
"""

from __future__ import annotations

import argparse
import gzip
import json
import random
from pathlib import Path

from webshop_gym.data.catalog import load_catalog
from webshop_gym.data.locations import find_webshop_1k
from webshop_gym.reward.nouns import DATA_FILE, NOUN_TAGS, NounTagger, features

ROOT = Path(__file__).resolve().parents[3]

EPOCHS = 12
# The tokenizer rules are spaCy's, and the tagger learnt from a spaCy model's output.
SPACY_NOTICE = (
    "The tokenizer rules (prefix, suffix, infix and URL patterns, special cases) are spaCy's, "
    "and the weights were learnt from a spaCy English model's tags. spaCy: The MIT License (MIT), "
    "Copyright (C) 2016-2024 ExplosionAI GmbH, 2016 spaCy GmbH, 2015 Matthew Honnibal. "
    "Permission is hereby granted, free of charge, to any person obtaining a copy of this software "
    'and associated documentation files (the "Software"), to deal in the Software without '
    "restriction, including without limitation the rights to use, copy, modify, merge, publish, "
    "distribute, sublicense, and/or sell copies of the Software, and to permit persons to whom the "
    "Software is furnished to do so, subject to the following conditions: The above copyright "
    "notice and this permission notice shall be included in all copies or substantial portions of "
    'the Software. THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND, EXPRESS OR '
    "IMPLIED, INCLUDING BUT NOT LIMITED TO THE WARRANTIES OF MERCHANTABILITY, FITNESS FOR A "
    "PARTICULAR PURPOSE AND NONINFRINGEMENT. IN NO EVENT SHALL THE AUTHORS OR COPYRIGHT HOLDERS BE "
    "LIABLE FOR ANY CLAIM, DAMAGES OR OTHER LIABILITY, WHETHER IN AN ACTION OF CONTRACT, TORT OR "
    "OTHERWISE, ARISING FROM, OUT OF OR IN CONNECTION WITH THE SOFTWARE OR THE USE OR OTHER "
    "DEALINGS IN THE SOFTWARE."
)


def tokenizer_rules(nlp: object) -> dict:
    """The pipeline's tokenizer as data: its patterns and special cases."""
    tokenizer = nlp.tokenizer  # type: ignore[attr-defined]
    specials = {text: [token[65] for token in tokens] for text, tokens in tokenizer.rules.items()}  # 65: ORTH
    return {
        "prefix": tokenizer.prefix_search.__self__.pattern,
        "suffix": tokenizer.suffix_search.__self__.pattern,
        "infix": tokenizer.infix_finditer.__self__.pattern,
        "url": tokenizer.url_match.__self__.pattern if tokenizer.url_match else None,
        "token_match": tokenizer.token_match.__self__.pattern if tokenizer.token_match else None,
        "specials": specials,
    }


def train(sentences: list[tuple[list[str], list[bool]]], seed: int = 0) -> dict[str, float]:
    """Averaged-perceptron weights (feature -> weight) for "is a noun"."""
    weights: dict[str, float] = {}
    totals: dict[str, float] = {}
    stamps: dict[str, int] = {}
    step = 0
    examples = [(tokens, i, label) for tokens, labels in sentences for i, label in enumerate(labels)]
    rng = random.Random(seed)
    for _ in range(EPOCHS):
        rng.shuffle(examples)
        for tokens, i, label in examples:
            step += 1
            found = features(tokens, i)
            if (sum(weights.get(f, 0.0) for f in found) > 0) == label:
                continue
            change = 1.0 if label else -1.0
            for f in found:
                totals[f] = totals.get(f, 0.0) + (step - stamps.get(f, 0)) * weights.get(f, 0.0)
                stamps[f] = step
                weights[f] = weights.get(f, 0.0) + change
    averaged = {}
    for f, w in weights.items():
        total = totals.get(f, 0.0) + (step - stamps.get(f, 0)) * w
        if abs(total / step) >= 1e-3:
            averaged[f] = round(total / step, 3)
    return averaged


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="en_core_web_lg", help="spaCy model name or folder")
    parser.add_argument(
        "--data", type=Path, default=None, help="the official 1k files (default: find_webshop_1k)"
    )
    parser.add_argument("--folds", type=int, default=0, help="also tag names with models not trained on them")
    parser.add_argument("--held-out", type=Path, help="where --folds writes those nouns (JSON)")
    parser.add_argument("--out", type=Path, default=DATA_FILE)
    args = parser.parse_args()
    try:
        args.data = args.data or find_webshop_1k(ROOT)
    except FileNotFoundError as missing:
        parser.error(str(missing))
    import spacy

    nlp = spacy.load(args.model)
    catalog = load_catalog(args.data)
    names = sorted({product.name for product in catalog})

    def tagged(texts: list[str]) -> list[tuple[list[str], list[bool]]]:
        return [([t.text for t in doc], [t.pos_ in NOUN_TAGS for t in doc]) for doc in nlp.pipe(texts)]

    sentences = tagged(names)
    rules = tokenizer_rules(nlp)
    data = {
        "notice": SPACY_NOTICE,
        "model": f"{nlp.meta['lang']}_{nlp.meta['name']}-{nlp.meta['version']}",
        "spacy": spacy.__version__,
        "trained_on": f"the {len(names)} product names of {args.data.name}",
        "tokenizer": rules,
        "weights": train(sentences),
    }
    args.out.write_bytes(gzip.compress(json.dumps(data, sort_keys=True).encode(), mtime=0))
    tagger = NounTagger.from_data(data)
    same_tokens = sum(tagger.tokenize(n) == tokens for n, (tokens, _) in zip(names, sentences, strict=True))
    same_nouns = sum(
        tagger.nouns(n) == tuple(t.lower() for t, noun in zip(*s, strict=True) if noun)
        for n, s in zip(names, sentences, strict=True)
    )
    print(f"{args.out}: {args.out.stat().st_size:,} bytes, {len(data['weights']):,} features")
    print(f"tokens equal spaCy's on {same_tokens}/{len(names)} names, nouns on {same_nouns}/{len(names)}")
    if args.folds > 1:
        order = list(range(len(names)))
        random.Random(1).shuffle(order)
        held_out: dict[str, tuple[str, ...]] = {}
        for fold in range(args.folds):
            test = set(order[fold :: args.folds])
            weights = train([s for i, s in enumerate(sentences) if i not in test])
            fold_tagger = NounTagger.from_data({**data, "weights": weights})
            held_out.update({names[i]: fold_tagger.nouns(names[i]) for i in test})
        same = sum(
            held_out[n] == tuple(t.lower() for t, noun in zip(*s, strict=True) if noun)
            for n, s in zip(names, sentences, strict=True)
        )
        print(f"{args.folds}-fold held out: nouns equal spaCy's on {same}/{len(names)} names")
        if args.held_out:
            args.held_out.write_text(json.dumps(held_out))


if __name__ == "__main__":
    main()
