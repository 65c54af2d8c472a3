#!/usr/bin/env bash
# package-test.sh — the Debian package (scripts/package.sh) installed with dpkg under a real
# systemd, configured, run, upgraded and purged, the way docs/install.md's "The Debian package" says.
#
# The root it installs into: the machine's own, seen through the namespaces of
# scripts/systemd-boot-test.sh (namespace.sh, ns-init.sh) with /etc, /usr, /var/lib/dpkg,
# /var/lib/systemd, /var/log and /var/cache copy-on-write (overlayfs; every write lands in the
# test's state directory, nothing reaches the machine) and the Swift toolchain's directory hidden
# behind an empty tmpfs, so the packaged binary runs with no Swift runtime anywhere. The
# machine's /usr/sbin/policy-rc.d (a container's "start nothing") is removed in that view, so the
# maintainer scripts act as on a server. (A debootstrap'd Debian 12 would be a cleaner root, but it
# needs the package servers at test time and minutes per run; this root has the same Debian 12
# libraries the package's Depends name.)
#
# Checks, in order:
#   package   both packages build: the version of NotifierVersion.current, and a newer one (same
#             binary, version +pkgtest1: dpkg's upgrade path is what is tested)
#   lintian   no error; every warning one of those docs/install.md explains
#   contents  the files, modes, conffile, Depends (libpq5, libcurl4, libsystemd0, no Swift), no
#             libswift*.so and no RUNPATH in the binary
#   install   dpkg -i: the system user, notifier.conf 0640 root:sileme-notifier, the catalog; the
#             service neither enabled nor started
#   runtime   `sileme-notifier --version` with no Swift toolchain and no libswift in ld.so's cache;
#             ldd resolves everything; man page and completions
#   service   migrate (packaged migrations), enable --now: the due user's contact gets the mail;
#             idle: the daemon's anonymous memory (RssAnon) at most 16 MB, VmRSS at most 64 MB
#   upgrade   dpkg -i of the newer package: the edited notifier.conf kept byte for byte (and its
#             mode and group), no .dpkg-dist; the running daemon restarted on the new package
#   purge     dpkg --purge: service stopped, files, /etc/sileme-notifier, user and group gone,
#             nothing left owned by its uid or gid, no enable links
#
# Usage (as root; scripts/test.sh sets these from scripts/testenv/testenv.sh):
#   SILEME_TEST_DATABASE_URL, SILEME_TEST_PG_PORT, SILEME_TEST_SMTP_STARTTLS_PORT,
#   SILEME_TEST_SMTP_USER, SILEME_TEST_SMTP_PASSWORD, SILEME_TEST_SMTP_CA, SILEME_TEST_MAILDIR
#                             as for scripts/systemd-boot-test.sh
#   SILEME_PACKAGE_NO_BUILD=1 optional: package the release build in .build-release as it is
#
#   scripts/package-test.sh
#
# Prints one PASS:/FAIL: line per check and a summary "N passed, N failed"; exits 0 only if every
# check passed (1: a check failed, 2: it could not run). Bounded: the release build (incremental
# after the first), then at most BUDGET seconds; every wait has a timeout. On every exit path it
# powers the namespaced systemd off, removes its cgroups, drops the database and the state
# directory /var/lib/sileme-package-test.XXXXXX.
set -euo pipefail

readonly REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
readonly NS_INIT=$REPO/scripts/systemd-boot-test/ns-init.sh
readonly NS_STATE_PREFIX=sileme-package-test
readonly NS_OWNER=package-test.sh
readonly UNIT=sileme-notifier.service
readonly PY=/usr/bin/python3 # Debian's
readonly ZONE=Asia/Shanghai
# The idle daemon's memory. Most of its RSS is the statically linked binary's own code and
# read-only data (127 MB on disk; the pages touched at start, ~23 MB, are page cache the kernel can
# drop and share), which grows with every feature and says nothing about leaks. What a leak or a
# held due set would grow is the anonymous memory: that is the tight limit. The whole RSS is held to
# the 64 MB every run must stay under.
readonly ANON_LIMIT_KB=16384
readonly RSS_LIMIT_KB=65536
# Lintian warnings docs/install.md explains ("What lintian says").
readonly EXPLAINED_WARNINGS="non-standard-dir-perm non-standard-file-perm"
BUDGET=180
START=$SECONDS

# shellcheck source=systemd-boot-test/namespace.sh
. "$REPO/scripts/systemd-boot-test/namespace.sh"

