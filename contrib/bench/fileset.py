#!/usr/bin/env python3
"""fileset.py - FC-Test-style file sets, generated deterministically from a seed.

Owns the five classic sets (Install, ISO, MP3, Programs, Windows), their
file counts, sizes, directory trees and contents, and the three things the
benchmark kit does with them: create a set (write it), read it back, and
verify a copy byte for byte against what the generator would write.

Scaling: at factor F a set has max(1, round(N * F)) files holding
round(BYTES * F) bytes; sizes are drawn from the set's size model (many
small files in Programs and Windows, a few huge ones in ISO) and then
normalised to that total. Factor 1 gives the classic sizes.

Contents: every 4 KiB block starts with the file's 64-bit key and the
block's offset, the rest comes from a seeded pool, so a block written to
the wrong place, a truncated file or a stale block is found by verify.

Python 3 standard library only.
"""
import argparse
import math
import os
import random
import struct
import sys
import time

MB = 1000 * 1000
BLOCK = 4096
CHUNK = 1 << 20
POOL_BYTES = 2 << 20
MAX_DEPTH = 5

# name: (files, MB at factor 1, size model, files per directory, extensions)
# Size models: ("lognormal", sigma) or ("spread", +-fraction around equal).
SETS = {
    "Install": (414, 575, ("lognormal", 1.5), 25, ("cab", "msi", "dll", "txt", "exe")),
    "ISO": (3, 1600, ("spread", 0.35), 0, ("iso",)),
    "MP3": (271, 1000, ("lognormal", 0.35), 12, ("mp3",)),
    "Programs": (8504, 1400, ("lognormal", 2.2), 12, ("dll", "exe", "txt", "ini", "dat", "hlp")),
    "Windows": (9006, 1060, ("lognormal", 2.0), 15, ("dll", "sys", "inf", "exe", "nls", "txt")),
}
SET_ORDER = ["Install", "ISO", "MP3", "Programs", "Windows"]


class FileSpec:
    __slots__ = ("path", "size", "key")

    def __init__(self, path, size, key):
        self.path, self.size, self.key = path, size, key


