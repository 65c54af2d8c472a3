#!/usr/bin/env bash
# package.sh — builds the Debian package dist/sileme-notifier_<version>_amd64.deb.
#
#   scripts/package.sh                      release build, then the package in dist/
#   scripts/package.sh --no-build           package the release binary already built
#   scripts/package.sh --output-dir DIR     write the .deb into DIR instead of dist/
#
#   SILEME_PACKAGE_VERSION=V                the package's version (default: NotifierVersion.current
#                                           from Sources/Values/NotifierVersion.swift); the test uses
#                                           it to make a newer package of the same build
#   SILEME_PACKAGE_MAINTAINER="Name <addr>" the Maintainer field
#
# The binary: `swift build -c release --static-swift-stdlib --disable-local-rpath -z now` in its own scratch
# path, .build-release (the Swift runtime is linked in, so a server needs no Swift toolchain; no
# RUNPATH), stripped. Depends: dpkg-shlibdeps on the libraries it links (libpq5, libcurl4,
# libsystemd0, libc6, libstdc++6, libgcc-s1), plus systemd-sysusers for the postinst.
#
# Contents (docs/install.md, "What the package holds"):
#   /usr/bin/sileme-notifier
#   /lib/systemd/system/sileme-notifier.service, sileme-notifier-run.{service,timer}
#       generated from systemd/ with /usr/local/bin -> /usr/bin and the documentation paths changed
#   /usr/lib/sysusers.d/sileme-notifier.conf          the system user
#   /usr/lib/systemd/catalog/sileme-notifier.catalog  the journal catalog
#   /etc/sileme-notifier/notifier.conf                conffile, 0640 root:sileme-notifier (group set
#                                                     by the postinst), from config/notifier.conf.example
#   /usr/share/sileme-notifier/migrations/*.sql, templates/zh-Hans/, zh-Hant/, en/, webhooks/ (body template examples), least-privilege.sql
#   /usr/share/doc/sileme-notifier/                   README.md, docs/, copyright, changelog.gz, examples/
#   /usr/share/man/man8/sileme-notifier.8.gz          from the command definitions (swift-argument-parser's
#                                                     generate-manual) plus FILES, settings and exit codes
#   bash, zsh and fish completions                    from --generate-completion-script
# Maintainer scripts: debian/ in this script (below): create the user, set the conffile's group,
# update the journal catalog; never migrate, never enable or start the service; purge removes
# /etc/sileme-notifier and the system user.
#
# Needs: swift, dpkg-dev (dpkg-shlibdeps), binutils (strip), gzip, /usr/bin/python3
# (scripts/install-deps.sh installs them). Runs as any user (dpkg-deb --root-owner-group).
set -euo pipefail

readonly REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
readonly SCRATCH=$REPO/.build-release
readonly PY=/usr/bin/python3
cd "$REPO"

build=1
outdir=$REPO/dist
while (($#)); do
    case $1 in
    --no-build) build=0 ;;
    --output-dir) outdir=$2; shift ;;
    -h | --help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "package.sh: unknown argument $1" >&2; exit 64 ;;
    esac
    shift
done

log() { printf 'package.sh: %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }

for tool in dpkg-deb dpkg-shlibdeps strip gzip "$PY"; do
    command -v "$tool" >/dev/null || die "$tool not found (scripts/install-deps.sh installs it)"
done

source_version=$(sed -n 's/.*static let current = "\([^"]*\)".*/\1/p' Sources/Values/NotifierVersion.swift)
[[ -n "$source_version" ]] || die "no NotifierVersion.current in Sources/Values/NotifierVersion.swift"
version=${SILEME_PACKAGE_VERSION:-$source_version}
[[ "$version" =~ ^[0-9][A-Za-z0-9.+~]*$ ]] || die "not a Debian native version: $version"
maintainer=${SILEME_PACKAGE_MAINTAINER:-SileMe maintainers <maintainers@sileme.app>}
arch=amd64
[[ "$(dpkg --print-architecture)" == "$arch" ]] || die "builds $arch packages only (this is $(dpkg --print-architecture))"
# Reproducible: file times and the changelog date from the last commit.
export SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct 2>/dev/null || date +%s)}

