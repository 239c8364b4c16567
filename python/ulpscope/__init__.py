"""ulpscope from Python: the correctly rounded references, the adversarial
inputs and the run matrix of the C++ suite (docs/python.md).

    import ulpscope
    x = ulpscope.generate("normal", 4096, "fp16", seed=1)
    ref = ulpscope.reference(x, "sum")                  # correctly rounded fp16, and the exact decimal
    ulpscope.ulp_error(np.sum(x), ref)                   # ULPs of NumPy's fp16 sum
    ev = ulpscope.evaluate(torch.sum, op="sum", dtypes=["fp16", "bf16"])
    ev.write_json("torch_sum.json")                      # accuracy_report --baseline/--current read it
"""

import numpy as np

from . import _ulpscope

# pybind11 learnt NumPy 2's array descriptors in 2.12: an older one reads the
# item size from the wrong place and makes arrays whose elements all repeat the
# first (or overruns them). Debian 12 pairs pybind11 2.10 with NumPy 1.24.
if int(np.__version__.split(".")[0]) >= 2 and tuple(_ulpscope._pybind11_version) < (2, 12):
    raise ImportError(f"ulpscope was built with pybind11 {'.'.join(map(str, _ulpscope._pybind11_version))}, which "
                      f"cannot read NumPy {np.__version__}'s arrays: rebuild it with pybind11 >= 2.12 "
                      "(pip install pybind11; cmake -Dpybind11_DIR=$(python3 -m pybind11 --cmakedir)) or use NumPy 1.x")
from ._arrays import INPUT_DTYPES, OUTPUT_DTYPES, from_bits, to_bits
from ._evaluate import Evaluation, evaluate
from ._ulpscope import Reference

__version__ = _ulpscope.__version__

OPS = ("sum", "mean", "dot", "sumsq", "norm2", "rms", "mean_var", "max", "min", "amax", "logsumexp", "rmsnorm",
       "layernorm")
ROW_OPS = ("rmsnorm", "layernorm")  # they normalise each row (the last dimension) and give one value per element

__all__ = ["reference", "generate", "ulp_error", "score", "evaluate", "Evaluation", "Reference", "ReferenceArray",
           "distributions", "OPS", "INPUT_DTYPES", "OUTPUT_DTYPES", "to_bits", "from_bits", "testing", "exact"]


class ReferenceArray:
    """References of several outputs (rows of a row-wise reduction, the elements of a normalised
    row, mean and variance), shaped like the outputs; each element is a Reference."""

    def __init__(self, refs, shape):
        self._refs = list(refs)
        self.shape = tuple(shape)

    @property
    def rounded(self):
        """The correctly rounded values, as a float64 array of the outputs' shape."""
        return np.array([r.rounded for r in self._refs], dtype=np.float64).reshape(self.shape)

    @property
    def exact(self):
        """The exact values as decimal strings, an object array of the outputs' shape."""
        out = np.empty(len(self._refs), dtype=object)
        out[:] = [r.exact for r in self._refs]
        return out.reshape(self.shape)

    @property
    def out_dtype(self):
        return self._refs[0].out_dtype if self._refs else None

    def __len__(self):
        return self.shape[0] if self.shape else 1

    def __getitem__(self, index):
        flat = np.arange(len(self._refs)).reshape(self.shape)[index]
        if np.ndim(flat) == 0:
            return self._refs[int(flat)]
        return ReferenceArray([self._refs[int(i)] for i in flat.reshape(-1)], flat.shape)

    def __iter__(self):
        for i in range(len(self)):
            yield self[i]

    def flat(self):
        return list(self._refs)

    def ulp_error(self, values):
        """Element by element, as a float64 array (NaN where the error is undefined)."""
        v = _values(values, len(self._refs))
        return np.array([np.nan if (u := r.ulp_error(float(y))) is None else u for r, y in zip(self._refs, v)],
                        dtype=np.float64).reshape(self.shape)

    def correctly_rounded(self, values):
        v = _values(values, len(self._refs))
        return np.array([r.correctly_rounded(float(y)) for r, y in zip(self._refs, v)]).reshape(self.shape)

    def __repr__(self):
        return f"ReferenceArray(shape={self.shape}, out_dtype={self.out_dtype}, rounded={self.rounded!r})"


def _values(values, count):
    from ._arrays import to_float64

    v = to_float64(values)
    if v.size != count:
        raise ValueError(f"{v.size} values for {count} references")
    return v


def _float_array(a):
    """gamma / beta: any numbers, taken at their exact float64 values (their own format when they have one)."""
    if a is None:
        return None, "fp32"
    try:
        return to_bits(a)
    except ValueError:
        from ._arrays import to_float64

        v = to_float64(a)
        # float64 weights: exact in fp32 or refused, as an input format must hold them.
        return to_bits(v, "fp32")


