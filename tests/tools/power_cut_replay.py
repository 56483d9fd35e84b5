#!/usr/bin/env python3
"""power_cut_replay.py - rebuild member files as a power cut could have
left them, from the log power_cut_log.c wrote while raidfuse ran.

usage: power_cut_replay.py LOG SNAPDIR MODE SEED MEMBER...

Each MEMBER is first overwritten with SNAPDIR/<its name>, the copy taken
before the daemon started. Then, page (4 KiB) by page, the logged writes to
it are applied in the order they were issued, up to a cut: never before the
last write to that page that a sync surely made durable (a sync whose start
came after the write returned, or the write's own RWF_DSYNC), and beyond it
as MODE says: min (nothing unsynced survives), max (everything issued
does), rand (a random cut per page, from SEED). Prints one line: what was
replayed and how many pages lost writes."""

import mmap
import os
import random
import shutil
import struct
import sys

PAGE_BYTES = 4096
RECORD = struct.Struct('=2sccIQQQ')
FALLOC_PUNCH_HOLE, FALLOC_ZERO_RANGE = 0x02, 0x10


class Write:
    __slots__ = ('offset', 'length', 'data_pos', 'zeros', 'done_at', 'durable')

    def __init__(self, offset, length, data_pos, zeros):
        self.offset, self.length = offset, length
        self.data_pos, self.zeros = data_pos, zeros
        self.done_at = None  # index of its C record
        self.durable = False


def read_log(path):
    """Per file path, its writes in the order they were issued."""
    writes, by_seq, syncs_begun = {}, {}, {}
    size = os.path.getsize(path)
    if size == 0:
        return writes, b''
    with open(path, 'rb') as f:
        log = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
    pos = index = 0
    while pos + RECORD.size <= size:
        magic, kind, mode, path_len, seq, offset, length = RECORD.unpack_from(log, pos)
        if magic != b'PC':
            sys.exit(f'power_cut_replay: {path}: no record at byte {pos}')
        end = pos + RECORD.size + path_len + (length if kind == b'W' else 0)
        if end > size:
            break  # the kill cut the last record short: that write was never issued
        name = bytes(log[pos + RECORD.size:pos + RECORD.size + path_len]).decode()
        file_writes = writes.setdefault(name, [])
        if kind == b'W':
            w = Write(offset, length, pos + RECORD.size + path_len, False)
            file_writes.append(w)
            by_seq[seq] = w
        elif kind == b'Z':
            if mode[0] & (FALLOC_PUNCH_HOLE | FALLOC_ZERO_RANGE):
                w = Write(offset, length, None, True)
                file_writes.append(w)
                by_seq[seq] = w
        elif kind == b'C':
            w = by_seq.get(seq)
            if w is not None:
                if not w.zeros and length < w.length:
                    w.length = length  # a short write: the rest was never written
                w.done_at = index
                if mode[0] & 1:
                    w.durable = True
        elif kind == b'B':
            syncs_begun[seq] = index
        elif kind == b'S':
            begun = syncs_begun[seq]
            for w in file_writes:
                if w.done_at is not None and w.done_at < begun:
                    w.durable = True
        else:
            sys.exit(f'power_cut_replay: {path}: unknown record {kind!r} at byte {pos}')
        pos = end
        index += 1
    return writes, log


def pages_of(w):
    return range(w.offset // PAGE_BYTES, (w.offset + w.length + PAGE_BYTES - 1) // PAGE_BYTES)


def replay_member(member, file_writes, log, snapdir, mode, rng):
    shutil.copyfile(os.path.join(snapdir, os.path.basename(member)), member)
    on_page = {}
    for i, w in enumerate(file_writes):
        for page in pages_of(w):
            on_page.setdefault(page, []).append(i)
    cut, pages_cut = {}, 0
    for page, issued in on_page.items():
        last_durable = max((k for k, i in enumerate(issued) if file_writes[i].durable), default=-1)
        low, high = last_durable + 1, len(issued)
        cut[page] = low if mode == 'min' else high if mode == 'max' else rng.randint(low, high)
        pages_cut += cut[page] < high
    applied = {}
    with open(member, 'r+b') as out:
        for w in file_writes:
            for page in pages_of(w):
                rank = applied.get(page, 0)
                applied[page] = rank + 1
                if rank >= cut[page]:
                    continue
                start = max(w.offset, page * PAGE_BYTES)
                end = min(w.offset + w.length, (page + 1) * PAGE_BYTES)
                out.seek(start)
                if w.zeros:
                    out.write(bytes(end - start))
                else:
                    out.write(log[w.data_pos + start - w.offset:w.data_pos + end - w.offset])
    return pages_cut


def main():
    if len(sys.argv) < 6 or sys.argv[3] not in ('min', 'max', 'rand'):
        sys.exit('usage: power_cut_replay.py LOG SNAPDIR min|max|rand SEED MEMBER...')
    log_path, snapdir, mode, seed = sys.argv[1:5]
    members = {os.path.realpath(m): m for m in sys.argv[5:]}
    writes, log = read_log(log_path)
    strangers = [p for p in writes if p not in members]
    if strangers:
        sys.exit(f'power_cut_replay: the log has writes to files that are not members: {strangers}')
    rng = random.Random(int(seed))
    nr_writes = sum(len(ws) for ws in writes.values())
    nr_durable = sum(w.durable for ws in writes.values() for w in ws)
    pages_cut = 0
    for real, member in members.items():
        pages_cut += replay_member(member, writes.get(real, []), log, snapdir, mode, rng)
    print(f'power cut ({mode}): {nr_writes} member writes replayed, {nr_durable} of them durable, '
          f'{pages_cut} pages lost later writes')


if __name__ == '__main__':
    main()