# --- the release binary -----------------------------------------------------------------------------

# -z now: lazy binding off (lintian's hardening-no-bindnow); PIE is the toolchain's default.
build_flags=(-c release --static-swift-stdlib --disable-local-rpath -Xlinker -z -Xlinker now --scratch-path "$SCRATCH")
if ((build)); then
    log "swift build ${build_flags[*]} (sileme-notifier, generate-manual)"
    swift build "${build_flags[@]}" --product sileme-notifier >&2
    # Same flags: building the other product does not relink the first.
    swift build "${build_flags[@]}" --product generate-manual >&2
fi
bin=$SCRATCH/release/sileme-notifier
genman=$SCRATCH/release/generate-manual
[[ -x "$bin" && -x "$genman" ]] || die "no release build in $SCRATCH (run without --no-build)"
built_version=$("$bin" --version)
[[ "$built_version" == "$source_version" ]] ||
    die "the release binary says $built_version, the source $source_version: rebuild (without --no-build)"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
root=$work/root
mkdir -p "$root/DEBIAN"
umask 022

# --- files ------------------------------------------------------------------------------------------

install -D -m 0755 "$bin" "$root/usr/bin/sileme-notifier"
strip --remove-section=.comment --remove-section=.note --strip-unneeded "$root/usr/bin/sileme-notifier"
if "$PY" - "$root/usr/bin/sileme-notifier" <<'EOF'; then :; else die "the binary links a Swift runtime library or has a RUNPATH"; fi
import subprocess, sys
out = subprocess.run(["readelf", "-d", sys.argv[1]], capture_output=True, text=True, check=True).stdout
bad = [l for l in out.splitlines() if "libswift" in l or "libFoundation" in l or "libdispatch" in l or "PATH" in l]
if bad:
    print("\n".join(bad), file=sys.stderr)
    sys.exit(1)
EOF

# Units, catalog and sysusers entry: the shipped files with the packaged paths.
"$PY" - "$REPO/systemd" "$root" <<'EOF'
import pathlib, re, sys
src, root = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
header = """# Installed by the Debian package sileme-notifier (man 8 sileme-notifier; docs/install.md,
# "The Debian package"): edit /etc/sileme-notifier/notifier.conf, write the secrets into
# /etc/sileme-notifier/smtp-password and database-url (mode 0600), run `sileme-notifier migrate` as
# the tables' owner, then `systemctl enable --now sileme-notifier.service`. The package never
# enables or starts it.
"""
def packaged(text, name):
    # The manual installation steps of the header do not apply to the package: replace them.
    text = re.sub(r"# Install \(as root\):\n(#   .*\n)+", header, text)
    text = text.replace("ExecStart=/usr/local/bin/sileme-notifier", "ExecStart=/usr/bin/sileme-notifier")
    text = text.replace("file:/usr/local/share/doc/sileme-notifier/README.md",
                        "file:/usr/share/doc/sileme-notifier/README.md")
    text = re.sub(r"^Documentation=(.*)$", r"Documentation=man:sileme-notifier(8) \1", text, flags=re.M)
    text = text.replace("# Install as /usr/local/lib/sysusers.d/sileme-notifier.conf (or /etc/sysusers.d/), then run\n"
                        "# `systemd-sysusers` (a Debian package would call it from postinst).",
                        "# Installed by the Debian package sileme-notifier, whose postinst runs systemd-sysusers.")
    text = text.replace("# Install:  install -m 0644 sileme-notifier.catalog /usr/local/lib/systemd/catalog/",
                        "# Installed by the Debian package sileme-notifier, whose postinst runs journalctl --update-catalog.")
    for line in text.splitlines():
        if "/usr/local/" in line and "credstore" not in line:
            sys.exit(f"package.sh: {name} still names /usr/local: {line}")
    return text
