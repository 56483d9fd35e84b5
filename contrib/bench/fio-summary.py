#!/usr/bin/env python3
"""fio-summary.py - one line of figures from a fio JSON output file.

Prints: bytes ios mb_s iops lat_mean_us error
  bytes, ios   read + write, all workers (group_reporting)
  mb_s         (read + write) bandwidth, 10^6 bytes per second
  iops         read + write operations per second
  lat_mean_us  mean completion latency over reads and writes, microseconds
  error        fio's error number (0 = none)
Exits 1, printing nothing, when the file holds no fio JSON result.
"""
import json
import sys


def main():
    text = open(sys.argv[1], errors="replace").read()
    start = text.find("{")
    if start < 0:
        sys.exit(1)
    try:
        jobs = json.loads(text[start:])["jobs"]
    except (ValueError, KeyError):
        sys.exit(1)
    if not jobs:
        sys.exit(1)
    nbytes = ios = bw = iops = lat_sum = 0.0
    err = 0
    for job in jobs:
        err = err or job.get("error", 0)
        for d in ("read", "write"):
            s = job[d]
            nbytes += s["io_bytes"]
            ios += s["total_ios"]
            bw += s["bw_bytes"]
            iops += s["iops"]
            lat_sum += s["lat_ns"]["mean"] * s["total_ios"]
    lat_us = lat_sum / ios / 1000 if ios else 0
    print(f"{nbytes:.0f} {ios:.0f} {bw / 1e6:.1f} {iops:.0f} {lat_us:.1f} {err}")


if __name__ == "__main__":
    main()
