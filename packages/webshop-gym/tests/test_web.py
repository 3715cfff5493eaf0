"""The web shop and its JSON API, through Flask's test client (no sockets)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from bs4 import BeautifulSoup

from webshop_gym.data.catalog import MINI_DIR
from webshop_gym.envs import WebShopEnv
from webshop_gym.scripted import ExpertPolicy
from webshop_gym.trajectories import read_trajectories, replay
from webshop_gym.web import ServerConfig, create_app
from webshop_gym.web.app import SECURITY_HEADERS
from webshop_gym.web.sessions import SessionLimitError, SessionStore


@pytest.fixture(scope="module")
def app(tmp_path_factory):
    log_dir = tmp_path_factory.mktemp("visitor-logs")
    return create_app(ServerConfig(catalog="mini", split="test", log_dir=log_dir, log_api=True))


@pytest.fixture
def client(app):
    return app.test_client()


def start(client, goal: int | None = None) -> str:
    response = client.get("/" if goal is None else f"/?goal={goal}")
    assert response.status_code == 303, response.data
    return response.headers["Location"]


def act(client, page: str, **form: str) -> str:
    response = client.post(page, data=form)
    assert response.status_code == 303 and response.headers["Location"] == page
    return client.get(page).get_data(as_text=True)


def visitor_env(app) -> WebShopEnv:
    config = app.extensions["webshop_gym"].config
    return config.make_visitor_env()


def session_of(app, page: str):
    return app.extensions["webshop_gym"].visitors.get(page.split("/")[2])


def test_a_visitor_sees_the_env_html_for_the_same_state(app, client) -> None:
    page = start(client, goal=0)
    local = visitor_env(app)
    expected, info = local.reset(seed=0, options={"goal_index": 0})
    assert client.get(page).get_data(as_text=True) == expected
    expert = ExpertPolicy(local)
    while True:
        action = expert.act(expected, info)
        if action.startswith("search["):
            html = act(client, page, search_query=action[len("search[") : -1])
        else:
            html = act(client, page, action=action)
        expected, _, terminated, truncated, info = local.step(action)
        assert html == expected
        if terminated or truncated:
            break
    assert info["success"]
    soup = BeautifulSoup(html, "html.parser")
    assert soup.select_one("#reward pre.score").get_text() == "1.0"
    assert json.loads(soup.find("script", id="reward-details").string) == info["reward_breakdown"]


def test_each_visitor_has_a_private_unguessable_session(app, client) -> None:
    first, second = start(client, goal=1), start(client, goal=2)
    first_id, second_id = first.split("/")[2], second.split("/")[2]
    assert first_id != second_id and len(first_id) == len(second_id) == 43
    before = client.get(second).get_data(as_text=True)
    act(client, first, search_query="leggings")
    assert client.get(second).get_data(as_text=True) == before
    assert "Total results" in client.get(first).get_data(as_text=True)
    assert session_of(app, first).env.goal != session_of(app, second).env.goal


@pytest.mark.parametrize(
    "address",
    ["/s/" + "A" * 43 + "/", "/s/nonsense/", "/s/" + "A" * 5000 + "/", "/s/../../etc/passwd/", "/s/%00/"],
)
def test_unknown_sessions_are_not_found(client, address: str) -> None:
    for response in (client.get(address), client.post(address, data={"action": "click[buy now]"})):
        assert response.status_code == 404
        assert "does not exist" in response.get_data(
            as_text=True
        ) or "nothing at this address" in response.get_data(as_text=True)


def test_api_env_ids_are_not_visitor_sessions_and_back(client) -> None:
    env_id = client.post("/api/v1/envs", json={}).get_json()["env_id"]
    assert client.get(f"/s/{env_id}/").status_code == 404
    visitor_id = start(client, goal=0).split("/")[2]
    assert client.post(f"/api/v1/envs/{visitor_id}/step", json={"action": "search[x]"}).status_code == 404


def test_goal_is_random_without_a_choice(app, client) -> None:
    goals = {session_of(app, start(client)).env.goal_index for _ in range(12)}
    assert len(goals) > 1


@pytest.mark.parametrize("goal", ["-1", "abc", "100", "1e3", "٣", "9" * 5000, ""])
def test_bad_goal_numbers_are_refused_clearly(client, goal: str) -> None:
    response = client.get(f"/?goal={goal}")
    assert response.status_code == 400
    assert "goal must be a whole number from 0 to 99" in response.get_data(as_text=True)


def test_malformed_forms_are_refused(client) -> None:
    page = start(client, goal=0)
    response = client.post(page, data={"nothing": "here"})
    assert response.status_code == 400 and "needs an &#39;action&#39; field" in response.get_data(
        as_text=True
    )
    response = client.post(page, data={"action": "click[" + "x" * 5000 + "]"})
    assert response.status_code == 400 and "longer than 4096" in response.get_data(as_text=True)


def test_invalid_clicks_leave_the_page_and_are_recorded(app, client) -> None:
    page = start(client, goal=0)
    before = client.get(page).get_data(as_text=True)
    assert act(client, page, action="click[no such button]") == before
    assert "No clickable" in session_of(app, page).info["action_error"]


def test_oversized_requests_get_413(client) -> None:
    page = start(client, goal=0)
    big = "x" * (70 * 1024)
    response = client.post(page, data={"action": big})
    assert response.status_code == 413 and "larger than this server allows" in response.get_data(as_text=True)
    response = client.post("/api/v1/envs", data=json.dumps({"split": big}), content_type="application/json")
    assert response.status_code == 413 and "65536 bytes at most" in response.get_json()["error"]


def test_security_headers_on_every_response(client) -> None:
    page = start(client, goal=0)
    for response in (
        client.get(page),
        client.get("/api/v1"),
        client.get("/static/webshop.css"),
        client.get("/nope"),
    ):
        for name, value in SECURITY_HEADERS.items():
            assert response.headers[name] == value
    assert client.get(page).headers["Cache-Control"] == "no-store"


def test_static_files_are_served(client) -> None:
    assert b".radio-toolbar" in client.get("/static/webshop.css").data
    assert b"requestSubmit" in client.get("/static/webshop.js").data
    assert client.get("/static/../templates/base.html").status_code == 404


def test_visitor_sessions_are_recorded_and_replay(app, client) -> None:
    page = start(client, goal=5)
    session = session_of(app, page)
    local = visitor_env(app)
    observation, info = local.reset(options={"goal_index": 5})
    expert = ExpertPolicy(local)
    actions = []
    while info["page"] != "done":
        action = expert.act(observation, info)
        actions.append(action)
        act(client, page, action=action)
        observation, _, _, _, info = local.step(action)
    recorded = read_trajectories(session.recorder.path)
    [episode] = recorded.episodes
    assert episode.header["source"] == "web" and episode.header["goal_index"] == 5
    assert episode.actions == actions and episode.finished
    assert page.split("/")[2] not in session.recorder.path.name  # file names never leak session ids
    result = replay(episode)
    assert result.matches and result.replayed_return == episode.total_reward == info["score"]


# -- the JSON API -------------------------------------------------------------------------


def test_api_episode_equals_a_local_env(client) -> None:
    created = client.post("/api/v1/envs", json={"split": "test", "observation_mode": "text_rich"})
    assert created.status_code == 201
    env_id = created.get_json()["env_id"]
    local = WebShopEnv(split="test", observation_mode="text_rich")
    answer = client.post(
        f"/api/v1/envs/{env_id}/reset", json={"seed": 4, "options": {"goal_index": 4}}
    ).get_json()
    expected = local.reset(seed=4, options={"goal_index": 4})
    assert (answer["observation"], answer["info"]) == expected
    expert = ExpertPolicy(local)
    observation, info = expected
    while True:
        action = expert.act(observation, info)
        answer = client.post(f"/api/v1/envs/{env_id}/step", json={"action": action}).get_json()
        observation, reward, terminated, truncated, info = local.step(action)
        assert answer == {
            "observation": observation,
            "reward": reward,
            "terminated": terminated,
            "truncated": truncated,
            "info": info,
        }
        if terminated or truncated:
            break
    internals = client.get(f"/api/v1/envs/{env_id}/internals").get_json()
    assert internals["goal"]["asin"] == local.goal.asin and internals["state"]["page"] == "done"
    assert client.delete(f"/api/v1/envs/{env_id}").status_code == 204
    assert client.post(f"/api/v1/envs/{env_id}/step", json={"action": "x"}).status_code == 404


def test_api_fork_is_independent(client) -> None:
    env_id = client.post("/api/v1/envs", json={"split": "test"}).get_json()["env_id"]
    client.post(f"/api/v1/envs/{env_id}/reset", json={"seed": 1})
    client.post(f"/api/v1/envs/{env_id}/step", json={"action": "search[shoes]"})
    fork = client.post(f"/api/v1/envs/{env_id}/fork")
    assert fork.status_code == 201
    fork_id = fork.get_json()["env_id"]
    a = client.post(f"/api/v1/envs/{env_id}/step", json={"action": "click[back to search]"}).get_json()
    b = client.post(f"/api/v1/envs/{fork_id}/step", json={"action": "click[next >]"}).get_json()
    assert a["info"]["page"] == "search" and b["info"]["page"] == "results"


def test_api_describes_the_server(client) -> None:
    described = client.get("/api/v1").get_json()
    assert described["catalog"] == "mini" and described["visitor_goals"]["count"] == 100
    assert "observation_mode" in described["create_fields"]


@pytest.mark.parametrize(
    ("method", "path", "body", "status", "message"),
    [
        ("post", "/api/v1/envs", "not json", 415, "Content-Type: application/json"),
        ("post", "/api/v1/envs", b"{bad json", 400, "not valid JSON"),
        ("post", "/api/v1/envs", [1, 2], 400, "must be a JSON object"),
        ("post", "/api/v1/envs", {"catalog": "/etc"}, 400, "unknown fields ['catalog']"),
        ("post", "/api/v1/envs", {"max_steps": "5"}, 400, "max_steps has the wrong type"),
        ("post", "/api/v1/envs", {"show_attributes": 1}, 400, "show_attributes has the wrong type"),
        ("post", "/api/v1/envs", {"max_steps": True}, 400, "max_steps has the wrong type"),
        ("post", "/api/v1/envs", {"observation_mode": "pixels"}, 400, "observation_mode='pixels'"),
        ("post", "/api/v1/envs", {"split": "validation"}, 400, "split='validation'"),
        ("post", "/api/v1/envs/{id}/reset", {"seed": -1}, 400, "seed must be null or a whole number"),
        ("post", "/api/v1/envs/{id}/reset", {"seed": 1.5}, 400, "seed must be null or a whole number"),
        (
            "post",
            "/api/v1/envs/{id}/reset",
            {"options": {"goal_index": 10**6}},
            400,
            "goal_index must be an int",
        ),
        (
            "post",
            "/api/v1/envs/{id}/reset",
            {"options": {"goal_index": True}},
            400,
            "goal_index must be an int in [0, 100) for the 'test' split, got True",
        ),
        ("post", "/api/v1/envs/{id}/reset", {"options": {"goal": 1}}, 400, "must be a webshop_gym"),
        ("post", "/api/v1/envs/{id}/reset", {"options": {"goals": 1}}, 400, "unknown reset options"),
        ("post", "/api/v1/envs/{id}/reset", {"options": [1]}, 400, "options must be null or an object"),
        ("post", "/api/v1/envs/{id}/step", {"action": "click[x]"}, 409, "call reset before step"),
        ("post", "/api/v1/envs/{id}/step", {}, 400, "needs an 'action'"),
        ("post", "/api/v1/envs/{id}/step", {"action": "x", "extra": 1}, 400, "unknown fields ['extra']"),
        ("get", "/api/v1/envs/{id}/step", None, 405, "does not take GET"),
        ("post", "/api/v1/envs/nope/step", {"action": "x"}, 404, "no env 'nope' on this server"),
        ("delete", "/api/v1/envs/nope", None, 404, "no env 'nope'"),
        ("get", "/api/v1/nothing", None, 404, "nothing at this address"),
    ],
)
def test_api_errors_are_clear_json(client, method, path, body, status, message) -> None:
    env_id = client.post("/api/v1/envs", json={"split": "test"}).get_json()["env_id"]
    path = path.replace("{id}", env_id)
    if isinstance(body, (dict, list)):
        response = getattr(client, method)(path, json=body)
    elif body is not None:
        content_type = "text/plain" if isinstance(body, str) else "application/json"
        response = getattr(client, method)(path, data=body, content_type=content_type)
    else:
        response = getattr(client, method)(path)
    assert response.status_code == status
    assert message in response.get_json()["error"], response.get_json()


def test_api_reports_non_string_actions_like_the_env(client) -> None:
    env_id = client.post("/api/v1/envs", json={"split": "test"}).get_json()["env_id"]
    client.post(f"/api/v1/envs/{env_id}/reset", json={"seed": 0})
    for action in (None, 3, ["click[buy now]"]):
        answer = client.post(f"/api/v1/envs/{env_id}/step", json={"action": action}).get_json()
        assert answer["reward"] == 0.0 and "string" in answer["info"]["action_error"]


# -- bad product text through the whole site ----------------------------------------------

HOSTILE_NAME = "<script>window.pwned=1;alert(1)</script> Zyzzyva Sandals {{ 7*7 }} \"q\" 'a' & b"


def write_hostile_catalogue(directory: Path) -> Path:
    """The first 40 bundled products in the official files, the first one with a hostile name."""
    products = json.loads((MINI_DIR / "items_shuffle_mini.json").read_text(encoding="utf-8"))[:40]
    attributes = json.loads((MINI_DIR / "items_ins_v2_mini.json").read_text(encoding="utf-8"))
    human = json.loads((MINI_DIR / "items_human_ins_mini.json").read_text(encoding="utf-8"))
    products[0]["name"] = HOSTILE_NAME
    products[0]["full_description"] = "<img src=x onerror=alert(2)> {% for x in range(9) %}x{% endfor %}"
    products[0]["customization_options"] = {
        "Color": [{"value": '"><script>alert(3)</script>'}, {"value": "Tan"}]
    }
    asins = {p["asin"] for p in products}
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "items_shuffle_t.json").write_text(json.dumps(products), encoding="utf-8")
    (directory / "items_ins_v2_t.json").write_text(
        json.dumps({a: v for a, v in attributes.items() if a in asins}), encoding="utf-8"
    )
    (directory / "items_human_ins_t.json").write_text(
        json.dumps({a: v for a, v in human.items() if a in asins}), encoding="utf-8"
    )
    return directory


def test_hostile_product_text_is_inert_on_the_site(tmp_path: Path) -> None:
    catalogue = write_hostile_catalogue(tmp_path / "hostile")
    client = create_app(ServerConfig(catalog=str(catalogue), split="all")).test_client()
    page = start(client, goal=0)
    results = act(client, page, search_query="zyzzyva <script>alert('query')</script>")
    assert (
        "<script>alert" not in results and "&lt;script&gt;window.pwned=1;alert(1)&lt;/script&gt;" in results
    )
    asin = BeautifulSoup(results, "html.parser").select_one("a.product-link")["data-action"]
    item = act(client, page, action=asin)
    soup = BeautifulSoup(item, "html.parser")
    assert [s.get("src") for s in soup.find_all("script")] == ["/static/webshop.js"]
    assert soup.find("h2").get_text() == HOSTILE_NAME.replace("  ", " ")
    # (the loader turns "/" in option values into " | ", as the original's does)
    assert [label.get_text() for label in soup.select("label")] == ['"><script>alert(3)< | script>', "tan"]
    description = act(client, page, action="click[description]")
    assert "{% for x in range(9) %}x{% endfor %}" in description and "xxxxxxxxx" not in description
    assert "<img src=x" not in description


# -- the session store ---------------------------------------------------------------------


def test_store_limit_and_idle_expiry() -> None:
    now = [0.0]
    store = SessionStore(max_sessions=2, idle_timeout=10.0, clock=lambda: now[0])
    env = WebShopEnv()
    first = store.add(env)
    now[0] = 5.0
    second = store.add(env)
    with pytest.raises(SessionLimitError, match="limit of 2 active sessions"):
        store.add(env)
    now[0] = 12.0  # the first has idled past the timeout, the second has not
    third = store.add(env)
    assert store.get(first.id) is None and store.get(second.id) is second and store.get(third.id) is third
    assert store.remove(second.id) and not store.remove(second.id) and len(store) == 1


def test_full_server_answers_503(tmp_path: Path) -> None:
    client = create_app(ServerConfig(catalog="mini", max_sessions=1)).test_client()
    start(client, goal=0)
    response = client.get("/?goal=1")
    assert response.status_code == 503 and "limit of 1 active sessions" in response.get_data(as_text=True)
    assert client.post("/api/v1/envs", json={}).status_code == 201  # API envs have their own limit
    assert client.post("/api/v1/envs", json={}).get_json()["status"] == 503


def test_instance_names_start_every_id_for_routing() -> None:
    client = create_app(ServerConfig(catalog="mini", instance="b2")).test_client()
    page = start(client, goal=0)
    assert page.startswith("/s/b2.") and client.get(page).status_code == 200
    env_id = client.post("/api/v1/envs", json={}).get_json()["env_id"]
    assert (
        env_id.startswith("b2.") and client.post(f"/api/v1/envs/{env_id}/reset", json={}).status_code == 200
    )
    with pytest.raises(ValueError, match="instance must be 1-16 letters or digits"):
        ServerConfig(instance="b/1")
