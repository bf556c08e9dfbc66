#!/usr/bin/env python3
"""Per-thread scheduling of a benchmark run, from /proc (Linux only).

Waits AFTER seconds, then measures FOR seconds, and prints for the busiest
threads of the processes whose command line matches (by default the
BridgeBench JVM and the flinkgo test agent):

  run%    time on a CPU (schedstat), as a share of the window
  runq%   time runnable but waiting for a CPU (schedstat)
  vol/s   voluntary context switches per second (the thread blocked)
  invol/s involuntary context switches per second (it was preempted)

Threads of one Go process share its name, so they are summed per process
and name. Usage (see README.md, "The twenty-third session"):

  python3 benchmarks/bridge/threadstat.py --after 14 --for 6 &
  (cd java-shim && mvn -B -q -ntp -Pbench exec:exec ...)

or, to measure inside one run of a JVM that runs several (run.sh does this):
--thread GoAgent --nth 2 waits for the second thread whose name starts with
GoAgent (BridgeBench's warm-up has the first), then --after seconds more;
the window ends early, at the last sample taken while that thread lived, if
the run ends first.
"""
import argparse
import collections
import os
import sys
import time


def matching_pids(patterns):
    pids, me = [], str(os.getpid())
    for p in os.listdir("/proc"):
        if not p.isdigit() or p == me:  # our own command line holds the patterns
            continue
        try:
            with open(f"/proc/{p}/cmdline", "rb") as f:
                cmd = f.read().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if any(pat in cmd for pat in patterns):
            pids.append(p)
    return pids


def snapshot(patterns):
    out = {}
    for p in matching_pids(patterns):
        try:
            tids = os.listdir(f"/proc/{p}/task")
        except OSError:
            continue
        for t in tids:
            base = f"/proc/{p}/task/{t}"
            try:
                with open(f"{base}/comm") as f:
                    name = f.read().strip()
                with open(f"{base}/schedstat") as f:
                    run_ns, wait_ns, _ = (int(x) for x in f.read().split())
                vol = invol = 0
                with open(f"{base}/status") as f:
                    for line in f:
                        if line.startswith("voluntary_ctxt_switches:"):
                            vol = int(line.split()[1])
                        elif line.startswith("nonvoluntary_ctxt_switches:"):
                            invol = int(line.split()[1])
            except (OSError, ValueError):
                continue  # the thread ended between the listing and the reads
            out[(p, t, name)] = (run_ns, wait_ns, vol, invol)
    return out


def wait_for_thread(patterns, prefix, nth, timeout):
    """Returns (pid, tid) of the nth distinct thread whose name starts with prefix."""
    seen, end = [], time.monotonic() + timeout
    while time.monotonic() < end:
        for p in matching_pids(patterns):
            try:
                tids = os.listdir(f"/proc/{p}/task")
            except OSError:
                continue
            for t in tids:
                try:
                    with open(f"/proc/{p}/task/{t}/comm") as f:
                        name = f.read().strip()
                except OSError:
                    continue
                if name.startswith(prefix) and (p, t) not in seen:
                    seen.append((p, t))
                    if len(seen) == nth:
                        return p, t
        time.sleep(0.05)
    sys.exit(f"threadstat: saw {len(seen)} of {nth} threads named {prefix}* in {timeout:.0f} s")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--after", type=float, default=14, help="seconds to wait before measuring (default 14)")
    ap.add_argument("--for", dest="window", type=float, default=6, help="seconds to measure (default 6)")
    ap.add_argument("--match", action="append", help="a command-line substring (repeatable); default: BridgeBench, flinkgo-testagent")
    ap.add_argument("--top", type=int, default=8, help="threads to print (default 8)")
    ap.add_argument("--thread", help="start when a thread whose name starts with this appears (see --nth)")
    ap.add_argument("--nth", type=int, default=1, help="with --thread: the how-manieth such thread (default 1)")
    ap.add_argument("--timeout", type=float, default=600, help="with --thread: give up after this many seconds (default 600)")
    a = ap.parse_args()
    patterns = a.match or ["io.flinkgo.shim.bench.BridgeBench", "flinkgo-testagent"]
    if not os.path.exists("/proc/self/schedstat"):
        sys.exit("threadstat: /proc/<pid>/task/<tid>/schedstat is missing; it needs a Linux kernel with schedstats")
    watched = None
    if a.thread:
        watched = wait_for_thread(patterns, a.thread, a.nth, a.timeout)
    time.sleep(a.after)
    before, t0 = snapshot(patterns), time.monotonic()
    after, elapsed = before, 0.0
    while time.monotonic() - t0 < a.window:
        time.sleep(min(0.25, a.window))
        snap = snapshot(patterns)
        if watched is not None and not any(k[:2] == watched for k in snap):
            break  # the run ended: keep the last sample taken while it ran
        after, elapsed = snap, time.monotonic() - t0
    if watched is not None and elapsed < 0.5:
        sys.exit(f"threadstat: thread {a.thread!r} ended {elapsed:.2f} s into the window; lower --after")
    if not after:
        sys.exit(f"threadstat: no process matched {patterns} at the end of the window; adjust --after/--for or --match")
    agg = collections.defaultdict(lambda: [0, 0, 0, 0])
    for k, v in after.items():
        old = before.get(k, (0, 0, 0, 0))  # a thread started inside the window counts from zero
        for i in range(4):
            agg[(k[0], k[2])][i] += v[i] - old[i]
    print(f"window {elapsed:.1f} s, {os.cpu_count()} CPUs")
    print(f"{'pid':>7}  {'thread':<16} {'run%':>6} {'runq%':>6} {'vol/s':>7} {'invol/s':>7}")
    for (pid, name), v in sorted(agg.items(), key=lambda kv: -kv[1][0])[: a.top]:
        print(f"{pid:>7}  {name:<16} {100 * v[0] / 1e9 / elapsed:6.1f} {100 * v[1] / 1e9 / elapsed:6.1f}"
              f" {v[2] / elapsed:7.0f} {v[3] / elapsed:7.0f}")


if __name__ == "__main__":
    main()
