"""Clark-style head distances: the streaming kernels equal the plain all-rows computation; the clustering study."""

import numpy as np
import pytest
import torch

import attncoda as ac
from attncoda.math.pairdist import pair_distance_sums
from attncoda.studies import clustering
from clustering_fixtures import synthetic_clustering

NAIVE = {
    "js": ac.jensen_shannon,
    "cosine": lambda a, b: 1.0 - ac.cosine(a, b),
    "euclidean": ac.euclidean,
}


@pytest.mark.parametrize("metric", list(NAIVE))
def test_pair_sums_equal_the_metric_on_every_pair(metric):
    rng = np.random.default_rng(3)
    rows = rng.dirichlet(np.full(20, 0.3), (7, 9))
    rows[0, 0, :5] = 0.0  # exact zeros are fine for these metrics
    rows[0, 0] /= rows[0, 0].sum()
    expected = NAIVE[metric](rows[:, :, None, :], rows[:, None, :, :]).sum(axis=0)
    np.fill_diagonal(expected, 0.0)
    np.testing.assert_allclose(pair_distance_sums(rows, metric), expected, rtol=1e-10, atol=1e-12)


def test_content_pair_sums_are_the_content_distance():
    rng = np.random.default_rng(4)
    rows = rng.dirichlet(np.full(12, 0.5), (5, 6))
    logs = np.log(rows[..., 1:])
    clr = logs - logs.mean(axis=-1, keepdims=True)
    expected = ac.content_distance(rows[:, :, None, :], rows[:, None, :, :]).sum(axis=0)
    np.testing.assert_allclose(pair_distance_sums(clr, "content"), expected, rtol=1e-10, atol=1e-10)


def test_bad_metric_or_shape_is_one_line():
    with pytest.raises(ValueError, match="unknown head metric"):
        pair_distance_sums(np.ones((1, 2, 2)) / 2, "hellinger")
    with pytest.raises(ValueError, match="positions, heads, D"):
        pair_distance_sums(np.ones((2, 2)) / 2, "js")


@pytest.fixture(scope="module")
def tiny_bert(tmp_path_factory):
    from tiny_models import save_tiny

    return save_tiny("bert", tmp_path_factory.mktemp("bert") / "tiny-bert")


@pytest.mark.slow  # over 2.5 s on a 2-core AVX2-only machine: make test runs it, make check leaves it (held under 120 s in CI)
def test_streamed_head_distances_equal_the_all_rows_computation(tiny_bert, tmp_path, monkeypatch):
    from attncoda.engine.corpus import text_windows
    from attncoda.engine.head_distances import head_distances
    from attncoda.engine.models import load_model

    monkeypatch.setenv("ATTNCODA_CACHE", str(tmp_path / "cache"))
    n, length = 4, 24
    hd = head_distances(str(tiny_bert), n=n, length=length, seed=0, batch_size=3)  # batches of 3 and 1
    loaded = load_model(str(tiny_bert))
    ids, _ = text_windows(loaded.processor, n, length, 0)
    with torch.inference_mode():
        att = torch.stack(loaded.backbone(input_ids=torch.as_tensor(ids), output_attentions=True).attentions, 1)  # (n, layers, heads, L, L)
    rows = att.double().numpy().transpose(0, 3, 1, 2, 4).reshape(n * length, -1, length)
    rows /= rows.sum(axis=-1, keepdims=True)
    sink = tuple(hd.meta.sink)
    for metric, f in NAIVE.items():
        for conv in ("keep", "drop"):
            v = ac.view(rows, conv, sink)
            expected = f(v[:, :, None, :], v[:, None, :, :]).mean(axis=0)
            np.fill_diagonal(expected, 0.0)
            np.testing.assert_allclose(hd.distances[metric][conv], expected, rtol=1e-5, atol=1e-7)
    assert np.array_equal(hd.distances["content"]["keep"], hd.distances["content"]["drop"])
    expected = ac.content_distance(rows[:, :, None, :], rows[:, None, :, :], sink).mean(axis=0)
    np.testing.assert_allclose(hd.distances["content"]["keep"], expected, rtol=1e-4)
    np.testing.assert_allclose(hd.key_attention, rows.mean(axis=0), rtol=1e-5, atol=1e-7)
    again = head_distances(str(tiny_bert), n=n, length=length, seed=0, batch_size=3)
    assert all(np.array_equal(again.distances[m][c], hd.distances[m][c]) for m in NAIVE for c in ("keep", "drop")), "cached copy differs"


