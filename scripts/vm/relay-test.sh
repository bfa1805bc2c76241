#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# The "relay" scenario, in the systemd image after the "systemd" one (systemd-test.sh runs it): shaked beside
# Debian's iio-sensor-proxy. With the relay (as installed: sensor.relay auto, iio-sensor-proxy present), the
# hand-over rule takes the IIO accelerometer from iio-sensor-proxy, shaked relays it through a uinput accelerometer,
# and monitor-sensor follows a trace that turns the device through its four orientations while shakectl listen gets
# the trace's shakes. Without it (sensor.relay off), iio-sensor-proxy reads the IIO device itself (the orientations
# monitor-sensor prints then are the reference), and a subscriber makes shaked meet the conflict, which its log
# must name. Reports "@@ relay ..." lines.
exec >/dev/ttyS0 2>&1
name=relay
lib=/usr/local/lib/shaked-vm
say() { echo "@@ $name $*"; }
info() { say "info $*"; }
# A udev property of a device, "none" when it has none (or an empty one), spaces as "+".
property() { local v; v=$(udevadm info --query=property --property="$2" --value "$1" 2>/dev/null | head -1); v=${v// /+}; echo "${v:-none}"; }
begin=$(cut -d' ' -f1 /proc/uptime)
say "begin $begin"

# The systemd scenario ran with the relay off and iio-sensor-proxy masked: as installed from here on.
systemctl stop shaked.service
rm -f /etc/shaked/shaked.yaml.d/vm-systemd.yaml /etc/systemd/system/iio-sensor-proxy.service
# shaked's debug messages: each read the relay plans (PollPhase), each open of its node timed, each reading
# written, for the turns' timelines (scripts/vm/relay-timeline.py).
mkdir -p /etc/shaked/shaked.yaml.d
printf 'logging:\n  level: debug\n' >/etc/shaked/shaked.yaml.d/vm-relay-debug.yaml
# iio-sensor-proxy's debug messages (each reading it takes from the relay) go to the journal, for the log lines.
mkdir -p /etc/systemd/system/iio-sensor-proxy.service.d
printf '[Service]\nEnvironment=G_MESSAGES_DEBUG=all\n' >/etc/systemd/system/iio-sensor-proxy.service.d/vm-debug.conf
systemctl daemon-reload
modprobe uinput || info "modprobe_failed"
modprobe evdev || info "modprobe_failed"
udevadm trigger --action=change --subsystem-match=misc --sysname-match=uinput
udevadm settle
info "uinput_group=$(stat -c %G /dev/uinput 2>/dev/null)"

# Plays the trace on a new device; $1: the phase's name, then the feeder's options.
feed() {
  local phase=$1
  shift
  "$lib/uhid-accel" --sent "/tmp/$phase-sent" --wait-stream 60 "$@" "$lib/traces/relay.csv" >"/tmp/$phase-feeder" 2>&1 &
  fpid=$!
}
# Waits for the feeder to finish playing.
played() {
  for _ in $(seq 900); do grep -q "uhid-accel: done" "/tmp/$1-feeder" && break; kill -0 $fpid 2>/dev/null || break; sleep 0.1; done
  grep -q "uhid-accel: done" "/tmp/$1-feeder" || info "feeder_timeout_$1"
}
# The context switches of each thread of a process ("TID ALL VOLUNTARY" lines: a voluntary switch is a wake-up,
# the thread slept and something woke it; the others are preemptions of a running thread, which under emulation
# follow the guest's load), and its CPU time (user + system, clock
# ticks).
switches() {
  for t in /proc/"$1"/task/*; do
    printf '%s %s\n' "${t##*/}" "$(awk '/ctxt_switches/ { n += $2 } /^voluntary_ctxt_switches/ { v = $2 } END { print n + 0, v + 0 }' "$t/status" 2>/dev/null)"
  done
}
ticks() { awk '{ print $14 + $15 }' /proc/"$1"/stat 2>/dev/null; }
# The device's sampling rate (HID sensors name it in_accel_sampling_frequency).
rate() { cat /sys/bus/iio/devices/iio:device0/{,in_accel_}sampling_frequency 2>/dev/null | head -1; }
# monitor-sensor, its lines in $1 and, each after the time it was read (CLOCK_MONOTONIC, as the feeder's), in
# $1-times; sets mpid.
monitor() {
  rm -f "$1.fifo"
  mkfifo "$1.fifo"
  stdbuf -oL monitor-sensor >"$1.fifo" 2>&1 &
  mpid=$!
  while IFS= read -r line; do
    echo "$line" >>"$1"
    echo "$("$lib/monotonic") $line" >>"$1-times"
  done <"$1.fifo" &
}
# Runs a command in the background (its pid in lpid) with its standard output to $2 and standard error to $3, and
# each line of either, after the time it was read (CLOCK_MONOTONIC), to $1. $4...: the command.
stamped() {
  local times=$1 out=$2 err=$3
  shift 3
  rm -f "$times.fifo" "$times.err.fifo"
  mkfifo "$times.fifo" "$times.err.fifo"
  "$@" >"$times.fifo" 2>"$times.err.fifo" &
  lpid=$!
  while IFS= read -r line; do echo "$line" >>"$out"; echo "$("$lib/monotonic") $line" >>"$times"; done <"$times.fifo" &
  while IFS= read -r line; do echo "$line" >>"$err"; echo "$("$lib/monotonic") $line" >>"$times"; done <"$times.err.fifo" &
}
# What each thread of process $1 is blocked in ("TID SYSCALL-NUMBER ARGS..." lines, /proc/PID/task/TID/syscall):
# poll(2) (7) with its timeout in milliseconds as the third argument, epoll_wait (232) the fourth, futex (202).
blocked() {
  for t in /proc/"$1"/task/*; do
    printf '%s %s\n' "${t##*/}" "$(cut -d' ' -f1-5 "$t/syscall" 2>/dev/null)"
  done
}
# The context switches, wake-ups and CPU time of process $1 over $2 seconds, as "NAME_switches=... NAME_wakeups=...
# NAME_ticks=... NAME_seconds=...",
# and in /tmp/threads-NAME one line a thread: "NAME TID THREAD-NAME SWITCHES SYSCALL..." (what it was blocked in
# halfway through).
# Thread by thread: a thread that ends meanwhile would take its count out of a plain sum; one that starts counts
# from zero.
cost() {
  local c0 t0 c1 t1 n
  switches "$1" >/tmp/cost.before
  c0=$(ticks "$1") t0=$(cut -d' ' -f1 /proc/uptime)
  sleep "$(awk -v s="$2" 'BEGIN { print s / 2 }')"
  blocked "$1" >/tmp/cost.blocked
  sleep "$(awk -v s="$2" 'BEGIN { print s / 2 }')"
  switches "$1" >/tmp/cost.after
  c1=$(ticks "$1") t1=$(cut -d' ' -f1 /proc/uptime)
  n=$(awk 'NR == FNR { a[$1] = $2; w[$1] = $3; next } { n += ($1 in a) ? $2 - a[$1] : $2; v += ($1 in w) ? $3 - w[$1] : $3 }
    END { print n + 0, v + 0 }' /tmp/cost.before /tmp/cost.after)
  awk -v phase="$3" -v pid="$1" 'FILENAME == ARGV[1] { a[$1] = $2; w[$1] = $3; next }
    FILENAME == ARGV[2] { $1 = $1; k = $1; sub(/^[^ ]+ ?/, ""); b[k] = $0; next }
    { name = "?"; f = "/proc/" pid "/task/" $1 "/comm"; if ((getline name < f) > 0) close(f); gsub(/ /, "_", name)
      print phase, $1, name, ($1 in a) ? $2 - a[$1] : $2, ($1 in w) ? $3 - w[$1] : $3, b[$1] }' \
    /tmp/cost.before /tmp/cost.blocked /tmp/cost.after >"/tmp/threads-$3"
  echo "$3_switches=${n% *} $3_wakeups=${n#* } $3_ticks=$((c1 - c0)) $3_seconds=$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')"
}

# --- With the relay ---
# The trace waits (its first row sent over and over) until monitor-sensor has claimed the accelerometer: its
# first turn is the first orientation after a claim, however long the guest took to start iio-sensor-proxy.
rm -f /tmp/relay-go /tmp/relay-shakes-go
# And the shakes (26 s into the trace) wait until the subscriber captures at the listeners' rate (below).
feed relay --start-after /tmp/relay-go --hold-at 26 /tmp/relay-shakes-go
for _ in $(seq 450); do grep -q "Phys=shaked/accelerometer-relay" /proc/bus/input/devices && break; sleep 0.2; done
# Its evdev node (the relay is made once capture starts; evdev attaches a moment later).
for _ in $(seq 50); do
  event=$(awk '/^P: Phys=shaked\/accelerometer-relay/ { f = 1 } f && /^H: Handlers=/ { if (match($0, /event[0-9]+/)) print substr($0, RSTART, RLENGTH); exit }' /proc/bus/input/devices)
  [ -n "$event" ] && break
  sleep 0.2
done
udevadm settle
if [ -z "$event" ]; then
  grep -E "^(N|P|H):" /proc/bus/input/devices | while IFS= read -r line; do say "log input $line"; done
  journalctl -u shaked.service -o verbose --no-pager | grep -E "^ *(INPUT|NAME|ERROR|PATH)=" | sed 's/^ *//' |
    while IFS= read -r line; do say "log relay-field $line"; done
fi
info "relay_input=${event:-none} iio_type=$(property /sys/bus/iio/devices/iio:device0 IIO_SENSOR_PROXY_TYPE) shaked_owns=$(property /sys/bus/iio/devices/iio:device0 SHAKED_OWNS)"
if [ -n "$event" ]; then
  info "input_accel=$(property /dev/input/$event ID_INPUT_ACCELEROMETER) input_type=$(property /dev/input/$event IIO_SENSOR_PROXY_TYPE) input_matrix=$(property /dev/input/$event ACCEL_MOUNT_MATRIX) input_location=$(property /dev/input/$event ACCEL_LOCATION)"
fi
systemctl start iio-sensor-proxy.service
monitor /tmp/relay-monitor
for _ in $(seq 300); do grep -q "Has accelerometer" /tmp/relay-monitor 2>/dev/null && break; sleep 0.1; done
touch /tmp/relay-go
go=$(cut -d' ' -f1 /proc/uptime)
pid=$(systemctl show -p MainPID --value shaked.service)
# The relay's cost while only it reads (monitor-sensor claims the accelerometer): 10 s of the daemon's wake-ups
# and CPU time, the first turn of the trace among them.
sleep 1
info "$(cost "$pid" 10 cost) hz=$(getconf CLK_TCK) relay_rate=$(rate)"
# The subscriber after the last turn (22 s into the trace; the shakes begin at 28.5 s): its capture at the
# listeners' rate starts the sensor's buffer again, and a turn meanwhile would wait for it (a reading 0.7 s
# late, measured), which is not the relay's timing.
sleep "$(awk -v go="$go" -v now="$(cut -d' ' -f1 /proc/uptime)" 'BEGIN { w = go + 23.5 - now; print (w > 0 ? w : 0) }')"
listened=$(date +%s) listen_begin=$(cut -d' ' -f1 /proc/uptime)
listened_mono=$("$lib/monotonic")
# Its lines (events, and "connected" on standard error) each after the time it was read, as monitor-sensor's.
stamped /tmp/relay-listen-times /tmp/relay-listen /tmp/relay-listen.err stdbuf -oL shakectl listen --json
# The shakes wait until the subscriber is connected and shaked captures for it: its capture at the listeners'
# rate starts the buffer again, which interrupts a shake under way (the relay's capture follows the shakes too,
# the feeder sending 100 Hz whatever the rate), and a shakectl took seconds to connect in a loaded guest.
ready=no
for _ in $(seq 300); do
  if grep -q connected /tmp/relay-listen.err 2>/dev/null && [ "$(rate)" = "100.000000" ] &&
    journalctl -u shaked.service --since "@$listened" -o cat --no-pager | grep -q "receiving samples"; then
    ready=yes
    break
  fi
  sleep 0.1
done
info "subscriber_ready=$ready subscriber_wait=$(awk -v a="$listen_begin" -v b="$(cut -d' ' -f1 /proc/uptime)" 'BEGIN { printf "%.2f", b - a }')"
touch /tmp/relay-shakes-go
played relay
sleep 2
info "subscribed_rate=$(rate)"
# Where the feeder stalled while the subscriber listened: consecutive rows sent more than 0.2 s apart ("ROW:GAP",
# the row after the gap; a gap past the detector's max_gap, 0.5 s, breaks the stream), and the largest gap. HID
# scans are stamped on arrival, so a stalled feeder is a hole in the sensor's data.
info "$(awk -v from="$listened_mono" '$1 + 0 >= from + 0 { if (n++ && $1 - t > g) g = $1 - t
  if (n > 1 && $1 - t > 0.2) { s = s sep $2 ":" sprintf("%.3f", $1 - t); sep = "," } t = $1 }
  END { printf "subscribed_feeder_stalls=%s subscribed_feeder_widest=%.3f", (s == "" ? "none" : s), g }' /tmp/relay-sent)"
