#!/usr/bin/env python3
"""plot.py - the PNG charts of a benchmark-kit run, drawn with gnuplot.

Reads RESULTS_DIR/results.csv and writes, in RESULTS_DIR/charts/, for each
chart a data table (.dat), the gnuplot script (.gp, to re-plot or restyle)
and the PNG:
  fileset-PHASE.png           MB/s per file set, one bar per target
  iops-qd-PATTERN.png         IOPS against queue depth, one line per target
                              (Database: one chart per read share, and
                              database-read-share.png at the deepest queue)
  mbps-bs-seqread/seqwrite    MB/s against block size
  mbps-streams-multistream-*  MB/s against the number of workers
  cpu-eff-chunk.png           stripe sweep: IOPS per daemon CPU-second
                              against chunk size; mbps-chunk.png: MB/s
Python 3 standard library and the gnuplot program.
"""
import csv
import os
import subprocess
import sys

SETS = ["Install", "ISO", "MP3", "Programs", "Windows"]
PHASE_TITLES = {"create": "create (write the set)", "read": "read", "copy": "copy within the file system",
                "copy-out": "copy to a second file system"}
PATTERN_TITLES = {"database": "Database, 8 KiB random", "fileserver": "File server, 80% read, random",
                  "webserver": "Web server, reads only, random", "workstation": "Workstation, 8 KiB, 80% read"}


def num(v):
    try:
        return float(v)
    except (TypeError, ValueError):
        return None


def bs_key(b):
    b = str(b).lower()
    mult = {"k": 1 << 10, "m": 1 << 20}.get(b[-1:], 1)
    try:
        return int(b.rstrip("km")) * mult
    except ValueError:
        return 0


def label(b):
    return str(b).upper().replace("K", " KiB").replace("M", " MiB") if str(b)[-1:] in "km" else f"{b} B"


