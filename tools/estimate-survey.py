#!/usr/bin/env python3
"""Runs shipped scenarios and sets each run's pre-run estimate against what it measured.

    tools/estimate-survey.py [--syncsim BIN] [--skip NAME ...] [SCENARIO.yaml ...]

Default: every scenarios/*.yaml but the ones that take minutes on a 2-core machine (SLOW below).
Each runs as `syncsim run FILE --json --quiet` under GNU time (five times, the median wall, where a
run takes under a second); its wall (from the fork to the exit) and peak RSS are the whole
process's, which is what the estimate claims. The table gives estimate / measured for both, and
the last line counts the runs within 2x (wall) and 1.5x (memory). A benchmark, not a test: run it
on an otherwise idle machine and record the table in docs/performance.md.
"""
import argparse
import json
import pathlib
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent
# Minutes each on 2 cores (see docs/performance.md, "Larger packet-level runs" and "Training steps
# at scale"); sweep files that run many points.
SLOW = {"ddp-70b-16k", "llama3-405b-16k", "permutation-8k", "all-to-all-burst-16k",
        "capacity-70b-4k", "capacity-gpus"}


def run_one(binary, path):
    """The median wall of up to five runs (runs under a second vary by tens of percent on a
    shared VM), the largest peak RSS."""
    rows = []
    for _ in range(5):
        row, error = run_once(binary, path)
        if row is None:
            return None, error
        rows.append(row)
        if row["wall"] > 1.0:
            break
    walls = sorted(r["wall"] for r in rows)
    best = dict(rows[0])
    best["wall"] = walls[len(walls) // 2]
    best["rss"] = max(r["rss"] for r in rows)
    return best, None


def run_once(binary, path):
    with tempfile.TemporaryDirectory() as tmp:
        rss_file = pathlib.Path(tmp) / "rss"
        start = time.perf_counter()
        # GNU time for the peak RSS: wait4's ru_maxrss of a child forked from Python counts the
        # Python image it had before exec.
        out = subprocess.run(["/usr/bin/time", "-o", str(rss_file), "-f", "%M", binary, "run",
                              str(path), "--json", "--quiet"], capture_output=True, text=True)
        wall = time.perf_counter() - start
        if out.returncode != 0:
            return None, out.stderr.strip().splitlines()[-1:] or ["exit %d" % out.returncode]
        rss = float(rss_file.read_text().split()[-1]) * 1024.0
    doc = json.loads(out.stdout)
    est = doc["estimate"]
    return {"wall": wall, "rss": rss, "est_wall": est["wall_s"],
            "est_mem": est["memory_bytes"]}, None


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--syncsim", default=str(ROOT / "build/ci/bin/syncsim"))
    parser.add_argument("--skip", nargs="*", default=[])
    parser.add_argument("scenarios", nargs="*")
    args = parser.parse_args()
    paths = [pathlib.Path(p) for p in args.scenarios] or sorted(
        p for p in (ROOT / "scenarios").glob("*.yaml") if p.stem not in SLOW)
    paths = [p for p in paths if p.stem not in args.skip]
    print("| scenario | wall | wall estimate (ratio) | peak RSS | memory estimate (ratio) |")
    print("|---|---:|---:|---:|---:|")
    wall_ok = mem_ok = counted = 0
    mib = 1024.0 * 1024.0
    for path in paths:
        row, error = run_one(args.syncsim, path)
        if row is None:
            print("| `%s` | failed: %s | | | |" % (path.stem, error[0]))
            continue
        counted += 1
        wall_ratio = row["est_wall"] / row["wall"] if row["wall"] > 0 else float("inf")
        mem_ratio = row["est_mem"] / row["rss"]
        wall_ok += 0.5 <= wall_ratio <= 2
        mem_ok += 1 / 1.5 <= mem_ratio <= 1.5
        print("| `%s` | %.3f s | %.3f s (%.2f) | %.0f MiB | %.0f MiB (%.2f) |" %
              (path.stem, row["wall"], row["est_wall"], wall_ratio, row["rss"] / mib,
               row["est_mem"] / mib, mem_ratio), flush=True)
    print("\nWall within 2x: %d of %d. Memory within 1.5x: %d of %d." %
          (wall_ok, counted, mem_ok, counted))
    return 0


if __name__ == "__main__":
    sys.exit(main())