kill $lpid $mpid 2>/dev/null
wait $lpid $mpid 2>/dev/null
listened_end=$(($(date +%s) + 1))
# Nobody claims the accelerometer any more: iio-sensor-proxy stops reading the relay, and after 3 s without a
# read shaked turns the sensor off (the feeder's device stays, its trace played). Measured over 20 s: the
# daemon's one timer left while idle, the watchdog's ping, comes every 10 s.
sleep 5
info "$(cost "$pid" 20 unclaimed) unclaimed_rate=$(rate)"
cat /tmp/threads-cost /tmp/threads-unclaimed | while IFS= read -r line; do say "threads $line"; done
# Claimed again: the relay is read again, and the sensor on.
monitor /tmp/relay-reclaim
sleep 4
kill $mpid 2>/dev/null
wait $mpid 2>/dev/null
kill $fpid 2>/dev/null
wait $fpid 2>/dev/null
while IFS= read -r line; do say "event $line"; done </tmp/relay-listen
while IFS= read -r line; do say "monitor-relay $line"; done </tmp/relay-monitor
while IFS= read -r line; do say "monitor-times $line"; done </tmp/relay-monitor-times
while IFS= read -r line; do say "listen-times $line"; done </tmp/relay-listen-times
# The rows as the feeder sent them from the hold before the shakes on (CLOCK_MONOTONIC, row): the checker gives
# them to shakectl detect, whose events the subscriber's must be (a feeder stalled by the loaded guest sends the
# rows it missed in a burst, and a shake cut so is another input).
awk '$2 >= 2599' /tmp/relay-sent | while IFS= read -r line; do say "sent $line"; done
while IFS= read -r line; do say "monitor-reclaim $line"; done </tmp/relay-reclaim
# When the feeder sent the last row of each turn (scripts/vm/orientation-trace.py: 6 s, then 1 s turns held 4 s).
info "turn_ends=$(awk '$2 == 699 || $2 == 1199 || $2 == 1699 || $2 == 2199 { printf "%s%s", (n++ ? "," : ""), $1 }' /tmp/relay-sent)"
journalctl -u shaked.service -o cat --no-pager | grep -E "nothing has read the relay|the relay is read again|opens of the relay" |
  while IFS= read -r line; do say "log demand $line"; done
