#!/bin/bash
# ns-init.sh STATE_DIR — PID 1 of scripts/systemd-boot-test.sh's namespaces until it execs systemd.
#
# Started by `unshare --pid --fork --mount --mount-proc --uts --ipc [--cgroup]`. Everything below
# changes this private mount namespace only; nothing is written to the machine's /etc, /usr/local,
# /tmp, /var/tmp or /run:
#
#   1. mount --make-rprivate /            nothing mounted here propagates to the host
#   2. fresh tmpfs on /tmp, /var/tmp, /run (systemd-tmpfiles would empty the real /tmp) and /dev/shm
#   3. overlayfs on /etc and /usr/local    writes (systemd-sysusers, the installed unit, config,
#                                          binary) land in STATE_DIR/overlay/*/upper
#   4. /dev/console, /dev/kmsg, /dev/watchdog* replaced by harmless files; /sys, /proc/sys and
#      /proc/sysrq-trigger read-only (boot messages go to STATE_DIR/console.log, no sysctl or
#      hardware watchdog is touched)
#   5. the cgroup hierarchies remounted inside the cgroup namespace (STATE_DIR/ns/cgroup-mounts),
#      so systemd's cgroups are created under the test's own cgroup, not at the host's root
#   6. units that must not start are masked in /run/systemd/system.control (STATE_DIR/ns/masks;
#      that directory wins over /etc/systemd/system), journald is volatile, no watchdog device
#   7. exec /lib/systemd/systemd --system, with container=... so that systemd behaves as in a
#      container: no clock/timezone setting, no kmsg logging, and no unmounting or read-only
#      remounting of shared file systems at poweroff.
set -euo pipefail

state=$1
log() { echo "ns-init: $*"; }
trap 'rc=$?; if ((rc != 0)); then log "failed (exit $rc): $BASH_COMMAND"; fi' EXIT

[[ $$ == 1 ]] || { log "must run as PID 1 of a new PID namespace"; exit 1; }
[[ -d "$state/ns" ]] || { log "$state/ns missing"; exit 1; }

# 1. No propagation to or from the host (unshare already does this; be explicit).
mount --make-rprivate /

# 2. Fresh scratch directories.
mount -t tmpfs -o mode=1777,nosuid,nodev tmpfs /tmp
mount -t tmpfs -o mode=1777,nosuid,nodev tmpfs /var/tmp
mount -t tmpfs -o mode=0755,nosuid,nodev tmpfs /run
mount -t tmpfs -o mode=1777,nosuid,nodev tmpfs /dev/shm

# 3. Copy-on-write /etc and /usr/local.
for name in etc usr-local; do
    target=/${name//-//}
    mkdir -p "$state/overlay/$name/upper" "$state/overlay/$name/work"
    mount -t overlay -o "lowerdir=$target,upperdir=$state/overlay/$name/upper,workdir=$state/overlay/$name/work" \
        "sileme-boot-test-$name" "$target"
done

# 4. Devices and kernel interfaces that must not be written.
touch "$state/console.log"
mount --bind "$state/console.log" /dev/console
mount --bind /dev/null /dev/kmsg
for dev in /dev/watchdog /dev/watchdog[0-9]*; do
    if [[ -e "$dev" ]]; then mount --bind /dev/null "$dev"; fi
done
mount -o remount,bind,ro /sys
mount --bind /proc/sys /proc/sys
mount -o remount,bind,ro /proc/sys
if [[ -e /proc/sysrq-trigger ]]; then
    mount --bind /proc/sysrq-trigger /proc/sysrq-trigger
    mount -o remount,bind,ro /proc/sysrq-trigger
fi

# 5. cgroups: lines "MOUNTPOINT TYPE OPTIONS" (OPTIONS "-" for none), empty without a cgroup ns.
if [[ -s "$state/ns/cgroup-mounts" ]]; then
    if ! grep -q '^/sys/fs/cgroup cgroup2 ' "$state/ns/cgroup-mounts"; then
        mount -t tmpfs -o mode=0755,nosuid,nodev,noexec tmpfs /sys/fs/cgroup
    fi
    while read -r mp type opts; do
        mkdir -p "$mp"
        if [[ "$opts" == - ]]; then opts=""; else opts=",$opts"; fi
        mount -t "$type" -o "nosuid,nodev,noexec$opts" "$type" "$mp"
    done <"$state/ns/cgroup-mounts"
fi

# 6. Masks and manager/journald settings.
mkdir -p /run/systemd/system.control /run/systemd/system.conf.d /run/systemd/journald.conf.d
while read -r unit; do
    [[ -n "$unit" ]] && ln -sfn /dev/null "/run/systemd/system.control/$unit"
done <"$state/ns/masks"
cat >/run/systemd/system.conf.d/50-sileme-boot-test.conf <<'EOF'
[Manager]
ShowStatus=no
RuntimeWatchdogSec=off
RebootWatchdogSec=off
KExecWatchdogSec=off
DefaultTimeoutStopSec=10s
EOF
cat >/run/systemd/journald.conf.d/50-sileme-boot-test.conf <<'EOF'
[Journal]
Storage=volatile
ReadKMsg=no
ForwardToSyslog=no
ForwardToKMsg=no
ForwardToConsole=no
ForwardToWall=no
RateLimitIntervalSec=0
EOF

log "namespace ready, starting systemd"
trap - EXIT
exec env -i container=sileme-boot-test PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    /lib/systemd/systemd --system --show-status=no
