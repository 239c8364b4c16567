"""ulpscope.reference: correctly rounded against exact rational arithmetic
(fractions.Fraction), and the same references as accuracy_report's."""

import json
import math
import os
import subprocess
from fractions import Fraction

import numpy as np
import pytest

import ulpscope

FORMATS = {"fp32": np.float32, "fp16": np.float16, "fp64": np.float64}


def rn(exact, fmt):
    """Round a Fraction to the nearest value of a NumPy float type, ties to even, by exact comparison;
    beyond the largest finite value by half its ulp or more, an infinity (IEEE 754, 7.4)."""
    t = FORMATS[fmt]
    info = np.finfo(t)
    largest = Fraction(float(info.max))
    if abs(exact) >= largest + Fraction(float(info.max - np.nextafter(info.max, t(0)))) / 2:
        return t(np.inf) if exact > 0 else t(-np.inf)
    c = t(float(exact))
    candidates = {c, np.nextafter(c, t(np.inf)), np.nextafter(c, t(-np.inf))}
    finite = [v for v in candidates if np.isfinite(v)]

    def key(v):
        even = int(np.array(v).view({2: np.uint16, 4: np.uint32, 8: np.uint64}[np.dtype(t).itemsize])) % 2
        return (abs(Fraction(float(v)) - exact), even)

    return min(finite, key=key)


def assert_40_digits(decimal, exact):
    """docs/spec.md: the decimal is the exact value rounded to 40 significant digits (or all of them)."""
    if exact == 0:
        assert Fraction(decimal) == 0
        return
    assert abs(Fraction(decimal) - exact) <= abs(exact) * Fraction(1, 10 ** 39) / 2


def exact_sum(x):
    return sum((Fraction(float(v)) for v in x), Fraction(0))


@pytest.mark.parametrize("dtype", ["fp32", "fp16"])
@pytest.mark.parametrize("dist", ["normal", "ill_conditioned:1e16", "log_uniform", "alternating", "exact_cancellation"])
def test_sum_is_the_exact_sum_correctly_rounded(dtype, dist):
    x = ulpscope.generate(dist, 1000, dtype, seed=3)
    exact = exact_sum(x)
    ref = ulpscope.reference(x, "sum")
    assert ref.exact_is_exact
    assert ref.exact_fraction == exact
    assert_40_digits(ref.exact, exact)
    assert ref.out_dtype == dtype
    assert ref.rounded == float(rn(exact, dtype))
    # fp64 output: still the exact sum, rounded once.
    assert ulpscope.reference(x, "sum", out_dtype="fp64").rounded == float(exact)


def test_bf16_as_bit_patterns_or_exact_floats():
    bits = ulpscope.generate("normal", 300, "bf16", seed=9)
    values = (bits.astype(np.uint32) << 16).view(np.float32)
    exact = exact_sum(values)
    ref = ulpscope.reference(bits, "sum", dtype="bf16", out_dtype="fp32")
    assert ref.exact_fraction == exact
    assert ref.rounded == float(rn(exact, "fp32"))
    # The same values as floats that bf16 holds exactly, with the format named.
    assert ulpscope.reference(values, "sum", dtype="bf16", out_dtype="fp32").exact == ref.exact
    with pytest.raises(ValueError, match="not a bf16 value"):
        ulpscope.reference(np.array([1.0, 1.0 + 2.0 ** -20], dtype=np.float32), "sum", dtype="bf16")


def test_mean_dot_sumsq_against_fractions():
    x, y = ulpscope.generate("lognormal", 257, "fp32", seed=4, with_y=True)
    fx = [Fraction(float(v)) for v in x]
    fy = [Fraction(float(v)) for v in y]
    assert ulpscope.reference(x, "mean").rounded == float(rn(sum(fx) / len(fx), "fp32"))
    dot = sum(a * b for a, b in zip(fx, fy))
    assert ulpscope.reference(x, "dot", y=y).rounded == float(rn(dot, "fp32"))
    assert ulpscope.reference(x, "dot", y=y).exact_fraction == dot
    sumsq = sum(a * a for a in fx)
    assert ulpscope.reference(x, "sumsq").rounded == float(rn(sumsq, "fp32"))
    mean, var = ulpscope.reference(x, "mean_var")
    n = len(fx)
    assert var.rounded == float(rn((n * sumsq - sum(fx) ** 2) / n ** 2, "fp32"))
    assert mean.rounded == float(rn(sum(fx) / n, "fp32"))


def test_nonlinear_ops_are_within_half_an_ulp_of_a_double_evaluation():
    x = ulpscope.generate("normal", 512, "fp32", seed=11)
    d = x.astype(np.float64)
    q = math.fsum(v * v for v in d)
    cases = {"norm2": math.sqrt(q), "rms": math.sqrt(q / d.size + 1e-6), "max": d.max(), "min": d.min(),
             "amax": np.abs(d).max(), "logsumexp": math.log(math.fsum(math.exp(v) for v in d))}
    for op, value in cases.items():
        ref = ulpscope.reference(x, op)
        # The double evaluation is within 2^-50 relative of the exact value, far
        # below half an fp32 ulp (2^-24): the fp32 rounding of both agrees unless
        # the exact value is that close to a midpoint.
        assert ulpscope.ulp_error(np.float32(value), ref) <= 0.5 + 1e-6, op
        assert len(ref.exact) >= 40 or ref.exact_is_exact, op


