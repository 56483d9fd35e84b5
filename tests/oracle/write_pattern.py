#!/usr/bin/env python3
"""write_pattern.py VOLUME MODEL SEED - write pseudo-random data over all of
VOLUME (a raidfuse volume.img) and the same bytes into MODEL, a plain file
of the same size, so that sha256(MODEL) is what the array must hold.

Deterministic for a given SEED and size. Phases:
  1. scattered writes of odd sizes at odd offsets into the fresh (zero) array,
     some straddling 4K/64K/1M boundaries, one at offset 0, one ending at the
     last byte;
  2. a full sequential pass in odd block sizes (every byte written);
  3. concurrent writers (4 threads) to disjoint, odd-sized, interleaved
     pieces, so that neighbouring pieces share chunks, stripes and parity;
  4. small scattered read-modify-write overwrites of existing data.
Then fsync. Prints one summary line.
"""
import os
import random
import sys
import threading


def main():
    if len(sys.argv) != 4:
        sys.exit("usage: write_pattern.py VOLUME MODEL SEED")
    volume, model, seed = sys.argv[1], sys.argv[2], sys.argv[3]
    rng = random.Random(seed)
    vfd = os.open(volume, os.O_RDWR)
    size = os.fstat(vfd).st_size
    if size <= 0:
        sys.exit("write_pattern.py: %s is empty" % volume)
    mfd = os.open(model, os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o644)
    os.ftruncate(mfd, size)
    counts = {}

    def put(off, data, phase):
        n = os.pwrite(vfd, data, off)
        if n != len(data):
            sys.exit("short write at %d: %d of %d bytes" % (off, n, len(data)))
        os.pwrite(mfd, data, off)
        counts[phase] = counts.get(phase, 0) + 1

    # 1. scattered partial writes into the zeroed array
    sizes = [1, 7, 511, 512, 513, 4095, 4096, 4097, 65535, 65536, 65537,
             131071, 196609, 1048573]
    for i in range(60):
        n = min(rng.choice(sizes), size)
        if i == 0:
            off = 0
        elif i == 1:
            off = size - n
        elif i % 3 == 0:
            # straddle a 4K/64K/1M boundary by a few bytes
            unit = rng.choice([4096, 65536, 1 << 20])
            b = rng.randrange(1, max(2, size // unit)) * unit
            off = max(0, min(size - n, b - rng.randrange(1, max(2, n))))
        else:
            off = rng.randrange(0, size - n + 1)
        put(off, rng.randbytes(n), "scatter")

    # 2. full pass, odd block sizes
    blocks = [1048573, 77777, 12289, 4096, 300001, 511, 65537]
    off, i = 0, 0
    while off < size:
        n = min(blocks[i % len(blocks)], size - off)
        put(off, rng.randbytes(n), "full")
        off += n
        i += 1

    # 3. concurrent writers to disjoint interleaved pieces
    nthreads = 4
    pieces = [[] for _ in range(nthreads)]
    off, i = 0, 0
    while off < size:
        n = min(rng.randrange(1, 40000), size - off)
        pieces[i % nthreads].append((off, rng.randbytes(n)))
        off += n
        i += 1
    errors = []

    def writer(lst):
        try:
            for o, d in lst:
                if os.pwrite(vfd, d, o) != len(d):
                    raise OSError("short write at %d" % o)
        except OSError as e:
            errors.append(e)

    threads = [threading.Thread(target=writer, args=(p,)) for p in pieces]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        sys.exit("concurrent write failed: %s" % errors[0])
    for p in pieces:
        for o, d in p:
            os.pwrite(mfd, d, o)
    counts["concurrent"] = sum(len(p) for p in pieces)

    # 4. read-modify-write overwrites of existing data
    for _ in range(200):
        n = min(rng.randrange(1, 70000), size)
        put(rng.randrange(0, size - n + 1), rng.randbytes(n), "rmw")

    os.fsync(vfd)
    os.close(vfd)
    os.fsync(mfd)
    os.close(mfd)
    print("wrote %d bytes: %s" % (size, " ".join(
        "%s=%d" % kv for kv in sorted(counts.items()))))


if __name__ == "__main__":
    main()
