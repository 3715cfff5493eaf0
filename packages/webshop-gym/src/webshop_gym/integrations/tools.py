"""The shop as two tools, ``search`` and ``click``, for trainers whose models call tools.

Two places run the episode: an env in this process (`webshop_gym.integrations.trl.WebShopToolEnv`)
and a session on a WebShop OpenEnv server (`webshop_gym.integrations.openenv.WebShopServerToolEnv`,
whose server also offers the tools over MCP). All three answer a tool call with the same text
(`tool_text`), so a model sees the same conversation wherever it plays. Needs no framework.
"""

from __future__ import annotations

from typing import Any

from webshop_gym.actions import click_action, search_action

__all__ = ["ENDED", "ShopTools", "tool_text"]

ENDED = "The episode has ended: no more actions are taken."


def tool_text(text: str, action_error: str, truncated: bool) -> str:
    """What a tool call answers after one step: the page, after why the action was invalid (if it
    was), and a last line when the step used the episode's last action."""
    if action_error:
        text = f"{action_error}\n\n{text}"
    if truncated:
        text += f"\n\nNo actions left. {ENDED}"
    return text


class ShopTools:
    """The tools of one rollout's shop (TRL's ``environment_factory`` contract).

    Public methods other than ``reset`` and ``get_reward`` are the model's tools, so the state
    lives in plain attributes: ``reward`` (the episode's return so far), ``done`` (bought or out
    of steps) and ``info`` (the env's ``info`` after the last step). A subclass starts episodes
    (``reset``) and takes one step (``_step``).
    """

    reward: float = 0.0
    done: bool = False
    info: dict[str, Any]

    def get_reward(self) -> float:
        """The episode's return: the WebShop reward of the purchase, 0 without one (TRL's reward hook)."""
        return self.reward

    def search(self, query: str) -> str:
        """Searches the shop, from a page with a search bar.

        Args:
            query: The keywords to search for, e.g. "red running shoes size 9".

        Returns:
            The first page of results, or why the search did nothing.
        """
        return self._act(search_action(query))

    def click(self, button: str) -> str:
        """Clicks a button of the current page: a product id, an option, a tab, "Next >", "< Prev", "Buy Now".

        Args:
            button: The button's text as the page shows it, e.g. "Buy Now" or a product id.

        Returns:
            The page the click leads to, or why the click did nothing.
        """
        return self._act(click_action(button))

    def _act(self, action: str) -> str:
        if not self._started():
            raise RuntimeError("call reset(**row) before the tools")
        if self.done:
            return ENDED
        text, reward, terminated, truncated, self.info = self._step(action)
        self.reward += reward
        self.done = terminated or truncated
        return tool_text(text, self.info["action_error"], truncated)

    def _started(self) -> bool:
        raise NotImplementedError

    def _step(self, action: str) -> tuple[str, float, bool, bool, dict[str, Any]]:
        """One step of the episode: the page's text, reward, terminated, truncated and ``info``
        (with ``action_error``)."""
        raise NotImplementedError
