"""verl-agent's contract on a real local Ray cluster: the batch plays what WebShopEnv plays."""

from __future__ import annotations

import functools
import gc
import itertools
import json
import random
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
import ray

from webshop_gym.agents.scripted import ExpertPolicy
from webshop_gym.data.prepare import find_inputs, prepare_catalog
from webshop_gym.envs import Split, WebShopEnv
from webshop_gym.integrations.verl import (
    WIN_REWARD,
    WebShopEnvs,
    build_webshop_envs,
    build_webshop_envs_with_verl_agent_goals,
    verl_agent_goal_order,
    webshop_projection,
)

CPUS = 2
ACTOR = {"num_cpus": 0.25}


@pytest.fixture(scope="module", autouse=True)
def shutdown_ray_after_module() -> Iterator[None]:
    yield
    ray.shutdown()


@pytest.fixture
def local_ray() -> None:
    if not ray.is_initialized():
        ray.init(num_cpus=CPUS, include_dashboard=False)


@pytest.fixture(scope="module")
def store_1k(webshop_1k: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The real 1k set, prepared as users prepare it (`webshop-gym data prepare --from ... --out ...`)."""
    out = tmp_path_factory.mktemp("verl") / "webshop-1k"
    prepare_catalog(find_inputs(webshop_1k), out, progress=False)
    return out


def play_experts(envs: WebShopEnvs, env_kwargs: dict, split: Split) -> list[dict]:
    """Steps the batch with the expert's actions, each from a local twin env (``WebShopEnv(**env_kwargs,
    split=split)``) on the same goal.

    Asserts, every step, that the batch returns what the twin returns; gives the final infos.
    """
    observations, infos = envs.reset()
    twins, experts, seen = [], [], []
    for observation, info in zip(observations, infos, strict=True):
        twin = WebShopEnv(**env_kwargs, split=split)
        twin_observation, twin_info = twin.reset(options={"goal_index": info["goal_index"]})
        assert observation == twin_observation and info["instruction"] == twin_info["instruction"]
        assert info["available_actions"]["has_search_bar"] and info["won"] is False
        twins.append(twin)
        experts.append(ExpertPolicy(twin))
        seen.append((twin_observation, twin_info))
    done = [False] * len(envs)
    final: list[dict] = [{}] * len(envs)
    while not all(done):
        actions = ["click[back to search]" if done[i] else experts[i].act(*seen[i]) for i in range(len(envs))]
        observations, rewards, dones, infos = envs.step(actions)
        for i, twin in enumerate(twins):
            if done[i]:  # verl-agent steps ended envs too: nothing changes, nothing is earned
                assert rewards[i] == 0.0 and dones[i] and not infos[i]["won"]
                continue
            twin_observation, reward, terminated, truncated, twin_info = twin.step(actions[i])
            seen[i] = (twin_observation, twin_info)
            assert observations[i] == twin_observation
            assert infos[i]["task_score"] == reward
            assert dones[i] == (terminated or truncated)
            assert infos[i]["won"] == bool(twin_info.get("success", False))
            assert rewards[i] == (WIN_REWARD if infos[i]["won"] else 0.0)
            clicks = [a for a in twin_info["available_actions"] if a.startswith("click[")]
            assert infos[i]["available_actions"]["clickables"] == [a[len("click[") : -1] for a in clicks]
            done[i], final[i] = dones[i], infos[i]
    return final


@pytest.mark.parametrize("catalog", ["mini", "1k"])
def test_expert_actions_earn_what_webshop_env_gives(
    catalog: str, request: pytest.FixtureRequest, local_ray: None
) -> None:
    if catalog == "mini":
        env_kwargs = {"catalog": "mini"}
    else:
        env_kwargs = {"catalog": str(request.getfixturevalue("store_1k")), "goals": "synthetic"}
    with build_webshop_envs(0, 2, 2, ACTOR, True, env_kwargs, envs_per_actor=2) as envs:
        final = play_experts(envs, env_kwargs, "train")
    assert sum(info["won"] for info in final) >= 2  # the expert buys right (else the test shows little)
    assert all(info["task_score"] == info["score"] for info in final if "score" in info)


def test_a_group_plays_one_goal_and_draws_are_seeded_from_the_split(local_ray: None) -> None:
    kwargs = {"catalog": "mini"}
    with (
        build_webshop_envs(7, 3, 2, ACTOR, True, kwargs, envs_per_actor=4) as a,
        build_webshop_envs(7, 3, 2, ACTOR, False, kwargs, envs_per_actor=6) as test,
    ):
        train_draws = [[info["goal_index"] for info in a.reset()[1]] for _ in range(3)]
        _, infos = test.reset()
    train_size = len(WebShopEnv(catalog="mini", split="train").goal_indices)
    test_env = WebShopEnv(catalog="mini", split="test")
    assert (a.split_size, test.split_size) == (train_size, len(test_env.goal_indices))
    for goals in train_draws:
        assert goals[0::2] == goals[1::2]  # group members, adjacent, share the goal
        assert len(set(goals)) == 3  # env_num different goals
    assert len({tuple(goals) for goals in train_draws}) == 3  # each reset draws anew
    assert [info["instruction"] for info in infos] == [
        test_env.reset(options={"goal_index": info["goal_index"]})[1]["instruction"] for info in infos
    ]
    with build_webshop_envs(7, 3, 2, ACTOR, True, kwargs, envs_per_actor=6) as again:
        # The same seed draws the same goals, however the envs are spread over actors.
        assert [[info["goal_index"] for info in again.reset()[1]] for _ in range(3)] == train_draws


def test_invalid_actions_are_reported_and_change_nothing(local_ray: None) -> None:
    with build_webshop_envs(1, 2, 1, ACTOR, True, {"catalog": "mini"}) as envs:
        first, _ = envs.reset()
        actions = ["click[no such button]", "<think>x</think><action>buy it</action>"]
        observations, rewards, dones, infos = envs.step(actions)
        assert observations == first and rewards == [0.0, 0.0] and dones == [False, False]
        assert "No clickable 'no such button'" in infos[0]["action_error"]
        assert "Malformed action" in infos[1]["action_error"]
        assert [info["won"] for info in infos] == [False, False]

        # Answers in verl-agent's format, through the projection, are actions the env takes.
        answers = ["<think>search</think><action>search[Red Mug]</action>", "<think>a</think>no action"]
        actions, valids = webshop_projection(answers)
        observations, _, _, infos = envs.step(actions)
        assert valids == [1, 0]
        assert infos[0]["action_error"] == "" and infos[0]["page"] == "results"
        assert infos[1]["action_error"] != "" and observations[1] == first[1]

        with pytest.raises(ValueError, match="list of 2 actions"):
            envs.step(["search[mug]"])


@pytest.mark.parametrize(
    ("answer", "action", "valid"),
    [
        ("<think>need a mug</think>\n<action> Click[B0AB12CD34] </action>", "click[b0ab12cd34]", 1),
        ("<think>x</think><action>search[mug]</action>, <action>click[buy now]</action>", "search[mug]", 1),
        ("<action>search[mug]</action>", "search[mug]", 0),  # no thought
        ("<think>买</think><action>search[mug]</action>", "search[mug]", 0),  # Chinese characters
        ("<think>x</think><ACTION>click[Buy Now]</ACTION>", "click[buy now]", 1),  # tags in any case
        ("<think>x</think> I will buy it: click[Buy Now]", "y it: click[buy now]", 0),  # no block: the tail
        ("<think>x</think></action>oops<action>", "/action>oops<action>", 0),  # close before open
        ("", "", 0),
    ],
)
def test_projection_follows_verl_agent_rules(answer: str, action: str, valid: int) -> None:
    assert webshop_projection([answer]) == ([action], [valid])


def test_projection_refuses_non_strings() -> None:
    with pytest.raises(TypeError, match="answer 1 is a NoneType"):
        webshop_projection(["<action>x</action>", None])  # type: ignore[list-item]


def test_close_kills_the_actors(local_ray: None) -> None:
    assert wait_for_cpus(CPUS)  # the tests before closed theirs
    envs = build_webshop_envs(0, 2, 2, {"num_cpus": 0.5}, True, {"catalog": "mini"}, envs_per_actor=2)
    assert len(set(envs.actor_pids())) == 2
    assert wait_for_cpus(CPUS - 1.0)  # two actors hold half a CPU each
    envs.close()
    envs.close()  # again: nothing to do
    assert wait_for_cpus(CPUS)
    with pytest.raises(RuntimeError, match="closed"):
        envs.reset()


def wait_for_cpus(expected: float, timeout: float = 30.0) -> bool:
    """Whether Ray's free CPUs reach ``expected`` (its resource view updates asynchronously)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if abs(ray.available_resources().get("CPU", 0.0) - expected) < 1e-6:
            return True
        time.sleep(0.1)
    return False


