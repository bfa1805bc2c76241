#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# The "package" scenario: the Debian package `make deb` built, installed with dpkg on a running Debian (systemd,
# udev, logind, bookworm's iio-sensor-proxy) while iio-sensor-proxy serves a HID accelerometer, then used without
# a reboot: the relay made at once (uinput loaded by the package), shaked capturing and not busy, monitor-sensor
# answering through the relay; a second sensor hot-plugged after the installation captured through its buffer,
# turning through four orientations that monitor-sensor follows, with shakectl listen getting its three shakes;
# the user unit and the examples in place. Then, on a third sensor that shakes on demand (uhid-accel --again):
# the package's D-Bus example run by an unprivileged user in a login session gets the Shake signals under the
# installed bus policy, Claim and Release answer that user, and a Shake that user sends reaches nobody; a sway
# session of that user on seat0 (headless outputs, libinput input, pixman) receives Ctrl+Z in a Wayland client
# for each shake through `shakectl key`; an upgrade to a newer build of the package (the same package with a
# higher version, /root/shaked-new.deb) while `shakectl listen` is subscribed loses no event: the socket stays,
# the daemon restarts into the new binary and the listener resumes. Then a purge that gives everything back
# (iio-sensor-proxy on the IIO device, /dev/uinput root's alone, the IIO node and attributes root's).
# Reports "@@ package ..." lines.
#
# shaked.break=LIST on the kernel's command line (vm-test.sh's VM_PACKAGE_BREAK) breaks what a check guards, to
# show that the check fails: "policy" (the bus policy lets anyone send the Shake signal and denies Claim),
# "session" (the example and sway run without an active session: no login session, sway on a VT in the
# background), "resume" (the upgrade's listener does not reconnect).
exec >/dev/ttyS0 2>&1
name=package
lib=/usr/local/lib/shaked-vm
say() { echo "@@ $name $*"; }
info() { say "info $*"; }
property() { local v; v=$(udevadm info --query=property --property="$2" --value "$1" 2>/dev/null | head -1); v=${v// /+}; echo "${v:-none}"; }
uptime_s() { cut -d' ' -f1 /proc/uptime; }
since() { awk -v a="$1" -v b="$(uptime_s)" 'BEGIN { printf "%.1f", b - a }'; }
broken() { [[ ,$(sed -n 's/.*shaked\.break=\([^ ]*\).*/\1/p' /proc/cmdline), == *,$1,* ]]; }
# Waits up to $1 tenths of a second (of uptime: under emulation a try itself takes a while) for the command that
# follows to succeed.
wait_for() {
  local end=$(($(cut -d. -f1 /proc/uptime) + $1 / 10))
  shift
  until "$@"; do
    [ "$(cut -d. -f1 /proc/uptime)" -lt "$end" ] || return 1
    sleep 0.2
  done
}
say "begin $(uptime_s)"
info "uinput_loaded_before=$(grep -c '^uinput ' /proc/modules)"

# --- Before: iio-sensor-proxy serves the sensor (at rest, display up) ---
"$lib/uhid-accel" --hold 900 --wait-stream 120 "$lib/traces/rest.csv" >/tmp/first-feeder 2>&1 &
first=$!
for _ in $(seq 300); do [ -e /sys/bus/iio/devices/iio:device0 ] && break; sleep 0.2; done
udevadm settle
systemctl start iio-sensor-proxy.service
timeout 20 monitor-sensor >/tmp/before-monitor 2>&1
info "before_iio_type=$(property /sys/bus/iio/devices/iio:device0 IIO_SENSOR_PROXY_TYPE) before_proxy=$(systemctl is-active iio-sensor-proxy.service)"
grep -q "Has accelerometer" /tmp/before-monitor && info "before_accel=yes" || info "before_accel=no"

# --- Install, while iio-sensor-proxy holds the sensor ---
t0=$(uptime_s)
dpkg -i /root/shaked.deb >/tmp/install 2>&1
info "install_status=$? install_seconds=$(since "$t0")"
while IFS= read -r line; do say "log dpkg: $line"; done </tmp/install
relay=$(grep -lx shaked/accelerometer-relay /sys/class/input/input*/phys 2>/dev/null | head -1)
info "relay_at_install=$([ -n "$relay" ] && echo yes || echo no)"
info "uinput_loaded=$(grep -c '^uinput ' /proc/modules) uinput_group=$(stat -c %G /dev/uinput) iio_type=$(property /sys/bus/iio/devices/iio:device0 IIO_SENSOR_PROXY_TYPE) shaked=$(systemctl is-active shaked.service)"
info "state=$(shakectl status --json 2>/dev/null | grep -o '"state":"[a-z]*"' | head -1 | cut -d'"' -f4)"
journalctl -u shaked.service -o cat --no-pager | while IFS= read -r line; do say "log install: $line"; done
journalctl -u shaked.service -o verbose --no-pager | grep '^ *ERROR=' | while IFS= read -r line; do say "log install: $line"; done
# The daemon offers its object on the system bus from the start (the bus policy lets its user own the name).
dbus-send --system --print-reply --dest=org.freedesktop.DBus / org.freedesktop.DBus.NameHasOwner \
  string:io.github.shaked.Shake1 2>/dev/null | grep -q 'boolean true' && info "bus_name_at_install=yes" || info "bus_name_at_install=no"
timeout 20 monitor-sensor >/tmp/installed-monitor 2>&1
grep -q "Has accelerometer" /tmp/installed-monitor && info "installed_accel=yes" || info "installed_accel=no"
info "user_unit=$([ -f /usr/lib/systemd/user/shake-to-undo.service ] && echo yes || echo no) examples=$(ls /usr/share/doc/shaked/examples/*/* 2>/dev/null | wc -l) modules_load=$(cat /usr/lib/modules-load.d/shaked.conf 2>/dev/null | grep -v '^#')"

# --- A sensor plugged in after the installation: captured buffered, relayed, its shakes heard ---
kill $first 2>/dev/null
wait $first 2>/dev/null
for _ in $(seq 100); do [ -e /sys/bus/iio/devices/iio:device0 ] || break; sleep 0.2; done
# The first sensor's relay goes too (shaked notices the sensor gone within a rescan).
for _ in $(seq 100); do grep -qsx shaked/accelerometer-relay /sys/class/input/input*/phys || break; sleep 0.2; done
udevadm settle
mark=$(date '+%Y-%m-%d %H:%M:%S')
"$lib/uhid-accel" --wait-stream 120 "$lib/traces/relay.csv" >/tmp/second-feeder 2>&1 &
second=$!
# iio-sensor-proxy left when the first relay went (it had no sensor then); udev starts it for the new relay.
# monitor-sensor gives up when the service it claims from vanishes under it: it starts once the relay is there.
for _ in $(seq 450); do grep -qsx shaked/accelerometer-relay /sys/class/input/input*/phys && break; sleep 0.2; done
udevadm settle
systemctl start iio-sensor-proxy.service
monitor-sensor >/tmp/relay-monitor 2>&1 &
mpid=$!
shakectl listen --json >/tmp/listen 2>/tmp/listen.err &
lpid=$!
for _ in $(seq 1200); do grep -q "uhid-accel: done" /tmp/second-feeder && break; kill -0 $second 2>/dev/null || break; sleep 0.1; done
grep -q "uhid-accel: done" /tmp/second-feeder || info "feeder_timeout=yes"
# Once the feeder is done the sensor is silent, and after 2 s of silence the daemon polls its _raw attributes
# instead (the buffer delivered no data): whether it polled is asked of the log up to the end of the feed.
fed=$(date +%s)
sleep 2
kill $lpid $mpid 2>/dev/null
wait $lpid $mpid 2>/dev/null
journalctl -u shaked.service --since "$mark" -o cat --no-pager >/tmp/hotplug-log
# The driver is a field of the log line (DRIVER=buffered, ...), not in its text.
journalctl -u shaked.service --since "$mark" -o verbose --no-pager | grep -q "DRIVER=buffered" &&
  info "hotplug_driver=buffered" || info "hotplug_driver=other"
journalctl -u shaked.service --since "$mark" --until "@$((fed + 1))" -o cat --no-pager | grep -q "polling" &&
  info "hotplug_polled=yes" || info "hotplug_polled=no"
info "priority_lines=$(journalctl -u shaked.service -o cat --no-pager | grep -c 'Failed to set thread priority')"
while IFS= read -r line; do say "event $line"; done </tmp/listen
while IFS= read -r line; do say "monitor-relay $line"; done </tmp/relay-monitor
while IFS= read -r line; do say "log hotplug: $line"; done </tmp/hotplug-log

# --- A third sensor, that shakes on demand: three shakes at each SIGUSR1 ---
kill $second 2>/dev/null
wait $second 2>/dev/null
wait_for 300 bash -c '! grep -qsx shaked/accelerometer-relay /sys/class/input/input*/phys' || info "relay_gone_timeout=yes"
udevadm settle
# Plays shakes3.csv once more and waits until it was played ($1: the number of plays then).
shake_again() {
  kill -USR1 $third
  wait_for 600 grep -q "uhid-accel: played $1 " /tmp/third-feeder
}
useradd --create-home --shell /bin/bash tester
# The PAM service of the user's sessions below: Debian's own account and session stacks (pam_systemd registers
# the session with logind), without login's terminal and message-of-the-day modules.
printf '@include common-account\nsession required pam_loginuid.so\n@include common-session\n' >/etc/pam.d/vm-session

# --- The D-Bus example, run by an unprivileged user in a login session ---
# What every Shake signal on the bus is, from whichever sender: root listens without asking for the sender.
cat >/tmp/observer.py <<'PY'
import dbus, dbus.mainloop.glib
from gi.repository import GLib
dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)
bus = dbus.SystemBus()
def on_shake(*args, sender=None):
    owner = bus.get_name_owner("io.github.shaked.Shake1") if bus.name_has_owner("io.github.shaked.Shake1") else "-"
    print("sender=%s owner=%s phase=%s seq=%d" % (sender, owner, args[0], args[1]), flush=True)
bus.add_signal_receiver(on_shake, signal_name="Shake", dbus_interface="io.github.shaked.Shake1", sender_keyword="sender")
print("ready", flush=True)
GLib.MainLoop().run()
PY
python3 /tmp/observer.py >/tmp/observer 2>&1 &
observer=$!
wait_for 300 grep -q ready /tmp/observer
if broken policy; then
  perl -0pi -e 's/<deny send_type="signal"[^>]*>//; s/<allow[^>]*send_member="Claim"\/>//' \
    /usr/share/dbus-1/system.d/io.github.shaked.Shake1.conf
  systemctl reload dbus.service
fi
example=/usr/share/doc/shaked/examples/python/shake_dbus.py
[ -f "$example" ] || { gunzip -k "$example.gz" 2>/dev/null; }
info "dbus_example=$([ -f "$example" ] && echo yes || echo no)"
: >/tmp/dbus-example.out
: >/tmp/dbus-example.err
chown tester /tmp/dbus-example.out /tmp/dbus-example.err
if broken session; then
  # A process of the user's outside any session: follow_session keeps capture off for its claim.
  setsid runuser -u tester -- python3 "$example" --count 6 >/tmp/dbus-example.out 2>/tmp/dbus-example.err &
else
  # PAMName: pam_systemd opens a logind session for it (no seat: logind counts it active).
  systemd-run --quiet --unit=shake-dbus-example -p PAMName=vm-session -p User=tester \
    -p StandardOutput=file:/tmp/dbus-example.out -p StandardError=file:/tmp/dbus-example.err \
    python3 "$example" --count 6
fi
wait_for 600 grep -qi "claimed\|denied\|not allowed\|rejected" /tmp/dbus-example.err
info "dbus_sessions=$(loginctl list-sessions --no-legend 2>/dev/null | grep -cw tester)"
t0=$(uptime_s)
"$lib/uhid-accel" --again --hold 1 --wait-stream 300 "$lib/traces/shakes3.csv" >/tmp/third-feeder 2>&1 &
third=$!
# A Shake that the user sends, as if from the daemon: the bus policy lets only shaked (and root) send one.
runuser -u tester -- dbus-send --system --type=signal /io/github/shaked/Shake1 io.github.shaked.Shake1.Shake \
  string:ended uint64:424242 double:1 double:1.2 double:25 string:x uint32:9 string: string: 2>/tmp/forge.err
info "forge_status=$?"
wait_for 600 grep -q "uhid-accel: played 1 " /tmp/third-feeder || info "dbus_feeder_timeout=yes"
# The example exits after its six events (three shakes, began and ended), releasing its claim.
wait_for 300 bash -c '[ "$(grep -c "^#" /tmp/dbus-example.out)" -ge 6 ]'
sleep 1
info "dbus_seconds=$(since "$t0") dbus_events=$(grep -c '^#' /tmp/dbus-example.out) dbus_ended=$(grep -c 'shake ended' /tmp/dbus-example.out)"
info "forged_seen=$(grep -c 'seq=424242' /tmp/observer) observed_ended=$(grep -c 'phase=ended' /tmp/observer)"
info "dbus_rejected=$(journalctl -u dbus.service -o cat --no-pager | grep 'Rejected send message' | grep -c 'interface="io.github.shaked.Shake1"')"
# Claim and Release, asked by the user with busctl: the daemon answers them (under the shipped policy).
runuser -u tester -- busctl call io.github.shaked.Shake1 /io/github/shaked/Shake1 io.github.shaked.Shake1 Claim >/tmp/busctl 2>&1
claim=$?
runuser -u tester -- busctl call io.github.shaked.Shake1 /io/github/shaked/Shake1 io.github.shaked.Shake1 Release >>/tmp/busctl 2>&1
info "busctl_claim=$claim busctl_release=$?"
journalctl -u shaked.service -o verbose --no-pager | grep -q "METHOD=Release" && info "release_logged=yes" || info "release_logged=no"
systemctl stop shake-dbus-example.service 2>/dev/null
kill $observer 2>/dev/null
while IFS= read -r line; do say "dbus $line"; done </tmp/dbus-example.out
while IFS= read -r line; do say "dbus $line"; done </tmp/dbus-example.err
while IFS= read -r line; do say "observer $line"; done </tmp/observer
while IFS= read -r line; do say "feeder $line"; done </tmp/third-feeder
while IFS= read -r line; do say "log busctl: $line"; done < <(cat /tmp/busctl /tmp/forge.err)

# --- A Wayland session of the user on seat0 receives Ctrl+Z for each shake ---
plays=1
if command -v sway >/dev/null; then
  cat >/tmp/sway.conf <<'CONF'
# One client, which the only output focuses: it prints the keys it receives.
exec stdbuf -oL wev -f wl_keyboard > /tmp/wev.out 2>&1
CONF
  chmod 644 /tmp/sway.conf
  vt=1
  broken session && vt=2
  # A session on the VT in front (tty1, seat0): logind's active session of seat0, which the daemon's keyboard
  # types into. The headless backend gives sway an output without a display, libinput the input devices
  # (opened through logind, as for any seat session).
  systemd-run --quiet --unit=sway-session -p PAMName=vm-session -p User=tester -p TTYPath=/dev/tty$vt \
    -p StandardInput=tty-force -p StandardOutput=journal -p StandardError=journal \
    -p Environment=XDG_SESSION_TYPE=wayland -p Environment=WLR_BACKENDS=headless,libinput \
    -p Environment=WLR_RENDERER=pixman -p Environment=WLR_LIBINPUT_NO_DEVICES=1 \
    sway --config /tmp/sway.conf
  # sway is up when its Wayland socket is; the keyboard wev is given focus with may be the daemon's, made for
  # the first subscriber that asks for a chord.
  if wait_for 600 bash -c 'ls /run/user/*/wayland-* >/dev/null 2>&1' && {
    runuser -u tester -- shakectl key ctrl+z >/tmp/key.out 2>&1 &
    key=$!
    wait_for 600 grep -qs "enter" /tmp/wev.out
  }; then
    info "seat0_user=$(loginctl show-seat seat0 -p ActiveSession --value 2>/dev/null | xargs -r -I{} loginctl show-session {} -p Name --value)"
    wait_for 300 grep -q "connected" /tmp/key.out
    sleep 2
    t0=$(uptime_s)
    shake_again 2 || info "key_feeder_timeout=yes"
    plays=2
    sleep 2
    info "key_seconds=$(since "$t0") wev_ctrl_down=$(grep -c 'key: 37; state: 1' /tmp/wev.out) wev_z_down=$(grep -c 'key: 52; state: 1' /tmp/wev.out) wev_z_up=$(grep -c 'key: 52; state: 0' /tmp/wev.out) wev_ctrl_up=$(grep -c 'key: 37; state: 0' /tmp/wev.out) key_pressed=$(grep -c ': pressed ' /tmp/key.out)"
    kill $key 2>/dev/null
    grep "key:" /tmp/wev.out | while IFS= read -r line; do say "wev $line"; done
    while IFS= read -r line; do say "log key: $line"; done </tmp/key.out
  else
    info "wev_timeout=yes"
    kill $key 2>/dev/null
  fi
  ls -la /run/user/*/ 2>&1 | while IFS= read -r line; do say "log sway: $line"; done
  while IFS= read -r line; do say "log wev: $line"; done < <(head -20 /tmp/wev.out 2>&1)
  loginctl list-sessions --no-legend | while IFS= read -r line; do say "log sessions: $line"; done
  systemctl status --no-pager sway-session.service 2>&1 | head -5 | while IFS= read -r line; do say "log sway: $line"; done
  journalctl -u sway-session.service -o cat --no-pager | tail -30 | while IFS= read -r line; do say "log sway: $line"; done
  systemctl stop sway-session.service
else
  info "sway=missing"
fi

# --- An upgrade to a newer build while a subscriber listens ---
listen_flags=--json
broken resume && listen_flags="--json --no-reconnect"
shakectl listen $listen_flags >/tmp/upgrade-listen 2>/tmp/upgrade-listen.err &
lpid=$!
wait_for 300 grep -q connected /tmp/upgrade-listen.err
shake_again $((plays + 1)) || info "upgrade_feeder_timeout=yes"
wait_for 300 bash -c '[ "$(grep -c "\"event\":\"shake\"" /tmp/upgrade-listen)" -ge 6 ]'
before_events=$(grep -c '"event":"shake"' /tmp/upgrade-listen)
socket_inode=$(stat -c %i /run/shaked/shaked.sock)
socket_since=$(systemctl show -p ActiveEnterTimestampMonotonic --value shaked.socket)
pid_before=$(systemctl show -p MainPID --value shaked.service)
t0=$(uptime_s)
dpkg -i /root/shaked-new.deb >/tmp/upgrade 2>&1
info "upgrade_status=$? upgrade_seconds=$(since "$t0") upgrade_version=$(dpkg-query -W -f='${Version}' shaked) new_version=$(dpkg-deb -f /root/shaked-new.deb Version)"
while IFS= read -r line; do say "log dpkg: $line"; done </tmp/upgrade
pid_after=$(systemctl show -p MainPID --value shaked.service)
info "upgrade_restarted=$([ "$pid_after" != 0 ] && [ "$pid_after" != "$pid_before" ] && echo yes || echo no) upgrade_exe=$(readlink "/proc/$pid_after/exe" | tr ' ' '+')"
info "socket_kept=$([ "$(stat -c %i /run/shaked/shaked.sock 2>/dev/null)" = "$socket_inode" ] && [ "$(systemctl show -p ActiveEnterTimestampMonotonic --value shaked.socket)" = "$socket_since" ] && echo yes || echo no)"
shake_again $((plays + 2)) || info "upgrade_feeder_timeout=yes"
wait_for 300 bash -c '[ "$(grep -c "\"event\":\"shake\"" /tmp/upgrade-listen)" -ge 12 ]'
sleep 1
kill $lpid 2>/dev/null
wait $lpid 2>/dev/null
info "upgrade_before_events=$before_events upgrade_events=$(grep -c '"event":"shake"' /tmp/upgrade-listen)"
while IFS= read -r line; do say "upgrade $line"; done </tmp/upgrade-listen
while IFS= read -r line; do say "log listen: $line"; done </tmp/upgrade-listen.err

# --- Purge: everything given back ---
dpkg --purge shaked >/tmp/purge 2>&1
info "purge_status=$?"
grep -q "can still be activated" /tmp/purge && info "purge_warning=yes" || info "purge_warning=no"
while IFS= read -r line; do say "log dpkg: $line"; done </tmp/purge
udevadm settle
node=/dev/iio:device0
[ -e "$node" ] || node=$(ls /dev/iio:device* 2>/dev/null | head -1)
sysfs=/sys/bus/iio/devices/${node#/dev/}
info "after_uinput=$(stat -c %U:%G:%a /dev/uinput) after_node_group=$(stat -c %G "$node") after_attr_group=$(stat -c %G "$sysfs"/buffer/enable 2>/dev/null) after_iio_type=$(property "$sysfs" IIO_SENSOR_PROXY_TYPE)"
info "after_relay=$(grep -lx shaked/accelerometer-relay /sys/class/input/input*/phys 2>/dev/null | wc -l) after_proxy=$(systemctl is-active iio-sensor-proxy.service) after_socket=$(systemctl is-active shaked.socket)"
timeout 20 monitor-sensor >/tmp/after-monitor 2>&1
grep -q "Has accelerometer" /tmp/after-monitor && info "after_accel=yes" || info "after_accel=no"
journalctl -u iio-sensor-proxy.service -o cat --no-pager | tail -8 | while IFS= read -r line; do say "log iio-sensor-proxy: $line"; done
kill $third 2>/dev/null
say "end $(uptime_s)"
echo "@@ done $(uptime_s)"
systemctl poweroff --force --force