def test_a_causal_model_is_refused_in_one_line(tmp_path, monkeypatch):
    from tiny_models import save_tiny

    from attncoda.engine.head_distances import head_distances

    monkeypatch.setenv("ATTNCODA_CACHE", str(tmp_path / "cache"))
    folder = save_tiny("llama", tmp_path / "tiny-llama")
    with pytest.raises(ValueError, match="causal; Clark-style head distances here are for text encoders"):
        head_distances(str(folder), n=2, length=16)


def test_table9_content_taxonomy_is_the_same_under_both_conventions():
    rng = np.random.default_rng(0)
    x = rng.random((12, 3))
    d = np.sqrt(((x[:, None] - x[None]) ** 2).sum(-1))
    distances = {m: {"keep": d, "drop": d if m == "content" else d[::-1, ::-1]} for m in clustering.CLUSTER_METRICS}
    att = rng.dirichlet(np.ones(5), 12)
    rows = clustering.table9(distances, clustering.head_sets(att, 0, [4], threshold=0.3))
    assert all(r.cross_ari["content"] == 1.0 for r in rows)
    assert all(0 < r.largest["js"]["keep"] <= 1 for r in rows)


def test_table9_rows_are_typed_and_keep_the_results_file_s_flat_form():
    from attncoda.studies.clustering import Table9Row, table9

    rng = np.random.default_rng(0)
    x = rng.normal(size=(12, 3))
    d = np.sqrt(((x[:, None] - x[None]) ** 2).sum(-1))
    distances = {m: {"keep": d, "drop": d} for m in ("js", "cosine", "euclidean", "content")}
    sets = {"sep": {"members": [0, 1, 2]}, "cls": {"members": []}}
    rows = table9(distances, sets, ks=(2, 3))
    flat = rows[0].to_json()
    assert flat["K"] == 2 and flat["js_cross_ari"] == 1.0 and "content_sep_jaccard_drop" in flat
    assert [Table9Row.from_json(r.to_json()) for r in rows] == rows
    assert rows[1].jaccard["js"]["sep"]["keep"] == rows[1].to_json()["js_sep_jaccard_keep"]


def test_table9_over_window_samples_reports_each_sample_its_median_and_range():
    from attncoda.studies.clustering import SampleSpread, sample_seeds, sample_spread, spread_json, table9

    rng = np.random.default_rng(1)
    samples = []
    for _ in range(5):  # five "window samples": independent noisy distance matrices
        x = rng.normal(size=(12, 3))
        d = np.sqrt(((x[:, None] - x[None]) ** 2).sum(-1))
        y = x + rng.normal(scale=0.8, size=x.shape)
        drop = np.sqrt(((y[:, None] - y[None]) ** 2).sum(-1))
        distances = {m: {"keep": d, "drop": d if m == "content" else drop} for m in ("js", "cosine", "euclidean", "content")}
        samples.append(table9(distances, {"sep": {"members": [0, 1]}, "cls": {"members": []}}, ks=(2, 4)))
    spread = sample_spread(samples)
    js = spread[4]["cross_ari"]["js"]
    assert js.values == [s[1].cross_ari["js"] for s in samples]
    assert js.low <= js.median <= js.high and js.low == min(js.values) and js.high == max(js.values)
    assert spread[2]["cross_ari"]["content"].values == [1.0] * 5
    assert np.isnan(spread[2]["jaccard"]["js"]["cls"]["keep"].median), "an empty set in every sample has no Jaccard"
    assert SampleSpread([0.1, 0.5]).place(0.05) == "below" and SampleSpread([0.1, 0.5]).place(0.3) == "within"
    assert spread_json(spread)[0]["cross_ari"]["js"]["values"] == spread[2]["cross_ari"]["js"].values
    assert sample_seeds(3, 4) == [3, 4, 5, 6]
    with pytest.raises(ValueError, match="at least 1"):
        sample_seeds(0, 0)


