"""The parser reads every answer form, and whatever it returns the env's grammar accepts."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from shared_prompts import format_model_output, parse_model_output
from webshop_gym.actions import Action, parse_action


@pytest.mark.parametrize(
    ("text", "action", "thought"),
    [
        ("<think>look</think><action>search[red shoes]</action>", "search[red shoes]", "look"),
        ("<action>click[buy now]</action>", "click[buy now]", None),
        ("<think>a</think>\n<action> click[B0ABC12345] </action>\n", "click[B0ABC12345]", "a"),
        ("<action>search[x]</action> no, <action>click[next >]</action>", "click[next >]", None),
        ("click[buy now]", "click[buy now]", None),
        ("Thought: the first one.\nAction: click[b0abc12345]", "click[b0abc12345]", None),
        ("<think>maybe click[description]</think> search[mug]", "search[mug]", "maybe click[description]"),
        ("<action>click[pack [2]]</action>", "click[pack [2]]", None),
    ],
)
def test_reads_each_form(text, action, thought):
    parsed = parse_model_output(text)
    assert (parsed.action, parsed.thought, parsed.error) == (action, thought, None)


@pytest.mark.parametrize(
    "text", ["", "I will buy it.", "<action></action>", "<action>jump[high]</action>", "<think>hmm", None]
)
def test_no_action_is_an_error_not_an_exception(text):
    parsed = parse_model_output(text)
    assert parsed.action is None and parsed.error


def test_round_trip_with_demonstration_format():
    for action in ["search[red shoes]", "click[< prev]", "click[buy now]"]:
        assert parse_model_output(format_model_output(action, "why")).action == action
        assert parse_model_output(format_model_output(action)).action == action


@settings(max_examples=500, deadline=None)
@given(
    st.text()
    | st.builds(
        lambda a, b, c: f"{a}<action>{b}</action>{c}",
        st.text(),
        st.text(alphabet=st.sampled_from(list("searchclik[] <>/xyz\n"))),
        st.text(),
    )
    | st.builds(lambda k, arg: f"{k}[{arg}]", st.sampled_from(["search", "click", "Click"]), st.text())
)
def test_every_emitted_action_is_accepted_by_the_env_grammar(text):
    parsed = parse_model_output(text)
    if parsed.action is not None:
        assert isinstance(parse_action(parsed.action), Action)
    else:
        assert parsed.error


def test_action_from_answer_sends_unreadable_answers_cut():
    from shared_prompts import UNREADABLE_ANSWER_CHARS, action_from_answer

    assert action_from_answer("<think>x</think><action>click[Buy Now]</action>") == "click[Buy Now]"
    assert action_from_answer("  no action here ") == "no action here"
    assert action_from_answer("y" * 5000) == "y" * UNREADABLE_ANSWER_CHARS
