#!/bin/bash
# ns-init.sh STATE_DIR — PID 1 of scripts/systemd-boot-test.sh's namespaces until it execs systemd.
#
# Started by `unshare --pid --fork --mount --mount-proc --uts --ipc [--cgroup]`. Everything below
# changes this private mount namespace only; nothing is written to the machine's /etc, /usr/local,
# /tmp, /var/tmp or /run:
#
#   1. mount --make-rprivate /            nothing mounted here propagates to the host
#   2. fresh tmpfs on /tmp, /var/tmp, /run (systemd-tmpfiles would empty the real /tmp)
#   3. overlayfs on /etc and /usr/local    writes (systemd-sysusers, the installed unit, config,
#      (or STATE_DIR/ns/overlays)          binary) land in STATE_DIR/overlay/*/upper; the paths in
#                                          STATE_DIR/ns/hide behind an empty read-only tmpfs
#   4. a private /dev (tmpfs with the pseudo devices, a new devpts, /dev/shm; /dev/console is
#      STATE_DIR/console.log; no kmsg, watchdog or disks); /sys, /proc/sys, /proc/sysrq-trigger
#      read-only (no sysctl is written)
#   5. the cgroup hierarchies remounted inside the cgroup namespace (STATE_DIR/ns/cgroup-mounts),
#      so systemd's cgroups are created under the test's own cgroup, not at the host's root
#   6. units that must not start are masked in /run/systemd/system.control (STATE_DIR/ns/masks;
#      that directory wins over /etc/systemd/system), journald is volatile, no watchdog device
#   7. / made rshared (inside the namespace only), as systemd does itself outside containers
#   8. exec /lib/systemd/systemd --system, with container=... so that systemd behaves as in a
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

# 3. Copy-on-write /etc and /usr/local, or the directories listed in STATE_DIR/ns/overlays (one
# absolute path a line; the package test gives /usr and dpkg's and systemd's parts of /var). None
# may contain STATE_DIR. Then the directories of STATE_DIR/ns/hide behind an empty read-only tmpfs
# (the package test hides the Swift toolchain).
overlays=(/etc /usr/local)
if [[ -s "$state/ns/overlays" ]]; then mapfile -t overlays <"$state/ns/overlays"; fi
for target in "${overlays[@]}"; do
    [[ -n "$target" ]] || continue
    name=${target#/}
    name=${name//\//-}
    mkdir -p "$state/overlay/$name/upper" "$state/overlay/$name/work"
    mount -t overlay -o "lowerdir=$target,upperdir=$state/overlay/$name/upper,workdir=$state/overlay/$name/work" \
        "sileme-boot-test-$name" "$target"
done
if [[ -s "$state/ns/hide" ]]; then
    while read -r target; do
        [[ -d "$target" ]] && mount -t tmpfs -o ro,mode=0755,nosuid,nodev tmpfs "$target"
    done <"$state/ns/hide"
fi

# 4. A private /dev, as a container manager gives one: systemd would otherwise create /dev/log,
# /dev/initctl, ... in the host's devtmpfs, and write boot messages to the host's console. Only
# the pseudo devices; /dev/console is a log file; no kmsg, no watchdog, no disks.
mount -t tmpfs -o mode=0755,nosuid,noexec tmpfs /dev
mknod -m 0666 /dev/null c 1 3
mknod -m 0666 /dev/zero c 1 5
mknod -m 0666 /dev/full c 1 7
mknod -m 0666 /dev/random c 1 8
mknod -m 0666 /dev/urandom c 1 9
mknod -m 0666 /dev/tty c 5 0
mkdir -m 0755 /dev/pts /dev/shm
mount -t devpts -o newinstance,ptmxmode=0666,mode=0620,nosuid,noexec devpts /dev/pts
ln -s pts/ptmx /dev/ptmx
mount -t tmpfs -o mode=1777,nosuid,nodev tmpfs /dev/shm
ln -s /proc/self/fd /dev/fd
ln -s /proc/self/fd/0 /dev/stdin
ln -s /proc/self/fd/1 /dev/stdout
ln -s /proc/self/fd/2 /dev/stderr
touch "$state/console.log" /dev/console
mount --bind "$state/console.log" /dev/console

# Kernel interfaces read-only (sysctl, sysfs): systemd in a container copes with that.
mount -o remount,bind,ro /sys
mount --bind /proc/sys /proc/sys
mount -o remount,bind,ro /proc/sys
if [[ -e /proc/sysrq-trigger ]]; then
    mount --bind /proc/sysrq-trigger /proc/sysrq-trigger
    mount -o remount,bind,ro /proc/sysrq-trigger
fi

# 5. cgroups: lines "MOUNTPOINT TYPE OPTIONS" (OPTIONS "-" for none), written by the caller.
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

# 7. Shared propagation *within* this namespace, as systemd sets it up itself on a real boot but
# not in a container (it leaves that to the container manager). The mounts above were private, so
# this creates new peer groups that exist only here: nothing propagates to the host. Without it,
# mounts that systemd makes in a service's helper namespace never appear in PID 1's: LoadCredential=
# then leaves an empty /run/credentials/UNIT (0700 root) and the service cannot read its secrets.
mount --make-rshared /

log "namespace ready, starting systemd"
trap - EXIT
exec env -i container=sileme-boot-test PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    /lib/systemd/systemd --system --show-status=no