def test_bad_arguments_say_what_to_do(webshop_1k: Path, local_ray: None) -> None:
    with pytest.raises(ValueError, match="webshop-gym data prepare --from"):
        build_webshop_envs(0, 1, 1, ACTOR, True, {"catalog": str(webshop_1k)})
    with pytest.raises(ValueError, match="is_train picks it"):
        build_webshop_envs(0, 1, 1, ACTOR, True, {"catalog": "mini", "split": "dev"})
    with pytest.raises(ValueError, match="unknown env_kwargs 'limit_goals'"):
        build_webshop_envs(0, 1, 1, ACTOR, True, {"catalog": "mini", "limit_goals": 10})
    with pytest.raises(ValueError, match="original env's num_products with webshop-gym's catalog"):
        build_webshop_envs(0, 1, 1, ACTOR, True, {"catalog": "mini", "num_products": None})
    with pytest.raises(ValueError, match="not an official WebShop set"):
        build_webshop_envs(0, 1, 1, ACTOR, True, {"file_path": "my_items.json", "attr_path": "my_attrs.json"})
    with pytest.raises(ValueError, match="pass num_products=None"):
        build_webshop_envs(0, 1, 1, ACTOR, True, {"num_products": 100})
    with pytest.raises(ValueError, match="goal_protocol must be one of"):
        build_webshop_envs(0, 1, 1, ACTOR, True, {"catalog": "mini"}, goal_protocol="paper")
    with pytest.raises(ValueError, match="group_n must be a positive int"):
        build_webshop_envs(0, 1, 0, ACTOR, True, {"catalog": "mini"})
    with pytest.raises(ValueError, match="max_steps must be a positive int"):  # raised in the actor
        build_webshop_envs(0, 1, 1, ACTOR, True, {"catalog": "mini", "max_steps": 0})
    with pytest.raises(ValueError, match="the 'test' split has 100"):
        build_webshop_envs(0, 101, 1, ACTOR, False, {"catalog": "mini"}, envs_per_actor=101)


