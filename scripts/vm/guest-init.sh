#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# /init of the VM test initramfs (busybox): loads the drivers, runs the scenarios named on the kernel command line
# (shaked.scenarios=a,b or all), reports on the serial console in lines that start with "@@ ", and powers off.
# scripts/vm/check.py reads those lines on the host and decides.
export PATH=/bin:/sbin:/usr/bin:/usr/sbin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs dev /dev
mkdir -p /tmp /run /dev/pts
mount -t tmpfs tmp /tmp
mount -t tmpfs run /run
dmesg -n 1
hostname shaked-vm

say() { echo "@@ $*"; }
uptime_s() { cut -d' ' -f1 /proc/uptime; }
mono() { /bin/monotonic; }

scenarios=all
for word in $(cat /proc/cmdline); do
    case "$word" in shaked.scenarios=*) scenarios=${word#shaked.scenarios=} ;; esac
done
[ "$scenarios" = all ] && scenarios=$(cat /etc/vm-scenarios)
say "boot $(uptime_s) kernel $(uname -r) scenarios $scenarios"

modprobe uhid || say "modprobe uhid failed"
modprobe hid-sensor-hub || say "modprobe hid-sensor-hub failed"
modprobe hid-sensor-accel-3d || say "modprobe hid-sensor-accel-3d failed"

# The IIO device whose name is $1, within $2 seconds: prints its sysfs directory.
find_device() {
    i=0
    while [ $i -lt $(($2 * 10)) ]; do
        for d in /sys/bus/iio/devices/iio:device*; do
            [ -f "$d/name" ] && [ "$(cat "$d/name")" = "$1" ] && { echo "$d"; return 0; }
        done
        sleep 0.1
        i=$((i + 1))
    done
    return 1
}

# Waits until file $1 has a line containing $2, for at most $3 seconds.
wait_line() {
    i=0
    while [ $i -lt $(($3 * 10)) ]; do
        grep -q "$2" "$1" 2>/dev/null && return 0
        sleep 0.1
        i=$((i + 1))
    done
    return 1
}

# Context switches of each thread of process $1 (voluntary + involuntary), one "TID COUNT" line a thread.
ctxsw_threads() {
    for t in /proc/$1/task/*; do
        printf '%s %s\n' "${t##*/}" "$(awk '/ctxt_switches/ { n += $2 } END { print n + 0 }' $t/status 2>/dev/null)"
    done
}

# The daemon's events go through stamp-lines, which notes when it read each one (/tmp/$name.stamps): the delay
# from the sample that decided an event to a reader having it.
start_daemon() {
    rm -f /tmp/$name.fifo
    mkfifo /tmp/$name.fifo
    /bin/stamp-lines /tmp/$name.stamps </tmp/$name.fifo >/tmp/$name.events &
    if [ -n "$as_user" ]; then
        # (busybox su execs the shell, which execs the daemon: $! is the daemon)
        su "$as_user" -s /bin/sh -c "exec /usr/bin/shaked --print-events --no-socket --log-level debug" \
            >/tmp/$name.fifo 2>/tmp/$name.log &
    else
        /usr/bin/shaked --print-events --no-socket --log-level debug >/tmp/$name.fifo 2>/tmp/$name.log &
    fi
    dpid=$!
}

# Lets an unprivileged user capture from the accelerometer, as the udev rule does for the service's group, but
# leaves current_timestamp_clock to root: the daemon must then map the kernel's realtime stamps itself.
unprivileged() {
    dev=$(find_device accel_3d 30) || return 1
    echo "vmuser:x:1000:1000::/tmp:/bin/sh" >>/etc/passwd
    echo "vmuser:x:1000:" >>/etc/group
    chmod 0666 "/dev/${dev##*/}"
    for a in sampling_frequency in_accel_sampling_frequency buffer/enable buffer/length buffer/watermark trigger/current_trigger $dev/scan_elements/*_en; do
        [ -f "$a" ] || a=$dev/$a
        [ -f "$a" ] && chmod o+w "$a"
    done
    say "$name info clock_writable=$(su vmuser -s /bin/sh -c "test -w $dev/current_timestamp_clock && echo yes || echo no" 2>/dev/null)"
    as_user=vmuser
}

stop_daemon() {
    # The daemon's cost over its life in the scenario, shakes and all: its threads' voluntary context switches
    # (wake-ups; a thread that ended took its count with it) and its CPU ticks (USER_HZ 100), over its seconds.
    if [ -r /proc/$dpid/stat ]; then
        w=$(cat /proc/$dpid/task/*/status 2>/dev/null | awk '/^voluntary_ctxt_switches/ { n += $2 } END { print n + 0 }')
        # after the command's ")": field 3 onwards; utime is field 14, stime 15, starttime 22
        set -- $(cut -d')' -f2 /proc/$dpid/stat)
        say "$name info daemon_wakeups=$w daemon_ticks=$((${12} + ${13})) daemon_seconds=$(awk -v u="$(uptime_s)" -v s="${20}" 'BEGIN { printf "%.1f", u - s / 100 }')"
    fi
    kill -TERM $dpid 2>/dev/null
    i=0
    while kill -0 $dpid 2>/dev/null && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
    kill -KILL $dpid 2>/dev/null
    wait $dpid
    say "$name info daemon_exit=$?"
}

