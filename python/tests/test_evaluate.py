"""ulpscope.evaluate on NumPy functions: the matrix's cells are those of the
inputs ulpscope.generate gives, scored against ulpscope.reference, and the
report is one accuracy_report reads."""

import json
import math
import os
import pathlib
import signal
import subprocess
import time

import numpy as np
import pytest

import ulpscope


def same_bits(a, b):
    """Equal as the report compares results: -0 differs from +0, every NaN is alike."""
    return (math.isnan(a) and math.isnan(b)) or (a == b and math.copysign(1, a) == math.copysign(1, b))

DISTS = ["normal", "ill_conditioned:1e8", "alternating", "with_nan", "near_max"]
SIZES = [1, 33, 1000]


def numpy_sum(x):
    with np.errstate(over="ignore", invalid="ignore"):
        return np.sum(x)


@pytest.fixture(scope="module")
def fp16_sum():
    return ulpscope.evaluate(numpy_sum, op="sum", dtypes=["fp16", "fp32"], dists=DISTS, sizes=SIZES, runs=2)


def test_one_cell_per_input_of_the_matrix(fp16_sum):
    cells = fp16_sum.kernel_cells()
    assert len(cells) == 2 * len(DISTS) * len(SIZES) * 2  # dtypes x dists x sizes x seeds
    assert {c["dtype"] for c in cells} == {"fp16", "fp32"}
    assert {c["shape"] for c in cells} == {"numpy_sum"}
    assert all(c["status"] == "ok" for c in cells), [c["status"] for c in cells if c["status"] != "ok"]
    assert fp16_sum.report["header"]["backend"] == "cpu"
    assert fp16_sum.report["schema"] == "ulpscope.report/1"


def test_cells_agree_with_generate_reference_and_the_function(fp16_sum):
    for c in fp16_sum.kernel_cells():
        x = ulpscope.generate(c["distribution"], c["n"], c["dtype"], seed=c["seed"])
        ref = ulpscope.reference(x, "sum")
        assert c["reference"]["rounded"] == ref.hex
        assert c["reference"]["exact"] == ref.exact
        got = float(numpy_sum(x))
        assert same_bits(float.fromhex(c["result"]), got)
        u = ulpscope.ulp_error(got, ref)
        assert (c["ulp_error"] is None) == (u is None)
        if u is not None:
            assert c["ulp_error"] == pytest.approx(u, rel=1e-12, abs=0)
        # NumPy's sum of one array is deterministic.
        assert c["distinct_results"] == 1


def test_row_wise_and_mean_var():
    ev = ulpscope.evaluate(lambda x: (x.mean(axis=-1, dtype=np.float64), x.var(axis=-1, dtype=np.float64)),
                           op="mean_var", dtypes=["fp32"], dists=["normal", "large_mean"], sizes=[64, 256],
                           axes=["inner"], row_cols=32, runs=1, permutations=1, name="numpy_mean_var")
    cells = ev.kernel_cells()
    assert cells and all(c["status"] == "ok" for c in cells)
    assert all(c["axis"] == "inner" and c["cols"] == 32 for c in cells)
    # float64 moments rounded once to fp32: within an ulp on these inputs.
    assert max(c["ulp_error"] for c in cells) <= 1.0


def test_rmsnorm_gets_gamma():
    def rmsnorm(x, gamma):
        d = x.astype(np.float64)
        return d / np.sqrt((d * d).mean(axis=-1, keepdims=True) + 1e-6) * gamma.astype(np.float64)

    ev = ulpscope.evaluate(rmsnorm, op="rmsnorm", dtypes=["bf16"], dists=["normal"], sizes=[128], row_cols=64,
                           runs=1, permutations=0)
    cells = ev.kernel_cells()
    assert len(cells) == 2 and all(c["status"] == "ok" for c in cells)
    assert max(c["ulp_error"] for c in cells) <= 0.5 + 1e-3