# Both daemons' logs on the monotonic clock (the feeder's and monitor-sensor's), up to 3 s after the last turn's
# end; shaked's relay timing (its debug messages, with their fields) as the journal's JSON.
last=$(awk '$2 == 2199 { print $1 }' /tmp/relay-sent)
journalctl -u shaked.service -u iio-sensor-proxy.service -o short-monotonic --no-pager | tr -d '[]' |
  awk -v begin="$begin" -v end="$last" '$1 + 0 >= begin && (end == "" || $1 + 0 <= end + 3)' |
  grep -v "relay read planned\|relay node opened\|relay reading written" |
  tail -400 | while IFS= read -r line; do say "log journal $line"; done
journalctl -u shaked.service -o json --no-pager | grep -E '"MESSAGE":"relay (read planned|node opened|reading written)"' |
  tail -600 | while IFS= read -r line; do say "phase $line"; done
# What shaked logged while the subscriber listened (its capture switched to the listeners' rate, any break in
# the stream): a shake it did not get is read against these. On the wall clock: a suspend earlier in the boot
# (systemd-suspend) puts /proc/uptime ahead of the journal's monotonic times.
journalctl -u shaked.service --since "@$listened" --until "@$listened_end" -o short-monotonic --no-pager | tr -d '[]' |
  grep -v "relay read planned\|relay node opened\|relay reading written" |
  tail -80 | while IFS= read -r line; do say "log listen $line"; done