def test_every_op_of_the_spec_has_a_reference():
    x, y = ulpscope.generate("normal", 64, "fp16", seed=1, with_y=True)
    for op in ulpscope.OPS:
        ref = ulpscope.reference(x, op, y=y if op == "dot" else None)
        if op in ("rmsnorm", "layernorm"):
            assert ref.shape == (64,)
        elif op == "mean_var":
            assert ref.shape == (2,)
        else:
            assert isinstance(ref, ulpscope.Reference)
            assert ref.out_dtype == "fp16"


def test_row_wise_references_are_each_rows_reference():
    x = ulpscope.generate("normal", 6 * 50, "fp32", seed=2).reshape(6, 50)
    rows = ulpscope.reference(x, "sum", axis=-1)
    assert rows.shape == (6,)
    for i in range(6):
        assert rows[i].exact == ulpscope.reference(x[i], "sum").exact
    cols = ulpscope.reference(x, "sumsq", axis=0)
    assert cols.shape == (50,)
    assert cols[7].exact == ulpscope.reference(np.ascontiguousarray(x[:, 7]), "sumsq").exact
    mv = ulpscope.reference(x, "mean_var", axis=-1)
    assert mv.shape == (6, 2)
    gamma = ulpscope.generate("uniform", 50, "fp32", seed=3)
    norm = ulpscope.reference(x, "rmsnorm", gamma=gamma)
    assert norm.shape == (6, 50)
    # rmsnorm of a row: x_i * gamma_i / sqrt(mean(x^2) + eps), within half an ulp of a double evaluation.
    d = x.astype(np.float64)
    approx = d * gamma.astype(np.float64) / np.sqrt((d * d).mean(axis=1, keepdims=True) + 1e-6)
    assert np.nanmax(norm.ulp_error(approx.astype(np.float32))) <= 0.5 + 1e-6


def test_ulp_error_and_score():
    ref = ulpscope.reference(np.array([1, 2 ** -24, 2 ** -24], dtype=np.float32), "sum")
    # 1 + 2^-23 exactly: representable, so the correctly rounded value is exact.
    assert ref.rounded == 1 + 2 ** -23
    assert ulpscope.ulp_error(np.float32(1), ref) == 1.0
    assert ref.correctly_rounded(1 + 2 ** -23) and not ref.correctly_rounded(1.0)
    s = ulpscope.score(np.float32(1), ref)
    assert s["ulp_error"] == 1.0 and not s["correctly_rounded"]
    assert ulpscope.ulp_error(1.0, 1 + 2 ** -23, out_dtype="fp32") == 1.0
    assert ulpscope.ulp_error(float("inf"), ref) is None


def test_special_values():
    assert math.isnan(ulpscope.reference(np.array([1, np.inf, -np.inf], dtype=np.float32), "sum").rounded)
    neg = ulpscope.reference(np.array([-0.0, -0.0], dtype=np.float32), "sum")
    assert neg.rounded == 0 and math.copysign(1, neg.rounded) < 0
    assert ulpscope.reference(np.array([60000, 60000], dtype=np.float16), "sum").rounded == math.inf


@pytest.mark.parametrize("bad,message", [
    (lambda: ulpscope.reference(np.ones(4), "sum"), "float64 is an output format"),
    (lambda: ulpscope.reference(np.ones(4, np.float32), "median"), "unknown op"),
    (lambda: ulpscope.reference(np.ones(4, np.int32), "sum"), "name it with dtype"),
    (lambda: ulpscope.reference(np.ones(4, np.float32), "dot"), "dot needs y"),
    (lambda: ulpscope.reference(np.ones(4, np.float32), "sum", out_dtype="fp7"), "unknown out_dtype"),
    (lambda: ulpscope.reference(np.ones((2, 2, 2), np.float32), "sum", axis=1), "axis=1"),
])
def test_bad_arguments_say_why(bad, message):
    with pytest.raises(ValueError, match=message):
        bad()


@pytest.mark.skipif("ULPSCOPE_ACCURACY_REPORT" not in os.environ, reason="accuracy_report's path not given")
@pytest.mark.parametrize("op", ["sum", "norm2", "logsumexp", "mean_var"])
def test_same_references_as_accuracy_report(tmp_path, op):
    x = ulpscope.generate("cauchy", 777, "fp16", seed=12)
    np.save(tmp_path / "x.npy", x)
    out = subprocess.run([os.environ["ULPSCOPE_ACCURACY_REPORT"], "--input", str(tmp_path / "x.npy"), "--op", op,
                          "--shape", "serial", "--backend", "cpu", "--format", "json", "-q"], check=True, capture_output=True, text=True).stdout
    cells = json.loads(out)["cells"]
    assert cells
    ref = ulpscope.reference(x, op)
    refs = list(ref) if op == "mean_var" else [ref]
    for cell in cells:
        r = refs[["mean", "variance"].index(cell["component"])] if op == "mean_var" else refs[0]
        assert cell["reference"]["rounded"] == r.hex
        assert cell["reference"]["exact"] == r.exact