class Charts:
    def __init__(self, d):
        self.d = d
        self.cd = os.path.join(d, "charts")
        os.makedirs(self.cd, exist_ok=True)
        with open(os.path.join(d, "results.csv"), newline="") as f:
            self.rows = [r for r in csv.DictReader(f) if num(r.get("mb_s")) is not None]
        self.made = []

    def sel(self, **kw):
        return [r for r in self.rows if all(r.get(k) == v for k, v in kw.items())]

    def draw(self, name, title, xlabel, ylabel, xs, series, kind="lines", logy=False):
        """xs: x labels; series: list of (title, [value or None per x])."""
        if not xs or not series:
            return
        dat = os.path.join(self.cd, name + ".dat")
        with open(dat, "w") as f:
            f.write("x " + " ".join('"%s"' % s[0] for s in series) + "\n")
            for i, x in enumerate(xs):
                vals = ["NaN" if s[1][i] is None else f"{s[1][i]:.6g}" for s in series]
                f.write(f'"{x}" ' + " ".join(vals) + "\n")
        values = [v for s in series for v in s[1] if v]
        if logy and values and max(values) / max(min(values), 1e-9) < 20:
            logy = False
        n = len(series)
        gp = [
            f"set terminal pngcairo size 960,540 font 'Sans,10' noenhanced",
            f"set output '{name}.png'",
            f"set title '{title}'",
            f"set xlabel '{xlabel}'",
            f"set ylabel '{ylabel}'",
            "set key outside right top",
            "set grid ytics",
            "set yrange [0:*]" if not logy else "set logscale y",
            "set datafile missing 'NaN'",
        ]
        if kind == "bars":
            gp += ["set style data histograms", "set style histogram clustered gap 1",
                   "set style fill solid 0.85 border -1", "set boxwidth 0.9",
                   f"plot for [i=2:{n + 1}] '{name}.dat' using i:xtic(1) title columnheader(i)"]
        else:
            if len(xs) == 1:
                gp.append("set xrange [-1:1]")
            gp += ["set offsets 0.3, 0.3, 0, 0",
                   f"plot for [i=2:{n + 1}] '{name}.dat' using 0:i:xtic(1) with linespoints "
                   "lw 2 pt 7 ps 0.8 title columnheader(i)"]
        with open(os.path.join(self.cd, name + ".gp"), "w") as f:
            f.write("\n".join(gp) + "\n")
        subprocess.run(["gnuplot", name + ".gp"], cwd=self.cd, check=True)
        self.made.append(name + ".png")

    def targets(self, rows):
        return list(dict.fromkeys(r["target"] for r in rows))

    def filesets(self):
        rows = self.sel(suite="fileset")
        sets = [s for s in SETS if any(r["set"] == s for r in rows)]
        for phase, title in PHASE_TITLES.items():
            pr = [r for r in rows if r["phase"] == phase]
            if not pr:
                continue
            series = []
            for t in self.targets(pr):
                vals = []
                for s in sets:
                    r = [x for x in pr if x["target"] == t and x["set"] == s]
                    vals.append(num(r[0]["mb_s"]) if r else None)
                series.append((t, vals))
            self.draw(f"fileset-{phase}", f"File sets: {title}", "file set",
                      "MB/s (10^6 bytes/s)", sets, series, kind="bars")

    def by_x(self, rows, key, xs, metric):
        series = []
        for t in self.targets(rows):
            vals = []
            for x in xs:
                r = [y for y in rows if y["target"] == t and y[key] == x]
                vals.append(num(r[0][metric]) if r else None)
            series.append((t, vals))
        return series

    def iometer(self):
        rows = self.sel(suite="iometer")
        for pat, title in PATTERN_TITLES.items():
            pr = [r for r in rows if r["pattern"] == pat]
            if not pr:
                continue
            qds = sorted({r["qd"] for r in pr}, key=int)
            mixes = sorted({r["rwmix_read"] for r in pr}, key=int) if pat == "database" else [None]
            for mix in mixes:
                mr = pr if mix is None else [r for r in pr if r["rwmix_read"] == mix]
                name = f"iops-qd-{pat}" + ("" if mix is None else f"-read{mix}")
                t = title + ("" if mix is None else f", {mix}% read")
                self.draw(name, f"{t}: IOPS against queue depth", "queue depth (outstanding I/Os)",
                          "IOPS (I/O operations per second)", qds, self.by_x(mr, "qd", qds, "iops"), logy=True)
            if pat == "database" and len(mixes) > 1:
                q = qds[-1]
                mr = [r for r in pr if r["qd"] == q]
                self.draw("database-read-share", f"Database, 8 KiB random, QD {q}: IOPS against read share",
                          "read share (%)", "IOPS (I/O operations per second)", mixes,
                          self.by_x(mr, "rwmix_read", mixes, "iops"), logy=True)
        for pat, title in [("seqread", "Sequential read"), ("seqwrite", "Sequential write")]:
            pr = [r for r in rows if r["pattern"] == pat]
            if pr:
                bss = sorted({r["bs"] for r in pr}, key=bs_key)
                self.draw(f"mbps-bs-{pat}", f"{title} (QD {pr[0]['qd']}): MB/s against block size",
                          "block size", "MB/s (10^6 bytes/s)", [label(b) for b in bss],
                          self.by_x(pr, "bs", bss, "mb_s"), logy=True)
        for pat, title in [("multistream-read", "Multi-stream read"), ("multistream-write", "Multi-stream write")]:
            pr = [r for r in rows if r["pattern"] == pat]
            if pr:
                ns = sorted({r["streams"] for r in pr}, key=int)
                self.draw(f"mbps-streams-{pat}", f"{title}, 64 KiB sequential per worker: MB/s against workers",
                          "workers (each in its own region)", "MB/s (10^6 bytes/s)", ns,
                          self.by_x(pr, "streams", ns, "mb_s"))

    def stripe(self):
        rows = self.sel(suite="stripe")
        if not rows:
            return
        chunks = sorted({int(r["chunk_kib"]) for r in rows})
        xs = [f"{c} KiB" if c < 1024 else f"{c // 1024} MiB" for c in chunks]
        eff, mbs = [], []
        for t in dict.fromkeys(r["target"] for r in rows):
            for p in dict.fromkeys(r["pattern"] for r in rows):
                pr = [r for r in rows if r["target"] == t and r["pattern"] == p]
                if not pr:
                    continue
                name = f"{t} {p} {pr[0]['bs']} QD{pr[0]['qd']}"
                get = {int(r["chunk_kib"]): r for r in pr}
                eff.append((name, [num(get[c]["iops_per_cpu_s"]) if c in get else None for c in chunks]))
                mbs.append((name, [num(get[c]["mb_s"]) if c in get else None for c in chunks]))
        self.draw("cpu-eff-chunk", "Stripe-size sweep: CPU effectiveness of the raidfuse daemon",
                  "chunk size", "I/Os per daemon CPU-second", xs, eff, logy=True)
        self.draw("mbps-chunk", "Stripe-size sweep: throughput", "chunk size", "MB/s (10^6 bytes/s)", xs, mbs,
                  logy=True)


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: plot.py RESULTS_DIR")
    c = Charts(sys.argv[1])
    c.filesets()
    c.iometer()
    c.stripe()
    print("charts:", " ".join(c.made))


if __name__ == "__main__":
    main()