def test_an_encoder_s_clustering_is_typed_and_writes_the_results_file_s_form():
    r = synthetic_clustering("enc")
    assert r.table9 is r.samples[0] and r.spread[4]["cross_ari"]["js"].values == [row.cross_ari["js"] for s in r.samples for row in s if row.K == 4]
    assert r.has_sep_heads and r.ring_set() == ("sep", [0, 1, 2])
    assert r.set_sizes()["heads"] == 12 and r.set_sizes()["sep"] == 3
    assert r.js_cross_ari().values == [v for per in r.spread.values() for v in per["cross_ari"]["js"].values]
    numbers = r.numbers({"JS": 0.1})
    assert list(numbers) == ["model_info", "weights_sha256", "positions", "sink", "head_sets", "table9", "table9_samples", "table5", "wall_time_s"]
    assert numbers["table9_samples"]["seeds"] == [0, 1, 2] and len(numbers["table9_samples"]["per_sample"]) == 3
    embedding, labels = r.head_map(4, seed=0)
    assert embedding["keep"].shape == (12, 2) and len(set(labels["drop"])) == 4
    assert synthetic_clustering("other", sep_members=False).ring_set()[0] == "sink"


def test_measuring_an_encoder_reads_every_window_sample(tiny_bert, tmp_path, monkeypatch):
    from attncoda.engine.head_distances import head_distances

    monkeypatch.setenv("ATTNCODA_CACHE", str(tmp_path / "cache"))
    r = clustering.measure_encoder(str(tiny_bert), n=3, length=24, seeds=[0, 1], batch_size=2)
    assert len(r.samples) == 2 and r.sample_seeds == [0, 1]
    again = head_distances(str(tiny_bert), n=3, length=24, seed=0, batch_size=2)
    np.testing.assert_array_equal(r.first.key_attention, again.key_attention)  # the first sample's, from the cache
    assert r.sets == clustering.head_sets(again.key_attention, again.meta.cls, again.meta.sep)


def test_a_content_taxonomy_that_moves_between_conventions_is_an_error(tiny_bert, tmp_path, monkeypatch):
    monkeypatch.setenv("ATTNCODA_CACHE", str(tmp_path / "cache"))
    real = clustering.table9

    def broken(distances, sets, ks=clustering.CLUSTERING_KS):
        rows = real(distances, sets, ks)
        return [clustering.Table9Row(r.K, {**r.cross_ari, "content": 0.5}, r.largest, r.jaccard) for r in rows]

    monkeypatch.setattr(clustering, "table9", broken)
    with pytest.raises(RuntimeError, match="d_A\\^⊥ gave different taxonomies"):
        clustering.measure_encoder(str(tiny_bert), n=3, length=24, seeds=[0], batch_size=2)


def test_table5_entries_name_their_columns_as_the_results_files_do():
    e = clustering.Table5Entry("m", {"cosine": 0.1, "js": 0.2, "euclidean": 0.3, "content": 1.0}, {"name": "m"}, "0" * 64)
    assert e.to_json() == {"1 − cos": 0.1, "JS": 0.2, "Euclid.": 0.3, "d_A^⊥": 1.0}
    assert list(e.numbers()) == ["table5", "model_info", "weights_sha256"]


def test_coverage_counts_held_out_numbers_inside_the_ranges():
    """A held-out sample equal to one of the range samples lies inside every range; one pushed past every range lies
    outside each, and each miss is named with its K and number."""
    r = synthetic_clustering("a", seeds=range(4))
    same = clustering.coverage(r.spread, 4, [r.samples[1]])
    assert same.inside == same.checked > 0 and same.outside == [] and same.nominal == pytest.approx(3 / 5)
    shifted = [clustering.Table9Row(row.K, {m: v + 10 for m, v in row.cross_ari.items()}, row.largest, row.jaccard) for row in r.samples[0]]
    moved = clustering.coverage(r.spread, 4, [shifted])
    misses = {(k, name) for k, name, *_ in moved.outside}
    assert {(row.K, f"cross_ari/{m}") for row in shifted for m in row.cross_ari} == misses
    assert moved.inside == moved.checked - len(misses)


def test_held_out_samples_are_kept_out_of_the_ranges_and_written():
    r = synthetic_clustering("a", seeds=(0, 1, 2), held_out=(3, 4))
    assert len(r.samples) == 3 and len(r.held_out) == 2
    assert r.spread[4]["cross_ari"]["js"].values == [s[i].cross_ari["js"] for s in r.samples for i, row in enumerate(s) if row.K == 4]
    held = r.numbers(None)["table9_samples"]["held_out"]
    assert held["seeds"] == [3, 4] and len(held["per_sample"]) == 2 and held["coverage"]["checked"] == r.coverage.checked
    assert clustering.holdout_seeds(0, 20, 4) == [20, 21, 22, 23] and clustering.holdout_seeds(5, 3, 0) == []
