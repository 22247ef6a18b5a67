#!/usr/bin/env python3
"""An independent model of the eligibility rule, for differential testing.

The rule (the Rules article's eligibility rule): for item times w, time now, mark m (None on first use) and a
nonnegative max age A, in one unit:
  - no items: "unavailable", the mark unchanged;
  - otherwise previous = m if given else now; the mark becomes the larger of previous and now;
    the answer is "fresh" when the clock is not behind previous, no item is after now, and
    now minus the oldest item is at most A; else "expired", with every reason that applies,
    in the order clock_behind_mark, item_from_future, too_old.
Python integers are unbounded, so this model has no overflow to get wrong.

Subcommands:
  generate --count N --seed S    cases as JSON Lines on stdout
  check CASES ACTUAL             compare the binary's output with the model; prints a JSON
                                 summary line and exits 1 on any mismatch
"""
import argparse
import json
import random
import sys

INT64_MIN = -(2**63)
INT64_MAX = 2**63 - 1


def model(written_at, now, mark, max_age):
    """Returns (status, mark, reasons) for one case."""
    if len(written_at) == 0:
        return "unavailable", mark, []
    previous = now if mark is None else mark
    reasons = []
    if now < previous:
        reasons.append("clock_behind_mark")
    if any(t > now for t in written_at):
        reasons.append("item_from_future")
    oldest = written_at[0]
    for t in written_at:
        oldest = t if t < oldest else oldest
    if now - oldest > max_age:
        reasons.append("too_old")
    status = "expired" if reasons else "fresh"
    return status, (now if now > previous else previous), reasons


def clamp(value):
    return INT64_MIN if value < INT64_MIN else INT64_MAX if value > INT64_MAX else value


def anchor(rng):
    """An interesting Int64: extremes, around zero, a plausible epoch time, or anything."""
    choice = rng.random()
    if choice < 0.15:
        return rng.choice([INT64_MIN, INT64_MIN + 1, INT64_MAX - 1, INT64_MAX, -1, 0, 1])
    if choice < 0.35:
        return rng.randint(-1000, 1000)
    if choice < 0.60:
        return 1_700_000_000_000_000_000 + rng.randint(-10**15, 10**15)
    return rng.randint(INT64_MIN, INT64_MAX)


def max_age_value(rng):
    choice = rng.random()
    if choice < 0.15:
        return rng.choice([0, 1, 2, INT64_MAX - 1, INT64_MAX])
    if choice < 0.45:
        return rng.randint(0, 1000)
    if choice < 0.75:
        return rng.randint(0, 30 * 86_400 * 10**9)
    return rng.randint(0, INT64_MAX)


def near(rng, value):
    """value, or one unit either side (clamped to Int64)."""
    return clamp(value + rng.choice([-1, 0, 1]))


def generate_case(rng):
    now = anchor(rng)
    max_age = max_age_value(rng)
    # The mark: absent (first use), near now (rollback boundary), or anywhere.
    r = rng.random()
    if r < 0.2:
        mark = None
    elif r < 0.7:
        mark = near(rng, now)
    else:
        mark = anchor(rng)
    # The items: none, or an oldest near the age boundary and a newest near now.
    r = rng.random()
    if r < 0.1:
        items = []
    else:
        count = rng.choice([1, 1, 2, 3, 5])
        kind = rng.random()
        if kind < 0.45:
            oldest = clamp(now - max_age + rng.choice([-1, 0, 1]))  # age == max age +/- 1
        elif kind < 0.6:
            oldest = near(rng, now)
        else:
            oldest = anchor(rng)
        if rng.random() < 0.5:
            newest = near(rng, now)  # newest == now +/- 1
        else:
            newest = anchor(rng)
        low, high = min(oldest, newest), max(oldest, newest)
        items = [oldest, newest][:count]
        while len(items) < count:
            items.append(rng.randint(low, high))
        rng.shuffle(items)
    return {"written_at": items, "now": now, "mark": mark, "max_age": max_age}


def generate(count, seed, out):
    rng = random.Random(seed)
    for _ in range(count):
        out.write(json.dumps(generate_case(rng), separators=(",", ":")))
        out.write("\n")


def check(cases_path, actual_path):
    mismatches = []
    cases = 0
    boundary = {"age_eq_max": 0, "age_eq_max_plus_1": 0, "now_eq_mark_minus_1": 0,
                "newest_eq_now_plus_1": 0, "empty": 0, "no_mark": 0, "int64_extreme": 0}
    with open(cases_path) as case_lines, open(actual_path) as actual_lines:
        for number, (case_line, actual_line) in enumerate(zip(case_lines, actual_lines), 1):
            case = json.loads(case_line)
            actual = json.loads(actual_line)
            cases += 1
            w, now, mark, max_age = case["written_at"], case["now"], case["mark"], case["max_age"]
            expected = model(w, now, mark, max_age)
            got = (actual.get("status"), actual.get("mark"), actual.get("reasons"))
            if got != expected:
                if len(mismatches) < 10:
                    mismatches.append({"line": number, "case": case,
                                       "expected": list(expected), "actual": actual})
                else:
                    mismatches.append(None)
            if not w:
                boundary["empty"] += 1
            else:
                age = now - min(w)
                boundary["age_eq_max"] += age == max_age
                boundary["age_eq_max_plus_1"] += age == max_age + 1
                boundary["newest_eq_now_plus_1"] += max(w) == now + 1
            if mark is None:
                boundary["no_mark"] += 1
            elif now == mark - 1:
                boundary["now_eq_mark_minus_1"] += 1
            values = w + [now, max_age] + ([] if mark is None else [mark])
            boundary["int64_extreme"] += any(v in (INT64_MIN, INT64_MAX) for v in values)
        extra = sum(1 for _ in actual_lines) + sum(1 for _ in case_lines)
    summary = {"cases": cases, "mismatches": len(mismatches), "extra_lines": extra,
               "boundary_counts": boundary,
               "first_mismatches": [m for m in mismatches if m is not None]}
    print(json.dumps(summary, separators=(",", ":")))
    return 0 if not mismatches and extra == 0 else 1


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    gen = sub.add_parser("generate")
    gen.add_argument("--count", type=int, default=100_000)
    gen.add_argument("--seed", type=int, default=1)
    chk = sub.add_parser("check")
    chk.add_argument("cases")
    chk.add_argument("actual")
    args = parser.parse_args()
    if args.command == "generate":
        generate(args.count, args.seed, sys.stdout)
        return 0
    return check(args.cases, args.actual)


if __name__ == "__main__":
    sys.exit(main())