def test_starts_a_local_ray_when_none_runs() -> None:
    ray.shutdown()
    with build_webshop_envs(0, 1, 1, ACTOR, True, {"catalog": "mini"}) as envs:
        assert ray.is_initialized()
        assert envs.reset()[1][0]["page"] == "search"
    ray.shutdown()


# -- verl-agent's own set-up ------------------------------------------------------------------

PRICE_TEXT = re.compile(r", and price lower than \d+\.\d\d dollars$")


def verl_agent_goal_list(folder: Path, worker_seed: int) -> list[tuple[str, tuple, str]]:
    """One verl-agent worker's synthetic goal list, built from the raw files as verl-agent documents it.

    Its vendored WebShop loads ``items_shuffle_1000.json`` in file order, skipping asins that are
    'nan', longer than 10 characters or seen before; option names are lower-cased and option
    values stripped, lower-cased, '/' read as ' | '. Each product with a templated instruction in
    ``items_ins_v2_1000.json`` gives one goal per combination of its option values (names sorted,
    the last varying fastest), its text the instruction, ' with name: value, and ...' and a price
    text (left out here: its price limits come from the worker's random state). The worker then
    calls ``random.seed(worker_seed)`` and ``random.shuffle`` on the list.

    Returns:
        ``(asin, ((name, value), ...), text without the price)`` per place of the list.
    """
    goals = list(verl_agent_build_order(folder))
    shuffler = random.Random()
    shuffler.seed(worker_seed)  # what random.seed does to the module's generator
    shuffler.shuffle(goals)
    return goals


@functools.cache
def verl_agent_build_order(folder: Path) -> tuple[tuple[str, tuple, str], ...]:
    products = json.loads((folder / "items_shuffle_1000.json").read_text())
    attributes = json.loads((folder / "items_ins_v2_1000.json").read_text())
    goals, seen = [], set()
    for product in products:
        asin = product["asin"]
        if asin == "nan" or len(asin) > 10 or asin in seen:
            continue
        seen.add(asin)
        instruction = attributes[asin].get("instruction")
        if instruction is None:
            continue
        options = {
            name.lower(): [value["value"].strip().replace("/", " | ").lower() for value in values]
            for name, values in (product["customization_options"] or {}).items()
            if values is not None
        }
        names = sorted(options)
        for combination in itertools.product(*(options[name] for name in names)):
            chosen = tuple(zip(names, combination, strict=True))
            option_text = ", and ".join(f"{name}: {value}" for name, value in chosen)
            goals.append((asin, chosen, instruction + (f" with {option_text}" if option_text else "")))
    return tuple(goals)


def played(goal) -> tuple[str, tuple, str]:  # type: ignore[no-untyped-def]
    """A webshop-gym goal as `verl_agent_goal_list` lists it."""
    return goal.asin, tuple(goal.goal_options), PRICE_TEXT.sub("", goal.instruction_text)