def plan(name, scale, seed):
    """The files of set NAME at SCALE: a list of FileSpec, sorted by path."""
    count, mb, model, per_dir, exts = SETS[name]
    rng = random.Random(f"raidfuse-fileset:{seed}:{name}:{scale!r}")
    n = max(1, round(count * scale))
    total = round(mb * MB * scale)
    if model[0] == "lognormal":
        raw = [rng.lognormvariate(0.0, model[1]) for _ in range(n)]
    else:
        raw = [1.0 + rng.uniform(-model[1], model[1]) for _ in range(n)]
    s = sum(raw)
    sizes = [int(total * r / s) for r in raw]
    sizes[max(range(n), key=lambda i: sizes[i])] += total - sum(sizes)
    # Directory tree: each new directory hangs below a random earlier one
    # less than MAX_DEPTH deep: a few deep branches, many shallow ones.
    ndirs = 1 if per_dir == 0 else max(1, n // per_dir)
    dirs = [""]
    parents = [""]
    for d in range(1, ndirs):
        path = os.path.join(parents[rng.randrange(len(parents))], f"d{d:04d}")
        dirs.append(path)
        if path.count("/") + 1 < MAX_DEPTH:
            parents.append(path)
    files = []
    for i in range(n):
        d = dirs[rng.randrange(len(dirs))]
        ext = exts[rng.randrange(len(exts))]
        files.append(FileSpec(os.path.join(d, f"f{i:05d}.{ext}"), sizes[i], rng.getrandbits(64)))
    files.sort(key=lambda f: f.path)
    return files


_pool = {}


def pool(seed):
    if seed not in _pool:
        _pool[seed] = random.Random(f"raidfuse-fileset-pool:{seed}").randbytes(POOL_BYTES)
    return _pool[seed]


def chunk(spec, seed, off):
    """Bytes [off, off + CHUNK) of the file (shorter at its end); off % CHUNK == 0."""
    n = min(CHUNK, spec.size - off)
    base = (spec.key % 256) * BLOCK
    buf = bytearray(pool(seed)[base:base + CHUNK])
    for b in range(0, n, BLOCK):
        struct.pack_into("<QQ", buf, b, spec.key, off + b)
    del buf[n:]
    return buf


def create(name, scale, seed, dest):
    root = os.path.join(dest, name)
    nbytes = 0
    made = set()
    for f in plan(name, scale, seed):
        path = os.path.join(root, f.path)
        d = os.path.dirname(path)
        if d not in made:
            os.makedirs(d, exist_ok=True)
            made.add(d)
        with open(path, "wb", buffering=0) as fh:
            for off in range(0, f.size, CHUNK):
                fh.write(chunk(f, seed, off))
        nbytes += f.size
    return nbytes


def walk(root):
    for d, subdirs, names in os.walk(root):
        subdirs.sort()
        for n in sorted(names):
            yield os.path.join(d, n)


def read(root):
    buf = bytearray(CHUNK)
    nbytes = nfiles = 0
    for path in walk(root):
        with open(path, "rb", buffering=0) as fh:
            while True:
                got = fh.readinto(buf)
                if not got:
                    break
                nbytes += got
        nfiles += 1
    return nbytes, nfiles


def verify(name, scale, seed, root, max_errors=10):
    """Differences between ROOT and the set (a list of strings; empty = equal)."""
    errors = []
    want = {f.path: f for f in plan(name, scale, seed)}
    have = {os.path.relpath(p, root) for p in walk(root)}
    for p in sorted(have - want.keys())[:max_errors]:
        errors.append(f"unexpected file {p}")
    for p in sorted(want.keys() - have)[:max_errors]:
        errors.append(f"missing file {p}")
    for p in sorted(want.keys() & have):
        if len(errors) >= max_errors:
            break
        f = want[p]
        path = os.path.join(root, p)
        size = os.path.getsize(path)
        if size != f.size:
            errors.append(f"{p}: {size} bytes, expected {f.size}")
            continue
        with open(path, "rb", buffering=0) as fh:
            for off in range(0, f.size, CHUNK):
                got = fh.read(CHUNK)
                exp = chunk(f, seed, off)
                if got != exp:
                    bad = next(i for i in range(len(exp)) if i >= len(got) or got[i] != exp[i])
                    errors.append(f"{p}: differs at byte {off + bad}")
                    break
    return errors


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--scale", type=float, default=1.0)
    ap.add_argument("--seed", type=int, default=1)
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("list", help="print: set files bytes dirs largest_file")
    p.add_argument("sets", nargs="*", default=SET_ORDER)
    p = sub.add_parser("create", help="write set NAME as DEST/NAME, sync; print bytes, files, seconds")
    p.add_argument("name", choices=SET_ORDER)
    p.add_argument("dest")
    p = sub.add_parser("read", help="read every file under ROOT; print bytes, files, seconds")
    p.add_argument("root")
    p = sub.add_parser("verify", help="compare ROOT with set NAME byte for byte; exit 1 on a difference")
    p.add_argument("name", choices=SET_ORDER)
    p.add_argument("root")
    a = ap.parse_args()
    if not (a.scale > 0 and math.isfinite(a.scale)):
        ap.error("--scale must be a positive number")

    if a.cmd == "list":
        for name in a.sets:
            if name not in SETS:
                ap.error(f"unknown set {name} (sets: {', '.join(SET_ORDER)})")
            files = plan(name, a.scale, a.seed)
            dirs = {os.path.dirname(f.path) for f in files}
            print(name, len(files), sum(f.size for f in files), len(dirs), max(f.size for f in files))
    elif a.cmd == "create":
        # Timed from the first write to the end of a sync of every file
        # system (the interpreter's start is not part of it).
        files = plan(a.name, a.scale, a.seed)
        pool(a.seed)
        t0 = time.monotonic()
        nbytes = create(a.name, a.scale, a.seed, a.dest)
        os.sync()
        print(nbytes, len(files), f"{time.monotonic() - t0:.3f}")
    elif a.cmd == "read":
        t0 = time.monotonic()
        nbytes, nfiles = read(a.root)
        print(nbytes, nfiles, f"{time.monotonic() - t0:.3f}")
    elif a.cmd == "verify":
        errors = verify(a.name, a.scale, a.seed, a.root)
        for e in errors:
            print(f"verify {a.name}: {e}", file=sys.stderr)
        if errors:
            sys.exit(1)
        print("ok")


if __name__ == "__main__":
    main()
