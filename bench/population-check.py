#!/usr/bin/python3
"""The resumable generation makes bench.py's population exactly: one throwaway cluster, the same
N users and seed generated at once (bench.generate, as bench.py without --cluster-dir) and
step by step (population.generate_resumable, as --cluster-dir), the second interrupted twice and
continued by new sessions; then every table it writes compared row by row (fingerprints in
SQL), the summary's due window and the SQL oracle's aggregate, and the notifier's dry-run report
byte for byte. Exits 1 when anything differs.

    /usr/bin/python3 bench/population-check.py [--users 100000] [--chunks 7] [--binary BINARY]
"""
import argparse
import importlib.util
import os
import shutil
import subprocess
import sys
import tempfile

import psycopg2

HERE = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location("bench", os.path.join(HERE, "bench.py"))
bench = importlib.util.module_from_spec(spec)
spec.loader.exec_module(bench)
population = bench.population

# Each table the generation writes, in a fixed order, as text; the check-ins with their ids (the
# chunks must lay them out as the one statement does).
FINGERPRINTS = {
    "users": "SELECT id, name, emergency_email, paused_until FROM users ORDER BY id",
    "emergency_contacts": "SELECT user_id, email, position FROM emergency_contacts ORDER BY user_id, position",
    "known_contacts": "SELECT user_id, contact, state FROM sileme.known_contacts ORDER BY user_id, contact",
    "check_ins": "SELECT id, user_id, check_in_date FROM check_ins ORDER BY id",
    "notification_logs": """SELECT user_id, notification_date, contact, consecutive_miss_days, last_check_in_date, message_id
                            FROM notification_logs ORDER BY user_id, contact""",
    "user_last_check_in": "SELECT user_id, last_check_in_date, last_notified_date FROM sileme.user_last_check_in ORDER BY user_id",
    # The summary's due window, and the SQL oracle bench.py times: the aggregate over check_ins.
    "due window": f"""SELECT user_id, last_check_in_date, last_notified_date FROM sileme.user_last_check_in
                      WHERE last_check_in_date BETWEEN DATE '{bench.RUN_DATE}' - 10 AND DATE '{bench.RUN_DATE}' - 3 ORDER BY user_id""",
    "oracle": f"""SELECT user_id, max(check_in_date) FROM check_ins WHERE check_in_date < DATE '{bench.RUN_DATE}'
                  GROUP BY user_id HAVING max(check_in_date) <= DATE '{bench.RUN_DATE}' - 3 ORDER BY user_id""",
}


def fingerprints(url):
    conn = psycopg2.connect(url)
    cur = conn.cursor()
    result = {}
    for name, sql in FINGERPRINTS.items():
        cur.execute(f"SELECT count(*), md5(coalesce(string_agg(q::text, '|'), '')) FROM ({sql}) q")
        result[name] = cur.fetchone()
    conn.close()
    return result


def dry_run(binary, env):
    out = subprocess.run([binary, "--run-now", "--dry-run", "--format", "json", "--date", bench.RUN_DATE], env=env,
                         capture_output=True, check=True)
    return out.stdout


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--users", type=int, default=100_000)
    parser.add_argument("--chunks", type=int, default=7, help="about this many chunks of check-ins")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--binary", default=os.path.join(bench.ROOT, ".build/release/sileme-notifier"))
    args = parser.parse_args()
    base = tempfile.mkdtemp(prefix="sileme-population-", dir="/var/tmp")
    cluster = None
    try:
        cluster = bench.Cluster(base)
        once_url, once_env = bench.migrated_database(cluster, args.binary, "once")
        conn = psycopg2.connect(once_url)
        once_rows = bench.generate(conn, args.users, 0.01, 0.3, seed=args.seed)
        conn.close()

        kept_url, kept_env = bench.migrated_database(cluster, args.binary, "kept")
        model = population.Model(args.users, 0.01, 0.3, 0.03, args.seed, bench.RUN_DATE, shape="bench_gen.shape", temporary=False)
        chunk_users = -(-int(args.users * 1.01) // args.chunks)
        # Stopped after the first steps and again among the chunks; each time a new session goes on.
        for stop_after in (3, 6, None):
            conn = psycopg2.connect(kept_url)
            try:
                kept_rows = population.generate_resumable(conn, model, bench.log, chunk_users, stop_after)
            except population.Interrupted as stopped:
                bench.log(f"interrupted before {stopped}")
            conn.close()
        conn = psycopg2.connect(kept_url)
        cur = conn.cursor()
        cur.execute("SELECT count(*) FROM bench_gen.progress WHERE step LIKE 'check_ins %'")
        chunks = cur.fetchone()[0]
        complete = population.is_complete(conn)
        again = population.generated_rows(conn)
        conn.close()

        failures = []
        if complete != model.params():
            failures.append(f"not marked complete with its parameters: {complete}")
        if chunks < 2:
            failures.append(f"only {chunks} chunk(s) of check-ins")
        if not once_rows == kept_rows == again:
            failures.append(f"check-ins: {once_rows} at once, {kept_rows} step by step, {again} in the progress rows")
        once, kept = fingerprints(once_url), fingerprints(kept_url)
        for name in FINGERPRINTS:
            status = "same" if once[name] == kept[name] else "DIFFERENT"
            print(f"{name:<20} {once[name][0]:>10,} rows  {status}")
            if once[name] != kept[name]:
                failures.append(f"{name}: {once[name]} at once, {kept[name]} step by step")
        report_once, report_kept = dry_run(args.binary, once_env), dry_run(args.binary, kept_env)
        print(f"{'dry-run report':<20} {len(report_once):>10,} bytes {'same' if report_once == report_kept else 'DIFFERENT'}")
        if report_once != report_kept:
            failures.append("the dry-run reports differ")
        # Another seed is another population (the draws depend on it).
        other = bench.migrated_database(cluster, args.binary, "other")[0]
        conn = psycopg2.connect(other)
        bench.generate(conn, args.users, 0.01, 0.3, seed=args.seed + 1)
        conn.close()
        if fingerprints(other)["check_ins"] == once["check_ins"]:
            failures.append("another seed gave the same check-ins")
        print(f"{args.users:,} users, {once_rows:,} check-ins, {chunks} chunks, interrupted twice: "
              + ("the same population" if not failures else "DIFFERENT"))
        if failures:
            sys.exit("population-check: CHECK FAILED: " + "; ".join(failures))
    finally:
        if cluster:
            cluster.stop()
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
