# namespace.sh — sourced by scripts/systemd-boot-test.sh and scripts/package-test.sh: a real systemd
# (252) booted as PID 1 of new PID, mount, UTS, IPC and cgroup namespaces (ns-init.sh), and
# everything needed to stop it and clean up after it, even after a run that was killed outright.
#
# It defines the tests' output (log, die, pass, fail, info) and their preconditions
# (require_test_env). The caller defines boot_failed's output, and sets, before sourcing it:
#   BUDGET, START     seconds for the test (wait_until and cap never wait beyond it)
#   STATE             its state directory under /var/lib (mktemp -d -p /var/lib "$NS_STATE_PREFIX".XXXXXX)
#   NS_STATE_PREFIX   the state directories' name prefix, for reap_stale_runs
#   NS_OWNER          the script's file name, for reap_stale_runs (a run still going is left alone)
#   NS_INIT, RUN_ID, PY, PSQL, SILEME_TEST_DATABASE_URL, CG_DIRS=(), UNSHARE_PID="", NS_PID=""
# ns-init.sh reads STATE/ns/masks (write_masks), STATE/ns/cgroup-mounts (setup_cgroups) and
# optionally STATE/ns/overlays and STATE/ns/hide.

# The output of a test: log and die on stderr, prefixed with the test's name; one PASS:/FAIL:
# line per check on stdout, counted for the closing "N passed, N failed".
log() { printf '%s: %s\n' "${NS_OWNER%.sh}" "$*" >&2; }
die() { log "error: $*"; exit 2; }
FAILED=0
PASSED=0
pass() { PASSED=$((PASSED + 1)); printf 'PASS: %s\n' "$*"; }
fail() { FAILED=$((FAILED + 1)); printf 'FAIL: %s\n' "$*"; }
info() { printf '      %s\n' "$*"; }

# require_test_env TOOL...: root, the test servers' variables (scripts/testenv/testenv.sh), the
# tools named, and psql (sets PSQL); dies naming what is missing.
require_test_env() {
    [[ $EUID -eq 0 ]] || die "must run as root (it mounts and boots systemd in namespaces)"
    local var tool
    for var in SILEME_TEST_DATABASE_URL SILEME_TEST_PG_PORT SILEME_TEST_SMTP_STARTTLS_PORT \
        SILEME_TEST_SMTP_USER SILEME_TEST_SMTP_PASSWORD SILEME_TEST_SMTP_CA SILEME_TEST_MAILDIR; do
        [[ -n "${!var:-}" ]] || die "$var is not set (source the env.sh of scripts/testenv/testenv.sh start)"
    done
    for tool in unshare nsenter setpriv findmnt timeout "$PY" /lib/systemd/systemd "$@"; do
        command -v "$tool" >/dev/null || die "$tool not found (scripts/install-deps.sh)"
    done
    PSQL=${SILEME_TEST_PG_BIN:-/usr/lib/postgresql/15/bin}/psql
    [[ -x "$PSQL" ]] || PSQL=$(command -v psql) || die "psql not found"
}

now_ms() { date +%s%3N; }
ms_since() { echo $(($(now_ms) - $1)); }
secs() { printf '%d.%03d s' $(($1 / 1000)) $(($1 % 1000)); }
left() { echo $((BUDGET - (SECONDS - START))); }

# cap SECONDS: SECONDS, or less if the budget is nearly spent (at least 1).
cap() {
    local l
    l=$(left)
    if ((l < 1)); then l=1; fi
    if (($1 < l)); then echo "$1"; else echo "$l"; fi
}

# wait_until SECONDS CMD...: 0 as soon as CMD succeeds, 1 after SECONDS (capped by the budget).
wait_until() {
    local deadline=$(($(now_ms) + $(cap "$1") * 1000))
    shift
    while :; do
        if "$@"; then return 0; fi
        (($(now_ms) < deadline)) || return 1
        sleep 0.2
    done
}

