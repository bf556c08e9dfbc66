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
and name. Usage (see HISTORY.md, "The twenty-third session"):

  python3 benchmarks/bridge/threadstat.py --after 14 --for 6 &
  (cd java-shim && mvn -B -q -ntp -Pbench exec:exec ...)

or, to measure inside one run of a JVM that runs several (run.sh does this):
--thread GoAgent --nth 2 waits for the second thread whose name starts with
GoAgent (BridgeBench's warm-up has the first), then --after seconds more. If
that thread ends inside the window, it was not the run's (a short-lived
thread of the same name, or the warm-up's): the next such thread is measured
instead, until the processes exit.
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


def threads(patterns):
    """Yields (pid, tid, name) of every thread of the matching processes."""
    for p in matching_pids(patterns):
        try:
            tids = os.listdir(f"/proc/{p}/task")
        except OSError:
            continue
        for t in tids:
            try:
                with open(f"/proc/{p}/task/{t}/comm") as f:
                    yield p, t, f.read().strip()
            except OSError:
                continue  # the thread ended after the listing


def snapshot(patterns):
    out = {}
    for p, t, name in threads(patterns):
        base = f"/proc/{p}/task/{t}"
        try:
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


def wait_for_thread(patterns, prefix, nth, seen, timeout_at):
    """Returns (pid, tid) of the nth distinct thread whose name starts with prefix; seen keeps
    the ones found so far across calls."""
    gone_since, found_ever = None, bool(seen)
    while time.monotonic() < timeout_at:
        found = False
        for p, t, name in threads(patterns):
            found = found_ever = True
            if name.startswith(prefix) and (p, t) not in seen:
                seen.add((p, t))
                if len(seen) >= nth:
                    return p, t
        if found:
            gone_since = None
        elif found_ever:  # the processes it watched have exited
            gone_since = gone_since or time.monotonic()
            if time.monotonic() - gone_since > 2:
                sys.exit(f"threadstat: the processes ended before a thread named {prefix}* lived through the window")
        time.sleep(0.05)
    sys.exit(f"threadstat: saw {len(seen)} of {nth} threads named {prefix}* before the timeout")


def measure(patterns, watched, after, window):
    """Snapshots before and after the window; with watched, the window ends at the last sample
    taken while that thread lived. Returns (before, after, seconds, whether it ended early)."""
    time.sleep(after)
    before, t0 = snapshot(patterns), time.monotonic()
    last, elapsed = before, 0.0
    while time.monotonic() - t0 < window:
        time.sleep(min(0.25, window))
        snap = snapshot(patterns)
        if watched is not None and not any(k[:2] == watched for k in snap):
            return before, last, elapsed, True
        last, elapsed = snap, time.monotonic() - t0
    return before, last, elapsed, False


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
    if a.window <= 0:
        ap.error(f"--for must be more than 0 seconds, got {a.window}")
    patterns = a.match or ["io.flinkgo.shim.bench.BridgeBench", "flinkgo-testagent"]
    if not os.path.exists("/proc/self/schedstat"):
        sys.exit("threadstat: /proc/<pid>/task/<tid>/schedstat is missing; it needs a Linux kernel with schedstats")
    if a.thread:
        # A thread that ends inside the window (a short-lived one of the same name, or the
        # warm-up's) is not the run's: measure the next one instead.
        seen, timeout_at, nth = set(), time.monotonic() + a.timeout, a.nth
        while True:
            watched = wait_for_thread(patterns, a.thread, nth, seen, timeout_at)
            before, after, elapsed, ended = measure(patterns, watched, a.after, a.window)
            if not ended:
                break
            print(f"threadstat: thread {watched[1]} ({a.thread}*) ended {elapsed:.1f} s into the window;"
                  " measuring the next one", file=sys.stderr)
            nth = len(seen) + 1
    else:
        before, after, elapsed, _ = measure(patterns, None, a.after, a.window)
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
