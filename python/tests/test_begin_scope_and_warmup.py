"""gpuprof.begin_scope(...).end() and gpuprof.profiler().set_warmup(n), on the host clock."""
import threading
import time

import pytest

import gpuprof


@pytest.fixture(autouse=True)
def fresh_profiler():
    gpuprof.set_gpu_timing(False)
    gpuprof.profiler().set_warmup(0)
    gpuprof.reset()
    yield
    gpuprof.profiler().set_warmup(0)
    gpuprof.set_gpu_timing(True)
    gpuprof.reset()


def test_begin_scope_nests_like_with_and_ends_once():
    for _ in range(2):
        step = gpuprof.begin_scope("step", work={"tokens": 4})
        with gpuprof.scope("forward"):
            loss = 1.0  # made inside the step, used after it
        step.end()
        assert not step.active
        step.end()  # twice: nothing
        assert loss == 1.0
    report = gpuprof.report()
    assert [(n.path, n.count) for n in report.nodes] == [("step", 2), ("step/forward", 2)]
    assert report.node("step").work.tokens == 4


def test_a_handle_ended_early_leaves_the_tree_after_the_scopes_inside_it():
    outer = gpuprof.begin_scope("outer")
    inner = gpuprof.begin_scope("inner")
    outer.end()
    with gpuprof.scope("leaf"):
        pass
    inner.end()
    with gpuprof.scope("next"):
        pass
    paths = [(n.path, n.count) for n in gpuprof.report().nodes]
    assert paths == [("outer", 1), ("outer/inner", 1), ("outer/inner/leaf", 1), ("next", 1)]


def test_a_handle_ends_on_its_own_thread():
    step = gpuprof.begin_scope("step")
    errors = []

    def end_elsewhere():
        try:
            step.end()
        except gpuprof.Error as error:
            errors.append(str(error))

    worker = threading.Thread(target=end_elsewhere)
    worker.start()
    worker.join()
    assert errors and "other than the one that began" in errors[0]
    assert step.active
    step.end()
    assert gpuprof.report().node("step").count == 1


def test_set_warmup_leaves_a_slow_first_step_out_and_keeps_its_time():
    gpuprof.profiler().set_warmup(1)
    assert gpuprof.profiler().warmup() == 1
    for i in range(4):
        with gpuprof.scope("step"):
            with gpuprof.scope("backward"):
                time.sleep(0.1 if i == 0 else 0.002)
    report = gpuprof.report()
    assert report.warmup_instances_left_out == 2
    assert report.warmup_root_instances == 1
    for path in ("step", "step/backward"):
        node = report.node(path)
        assert node.count == 3
        assert node.host_ms.max < 100
        assert node.cold_ms >= 100
    assert "left out of the statistics as warm-up" in report.table()
    with pytest.raises(gpuprof.Error):
        gpuprof.profiler().set_warmup(-1)
