"""How often the purchase reward with the noun approximation equals the reward with spaCy's nouns.

    python -m benchmarks.fidelity.reward_agreement [--data DIR] [--model en_core_web_lg]

The reward's r_type compares the nouns of the goal's product name with those of the
product bought (`webshop_gym.reward.type_reward`); the original finds them with spaCy.
This script builds a large sample of purchases over the official 1,000-product set and
computes each reward twice, once with spaCy's nouns (``--model``: a spaCy model by name
or path, by default the first of `webshop_gym.reward.SPACY_MODELS` that is installed) and
once with the approximation (`webshop_gym.reward.approx_nouns`), and counts the purchases
whose totals are equal (bit for bit).

The sample, for every human and synthetic goal of the catalogue (seeded, the same on
every run): the goal's own product, the top 10 hits of a search for the goal's
instruction (what an agent buys), and 5 products drawn uniformly from the catalogue; each
bought with a random value for each of its options. Besides the agreement over all of
them it reports the agreement on the random purchases alone, and how often the nouns of
a product name agree exactly.

Needs spaCy and an English model (the ``spacy`` extra and ``python -m spacy download
en_core_web_lg``); without them it says so and exits.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from collections import Counter
from pathlib import Path

from webshop_gym.data.catalog import load_catalog
from webshop_gym.data.goals import build_goals, product_prices
from webshop_gym.data.locations import find_webshop_1k
from webshop_gym.reward import (
    APPROX_NOUN_EXTRACTOR,
    SPACY_MODELS,
    NounExtractor,
    original_reward,
    spacy_noun_extractor,
)
from webshop_gym.search.engines import build_engine

REPO = Path(__file__).resolve().parents[2]
HITS = 10  # search hits bought per goal
RANDOM_PURCHASES = 5  # uniformly drawn products bought per goal


def purchases(data: Path, seed: int) -> list[tuple[str, object, object, float, dict[str, str]]]:
    """(kind, goal, product, price, options) for the sample described in the module docstring."""
    catalog = load_catalog(data)
    products = list(catalog)
    prices = product_prices(catalog)
    engine = build_engine(catalog)
    rng = random.Random(seed)
    sample = []
    for source in ("human", "synthetic"):
        for goal in build_goals(catalog, source):  # type: ignore[arg-type]
            bought = [("goal's product", catalog[goal.asin])]
            bought += [("search hit", catalog[asin]) for asin in engine.search(goal.instruction_text, HITS)]
            bought += [("random", rng.choice(products)) for _ in range(RANDOM_PURCHASES)]
            for kind, product in bought:
                options = {name: rng.choice(values) for name, values in product.options.items() if values}
                sample.append((kind, goal, product, prices[product.asin], options))
    return sample


def load_spacy(model: str | None) -> NounExtractor:
    try:
        import spacy
    except ImportError:
        sys.exit("spaCy is not installed: pip install 'webshop-gym[spacy]'")
    for name in [model] if model else SPACY_MODELS:
        try:
            return spacy_noun_extractor(spacy.load(name), name)
        except OSError:
            continue
    sys.exit(f"no spaCy model among {[model] if model else list(SPACY_MODELS)} is installed")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--data", type=Path, default=None, help="the official 1k files (default: find_webshop_1k)"
    )
    parser.add_argument("--model", help="spaCy model name or path (default: the first installed)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--held-out",
        type=Path,
        help="nouns of every name from a tagger not trained on it (build_noun_tagger.py --folds 2 "
        "--held-out FILE): also report the agreement on names the tagger has not seen",
    )
    args = parser.parse_args()
    try:
        args.data = args.data or find_webshop_1k(REPO)
    except FileNotFoundError as missing:
        parser.error(str(missing))
    spacy_nouns = load_spacy(args.model)
    import spacy

    start = time.perf_counter()
    sample = purchases(args.data, args.seed)
    approximations = [APPROX_NOUN_EXTRACTOR]
    if args.held_out:
        held_out = {name: tuple(nouns) for name, nouns in json.loads(args.held_out.read_text()).items()}
        approximations.append(NounExtractor("approx, names not seen", lambda name: held_out[name]))
    names = sorted({product.name for _, _, product, _, _ in sample})
    print(f"spaCy {spacy.__version__}, model {spacy_nouns.name}")
    print(f"{len(sample):,} purchases over {args.data.name}, {len(names):,} product names")
    for approx in approximations:
        total: Counter[str] = Counter()
        same: Counter[str] = Counter()
        differences: Counter[tuple[float, float]] = Counter()
        for kind, goal, product, price, options in sample:
            exact = original_reward(product, goal, price, options, nouns=spacy_nouns)  # type: ignore[arg-type]
            approximate = original_reward(product, goal, price, options, nouns=approx)  # type: ignore[arg-type]
            total[kind] += 1
            if exact.total == approximate.total:
                same[kind] += 1
            else:
                differences[(exact.r_type, approximate.r_type)] += 1
        same_nouns = sum(spacy_nouns.nouns(n) == approx.nouns(n) for n in names)
        print(f"\n{approx.name}: product names whose nouns are spaCy's exactly: {same_nouns}/{len(names)}")
        print(f"{'purchases':<16} {'same reward':>22}")
        for kind in ("goal's product", "search hit", "random"):
            print(
                f"{kind:<16} {f'{same[kind]:,}/{total[kind]:,} ({100 * same[kind] / total[kind]:.2f}%)':>22}"
            )
        n, agree = sum(total.values()), sum(same.values())
        print(f"{'all':<16} {f'{agree:,}/{n:,} ({100 * agree / n:.2f}%)':>22}")
        print("differing rewards by (spaCy r_type, approximation r_type):", dict(differences.most_common()))
    print(f"\n[{time.perf_counter() - start:.0f} s]")


if __name__ == "__main__":
    main()