targets = {
    "sileme-notifier.service": "lib/systemd/system/sileme-notifier.service",
    "sileme-notifier-run.service": "lib/systemd/system/sileme-notifier-run.service",
    "sileme-notifier-run.timer": "lib/systemd/system/sileme-notifier-run.timer",
    "sileme-notifier.sysusers": "usr/lib/sysusers.d/sileme-notifier.conf",
    "sileme-notifier.catalog": "usr/lib/systemd/catalog/sileme-notifier.catalog",
}
for name, target in targets.items():
    out = root / target
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(packaged((src / name).read_text(encoding="utf-8"), name), encoding="utf-8")
    out.chmod(0o644)
EOF

# The configuration: the documented example, as a conffile readable by the service's group only.
install -d -m 0750 "$root/etc/sileme-notifier"
sed -e 's|^# Install as /etc/sileme-notifier/notifier.conf (mode 0640)\.|# Installed by the Debian package sileme-notifier (a conffile: your edits survive upgrades).|' \
    -e 's|(identical to config/templates/)|(identical to /usr/share/sileme-notifier/templates/)|' \
    config/notifier.conf.example >"$root/etc/sileme-notifier/notifier.conf"
chmod 0640 "$root/etc/sileme-notifier/notifier.conf"
echo /etc/sileme-notifier/notifier.conf >"$root/DEBIAN/conffiles"

