"""The release workflow is valid and builds what `nox -s build` builds."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
WORKFLOW = ROOT / ".github" / "workflows" / "release.yml"
TESTS_WORKFLOW = ROOT / ".github" / "workflows" / "tests.yml"


def load_build_script():
    spec = importlib.util.spec_from_file_location("build_packages", ROOT / "scripts" / "build_packages.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_workflow_is_valid_yaml_triggered_by_version_tags():
    workflow = yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))
    # YAML reads the bare key `on` as True.
    trigger = workflow.get("on", workflow.get(True))
    assert trigger == {"push": {"tags": ["v*"]}}
    assert set(workflow["jobs"]) == {"version", "tests", "build", "publish"}


def test_nothing_is_built_before_the_tag_and_the_tests_pass():
    jobs = yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))["jobs"]
    assert set(jobs["build"]["needs"]) == {"version", "tests"}
    check = "\n".join(step.get("run", "") for step in jobs["version"]["steps"])
    assert 'python scripts/check_release_tag.py "${{ github.ref_name }}"' in check
    assert jobs["tests"]["uses"] == "./.github/workflows/tests.yml"
    assert jobs["tests"]["with"] == {"heavy": True}


def test_tests_workflow_runs_the_fast_suite_on_pull_requests_and_every_suite_on_a_schedule():
    workflow = yaml.safe_load(TESTS_WORKFLOW.read_text(encoding="utf-8"))
    trigger = workflow.get("on", workflow.get(True))
    assert {"pull_request", "schedule", "workflow_call"} <= set(trigger)
    fast, heavy = workflow["jobs"]["fast"], workflow["jobs"]["heavy"]
    assert "if" not in fast and "tests(suite='fast')" in fast["strategy"]["matrix"]["session"]
    assert "schedule" in heavy["if"] and "inputs.heavy" in heavy["if"]
    # Together the two jobs run every session `nox -t ci` runs (.ci/run), each suite once.
    noxfile = (ROOT / "noxfile.py").read_text(encoding="utf-8")
    suites = re.findall(r'^    "([a-z]+)": \w+_suite,$', noxfile, re.MULTILINE)
    suites += re.findall(r'"([a-z]+)"', re.search(r"^INTEGRATIONS = \((.*)\)$", noxfile, re.MULTILINE)[1])
    extras = re.search(r"^EXTRA_TESTS = \{\n(.*?)^\}", noxfile, re.MULTILINE | re.DOTALL)[1]
    suites += [f"extra-{name}" for name in re.findall(r'^    "([a-z0-9-]+)": \[', extras, re.MULTILINE)]
    assert sorted(heavy["strategy"]["matrix"]["suite"] + ["fast"]) == sorted(suites)
    ci_sessions = re.findall(r'tags=\["ci"\]\)\ndef (\w+)', noxfile)
    assert sorted(ci_sessions) == ["lint", "minimal_install", "typecheck"]
    assert {"lint", "typecheck", "minimal_install"} <= set(fast["strategy"]["matrix"]["session"])


def test_publishing_uses_trusted_publishing_without_tokens():
    workflow = yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))
    publish = workflow["jobs"]["publish"]
    assert publish["needs"] == "build"
    assert publish["permissions"] == {"id-token": "write"}
    uses = [step.get("uses", "") for step in publish["steps"]]
    assert any(u.startswith("pypa/gh-action-pypi-publish@") for u in uses)
    assert "password" not in WORKFLOW.read_text(encoding="utf-8")


def test_workflow_and_nox_build_run_the_same_build_script():
    workflow = yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))
    commands = "\n".join(step.get("run", "") for step in workflow["jobs"]["build"]["steps"])
    assert "python scripts/build_packages.py --out dist" in commands
    noxfile = (ROOT / "noxfile.py").read_text(encoding="utf-8")
    assert re.search(r'session\.run\("python", "scripts/build_packages\.py", "--out", "dist"\)', noxfile)


def test_build_script_covers_every_package():
    packages = {p.name for p in (ROOT / "packages").iterdir() if (p / "pyproject.toml").is_file()}
    assert set(load_build_script().PACKAGES) == packages


def test_every_package_is_marked_typed():
    """PEP 561: a py.typed file beside each package's __init__.py (hatchling puts it in the wheel;
    scripts/check_wheels.py checks the installed wheels)."""
    for project in (ROOT / "packages").iterdir():
        if (project / "pyproject.toml").is_file():
            (package,) = [p for p in (project / "src").iterdir() if (p / "__init__.py").is_file()]
            assert (package / "py.typed").is_file(), package
