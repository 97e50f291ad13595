#!/usr/bin/env python3
"""tools/neon_mca.py - speed on paper for the NEON GEMM micro-kernels (README.md, "NEON").

Nothing here runs ARM natively and qemu's times mean nothing, so each micro-kernel's inner
loop is handed to llvm-mca, LLVM's static model of a core's pipelines:

  1. fuse.h's implementation is compiled to assembly with clang (-O2) for aarch64 (the NEON
     instances) and for x86-64 (the AVX-512 ones, to compare), as a user's build would.
  2. In each micro-kernel (fuse__igemm_*_neon, fuse__few_channels_*_neon, and the AVX-512
     tiles) the inner loop is the innermost loop, by clang's own loop comments, that holds the
     most multiply-adds: its blocks (the prefetch's conditional blocks included, so the
     estimate counts both of their paths) are given to llvm-mca as one body.
  3. llvm-mca runs the body 1000 times on each core's scheduling model: multiply-adds per
     cycle, against the core's peak (2 per cycle on Cortex-A76 and Neoverse-N1, 4 on Apple
     M1), and instructions per multiply-add.

The model llvm-mca uses for a -mcpu is LLVM's, and is printed with each row: LLVM 19 has a
Neoverse-N1 model; -mcpu=cortex-a76 (the same core design as N1) falls back to the
Cortex-A57 model (one 128-bit FMA a cycle, 3-wide), and -mcpu=apple-m1 to the Cyclone model
(three FP pipes where M1 has four). So the N1 column is the best estimate for both A76-class
cores, and the M1 column is bounded at 75 % of M1's real peak by its model.

    python3 tools/neon_mca.py [--llvm-mca llvm-mca-19] [--clang clang] [--markdown]

Needs clang and llvm-mca (Debian: clang, llvm-19; LLVM 14's llvm-mca has no N1 model). Prints
one table; --markdown prints it as README's. Estimates, not measurements.
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# (cpu given to llvm-mca, the core's name, its real peak of 128-bit FMAs per cycle)
ARM_CPUS = [("cortex-a76", "Cortex-A76", 2), ("neoverse-n1", "Neoverse-N1", 2),
            ("apple-m1", "Apple M1", 4)]
X86_CPUS = [("skylake-avx512", "Skylake-SP", 2)]  # the AVX-512 kernels, for comparison

ARM_KERNELS = ["fuse__igemm_8x8_neon", "fuse__igemm_4x16_neon", "fuse__igemm_8x4_neon",
               "fuse__few_channels_8x8_neon", "fuse__few_channels_8x4_neon"]
X86_KERNELS = ["fuse__igemm_6x64_avx512", "fuse__igemm_8x48_avx512"]

FMA_ARM = re.compile(r"^\s*fmla\s")
FMA_X86 = re.compile(r"^\s*vfmadd\d+ps\s")


def compile_asm(clang, target_flags, out):
    src = os.path.join(os.path.dirname(out), "impl.c")
    with open(src, "w") as f:
        f.write('#define FUSE_IMPLEMENTATION\n#include "fuse.h"\n')
    cmd = [clang] + target_flags + ["-O2", "-S", "-I", ROOT, src, "-o", out]
    subprocess.run(cmd, check=True)
    with open(out) as f:
        return f.read().splitlines()


def function_lines(asm, name):
    """The lines of one function, from its label to the next function's end marker."""
    start = None
    for i, line in enumerate(asm):
        if line.startswith(name + ":"):
            start = i
        elif start is not None and (line.startswith(".Lfunc_end") or
                                    re.match(r"^\s*\.size\s+" + re.escape(name) + r",", line)):
            return asm[start:i]
    if start is None:
        raise SystemExit("neon_mca: no function %s in the assembly" % name)
    return asm[start:]


def blocks(lines):
    """Basic blocks as (label, annotation text, instruction lines)."""
    out, label, notes, body = [], None, "", []
    for line in lines:
        s = line.strip()
        m = re.match(r"^(\.?[A-Za-z_.$][\w.$]*):(.*)$", s)
        bb = re.match(r"^(//|#)\s*(%bb\.\d+):(.*)$", s)
        if m or bb:
            if label is not None or body:
                out.append((label, notes, body))
            label = m.group(1) if m else bb.group(2)
            notes, body = (m.group(2) if m else bb.group(3)), []
            continue
        if s.startswith("//") or s.startswith("#"):
            if not body:
                notes += " " + s  # a block's loop comments follow its label
            continue
        if not s or s.startswith("."):
            continue
        body.append(s)
    out.append((label, notes, body))
    return out


