"""environment.yml (conda) and requirements.lock (pip) pin the same versions; pyproject names them all."""

import re
import tomllib
from pathlib import Path

import yaml

ROOT = Path(__file__).parents[2]


def _norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _pins(lines):
    pins = {}
    for line in lines:
        line = line.strip()
        if line and not line.startswith("#") and "==" in line:
            name, version = line.split("==", 1)
            pins[_norm(name)] = version.split("+")[0]
    return pins


def test_environment_yml_agrees_with_lock():
    env = yaml.safe_load((ROOT / "environment.yml").read_text())
    pip_section = next(d["pip"] for d in env["dependencies"] if isinstance(d, dict))
    env_pins = _pins(pip_section)
    lock_pins = _pins((ROOT / "requirements.lock").read_text().splitlines())
    assert "python=3.11" in env["dependencies"]
    mismatched = {n: (v, lock_pins.get(n)) for n, v in env_pins.items() if lock_pins.get(n) != v}
    assert not mismatched, f"environment.yml and requirements.lock disagree: {mismatched}"
    assert lock_pins["torch"] == "2.13.0"


def test_every_declared_dependency_is_pinned_in_both():
    meta = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    extras = {k: v for k, v in meta["optional-dependencies"].items() if k != "interop"}  # interop has a lock of its own (below)
    declared = list(meta["dependencies"]) + [d for extra in extras.values() for d in extra]
    names = {_norm(re.split(r"[<>=!~\[ ]", d, maxsplit=1)[0]) for d in declared} - {_norm(meta["name"])}  # an extra may name another of ours
    env = yaml.safe_load((ROOT / "environment.yml").read_text())
    env_names = set(_pins(next(d["pip"] for d in env["dependencies"] if isinstance(d, dict))))
    lock_names = set(_pins((ROOT / "requirements.lock").read_text().splitlines()))
    assert names <= env_names, f"missing from environment.yml: {names - env_names}"
    assert names <= lock_names, f"missing from requirements.lock: {names - lock_names}"


def test_the_interop_extra_is_pinned_in_its_own_lock():
    """TransformerLens and nnsight stay out of .venv: requirements-interop.lock pins them, at the extra's versions."""
    meta = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    interop = {_norm(d.split("==")[0]): d.split("==")[1] for d in meta["optional-dependencies"]["interop"] if "==" in d}
    lock = _pins((ROOT / "requirements-interop.lock").read_text().splitlines())
    assert interop and all(lock.get(n) == v for n, v in interop.items()), (interop, {n: lock.get(n) for n in interop})
    main = _pins((ROOT / "requirements.lock").read_text().splitlines())
    assert not set(lock) & set(main), "the interop lock adds packages; it never re-pins one of requirements.lock"
