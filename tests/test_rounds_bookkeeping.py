"""The interleaved timing's bookkeeping (runner/rounds.py) kept as calls come (``Tally``): the
same decisions as charging every side all its calls again after each block, which grew with the
square of ``--repeat``. Synthetic call times, hand-built and seeded-random, stalls among them."""

from __future__ import annotations

import random
import statistics
from collections.abc import Callable

import pytest

from inductor_bench.runner.rounds import MIN_ROUNDS, Pace, Plan, Tally, charged_s, interleave

BLOCK_S = 0.05


def interleave_resorting(
    calls: list[Callable[[], float]], sizes: list[int], plan: Plan, max_rounds: int | None = None,
    resize: Callable[[float], int] | None = None,
) -> list[list[list[float]]]:
    """The loop as it was: after each block, the side charged ``charged_s`` of all its calls so
    far and resized by ``resize`` of their ``min``."""
    blocks: list[list[list[float]]] = [[] for _ in calls]
    times: list[list[float]] = [[] for _ in calls]
    steps, spent, ran = [0] * len(calls), [0.0] * len(calls), [0] * len(calls)
    r = 0
    while not all(plan.side_done(steps[i], spent[i], ran[i]) for i in range(len(calls))):
        if max_rounds is not None and r >= max_rounds:
            break
        order = range(len(calls)) if r % 2 == 0 else reversed(range(len(calls)))
        for i in order:
            if plan.side_done(steps[i], spent[i], ran[i]):
                blocks[i].append([])
                continue
            ran[i] += 1
            n = min(sizes[i], plan.left(steps[i]))
            blk = [calls[i]() for _ in range(n)]
            blocks[i].append(blk)
            steps[i] += n
            times[i] += blk
            spent[i] = charged_s(times[i])
            if resize is not None and times[i]:
                sizes[i] = resize(min(times[i]))
        r += 1
    return blocks


def replay(times_ms: list[float]) -> Callable[[], float]:
    """A side whose n-th call takes ``times_ms[n % len]``."""
    made = [0]

    def one() -> float:
        made[0] += 1
        return times_ms[(made[0] - 1) % len(times_ms)]

    return one


def disturbed(rng: random.Random, n: int, ms: float, stall_share: float) -> list[float]:
    """``n`` calls near ``ms`` (log-normal, sigma 0.1), a share of them stalled 20-200x."""
    return [ms * rng.lognormvariate(0, 0.1) * (rng.uniform(20, 200) if rng.random() < stall_share else 1)
            for _ in range(n)]


def cases() -> list[tuple[str, list[list[float]], Plan]]:
    rng = random.Random(7)
    return [
        ("every call of one side stalled", [[141.0, 139.5, 150.2], [1.05, 1.06, 1.04]],
         Plan(budget_s=1.0, max_steps=200, min_steps=10, min_rounds=MIN_ROUNDS)),
        ("a stalled start, then fast", [[176.0] * 3 + [2.0] * 50, [2.0]],
         Plan(budget_s=1.0, max_steps=200, min_steps=10, min_rounds=MIN_ROUNDS)),
        ("ties: equal times, even and odd counts", [[4.0, 4.0, 150.0, 4.0, 4.0], [4.0], [5.0, 3.0]],
         Plan(budget_s=0.3, max_steps=1000, min_steps=1, min_rounds=MIN_ROUNDS)),
        ("a quarter of the calls stalled", [disturbed(rng, 997, 2.0, 0.25), disturbed(rng, 1009, 0.9, 0.05)],
         Plan(budget_s=1.0, max_steps=200, min_steps=10, min_rounds=MIN_ROUNDS)),
        ("most calls stalled", [disturbed(rng, 991, 3.0, 0.6), disturbed(rng, 983, 3.0, 0.1)],
         Plan(budget_s=2.0, max_steps=400, min_steps=10, min_rounds=MIN_ROUNDS)),
        ("exactly --repeat 3000", [disturbed(rng, 1013, 0.5, 0.1), disturbed(rng, 1019, 0.7, 0.3)],
         Plan(budget_s=None, max_steps=3000, min_steps=1, exact=True, min_rounds=MIN_ROUNDS)),
    ]


@pytest.mark.parametrize("name, times_ms, plan", cases(), ids=[c[0] for c in cases()])
@pytest.mark.parametrize("resized", [False, True])
def test_the_kept_tally_decides_as_resorting_all_calls_did(name, times_ms, plan, resized):
    """The same call times through both loops: the same blocks (so the same block sizes, the
    same rounds each side ran, the same stops) and the same last sizes."""
    new_sizes, old_sizes = [1] * len(times_ms), [1] * len(times_ms)
    paces = [Pace(BLOCK_S, plan.max_steps) for _ in times_ms] if resized else None
    new = interleave([replay(t) for t in times_ms], new_sizes, plan, paces=paces)
    resize = (lambda ms: Pace(BLOCK_S, plan.max_steps, ms).block_size()) if resized else None
    old = interleave_resorting([replay(t) for t in times_ms], old_sizes, plan, resize=resize)
    assert [[len(b) for b in side] for side in new] == [[len(b) for b in side] for side in old]
    assert new == old and new_sizes == old_sizes
    assert all(len(side) >= MIN_ROUNDS for side in new)


def test_the_tally_s_median_and_charge_are_statistics_median_s_to_the_bit():
    rng = random.Random(11)
    calls = [rng.choice([1.0, 2.5, 3.0]) for _ in range(50)] + disturbed(rng, 500, 1.7, 0.3)
    tally = Tally()
    assert tally.charged_s() == 0.0
    for n, ms in enumerate(calls, start=1):
        tally.add(ms)
        assert tally.median_ms() == statistics.median(calls[:n])
        assert tally.charged_s() == charged_s(calls[:n])


def test_a_block_charges_its_side_without_going_over_all_its_calls_again(monkeypatch):
    """The loop keeps its ``Tally``: ``charged_s`` of all a side's calls, a sort of them each
    time, is for the stop reasons read once at the end."""
    import inductor_bench.runner.rounds as rounds

    def resorted(times_ms):
        raise AssertionError(f"charged all {len(times_ms)} calls again")

    monkeypatch.setattr(rounds, "charged_s", resorted)
    plan = Plan(budget_s=0.05, max_steps=1000, min_steps=1, min_rounds=MIN_ROUNDS)
    blocks = interleave([replay([2.0, 90.0, 2.1]), replay([1.0])], [5, 5], plan)
    assert [len(side) for side in blocks] == [MIN_ROUNDS, MIN_ROUNDS]