def inner_loop(lines, fma):
    """The instructions of the innermost loop with the most multiply-adds, by clang's loop
    comments ("This Inner Loop Header", "in Loop: Header=BBx_y Depth=d")."""
    bl = blocks(lines)
    best = None
    for label, notes, _ in bl:
        if "Inner Loop Header" not in notes:
            continue
        header = label.lstrip(".").replace("LBB", "BB")
        body = []
        for l2, n2, b2 in bl:
            if l2 == label or re.search(r"Header=%s Depth" % re.escape(header), n2):
                body += b2
        count = sum(1 for s in body if fma.match(s))
        if best is None or count > best[0]:
            best = (count, body)
    if best is None:
        raise SystemExit("neon_mca: no inner loop found")
    return best


def mca(llvm_mca, triple, cpu, body, iterations=1000):
    r = subprocess.run([llvm_mca, "-mtriple=" + triple, "-mcpu=" + cpu,
                        "-iterations=%d" % iterations, "-"],
                       input="\n".join(body) + "\n", capture_output=True, text=True)
    if r.returncode != 0:
        raise SystemExit("neon_mca: llvm-mca failed for %s:\n%s" % (cpu, r.stderr))
    cycles = int(re.search(r"Total Cycles:\s+(\d+)", r.stdout).group(1))
    units = re.findall(r"^\[[\d.]+\]\s+-\s+(\w+)", r.stdout, re.M)
    model = next((name for prefix, name in MODEL_NAMES
                  if units and units[0].startswith(prefix)), units[0] if units else "?")
    return cycles / float(iterations), model


# the scheduling model llvm-mca took, from the prefix of its resources' names
MODEL_NAMES = [("A57", "Cortex-A57"), ("N1", "Neoverse-N1"), ("Cy", "Cyclone"),
               ("SKX", "Skylake-SP"), ("SKL", "Skylake"), ("ICX", "Ice Lake")]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--llvm-mca", default=None)
    ap.add_argument("--clang", default="clang")
    ap.add_argument("--markdown", action="store_true")
    a = ap.parse_args()
    llvm_mca = a.llvm_mca or next((t for t in ("llvm-mca-19", "llvm-mca-18", "llvm-mca-17",
                                               "llvm-mca") if shutil.which(t)), None)
    if not llvm_mca or not shutil.which(a.clang):
        sys.exit("neon_mca: needs clang and llvm-mca (Debian: clang llvm-19)")
    tmp = tempfile.mkdtemp(prefix="neon_mca.")
    rows = []
    arm = compile_asm(a.clang, ["--target=aarch64-linux-gnu"], os.path.join(tmp, "a64.s"))
    x86 = compile_asm(a.clang, ["--target=x86_64-linux-gnu"], os.path.join(tmp, "x86.s"))
    for kernels, asm, fma, triple, cpus in ((ARM_KERNELS, arm, FMA_ARM, "aarch64", ARM_CPUS),
                                            (X86_KERNELS, x86, FMA_X86, "x86_64", X86_CPUS)):
        for k in kernels:
            count, body = inner_loop(function_lines(asm, k), fma)
            cells = []
            for cpu, core, peak in cpus:
                cycles, model = mca(llvm_mca, triple, cpu, body)
                per_cycle = count / cycles
                cells.append((core, model, per_cycle, peak))
            rows.append((k, count, len(body), cells))
    version = subprocess.run([llvm_mca, "--version"], capture_output=True,
                             text=True).stdout.split("\n")
    version = next((l.strip() for l in version if "version" in l), "")
    if a.markdown:  # README's table: one column per ARM core, the AVX-512 rows after it
        arm_rows = [r for r in rows if r[0].endswith("_neon")]
        cores = ["%s (%s model)" % (c, m) for c, m, _, _ in arm_rows[0][3]]
        print("| kernel | FMAs / loop | instructions / FMA | " + " | ".join(cores) + " |")
        print("|---|--:|--:|" + "--:|" * len(cores))
        for k, count, n, cells in arm_rows:
            print("| `%s` | %d | %.2f | %s |" % (k.replace("fuse__", ""), count, n / float(count),
                                                " | ".join("%.2f, %.0f %%" % (f, 100 * f / p)
                                                           for _, _, f, p in cells)))
        for k, count, n, cells in rows:
            if not k.endswith("_neon"):
                print("\n`%s`: %d FMAs a loop, %.2f instructions per FMA, %s" %
                      (k.replace("fuse__", ""), count, n / float(count),
                       "; ".join("%s (%s model) %.2f FMAs a cycle, %.0f %%" % (c, m, f, 100 * f / p)
                                 for c, m, f, p in cells)))
        print("\n(%s; clang -O2; estimates, not measurements)" % version)
    else:
        for k, count, n, cells in rows:
            print("%-28s %3d FMAs, %4d instructions (%.2f per FMA)" % (k, count, n,
                                                                      n / float(count)))
            for c, m, f, p in cells:
                print("    %-12s model %-11s %.2f FMAs/cycle = %3.0f %% of peak %d" %
                      (c, m, f, 100 * f / p, p))
        print("(%s; clang -O2; estimates)" % version)
    shutil.rmtree(tmp)


if __name__ == "__main__":
    main()
