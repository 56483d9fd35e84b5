#!/usr/bin/env python3
"""report.py - the Markdown report of a benchmark-kit run.

Reads RESULTS_DIR/results.csv and RESULTS_DIR/meta.txt (written by kit.sh)
and writes RESULTS_DIR/report.md: the machine and parameters, which
targets ran (and why the others did not), the integrity checks, and one
table per suite: file-set MB/s per set and phase, IOMeter IOPS per queue
depth, sequential MB/s per block size, multi-stream MB/s, and the stripe
sweep with the daemon's CPU effectiveness. Charts in charts/ are linked.
Python 3 standard library only.
"""
import csv
import os
import sys

SETS = ["Install", "ISO", "MP3", "Programs", "Windows"]
PHASES = [("create", "create (write the set)"), ("read", "read"),
          ("copy", "copy within the file system"), ("copy-out", "copy to a second file system")]
PATTERN_TITLES = {
    "database": "Database (8 KiB random, read share swept)",
    "fileserver": "File server (512 B-64 KiB mix, 80% read, random)",
    "webserver": "Web server (512 B-512 KiB mix, reads only, random)",
    "workstation": "Workstation (8 KiB, 80% read, 80% random)",
}
TARGET_TEXT = {
    "plain": "the host file system the members live on (no FUSE)",
    "passthrough": "libfuse's passthrough_ll example (the FUSE ceiling)",
    "zfs": "zfs-fuse, raidz1 over {m} member files",
    "nbd": "nbdkit file plugin + readahead and cache filters, behind nbdfuse (one backing file)",
}
LEVEL_TEXT = {"linear": "JBOD (linear)", "0": "RAID0", "1": "RAID1", "10": "RAID10 (near 2)",
              "5": "RAID5 (left-symmetric)", "6": "RAID6"}


def num(v):
    try:
        return float(v)
    except (TypeError, ValueError):
        return None


def fmt(v):
    x = num(v)
    if x is None:
        return "-"
    if x >= 100:
        return f"{x:.0f}"
    if x >= 10:
        return f"{x:.1f}"
    return f"{x:.2f}"


def bs_key(b):
    b = b.lower()
    mult = {"k": 1 << 10, "m": 1 << 20}.get(b[-1:], 1)
    try:
        return int(b.rstrip("km")) * mult
    except ValueError:
        return 0


def bs_label(b):
    """4k -> 4 KiB, 1m -> 1 MiB, 512 -> 512 B"""
    b = str(b).lower()
    if b.endswith("k"):
        return f"{b[:-1]} KiB"
    if b.endswith("m"):
        return f"{b[:-1]} MiB"
    return f"{b} B"


def chunk_label(kib):
    k = int(kib)
    return f"{k // 1024} MiB" if k >= 1024 and k % 1024 == 0 else f"{k} KiB"


def table(header, rows, numeric=True):
    out = ["| " + " | ".join(header) + " |",
           "|" + "---|" + ("---:|" if numeric else "---|") * (len(header) - 1)]
    out += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(out) + "\n"