# --- Without the relay: iio-sensor-proxy reads the IIO device itself ---
systemctl stop shaked.service iio-sensor-proxy.service
mkdir -p /etc/shaked/shaked.yaml.d
printf 'sensor:\n  relay: off\n' >/etc/shaked/shaked.yaml.d/vm-relay-off.yaml
sleep 1
feed direct
for _ in $(seq 150); do [ -e /sys/bus/iio/devices/iio:device0 ] && break; sleep 0.2; done
udevadm settle
info "direct_iio_type=$(property /sys/bus/iio/devices/iio:device0 IIO_SENSOR_PROXY_TYPE)"
systemctl start iio-sensor-proxy.service
monitor /tmp/direct-monitor
sleep 8
# The conflict: a subscriber makes shaked capture from the device iio-sensor-proxy runs.
shakectl listen --json >/tmp/direct-listen 2>/dev/null &
lpid=$!
sleep 4
info "busy_state=$(shakectl status --json 2>/dev/null | grep -o '"state":"[a-z]*"' | head -1 | cut -d'"' -f4)"
played direct
sleep 2
kill $lpid $mpid 2>/dev/null
wait $lpid $mpid 2>/dev/null
kill $fpid 2>/dev/null
while IFS= read -r line; do say "monitor-direct $line"; done </tmp/direct-monitor
journalctl -u shaked.service -o cat --no-pager | grep -E "busy|relay|as it was found|iio-sensor-proxy" |
  grep -vE "^relay (read planned|node opened|reading written|read after its poll)" | uniq -c | while IFS= read -r line; do say "log $line"; done
# What the busy message told the user (a journal field of its own).
journalctl -u shaked.service -o verbose --no-pager | grep -m1 "ADVICE=" | sed 's/^ *//' | while IFS= read -r line; do say "log busy $line"; done
journalctl -u shaked.service -o verbose --no-pager | grep -E "^ *(FAILED|WRITES)=" | sed 's/^ *//' | while IFS= read -r line; do say "log restore $line"; done
journalctl -u iio-sensor-proxy.service -o cat --no-pager | tail -20 | while IFS= read -r line; do say "log iio-sensor-proxy: $line"; done
while IFS= read -r line; do say "feeder $line"; done </tmp/relay-feeder
say "end $(cut -d' ' -f1 /proc/uptime)"
