"""Modules that moved to their concern's sub-package still import from their old paths.

Each old module re-exports the very objects of the new one (not copies), so ``isinstance``
checks, pickles naming the old path, and code written against the old layout keep working.
"""

from __future__ import annotations

import importlib

import gymnasium as gym
import pytest

import webshop_gym

# old path -> the modules its names now live in
MOVED: dict[str, tuple[str, ...]] = {
    "webshop_gym.wire": ("webshop_gym.web.codec",),
    "webshop_gym.remote": ("webshop_gym.web.client",),
    "webshop_gym.render": ("webshop_gym.render.text", "webshop_gym.render.html"),
    "webshop_gym.render_html": ("webshop_gym.render.html",),
    "webshop_gym.reward": ("webshop_gym.reward.original", "webshop_gym.reward.nouns"),
    "webshop_gym.colors": ("webshop_gym.reward.colors",),
    "webshop_gym.noun_tagger": ("webshop_gym.reward.nouns",),
    "webshop_gym.shaping": ("webshop_gym.reward.shaping",),
    "webshop_gym.scripted": ("webshop_gym.agents.scripted",),
    "webshop_gym.vector": ("webshop_gym.agents.scheduler",),
    "webshop_gym.cli_web": ("webshop_gym.cli.serve", "webshop_gym.cli.replay"),
}


@pytest.mark.parametrize(("old", "new"), MOVED.items(), ids=list(MOVED))
def test_an_old_module_path_gives_the_new_objects(old: str, new: tuple[str, ...]) -> None:
    old_module = importlib.import_module(old)
    homes = [importlib.import_module(name) for name in new]
    assert old_module.__all__
    for name in old_module.__all__:
        home = next((module for module in homes if name in vars(module)), None)
        assert home is not None, f"{old}.{name} is in none of {new}"
        assert getattr(old_module, name) is getattr(home, name), f"{old}.{name}"


def test_names_that_stayed_behind_a_move_still_import() -> None:
    from webshop_gym.agents.pages import read_item
    from webshop_gym.cli import COMMANDS, main
    from webshop_gym.envs import MAX_ACTION_CHARS, MAX_OBSERVATION_CHARS, SharedStrings, UnicodeText
    from webshop_gym.spaces import MAX_ACTION_CHARS as LIMIT
    from webshop_gym.spaces import SharedStrings as Strings
    from webshop_gym.spaces import UnicodeText as Space
    from webshop_gym.wrappers import FILLER_WORDS
    from webshop_gym.wrappers import read_item as old_read_item

    assert (MAX_ACTION_CHARS, UnicodeText, SharedStrings, old_read_item) == (LIMIT, Space, Strings, read_item)
    assert MAX_OBSERVATION_CHARS == 1 << 20 and FILLER_WORDS and callable(main) and COMMANDS


def test_the_remote_id_names_the_client_module() -> None:
    assert gym.spec("WebShop-Remote-v0").entry_point == "webshop_gym.web.client:RemoteWebShopEnv"
    assert webshop_gym.ENTRY_POINTS["WebShop-Remote-v0"] == "webshop_gym.web.client:RemoteWebShopEnv"


def test_the_text_readers_split_on_the_renderers_separator() -> None:
    """One separator: the page readers split on the very string the text mode joins with."""
    from webshop_gym.agents import pages
    from webshop_gym.render.text import SEPARATOR

    assert pages.SEPARATOR is SEPARATOR
    assert not hasattr(importlib.import_module("webshop_gym.wrappers"), "SEP")