# ns CMD...: run CMD in the test's PID and mount namespaces (at most 30 s).
ns() { timeout -k 2 30 nsenter -t "$NS_PID" -p -m -- "$@"; }
# nst SECONDS CMD...: the same with a shorter time limit.
nst() { local t=$1; shift; timeout -k 2 "$t" nsenter -t "$NS_PID" -p -m -- "$@"; }

alive() { [[ -n "${1:-}" ]] && kill -0 "$1" 2>/dev/null; }

stop_namespace() {
    alive "$UNSHARE_PID" || return 0
    if [[ -n "$NS_PID" ]] && alive "$NS_PID"; then
        log "powering off the namespaced systemd"
        local t0
        t0=$(now_ms)
        nst 10 systemctl poweroff --no-block >/dev/null 2>&1 || true
        local i
        for ((i = 0; i < 150; i++)); do
            alive "$UNSHARE_PID" || break
            sleep 0.1
        done
        alive "$UNSHARE_PID" || log "systemd powered off in $(secs "$(ms_since "$t0")")"
    fi
    if alive "$UNSHARE_PID"; then
        log "systemd did not power off within 15 s: killing the namespace"
        if [[ -n "$NS_PID" ]]; then kill -KILL "$NS_PID" 2>/dev/null || true; fi
        kill -KILL "$UNSHARE_PID" 2>/dev/null || true
    fi
    wait "$UNSHARE_PID" 2>/dev/null || true
}

