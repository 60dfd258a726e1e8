"""gpuprof.bench over parameter axes, gpuprof.write_bench_json and gpuprof.ab, on the host clock."""
import itertools
import json
import time

import pytest

import gpuprof


def runs(calls):
    """'aaabb' -> [('a', 3), ('b', 2)]"""
    return [(side, len(list(group))) for side, group in itertools.groupby(calls)]


def test_bench_over_the_product_of_axes(tmp_path):
    setups, timed = [], []

    def setup(n, order):
        setups.append((n, order))
        if order == "unsupported":
            raise gpuprof.SkipPoint("no such order")
        data = list(range(n))
        return lambda: timed.append(sum(data))

    rows = gpuprof.bench(setup, axes={"n": [10, 1000], "order": ["forward", "unsupported"]}, name="sum",
                         warmup=1, iters=5)
    assert setups == [(10, "forward"), (10, "unsupported"), (1000, "forward"), (1000, "unsupported")]
    assert len(timed) == 2 * (1 + 1 + 5)  # per measured point: cold call, warm-up, samples
    assert [row.name for row in rows] == ["sum[n=10,order=forward]", "sum[n=10,order=unsupported]",
                                          "sum[n=1000,order=forward]", "sum[n=1000,order=unsupported]"]
    assert rows[2].axes == {"n": 1000, "order": "forward"}
    assert len(rows[2].result.host_ms) == 5
    assert rows[1].result.host_ms == [] and rows[1].result.stop_reason == "skipped: no such order"

    path = tmp_path / "sum.json"
    gpuprof.write_bench_json(rows, str(path))
    doc = json.loads(path.read_text())
    assert doc["schema"] == "gpuprof.bench"
    assert doc["benchmarks"][2]["axes"] == {"n": 1000, "order": "forward"}
    comparison = gpuprof.compare(str(path), str(path))
    assert [row.verdict for row in comparison.rows] == ["same", "not measured", "same", "not measured"]


def test_bench_over_a_list_of_points_and_a_setup_that_is_the_work():
    calls = []
    rows = gpuprof.bench(lambda scale, mode: calls.append((scale, mode)),
                         points=[{"scale": 0.5, "mode": "fwd"}, {"scale": 2.0, "mode": "step"}], name="t",
                         warmup=0, iters=2)
    assert [row.name for row in rows] == ["t[scale=0.5,mode=fwd]", "t[scale=2,mode=step]"]
    assert calls.count((0.5, "fwd")) == 1 + 1 + 2  # the setup call, then cold call and samples


def test_bench_axes_refuse_what_would_name_rows_wrongly():
    with pytest.raises(gpuprof.Error, match="a value of axis flag is a bool"):
        gpuprof.bench(lambda flag: None, axes={"flag": [True, False]})
    with pytest.raises(gpuprof.Error, match="axes= or points=, not both"):
        gpuprof.bench(lambda n: None, axes={"n": [1]}, points=[{"n": 1}])
    with pytest.raises(gpuprof.Error, match="the point \\[n=1\\] comes twice"):
        gpuprof.bench(lambda n: None, points=[{"n": 1}, {"n": 1}])
    with pytest.raises(gpuprof.Error, match="axis n needs a list of values"):
        gpuprof.bench(lambda n: None, axes={"n": "12"})
    with pytest.raises(gpuprof.Error, match="returned a value of type int, not a callable"):
        gpuprof.bench(lambda n: 3, axes={"n": [1]})
    with pytest.raises(ZeroDivisionError):
        gpuprof.bench(lambda n: 1 / 0, axes={"n": [1]})


def test_ab_interleaves_warmed_up_blocks_and_finds_a_slowdown():
    calls = []

    # Sleeps long beside a loaded machine's wake-up jitter (a millisecond or two).
    def base():
        calls.append("a")
        time.sleep(0.002)

    def new():
        calls.append("b")
        time.sleep(0.01)

    result = gpuprof.ab(base, new, rounds=4, iters=3, warmup=1, name="sleep")
    # Each side's first block: cold call, warm-up, samples (5 calls); later blocks: cold call and
    # samples (4). ABBA order: AB BA AB BA, so a round's second block runs beside the next one's first.
    assert runs(calls) == [("a", 5), ("b", 5 + 4), ("a", 4 + 4), ("b", 4 + 4), ("a", 4)]
    assert len(result.base_blocks) == len(result.new_blocks) == 4
    assert len(result.base_blocks[0].host_ms) == 3
    comparison = result.comparison
    assert comparison.rounds == 4
    (row,) = comparison.rows
    assert (row.key, row.verdict, row.test) == ("sleep", "slower", "paired t on rounds")
    assert 1 < row.ratio_low <= row.ratio <= row.ratio_high
    assert result.regressed() and "slower" in comparison.text()
    assert result.base_throttled_left_out == 0  # the host clock reads no GPU clocks
    with pytest.raises(gpuprof.Error, match="rounds must be >= 2"):
        gpuprof.ab(base, new, rounds=1)
