"""pytest assertions on ULPs (the Python side of testing/ulpscope_gtest.hpp):

    def test_my_sum():
        ulpscope.testing.assert_within_ulps(my_sum, "sum", 1.0, dtype="fp16")

The function is measured on every adversarial distribution over a few sizes
and seeds (ulpscope.evaluate); the assertion fails when a cell is further than
`ulps` from the exact reference, failed, or (for a function declared
deterministic) gave different bits on repeated runs. The message names the
worst cell's distribution, size and seed, and a command that replays it.
"""

import shlex
import sys

from ._evaluate import DEFAULT_SEEDS, evaluate


def _where(c):
    s = f"{c['distribution']} n={c['n']} seed={c['seed']}"
    if c.get("rows") is not None:
        s += f" [{c['rows']} x {c['cols']}]"
    if c["axis"] != "all" and c["op"] not in ("rmsnorm", "layernorm"):
        s += f" axis {c['axis']}"
    return s


def _importable_name(fn):
    module, qualname = getattr(fn, "__module__", None), getattr(fn, "__qualname__", None)
    if not module or not qualname or "<" in qualname or module == "__main__":
        return None, None
    return module, qualname


def replay_command(fn, cell, kernel):
    """A shell command that re-runs this one cell of the evaluation and prints it."""
    module, qualname = _importable_name(fn)
    target = f"{module.split('.')[0]}.{qualname}" if module in ("torch", "numpy") else (
        f"{module}.{qualname}" if module else "FN")
    imports = "import ulpscope" + (f", {module}" if module else "")
    def q(text):  # names hold no quotes: double-quoted, so that the shell's single quotes stay simple
        return f'"{text}"'

    args = [f"op={q(cell['op'])}", f"dtypes=[{q(cell['dtype'])}]", f"dists=[{q(cell['distribution'])}]",
            f"sizes=[{cell['n']}]", f"seeds=[{cell['seed']}]", f"runs={kernel['runs']}", f"like={q(kernel['like'])}"]
    if cell["axis"] != "all" and cell["op"] not in ("rmsnorm", "layernorm"):
        args.append(f"axes=[{q(cell['axis'])}]")
    if cell.get("cols") is not None:
        args.append(f"row_cols={kernel['row_cols']}")
    if kernel.get("out_dtype"):
        args.append(f"out_dtype={q(kernel['out_dtype'])}")
    if cell["op"] in ("rms", "rmsnorm", "layernorm"):
        args.append(f"eps={kernel['eps']!r}")
    if kernel.get("device"):
        args.append(f"device={q(kernel['device'])}")
    code = f"{imports}; ev = ulpscope.evaluate({target}, {', '.join(args)}); print(ev.worst())"
    # The interpreter that runs the tests: another python3 on PATH may lack the package.
    command = f"{shlex.quote(sys.executable or 'python3')} -c {shlex.quote(code)}"
    if target == "FN":
        command += "   # FN: the function under test (a lambda or local function has no importable name)"
    return command


def verdict(evaluation, ulps, require_deterministic=True):
    """None when every cell of the evaluated function is within `ulps` (and deterministic where it
    promises to be), else the failure message."""
    kernel = evaluation.kernel
    cells = evaluation.kernel_cells()
    if not cells:
        why = " ".join(f"{n}: {r}." for n, r in evaluation.report["header"].get("unavailable", []))
        return f"{kernel['name']} was not measured on any input. {why}".strip()

    def badness(c):
        return float("inf") if c["status"] != "ok" or c["ulp_error"] is None else c["ulp_error"]

    over = [c for c in cells if badness(c) > ulps]
    nondeterministic = [c for c in cells if require_deterministic and c["distinct_results"] > 1]
    if not over and not nondeterministic:
        return None
    lines = [f"{kernel['name']} ({cells[0]['op']}, {', '.join(kernel['dtypes'])}):"]
    if over:
        worst = max(over, key=badness)
        failed = sum(1 for c in over if c["status"] != "ok")
        what = worst["status"] if worst["status"] != "ok" else (
            f"{worst['ulp_error']:.4g} ulps" if worst["ulp_error"] is not None else
            f"undefined ulp error ({worst.get('error_note', '')})")
        lines.append(f"  {len(over)} of {len(cells)} cells are beyond {ulps} ulps"
                     + (f" ({failed} failed)" if failed else ""))
        component = f"{worst['component']}: " if worst.get("component") else ""
        lines.append(f"  worst: {what} on {worst['dtype']} {_where(worst)}: {component}result {worst['result']}, "
                     f"correctly rounded {worst['reference']['rounded']} (exact {worst['reference']['exact']})")
        per_dist = {}
        for c in over:
            per_dist[c["distribution"]] = max(per_dist.get(c["distribution"], 0.0), badness(c))
        lines.append("  beyond, per distribution (worst ulps): " + ", ".join(
            f"{d} {'(failed or undefined)' if u == float('inf') else f'{u:.3g}'}" for d, u in per_dist.items()))
        lines.append("  replay: " + replay_command(kernel["fn"], worst, kernel))
    if nondeterministic:
        c = nondeterministic[0]
        lines.append(f"  not deterministic: {c['distinct_results']} distinct results over {c['runs']} runs on "
                     f"{c['dtype']} {_where(c)}")
        lines.append("  replay: " + replay_command(kernel["fn"], c, kernel))
    return "\n".join(lines)


def assert_within_ulps(fn, op, ulps, dtype="fp32", dists=None, sizes=(1, 33, 1023, 4096), *, seeds=DEFAULT_SEEDS,
                       runs=3, require_deterministic=True, **evaluate_options):
    """Raises AssertionError unless fn is within `ulps` of the correctly rounded result of `op` on
    every cell (dtype: one input format or a list of them). Returns the Evaluation."""
    dtypes = [dtype] if isinstance(dtype, str) else list(dtype)
    ev = evaluate(fn, op=op, dtypes=dtypes, dists=dists, sizes=sizes, seeds=seeds, runs=runs, **evaluate_options)
    message = verdict(ev, ulps, require_deterministic and ev.kernel.get("deterministic", True))
    if message is not None:
        raise AssertionError(message)
    return ev