class Report:
    def __init__(self, d):
        self.d = d
        with open(os.path.join(d, "results.csv"), newline="") as f:
            self.rows = list(csv.DictReader(f))
        self.meta = {}
        mp = os.path.join(d, "meta.txt")
        if os.path.exists(mp):
            for line in open(mp):
                k, _, v = line.rstrip("\n").partition("=")
                self.meta[k] = v
        self.out = []

    def w(self, s=""):
        self.out.append(s)

    def sel(self, **kw):
        return [r for r in self.rows if all(r.get(k) == v for k, v in kw.items())]

    def targets(self, suite):
        seen = []
        for r in self.rows:
            if r["suite"] == suite and r["target"] not in seen:
                seen.append(r["target"])
        return seen

    def not_run(self, suite, target):
        for r in self.sel(suite=suite, target=target):
            if r["note"].startswith("not run"):
                return r["note"]
        return None

    def describe(self, target):
        r = next((r for r in self.rows if r["target"] == target), None)
        if r and r["kind"] == "raidfuse":
            return (f"raidfuse {LEVEL_TEXT.get(r['level'], r['level'])} of {r['members']} member files, "
                    f"{chunk_label(r['chunk_kib'])} chunk")
        return TARGET_TEXT.get(target, target).format(m=(r or {}).get("members", "?"))

    def chart(self, name, alt):
        if os.path.exists(os.path.join(self.d, "charts", name)):
            self.w(f"![{alt}](charts/{name})")
            self.w()

    # ------------------------------------------------------------ sections
    def header(self):
        m = self.meta
        self.w("# raidfuse benchmark kit: report")
        self.w()
        for key, label in [("date", "date"), ("machine", "machine"), ("kernel", "kernel"),
                           ("commit", "git commit"), ("raidfuse", "raidfuse"), ("fio", "fio"),
                           ("work_fs", "member files on"), ("load_start", "load average at start"),
                           ("load_end", "load average at end"), ("note", "note")]:
            if key in m:
                self.w(f"- {label}: {m[key]}")
        if "duration_s" in m:
            d = int(m["duration_s"])
            self.w(f"- run: `--{m.get('mode', '?')}`, suites {m.get('suites', '?')}, took {d // 60} min {d % 60} s "
                   f"(estimated {m.get('estimate_min', '?')} min)")
        self.w(f"- file sets: scale {m.get('scale')}, seed {m.get('seed')}, sets {m.get('sets')}; "
               f"second file system: {m.get('second_fs', '?')}")
        self.w(f"- fio: libaio, direct=1, {m.get('runtime')} s per job, on the first {m.get('region_mib')} MiB "
               f"of each volume (written once before the jobs); sequential patterns at queue depth {m.get('seq_qd')}; "
               f"arrays with {m.get('chunk_default', '64k')} chunks outside the stripe sweep")
        self.w(f"- page cache dropped before every job and every file-set phase: "
               f"{'yes' if m.get('drop_caches') == '1' else 'NO'}")
        if m.get("mode") == "quick":
            self.w("- **a quick run**: small sets, short jobs; the figures show that everything works, "
                   "not how fast it is")
        self.w()

    def target_list(self):
        self.w("## Targets")
        self.w()
        rows = []
        for t in dict.fromkeys(r["target"] for r in self.rows if r["suite"] in ("fileset", "iometer")):
            status = self.not_run("fileset", t) or self.not_run("iometer", t) or "run"
            rows.append([t, self.describe(t), status])
        if rows:
            self.w(table(["target", "what", "status"], rows, numeric=False))
        probe = self.meta.get("nbd_split_probe")
        if probe:
            if probe == "ok":
                self.w("- nbdkit's split plugin (several files as one disk, a JBOD peer) passed the kit's "
                       "write-and-compare probe, but the kit does not benchmark it.")
            else:
                self.w("- **nbdkit's split plugin is no usable JBOD peer**: Debian 12's nbdkit split plugin "
                       "writes to the wrong offsets of its second and later files and corrupts data. "
                       f"The kit's probe this run: {probe}. The nbd peer therefore serves one file.")
        self.w("- Where a target cannot run a pattern, its cell says so (`failed`, or `not run` with the reason).")
        self.w()

    def integrity(self):
        ver = self.sel(suite="fileset", phase="verify")
        integ = self.sel(suite="integrity")
        if not ver and not integ:
            return
        self.w("## Integrity")
        self.w()
        if ver:
            bad = [r for r in ver if r["verified"] != "yes"]
            self.w(f"- file sets verified byte for byte against the generator (the set, its copy and the copy "
                   f"on the second file system, read back after a remount): {len(ver) - len(bad)} of {len(ver)} "
                   f"target/set pairs identical.")
            for r in bad:
                self.w(f"  - **{r['target']} {r['set']}: {r['note']}**")
        for r in integ:
            mark = "ok" if r["verified"] == "yes" else "**FAILED**"
            what = "md check of the members" if r["phase"] == "parity" else "e2fsck -fn of ext4 on the volume"
            where = r["target"]
            if r["set"]:
                where += f" ({r['set']}, chunk {chunk_label(r['chunk_kib'])})"
            self.w(f"- {where}: {what}: {mark} ({r['note']})")
        self.w()

    def filesets(self):
        targets = self.targets("fileset")
        if not targets:
            return
        self.w("## File sets (FC-Test style)")
        self.w()
        self.w("MB/s (10^6 bytes/s) = bytes of the set / wall time of the phase, including a final `sync`. "
               "Between phases every target is unmounted and mounted again (raidfuse and the ext4 on volume.img, "
               "the FUSE daemons, the zfs pool); the page cache is dropped before every set. raidfuse arrays "
               "and the nbd peer carry ext4 (mkfs.ext4, loop-mounted); plain and passthrough write into a "
               "directory of the host file system; zfs into its pool's own file system.")
        self.w()
        sets = [s for s in SETS if self.sel(suite="fileset", set=s)]
        for phase, title in PHASES:
            self.w(f"### {title}")
            self.w()
            rows = []
            for t in targets:
                nr = self.not_run("fileset", t)
                if nr:
                    rows.append([t, nr] + ["-"] * len(sets))
                    continue
                cells, tb, ts = [], 0.0, 0.0
                for s in sets:
                    r = self.sel(suite="fileset", target=t, set=s, phase=phase)
                    if not r:
                        cells.append("-")
                    elif not r[0]["mb_s"]:
                        cells.append("failed")
                    else:
                        cells.append(fmt(r[0]["mb_s"]))
                        tb += float(r[0]["bytes"])
                        ts += float(r[0]["seconds"])
                rows.append([t, fmt(tb / 1e6 / ts) if ts else "-"] + cells)
            files = [self.sel(suite="fileset", set=s, phase="create") for s in sets]
            head = [s if not f else "%s (%s file%s, %.0f MB)" % (
                s, f[0]["files"], "" if f[0]["files"] == "1" else "s", float(f[0]["bytes"]) / 1e6)
                for s, f in zip(sets, files)]
            self.w(table(["target", "all sets"] + head, rows))
            self.chart(f"fileset-{phase}.png", f"file sets, {phase}: MB/s per set and target")

    def iometer(self):
        targets = self.targets("iometer")
        if not targets:
            return
        self.w("## IOMeter access patterns (fio)")
        self.w()
        rows = self.sel(suite="iometer")
        qds = sorted({int(r["qd"]) for r in rows if r["qd"] and r["pattern"] in PATTERN_TITLES}, key=int)
        for pat, title in PATTERN_TITLES.items():
            prow = [r for r in rows if r["pattern"] == pat]
            if not prow:
                continue
            self.w(f"### {title}: IOPS")
            self.w()
            mixes = sorted({int(r["rwmix_read"]) for r in prow}) if pat == "database" else [None]
            out = []
            for t in targets:
                nr = self.not_run("iometer", t)
                for mix in mixes:
                    label = t if mix is None else f"{t}, {mix}% read"
                    if nr:
                        out.append([label, nr] + ["-"] * (len(qds) - 1))
                        continue
                    cells = []
                    for q in qds:
                        r = [x for x in prow if x["target"] == t and x["qd"] == str(q)
                             and (mix is None or x["rwmix_read"] == str(mix))]
                        cells.append("-" if not r else ("failed" if not r[0]["iops"] else fmt(r[0]["iops"])))
                    out.append([label] + cells)
            self.w(table(["target"] + [f"QD {q}" for q in qds], out))
            for name in sorted(os.listdir(os.path.join(self.d, "charts"))) if os.path.isdir(
                    os.path.join(self.d, "charts")) else []:
                if name.startswith(f"iops-qd-{pat}") and name.endswith(".png"):
                    self.chart(name, f"{pat}: IOPS against queue depth")
            if pat == "database":
                self.chart("database-read-share.png", "Database: IOPS against read share")
        for pat, title in [("seqread", "Sequential read"), ("seqwrite", "Sequential write")]:
            prow = [r for r in rows if r["pattern"] == pat]
            if not prow:
                continue
            bss = sorted({r["bs"] for r in prow if r["bs"]}, key=bs_key)
            self.w(f"### {title}: MB/s by block size (QD {self.meta.get('seq_qd', '?')})")
            self.w()
            self.w(self.grid(targets, prow, "bs", bss, "mb_s", "iometer", bs_label))
            self.chart(f"mbps-bs-{pat}.png", f"{title}: MB/s against block size")
        for pat, title in [("multistream-read", "Multi-stream read"), ("multistream-write", "Multi-stream write")]:
            prow = [r for r in rows if r["pattern"] == pat]
            if not prow:
                continue
            ns = sorted({r["streams"] for r in prow if r["streams"]}, key=int)
            self.w(f"### {title}: MB/s by number of workers (64 KiB sequential, each in its own region)")
            self.w()
            self.w(self.grid(targets, prow, "streams", ns, "mb_s", "iometer", lambda n: f"{n} worker(s)"))
            self.chart(f"mbps-streams-{pat}.png", f"{title}: MB/s against workers")

    def grid(self, targets, prow, col, values, metric, suite, head=lambda v: v):
        out = []
        for t in targets:
            nr = self.not_run(suite, t)
            if nr:
                out.append([t, nr] + ["-"] * (len(values) - 1))
                continue
            cells = []
            for v in values:
                r = [x for x in prow if x["target"] == t and x[col] == v]
                cells.append("-" if not r else ("failed" if not r[0][metric] else fmt(r[0][metric])))
            out.append([t] + cells)
        return table(["target"] + [head(v) for v in values], out)

    def stripe(self):
        rows = self.sel(suite="stripe")
        if not rows:
            return
        self.w("## Stripe-size sweep")
        self.w()
        self.w("CPU effectiveness = I/O operations completed per CPU-second of the raidfuse daemon "
               "(utime+stime from /proc/PID/stat, read before the job and after an fsync of volume.img). "
               "Each chunk size is a fresh array.")
        self.w()
        pats = list(dict.fromkeys(r["pattern"] for r in rows))
        for t in dict.fromkeys(r["target"] for r in rows):
            self.w(f"### {t}")
            self.w()
            head = ["chunk"]
            for p in pats:
                r0 = next(r for r in rows if r["pattern"] == p)
                what = f"{p} {bs_label(r0['bs'])} QD{r0['qd']}" + (f" {r0['rwmix_read']}% read" if p == "database" else "")
                head += [f"{what} MB/s", "IOPS", "daemon CPU s", "IOPS per CPU-s"]
            out = []
            for c in sorted({int(r["chunk_kib"]) for r in rows if r["target"] == t}):
                cells = [chunk_label(c)]
                for p in pats:
                    r = [x for x in rows if x["target"] == t and x["pattern"] == p and x["chunk_kib"] == str(c)]
                    if not r or not r[0]["iops"]:
                        cells += ["failed" if r else "-", "-", "-", "-"]
                    else:
                        r = r[0]
                        cells += [fmt(r["mb_s"]), fmt(r["iops"]), fmt(r["daemon_cpu_s"]), fmt(r["iops_per_cpu_s"])]
                out.append(cells)
            self.w(table(head, out))
        self.chart("cpu-eff-chunk.png", "CPU effectiveness against chunk size")
        self.chart("mbps-chunk.png", "throughput against chunk size")

    def notes(self):
        self.w("## Notes")
        self.w()
        self.w("- raidfuse opens its members buffered, so writes land in the host's page cache and write-back "
               "to the disk happens later (the file-set phases include it: their final `sync` flushes every "
               "layer). fio's MB/s and IOPS do not include the fsync after each job; the daemon CPU does.")
        self.w("- passthrough_ll is built with one change: O_DIRECT is not passed to its backing file "
               "(as shipped, direct writes fail with EINVAL), so it too opens its file buffered.")
        self.w("- zfs-fuse runs with Debian's /etc/zfs/zfsrc (ARC limited to 100 MiB, prefetch off); it has "
               "no zvols, so fio works on a file in the pool and the file sets on the pool's own file system.")
        self.w("- The nbd peer: nbdkit's cache filter runs write-back (its default) with no size cap: with "
               "`cache-max-size`, nbdkit 1.32's reclaim punches dirty blocks out of the cache too, and this "
               "kit's verification found the file sets and ext4 on that peer corrupted. Its CPU time is "
               "nbdfuse's plus nbdkit's.")
        self.w("- The full figures of every measurement, including mean latency and daemon CPU seconds, are "
               "in results.csv; fio's JSON output and the kit's log are in raw/.")
        self.w()

    def write(self):
        self.header()
        self.target_list()
        self.integrity()
        self.filesets()
        self.iometer()
        self.stripe()
        self.notes()
        with open(os.path.join(self.d, "report.md"), "w") as f:
            f.write("\n".join(self.out))


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: report.py RESULTS_DIR")
    Report(sys.argv[1]).write()


if __name__ == "__main__":
    main()
