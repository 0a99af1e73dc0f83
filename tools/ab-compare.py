#!/usr/bin/env python3
"""Compares two syncsim binaries: whether their results agree, and which is faster.

    tools/ab-compare.py same OLD NEW [CASE ...]
    tools/ab-compare.py time OLD NEW [--pairs N] [CASE ...]

A CASE is a scenario path with any run options, as one argument: "scenarios/ring-next-leaf-1024.yaml
--set fabric.transport.go_back_n.ack_every=1". Without cases, `same` runs the packet and flow cases
a hot-path change must leave alone (IDENTITY below) and `time` the reference cases of `syncsim
bench` (TIMING below).

`same` runs each case as `run CASE --json --quiet` with both binaries and compares the outputs with
what a run's machine decides left out (wall, peak RSS, the estimate, events, windows and their
load); exit status 1 if any differs.

`time` runs the two binaries at once, each pinned to a CPU of its own (0 and 1, swapped every pair),
N pairs a case, and prints each binary's median and best CPU time and the median of the per-pair
ratios NEW / OLD. A shared VM's phases move one binary's runs by up to 60 % within a minute
(docs/performance.md); two runs side by side see the same phase, so the ratio of a pair is steadier
than a ratio of medians taken apart. The two runs share the last-level cache: read the ratio as the
comparison, not the times as either binary's speed alone. A benchmark, not a test.
"""
import argparse
import json
import os
import pathlib
import shlex
import statistics
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
ACK_EVERY_PACKET = "--set fabric.transport.go_back_n.ack_every=1"
IDENTITY = [
    "scenarios/ring-next-leaf-128.yaml",
    "scenarios/ring-next-leaf-128-dcqcn.yaml",
    "scenarios/incast-pfc.yaml",
    "scenarios/incast-tcp.yaml",
    "scenarios/incast-dcqcn.yaml",
    "scenarios/headroom-too-small.yaml",
    "scenarios/load-balancing.yaml",
    "scenarios/roce-vs-ib.yaml",
    "scenarios/ecn-tuning.yaml",
    "scenarios/pfc-deadlock.yaml",
    "scenarios/interconnect-matrix.yaml",
    "scenarios/jitter-efficiency.yaml",
    "scenarios/ring-shift-8gpu.yaml",
    "scenarios/link-failure.yaml",
    "scenarios/link-failure.yaml --set fidelity=flow",
    f"scenarios/ring-next-leaf-1024.yaml {ACK_EVERY_PACKET} --threads 2",
    "scenarios/ib-sharp.yaml",
    "scenarios/default.yaml",
]
TIMING = [
    "scenarios/ring-next-leaf-128.yaml",
    "scenarios/ring-next-leaf-1024.yaml",
    f"scenarios/ring-next-leaf-128.yaml {ACK_EVERY_PACKET}",
    f"scenarios/ring-next-leaf-1024.yaml {ACK_EVERY_PACKET}",
    "scenarios/ring-next-leaf-128-dcqcn.yaml",
]
# What depends on the machine or on how the run was cut up, not on the model.
MACHINE_FIELDS = {"wall_s", "peak_rss_bytes", "estimate", "events", "windows", "threaded_windows",
                  "thread_scaling", "window_load"}


def without_machine_fields(value):
    if isinstance(value, dict):
        return {k: without_machine_fields(v) for k, v in value.items() if k not in MACHINE_FIELDS}
    if isinstance(value, list):
        return [without_machine_fields(v) for v in value]
    return value


def results(binary, case):
    command = [binary, "run", *shlex.split(case), "--json", "--quiet"]
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        return None, f"exit {done.returncode}: {done.stderr.strip()[:200]}"
    return without_machine_fields(json.loads(done.stdout)), None


def same(old, new, cases):
    differ = 0
    for case in cases:
        a, error_a = results(old, case)
        b, error_b = results(new, case)
        if error_a or error_b:
            print(f"FAILED  {case}: {error_a or error_b}")
            differ += 1
        elif a == b:
            print(f"same    {case}")
        else:
            print(f"DIFFER  {case}")
            differ += 1
    print(f"{len(cases) - differ} of {len(cases)} cases the same")
    return 1 if differ else 0


def start_pinned(binary, case, cpu):
    def pin():
        os.sched_setaffinity(0, {cpu})

    command = [binary, "run", *shlex.split(case), "--quiet"]
    return subprocess.Popen(command, cwd=ROOT, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, preexec_fn=pin)


def cpu_seconds(process):
    _, status, usage = os.wait4(process.pid, 0)
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode != 0:
        raise SystemExit(f"{process.args}: exit {process.returncode}")
    return usage.ru_utime + usage.ru_stime


def time_pairs(old, new, cases, pairs):
    if len(os.sched_getaffinity(0)) < 2:
        raise SystemExit("time: needs two CPUs (the pair runs side by side)")
    cpus = sorted(os.sched_getaffinity(0))[:2]
    print(f"{'case':<70} {'old median/best':>16} {'new median/best':>16} {'new/old':>8}")
    for case in cases:
        olds, news, ratios = [], [], []
        for i in range(pairs):
            cpu_old, cpu_new = (cpus[0], cpus[1]) if i % 2 == 0 else (cpus[1], cpus[0])
            a = start_pinned(old, case, cpu_old)
            b = start_pinned(new, case, cpu_new)
            t_old, t_new = cpu_seconds(a), cpu_seconds(b)
            olds.append(t_old)
            news.append(t_new)
            ratios.append(t_new / t_old)
        print(f"{case:<70} {statistics.median(olds):>8.3f}/{min(olds):<7.3f} "
              f"{statistics.median(news):>8.3f}/{min(news):<7.3f} "
              f"{statistics.median(ratios):>8.3f}")
    return 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("mode", choices=["same", "time"])
    parser.add_argument("old", help="the binary before the change")
    parser.add_argument("new", help="the binary after it")
    parser.add_argument("cases", nargs="*", help="scenario paths with run options, one argument each")
    parser.add_argument("--pairs", type=int, default=12, help="pairs of runs a case (time)")
    args = parser.parse_intermixed_args()
    old, new = (str(pathlib.Path(b).resolve()) for b in (args.old, args.new))
    for binary in (old, new):
        if not os.access(binary, os.X_OK):
            parser.error(f"{binary}: expected an executable syncsim binary")
    if args.mode == "same":
        return same(old, new, args.cases or IDENTITY)
    if args.pairs < 1:
        parser.error(f"--pairs: expected at least 1, found {args.pairs}")
    return time_pairs(old, new, args.cases or TIMING, args.pairs)


if __name__ == "__main__":
    sys.exit(main())