# remove_cgroups DIR...: remove the test's cgroups (systemd created its own below them; all are
# empty once the namespace is gone).
remove_cgroups() {
    local d i
    for d in "$@"; do
        [[ "$d" == /sys/fs/cgroup/*/sileme-boot-test-* || "$d" == /sys/fs/cgroup/sileme-boot-test-* ]] || continue
        for ((i = 0; i < 50; i++)); do
            [[ -d "$d" ]] || break
            find "$d" -depth -type d -exec rmdir {} + 2>/dev/null
            [[ -d "$d" ]] && sleep 0.1
        done
        [[ -d "$d" ]] && log "warning: could not remove cgroup $d"
    done
    return 0
}

# remove_state DIR: delete a state directory, unless something is still mounted under it (the
# mounts on it lived in the namespace only; never delete through a leftover one).
remove_state() {
    if grep -qF " $1" /proc/self/mountinfo; then
        log "warning: something is still mounted under $1; left in place"
    else
        rm -rf --one-file-system -- "$1"
    fi
}

drop_database() {
    timeout 15 "$PSQL" "$SILEME_TEST_DATABASE_URL" -qAtX -v ON_ERROR_STOP=1 \
        -c "DROP DATABASE IF EXISTS $1 WITH (FORCE)" >/dev/null 2>&1
}

# Leftovers of runs that were killed outright (SIGKILL, a CI timeout): their namespace died with
# them (parent-death signal), but not their state directory, cgroups and database.
reap_stale_runs() {
    local dir pid cmdline
    for dir in /var/lib/"$NS_STATE_PREFIX".*; do
        [[ -f "$dir/owner" ]] || continue
        read -r pid <"$dir/owner" || continue
        cmdline=$(tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null) || cmdline=""
        [[ "$cmdline" == *"$NS_OWNER"* ]] && continue # still running
        log "removing the leftovers of an interrupted run: $dir"
        [[ -f "$dir/ns/cgroup-dirs" ]] && mapfile -t stale_cgroups <"$dir/ns/cgroup-dirs" && remove_cgroups "${stale_cgroups[@]}"
        [[ -f "$dir/database" ]] && drop_database "$(<"$dir/database")"
        remove_state "$dir"
    done
}

# --- units that must not start in the namespace ---------------------------------------------------
# Everything enabled on this machine (it is not ours to start: the Debian PostgreSQL cluster, apt
# timers, ...), SysV scripts of the runlevels, and the static units of sysinit/basic/multi-user
# that would touch the kernel, devices, the clock, terminals or the real /var. And the daemon's own
# units, in case this machine has them installed: nothing of a real installation may run in the
# namespace (it would mail real people); the install step below unmasks sileme-notifier.service
# only, after replacing its files with the test's.
write_masks() {
{
    for link in /etc/systemd/system/*.wants/* /etc/systemd/system/*.requires/* \
        /etc/systemd/system/*.upholds/* /lib/systemd/system/multi-user.target.wants/*; do
        [[ -e "$link" || -L "$link" ]] && basename "$link"
    done
    for link in /etc/rc[S2345].d/S*; do
        [[ -e "$link" || -L "$link" ]] && printf '%s.service\n' "$(basename "$link" | sed -e 's/^S[0-9]*//' -e 's/\.sh$//')"
    done
    cat <<'EOF'
postgresql.service
postgresql@.service
kmod-static-nodes.service
systemd-modules-load.service
systemd-sysctl.service
systemd-binfmt.service
proc-sys-fs-binfmt_misc.automount
proc-sys-fs-binfmt_misc.mount
dev-hugepages.mount
dev-mqueue.mount
sys-fs-fuse-connections.mount
sys-kernel-config.mount
sys-kernel-debug.mount
sys-kernel-tracing.mount
systemd-udevd.service
systemd-udevd-control.socket
systemd-udevd-kernel.socket
systemd-udev-trigger.service
systemd-udev-settle.service
systemd-hwdb-update.service
systemd-remount-fs.service
systemd-fsck-root.service
systemd-fsck@.service
systemd-quotacheck.service
quotaon.service
systemd-tmpfiles-setup.service
systemd-tmpfiles-setup-dev.service
systemd-tmpfiles-clean.timer
systemd-tmpfiles-clean.service
systemd-sysusers.service
systemd-firstboot.service
systemd-machine-id-commit.service
systemd-random-seed.service
systemd-repart.service
systemd-pcrphase.service
systemd-pcrphase-sysinit.service
systemd-update-utmp.service
systemd-update-utmp-runlevel.service
systemd-update-done.service
systemd-journal-catalog-update.service
ldconfig.service
systemd-journald-audit.socket
systemd-pstore.service
systemd-timesyncd.service
systemd-time-wait-sync.service
hwclock.service
systemd-logind.service
systemd-user-sessions.service
dbus.service
dbus.socket
getty@.service
serial-getty@.service
console-getty.service
container-getty@.service
getty-static.service
systemd-ask-password-wall.path
systemd-ask-password-console.path
systemd-networkd.service
systemd-networkd.socket
systemd-networkd-wait-online.service
systemd-resolved.service
networking.service
ifupdown-wait-online.service
systemd-rfkill.service
systemd-rfkill.socket
systemd-boot-update.service
systemd-boot-system-token.service
cron.service
apt-daily.service
apt-daily-upgrade.service
dpkg-db-backup.service
e2scrub_all.service
e2scrub_reap.service
fstrim.service
man-db.service
sileme-notifier.service
sileme-notifier-run.service
sileme-notifier-run.timer
EOF
} | sort -u >"$STATE/ns/masks"
}

# --- cgroups: a cgroup of the test's own in every hierarchy, the root of its cgroup namespace -----

setup_cgroups() {
    # Writes STATE/ns/cgroup-mounts (for ns-init.sh) and prints the cgroups to create and join.
    "$PY" - "sileme-boot-test-$RUN_ID" "$STATE/ns/cgroup-mounts" >"$STATE/ns/cgroup-dirs" <<'EOF' || return 1
import sys
name, mounts_out = sys.argv[1], sys.argv[2]
controllers = {l.split()[0] for l in open("/proc/cgroups") if not l.startswith("#")}
mounts = []
for line in open("/proc/self/mountinfo"):
    left, right = line.rstrip("\n").split(" - ", 1)
    fields = left.split()
    fstype, _source, superopts = right.split(" ", 2)
    mp, root = fields[4], fields[3]
    if fstype not in ("cgroup", "cgroup2") or not (mp == "/sys/fs/cgroup" or mp.startswith("/sys/fs/cgroup/")):
        continue
    if root != "/":
        sys.exit("cgroup mount %s shows %s, not its root" % (mp, root))
    opts = [o for o in superopts.split(",") if o not in ("rw", "ro")]
    if fstype == "cgroup" and not any(o in controllers for o in opts):
        opts.insert(0, "none")  # a named hierarchy without controllers (name=systemd)
    mounts.append((mp, fstype, opts))
if not mounts:
    sys.exit("no cgroup file system under /sys/fs/cgroup")
with open(mounts_out, "w") as out:
    for mp, fstype, opts in sorted(mounts):
        out.write("%s %s %s\n" % (mp, fstype, ",".join(opts) or "-"))
for line in open("/proc/self/cgroup"):
    _hid, ctrls, path = line.rstrip("\n").split(":", 2)
    wanted = set(filter(None, ctrls.split(",")))
    if not wanted:
        match = [m for m in mounts if m[1] == "cgroup2"]
    else:
        match = [m for m in mounts if m[1] == "cgroup" and wanted <= set(m[2])]
    # cpuset would need cpus/mems copied first, and systemd does not use it on v1: stay put there.
    if not match or "cpuset" in wanted:
        continue
    print(match[0][0] + path.rstrip("/") + "/" + name)
EOF
    local d
    while read -r d; do
        mkdir "$d" || return 1
        CG_DIRS+=("$d")
    done <"$STATE/ns/cgroup-dirs"
}

# boot_namespace: starts ns-init.sh (then systemd) in new namespaces inside the test's cgroups and
# waits until systemd is running; sets UNSHARE_PID, NS_PID and boot_ms, or fails the test (exit 1).
boot_namespace() {
    boot_t0=$(now_ms)
    ns_flags=(--pid --fork --kill-child=SIGKILL --mount --mount-proc --uts --ipc --cgroup)
    # The launcher joins the test's cgroups, then becomes unshare; setpriv's parent-death signal and
    # --kill-child end the namespace even if this script is killed outright.
    bash -c 'while read -r d; do echo $$ >"$d/cgroup.procs" || exit 97; done <"$1"; shift; exec "$@"' \
        launcher "$STATE/ns/cgroup-dirs" \
        setpriv --pdeathsig KILL -- unshare "${ns_flags[@]}" -- /bin/bash "$NS_INIT" "$STATE" \
        </dev/null >"$STATE/boot.log" 2>&1 &
    UNSHARE_PID=$!

    boot_failed() {
        fail "boot: $*"
        log "ns-init/systemd output (boot.log, console.log):"
        tail -n 30 "$STATE/boot.log" "$STATE/console.log" 2>/dev/null | sed 's/^/    /' >&2
        exit 1
    }

    # The namespace's PID 1 is unshare's child.
    ns_pid() {
        alive "$UNSHARE_PID" || return 0
        NS_PID=$({ cat "/proc/$UNSHARE_PID/task/$UNSHARE_PID/children" 2>/dev/null || pgrep -P "$UNSHARE_PID"; } | awk '{print $1; exit}')
        [[ -n "$NS_PID" ]]
    }
    wait_until 10 ns_pid || boot_failed "the namespace did not come up"
    [[ -n "$NS_PID" ]] || boot_failed "the namespace exited at once"

    BOOT_STATE=""
    booted() {
        alive "$NS_PID" || return 0 # reported below
        BOOT_STATE=$(nst 5 systemctl is-system-running 2>/dev/null) || true
        [[ "$BOOT_STATE" == running || "$BOOT_STATE" == degraded ]]
    }
    wait_until 30 booted || true
    alive "$NS_PID" || boot_failed "systemd exited"
    boot_ms=$(ms_since "$boot_t0")
    if [[ "$BOOT_STATE" == running || "$BOOT_STATE" == degraded ]]; then
        pass "boot: systemd reached '$BOOT_STATE' in $(secs "$boot_ms") (PID 1 of namespace, host pid $NS_PID)"
        failed_units=$(nst 5 systemctl list-units --failed --plain --no-legend --no-pager 2>/dev/null | awk '{print $1}' | tr '\n' ' ')
        [[ -n "${failed_units// /}" ]] && info "failed units at boot (not ours): $failed_units"
    else
        boot_failed "systemctl is-system-running says '${BOOT_STATE:-nothing}' after $(secs "$boot_ms")"
    fi
    return 0
}
