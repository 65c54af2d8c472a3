#!/usr/bin/python3
"""The dry run against the SQL oracle on a kept cluster, alone: the figures the daily run's
target is stated in (the dry run's time and peak memory, and its ratio to the best single
aggregate over check_ins in the same run), without the rest of bench.py's hour at 10 million
users (real runs, the insert path).

    /usr/bin/python3 bench/dry-run-oracle.py --cluster-dir DIR --users N [--repeat R] [--warm W] [--explain]
        [--floor] [--shared-buffers SIZE] [--prewarm] [--binary BINARY]

DIR is a cluster bench.py keeps (`bench.py --cluster-dir DIR --users N`, see
bench/history/ten-million.md); a generation not yet complete is continued first, as bench.py would.
Reported: the oracle's aggregate (client and server-only, medians of R), the dry run `--format json`
end to end (each run's time, CPU and peak RSS), the users it lists against the due window, and the
ratio. It checks that the dry run exits 0 and lists the summary's due window (no more than the
due-set query yields), and that the population is unchanged after (it only reads), and exits 1 if
not.

The oracle's aggregates read all of check_ins, more than the machine's memory at 10 million
users: the pages the dry run reads are out of the cache when it starts, and its first runs
measure the disk. `--warm W` runs W dry runs after the oracle and before the timed ones, printed
and checked but not in the medians: the ratio is then the oracle's own runs against warm dry
runs, in one invocation. Before and after them the share of each relation the dry run reads that
is in the page cache is printed (`fincore` over the relation's files). `--explain` adds one more
dry run, untimed, with `auto_explain` logging the plan of each statement over 200 ms (actual rows,
shared buffers hit and read, I/O time) and prints those plans: where a dry run's time goes.
Each dry run's CPU is given for the notifier and for the server (its processes', the sessions'
and parallel workers' included). `--no-oracle` runs the dry runs alone (no ratio), to look into
a warm dry run without the oracle's scans pushing its pages out first. `--floor` adds the server's
part alone: the due-set statements of one more dry run (one a share), read back from the server's
log with their parameters, run R times side by side with their rows written to /dev/null on the
server — the CPU no notifier can take away, and on this machine's cores the least time a dry run
can take. `--shared-buffers SIZE`
starts the kept cluster with that much (1GB by default, as bench.py); `--prewarm` loads the
tables the dry run probes and their indexes into them after the oracle (pg_prewarm, sequential
reads: a minute where the cold dry run's random reads took over ten at 10 million users).
"""
import argparse
import importlib.util
import json
import os
import re
import subprocess
import shutil
import statistics
import sys
import tempfile
import threading
import time

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
    parser.add_argument("--warm", type=int, default=0, help="dry runs after the oracle, before the timed ones (printed, not timed)")
    parser.add_argument("--explain", action="store_true", help="then one dry run with auto_explain: its statements' plans, buffers, I/O")
    parser.add_argument("--no-oracle", action="store_true", help="the dry runs alone, without the oracle's scans before them "
                                                                  "(no ratio): for looking into a warm dry run")
    bench.add_server_memory_args(parser, "the kept cluster's shared_buffers")
    parser.add_argument("--prewarm", action="store_true", help="after the oracle, load what the dry run's probes read into the "
                                                               "shared buffers (pg_prewarm) before the dry runs")
    parser.add_argument("--floor", action="store_true", help="then the server's part alone: the dry run's due-set statements, "
                        "as one dry run sent them, run side by side with nothing done with their rows (COPY to /dev/null)")
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
        cluster = bench.Cluster.kept(args.cluster_dir, args.shared_buffers, args.huge_pages)
        url = cluster.database_url("bench")
        env = bench.notifier_env(url)
        rows = bench.kept_population(cluster, args, env)
        before = bench.kept_snapshot(url)
        d = (bench.RUN_DATE, bench.RUN_DATE)
        oracle = [] if args.no_oracle else [bench.query_seconds(url, ORACLE_SQL, d) for _ in range(args.repeat)]
        oracle_server = [] if args.no_oracle else [bench.server_seconds(url, ORACLE_SQL, d) for _ in range(args.repeat)]
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
        def dry_run():
            server_before = server_cpu(cluster)
            with tempfile.TemporaryFile("w+", dir=base) as report:
                elapsed, rss, status, cpu = bench.run_notifier(
                    args.binary, ["--run-now", "--dry-run", "--format", "json", "--date", bench.RUN_DATE], env, report)
                report.seek(0)
                listed = json.load(report) if status == 0 else None
            bench.check(status == 0, f"dry run exit status {status}")
            return elapsed, rss, cpu, listed["summary"], len(listed["users"]), server_cpu(cluster) - server_before
        cached = [("before the dry runs" if args.no_oracle else "after the oracle", cache_residency(cluster, url))]
        prewarmed = bench.prewarm(url) if args.prewarm else None
        warm = [dry_run() for _ in range(args.warm)]
        if warm:
            cached.append((f"after {args.warm} warming dry runs", cache_residency(cluster, url)))
        dry = [dry_run() for _ in range(args.repeat)]
        plans = explained_dry_run(cluster, url, dry_run) if args.explain else None
        floor = server_floor(cluster, url, dry_run, args.repeat) if args.floor else None
        summaries = {json.dumps(r[3], sort_keys=True) for r in warm + dry}
        bench.check(len(summaries) == 1, f"the dry runs disagree: {summaries}")
        in_window = dry[0][4] - dry[0][3].get("stale", 0)
        bench.check(0 < in_window <= window + future + paused,
                    f"the dry run lists {in_window} users in the window, the due set holds at most {window + future + paused}")
        t_dry = statistics.median(r[0] for r in dry)
        mb = lambda kb: f"{kb / 1024:.1f}"
        print(f"{args.users:,} users, {rows:,} check-ins ({args.cluster_dir}), run date {bench.RUN_DATE}, medians of {args.repeat}, "
              f"{os.cpu_count()} cores, {args.binary}")
        if oracle:
            t_oracle, s_oracle = statistics.median(o[0] for o in oracle), statistics.median(oracle_server)
            print(f"SQL oracle (best single aggregate over check_ins): {t_oracle:.3f} s ({', '.join(f'{o[0]:.3f}' for o in oracle)}), "
                  f"server only {s_oracle:.3f} s; {oracle[0][1]:,} users")
        print(f"dry run --format json, end to end: {t_dry:.3f} s ({', '.join(f'{r[0]:.3f}' for r in dry)}), CPU of the notifier "
              f"{', '.join(f'{r[2]:.2f}' for r in dry)} s, of the server {', '.join(f'{r[5]:.2f}' for r in dry)} s, peak RSS {', '.join(mb(r[1]) for r in dry)} MB; "
              f"{dry[0][4]:,} users listed ({in_window:,} in the window of {window:,}): {dry[0][3]}")
        if prewarmed:
            print(f"prewarmed (pg_prewarm, shared_buffers = {args.shared_buffers}): {prewarmed[1]:,.0f} MB in {prewarmed[0]:.0f} s")
        if warm:
            print(f"warming dry runs (not timed): {', '.join(f'{r[0]:.3f}' for r in warm)} s, CPU of the notifier "
                  f"{', '.join(f'{r[2]:.2f}' for r in warm)} s, of the server {', '.join(f'{r[5]:.2f}' for r in warm)} s")
        if oracle:
            print(f"dry run vs the oracle: {t_oracle / t_dry:.1f}x faster (server only: {s_oracle / t_dry:.1f}x)"
                  + (f", the dry runs warmed by {args.warm}" if warm else ", the dry runs cold after the oracle's scans"))
        print("in the page cache (fincore), of the relations the dry run reads:")
        for when, residency in cached:
            print(f"  {when}: " + "; ".join(f"{name} {res / 2**30:.2f} of {size / 2**30:.2f} GB" for name, res, size in residency))
        if plans is not None:
            print(f"the dry run with auto_explain ({plans[0][0]:.3f} s, CPU of the notifier {plans[0][2]:.2f} s, of the server "
                  f"{plans[0][5]:.2f} s; not timed): {len(plans[1])} statements over 200 ms")
            for plan in plans[1]:
                print(plan)
        if floor is not None:
            print(f"the server's part alone ({len(floor[0])} due-set statements of one dry run side by side, their rows to "
                  f"/dev/null; rows {', '.join(f'{n:,}' for n in floor[0])}): {statistics.median(r[0] for r in floor[1]):.3f} s "
                  f"({', '.join(f'{r[0]:.3f}' for r in floor[1])}), server CPU {', '.join(f'{r[1]:.2f}' for r in floor[1])} s: "
                  f"a dry run takes at least {statistics.median(r[1] for r in floor[1]) / os.cpu_count():.2f} s on these "
                  f"{os.cpu_count()} cores, whatever the notifier does")
    finally:
        if cluster:
            if before:
                bench.kept_restore(cluster.database_url("bench"), before)
            cluster.shutdown()
        shutil.rmtree(base, ignore_errors=True)