def test_a_raising_function_fails_its_cells_with_the_reason():
    def broken(x):
        raise RuntimeError("no luck today")

    ev = ulpscope.evaluate(broken, op="sum", dtypes=["fp32"], dists=["normal"], sizes=[8], runs=1)
    assert ev.kernel_cells()
    assert all("no luck today" in c["status"] for c in ev.kernel_cells())


def test_wrong_output_count_is_a_failed_cell():
    ev = ulpscope.evaluate(lambda x: np.zeros(3), op="sum", dtypes=["fp32"], dists=["normal"], sizes=[8], runs=1,
                           name="three_values")
    assert all("3 values, 1 expected" in c["status"] for c in ev.kernel_cells())


def test_built_in_kernels_beside_it():
    ev = ulpscope.evaluate(numpy_sum, op="sum", dtypes=["fp16"], dists=["normal"], sizes=[1000], runs=1,
                           accumulators=["exact"], shapes=["serial"])
    exact = [c for c in ev.cells if c["accumulator"] == "exact"]
    assert exact and all(c["correctly_rounded"] for c in exact)


@pytest.mark.skipif("ULPSCOPE_ACCURACY_REPORT" not in os.environ, reason="accuracy_report's path not given")
def test_the_gate_and_the_html_report_read_it(fp16_sum, tmp_path):
    path = tmp_path / "numpy_sum.json"
    fp16_sum.write_json(path)
    run = subprocess.run([os.environ["ULPSCOPE_ACCURACY_REPORT"], "--baseline", str(path), "--current", str(path),
                          "--gate"], capture_output=True, text=True)
    assert run.returncode == 0, run.stdout + run.stderr
    # A worse function against it: the gate finds the regression.
    def running_sum(x):
        with np.errstate(over="ignore", invalid="ignore"):
            return np.cumsum(x, dtype=x.dtype)[-1]

    worse = ulpscope.evaluate(running_sum, op="sum", dtypes=["fp16", "fp32"],
                              dists=DISTS, sizes=SIZES, runs=2, name="numpy_sum")
    worse_path = tmp_path / "worse.json"
    worse.write_json(worse_path)
    run = subprocess.run([os.environ["ULPSCOPE_ACCURACY_REPORT"], "--baseline", str(path), "--current",
                          str(worse_path), "--gate"], capture_output=True, text=True)
    assert run.returncode == 1, run.stdout + run.stderr
    assert "ulp error grew" in run.stdout
    html = tmp_path / "r.html"
    fp16_sum.write_html(html)
    text = html.read_text()
    assert "<html" in text.lower() and "numpy_sum" in text


def test_bad_arguments_say_why():
    with pytest.raises(ValueError, match="unknown input dtype"):
        ulpscope.evaluate(numpy_sum, dtypes=["fp64"])
    with pytest.raises(ValueError, match="sizes must be at least 1"):
        ulpscope.evaluate(numpy_sum, sizes=[0])
    with pytest.raises(ValueError, match="no_such"):
        ulpscope.evaluate(numpy_sum, dists=["no_such"])


def test_ctrl_c_stops_the_run():
    calls = []

    def interrupted_sum(x):
        calls.append(1)
        if len(calls) == 1:
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(0.5)  # the main thread sees the signal meanwhile
        return np.sum(x)

    with pytest.raises(KeyboardInterrupt):
        ulpscope.evaluate(interrupted_sum, op="sum", dtypes=["fp32"], sizes=[1, 33, 1023, 4096], runs=3)
    # The default distributions, 4 sizes and 2 seeds would call it over 800 times.
    assert len(calls) < 50


def test_the_report_matches_its_schema(fp16_sum):
    jsonschema = pytest.importorskip("jsonschema")
    schema = json.loads((pathlib.Path(__file__).resolve().parents[2] / "reports" / "report.schema.json").read_text())
    jsonschema.validate(fp16_sum.report, schema)
