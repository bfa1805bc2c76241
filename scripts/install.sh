#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# make install-files / make uninstall: puts shaked's files in place, or takes them away again.
#
#   scripts/install.sh install     binaries, units (the shake-to-undo user unit too), udev rules, sysusers.d,
#                                  tmpfiles.d and modules-load.d files, configuration, man pages (man/), the
#                                  examples and completions, from binaries already built in BINDIR_BUILD
#   scripts/install.sh uninstall   removes exactly those files again
#
# The Makefile passes its variables in the environment: PREFIX, SYSCONFDIR, DESTDIR, BINDIR_BUILD,
# GENERATED_DIR; debian/rules also UNITDIR, USERUNITDIR, UDEVRULESDIR, SYSUSERSDIR, TMPFILESDIR,
# MODULESLOADDIR, DBUSPOLICYDIR and DBUSSERVICEDIR. docs/install.md is the guide for people.
#
# The configuration file is the one file an administrator edits, so it is never overwritten and is removed
# only while it is exactly the shipped one. With DESTDIR empty and run as root, the script also tells
# systemd-sysusers, udev and systemd about the change; each of those steps is skipped when the tool is
# missing or the machine was not booted with systemd, and none of them can fail the installation.
set -euo pipefail
cd "$(dirname "$0")/.."

action=${1:-}
PREFIX=${PREFIX:-/usr/local}
SYSCONFDIR=${SYSCONFDIR:-/etc}
DESTDIR=${DESTDIR:-}
BINDIR_BUILD=${BINDIR_BUILD:-.build/release}
GENERATED_DIR=${GENERATED_DIR:-.build/install-files}

bindir=$PREFIX/bin
sbindir=$PREFIX/sbin
# Where systemd and udev files go: under PREFIX by default; a distribution package names its own places
# (debian/rules: the units and the rule in /lib, as Debian 12 has them).
unitdir=${UNITDIR:-$PREFIX/lib/systemd/system}
userunitdir=${USERUNITDIR:-$PREFIX/lib/systemd/user}
udevrulesdir=${UDEVRULESDIR:-$PREFIX/lib/udev/rules.d}
sysusersdir=${SYSUSERSDIR:-$PREFIX/lib/sysusers.d}
tmpfilesdir=${TMPFILESDIR:-$PREFIX/lib/tmpfiles.d}
modulesloaddir=${MODULESLOADDIR:-$PREFIX/lib/modules-load.d}
# The D-Bus service (docs/dbus.md). The bus reads policies from /usr/share/dbus-1/system.d (a distribution's)
# and /etc/dbus-1/system.d (the administrator's), never from /usr/local: a local installation's policy goes in
# /etc. Activation files are also read from /usr/local/share/dbus-1/system-services.
dbuspolicydir=${DBUSPOLICYDIR:-$SYSCONFDIR/dbus-1/system.d}
dbusservicedir=${DBUSSERVICEDIR:-$PREFIX/share/dbus-1/system-services}
mandir=$PREFIX/share/man
docdir=$PREFIX/share/doc/shaked
exampledir=$docdir/examples
bashcompletiondir=$PREFIX/share/bash-completion/completions
zshcompletiondir=$PREFIX/share/zsh/site-functions
fishcompletiondir=$PREFIX/share/fish/vendor_completions.d
confdir=$SYSCONFDIR/shaked
config=$confdir/shaked.yaml
shipped_config=config/shaked.yaml

# Every file the installation owns, as "SOURCE MODE DESTINATION" (the configuration is handled apart).
# SOURCE is relative to the repository, or to the generated folder for completions.
manifest() {
    cat <<EOF
bin:shakectl 0755 $bindir/shakectl
bin:shaked 0755 $sbindir/shaked
unit:systemd/shaked.service 0644 $unitdir/shaked.service
unit:systemd/shaked.socket 0644 $unitdir/shaked.socket
file:examples/systemd/shake-to-undo.service 0644 $userunitdir/shake-to-undo.service
file:udev/60-shaked.rules 0644 $udevrulesdir/60-shaked.rules
file:udev/70-shaked-uinput.rules 0644 $udevrulesdir/70-shaked-uinput.rules
unit:udev/81-shaked-iio-sensor-proxy.rules 0644 $udevrulesdir/81-shaked-iio-sensor-proxy.rules
file:systemd/shaked.sysusers 0644 $sysusersdir/shaked.conf
file:systemd/shaked.tmpfiles 0644 $tmpfilesdir/shaked.conf
file:systemd/shaked.modules-load 0644 $modulesloaddir/shaked.conf
file:dbus/io.github.shaked.Shake1.conf 0644 $dbuspolicydir/io.github.shaked.Shake1.conf
file:dbus/io.github.shaked.Shake1.service 0644 $dbusservicedir/io.github.shaked.Shake1.service
file:man/shaked.8 0644 $mandir/man8/shaked.8
file:man/shakectl.1 0644 $mandir/man1/shakectl.1
file:man/shaked.yaml.5 0644 $mandir/man5/shaked.yaml.5
file:docs/protocol.md 0644 $docdir/protocol.md
file:examples/python/README.md 0644 $exampledir/python/README.md
file:examples/python/shake_listener.py 0644 $exampledir/python/shake_listener.py
file:examples/python/shake_dbus.py 0644 $exampledir/python/shake_dbus.py
file:examples/systemd/shake-to-undo.service 0644 $exampledir/systemd/shake-to-undo.service
generated:shakectl.bash 0644 $bashcompletiondir/shakectl
generated:_shakectl 0644 $zshcompletiondir/_shakectl
generated:shakectl.fish 0644 $fishcompletiondir/shakectl.fish
EOF
}

