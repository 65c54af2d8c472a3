#!/usr/bin/python3
"""The dry run against the SQL oracle on a kept cluster, alone: the figures the daily run's
target is stated in (the dry run's time and peak memory, and its ratio to the best single
aggregate over check_ins in the same run), without the rest of bench.py's hour at 10 million
users (real runs, the insert path).

    /usr/bin/python3 bench/dry-run-oracle.py --cluster-dir DIR --users N [--repeat R] [--binary BINARY]

DIR is a cluster bench.py keeps (`bench.py --cluster-dir DIR --users N`, see bench/README.md);
a generation not yet complete is continued first, as bench.py would. Reported: the oracle's
aggregate (client and server-only, medians of R), the dry run `--format json` end to end (each
run's time, CPU and peak RSS), the users it lists against the due window, and the ratio. It
checks that the dry run exits 0 and lists the summary's due window (no more than the due-set
query yields), and that the population is unchanged after (it only reads), and exits 1 if not.
"""
import argparse
import importlib.util
import json
import os
import shutil
import statistics
import sys
import tempfile

import psycopg2

HERE = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location("bench", os.path.join(HERE, "bench.py"))
bench = importlib.util.module_from_spec(spec)
spec.loader.exec_module(bench)

ORACLE_SQL = """
    SELECT user_id, max(check_in_date) FROM check_ins WHERE check_in_date < %s::date
    GROUP BY user_id HAVING max(check_in_date) <= %s::date - 3"""


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--cluster-dir", required=True)
    parser.add_argument("--users", type=int, required=True)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--guard-share", type=float, default=0.01)
    parser.add_argument("--contact-share", type=float, default=0.3)
    parser.add_argument("--chunk-users", type=int, default=bench.population.CHUNK_USERS)
    parser.add_argument("--min-free-gb", type=float, default=15)
    parser.add_argument("--binary", default=os.path.join(bench.ROOT, ".build/release/sileme-notifier"))
    args = parser.parse_args()
    base = tempfile.mkdtemp(prefix="sileme-oracle-", dir="/var/tmp")
    cluster = before = None
    try:
        cluster = bench.Cluster.kept(args.cluster_dir)
        url = cluster.database_url("bench")
        env = bench.notifier_env(url)
        rows = bench.kept_population(cluster, args, env)
        before = bench.kept_snapshot(url)
        d = (bench.RUN_DATE, bench.RUN_DATE)
        oracle = [bench.query_seconds(url, ORACLE_SQL, d) for _ in range(args.repeat)]
        oracle_server = [bench.server_seconds(url, ORACLE_SQL, d) for _ in range(args.repeat)]
        conn = psycopg2.connect(url)
        cur = conn.cursor()
        # The due set's three parts (bench.py's due-set query): the summary's window, the users
        # whose latest row is future-dated (their real latest may be in it), the paused ones.
        cur.execute("""SELECT (SELECT count(*) FROM sileme.user_last_check_in
                               WHERE last_check_in_date BETWEEN %(d)s::date - 10 AND %(d)s::date - 3),
                              (SELECT count(*) FROM sileme.user_last_check_in WHERE last_check_in_date > %(d)s::date + 1),
                              (SELECT count(*) FROM users WHERE paused_until >= %(d)s::date - 10)""", {"d": bench.RUN_DATE})
        window, future, paused = cur.fetchone()
        conn.close()
        dry = []
        for _ in range(args.repeat):
            with tempfile.TemporaryFile("w+", dir=base) as report:
                elapsed, rss, status, cpu = bench.run_notifier(
                    args.binary, ["--run-now", "--dry-run", "--format", "json", "--date", bench.RUN_DATE], env, report)
                report.seek(0)
                listed = json.load(report) if status == 0 else None
            bench.check(status == 0, f"dry run exit status {status}")
            dry.append((elapsed, rss, cpu, listed["summary"], len(listed["users"])))
        summaries = {json.dumps(r[3], sort_keys=True) for r in dry}
        bench.check(len(summaries) == 1, f"the dry runs disagree: {summaries}")
        in_window = dry[0][4] - dry[0][3].get("stale", 0)
        bench.check(0 < in_window <= window + future + paused,
                    f"the dry run lists {in_window} users in the window, the due set holds at most {window + future + paused}")
        t_oracle, s_oracle = statistics.median(o[0] for o in oracle), statistics.median(oracle_server)
        t_dry = statistics.median(r[0] for r in dry)
        mb = lambda kb: f"{kb / 1024:.1f}"
        print(f"{args.users:,} users, {rows:,} check-ins ({args.cluster_dir}), run date {bench.RUN_DATE}, medians of {args.repeat}, "
              f"{os.cpu_count()} cores, {args.binary}")
        print(f"SQL oracle (best single aggregate over check_ins): {t_oracle:.3f} s ({', '.join(f'{o[0]:.3f}' for o in oracle)}), "
              f"server only {s_oracle:.3f} s; {oracle[0][1]:,} users")
        print(f"dry run --format json, end to end: {t_dry:.3f} s ({', '.join(f'{r[0]:.3f}' for r in dry)}), CPU of the notifier "
              f"{', '.join(f'{r[2]:.2f}' for r in dry)} s, peak RSS {', '.join(mb(r[1]) for r in dry)} MB; "
              f"{dry[0][4]:,} users listed ({in_window:,} in the window of {window:,}): {dry[0][3]}")
        print(f"dry run vs the oracle: {t_oracle / t_dry:.1f}x faster (server only: {s_oracle / t_dry:.1f}x)")
    finally:
        if cluster:
            if before:
                bench.kept_restore(cluster.database_url("bench"), before)
            cluster.shutdown()
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
