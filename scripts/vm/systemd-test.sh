#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# The "systemd" scenario, inside the systemd image (scripts/vm/vm-test.sh builds it with mmdebstrap and
# `scripts/install.sh install`): systemd is PID 1, udev loads the HID sensor drivers and starts shaked.service
# when the accelerometer appears, the socket unit hands subscribers over. Reports "@@ systemd ..." lines on the
# serial console, as guest-init.sh does, and powers off.
exec >/dev/ttyS0 2>&1
name=systemd
lib=/usr/local/lib/shaked-vm
say() { echo "@@ $name $*"; }
info() { say "info $*"; }
say "begin $(cut -d' ' -f1 /proc/uptime)"
active() { systemctl is-active shaked.service 2>/dev/null; }

info "socket=$(systemctl is-active shaked.socket) service_before_sensor=$(active)"
modprobe uhid || info "modprobe_failed"
"$lib/uhid-accel" --sent /tmp/sent --wait-stream 90 "$lib/traces/shakes3.csv" >/tmp/feeder 2>&1 &
fpid=$!
# udev starts the service when the accelerometer appears.
for _ in $(seq 150); do [ "$(active)" = active ] && break; kill -0 $fpid 2>/dev/null || break; sleep 0.2; done
info "service_after_sensor=$(active) device=$(cat /sys/bus/iio/devices/iio:device0/name 2>/dev/null)"
info "node_group=$(stat -c %G /dev/iio:device0 2>/dev/null) clock_group=$(stat -c %G /sys/bus/iio/devices/iio:device0/current_timestamp_clock 2>/dev/null)"
# A subscriber through the socket: capture starts, the feeder plays.
shakectl listen --json >/tmp/listen 2>/tmp/listen.err &
lpid=$!
for _ in $(seq 900); do grep -q "uhid-accel: done" /tmp/feeder && break; kill -0 $fpid 2>/dev/null || break; sleep 0.1; done
grep -q "uhid-accel: done" /tmp/feeder || info "feeder_timeout"
sleep 1
pid=$(systemctl show -p MainPID --value shaked.service)
info "user=$(stat -c %U /proc/$pid 2>/dev/null) capeff=$(awk '/^CapEff/ { print $2 }' /proc/$pid/status 2>/dev/null) nonewprivs=$(awk '/^NoNewPrivs/ { print $2 }' /proc/$pid/status 2>/dev/null)"
info "clock=$(cat /sys/bus/iio/devices/iio:device0/current_timestamp_clock 2>/dev/null) watermark=$(cat /sys/bus/iio/devices/iio:device0/buffer/watermark 2>/dev/null)"
# The sandbox: the daemon cannot write outside its runtime directory.
info "sandbox_write=$(nsenter -t "$pid" -m sh -c 'touch /etc/shaked/x 2>&1 && echo allowed || echo refused' 2>/dev/null | tail -1)"
systemctl reload shaked.service
reload_status=$?
# ExecReload only sends SIGHUP: systemctl returns at once, and the unit reads "reloading" until the daemon says
# READY again (RELOADING=1 … READY=1), so wait for that (up to 10 s) rather than read the state in between.
for _ in $(seq 100); do [ "$(active)" = reloading ] || break; sleep 0.1; done
info "reload_status=$reload_status after_reload=$(active) same_pid=$([ "$(systemctl show -p MainPID --value shaked.service)" = "$pid" ] && echo yes || echo no)"
sleep 1
kill -0 $lpid 2>/dev/null && info "listener_after_reload=connected" || info "listener_after_reload=gone"
kill $lpid 2>/dev/null
wait $lpid 2>/dev/null
info "journal_ended=$(journalctl -u shaked.service PHASE=ended -o cat --no-pager | wc -l)"
info "journal_reloaded=$(journalctl -u shaked.service -o cat --no-pager | grep -ci reload)"
info "daemon_exit=0"
while IFS= read -r line; do say "event $line"; done </tmp/listen
while IFS= read -r line; do say "feeder $line"; done </tmp/feeder
journalctl -u shaked.service -o cat --no-pager | while IFS= read -r line; do say "log $line"; done
while IFS= read -r line; do say "log listen: $line"; done </tmp/listen.err
while IFS= read -r line; do say "sent $line"; done </tmp/sent
kill $fpid 2>/dev/null
say "end $(cut -d' ' -f1 /proc/uptime)"
wait $fpid 2>/dev/null
# The systemd-suspend scenario, in the same boot when the host wakes the guest (vm-test.sh's shaked.suspend=1).
grep -qw shaked.suspend=1 /proc/cmdline && "$lib/systemd-suspend-test.sh"
# The relay scenario, in the same boot (it needs the devices above gone).
[ -x "$lib/relay-test.sh" ] && "$lib/relay-test.sh"
echo "@@ done $(cut -d' ' -f1 /proc/uptime)"
systemctl poweroff --force --force