say() { printf '  %-10s %s\n' "$1" "$2"; }

# True when this run should tell the running system about the change.
live_system() { [ -z "$DESTDIR" ] && [ "$(id -u)" -eq 0 ]; }

# Completion scripts, generated from the shakectl to be installed. The man pages are written by hand (man/).
generate() {
    local shaked=$BINDIR_BUILD/shaked shakectl=$BINDIR_BUILD/shakectl
    for binary in "$shaked" "$shakectl"; do
        [ -x "$binary" ] || { echo "install: no $binary; build first (make install builds)" >&2; exit 1; }
    done
    mkdir -p "$GENERATED_DIR"
    # A completion script is sourced, not run: no #! line.
    "$shakectl" --generate-completion-script bash | sed '1{/^#!/d}' > "$GENERATED_DIR/shakectl.bash"
    "$shakectl" --generate-completion-script zsh > "$GENERATED_DIR/_shakectl"
    "$shakectl" --generate-completion-script fish > "$GENERATED_DIR/shakectl.fish"
    say generated "completions in $GENERATED_DIR"
}

# Copies a unit, filling in the paths of this installation.
substitute() {
    sed -e "s|@SBINDIR@|$sbindir|g" -e "s|@BINDIR@|$bindir|g" -e "s|@SYSCONFDIR@|$SYSCONFDIR|g" "$1" > "$2"
    if grep -q '@[A-Z_]*@' "$2"; then
        echo "install: $1 has a placeholder that nothing fills in" >&2
        exit 1
    fi
}

install_files() {
    generate
    local kind_source mode destination kind source target
    while read -r kind_source mode destination; do
        kind=${kind_source%%:*}
        source=${kind_source#*:}
        target=$DESTDIR$destination
        mkdir -p "$(dirname "$target")"
        case $kind in
            bin) install -s -m "$mode" "$BINDIR_BUILD/$source" "$target" ;;
            generated) install -m "$mode" "$GENERATED_DIR/$source" "$target" ;;
            file) install -m "$mode" "$source" "$target" ;;
            unit)
                substitute "$source" "$target.tmp"
                chmod "$mode" "$target.tmp"
                mv -f "$target.tmp" "$target"
                ;;
        esac
        say installed "$target"
    done < <(manifest)
    install_config
    if live_system; then activate; fi
}

install_config() {
    local target=$DESTDIR$config
    mkdir -p "$DESTDIR$confdir"
    if [ ! -e "$target" ]; then
        install -m 0644 "$shipped_config" "$target"
        say installed "$target"
    elif cmp -s "$shipped_config" "$target"; then
        say unchanged "$target"
    else
        install -m 0644 "$shipped_config" "$target.default"
        say kept "$target (changed locally; the shipped one is $target.default, to compare with)"
    fi
}