share=$root/usr/share/sileme-notifier
install -d "$share/migrations" "$share/templates" "$share/webhooks"
install -m 0644 Sources/Store/Migrations/*.sql "$share/migrations/"
install -m 0644 config/templates/*.example "$share/templates/"
for language in config/templates/*/; do
    language=$(basename "$language")
    install -d "$share/templates/$language"
    install -m 0644 "config/templates/$language"/*.mustache "config/templates/$language"/*.texts "$share/templates/$language/"
done
install -m 0644 config/webhooks/* "$share/webhooks/"
install -m 0644 config/least-privilege.sql "$share/"

doc=$root/usr/share/doc/sileme-notifier
install -d "$doc/docs" "$doc/examples"
install -m 0644 README.md "$doc/"
install -m 0644 docs/*.md "$doc/docs/"
install -m 0644 config/notifier.conf.example "$doc/examples/"

cat >"$doc/copyright" <<'EOF'
Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/
Upstream-Name: sileme-notifier
Upstream-Contact: SileMe maintainers <maintainers@sileme.app>
Comment: The binary links statically the Swift standard library and runtime, Foundation and
 libdispatch (swift.org), swift-argument-parser, swift-log (Apple) and swift-mustache
 (hummingbird-project), all under the Apache License 2.0 (the Swift runtime with the Runtime
 Library Exception).

Files: *
Copyright: 2026 SileMe maintainers
License: proprietary
 All rights reserved. No licence to redistribute this software has been granted.

Files: swift-stdlib/* swift-foundation/* swift-corelibs-libdispatch/*
Copyright: 2014-2026 Apple Inc. and the Swift project authors
License: Apache-2.0 with Runtime Library Exception
 On Debian systems the Apache License 2.0 is in /usr/share/common-licenses/Apache-2.0.
 .
 Runtime Library Exception: as an exception, if you use this Software to compile your source code
 and portions of this Software are embedded into the binary product as a result, you may
 redistribute such product without providing attribution as would otherwise be required by
 Sections 4(a), 4(b) and 4(d) of the License.

Files: swift-argument-parser/* swift-log/*
Copyright: 2014-2026 Apple Inc. and the Swift project authors
License: Apache-2.0
 On Debian systems the Apache License 2.0 is in /usr/share/common-licenses/Apache-2.0.

Files: swift-mustache/*
Copyright: 2021-2026 the Hummingbird authors
License: Apache-2.0
 On Debian systems the Apache License 2.0 is in /usr/share/common-licenses/Apache-2.0.
EOF

changelog_date=$(date -u -R -d "@$SOURCE_DATE_EPOCH")
cat >"$work/changelog" <<EOF
sileme-notifier ($version) bookworm; urgency=medium

  * Release $version (NotifierVersion $source_version); the changes are in
    the project's history.

 -- $maintainer  $changelog_date
EOF
gzip -9n -c "$work/changelog" >"$doc/changelog.gz"

# --- the man page: the command definitions, then what the parser cannot know --------------------------

mkdir -p "$work/man"
"$genman" "$bin" --section 8 --date "$(date -u -d "@$SOURCE_DATE_EPOCH" +%F)" \
    --authors "SileMe maintainers<maintainers@sileme.app>" --output-directory "$work/man" >&2
"$PY" - "$work/man/sileme-notifier.8" "$REPO" <<'EOF'
import os, re, sys
page_path, repo = sys.argv[1], sys.argv[2]
page = open(page_path, encoding="utf-8").read()

def table(name, heading_re, first_col):
    """The rows of the first Markdown table after the heading matching heading_re in the file
    `name` (relative to the repository), each a dict keyed by the table's column headers."""
    text = open(os.path.join(repo, name), encoding="utf-8").read()
    m = re.search(heading_re, text, flags=re.M)
    if not m:
        sys.exit(f"package.sh: {name} has no heading {heading_re}")
    header, rows, started = None, [], False
    for line in text[m.end():].splitlines():
        if line.startswith("|"):
            cells = [c.strip() for c in re.split(r"(?<!\\)\|", line.strip().strip("|"))]
            if cells[0] == first_col:
                header, started = cells, True
                continue
            if set(cells[0]) <= set("-: "):
                started = True
                continue
            if header is None:
                sys.exit(f"package.sh: the table under {heading_re} in {name} does not start with a column {first_col}")
            rows.append(dict(zip(header, (c.replace("\\|", "|") for c in cells))))
        elif started and rows:
            break
    if not rows:
        sys.exit(f"package.sh: {name} has no table under {heading_re}")
    return rows

def roff(text):
    """Markdown cell text to mdoc text: no code spans or links, escapes for roff."""
    text = re.sub(r"\[([\w-]+\.md)\]\([^)]+\)", r"docs/\1", text)  # [rule.md](rule.md): docs/rule.md
    text = re.sub(r"\[([^\]]+)\]\([^)]+\)", r"\1", text)
    text = text.replace("`", "").replace("**", "")
    text = text.replace("\\", "\\e")
    text = re.sub(r"^([.'])", r"\\&\1", text)
    # Non-ASCII (the Chinese defaults) as groff's \[uXXXX] escapes.
    return "".join(c if ord(c) < 128 else "\\[u%04X]" % ord(c) for c in text)

# The one list of settings (docs/configuration.md) and the exit codes (docs/interfaces.md).
settings = [(r["setting"], r["default"], r["accepted"], r["meaning"])
            for r in table("docs/configuration.md", r"^## Settings$", "setting")]
codes = [(r["code"], (r["name"].strip("`") + ": " if r.get("name", "—") not in ("", "—") else "") + r["meaning"])
         for r in table("docs/interfaces.md", r"^## Exit codes$", "code")]

out = [".Sh CONFIGURATION",
       "The configuration is one file of",
       ".Li KEY=VALUE",
       "lines (the format of systemd's",
       ".Li EnvironmentFile= ) ,",
       "given with",
       ".Fl -config ,",
       ".Ev SILEME_CONFIG ,",
       "or at",
       ".Pa /etc/sileme-notifier/notifier.conf .",
       "Every setting can be overridden by an environment variable of the same name.",
       "Unknown keys and invalid values stop the program with exit status 78, naming the setting.",
       "The secrets may also come from systemd credentials",
       ".Pa ( $CREDENTIALS_DIRECTORY/smtp-password , database-url ) .",
       ".Bl -tag -width Ds"]
for name, default, accepted, meaning in settings:
    keys = [k.strip() for k in roff(name).split(",")]
    out.append(".It " + " , ".join("Ev " + k for k in keys))
    text = roff(meaning)
    default = default.strip()
    if default.startswith("(") and default.endswith(")"):
        default = default[1:-1]
    extras = ([roff(accepted)] if accepted.strip() else []) + (["default: " + roff(default)] if default else [])
    if extras:
        text += " (" + "; ".join(extras) + ")"
    out.append(text)
out.append(".El")
out += [".Sh EXIT STATUS", ".Bl -tag -width Ds"]
for code, meaning in codes:
    out += [".It " + roff(code), roff(meaning)]
out.append(".El")
out += [".Sh FILES", ".Bl -tag -width Ds",
        ".It Pa /etc/sileme-notifier/notifier.conf", "The configuration (0640 root:sileme-notifier).",
        ".It Pa /etc/sileme-notifier/smtp-password , Pa /etc/sileme-notifier/database-url",
        "The secrets, 0600 root:root, handed to the service as credentials by",
        ".Pa sileme-notifier.service .",
        ".It Pa /etc/default/sileme-notifier", "Optional process environment of the service.",
        ".It Pa /usr/share/sileme-notifier/migrations", "The SQL migrations applied by",
        ".Nm Cm migrate .",
        ".It Pa /usr/share/sileme-notifier/templates",
        "The mail templates and the page's texts (page.texts), one folder per language (equal to the built-in text); copy them to a folder named by",
        ".Ev TEMPLATE_DIR",
        "to change the mail or the page.",
        ".It Pa /usr/share/sileme-notifier/webhooks",
        "Examples of a webhook body template (a WeCom group bot, an SMS gateway) for",
        ".Ev WEBHOOK_BODY_TEMPLATE .",
        ".It Pa /usr/share/sileme-notifier/least-privilege.sql",
        "Creates the least-privilege database role the daemon should connect as.",
        ".It Pa /lib/systemd/system/sileme-notifier.service",
        "The daemon; alternatively",
        ".Pa sileme-notifier-run.timer",
        "starts one run a day.",
        ".It Pa /usr/share/doc/sileme-notifier/",
        "The documentation:",
        ".Pa README.md",
        "(the overview),",
        ".Pa docs/operating.md",
        "(the operator's manual),",
        ".Pa docs/install.md",
        "and",
        ".Pa docs/configuration.md",
        "(every setting, with its default).",
        ".El",
        ".Sh SEE ALSO",
        ".Xr journalctl 1 ,",
        ".Xr systemd.exec 5 ,",
        ".Xr systemctl 1"]

# The discussion's blank lines are paragraph breaks in mdoc (an empty line is a groff warning).
page = re.sub(r"\n\n+", "\n.Pp\n", page)
# The parser's own EXIT STATUS (.Ex -std) is replaced by the real codes; the sections go before
# AUTHORS (mdoc order).
page = re.sub(r'\.Sh "EXIT STATUS"\n\.Ex -std\n', "", page)
# generate-manual drops non-ASCII characters: the app's name in the abstract came out as "()".
page = page.replace(" ().", " (SileMe).")
extra = "\n".join(out) + "\n"
if "\n.Sh AUTHORS" in page:
    page = page.replace("\n.Sh AUTHORS", "\n" + extra + ".Sh AUTHORS", 1)
else:
    page += extra
open(page_path, "w", encoding="utf-8").write(page)
EOF
install -d "$root/usr/share/man/man8"
gzip -9n -c "$work/man/sileme-notifier.8" >"$root/usr/share/man/man8/sileme-notifier.8.gz"

# --- completions ---------------------------------------------------------------------------------------

install -d "$root/usr/share/bash-completion/completions" "$root/usr/share/zsh/vendor-completions" \
    "$root/usr/share/fish/vendor_completions.d"
# A completion file is sourced, not run: no #! line.
"$bin" --generate-completion-script bash | sed '1{/^#!/d}' >"$root/usr/share/bash-completion/completions/sileme-notifier"
"$bin" --generate-completion-script zsh >"$root/usr/share/zsh/vendor-completions/_sileme-notifier"
"$bin" --generate-completion-script fish >"$root/usr/share/fish/vendor_completions.d/sileme-notifier.fish"
chmod 0644 "$root"/usr/share/{bash-completion/completions,zsh/vendor-completions,fish/vendor_completions.d}/*

# --- maintainer scripts -------------------------------------------------------------------------------

units="sileme-notifier.service sileme-notifier-run.service sileme-notifier-run.timer"

cat >"$root/DEBIAN/postinst" <<EOF
#!/bin/sh
# postinst of sileme-notifier: the system user, the configuration's group, the journal catalog.
# It does not migrate the database and does not enable or start the service: that is the
# operator's step once the configuration is written (docs/install.md, "The Debian package").
set -e

if [ "\$1" = configure ]; then
    systemd-sysusers /usr/lib/sysusers.d/sileme-notifier.conf
    # The service reads its configuration as the group sileme-notifier (the secrets stay 0600 root).
    chgrp sileme-notifier /etc/sileme-notifier
    chmod 0750 /etc/sileme-notifier
    if [ -f /etc/sileme-notifier/notifier.conf ]; then
        chgrp sileme-notifier /etc/sileme-notifier/notifier.conf
        chmod 0640 /etc/sileme-notifier/notifier.conf
    fi
    journalctl --update-catalog >/dev/null 2>&1 || true
fi

if [ "\$1" = configure ] || [ "\$1" = abort-upgrade ] || [ "\$1" = abort-deconfigure ] || [ "\$1" = abort-remove ]; then
    # What dh_installsystemd --no-enable does: keep an operator's enabling across an upgrade and
    # record the unit's links (so that purge removes them); enable nothing on a first install.
    for unit in $units; do
        if deb-systemd-helper debian-installed "\$unit"; then
            deb-systemd-helper unmask "\$unit" >/dev/null || true
            if deb-systemd-helper --quiet was-enabled "\$unit"; then
                deb-systemd-helper enable "\$unit" >/dev/null || true
            fi
        fi
        deb-systemd-helper update-state "\$unit" >/dev/null || true
    done
    if [ -d /run/systemd/system ]; then
        systemctl --system daemon-reload >/dev/null || true
        # An upgrade restarts what was running (the new binary); nothing is started otherwise.
        if [ -n "\$2" ]; then
            deb-systemd-invoke try-restart sileme-notifier.service >/dev/null || true
        fi
    fi
fi
EOF

cat >"$root/DEBIAN/prerm" <<EOF
#!/bin/sh
# prerm of sileme-notifier: stop the daemon (and a run of the timer variant) before removal. A
# stop lets the daemon finish the mail in flight (TimeoutStopSec=60).
set -e

if [ -d /run/systemd/system ] && [ "\$1" = remove ]; then
    deb-systemd-invoke stop $units >/dev/null || true
fi
EOF

cat >"$root/DEBIAN/postrm" <<EOF
#!/bin/sh
# postrm of sileme-notifier.
#   remove: the units are masked while the configuration stays (as dh_installsystemd does).
#   purge:  the configuration /etc/sileme-notifier (notifier.conf, the secrets and whatever else the
#           operator put there) and /etc/default/sileme-notifier are deleted, the units' enable
#           links and state forgotten, and the system user and group sileme-notifier removed
#           (the package created them and nothing outside /etc/sileme-notifier belongs to them;
#           files an operator gave the user elsewhere, such as an OUTBOX_DIR, are left in place).
set -e

if [ -d /run/systemd/system ]; then
    systemctl --system daemon-reload >/dev/null || true
fi

if [ "\$1" = remove ] && command -v deb-systemd-helper >/dev/null; then
    deb-systemd-helper mask $units >/dev/null || true
fi

if [ "\$1" = purge ]; then
    if command -v deb-systemd-helper >/dev/null; then
        deb-systemd-helper purge $units >/dev/null || true
        deb-systemd-helper unmask $units >/dev/null || true
    fi
    # Enable links an operator made with systemctl (not recorded by deb-systemd-helper).
    for unit in $units; do
        for link in /etc/systemd/system/*.wants/"\$unit"; do
            if [ -L "\$link" ]; then rm -f "\$link"; fi
        done
    done
    rm -rf /etc/sileme-notifier
    rm -f /etc/default/sileme-notifier
    if getent passwd sileme-notifier >/dev/null; then
        userdel sileme-notifier >/dev/null 2>&1 || echo "sileme-notifier: could not remove the user sileme-notifier" >&2
    fi
    if getent group sileme-notifier >/dev/null; then
        groupdel sileme-notifier >/dev/null 2>&1 || echo "sileme-notifier: could not remove the group sileme-notifier" >&2
    fi
fi
EOF
chmod 0755 "$root/DEBIAN/postinst" "$root/DEBIAN/prerm" "$root/DEBIAN/postrm"

# --- control --------------------------------------------------------------------------------------------

mkdir -p "$work/shlibs/debian"
printf 'Source: sileme-notifier\n\nPackage: sileme-notifier\nArchitecture: any\n' >"$work/shlibs/debian/control"
shlibs=$(cd "$work/shlibs" && dpkg-shlibdeps -O -e "$root/usr/bin/sileme-notifier" 2>"$work/shlibdeps.log") ||
    { cat "$work/shlibdeps.log" >&2; die "dpkg-shlibdeps failed"; }
depends=${shlibs#shlibs:Depends=}
[[ "$depends" != "$shlibs" && -n "$depends" ]] || die "dpkg-shlibdeps said: $shlibs"
for lib in libpq5 libcurl4 libsystemd0; do
    [[ "$depends" == *"$lib "* || "$depends" == *"$lib" || "$depends" == *"$lib,"* ]] || die "Depends lacks $lib: $depends"
done
[[ "$depends" != *swift* ]] || die "Depends names a Swift package: $depends"
depends="$depends, systemd | systemd-standalone-sysusers, init-system-helpers (>= 1.54), passwd"

installed_size=$(du -k -s --apparent-size --exclude=DEBIAN "$root" | cut -f1)
cat >"$root/DEBIAN/control" <<EOF
Package: sileme-notifier
Version: $version
Architecture: $arch
Maintainer: $maintainer
Installed-Size: $installed_size
Depends: $depends
Section: mail
Priority: optional
Description: check-in watchdog that emails emergency contacts (SileMe)
 The server side of the SileMe daily check-in app for people who live alone:
 when a user misses two days of check-ins, their emergency contact gets an
 email on the third morning. A daemon (or a daily timer) batch-queries
 PostgreSQL for everyone's last check-in, deduplicates through
 notification_logs, sends the templated mail over SMTP and reports to
 journald.
 .
 After installing, edit /etc/sileme-notifier/notifier.conf, run
 "sileme-notifier migrate" and "systemctl enable --now sileme-notifier".
EOF

(cd "$root" && find . -path ./DEBIAN -prune -o -type f -printf '%P\0' | LC_ALL=C sort -z |
    xargs -0 md5sum >DEBIAN/md5sums)
chmod 0644 "$root/DEBIAN/md5sums"
find "$root" -exec touch -h -d "@$SOURCE_DATE_EPOCH" {} +
mkdir -p "$outdir"
deb=$outdir/sileme-notifier_${version}_${arch}.deb
dpkg-deb --root-owner-group -Zxz --build "$root" "$deb" >&2
log "built $deb ($(du -h "$deb" | cut -f1), installed $installed_size KiB); Depends: $depends"
echo "$deb"