@pytest.fixture(scope="module")
def goals_1k(store_1k: Path) -> tuple:
    return WebShopEnv(catalog=str(store_1k), goals="synthetic", split="all").all_goals


def test_verl_agent_goal_order_is_verl_agents_list_goal_by_goal(webshop_1k: Path, goals_1k: tuple) -> None:
    assert len(goals_1k) == 6910
    for worker_seed in (0, 7, 1000, 1127):  # train workers are seed + group, test ones seed + 1000 + env
        order = verl_agent_goal_order("synthetic", len(goals_1k), "webshop-1k", worker_seed)
        expected = verl_agent_goal_list(webshop_1k, worker_seed)
        assert [played(goals_1k[i]) for i in order] == expected


def test_verl_agent_train_and_test_goals_overlap_as_warned(goals_1k: tuple) -> None:
    # verl-agent's run_webshop.sh: env.seed=0, 16 train goals per batch, 128 test envs (seed 1000 + i).
    def places(worker_seed: int, chosen: slice) -> set[int]:
        return set(
            verl_agent_goal_order("synthetic", len(goals_1k), "webshop-1k", worker_seed)[chosen].tolist()
        )

    trained = set().union(*(places(group, slice(500, None)) for group in range(16)))
    tested = set().union(*(places(1000 + env, slice(0, 500)) for env in range(128)))
    assert tested <= trained  # every goal it may test on, it may have trained on
    paper_test, paper_dev = set(range(500)), set(range(500, 1500))  # webshop-gym's splits of these goals
    one_list = places(0, slice(500, None))
    assert len(one_list & paper_test) > 400 and len(one_list & paper_dev) > 800


def verl_agent_env_kwargs(folder: Path) -> dict:
    """What verl-agent's make_envs passes with env.webshop.use_small=True, human_goals=False."""
    return {
        "observation_mode": "text",
        "num_products": None,
        "human_goals": False,
        "file_path": str(folder / "items_shuffle_1000.json"),
        "attr_path": str(folder / "items_ins_v2_1000.json"),
    }