# Tells the running system: the new user and group, the udev rule (applied to accelerometers already
# present), and the units.
activate() {
    if command -v systemd-sysusers >/dev/null 2>&1; then
        systemd-sysusers "$sysusersdir/shaked.conf" && say ran "systemd-sysusers (user shaked, groups shaked-admin and shaked-uinput)" ||
            say skipped "systemd-sysusers failed; create the user shaked before starting the service"
    fi
    if command -v systemd-tmpfiles >/dev/null 2>&1; then
        systemd-tmpfiles --create "$tmpfilesdir/shaked.conf" && say ran "systemd-tmpfiles --create (/run/shaked)" ||
            say skipped "systemd-tmpfiles failed; /run/shaked is made at the next boot"
    fi
    # uinput now (modules-load.d loads it at boot), before udev is told, so that /dev/uinput gets its group.
    if command -v modprobe >/dev/null 2>&1; then
        modprobe uinput >/dev/null 2>&1 && say ran "modprobe uinput" || say skipped "modprobe uinput failed"
    fi
    if command -v udevadm >/dev/null 2>&1 && udevadm control --reload >/dev/null 2>&1; then
        say ran "udevadm control --reload"
        udevadm trigger --action=change --subsystem-match=iio >/dev/null 2>&1 &&
            say ran "udevadm trigger --action=change --subsystem-match=iio" || true
        # /dev/uinput: the group shaked-uinput, and no user's ACL (70-shaked-uinput.rules). An earlier install
        # tagged it uaccess; the ACL that gave the seat's user stays on the node until it is taken away here (a
        # rule that still tags it, another package's, gives it back at the trigger).
        if [ -c /dev/uinput ] && command -v setfacl >/dev/null 2>&1; then
            setfacl --remove-all /dev/uinput >/dev/null 2>&1 && say ran "setfacl --remove-all /dev/uinput" || true
        fi
        udevadm trigger --action=change --subsystem-match=misc --sysname-match=uinput >/dev/null 2>&1 &&
            say ran "udevadm trigger --action=change --sysname-match=uinput" || true
    else
        say skipped "udev reload (udevd is not running)"
    fi
    if [ -d /run/systemd/system ] && systemctl daemon-reload >/dev/null 2>&1; then
        say ran "systemctl daemon-reload"
        echo "install: enable the service with: systemctl enable --now shaked.socket"
    else
        say skipped "systemctl daemon-reload (not booted with systemd)"
    fi
}

uninstall_files() {
    if live_system && [ -d /run/systemd/system ]; then
        systemctl disable --now shaked.socket shaked.service >/dev/null 2>&1 &&
            say ran "systemctl disable --now shaked.socket shaked.service" || true
    fi
    local kind_source mode destination target
    while read -r kind_source mode destination; do
        target=$DESTDIR$destination
        if [ -e "$target" ] || [ -L "$target" ]; then
            rm -f "$target"
            say removed "$target"
        fi
    done < <(manifest)
    for folder in "$exampledir/python" "$exampledir/systemd" "$exampledir" "$docdir"; do
        if [ -d "$DESTDIR$folder" ] && rmdir "$DESTDIR$folder" 2>/dev/null; then say removed "$DESTDIR$folder/"; fi
    done
    uninstall_config
    if live_system; then
        # The service is gone: its runtime directory goes too (systemd-tmpfiles made it, nothing will again).
        if [ -d /run/shaked ]; then
            rm -f /run/shaked/shaked.sock
            rmdir /run/shaked 2>/dev/null && say removed "/run/shaked/" || say kept "/run/shaked/ (not empty)"
        fi
        if command -v udevadm >/dev/null 2>&1 && udevadm control --reload >/dev/null 2>&1; then
            say ran "udevadm control --reload"
            # The hand-over rule is gone: iio-sensor-proxy gets its type back on the accelerometer shaked had,
            # and /dev/uinput udev's default (root only).
            udevadm trigger --action=change --subsystem-match=iio >/dev/null 2>&1 &&
                say ran "udevadm trigger --action=change --subsystem-match=iio" || true
            # The uinput rule is gone: /dev/uinput is root's again (its group goes back to root).
            udevadm trigger --action=change --subsystem-match=misc --sysname-match=uinput >/dev/null 2>&1 &&
                say ran "udevadm trigger --action=change --sysname-match=uinput" || true
        fi
        if [ -d /run/systemd/system ] && systemctl daemon-reload >/dev/null 2>&1; then
            say ran "systemctl daemon-reload"
        fi
        echo "uninstall: the user shaked and the groups shaked-admin and shaked-uinput stay (remove them with userdel and groupdel)"
    fi
}

uninstall_config() {
    local target=$DESTDIR$config
    for file in "$target.default" "$target"; do
        [ -e "$file" ] || continue
        if cmp -s "$shipped_config" "$file"; then
            rm -f "$file"
            say removed "$file"
        else
            say kept "$file (changed locally)"
        fi
    done
    if [ -d "$DESTDIR$confdir" ] && rmdir "$DESTDIR$confdir" 2>/dev/null; then
        say removed "$DESTDIR$confdir/"
    fi
}

case $action in
    install) install_files ;;
    uninstall) uninstall_files ;;
    *)
        echo "usage: $0 install|uninstall (make install-files, make uninstall)" >&2
        exit 64
        ;;
esac