report() {
    sleep 0.2  # (stamp-lines reads the last events after the daemon has ended)
    while IFS= read -r line; do say "$name event $line"; done </tmp/$name.events
    [ -f /tmp/$name.stamps ] && while IFS= read -r line; do say "$name stamp $line"; done </tmp/$name.stamps
    while IFS= read -r line; do say "$name feeder $line"; done </tmp/$name.feeder
    while IFS= read -r line; do say "$name log $line"; done </tmp/$name.log
    [ -f /tmp/$name.sent ] && while IFS= read -r line; do say "$name sent $line"; done </tmp/$name.sent
    say "$name end $(uptime_s)"
}

# Measures the daemon's wake-ups (context switches of all its threads) over $1 seconds, and what the kernel holds
# for the buffer: the watermark, the length and the timestamp clock.
measure() {
    dev=$(find_device accel_3d 1)
    ctxsw_threads $dpid > /tmp/ctxsw.before
    sleep "$1"
    ctxsw_threads $dpid > /tmp/ctxsw.after
    # Thread by thread: a thread that ends meanwhile would take its count out of a plain sum (it went negative);
    # one that starts counts from zero.
    n=$(awk 'NR == FNR { a[$1] = $2; next } { n += ($1 in a) ? $2 - a[$1] : $2 } END { print n + 0 }' \
        /tmp/ctxsw.before /tmp/ctxsw.after)
    say "$name info ctxsw=$n seconds=$1 watermark=$(cat $dev/buffer/watermark) length=$(cat $dev/buffer/length) enable=$(cat $dev/buffer/enable) clock=$(cat $dev/current_timestamp_clock)"
    for t in /proc/$dpid/task/*; do
        say "$name info thread $(cat $t/comm) $(awk '/ctxt_switches/ { n += $2 } END { print n + 0 }' $t/status)"
    done
}

# A HID sensor hub accelerometer playing trace $1 (feeder options after it); the daemon starts once it exists,
# unless $late is set (then the daemon starts first, with no sensor).
hid() {
    trace=$1
    shift
    say "$name begin $(uptime_s)"
    if [ -n "$late" ]; then
        start_daemon
        sleep "$late"
        say "$name info waited=$late"
    fi
    /bin/uhid-accel --sent /tmp/$name.sent "$@" /traces/$trace >/tmp/$name.feeder 2>&1 &
    fpid=$!
    if ! find_device accel_3d 30 >/dev/null; then say "$name info no_device"; fi
    [ -n "$user" ] && unprivileged
    [ -z "$late" ] && start_daemon
    [ -n "$clockstep" ] && { wait_line /tmp/$name.feeder "start" 60; sleep "$clockstep"; date -s "@$(($(date +%s) - 3600))" >/dev/null; say "$name info clock_stepped_back=3600"; }
    [ -n "$wake" ] && { wait_line /tmp/$name.feeder "start" 60; sleep 2; measure "$wake"; }
    wait_line /tmp/$name.feeder "uhid-accel: done" 120 || say "$name info feeder_timeout"
    sleep 1
    stop_daemon
    kill $fpid 2>/dev/null
    wait $fpid 2>/dev/null
    report
    late= clockstep= wake= user= as_user=
}

# shakectl key ctrl+z against the daemon on its socket, the accelerometer playing trace $1: the daemon makes its
# virtual keyboard ("shaked keyboard") when the key request comes, and presses the chord (shakectl runs as root
# here, and root's chords need no logind session); a reader prints the key events of the keyboard's evdev node,
# which the checker matches with the shakes and with what shakectl says was pressed.
key() {
    trace=$1
    say "$name begin $(uptime_s)"
    # (evdev makes the /dev/input/eventN nodes; Debian builds both as modules)
    modprobe uinput && modprobe evdev || say "$name info modprobe_failed"
    /bin/uhid-accel --sent /tmp/$name.sent /traces/$trace >/tmp/$name.feeder 2>&1 &
    fpid=$!
    find_device accel_3d 30 >/dev/null || say "$name info no_device"
    /usr/bin/shaked --socket /run/shaked.sock --log-level debug >/tmp/$name.log 2>&1 &
    dpid=$!
    wait_line /tmp/$name.log "listening" 30 || say "$name info capture_timeout"
    /bin/evdev-read "shaked keyboard" >/tmp/$name.keys 2>&1 &
    rpid=$!
    /usr/bin/shakectl key ctrl+z --socket /run/shaked.sock >/tmp/$name.events 2>/tmp/$name.key &
    kpid=$!
    wait_line /tmp/$name.feeder "uhid-accel: done" 120 || say "$name info feeder_timeout"
    sleep 1
    kill $kpid $rpid 2>/dev/null
    wait $kpid $rpid 2>/dev/null
    stop_daemon
    kill $fpid 2>/dev/null
    wait $fpid 2>/dev/null
    while IFS= read -r line; do say "$name keys $line"; done </tmp/$name.keys
    while IFS= read -r line; do say "$name shakectl $line"; done </tmp/$name.key
    report
}

# Binds kxcjk-1013 on i2c-stub: sets $bus (the stub's I2C bus) and $dev (the IIO device's sysfs directory).
kxcjk_bind() {
    modprobe i2c-stub chip_addr=0x0e && modprobe i2c-dev && modprobe kxcjk-1013 || say "$name info modprobe_failed"
    bus=
    for b in /sys/bus/i2c/devices/i2c-*; do
        grep -q "SMBus stub" "$b/name" 2>/dev/null && bus=${b##*i2c-}
    done
    /bin/i2c-accel --bus "$bus" --init
    echo kxcjk1013 0x0e >/sys/bus/i2c/devices/i2c-$bus/new_device
    dev=$(find_device kxcjk1013 10)
}

# kxcjk-1013 on i2c-stub, polled, playing trace $1.
kxcjk() {
    trace=$1
    say "$name begin $(uptime_s)"
    kxcjk_bind || say "$name info no_device"
    # The driver starts the chip at ±4 g; set to ±2 g here (as other chips boot), which the trace's 3.9 g turns
    # exceed: the daemon (sensor.range: auto) sets ±4 g while it captures and puts ±2 g back when it stops. The
    # feeder writes counts of the scale in force.
    say "$name info scale_driver=$(cat $dev/in_accel_scale)"
    echo 0.009582 >$dev/in_accel_scale || say "$name info scale_failed"
    say "$name info scale_boot=$(cat $dev/in_accel_scale) available=$(cat $dev/in_accel_scale_available | tr ' ' ,)"
    start_daemon
    wait_line /tmp/$name.log "capturing from" 30 || say "$name info capture_timeout"
    scale=$(cat $dev/in_accel_scale)
    say "$name info scale_capture=$scale"
    sleep 1
    /bin/i2c-accel --bus "$bus" --scale "$scale" /traces/$trace >/tmp/$name.feeder 2>&1
    sleep 1
    stop_daemon
    say "$name info scale_after=$(cat $dev/in_accel_scale)"
    # The accelerometer goes with the scenario: a later one must find only its own sensor.
    echo 0x0e >/sys/bus/i2c/devices/i2c-$bus/delete_device || say "$name info delete_failed"
    report
}

# Waits until the feeder is $1 seconds into its trace: its start plus the gaps it went on after (--pause-idle).
wait_trace() {
    target=$(awk -v at="$1" '/-accel: start/ { s = $3 } /-accel: resumed/ { s += $4 } END { printf "%.3f", s + at }' /tmp/$name.feeder)
    left=$(awk -v t="$target" -v n="$(mono)" 'BEGIN { d = t - n; printf "%.3f", (d > 0 ? d : 0) }')
    sleep "$left"
}

# Suspends the guest to RAM (S3): the host's agent (scripts/vm/host-agent.py) sees the request on the console,
# waits until QEMU says the guest is suspended, and wakes it with the monitor's system_wakeup $2 seconds later.
# $1 names the sleep in the report: its length on the boot-time clock and what it took of the monotonic one.
suspend_guest() {
    say "$name host wake-after $2"
    m0=$(mono) b0=$(uptime_s)
    echo mem >/sys/power/state || say "$name info suspend_failed_$1=1"
    m1=$(mono) b1=$(uptime_s)
    say "$name info slept_$1=$(awk -v a="$b0" -v b="$b1" -v c="$m0" -v d="$m1" 'BEGIN { printf "%.2f:%.2f", b - a, d - c }') asleep_$1=$m0:$m1"
}

# A HID accelerometer playing trace $1 with --pause-idle under a daemon with a subscriber (shakectl listen on its
# socket); the guest suspends to RAM twice: while idle (0.5 s into the trace, before the first shake) and 0.3 s
# before the end of the second shake.
suspend_scenario() {
    say "$name begin $(uptime_s)"
    [ -w /sys/power/mem_sleep ] && echo deep >/sys/power/mem_sleep 2>/dev/null
    say "$name info power_state=$(tr ' ' , </sys/power/state) mem_sleep=$(tr ' ' , </sys/power/mem_sleep 2>/dev/null)"
    /bin/uhid-accel --pause-idle --sent /tmp/$name.sent /traces/$1 >/tmp/$name.feeder 2>&1 &
    fpid=$!
    find_device accel_3d 30 >/dev/null || say "$name info no_device"
    /usr/bin/shaked --socket /run/shaked.sock --print-events --log-level debug >/tmp/$name.events 2>/tmp/$name.log &
    dpid=$!
    wait_line /tmp/$name.log "listening" 30 || say "$name info capture_timeout"
    /usr/bin/shakectl listen --json --socket /run/shaked.sock >/tmp/$name.listen 2>&1 &
    lpid=$!
    # (a loaded guest can take seconds to start shakectl: the subscriber must be there before the first shake)
    wait_line /tmp/$name.listen "connected" 30 || say "$name info listen_timeout"
    wait_line /tmp/$name.feeder "uhid-accel: start" 60 || say "$name info feeder_timeout"
    wait_trace 0.5
    suspend_guest idle 2
    sleep 1
    # (the second shake runs from 4.7 to 5.9 s)
    wait_trace 5.6
    suspend_guest shaking 2
    wait_line /tmp/$name.feeder "uhid-accel: done" 120 || say "$name info feeder_timeout"
    sleep 1
    kill $lpid 2>/dev/null
    wait $lpid 2>/dev/null
    stop_daemon
    kill $fpid 2>/dev/null
    wait $fpid 2>/dev/null
    while IFS= read -r line; do say "$name listen $line"; done </tmp/$name.listen
    report
}

# The same two sleeps under polled capture: a kxcjk-1013 on i2c-stub playing trace $1 under a daemon with a
# subscriber. Without the HID sensor hub, whose power requests wait for the frozen feeder, a sleep takes well under
# a second of the monotonic clock, less than the detector's max_gap: only the daemon's own look at the boot-time
# clock breaks the stream. (Not beside the HID sensor in one scenario: the second daemon's load on the emulated
# guest moved the HID sensor's samples past what its checks allow.)
suspend_polled_scenario() {
    say "$name begin $(uptime_s)"
    [ -w /sys/power/mem_sleep ] && echo deep >/sys/power/mem_sleep 2>/dev/null
    kxcjk_bind || say "$name info no_device"
    /usr/bin/shaked --socket /run/shaked.sock --print-events --log-level debug >/tmp/$name.events 2>/tmp/$name.log &
    dpid=$!
    wait_line /tmp/$name.log "capturing from" 30 || say "$name info capture_timeout"
    /usr/bin/shakectl listen --json --socket /run/shaked.sock >/tmp/$name.listen 2>&1 &
    lpid=$!
    wait_line /tmp/$name.listen "connected" 30 || say "$name info listen_timeout"
    /bin/i2c-accel --bus "$bus" --scale "$(cat $dev/in_accel_scale)" /traces/$1 >/tmp/$name.feeder 2>&1 &
    ipid=$!
    wait_line /tmp/$name.feeder "i2c-accel: start" 60 || say "$name info feeder_timeout"
    wait_trace 0.5
    suspend_guest idle 2
    sleep 1
    wait_trace 5.6
    suspend_guest shaking 2
    wait $ipid
    sleep 1
    kill $lpid 2>/dev/null
    wait $lpid 2>/dev/null
    stop_daemon
    echo 0x0e >/sys/bus/i2c/devices/i2c-$bus/delete_device || say "$name info delete_failed"
    while IFS= read -r line; do say "$name listen $line"; done </tmp/$name.listen
    report
}

# A HID accelerometer served over the network by Debian's iiod (libiio 0.24), and the daemon on the HOST reading
# it (--source iio:ip:127.0.0.1:PORT, QEMU's user networking forwarding a loopback port of the host to iiod's
# 30431): the host's agent starts and stops the daemon when asked on the console, measures it and adds its
# events and log to the report. $1: the trace; $vanish: the sensor vanishes 2.4 s into the trace and returns 3 s
# later, iiod going away and coming back with it (iiod 0.24 has no hotplug); $link: the network link fails for
# while iiod keeps running (the host's agent takes QEMU's link down and up): for 3 s 0.7 s into the first shake
# of link.csv, and for 6 s while the device lies still between the second and the third (long enough for the
# daemon to try to connect again while it is down).
iiod_scenario() {
    trace=$1
    say "$name begin $(uptime_s)"
    modprobe virtio_pci && modprobe virtio_net || say "$name info modprobe_failed"
    i=0
    while ! ip link show eth0 >/dev/null 2>&1 && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
    ip link set lo up
    ip link set eth0 up
    ip addr show eth0 | grep -q 10.0.2.15/ || ip addr add 10.0.2.15/24 dev eth0 || say "$name info no_network"
    if [ -n "$vanish" ]; then
        /bin/uhid-accel --sent /tmp/$name.sent --vanish-at 2.4 --return-after 3 /traces/$trace >/tmp/$name.feeder 2>&1 &
    else
        /bin/uhid-accel --sent /tmp/$name.sent /traces/$trace >/tmp/$name.feeder 2>&1 &
    fi
    fpid=$!
    find_device accel_3d 30 >/dev/null || say "$name info no_device"
    /usr/sbin/iiod >/tmp/$name.iiod 2>&1 &
    ipid=$!
    sleep 1
    # The guest's monotonic clock, for the agent to place the daemon's events on its own (the added delay).
    (while :; do say "$name clock $(mono)"; sleep 0.5; done) &
    cpid=$!
    say "$name host start-daemon"
    wait_line /tmp/$name.feeder "uhid-accel: start" 60 || say "$name info feeder_timeout"
    if [ -n "$vanish" ]; then
        # (iiod 0.24 takes tens of seconds to end on SIGTERM with a client reading a device that has gone)
        wait_line /tmp/$name.feeder "uhid-accel: vanished" 30 && kill -KILL $ipid
        wait $ipid 2>/dev/null
        say "$name info iiod_stopped=$(uptime_s)"
        wait_line /tmp/$name.feeder "uhid-accel: returned" 30
        /usr/sbin/iiod >>/tmp/$name.iiod 2>&1 &
        ipid=$!
        say "$name info iiod_started=$(uptime_s)"
    elif [ -n "$link" ]; then
        # (link.csv: shakes from 1.5 to 2.7 s, 18.7 to 19.9 s and 35.9 to 37.1 s)
        wait_trace 2.2
        say "$name host link off"
        sleep 3
        say "$name host link on"
        wait_trace 21.0
        say "$name host link off"
        say "$name host measure 5"
        sleep 6
        say "$name host link on"
    else
        sleep 2
        say "$name host measure 5"
    fi
    wait_line /tmp/$name.feeder "uhid-accel: done" 120 || say "$name info feeder_timeout"
    sleep 1
    say "$name host stop-daemon"
    sleep 3
    kill $cpid $ipid $fpid 2>/dev/null
    wait $cpid $ipid $fpid 2>/dev/null
    : >/tmp/$name.events
    : >/tmp/$name.log
    while IFS= read -r line; do say "$name iiod $line"; done </tmp/$name.iiod
    report
    vanish= link=
}

for name in $(echo "$scenarios" | tr , ' '); do
    case "$name" in
    shake-horizontal) hid shake-horizontal-100hz.csv ;;
    shake-vertical) hid shake-vertical-100hz.csv ;;
    shake-both) hid shake-both-100hz.csv ;;
    shakes3) hid shakes3.csv ;;
    fling) hid fling.csv ;;
    walking) wake=5 hid walking.csv ;;
    vanish) hid shake-horizontal-100hz.csv --vanish-at 2.4 --return-after 3 ;;
    no-sensor) late=3 hid shake-both-100hz.csv ;;
    irregular) hid shakes3.csv --jitter 8 --repeat 0.1 --skip 0.1 --seed 5 ;;
    clock-step) clockstep=2 hid shake-horizontal-100hz.csv ;;
    clock-mapped) user=1 hid shake-vertical-100hz.csv ;;
    kxcjk) kxcjk shake-horizontal-100hz.csv ;;
    key) key shakes3.csv ;;
    suspend) suspend_scenario shakes3.csv ;;
    suspend-polled) suspend_polled_scenario shakes3.csv ;;
    iiod) iiod_scenario shakes3.csv ;;
    iiod-vanish) vanish=1 iiod_scenario shake-horizontal-100hz.csv ;;
    iiod-link) link=1 iiod_scenario link.csv ;;
    probe) ;; # boots and powers off: does this accelerator run the kernel?
    *) say "$name unknown" ;;
    esac
done
say "done $(uptime_s)"
poweroff -f