def reference(x, op, out_dtype=None, eps=1e-6, *, y=None, gamma=None, beta=None, axis=None, dtype=None,
              saturation="satfinite"):
    """The correctly rounded value of `op` on x and its exact value (reference/op_reference.hpp).

    x: NumPy array, torch tensor (any device: copied to the host), or anything with DLPack; bf16 and
    fp8 as uint16 / uint8 bit patterns with dtype= named (or as floats the format holds exactly).
    out_dtype: the output format (default: the input's, fp32 for fp8 inputs; "fp64" allowed).
    axis: None reduces the whole tensor; -1 (the last dimension) reduces each row; 0 on a 2-D x each
    column. rmsnorm and layernorm always normalise the rows of the last dimension (gamma, beta: one
    value per column, taken at their exact values; None: 1 and 0).
    Returns a Reference (one output), or a ReferenceArray shaped like the outputs: [..., 2] for
    mean_var (mean, variance), x's shape for the norms, x.shape[:-1] for axis=-1.
    """
    if op not in OPS:
        raise ValueError(f"unknown op {op!r} (one of {', '.join(OPS)})")
    bits, fmt = to_bits(x, dtype)
    out = out_dtype or _ulpscope._default_out_dtype(fmt)
    if out not in OUTPUT_DTYPES:
        raise ValueError(f"unknown out_dtype {out!r} (one of {', '.join(OUTPUT_DTYPES)})")
    shape = bits.shape
    ybits, yfmt = (None, fmt)
    if op == "dot":
        if y is None:
            raise ValueError("dot needs y")
        ybits, yfmt = to_bits(y, dtype)
        if yfmt != fmt or ybits.shape != shape:
            raise ValueError(f"dot: y ({yfmt}, shape {ybits.shape}) must match x ({fmt}, shape {shape})")
    if op in ROW_OPS:
        cols = shape[-1] if len(shape) else 1
        rows = int(np.prod(shape[:-1])) if len(shape) > 1 else 1
        ax, out_shape = "inner", shape
    elif axis is None:
        rows, cols, ax = 1, int(bits.size), "all"
        out_shape = (2,) if op == "mean_var" else ()
    elif axis in (-1, len(shape) - 1) and len(shape) >= 1:
        cols = shape[-1]
        rows = int(np.prod(shape[:-1])) if len(shape) > 1 else 1
        ax = "inner"
        out_shape = tuple(shape[:-1]) + ((2,) if op == "mean_var" else ())
    elif axis == 0 and len(shape) == 2:
        rows, cols = shape
        ax = "outer"
        out_shape = (cols,) + ((2,) if op == "mean_var" else ())
    else:
        raise ValueError(f"axis={axis!r}: None (whole tensor), -1 (each row) or, on 2-D x, 0 (each column)")
    gbits, gfmt = _float_array(gamma)
    bbits, bfmt = _float_array(beta)
    refs = _ulpscope._references(bits.reshape(-1), fmt, op, out, saturation, float(eps), ax, rows, cols,
                                 None if ybits is None else ybits.reshape(-1), yfmt,
                                 None if gbits is None else gbits.reshape(-1), gfmt,
                                 None if bbits is None else bbits.reshape(-1), bfmt)
    if out_shape == ():
        return refs[0]
    return ReferenceArray(refs, out_shape)


def ulp_error(value, reference, out_dtype=None):
    """|value - exact| in ULPs of the output format (docs/spec.md, "Metrics"), against a Reference
    (a float, or None where undefined), a ReferenceArray (a float64 array, NaN where undefined), or a
    plain number taken as exact (then out_dtype is needed)."""
    from ._arrays import to_float64

    if isinstance(reference, (Reference, ReferenceArray)):
        if out_dtype is not None and out_dtype != reference.out_dtype:
            raise ValueError(f"the reference was rounded to {reference.out_dtype}, not {out_dtype}")
        if isinstance(reference, ReferenceArray):
            return reference.ulp_error(value)
        return reference.ulp_error(float(_values(value, 1)[0]))
    if out_dtype is None:
        raise ValueError("a plain number as the reference needs out_dtype")
    v, r = to_float64(value), to_float64(reference)
    if v.size != r.size:
        raise ValueError(f"{v.size} values for {r.size} references")
    errors = [_ulpscope._ulp_error_of_double(float(a), float(b), out_dtype, "satfinite")[0] for a, b in zip(v, r)]
    if r.size == 1 and np.ndim(reference) == 0:
        return errors[0]
    return np.array([np.nan if e is None else e for e in errors], dtype=np.float64)


def score(value, reference):
    """The verdict on value(s) against a Reference or ReferenceArray: {"ulp_error": the worst (None
    when undefined somewhere), "worst_index", "correctly_rounded": all of them, "note"}."""
    refs = reference.flat() if isinstance(reference, ReferenceArray) else [reference]
    v = _values(value, len(refs))
    worst, worst_i, note, all_rounded = -1.0, None, "", True
    for i, (r, y) in enumerate(zip(refs, v)):
        s = r.score(float(y))
        all_rounded = all_rounded and s["correctly_rounded"]
        u = np.inf if s["ulp_error"] is None else s["ulp_error"]
        if u > worst:
            worst, worst_i, note = u, i, s["note"]
    if isinstance(reference, ReferenceArray) and worst_i is not None:
        worst_i = tuple(int(k) for k in np.unravel_index(worst_i, reference.shape))
    return {"ulp_error": None if worst == np.inf else max(worst, 0.0), "worst_index": worst_i,
            "correctly_rounded": all_rounded, "note": note}


def generate(distribution, n, dtype="fp32", seed=1, *, with_y=False, like="numpy"):
    """The adversarial input `distribution` ("normal", "ill_conditioned:1e16", ...; see
    distributions()) of n values of format dtype, the same bits as the C++ generators
    (accuracy/distribution.hpp) give for (distribution, dtype, n, seed). like="numpy": float32,
    float16, or bf16 / fp8 as uint16 / uint8 bit patterns; "float": every format widened exactly to
    float32; "torch": a tensor of the format's torch dtype. with_y: also the second vector of a dot
    product, returned as (x, y)."""
    g = _ulpscope._generate(distribution, int(n), dtype, int(seed), bool(with_y))
    x = from_bits(g["x"], dtype, like)
    if with_y:
        return x, from_bits(g["y"], dtype, like)
    return x


def distributions():
    """Every distribution's name (docs/spec.md, "Adversarial distributions")."""
    return list(_ulpscope._distributions())


from . import exact, testing  # noqa: E402  (after the names they use)
