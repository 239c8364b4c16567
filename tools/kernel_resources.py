#!/usr/bin/env python3
"""Registers, stack and spills of each kernel in a CUDA unit, from ptxas -v,
and how many 256-thread blocks of it an SM holds; with --base, the kernels
whose resources changed since a revision. No GPU needed, only nvcc.

The compile command is the build's own (compile_commands.json), so the flags
are the ones that ship. A kernel that gains registers can lose resident blocks
(each default launch is sized for them: default_blocks_per_sm in
kernels/tree/tree_tuning.hpp), and a spill puts local memory in a loop: both have cost
whole fractions of cub Sum fp32 on the H100 (the exact sum's lazy carry, 64 ->
98 registers; logsumexp's early return, 12 bytes of spills).

  tools/kernel_resources.py kernels/tree/tree_fp32.cu
  tools/kernel_resources.py --base HEAD~3 --filter 'block_partials<.*Exact' kernels/tree/tree_fp16.cu
"""
import argparse
import json
import os
import re
import shlex
import subprocess
import sys
import tempfile

REGISTERS_PER_SM = 65536  # sm_90 (CUDA C++ Programming Guide, technical specifications)
MAX_THREADS_PER_SM = 2048
ALLOCATION_UNIT = 8  # registers per thread are allocated in steps of 8 (256 per warp)


def blocks_per_sm(registers, threads=256):
    """Resident blocks of `threads` by registers alone (shared memory aside)."""
    per_thread = -(-max(registers, 1) // ALLOCATION_UNIT) * ALLOCATION_UNIT
    return min(REGISTERS_PER_SM // (per_thread * threads), MAX_THREADS_PER_SM // threads)


def parse_ptxas(text):
    """{mangled name: {registers, stack, spill_stores, spill_loads}} from ptxas -v."""
    kernels, current = {}, None
    for line in text.splitlines():
        m = re.search(r"Compiling entry function '(\S+)'", line) or re.search(r"Function properties for (\S+)", line)
        if m:
            current = m.group(1)
            continue
        if current is None:
            continue
        m = re.search(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads", line)
        if m:
            k = kernels.setdefault(current, {})
            k["stack"], k["spill_stores"], k["spill_loads"] = map(int, m.groups())
        m = re.search(r"Used (\d+) registers", line)
        if m:
            kernels.setdefault(current, {})["registers"] = int(m.group(1))
    # Device functions behind a call (Function properties without "Used")
    # have no registers of their own; keep the kernels.
    return {name: k for name, k in kernels.items() if "registers" in k}


def demangle(names):
    out = subprocess.run(["c++filt"], input="\n".join(names), capture_output=True, text=True, check=True).stdout
    short = [re.sub(r"ulpscope::(tree::)?|\(anonymous namespace\)::", "", s) for s in out.splitlines()]
    return dict(zip(names, short))


def compile_command(build, unit):
    with open(os.path.join(build, "compile_commands.json")) as f:
        entries = json.load(f)
    want = os.path.realpath(unit)
    for e in entries:
        if os.path.realpath(os.path.join(e["directory"], e["file"])) == want:
            args = e["arguments"] if "arguments" in e else shlex.split(e["command"])
            return args, e["directory"]
    sys.exit(f"kernel_resources: {unit} is not in {build}/compile_commands.json (a CUDA build of this tree?)")


def resources(args, directory, source_root=None, repo_root=None, build=None):
    """Run the unit's compile command with ptxas -v into a scratch object;
    source_root: compile another tree's sources (paths under repo_root,
    except the build directory's, are moved there)."""
    with tempfile.TemporaryDirectory() as tmp:
        cmd = list(args)
        cmd[cmd.index("-o") + 1] = os.path.join(tmp, "unit.o")
        if source_root:
            build_real = os.path.realpath(build)
            def moved(a):
                if build_real in a:
                    return a
                return a.replace(repo_root, source_root)
            cmd = [moved(a) for a in cmd]
        done = subprocess.run(cmd + ["-Xptxas", "-v"], cwd=directory, capture_output=True, text=True)
        if done.returncode != 0:
            sys.exit("kernel_resources: the compile failed:\n" + done.stderr[-3000:])
        return parse_ptxas(done.stderr)


def row(k):
    return (f"{k['registers']:4d} {blocks_per_sm(k['registers']):3d} {k.get('stack', 0):6d} "
            f"{k.get('spill_stores', 0):5d} {k.get('spill_loads', 0):5d}")


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("units", nargs="+", help="CUDA sources of the build (kernels/tree/tree_fp16.cu, ...)")
    p.add_argument("--build", default="build/release", help="a configured CUDA build of this tree")
    p.add_argument("--filter", default="block_partials|second_pass", help="regex on the demangled kernel name")
    p.add_argument("--base", help="also compile the units at this git revision and list what changed")
    a = p.parse_args()
    repo_root = subprocess.run(["git", "rev-parse", "--show-toplevel"], capture_output=True, text=True,
                               check=True).stdout.strip()
    pattern = re.compile(a.filter)
    header = "regs  b/SM  stack  st.  ld.  kernel (b/SM: 256-thread blocks an SM holds by registers)"
    for unit in a.units:
        args, directory = compile_command(a.build, unit)
        head = resources(args, directory)
        names = demangle(sorted(head))
        print(f"## {unit}")
        if not a.base:
            print(header)
            for mangled, name in sorted(names.items(), key=lambda kv: kv[1]):
                if pattern.search(name):
                    print(row(head[mangled]), name[:200])
            continue
        with tempfile.TemporaryDirectory() as src:
            archive = subprocess.run(["git", "archive", a.base], cwd=repo_root, capture_output=True, check=True)
            subprocess.run(["tar", "-x", "-C", src], input=archive.stdout, check=True)
            base = resources(args, directory, src, repo_root, a.build)
        changed = 0
        for mangled, name in sorted(names.items(), key=lambda kv: kv[1]):
            if not pattern.search(name) or base.get(mangled) == head[mangled]:
                continue
            changed += 1
            before = row(base[mangled]) if mangled in base else "   (new)" + " " * 19
            print(f"{before}  ->  {row(head[mangled])}  {name[:160]}")
        # Kernels whose names changed (a template argument added) show as new
        # here and as gone there: list the gone ones so both sides are seen.
        gone = {m: n for m, n in demangle(sorted(m for m in base if m not in head)).items() if pattern.search(n)}
        for mangled, name in sorted(gone.items(), key=lambda kv: kv[1]):
            print(f"{row(base[mangled])}  ->  {'(gone)':>26}  {name[:160]}")
        print(f"{changed} of {sum(1 for n in names.values() if pattern.search(n))} kernels changed since {a.base},"
              f" {len(gone)} gone"
              f" (columns: {header.split('  kernel')[0]})")


if __name__ == "__main__":
    main()
