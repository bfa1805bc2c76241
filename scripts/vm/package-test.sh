#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# The "package" scenario: the Debian package `make deb` built, installed with dpkg on a running Debian (systemd,
# udev, bookworm's iio-sensor-proxy) while iio-sensor-proxy serves a HID accelerometer, then used without a reboot:
# the relay made at once (uinput loaded by the package), shaked capturing and not busy, monitor-sensor answering
# through the relay; a second sensor hot-plugged after the installation captured through its buffer, turning
# through four orientations that monitor-sensor follows, with shakectl listen getting its three shakes; the user
# unit and the examples in place; then a purge that gives everything back (iio-sensor-proxy on the IIO device,
# /dev/uinput root's alone, the IIO node and attributes root's). Reports "@@ package ..." lines.
exec >/dev/ttyS0 2>&1
name=package
lib=/usr/local/lib/shaked-vm
say() { echo "@@ $name $*"; }
info() { say "info $*"; }
property() { local v; v=$(udevadm info --query=property --property="$2" --value "$1" 2>/dev/null | head -1); v=${v// /+}; echo "${v:-none}"; }
uptime_s() { cut -d' ' -f1 /proc/uptime; }
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
info "install_status=$? install_seconds=$(awk -v a="$t0" -v b="$(uptime_s)" 'BEGIN { printf "%.1f", b - a }')"
while IFS= read -r line; do say "log dpkg: $line"; done </tmp/install
relay=$(grep -lx shaked/accelerometer-relay /sys/class/input/input*/phys 2>/dev/null | head -1)
info "relay_at_install=$([ -n "$relay" ] && echo yes || echo no)"
info "uinput_loaded=$(grep -c '^uinput ' /proc/modules) uinput_group=$(stat -c %G /dev/uinput) iio_type=$(property /sys/bus/iio/devices/iio:device0 IIO_SENSOR_PROXY_TYPE) shaked=$(systemctl is-active shaked.service)"
info "state=$(shakectl status --json 2>/dev/null | grep -o '"state":"[a-z]*"' | head -1 | cut -d'"' -f4)"
journalctl -u shaked.service -o cat --no-pager | while IFS= read -r line; do say "log install: $line"; done
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
sleep 2
kill $lpid $mpid 2>/dev/null
wait $lpid $mpid 2>/dev/null
journalctl -u shaked.service --since "$mark" -o cat --no-pager >/tmp/hotplug-log
# The driver is a field of the log line (DRIVER=buffered, ...), not in its text.
journalctl -u shaked.service --since "$mark" -o verbose --no-pager | grep -q "DRIVER=buffered" &&
  info "hotplug_driver=buffered" || info "hotplug_driver=other"
grep -q "polling" /tmp/hotplug-log && info "hotplug_polled=yes" || info "hotplug_polled=no"
info "priority_lines=$(journalctl -u shaked.service -o cat --no-pager | grep -c 'Failed to set thread priority')"
while IFS= read -r line; do say "event $line"; done </tmp/listen
while IFS= read -r line; do say "monitor-relay $line"; done </tmp/relay-monitor
while IFS= read -r line; do say "log hotplug: $line"; done </tmp/hotplug-log

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
kill $second 2>/dev/null
say "end $(uptime_s)"
echo "@@ done $(uptime_s)"
systemctl poweroff --force --force