@pytest.fixture
def data_dir_with_1k(store_1k: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`webshop-gym data prepare --set 1k` done: catalog="1k" reads the prepared store."""
    assert store_1k.name == "webshop-1k"
    monkeypatch.setenv("WEBSHOP_GYM_DATA", str(store_1k.parent))


def test_verl_agent_protocol_plays_verl_agents_goal_in_every_env(
    webshop_1k: Path, goals_1k: tuple, data_dir_with_1k: None, local_ray: None
) -> None:
    env_kwargs = verl_agent_env_kwargs(webshop_1k)
    for seed, env_num, group_n, is_train in ((0, 3, 2, True), (1000, 3, 1, False)):
        with pytest.warns(UserWarning, match="not leak-free"):
            envs = build_webshop_envs_with_verl_agent_goals(
                seed=seed, env_num=env_num, group_n=group_n, is_train=is_train,
                env_kwargs=env_kwargs, resources_per_worker=ACTOR, envs_per_actor=3,
            )  # fmt: skip
        # verl-agent's draws: numpy's RandomState(seed) picks env_num places per reset, one per group.
        rng = np.random.RandomState(seed)
        places = range(500, 6910) if is_train else range(500)
        with envs:
            for _ in range(2):
                drawn = np.repeat(rng.choice(places, size=env_num, replace=False), group_n)
                _, infos = envs.reset()
                for i, info in enumerate(infos):
                    expected = verl_agent_goal_list(webshop_1k, seed + i // group_n)[drawn[i]]
                    goal = goals_1k[info["goal_index"]]
                    assert played(goal) == expected and info["instruction"] == goal.instruction_text


def manager_tasks(observations: list[str], infos: list[dict], tasks: list[str] | None = None) -> list[str]:
    """What verl-agent's WebshopEnvironmentManager reads, checked as it reads it.

    On reset (``tasks`` None) its ``extract_task`` splits each observation at ' [SEP] ', requires
    the second part to be 'Instruction:' and takes the third as the task; on every page its
    ``format_obs`` looks the task up among the parts and shows what follows it; its
    ``format_avail_actions`` refuses keys other than has_search_bar and clickables.
    """
    if tasks is None:
        parts = [observation.split(" [SEP] ") for observation in observations]
        assert all(p[1] == "Instruction:" for p in parts)
        tasks = [p[2] for p in parts]
    for observation, info, task in zip(observations, infos, tasks, strict=True):
        assert task in observation.split(" [SEP] ") and task == info["instruction"]
        assert set(info["available_actions"]) == {"has_search_bar", "clickables"}
    return tasks


def test_verl_agent_make_envs_runs_with_its_own_arguments(
    webshop_1k: Path, store_1k: Path, data_dir_with_1k: None, local_ray: None
) -> None:
    env_kwargs = verl_agent_env_kwargs(webshop_1k)
    resources = {"num_cpus": 0.1, "num_gpus": 0}  # OmegaConf.to_container(config.env.resources_per_worker)
    twin_kwargs = {"catalog": str(store_1k), "goals": "synthetic"}
    # make_envs's two calls, as it makes them: keywords, resources_per_worker last.
    with (
        build_webshop_envs(seed=0, env_num=2, group_n=2, is_train=True, env_kwargs=env_kwargs,
                           resources_per_worker=resources, envs_per_actor=4) as train,
        build_webshop_envs(seed=1000, env_num=2, group_n=1, is_train=False, env_kwargs=env_kwargs,
                           resources_per_worker=resources, envs_per_actor=2) as val,
    ):  # fmt: skip
        final = play_experts(train, twin_kwargs, "train")
        assert sum(info["won"] for info in final) >= 2
        observations, infos = val.reset()
        tasks = manager_tasks(observations, infos)
        answers = [f"<think>look</think><action>search[{task}]</action>" for task in tasks]
        actions, valids = webshop_projection(answers)
        observations, rewards, dones, infos = val.step(actions)
        manager_tasks(observations, infos, tasks)
        assert valids == [1, 1] and rewards == [0.0, 0.0] and dones == [False, False]
        assert [info["page"] for info in infos] == ["results", "results"]
        test_goals = WebShopEnv(**twin_kwargs, split="test")
        assert [info["instruction"] for info in infos] == [
            test_goals.goal_at(info["goal_index"]).instruction_text for info in infos
        ]


def test_earlier_verl_agent_calls_without_resources_per_worker(
    webshop_1k: Path, data_dir_with_1k: None, local_ray: None
) -> None:
    env_kwargs = verl_agent_env_kwargs(webshop_1k)
    with (
        build_webshop_envs(seed=0, env_num=1, group_n=1, is_train=True, env_kwargs=env_kwargs) as by_name,
        build_webshop_envs(0, 1, 1, False, env_kwargs) as by_place,
        build_webshop_envs(0, 1, 1, False) as by_place_no_kwargs,
    ):
        assert (by_name.split, by_place.split, by_place_no_kwargs.split) == ("train", "test", "test")
        assert by_place.reset()[1] == by_place_no_kwargs.reset()[1]  # None: verl-agent's set-up, the same
        assert by_name.goal_source == by_place.goal_source == "synthetic"
    with pytest.raises(ValueError, match="a bool fourth argument is is_train"):
        build_webshop_envs(0, 1, 1, False, env_kwargs, env_kwargs)


def test_verl_agent_files_without_a_store_name_the_command(
    webshop_1k: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, local_ray: None
) -> None:
    monkeypatch.setenv("WEBSHOP_GYM_DATA", str(tmp_path))  # nothing prepared there
    command = f"`webshop-gym data prepare --from {webshop_1k} --out {tmp_path / 'webshop-1k'}`"
    with pytest.raises(FileNotFoundError, match=re.escape(command)):
        build_webshop_envs(0, 1, 1, ACTOR, True, verl_agent_env_kwargs(webshop_1k))


def test_dropping_the_batch_kills_its_actors(local_ray: None) -> None:
    assert wait_for_cpus(CPUS)
    envs = build_webshop_envs(0, 2, 2, {"num_cpus": 0.5}, True, {"catalog": "mini"}, envs_per_actor=2)
    envs.reset()
    assert wait_for_cpus(CPUS - 1.0)
    del envs
    gc.collect()
    assert wait_for_cpus(CPUS)


def test_import_without_ray_names_the_extra() -> None:
    code = "import sys; sys.modules['ray'] = None; import webshop_gym.integrations.verl"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert result.returncode == 1
    assert "pip install 'webshop-gym[ray]'" in result.stderr


README = Path(__file__).resolve().parents[2] / "README.md"


def test_readme_section_runs_as_written(data_dir_with_1k: None, capsys: pytest.CaptureFixture[str]) -> None:
    section = README.read_text(encoding="utf-8").split("### verl-agent (Ray)\n", 1)[1].split("\n### ", 1)[0]
    code = re.search(r"```python\n(.*?)```", section, re.S)
    assert code is not None
    ray.shutdown()  # the snippet starts its own
    exec(compile(code.group(1), str(README), "exec"), {})
    assert capsys.readouterr().out == "['back to search', 'next >', 'b09nd8p2qr'] 0.0 False 0.0\n"
