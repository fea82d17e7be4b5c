"""Parallel builds: the chapters' plans, computed in processes or on a Dask cluster, give the serial build's bits."""

from collections import Counter
from dataclasses import asdict
from pathlib import Path

import pytest

from attncoda.base.protocol import SEEDS
from attncoda.engine.registry import REGISTRY
from attncoda.engine.training import SuiteRun
from attncoda.face.book import book_plan, book_runs
from attncoda.face.plans import Lookup
from attncoda.face.precompute import run_all, run_lookup, store
from attncoda.studies.collapse import endpoint_samples
from attncoda.studies.collapse_suite import endpoint_models, suite_runs


def _parameters(key: str, profile: str) -> dict:
    return book_runs(profile)[key].parameters


@pytest.fixture
def any_models_installed(monkeypatch):
    """The plans of a machine with every offline model installed (make test installs only minilm-l6, and a group run
    plans only what is installed); the full profile's refusal to record without them is test_trust's."""
    monkeypatch.setattr("attncoda.engine.registry.RegistryModel.installed", lambda self: True)
    monkeypatch.setattr("attncoda.face.chapters.note_missing_models", lambda *a, **k: None)


@pytest.mark.models
def test_the_plan_holds_every_lookup_the_chapters_make_once(any_models_installed):
    lookups = book_plan("full")
    assert len(lookups) == len(set(lookups))
    kinds = Counter(j.kind for j in lookups)
    assert kinds["suite_run"] == len(suite_runs(_parameters("collapse", "full")["suite_seeds"]))
    installed, _ = endpoint_models("defaults")  # the chapter measures the endpoints installed here, and so does the plan
    assert kinds["init_signatures"] == len(installed) * len(endpoint_samples())
    two_key_sinks = sum(1 for name in installed if REGISTRY[name].sink != "first")
    assert kinds["entropy_terms"] == 2 * two_key_sinks > 0, "the endpoints' three terms, trained and at initialization"
    clustering = _parameters("clustering", "full")  # Table 9 on every window sample, and on those held out of its ranges
    samples = clustering["samples"] + clustering["holdout"]
    assert clustering["samples"] >= 20 and kinds["head_distances"] == samples * sum(1 for e in REGISTRY.values() if not e.causal)
    measurement = (("batch_size", 8), ("length", 128), ("n", 64))
    assert all(Lookup("signatures", m, s, measurement) in lookups for m in REGISTRY for s in SEEDS)
    small = book_plan("small")
    assert all(dict(j.options).get("length") == 24 for j in small if j.kind != "suite_run")
    runs = {j.model: dict(j.options) for j in small if j.kind == "suite_run"}
    small_collapse = _parameters("collapse", "small")
    watch = {"monitor_n": small_collapse["n"], "monitor_length": 24, "monitor_seed": small_collapse["seed"]}  # each run's monitor probe
    assert runs == {run.name: {**asdict(run), **watch} for run, _, _ in suite_runs([0, 1], 4, 0, 24)}  # the chapter's own runs


def test_the_book_plan_is_the_union_of_each_chapter_run_s_plan(any_models_installed):
    from attncoda.face.chapters import CHAPTERS

    assert all(c.plan for c in CHAPTERS.values() if c.per_model), "a model chapter says what it looks up"
    lookups = book_plan("full")
    for run in book_runs("full").values():
        assert set(run.plan()) <= set(lookups)


LOOKUP_DIRS = ("signatures", "head_distances", "entropy_terms", "suite")


def _cache_bytes(root: Path) -> dict[str, bytes]:
    """Every file the lookups produce, byte for byte, except their run times: a cached array file's header records how long
    it took, and a checkpoint's ``training.json`` how long training took; their arrays and weights are compared."""
    from attncoda.base.arrays import load_arrays

    out = {}
    for d in LOOKUP_DIRS:
        for p in sorted((root / d).rglob("*")):
            if not p.is_file() or p.name == "training.json":
                continue
            if p.suffix == ".npz":
                header, arrays = load_arrays(p)
                out[str(p.relative_to(root))] = b"".join(k.encode() + arrays[k].tobytes() for k in sorted(arrays)) + header["arrays_sha256"].encode()
            else:
                out[str(p.relative_to(root))] = p.read_bytes()
    return out


@pytest.mark.slow
def test_processes_and_a_dask_cluster_write_the_serial_cache_and_results_byte_for_byte(tmp_path, monkeypatch):
    from distributed import LocalCluster
    from tiny_models import save_tiny

    from attncoda.face.chapter_run import run_chapter

    llama, bert = str(save_tiny("llama", tmp_path / "llama")), str(save_tiny("bert", tmp_path / "bert"))
    small = (("batch_size", 2), ("length", 24), ("n", 4))
    lookups = [Lookup("signatures", llama, 0, small), Lookup("signatures", llama, 1, small), Lookup("init_signatures", llama, 0, small),
               Lookup("head_distances", bert, 0, small), Lookup("entropy_terms", bert, 0, small), Lookup("entropy_terms", bert, 0, (*small, ("init_seed", 0))),
               Lookup("suite_run", "neox-s-seed0", 0, tuple(sorted({**asdict(SuiteRun("s", 64, 4, 4, seed=0, steps=2, length=24)),
                                                                 "monitor_n": 4, "monitor_length": 24, "monitor_seed": 0}.items())))]

    def chapter_results(cache: str) -> bytes:
        monkeypatch.setenv("ATTNCODA_CACHE", str(tmp_path / cache))
        out = tmp_path / f"results-{cache}"
        run_chapter("measurement", model=llama, parameters={"results_dir": str(out)}, output=tmp_path / f"{cache}.ipynb", profile="small",
                    progress=False)
        return next((out / "measurement").glob("*.json")).read_bytes()

    monkeypatch.setenv("ATTNCODA_CACHE", str(tmp_path / "serial"))
    for lookup in lookups:
        store(run_lookup(lookup))
    serial = _cache_bytes(tmp_path / "serial")
    assert all(any(k.startswith(d + "/") for k in serial) for d in LOOKUP_DIRS)

    monkeypatch.setenv("ATTNCODA_CACHE", str(tmp_path / "processes"))
    assert run_all(lookups, workers=2)["lookups"] == len(lookups)
    assert _cache_bytes(tmp_path / "processes") == serial

    # Workers with caches of their own, as on other machines: the client writes what they send back.
    monkeypatch.setenv("ATTNCODA_CACHE", str(tmp_path / "client"))
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                      env={"ATTNCODA_CACHE": str(tmp_path / "workers")}) as cluster:
        run_all(lookups, scheduler=cluster.scheduler_address)
    assert _cache_bytes(tmp_path / "client") == serial
    assert (tmp_path / "workers" / "signatures").is_dir(), "the Dask workers computed in their own caches"

    assert chapter_results("serial") == chapter_results("processes") == chapter_results("client")


def test_training_runs_are_computed_alone_and_first():
    """A local parallel build trains the collapse suite's runs one at a time before any other lookup starts (two at once
    can leave a serial build's bits); the other lookups keep their order."""
    from attncoda.face.precompute import alone_first

    lookups = [Lookup.of("signatures", "m", 0, {"n": 4}), Lookup.of("suite_run", "run-a", 0, {"steps": 4}),
               Lookup.of("head_distances", "m", 1, {"n": 4}), Lookup.of("suite_run", "run-b", 0, {"steps": 4})]
    training, rest = alone_first(lookups)
    assert [lookup.model for lookup in training] == ["run-a", "run-b"]
    assert [lookup.kind for lookup in rest] == ["signatures", "head_distances"]
