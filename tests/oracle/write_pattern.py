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

For arrays taken through raidfuse's life-cycle operations (md_oracle.sh),
later rounds keep MODEL as it is (it must hold what VOLUME holds):
  write_pattern.py --more N VOLUME MODEL SEED
      N scattered writes (as phase 1) and N read-modify-write overwrites
      (as phase 4) into both files, then fsync;
  write_pattern.py --storm VOLUME SEED
      rewrites a set of small, unaligned pieces (chosen by SEED, inside a
      few 1 MiB windows) with fresh random data, round after round, with an
      fdatasync after each, until a write fails (the daemon was killed);
      MODEL is not touched, as these
      bytes are lost to the crash. Prints "storm started" once a round has
      been written;
  write_pattern.py --restore VOLUME MODEL SEED
      writes the storm's pieces (the same SEED) back from MODEL, in the
      storm's unaligned sizes, then fsync.
"""
import os
import random
import sys
import threading


SIZES = [1, 7, 511, 512, 513, 4095, 4096, 4097, 65535, 65536, 65537,
         131071, 196609, 1048573]


def scatter_off(rng, i, n, size):
    """Offset of the i-th scattered write of n bytes (phase 1's choice)."""
    if i == 0:
        return 0
    if i == 1:
        return size - n
    if i % 3 == 0:
        # straddle a 4K/64K/1M boundary by a few bytes
        unit = rng.choice([4096, 65536, 1 << 20])
        b = rng.randrange(1, max(2, size // unit)) * unit
        return max(0, min(size - n, b - rng.randrange(1, max(2, n))))
    return rng.randrange(0, size - n + 1)


def storm_pieces(seed, size):
    """The pieces --storm rewrites and --restore puts back: 3 windows of
    1 MiB (fewer on a small volume), 24 pieces of 1..70000 bytes each."""
    rng = random.Random("storm-" + seed)
    win = min(1 << 20, size)
    pieces = []
    for _ in range(3):
        base = rng.randrange(0, size - win + 1)
        for _ in range(24):
            n = rng.randrange(1, min(70000, win) + 1)
            pieces.append((base + rng.randrange(0, win - n + 1), n))
    return pieces


def more(vfd, mfd, size, rng, count):
    done = 0
    for i in range(count):
        n = min(rng.choice(SIZES), size)
        data = rng.randbytes(n)
        off = scatter_off(rng, i, n, size)
        os.pwrite(mfd, data, off)
        if os.pwrite(vfd, data, off) != n:
            sys.exit("short write at %d" % off)
        done += 1
    for _ in range(count):
        n = min(rng.randrange(1, 70000), size)
        off = rng.randrange(0, size - n + 1)
        data = rng.randbytes(n)
        os.pwrite(mfd, data, off)
        if os.pwrite(vfd, data, off) != n:
            sys.exit("short write at %d" % off)
        done += 1
    return done


def lifecycle(argv):
    mode = argv[1]
    if mode == "--more" and len(argv) == 6:
        count, volume, model, seed = int(argv[2]), argv[3], argv[4], argv[5]
    elif mode == "--storm" and len(argv) == 4:
        volume, model, seed = argv[2], None, argv[3]
    elif mode == "--restore" and len(argv) == 5:
        volume, model, seed = argv[2], argv[3], argv[4]
    else:
        sys.exit("usage: write_pattern.py --more N VOLUME MODEL SEED | --storm VOLUME SEED"
                 " | --restore VOLUME MODEL SEED")
    vfd = os.open(volume, os.O_RDWR)
    size = os.fstat(vfd).st_size
    if mode == "--storm":
        rng = random.Random("storm-data-" + seed)
        pieces = storm_pieces(seed, size)
        rounds = 0
        try:
            while True:
                for off, n in pieces:
                    os.pwrite(vfd, rng.randbytes(n), off)
                os.fdatasync(vfd)
                rounds += 1
                if rounds == 1:
                    print("storm started", flush=True)
        except OSError as e:
            print("storm ended after %d rounds: %s" % (rounds, e), flush=True)
        return
    mfd = os.open(model, os.O_RDWR)
    if os.fstat(mfd).st_size != size:
        sys.exit("write_pattern.py: %s is not the size of %s" % (model, volume))
    if mode == "--more":
        done = more(vfd, mfd, size, random.Random(seed), count)
        what = "%d writes" % done
    else:
        pieces = storm_pieces(seed, size)
        for off, n in pieces:
            data = os.pread(mfd, n, off)
            if os.pwrite(vfd, data, off) != n:
                sys.exit("short write at %d" % off)
        what = "%d storm pieces restored" % len(pieces)
    os.fsync(vfd)
    os.close(vfd)
    os.fsync(mfd)
    os.close(mfd)
    print("%s: %s" % (mode[2:], what))


def main():
    if len(sys.argv) > 1 and sys.argv[1].startswith("--"):
        return lifecycle(sys.argv)
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
