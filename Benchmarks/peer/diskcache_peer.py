#!/usr/bin/env python3
"""The peer for `offline-ttl-bench peer`: python-diskcache making the same decision as
OfflineAccessGate.checkEligibility().

One decision = in one transaction (BEGIN IMMEDIATE ... COMMIT), read the cached entry, which
diskcache refuses once its expiry has passed (the wall clock against the expiry time), read the
stored observation time (the clock mark), refuse a clock behind it, and durably store
max(mark, now). The cache uses SQLite WAL with synchronous=FULL, so every commit is fsynced: the
same durability as our mark store.

Without --serve it times --count decisions and prints one JSON object (p50, p99, mean, in
nanoseconds). With --serve it first prints a JSON line describing the setup, then for each line
N read from stdin times N decisions and prints {"samples": [ns, ...], "fresh": F} on one line
(F: how many decisions granted offline use), until end of input: the benchmark interleaves these
rounds with its own measurements so that disk noise from other processes hits both alike.
"""

import argparse
import json
import statistics
import sys
import time

import diskcache


def quantile(sorted_samples, q):
    rank = round(q * (len(sorted_samples) - 1))
    return sorted_samples[max(0, min(rank, len(sorted_samples) - 1))]


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--dir", required=True, help="cache directory (created)")
    parser.add_argument("--count", type=int, default=2000, help="decisions to time")
    parser.add_argument("--max-age", type=float, default=7 * 86400.0, help="expiry, seconds")
    parser.add_argument("--serve", action="store_true", help="time rounds read from stdin")
    args = parser.parse_args()

    # synchronous=2 is FULL (diskcache's default is 1, NORMAL); WAL is diskcache's default.
    cache = diskcache.Cache(args.dir, sqlite_synchronous=2)
    synchronous = cache._sql("PRAGMA synchronous").fetchone()[0]
    journal_mode = cache._sql("PRAGMA journal_mode").fetchone()[0]
    if synchronous != 2:
        sys.exit(f"error: SQLite synchronous is {synchronous}, expected 2 (FULL)")

    # The online sign-in: one item with an expiry, and the first observation time.
    cache.set("item", b"x" * 64, expire=args.max_age)
    cache.set("mark", time.time_ns())

    def decide():
        with cache.transact():
            now = time.time_ns()
            item = cache.get("item")  # None once expired
            mark = cache.get("mark")
            fresh = item is not None and mark is not None and now >= mark
            cache.set("mark", now if mark is None else max(mark, now))
        return fresh

    for _ in range(min(50, args.count)):  # warm up
        decide()

    def time_decisions(count):
        samples = []
        fresh = 0
        for _ in range(count):
            start = time.perf_counter_ns()
            fresh += decide()
            samples.append(time.perf_counter_ns() - start)
        return samples, fresh

    setup = {
        "synchronous": synchronous,
        "journal_mode": journal_mode,
        "diskcache_version": diskcache.__version__,
        "python_version": sys.version.split()[0],
    }
    if args.serve:
        print(json.dumps(setup), flush=True)
        for line in sys.stdin:
            if line.strip():
                samples, fresh = time_decisions(int(line))
                print(json.dumps({"samples": samples, "fresh": fresh}), flush=True)
        cache.close()
        return

    samples = []
    fresh = 0
    for _ in range(args.count):
        start = time.perf_counter_ns()
        fresh += decide()
        samples.append(time.perf_counter_ns() - start)
    cache.close()
    samples.sort()
    print(json.dumps({
        "count": args.count,
        "fresh": fresh,
        "p50_ns": quantile(samples, 0.5),
        "p99_ns": quantile(samples, 0.99),
        "mean_ns": statistics.fmean(samples),
        **setup,
    }))


if __name__ == "__main__":
    main()
