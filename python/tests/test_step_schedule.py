"""gpuprof.profiler().step() and gpuprof.schedule: torch.profiler's steps and actions."""
import pytest

import gpuprof

A = gpuprof.StepAction


@pytest.fixture(autouse=True)
def fresh_profiler():
    gpuprof.set_gpu_timing(False)
    gpuprof.reset()
    yield
    gpuprof.profiler().clear_schedule()
    gpuprof.set_gpu_timing(True)
    gpuprof.reset()


def torch_actions(wait, warmup, active, repeat, skip_first, steps):
    """torch.profiler.schedule's documented actions, written out: the reference."""
    out = []
    for step in range(steps):
        if step < skip_first:
            out.append(A.NONE)
            continue
        s = step - skip_first
        cycle = wait + warmup + active
        if repeat > 0 and s // cycle >= repeat:
            out.append(A.NONE)
        elif s % cycle < wait:
            out.append(A.NONE)
        elif s % cycle < wait + warmup:
            out.append(A.WARMUP)
        else:
            out.append(A.RECORD if s % cycle < cycle - 1 else A.RECORD_AND_SAVE)
    return out


@pytest.mark.parametrize("args", [(1, 1, 2, 2, 1), (0, 0, 1, 0, 0), (2, 0, 3, 0, 4), (3, 2, 1, 1, 0)])
def test_actions_follow_torch_profiler_schedule(args):
    schedule = gpuprof.schedule(wait=args[0], warmup=args[1], active=args[2], repeat=args[3], skip_first=args[4])
    assert [schedule(step) for step in range(40)] == torch_actions(*args, 40)


def test_actions_equal_torch_where_torch_is_installed():
    profiler = pytest.importorskip("torch.profiler")
    ours = gpuprof.schedule(wait=1, warmup=1, active=2, repeat=2, skip_first=1)
    theirs = profiler.schedule(wait=1, warmup=1, active=2, repeat=2, skip_first=1)
    assert [ours(step).name for step in range(20)] == [theirs(step).name for step in range(20)]


def test_a_bad_schedule_is_refused():
    with pytest.raises(gpuprof.Error, match="active must be at least 1"):
        gpuprof.schedule(wait=1, warmup=1, active=0)
    with pytest.raises(gpuprof.Error):
        gpuprof.schedule(wait=-1, warmup=0, active=1)
    with pytest.raises(TypeError):
        gpuprof.schedule(1, 1, 1)  # keywords only, as torch's


def run_steps(n):
    profiler = gpuprof.profiler()
    for _ in range(n):
        with gpuprof.scope("step"):
            with gpuprof.scope("inner"):
                pass
        profiler.step()


def step_count(report):
    node = report.node("step") if any(n.path == "step" for n in report.nodes) else None
    return node.count if node else 0


def test_only_active_steps_are_kept_and_the_rest_is_counted():
    profiler = gpuprof.profiler()
    profiler.set_schedule(gpuprof.schedule(wait=2, warmup=1, active=2, repeat=2, skip_first=1))
    assert profiler.step_num == 0 and profiler.step_action == A.NONE
    run_steps(14)  # active: steps 4, 5, 9, 10
    assert profiler.step_num == 14
    report = gpuprof.report()
    assert step_count(report) == 4
    assert report.node("step/inner").count == 4
    assert len(report.instances) == 8
    assert profiler.instances_outside_active_steps == 20
    assert "20 scope instance(s) began in steps outside" in report.timing_note
    run_steps(6)  # past the last cycle
    assert step_count(gpuprof.report()) == 4


def test_reset_keeps_the_step_count_and_a_report_per_cycle():
    profiler = gpuprof.profiler()
    profiler.set_schedule(gpuprof.schedule(wait=1, warmup=1, active=2, repeat=3))
    per_cycle = []
    for _ in range(20):
        save = profiler.step_action == A.RECORD_AND_SAVE
        run_steps(1)
        if save:
            per_cycle.append(step_count(gpuprof.report()))
            gpuprof.reset()
    assert per_cycle == [2, 2, 2]
    assert profiler.step_num == 20
    profiler.set_schedule(gpuprof.schedule(wait=0, warmup=0, active=1))
    assert profiler.step_num == 0
    assert repr(profiler.schedule) == "gpuprof.schedule(wait=0, warmup=0, active=1, repeat=0, skip_first=0)"
    profiler.clear_schedule()
    assert profiler.schedule is None and profiler.step_action == A.RECORD


def test_without_a_schedule_step_only_counts():
    profiler = gpuprof.profiler()
    first = profiler.step_num
    run_steps(3)
    assert profiler.step_num == first + 3
    assert step_count(gpuprof.report()) == 3
    assert profiler.instances_outside_active_steps == 0
