"""Search documents against the documents the original Lucene index holds."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

from webshop_gym.data.catalog import load_catalog
from webshop_gym.search.documents import search_document


def test_every_document_matches_the_original_index(webshop_1k: Path, webshop_1k_references: Path) -> None:
    catalog = load_catalog(webshop_1k)
    with (webshop_1k_references / "reference_lucene_documents_1000.jsonl").open() as f:
        documents = [json.loads(line) for line in f]
    assert [d["id"] for d in documents] == [p.asin for p in catalog]
    mismatches = [
        product.asin
        for product, document in zip(catalog, documents, strict=True)
        if search_document(product) != document["contents"]
    ]
    assert mismatches == []


def test_options_are_listed_by_name(webshop_1k: Path) -> None:
    product = load_catalog(webshop_1k).products[0]
    with_options = dataclasses.replace(
        product,
        title="Mug",
        description="Big",
        bullet_points=("Tea",),
        options={"color": ("red", "navy | blue"), "size": ("l",)},
    )
    assert search_document(with_options) == "mug big tea color: red, navy | blue, and size: l"


def test_product_without_options_or_bullets(webshop_1k: Path) -> None:
    product = load_catalog(webshop_1k).products[0]
    bare = dataclasses.replace(product, title="Mug", description="Big", bullet_points=(), options={})
    # Empty parts still take their place between the spaces, as in the original.
    assert search_document(bare) == "mug big  "
