"""ulpscope.testing.assert_within_ulps passes a correctly rounded sum and fails
an fp16 running sum, naming the worst cell and a replay command that works."""

import math
import os
import pathlib
import re
import subprocess

import numpy as np
import pytest

import ulpscope
import ulpscope.testing

SIZES = (1, 33, 1023, 4096)


def fsum_rounded(x):
    """The exact sum rounded once to fp16 (NaN and infinities as IEEE addition gives them)."""
    d = x.astype(np.float64)
    with np.errstate(over="ignore", invalid="ignore"):
        if not np.isfinite(d).all():
            return np.float16(d.sum())
        return np.float16(math.fsum(d))


def fp16_running_sum(x):
    """Left to right, every partial sum rounded to fp16 (overflowing to infinity, as fp16 does)."""
    with np.errstate(over="ignore", invalid="ignore"):
        return np.cumsum(x, dtype=np.float16)[-1]


def test_a_correctly_rounded_sum_passes():
    # math.fsum is the exact sum rounded to float64; rounding that to fp16 can
    # land on the other side of a midpoint (double rounding): within one ulp.
    ev = ulpscope.testing.assert_within_ulps(fsum_rounded, "sum", 1.0, dtype="fp16", sizes=SIZES)
    cells = ev.kernel_cells()
    assert len(cells) >= 19 * len(SIZES)
    assert max(c["ulp_error"] for c in cells) <= 1.0


def test_an_fp16_running_sum_fails_naming_the_worst_cell():
    with pytest.raises(AssertionError) as failure:
        ulpscope.testing.assert_within_ulps(fp16_running_sum, "sum", 1.0, dtype="fp16", sizes=SIZES)
    message = str(failure.value)
    assert "fp16_running_sum" in message
    worst = re.search(r"worst: (.+?) on fp16 (\S+) n=(\d+) seed=(\d+)", message)
    assert worst, message
    assert re.search(r"replay: \S*python3?\S* -c ", message), message
    # The named cell is that bad: its ulps, or an undefined error (an fp16 overflow to infinity).
    dist, n, seed = worst.group(2), int(worst.group(3)), int(worst.group(4))
    x = ulpscope.generate(dist, n, "fp16", seed=seed)
    u = ulpscope.ulp_error(fp16_running_sum(x), ulpscope.reference(x, "sum"))
    if worst.group(1).startswith("undefined"):
        assert u is None
    else:
        assert u == pytest.approx(float(worst.group(1).split()[0]), rel=1e-3) and u > 1.0
    # The replay command re-runs that cell and finds it again.
    command = message.split("replay: ", 1)[1].splitlines()[0]
    here = pathlib.Path(__file__).parent
    paths = [str(here)] + [os.path.abspath(p) for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(paths))
    out = subprocess.run(command, shell=True, cwd=here, env=env, capture_output=True, text=True, check=True).stdout
    assert f"'distribution': '{dist}'" in out and f"'n': {n}" in out and f"'seed': {seed}" in out


def test_a_lambda_gets_a_replay_with_a_placeholder():
    with pytest.raises(AssertionError, match="FN: the function under test"):
        ulpscope.testing.assert_within_ulps(lambda x: np.float16(0), "sum", 1.0, dtype="fp16", dists=["normal"],
                                            sizes=(33,))


def test_nondeterminism_fails_a_function_that_promised_determinism():
    rng = np.random.default_rng(0)

    def shuffled_fp16_sum(x):
        with np.errstate(over="ignore", invalid="ignore"):
            return np.cumsum(rng.permutation(x), dtype=np.float16)[-1]

    with pytest.raises(AssertionError, match="not deterministic"):
        ulpscope.testing.assert_within_ulps(shuffled_fp16_sum, "sum", 1e9, dtype="fp16", dists=["normal"],
                                            sizes=(4096,))