# --- preconditions -------------------------------------------------------------------------

require_test_env dpkg-deb lintian readelf ldd
[[ -r "$SILEME_TEST_SMTP_CA" ]] || die "$SILEME_TEST_SMTP_CA not readable"

# --- state and cleanup -----------------------------------------------------------------------

RUN_ID=$(od -An -N4 -tx4 /dev/urandom | tr -d ' \n')
DB=sn_pkg_$RUN_ID
DOMAIN=sn-pkg-$RUN_ID.example.com
STATE=""
DB_CREATED=0
UNSHARE_PID=""
NS_PID=""
CG_DIRS=()

cleanup() {
    local rc=$?
    set +e
    trap - EXIT INT TERM
    stop_namespace
    remove_cgroups "${CG_DIRS[@]}"
    if ((DB_CREATED)); then drop_database "$DB" || log "warning: could not drop database $DB"; fi
    if [[ -n "$STATE" && -d "$STATE" ]]; then remove_state "$STATE"; fi
    exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

reap_stale_runs
STATE=$(mktemp -d -p /var/lib "$NS_STATE_PREFIX.XXXXXX")
mkdir -p "$STATE/ns" "$STATE/dist" "$STATE/extract" "$STATE/files"
echo "$$" >"$STATE/owner"
echo "$DB" >"$STATE/database"

summary() {
    printf 'package-test: %d passed, %d failed (%d s)\n' "$PASSED" "$FAILED" $((SECONDS - START))
    ((FAILED == 0))
}

# --- package: build both ----------------------------------------------------------------------

build_t0=$(now_ms)
build_args=(--output-dir "$STATE/dist")
[[ "${SILEME_PACKAGE_NO_BUILD:-}" == 1 ]] && build_args+=(--no-build)
if ! DEB1=$("$REPO/scripts/package.sh" "${build_args[@]}" 2>"$STATE/package1.log"); then
    tail -n 30 "$STATE/package1.log" >&2
    fail "package: scripts/package.sh failed"
    summary
    exit 1
fi
V1=$(dpkg-deb -f "$DEB1" Version)
V2=$V1+pkgtest1
if ! DEB2=$(SILEME_PACKAGE_VERSION=$V2 "$REPO/scripts/package.sh" --no-build --output-dir "$STATE/dist" 2>"$STATE/package2.log"); then
    tail -n 30 "$STATE/package2.log" >&2
    fail "package: the newer package ($V2) did not build"
    summary
    exit 1
fi
build_ms=$(ms_since "$build_t0")
deb_size=$(stat -c %s "$DEB1")
installed_kb=$(dpkg-deb -f "$DEB1" Installed-Size)
if dpkg --compare-versions "$V2" gt "$V1"; then
    pass "package: $(basename "$DEB1") ($((deb_size / 1024)) KiB, installed $installed_kb KiB) and $(basename "$DEB2") built in $(secs "$build_ms")"
else
    fail "package: $V2 is not newer than $V1"
fi
# The budget counts from here: the release build's time depends on what was built before.
START=$SECONDS

# --- lintian --------------------------------------------------------------------------------------

lintian_rc=0
timeout 120 lintian --pedantic -I --fail-on error "$DEB1" >"$STATE/lintian.log" 2>&1 || lintian_rc=$?
errors=$(grep -c '^E: ' "$STATE/lintian.log" || true)
unexplained=$(awk '/^W: / {print $3}' "$STATE/lintian.log" | sort -u | while read -r tag; do
    [[ " $EXPLAINED_WARNINGS " == *" $tag "* ]] || echo "$tag"
done | tr '\n' ' ')
tags=$(awk '/^[EWIP]: / {print $1 $3}' "$STATE/lintian.log" | sort | uniq -c | awk '{printf "%s%s ", $2, ($1 > 1 ? " (" $1 "x)" : "")}' | sed 's/ $//')
if ((lintian_rc == 0 && errors == 0)) && [[ -z "${unexplained// /}" ]]; then
    pass "lintian --pedantic -I: no error, no warning docs/install.md does not explain; tags: ${tags:-none}"
else
    fail "lintian: exit $lintian_rc, $errors error(s), unexplained warnings: ${unexplained:-none}"
    sed 's/^/    /' "$STATE/lintian.log" >&2
fi

# --- contents and control ----------------------------------------------------------------------------

dpkg-deb -c "$DEB1" | awk '{print $1, $2, $6}' >"$STATE/contents"
dpkg-deb -x "$DEB1" "$STATE/extract"
missing=""
for entry in \
    "-rwxr-xr-x ./usr/bin/sileme-notifier" \
    "-rw-r--r-- ./lib/systemd/system/sileme-notifier.service" \
    "-rw-r--r-- ./lib/systemd/system/sileme-notifier-run.service" \
    "-rw-r--r-- ./lib/systemd/system/sileme-notifier-run.timer" \
    "-rw-r--r-- ./usr/lib/sysusers.d/sileme-notifier.conf" \
    "-rw-r--r-- ./usr/lib/systemd/catalog/sileme-notifier.catalog" \
    "drwxr-x--- ./etc/sileme-notifier/" \
    "-rw-r----- ./etc/sileme-notifier/notifier.conf" \
    "-rw-r--r-- ./usr/share/sileme-notifier/migrations/001_app_tables.sql" \
    "-rw-r--r-- ./usr/share/sileme-notifier/templates/zh-Hans/body.txt.mustache" \
    "-rw-r--r-- ./usr/share/sileme-notifier/templates/zh-Hant/all_clear.subject.mustache" \
    "-rw-r--r-- ./usr/share/sileme-notifier/templates/en/introduction.body.txt.mustache" \
    "-rw-r--r-- ./usr/share/sileme-notifier/templates/en/page.texts" \
    "-rw-r--r-- ./usr/share/sileme-notifier/migrations/010_lifecycle.sql" \
    "-rw-r--r-- ./usr/share/doc/sileme-notifier/README.md" \
    "-rw-r--r-- ./usr/share/doc/sileme-notifier/docs/install.md" \
    "-rw-r--r-- ./usr/share/doc/sileme-notifier/docs/configuration.md" \
    "-rw-r--r-- ./usr/share/doc/sileme-notifier/copyright" \
    "-rw-r--r-- ./usr/share/doc/sileme-notifier/changelog.gz" \
    "-rw-r--r-- ./usr/share/man/man8/sileme-notifier.8.gz" \
    "-rw-r--r-- ./usr/share/bash-completion/completions/sileme-notifier" \
    "-rw-r--r-- ./usr/share/zsh/vendor-completions/_sileme-notifier" \
    "-rw-r--r-- ./usr/share/fish/vendor_completions.d/sileme-notifier.fish"; do
    mode=${entry%% *} path=${entry#* }
    grep -qxF -e "$mode root/root $path" "$STATE/contents" || missing+=" $path($mode)"
done
n_migrations=$(ls "$REPO"/Sources/Store/Migrations/*.sql | wc -l)
n_packaged=$(grep -c '^-.* \./usr/share/sileme-notifier/migrations/.*\.sql$' "$STATE/contents" || true)
depends=$(dpkg-deb -f "$DEB1" Depends)
conffiles=$(dpkg-deb -I "$DEB1" conffiles 2>/dev/null || true)
exec_starts=$(grep -h '^ExecStart=' "$STATE/extract/lib/systemd/system/"*.service | sort | tr '\n' ' ')
needed=$(readelf -d "$STATE/extract/usr/bin/sileme-notifier" | awk '/NEEDED/ {gsub(/[][]/, "", $5); printf "%s ", $5}')
runpath=$(readelf -d "$STATE/extract/usr/bin/sileme-notifier" | grep -E 'RPATH|RUNPATH' || true)
problems=""
[[ -z "$missing" ]] || problems+=" missing or wrong mode:$missing;"
((n_packaged == n_migrations)) || problems+=" $n_packaged of $n_migrations migrations;"
for lib in libpq5 libcurl4 libsystemd0; do [[ "$depends" == *"$lib"* ]] || problems+=" Depends lacks $lib;"; done
[[ "$depends" != *swift* ]] || problems+=" Depends names Swift;"
[[ "$conffiles" == "/etc/sileme-notifier/notifier.conf" ]] || problems+=" conffiles: $conffiles;"
[[ "$exec_starts" == "ExecStart=/usr/bin/sileme-notifier ExecStart=/usr/bin/sileme-notifier --run-now " ]] ||
    problems+=" ExecStart: $exec_starts;"
[[ "$needed" != *swift* && "$needed" != *Foundation* && "$needed" != *dispatch* ]] || problems+=" links $needed;"
[[ -z "$runpath" ]] || problems+=" $runpath;"
if grep -rq '/usr/local/bin\|/usr/local/share/doc' "$STATE/extract/lib" "$STATE/extract/usr/lib"; then
    problems+=" a packaged unit or catalog names /usr/local;"
fi
if [[ -z "$problems" ]]; then
    pass "contents: $(wc -l <"$STATE/contents") entries as expected, $n_packaged migrations, conffile $conffiles; Depends: $depends"
    info "the binary needs: $needed(no libswift, no RUNPATH)"
else
    fail "contents:$problems"
fi

# --- the database -----------------------------------------------------------------------------------

psql_admin() { timeout 20 "$PSQL" "$SILEME_TEST_DATABASE_URL" -qAtX -v ON_ERROR_STOP=1 "$@"; }
DB_URL=$("$PY" -c 'import sys, urllib.parse as u
p = u.urlsplit(sys.argv[1]); print(u.urlunsplit(p._replace(path="/" + sys.argv[2])))' \
    "$SILEME_TEST_DATABASE_URL" "$DB")
psql_db() { timeout 20 "$PSQL" "$DB_URL" -qAtX -v ON_ERROR_STOP=1 "$@"; }
psql_admin -c "CREATE DATABASE $DB" >/dev/null
DB_CREATED=1

# Files the operator writes (docs/install.md, "The Debian package"), prepared outside.
files=$STATE/files
cp "$DEB1" "$DEB2" "$files/"
cp "$SILEME_TEST_SMTP_CA" "$files/smtp-ca.pem"
printf '%s' "$SILEME_TEST_SMTP_PASSWORD" >"$files/smtp-password"
printf '%s' "$DB_URL" >"$files/database-url"
chmod 0600 "$files/smtp-password" "$files/database-url"

# --- boot: copy-on-write root, no Swift toolchain -------------------------------------------------------

printf '%s\n' /etc /usr /var/lib/dpkg /var/lib/systemd /var/log /var/cache >"$STATE/ns/overlays"
swift_dir=""
if swift_bin=$(command -v swift 2>/dev/null); then
    swift_dir=$(dirname "$(dirname "$(readlink -f "$swift_bin")")")
    case $swift_dir in
    /usr | /usr/local | /) swift_dir="" ;; # a toolchain in /usr cannot be hidden; ldd still checks
    esac
fi
[[ -n "$swift_dir" ]] && echo "$swift_dir" >"$STATE/ns/hide"
write_masks
setup_cgroups || die "cannot create the test's cgroups under /sys/fs/cgroup"
log "state $STATE, database $DB; overlays $(tr '\n' ' ' <"$STATE/ns/overlays")hidden: ${swift_dir:-nothing}"
boot_namespace

# --- install ----------------------------------------------------------------------------------------

install_t0=$(now_ms)
ns /bin/bash -euo pipefail -s -- "$files" "$(basename "$DEB1")" >"$STATE/install.log" 2>&1 <<'EOF' ||
files=$1 deb=$2
for dir in /etc /usr /var/lib/dpkg /var/lib/systemd; do
    [[ $(findmnt -n -o FSTYPE --target "$dir") == overlay ]] ||
        { echo "refusing to install: $dir is not the test's overlay" >&2; exit 1; }
done
if dpkg-query -W -f='${Status}' sileme-notifier 2>/dev/null | grep -q installed; then
    echo "refusing: sileme-notifier is installed on this machine" >&2; exit 1
fi
# Whatever this machine may have of a hand installation, and the container's policy-rc.d, are
# hidden (whiteouts in the overlay); the units are unmasked.
rm -rf /etc/sileme-notifier /etc/systemd/system/sileme-notifier* /usr/local/lib/systemd/system/sileme-notifier* \
    /etc/systemd/system/*.wants/sileme-notifier* /usr/local/bin/sileme-notifier /usr/local/share/sileme-notifier \
    /usr/local/lib/sysusers.d/sileme-notifier.conf /usr/sbin/policy-rc.d
rm -f /run/systemd/system.control/sileme-notifier*
systemctl daemon-reload
DEBIAN_FRONTEND=noninteractive dpkg -i "$files/$deb" </dev/null
EOF
    { sed 's/^/    /' "$STATE/install.log" >&2; fail "install: dpkg -i failed"; summary; exit 1; }
install_ms=$(ms_since "$install_t0")

status=$(nst 10 dpkg-query -W -f='${Status} ${Version}' sileme-notifier 2>/dev/null || true)
passwd=$(nst 5 getent passwd sileme-notifier || true)
group=$(nst 5 getent group sileme-notifier || true)
uid=$(cut -d: -f3 <<<"$passwd")
gid=$(cut -d: -f3 <<<"$group")
shell=$(cut -d: -f7 <<<"$passwd")
conf_stat=$(nst 5 stat -c '%a %U:%G' /etc/sileme-notifier/notifier.conf 2>/dev/null || true)
dir_stat=$(nst 5 stat -c '%a %U:%G' /etc/sileme-notifier 2>/dev/null || true)
enabled=$(nst 10 systemctl is-enabled "$UNIT" 2>/dev/null || true)
timer_enabled=$(nst 10 systemctl is-enabled sileme-notifier-run.timer 2>/dev/null || true)
active=$(nst 10 systemctl is-active "$UNIT" 2>/dev/null || true)
catalog_id=$(awk '/^-- [0-9a-f]+$/ && length($2) == 32 {print $2; exit}' "$STATE/extract/usr/lib/systemd/catalog/sileme-notifier.catalog")
catalog=0
if [[ -n "$catalog_id" ]]; then
    catalog=$(nst 10 journalctl --list-catalog 2>/dev/null | grep -c "^$catalog_id" || true)
fi
if [[ "$status" == "install ok installed $V1" && -n "$uid" && "$uid" -lt 1000 && "$shell" == */nologin &&
    "$conf_stat" == "640 root:sileme-notifier" && "$dir_stat" == "750 root:sileme-notifier" &&
    "$enabled" == disabled && "$timer_enabled" == disabled && "$active" == inactive && "$catalog" -ge 1 ]]; then
    pass "install: dpkg -i in $(secs "$install_ms"): $status; user $passwd; notifier.conf $conf_stat, /etc/sileme-notifier $dir_stat; $UNIT $enabled and $active, the timer $timer_enabled; catalog entry $catalog_id known to journalctl"
else
    fail "install: status '$status'; user '$passwd' (shell $shell); notifier.conf '$conf_stat', dir '$dir_stat'; $UNIT '$enabled'/'$active', timer '$timer_enabled'; catalog entries for $catalog_id: $catalog"
    sed 's/^/    /' "$STATE/install.log" >&2
fi

# The packaged units as systemd reads them (check-units.sh does the same for systemd/).
verify_out=$(nst 30 systemd-analyze verify /lib/systemd/system/sileme-notifier.service \
    /lib/systemd/system/sileme-notifier-run.service /lib/systemd/system/sileme-notifier-run.timer 2>&1 |
    grep -i 'sileme-notifier' || true)
exec_start=$(nst 10 systemctl show --property=ExecStart --value "$UNIT" 2>/dev/null | grep -o 'path=[^ ;]*' || true)
if [[ -z "$verify_out" && "$exec_start" == "path=/usr/bin/sileme-notifier" ]]; then
    pass "units: systemd-analyze verify of the packaged service, run service and timer says nothing about them; ExecStart $exec_start"
else
    fail "units: ExecStart '$exec_start'; systemd-analyze verify: $verify_out"
fi

# --- runtime: no Swift anywhere -------------------------------------------------------------------------

clean_env=(env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8)
version_out=$(nst 10 "${clean_env[@]}" sileme-notifier --version 2>&1 || true)
ldd_out=$(nst 10 ldd /usr/bin/sileme-notifier 2>&1 || true)
ldd_swift=$(grep -c 'swift\|not found' <<<"$ldd_out" || true)
cache_swift=$(nst 10 ldconfig -p | grep -c libswift || true)
toolchain="not on this machine"
hidden_entries=0
if [[ -n "$swift_dir" ]]; then
    hidden_entries=$(nst 5 find "$swift_dir" -mindepth 1 | wc -l)
    toolchain="$swift_dir hidden ($hidden_entries entries visible)"
fi
swift_visible=$(nst 5 bash -c 'command -v swift swiftc || true')
source_version=$(sed -n 's/.*static let current = "\([^"]*\)".*/\1/p' "$REPO/Sources/Values/NotifierVersion.swift")
if [[ "$version_out" == "$source_version" &&
    "$ldd_swift" == 0 && "$cache_swift" == 0 && -z "$swift_visible" && "$hidden_entries" == 0 ]]; then
    pass "runtime: 'sileme-notifier --version' = $version_out with env -i; ldd: $(grep -c '=>' <<<"$ldd_out") libraries, none libswift, none missing; ld.so cache: no libswift; Swift toolchain: $toolchain"
else
    fail "runtime: --version said '$version_out'; ldd swift/missing lines: $ldd_swift; ld.so cache libswift: $cache_swift; swift on PATH: '$swift_visible'; toolchain: $toolchain"
    info "$(tr '\n' ' ' <<<"$ldd_out")"
fi

man_path=$(nst 10 man -w 8 sileme-notifier 2>/dev/null || true)
man_text=$(nst 20 env MANWIDTH=100 man 8 sileme-notifier 2>/dev/null || true)
man_ok=1
for needle in "SYNOPSIS" "CONFIGURATION" "DATABASE_URL" "NOTIFY_TIME_ZONE" "EXIT STATUS" "configuration error" "FILES"; do
    [[ "$man_text" == *"$needle"* ]] || { man_ok=0; info "man page lacks '$needle'"; }
done
bash_complete=$(nst 10 bash -c '. /usr/share/bash-completion/completions/sileme-notifier && complete -p sileme-notifier' 2>&1 || true)
if ((man_ok)) && [[ "$man_path" == /usr/share/man/man8/sileme-notifier.8.gz && "$bash_complete" == *"sileme-notifier"* ]]; then
    pass "docs: man 8 sileme-notifier ($man_path, $(wc -l <<<"$man_text") lines: settings, exit status, files); bash completion loads ($bash_complete)"
else
    fail "docs: man -w says '$man_path'; bash completion: '$bash_complete'"
fi

# --- service: configure, migrate, enable --now, the mail ---------------------------------------------------

# The daily time a few seconds ago, so the daemon's catch-up runs at once (as the boot test).
fire_epoch=$(($(date +%s) - 5))
NOTIFY_TIME=$(TZ=$ZONE date -d "@$fire_epoch" +%H:%M:%S)
RUN_DATE=$(TZ=$ZONE date -d "@$fire_epoch" +%F)
configure_t0=$(now_ms)
ns /bin/bash -euo pipefail -s -- "$files" "${SILEME_TEST_SMTP_HOST:-127.0.0.1}" "$SILEME_TEST_SMTP_STARTTLS_PORT" \
    "$SILEME_TEST_SMTP_USER" "$NOTIFY_TIME" "$ZONE" "$DB_URL" >"$STATE/configure.log" 2>&1 <<'EOF' ||
files=$1 host=$2 port=$3 user=$4 time=$5 zone=$6 db_url=$7
conf=/etc/sileme-notifier/notifier.conf
# The operator's edit, in place (sed -i keeps the file's mode and group).
sed -i -e 's|^DATABASE_URL=.*|# DATABASE_URL: in the database-url credential|' \
    -e "s|^SMTP_HOST=.*|SMTP_HOST=$host|" -e "s|^SMTP_PORT=.*|SMTP_PORT=$port|" \
    -e "s|^SMTP_USER=.*|SMTP_USER=$user|" -e "s|^SMTP_TIMEOUT_SECONDS=.*|SMTP_TIMEOUT_SECONDS=10|" \
    -e 's|^# SMTP_CA_FILE=.*|SMTP_CA_FILE=/etc/sileme-notifier/smtp-ca.pem|' \
    -e "s|^NOTIFY_TIME=.*|NOTIFY_TIME=$time|" -e "s|^NOTIFY_TIME_ZONE=.*|NOTIFY_TIME_ZONE=$zone|" "$conf"
install -m 0640 -g sileme-notifier "$files/smtp-ca.pem" /etc/sileme-notifier/smtp-ca.pem
install -m 0600 "$files/smtp-password" /etc/sileme-notifier/smtp-password
install -m 0600 "$files/database-url" /etc/sileme-notifier/database-url
# migrate as the tables' owner, with the packaged migrations (no MIGRATIONS_DIR).
env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin DATABASE_URL="$db_url" sileme-notifier migrate
EOF
    { sed 's/^/    /' "$STATE/configure.log" >&2; fail "service: configuring or migrate failed"; summary; exit 1; }
migrations=$(psql_db -c "SELECT count(*) FROM sileme.sileme_schema_migrations" 2>/dev/null || echo "?")
USER_ID=$(psql_db -c "
    WITH u AS (INSERT INTO users (name, emergency_email) VALUES ('安装测试', 'contact@$DOMAIN') RETURNING id),
         c AS (INSERT INTO check_ins (user_id, check_in_date) SELECT id, DATE '$RUN_DATE' - 3 FROM u)
    SELECT id FROM u")
conf_edited_sha=$(nst 5 sha256sum /etc/sileme-notifier/notifier.conf | cut -c1-64)

prop() { nst 10 systemctl show --property="$1" --value "$UNIT" 2>/dev/null; }
mail_line=""
mail_arrived() {
    mail_line=$("$PY" - "$SILEME_TEST_MAILDIR/deliveries.jsonl" "$DOMAIN" <<'EOF'
import json, sys
try:
    lines = open(sys.argv[1], encoding="utf-8").read().splitlines()
except FileNotFoundError:
    sys.exit(1)
for line in lines:
    try: d = json.loads(line)
    except ValueError: continue
    if any(r.lower().endswith("@" + sys.argv[2]) for r in d.get("rcpt_tos", [])):
        print("from %s to %s, tls=%s auth=%s, %s bytes" % (d.get("mail_from"), ",".join(d["rcpt_tos"]), d.get("tls"), d.get("auth_user"), d.get("size")))
        sys.exit(0)
sys.exit(1)
EOF
    )
}
show_unit_log() {
    log "journal of $UNIT in the namespace (last 25 lines):"
    nst 10 journalctl -u "$UNIT" -n 25 --no-pager -o short-monotonic 2>&1 | sed 's/^/    /' >&2 || true
}

enable_rc=0
nst "$(cap 30)" systemctl enable --now "$UNIT" >"$STATE/enable.log" 2>&1 || enable_rc=$?
is_running() { [[ "$(prop ActiveState)/$(prop SubState)" == active/running ]]; }
wait_until 20 is_running || true
if ((enable_rc == 0)) && is_running && wait_until 30 mail_arrived; then
    pass "service: $migrations migrations applied by the packaged migrate; systemctl enable --now: active/running ($(prop FragmentPath)), the due user's mail arrived $(secs "$(ms_since "$configure_t0")") after configuring ($mail_line)"
else
    fail "service: enable rc=$enable_rc ($(tr '\n' ' ' <"$STATE/enable.log")), state $(prop ActiveState)/$(prop SubState), migrations $migrations, mail: ${mail_line:-none for @$DOMAIN}"
    show_unit_log
fi
MAIN_PID=$(prop MainPID)

# Idle memory: after the run, waiting for the next day.
has_next_run() { local s; s=$(prop StatusText); [[ "$s" == *"next run"* && "$s" != *"running for"* ]]; }
wait_until 10 has_next_run || true
sleep "$(cap 5)"
rss_kb=$(nst 5 awk '/^VmRSS:/ {print $2}' "/proc/$MAIN_PID/status" 2>/dev/null || echo 0)
hwm_kb=$(nst 5 awk '/^VmHWM:/ {print $2}' "/proc/$MAIN_PID/status" 2>/dev/null || echo 0)
anon_kb=$(nst 5 awk '/^RssAnon:/ {print $2}' "/proc/$MAIN_PID/status" 2>/dev/null || echo 0)
file_kb=$(nst 5 awk '/^RssFile:/ {print $2}' "/proc/$MAIN_PID/status" 2>/dev/null || echo 0)
if ((rss_kb > 0 && anon_kb > 0 && anon_kb <= ANON_LIMIT_KB && rss_kb <= RSS_LIMIT_KB)); then
    pass "memory: the packaged daemon idles after its run at RssAnon $anon_kb kB (limit $ANON_LIMIT_KB kB), VmRSS $rss_kb kB (limit $RSS_LIMIT_KB kB; RssFile $file_kb kB, VmHWM $hwm_kb kB)"
else
    fail "memory: RssAnon ${anon_kb:-?} kB (limit $ANON_LIMIT_KB kB), VmRSS ${rss_kb:-?} kB (limit $RSS_LIMIT_KB kB; RssFile ${file_kb:-?} kB, VmHWM $hwm_kb kB) of MainPID $MAIN_PID"
fi

# --- upgrade: the edited conffile survives --------------------------------------------------------------

upgrade_t0=$(now_ms)
upgrade_rc=0
nst "$(cap 60)" env DEBIAN_FRONTEND=noninteractive dpkg -i "$files/$(basename "$DEB2")" </dev/null >"$STATE/upgrade.log" 2>&1 || upgrade_rc=$?
upgrade_ms=$(ms_since "$upgrade_t0")
status=$(nst 10 dpkg-query -W -f='${Status} ${Version}' sileme-notifier 2>/dev/null || true)
conf_sha=$(nst 5 sha256sum /etc/sileme-notifier/notifier.conf | cut -c1-64)
conf_stat=$(nst 5 stat -c '%a %U:%G' /etc/sileme-notifier/notifier.conf 2>/dev/null || true)
leftovers=$(nst 5 find /etc/sileme-notifier -name '*.dpkg-*' | tr '\n' ' ')
secrets=$(nst 5 stat -c '%n %a' /etc/sileme-notifier/smtp-password /etc/sileme-notifier/database-url 2>/dev/null | tr '\n' ' ')
wait_until 20 is_running || true
new_pid=$(prop MainPID)
enabled=$(nst 10 systemctl is-enabled "$UNIT" 2>/dev/null || true)
if ((upgrade_rc == 0)) && [[ "$status" == "install ok installed $V2" && "$conf_sha" == "$conf_edited_sha" &&
    "$conf_stat" == "640 root:sileme-notifier" && -z "${leftovers// /}" && "$enabled" == enabled &&
    "$new_pid" != "$MAIN_PID" && "$new_pid" != 0 ]] && is_running; then
    pass "upgrade: dpkg -i $V1 -> $V2 in $(secs "$upgrade_ms"), no prompt; the edited notifier.conf kept (sha256 ${conf_sha:0:12}, $conf_stat), no .dpkg-* files, secrets kept ($secrets); $UNIT still $enabled, restarted (MainPID $MAIN_PID -> $new_pid), active/running"
else
    fail "upgrade: rc=$upgrade_rc, '$status', conf sha ${conf_sha:0:12} (edited ${conf_edited_sha:0:12}) $conf_stat, leftovers '$leftovers', $enabled, MainPID $MAIN_PID -> $new_pid, $(prop ActiveState)/$(prop SubState)"
    sed 's/^/    /' "$STATE/upgrade.log" >&2
fi

# --- purge: nothing of it left -------------------------------------------------------------------------------

purge_t0=$(now_ms)
purge_rc=0
nst "$(cap 60)" env DEBIAN_FRONTEND=noninteractive dpkg --purge sileme-notifier </dev/null >"$STATE/purge.log" 2>&1 || purge_rc=$?
purge_ms=$(ms_since "$purge_t0")
status=$(nst 10 dpkg-query -W -f='${Status}' sileme-notifier 2>/dev/null || echo "unknown to dpkg")
left_files=$(nst 10 bash -c 'ls -d /etc/sileme-notifier /usr/bin/sileme-notifier /usr/share/sileme-notifier \
    /usr/share/doc/sileme-notifier /lib/systemd/system/sileme-notifier* /usr/lib/sysusers.d/sileme-notifier.conf \
    /usr/lib/systemd/catalog/sileme-notifier.catalog /usr/share/man/man8/sileme-notifier.8.gz \
    /etc/systemd/system/*.wants/sileme-notifier* /etc/systemd/system/sileme-notifier* 2>/dev/null' | tr '\n' ' ' || true)
user_left=$(nst 5 getent passwd sileme-notifier || true)
group_left=$(nst 5 getent group sileme-notifier || true)
owned=""
procs=""
if [[ -n "$uid" && -n "$gid" ]]; then
    owned=$(nst 30 find /etc /usr /var/lib/dpkg /var/lib/systemd /var/log /var/cache /run /tmp /var/tmp -xdev \
        \( -uid "$uid" -o -gid "$gid" \) -print 2>/dev/null | head -5 | tr '\n' ' ' || true)
    procs=$(nst 5 pgrep -u "$uid" | tr '\n' ' ' || true)
fi
unit_known=$(nst 10 systemctl list-unit-files --no-legend 'sileme-notifier*' 2>/dev/null | wc -l || true)
if ((purge_rc == 0)) && [[ "$status" == "unknown to dpkg" || "$status" == "unknown ok not-installed" ]] &&
    [[ -z "${left_files// /}" && -z "$user_left" && -z "$group_left" && -z "${owned// /}" && -z "${procs// /}" && "$unit_known" == 0 ]]; then
    pass "purge: dpkg --purge in $(secs "$purge_ms"): package $status; files, /etc/sileme-notifier (with the secrets), units and enable links gone; user and group sileme-notifier ($uid:$gid) removed, nothing owned by them, no process"
else
    fail "purge: rc=$purge_rc, '$status', left: '$left_files', user '$user_left', group '$group_left', owned by $uid/$gid: '$owned', processes '$procs', unit files known: $unit_known"
    sed 's/^/    /' "$STATE/purge.log" >&2
fi

printf 'timings: build %s, install %s, upgrade %s, purge %s, %d s after the build\n' "$(secs "$build_ms")" \
    "$(secs "$install_ms")" "$(secs "$upgrade_ms")" "$(secs "$purge_ms")" $((SECONDS - START))
summary