def server_cpu(cluster):
    """The CPU seconds (user and system) the cluster's processes have used so far: the
    postmaster's own, its live children's, and those of the children it has reaped (each
    session's backend, each parallel worker, once it exits). Read after the sessions of a run
    are gone (a backend ends a moment after its client), the difference is the run's."""
    time.sleep(0.5)
    with open(os.path.join(cluster.dir, "data", "postmaster.pid")) as f:
        postmaster = int(f.readline())
    ticks = 0
    for entry in os.listdir("/proc"):
        try:
            with open(f"/proc/{entry}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if entry == str(postmaster):
            ticks += sum(int(v) for v in fields[11:15])  # utime, stime, cutime, cstime
        elif entry.isdigit() and fields[1] == str(postmaster):
            ticks += int(fields[11]) + int(fields[12])
    return ticks / os.sysconf("SC_CLK_TCK")


# The relations a dry run reads, grouped as the page-cache figures are printed.
READ_BY_THE_DRY_RUN = [("summary", "sileme.user_last_check_in"), ("users", "public.users"),
                       ("emergency_contacts", "public.emergency_contacts"), ("check_ins", "public.check_ins")]


def cache_residency(cluster, url):
    """Of each relation the dry run reads (its table, and its indexes together), the bytes in the
    operating system's page cache and the bytes on disk: [(name, resident, size)]. Shared buffers
    are copies of such pages, so a page in neither comes from the disk."""
    conn = psycopg2.connect(url)
    cur = conn.cursor()
    result = []
    for name, table in READ_BY_THE_DRY_RUN:
        cur.execute("""SELECT pg_relation_filepath(%(t)s::regclass), NULL
                       UNION ALL
                       SELECT pg_relation_filepath(i.indexrelid), i.indexrelid::regclass::text
                       FROM pg_index i WHERE i.indrelid = %(t)s::regclass""", {"t": table})
        groups = {"": [], " indexes": []}
        for path, index in cur.fetchall():
            files = [os.path.join(cluster.dir, "data", path)]
            while os.path.exists(f"{files[0]}.{len(files)}"):
                files.append(f"{files[0]}.{len(files)}")
            groups[" indexes" if index else ""] += files
        for suffix, files in groups.items():
            out = subprocess.run(["fincore", "-b", "-n", "-r", "-o", "RES,SIZE"] + files, check=True,
                                 capture_output=True, text=True).stdout.split()
            result.append((name + suffix, sum(int(v) for v in out[0::2]), sum(int(v) for v in out[1::2])))
    conn.close()
    return result


AUTO_EXPLAIN = [("session_preload_libraries", "auto_explain"), ("auto_explain.log_min_duration", "200ms"),
                ("auto_explain.log_analyze", "on"), ("auto_explain.log_buffers", "on"), ("auto_explain.log_format", "json"),
                ("track_io_timing", "on")]


def logged_dry_run(cluster, url, dry_run, settings, load=None):
    """One dry run with `settings` ([(name, value)]) in force for the server's new sessions (set by
    ALTER SYSTEM and a reload, then reset the same way), the library `load` loaded first when
    given (its settings are known to ALTER SYSTEM only once loaded): its figures, and what the
    server's log gained meanwhile."""
    conn = psycopg2.connect(url)
    conn.autocommit = True
    cur = conn.cursor()
    if load:
        cur.execute(f"LOAD '{load}'")
    log_path = os.path.join(cluster.dir, "log")
    start = os.path.getsize(log_path)
    try:
        for name, value in settings:
            cur.execute(f"ALTER SYSTEM SET {name} = '{value}'")
        cur.execute("SELECT pg_reload_conf()")
        figures = dry_run()
    finally:
        for name, _ in settings:
            cur.execute(f"ALTER SYSTEM RESET {name}")
        cur.execute("SELECT pg_reload_conf()")
        conn.close()
    with open(log_path) as f:
        f.seek(start)
        return figures, f.read()


def explained_dry_run(cluster, url, dry_run):
    """One dry run with auto_explain on for the server's new sessions (`logged_dry_run`): returns
    its figures (as the other dry runs') and its statements' plans over 200 ms, as read from the
    server's log, each rendered one node a line."""
    explained, text = logged_dry_run(cluster, url, dry_run, AUTO_EXPLAIN, load="auto_explain")
    plans = []
    for entry in re.split(r"\n(?=\d{4}-\d\d-\d\d \d\d:\d\d:\d\d)", text):
        head, found, body = entry.partition("plan:\n")
        if found:
            duration = re.search(r"duration: ([0-9.]+) ms", head)
            logged = json.loads(body)
            plans.append(f"  {float(duration.group(1)) / 1000:.3f} s: {' '.join(logged['Query Text'].split())[:160]}...\n"
                         + "\n".join(plan_lines(logged["Plan"], 2)))
    return explained, plans


def server_floor(cluster, url, dry_run, repeat):
    """The server's part of the dry run alone: one dry run with every statement logged with its
    parameters (log_min_duration_statement = 0), its due-set statements (one a share) read back
    from the server's log as the notifier sent them — not a copy of its SQL — and run `repeat`
    times side by side, one session each, as `COPY (...) TO '/dev/null'`: the server plans, probes,
    sorts and formats every row as for the notifier, and nobody reads them. The server's CPU is
    `server_cpu`'s, of all its processes. Returns ([rows of each], [(wall s, server CPU s)])."""
    _, text = logged_dry_run(cluster, url, dry_run, [("log_min_duration_statement", "0")])
    statements = []
    for found in re.finditer(r"execute <unnamed>: DECLARE sileme_stream NO SCROLL CURSOR FOR (WITH due AS \(.*?)\n"
                             r"\S+ \S+ \S+ \[\d+\] DETAIL:  parameters: (.*?)\n", text, re.S):
        values = dict(re.findall(r"\$(\d+) = (NULL|'(?:[^']|'')*')", found.group(2)))
        statements.append(re.sub(r"\$(\d+)\b", lambda m: values[m.group(1)], found.group(1)))
    bench.check(len(statements) > 0, "no due-set statement in the server's log of the dry run")
    sessions = [psycopg2.connect(url) for _ in statements]
    try:
        for session in sessions:
            session.autocommit = True
            session.cursor().execute("SET jit = off")  # as the notifier runs it
        rows, runs, failures = [0] * len(statements), [], []
        def copy(index):
            try:
                c = sessions[index].cursor()
                c.execute(f"COPY ({statements[index]}) TO '/dev/null'")
                rows[index] = c.rowcount
            except psycopg2.Error as error:
                failures.append(error)
        for _ in range(repeat):
            before, started = server_cpu(cluster), time.monotonic()
            threads = [threading.Thread(target=copy, args=(i,)) for i in range(len(statements))]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
            elapsed = time.monotonic() - started
            runs.append((elapsed, server_cpu(cluster) - before))
            bench.check(not failures, f"a due-set statement of the log failed: {failures[:1]}")
        return rows, runs
    finally:
        for session in sessions:
            session.close()


def plan_lines(node, depth):
    """One line per plan node: its kind and relation, rows and loops, its time over all loops, and the
    shared buffers it (and its children) hit and read, with the time the reads took."""
    what = " ".join(str(node[k]) for k in ("Node Type", "Index Name", "Relation Name", "CTE Name")
                    if k in node)
    line = (f"{'  ' * depth}{what}: rows {node.get('Actual Rows')} x {node.get('Actual Loops')} loops, "
            f"{node.get('Actual Total Time', 0) * node.get('Actual Loops', 1):.0f} ms, shared hit {node.get('Shared Hit Blocks', 0):,} "
            f"read {node.get('Shared Read Blocks', 0):,} ({node.get('I/O Read Time', 0):.0f} ms)")
    return [line] + [l for child in node.get("Plans", []) for l in plan_lines(child, depth + 1)]


if __name__ == "__main__":
    main()
