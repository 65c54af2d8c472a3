"""bench.py's population, as steps: made at once in one transaction (`generate`), or step by step
in a kept cluster, each step committed with a row of its own, so that an interrupted generation
goes on where it stopped (`generate_resumable`).

The model (see bench.py's docstring): N users with 30 days of history before the run date D,
about 95% checking in each day, `missing_share` missing 2+ days (a third of those missing 3+ days
already alerted), the guards' data (a `guard_share` each of superseded pairs, future-dated rows
and pauses) and a `contact_share` of the users with 1-3 rows in `emergency_contacts`.

Every random draw is a hash of the user's number (and the day, for a check-in) with the seed, not
`random()`: the same seed and N give the same users, check-ins and due set whether they are made
in one statement or in chunks, today or the next day.
"""
import os
import time

# The check-ins of this many users (of the model's shape, twins included) per committed chunk.
CHUNK_USERS = 500_000


def draw(expr, salt, seed):
    """SQL text of a uniform draw in [0, 1) for the integer `expr` (a hash with the seed and
    `salt`: each kind of draw its own salt, so that draws of one user are independent)."""
    return f"((hashint8extended(({expr})::bigint, {seed * 16 + salt}) & 2147483647)::float8 / 2147483648.0)"


class Model:
    """The population's parameters and its steps' SQL; `shape` is the working table that lists
    every user with its number `g` and its days since the last check-in `k`."""

    def __init__(self, users, guard_share, contact_share, missing_share, seed, run_date, shape="shape", temporary=True):
        # At once, the check-ins' keys are dropped before the load and built after it. In a kept
        # cluster they stay: the chunks come in the keys' order (ids from the sequence, users by
        # id, each user's dates ascending), so that every insert appends to the right edge of both
        # indexes, and no sort of 300 million rows needs its own ~10 GB of temporary files.
        self.users = users
        self.guard_share = guard_share
        self.contact_share = contact_share
        self.missing_share = missing_share
        self.seed = seed
        self.run_date = run_date
        self.shape = shape
        self.temporary = temporary
        self.every = max(1, round(1 / guard_share)) if guard_share > 0 else 0
        self.rebuild_keys = temporary

    def params(self):
        return {"users": self.users, "guard_share": self.guard_share, "contact_share": self.contact_share,
                "missing_share": self.missing_share, "seed": self.seed, "run_date": self.run_date}

    def rand(self, expr, salt):
        return draw(expr, salt, self.seed)

    def prepare(self, cur):
        """Bulk load: the triggers off (the summary is filled with one aggregate at the end, as
        migration 004 does, and the known contacts as migration 010 does), the check-in indexes
        built after the load."""
        cur.execute("SET session_replication_role = replica")  # no per-row foreign-key or summary triggers
        cur.execute("TRUNCATE check_ins")
        if self.rebuild_keys:
            cur.execute("ALTER TABLE check_ins DROP CONSTRAINT check_ins_user_id_check_in_date_key")
            cur.execute("ALTER TABLE check_ins DROP CONSTRAINT check_ins_pkey")

    def make_shape(self, cur):
        T, every = self.shape, self.every
        cur.execute(f"""
            CREATE {'TEMP' if self.temporary else ''} TABLE {T} AS
            SELECT md5('u' || g)::uuid AS id, g,
                   CASE WHEN r < %s THEN 3 + ({self.rand('g', 2)} * 9)::int  -- missing 2+ days (m = 2..11; 10+ is stale)
                        WHEN r < 0.05 THEN 2                         -- missed yesterday only
                        WHEN r < 0.60 THEN 0                         -- checked in today already
                        ELSE 1 END AS k                              -- will check in later today
            FROM (SELECT g, {self.rand('g', 1)} AS r FROM generate_series(1, %s) g) s
            """, (self.missing_share, self.users))
        # The guards' users, each a `guard_share` of all, told apart by g: superseded pairs (the old
        # account went silent 3..8 days ago; its newer twin is added below), future rows, pauses.
        if every:
            cur.execute(f"UPDATE {T} SET k = 3 + (g / %s) %% 6 WHERE g %% %s = 1", (every, every))
            # Every 21st paused user (paused until D + 4, below) would otherwise be due (m = 2). The
            # random shape alone gives ~3 such users at 20,000, sometimes none: the smoke's check failed.
            cur.execute(f"UPDATE {T} SET k = 3 WHERE g %% %s = 3 AND (g / %s) %% 21 = 14", (every, every))

    def make_users(self, cur):
        T, every = self.shape, self.every
        cur.execute(f"INSERT INTO users (id, name, emergency_email) SELECT id, '用户' || g, 'user' || g || '@bench.example' FROM {T}")
        if every:
            cur.execute(f"""INSERT INTO {T} (id, g, k)
                            SELECT md5('new' || g)::uuid, -g, (g / %s) %% 2 FROM {T} WHERE g %% %s = 1""", (every, every))
            cur.execute(f"""INSERT INTO users (id, name, emergency_email)
                            SELECT md5('new' || g)::uuid, '用户' || g, ' USER' || g || '@Bench.Example' FROM {T}
                            WHERE g %% %s = 1 AND g > 0""", (every,))
            cur.execute(f"""UPDATE users u SET paused_until = %s::date - 10 + ((s.g / %s) %% 21)
                            FROM {T} s WHERE s.id = u.id AND s.g %% %s = 3""", (self.run_date, every, every))
        if not self.temporary:
            # The chunks of check-ins take the users by ranges of their ids.
            cur.execute(f"CREATE INDEX ON {T} (id) INCLUDE (g, k)")
            cur.execute(f"ANALYZE {T}")

    def make_contacts(self, cur):
        """Several contacts: a `contact_share` of the users (twins included) have 1–3 rows in
        emergency_contacts, the first one the address of users.emergency_email, as the app would
        keep it; the others their own addresses."""
        if self.contact_share > 0:
            cur.execute(f"""
                INSERT INTO emergency_contacts (user_id, email, position, created_at)
                SELECT s.id, CASE WHEN p = 1 THEN lower(btrim(u.emergency_email)) ELSE 'c' || s.g || '-' || p || '@bench.example' END,
                       p, now()
                FROM (SELECT id, g, 1 + floor({self.rand('g', 4)} * 3)::int AS n FROM {self.shape}
                      WHERE {self.rand('g', 3)} < %s) s
                JOIN users u ON u.id = s.id
                CROSS JOIN LATERAL generate_series(1, s.n) p
                """, (self.contact_share,))

    def make_known_contacts(self, cur):
        """What migration 010 does for the pairs that exist when it runs (the bulk load bypassed
        the triggers that record new pairs as pending): every pair known, as 'existing'."""
        cur.execute("""
            INSERT INTO sileme.known_contacts (user_id, contact, state)
            SELECT id, lower(btrim(emergency_email)), 'existing' FROM users
            WHERE emergency_email IS NOT NULL AND btrim(emergency_email) <> ''
            UNION
            SELECT user_id, lower(btrim(email)), 'existing' FROM emergency_contacts WHERE btrim(email) <> ''
            ON CONFLICT DO NOTHING""")

    def make_check_ins(self, cur, low=None, high=None):
        """The 30 days of check-ins of the users whose ids are in [low, high) (None: unbounded),
        in the order of their ids, each user's latest first: chunks taken in the order of their
        ranges lay the table out as one statement would."""
        bounds = "".join([" AND id >= %(low)s::uuid" if low else "", " AND id < %(high)s::uuid" if high else ""])
        cur.execute(f"""
            INSERT INTO check_ins (user_id, check_in_date, check_in_time, created_at)
            SELECT id, %(d)s::date - d, now(), now() FROM {self.shape}, generate_series(0, 29) d
            WHERE d >= k AND (d = k OR {self.rand('g::bigint * 32 + d', 5)} < 0.95){bounds}
            ORDER BY id, d DESC
            """, {"d": self.run_date, "low": low, "high": high})
        return cur.rowcount

    def make_future_rows(self, cur):
        if self.every:
            cur.execute(f"INSERT INTO check_ins (user_id, check_in_date) SELECT id, DATE '2099-01-01' FROM {self.shape} WHERE g %% %s = 2",
                        (self.every,))
            return cur.rowcount
        return 0

    def make_primary_key(self, cur):
        cur.execute("ALTER TABLE check_ins ADD PRIMARY KEY (id)")

    def make_unique_key(self, cur):
        cur.execute("ALTER TABLE check_ins ADD CONSTRAINT check_ins_user_id_check_in_date_key UNIQUE (user_id, check_in_date)")

    def make_alerts(self, cur):
        """A third of the users missing 3+ days were already mailed yesterday: an accepted alert
        to each contact in force (the rows of emergency_contacts, else users.emergency_email)."""
        cur.execute(f"""
            INSERT INTO notification_logs (user_id, notification_date, email_sent, consecutive_miss_days, status, sent_at,
                                           kind, channel, contact, last_check_in_date, message_id)
            SELECT s.id, %s::date - 1, true, s.k - 2, 'sent', now(), 'alert', 'email', c.contact, %s::date - s.k,
                   md5(s.id::text || c.contact) || '@bench.example'
            FROM {self.shape} s
            JOIN users u ON u.id = s.id
            CROSS JOIN LATERAL (SELECT lower(btrim(e.email)) AS contact FROM emergency_contacts e WHERE e.user_id = s.id
                                UNION ALL
                                SELECT lower(btrim(u.emergency_email))
                                WHERE NOT EXISTS (SELECT 1 FROM emergency_contacts e WHERE e.user_id = s.id)) c
            WHERE s.k >= 4 AND s.g %% 3 = 0
            """, (self.run_date, self.run_date))

    def make_summary(self, cur):
        cur.execute("INSERT INTO sileme.user_last_check_in (user_id, last_check_in_date) "
                    "SELECT user_id, max(check_in_date) FROM check_ins GROUP BY user_id")
        cur.execute("""UPDATE sileme.user_last_check_in s SET last_notified_date = n.last
                       FROM (SELECT user_id, max(notification_date) AS last FROM notification_logs
                             WHERE email_sent AND kind = 'alert' GROUP BY user_id) n
                       WHERE n.user_id = s.user_id""")

    def chunks(self, cur, chunk_users=CHUNK_USERS, count=None):
        """The check-ins' chunks: `count` ranges of user ids, or as many as make about
        `chunk_users` users each, in order."""
        n = count
        if n is None:
            cur.execute(f"SELECT count(*) FROM {self.shape}")
            n = max(1, -(-cur.fetchone()[0] // chunk_users))
        edge = lambda i: f"{(i << 32) // n:08x}-0000-0000-0000-000000000000"
        return [(None if i == 0 else edge(i), None if i == n - 1 else edge(i + 1)) for i in range(n)]

    def steps(self):
        """The steps before the chunks and after them: (name, function of a cursor)."""
        before = [("prepare", self.prepare), ("shape", self.make_shape), ("users", self.make_users),
                  ("contacts", self.make_contacts), ("known_contacts", self.make_known_contacts)]
        keys = [("primary_key", self.make_primary_key), ("unique_key", self.make_unique_key)] if self.rebuild_keys else []
        after = [("future_rows", self.make_future_rows)] + keys + [("alerts", self.make_alerts), ("summary", self.make_summary)]
        return before, after


def generate(conn, model):
    """The whole population in one transaction, then VACUUM ANALYZE; returns the check-ins' count."""
    cur = conn.cursor()
    before, after = model.steps()
    for _, step in before:
        step(cur)
    model.make_check_ins(cur)
    for _, step in after:
        step(cur)
    cur.execute("SET session_replication_role = origin")
    conn.commit()
    conn.autocommit = True
    cur.execute("VACUUM ANALYZE")
    cur.execute("SELECT count(*) FROM check_ins")
    return cur.fetchone()[0]


PROGRESS_SQL = """
    CREATE SCHEMA IF NOT EXISTS bench_gen;
    CREATE TABLE IF NOT EXISTS bench_gen.params (one boolean PRIMARY KEY DEFAULT true CHECK (one), params jsonb NOT NULL);
    CREATE TABLE IF NOT EXISTS bench_gen.progress (
        step text PRIMARY KEY, rows bigint, seconds float8 NOT NULL, done_at timestamptz NOT NULL DEFAULT now());
"""


def started(conn):
    """The params of a population whose generation has begun in this database (complete or not),
    or None."""
    cur = conn.cursor()
    cur.execute("SELECT to_regclass('bench_gen.params') IS NOT NULL")
    row = None
    if cur.fetchone()[0]:
        cur.execute("SELECT params FROM bench_gen.params")
        row = cur.fetchone()
    conn.rollback()
    return row[0] if row else None


def is_complete(conn):
    """Whether this database holds a population generated to the end (its params, or None)."""
    cur = conn.cursor()
    cur.execute("SELECT to_regclass('bench_gen.progress') IS NOT NULL")
    if not cur.fetchone()[0]:
        conn.rollback()
        return None
    cur.execute("SELECT p.params FROM bench_gen.params p WHERE EXISTS (SELECT 1 FROM bench_gen.progress WHERE step = 'complete')")
    row = cur.fetchone()
    conn.rollback()
    return row[0] if row else None


class Interrupted(Exception):
    """`generate_resumable` stopped on purpose after `stop_after` steps (its check does it)."""


def generate_resumable(conn, model, log, chunk_users=CHUNK_USERS, stop_after=None, data_dir=None, min_free_gb=15):
    """The population step by step, each step and each chunk of check-ins committed with its row
    in bench_gen.progress; steps already done are skipped, so that a run after an interruption
    goes on where the last stopped. A database generated with other parameters is refused (the
    model would be mixed). `stop_after`: raise Interrupted after that many steps (to check the
    going on). Before each step it waits for `min_free_gb` (+3) free on `data_dir`'s disk.
    Returns the check-ins' count (generated_rows)."""
    cur = conn.cursor()
    cur.execute(PROGRESS_SQL)
    cur.execute("INSERT INTO bench_gen.params (params) VALUES (%s::jsonb) ON CONFLICT DO NOTHING", (json_text(model.params()),))
    cur.execute("SELECT params FROM bench_gen.params")
    held = cur.fetchone()[0]
    conn.commit()
    if held != model.params():
        raise SystemExit(f"bench: CHECK FAILED: this database was generated with {held}, not {model.params()}: "
                         "use another --cluster-dir or the same parameters")
    cur.execute("SELECT step FROM bench_gen.progress")
    done = {r[0] for r in cur.fetchall()}
    conn.commit()
    cur.execute("SET session_replication_role = replica")

    def wait_for_space():
        """Waits while the disk holds less than `min_free_gb` besides a step's growth (a chunk
        of 500,000 users is ~2 GB): the machine is shared, and a full disk stops everyone."""
        if not min_free_gb or not data_dir:
            return
        said = False
        while True:
            stat = os.statvfs(data_dir)
            free = stat.f_bavail * stat.f_frsize / 1e9
            if free >= min_free_gb + 3:
                return
            if not said:
                log(f"generation: {free:.1f} GB free, waiting for {min_free_gb + 3} GB")
                said = True
            time.sleep(60)

    # Larger sorts in memory for the chunks, the keys and the summary; no autovacuum of check_ins
    # while it grows (each chunk would start one over the whole table): one VACUUM at the end.
    cur.execute("SET work_mem = '256MB'")
    cur.execute("SET maintenance_work_mem = '1GB'")
    if "vacuum_analyze" not in done:
        cur.execute("ALTER TABLE check_ins SET (autovacuum_enabled = false)")
        conn.commit()
    ran = []

    def run(name, fn):
        if name in done:
            return
        wait_for_space()
        if stop_after is not None and len(ran) == stop_after:
            conn.rollback()
            raise Interrupted(name)
        ran.append(name)
        start = time.perf_counter()
        rows = fn(cur)
        seconds = time.perf_counter() - start
        cur.execute("INSERT INTO bench_gen.progress (step, rows, seconds, done_at) VALUES (%s, %s, %s, clock_timestamp())",
                    (name, rows if isinstance(rows, int) else None, seconds))
        conn.commit()
        log(f"generation: {name} done in {seconds:.0f} s" + (f" ({rows:,} rows, {rows / max(seconds, 1e-3):,.0f} a second)" if isinstance(rows, int) else ""))

    before, after = model.steps()
    for name, fn in before:
        run(name, fn)
    # The chunks are cut once: a later run with another --chunk-users goes on with the same ones.
    cur.execute("SELECT rows FROM bench_gen.progress WHERE step = 'chunks'")
    row = cur.fetchone()
    chunks = model.chunks(cur, chunk_users, row[0] if row else None)
    run("chunks", lambda c: len(chunks))
    for i, (low, high) in enumerate(chunks):
        run(f"check_ins {i + 1:03d}/{len(chunks):03d}", lambda c, low=low, high=high: model.make_check_ins(c, low, high))
    for name, fn in after:
        run(name, fn)
    cur.execute("SET session_replication_role = origin")
    conn.commit()
    if "vacuum_analyze" not in done:
        cur.execute("ALTER TABLE check_ins RESET (autovacuum_enabled)")
        conn.commit()
        conn.autocommit = True
        start = time.perf_counter()
        cur.execute("VACUUM ANALYZE")
        conn.autocommit = False
        cur.execute("INSERT INTO bench_gen.progress (step, seconds, done_at) VALUES ('vacuum_analyze', %s, clock_timestamp())", (time.perf_counter() - start,))
        conn.commit()
        log(f"generation: vacuum_analyze done in {time.perf_counter() - start:.0f} s")
    if "complete" not in done:
        cur.execute(f"DROP TABLE IF EXISTS {model.shape}")
        cur.execute("INSERT INTO bench_gen.progress (step, seconds, done_at) SELECT 'complete', sum(seconds), clock_timestamp() FROM bench_gen.progress")
        conn.commit()
    return generated_rows(conn)


def generated_rows(conn):
    """The check-ins the generation wrote (its progress rows: counting 300 million rows takes a
    minute)."""
    cur = conn.cursor()
    cur.execute("SELECT sum(rows) FROM bench_gen.progress WHERE step LIKE 'check_ins %' OR step = 'future_rows'")
    rows = cur.fetchone()[0]
    conn.rollback()
    return int(rows or 0)


def state(conn):
    """What a kept population is, in figures cheap at 10 million users: each table's rows (the
    check-ins' and the logs' highest id), the summary's dates and notified users, and bench.py's
    own objects. `restore` must bring a measured database back to the same figures."""
    cur = conn.cursor()
    cur.execute("""SELECT n.nspname || '.' || c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
                   WHERE c.relkind IN ('r', 'p') AND n.nspname IN ('public', 'sileme') ORDER BY 1""")
    result = {}
    for (table,) in cur.fetchall():
        if table == "public.check_ins":
            cur.execute("SELECT max(id) FROM check_ins")  # the primary key's last entry
        else:
            cur.execute(f"SELECT count(*) FROM {table}")
        result[table] = cur.fetchone()[0]
    cur.execute("SELECT max(id) FROM notification_logs")
    result["notification_logs max(id)"] = cur.fetchone()[0]
    cur.execute("""SELECT count(last_notified_date), sum(last_notified_date - DATE '2000-01-01'),
                          sum(least(last_check_in_date, DATE '2100-01-01') - DATE '2000-01-01')
                   FROM sileme.user_last_check_in""")
    result["user_last_check_in dates"] = [int(v or 0) for v in cur.fetchone()]
    cur.execute("SELECT count(*) FROM users WHERE time_zone IS NOT NULL OR notify_time IS NOT NULL")  # day.py's, unset after
    result["users with a time"] = cur.fetchone()[0]
    cur.execute("SELECT extname FROM pg_extension ORDER BY 1")
    result["extensions"] = [r[0] for r in cur.fetchall()]
    cur.execute("SELECT proname FROM pg_proc WHERE proname LIKE 'bench%' ORDER BY 1")
    result["bench functions"] = [r[0] for r in cur.fetchall()]
    cur.execute("SELECT tgname FROM pg_trigger WHERE tgrelid = 'check_ins'::regclass AND NOT tgisinternal AND tgenabled <> 'D' ORDER BY 1")
    result["check_ins triggers"] = [r[0] for r in cur.fetchall()]
    conn.rollback()
    return result


# The name prefix of users a measurement adds to a kept population beside the insert path's pools
# (all_clear.py's alerted users): `restore` removes them with every row that refers to them.
ADDED_USERS = "added "


def restore(conn, before):
    """Undoes what bench.py's measurements write to a kept population (they cannot run on a copy:
    at 10 million users a copy is another ~46 GB): the real runs' logs (with the summary's
    triggers, which set each user's latest notification back), the tables the generation left
    empty (runs, escalations, contact status, queues, intake), the users added by name
    (`ADDED_USERS`, their rows going with them), and the insert path's users, check-ins,
    triggers, functions and extension. Returns the tables it touched."""
    conn.autocommit = False
    cur = conn.cursor()
    cur.execute("SET session_replication_role = origin")
    cur.execute("SELECT to_regclass('bench_contacts_hidden') IS NOT NULL")
    if cur.fetchone()[0]:  # a dry run without contacts interrupted (bench.hide_contacts)
        cur.execute("DROP TABLE emergency_contacts")
        cur.execute("ALTER TABLE bench_contacts_hidden RENAME TO emergency_contacts")
    cur.execute("DELETE FROM notification_logs WHERE id > %s", (before["notification_logs max(id)"] or 0,))
    cur.execute("DELETE FROM users WHERE name LIKE %s", (ADDED_USERS + "%",))  # with their rows: every reference cascades
    cur.execute("SET session_replication_role = replica")  # the insert path's own rows: no triggers
    cur.execute("DELETE FROM check_ins WHERE id > %s", (before["public.check_ins"] or 0,))
    cur.execute("DELETE FROM sileme.user_last_check_in s USING users u WHERE u.id = s.user_id AND u.name LIKE 'insert %%'")
    cur.execute("DELETE FROM users WHERE name LIKE 'insert %%'")
    cur.execute("SET session_replication_role = origin")
    for trigger in ("bench_noop", "bench_noop_definer", "bench_sync011", "bench_append"):
        cur.execute(f"DROP TRIGGER IF EXISTS {trigger} ON check_ins")
    cur.execute("DROP FUNCTION IF EXISTS bench_noop(), bench_noop_definer(), bench_sync011(), bench_append()")
    cur.execute("DROP TABLE IF EXISTS bench_append_log")
    cur.execute("DROP SEQUENCE IF EXISTS bench_insert_seq")
    if "pg_stat_statements" not in before["extensions"]:
        cur.execute("DROP EXTENSION IF EXISTS pg_stat_statements")
    for trigger in before["check_ins triggers"]:
        cur.execute(f"ALTER TABLE check_ins ENABLE TRIGGER {trigger}")
    emptied = [t for t, n in before.items() if "." in t and " " not in t and n == 0 and t != "public.check_ins"]
    cur.execute("SELECT " + ", ".join(f"(SELECT count(*) FROM {t})" for t in emptied))
    written = [t for t, n in zip(emptied, cur.fetchone()) if n > 0]
    if written:
        cur.execute("TRUNCATE " + ", ".join(written))
    conn.commit()
    conn.autocommit = True
    touched = ["check_ins", "users", "notification_logs", "sileme.user_last_check_in"] + written
    cur.execute("VACUUM ANALYZE " + ", ".join(touched))
    conn.autocommit = False
    return touched


def json_text(value):
    import json
    return json.dumps(value, sort_keys=True)
