#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Checks the VM's serial log (scripts/vm/guest-init.sh's "@@ " lines) against `shakectl detect` on the host.

Two comparisons for each scenario:
- as delivered (HID scenarios): the feeder logs when it sent each row (CLOCK_MONOTONIC, the clock the daemon's
  events must use); `shakectl detect` on those rows, at those times, quantized to the device's resolution, must give
  the daemon's events: same phases, times within two rows, peaks within the quantum plus the JSON's rounding plus 0.5%
  (what one report merged or dropped by the kernel under load moves them). This shows that the capture path hands over what the sensor produced, on the right clock.
- as recorded: the daemon's events, mapped onto the trace's clock with the feeder's start time, must have the same
  phases and count as `shakectl detect` on the trace file (quantized), times within 100 ms (the guest's timing
  under emulation; the largest difference is printed).
Scenario-specific checks on top. Prints one line per scenario, and "vm: N passed, M failed".
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

HID_QUANTUM = 9.80665e-3  # m/s² per count: milli-g, the feeder's unit exponent -3
KXCJK_QUANTUM = 0.019163  # the ±4 g range sensor.range: auto selects (the guest reports the one in force)

# scenario: trace, device, what else to check
SCENARIOS = {
    "shake-horizontal": dict(trace="shake-horizontal-100hz.csv"),
    "shake-vertical": dict(trace="shake-vertical-100hz.csv"),
    "shake-both": dict(trace="shake-both-100hz.csv"),
    "shakes3": dict(trace="shakes3.csv", ended=3),
    "fling": dict(trace="fling.csv", ended=0),
    "walking": dict(trace="walking.csv", ended=0, wakeups=True),
    "vanish": dict(trace="shake-horizontal-100hz.csv", vanish_at=2.4),
    "no-sensor": dict(trace="shake-both-100hz.csv", waited=True),
    "irregular": dict(trace="shakes3.csv", ended=3, irregular=True),
    "clock-step": dict(trace="shake-horizontal-100hz.csv"),
    "clock-mapped": dict(trace="shake-vertical-100hz.csv", mapped=True),
    "kxcjk": dict(trace="shake-horizontal-100hz.csv", device="kxcjk"),
    "key": dict(trace="shakes3.csv", ended=3, keys=True),
    "suspend": dict(trace="shakes3.csv", suspend=True),
    "suspend-polled": dict(trace="shakes3.csv", polled_suspend=True),
    "iiod": dict(trace="shakes3.csv", ended=3, remote=True),
    "iiod-vanish": dict(trace="shake-horizontal-100hz.csv", vanish_at=2.4, remote=True),
    "iiod-link": dict(trace="link.csv", remote=True, link=True),
    "systemd": dict(trace="shakes3.csv", ended=3, systemd=True),
    "systemd-suspend": dict(trace="shakes3.csv", systemd_suspend=True),
    "relay": dict(trace="relay.csv", ended=3, relay=True),
    "package": dict(trace="relay.csv", ended=3, package=True),
}
# The relay scenario (relay-test.sh): what its report must say.
RELAY_EXPECTED = {
    "uinput_group": "shaked-uinput",  # the rule gave the relay's group /dev/uinput
    "iio_type": "none",  # the hand-over rule cleared iio-sensor-proxy's type on the device shaked owns
    "shaked_owns": "1",
    "input_accel": "1",  # udev's input_id took the relay for an accelerometer
    "input_type": "input-accel",  # ... and iio-sensor-proxy's rule for one of its devices
    "input_matrix": "1,0,0;0,1,0;0,0,1",  # carried over (the HID device has none: identity)
    "direct_iio_type": "iio-poll-accel+iio-buffer-accel",  # without the relay iio-sensor-proxy keeps the IIO device
    "busy_state": "busy",  # ... and a subscriber makes shaked meet the conflict, shown in status
}
# The package scenario (package-test.sh): what its report must say.
PACKAGE_EXPECTED = {
    "uinput_loaded_before": "0",  # the image does not load uinput: the package must
    "before_accel": "yes",  # iio-sensor-proxy served the IIO device before the installation
    "install_status": "0",
    "relay_at_install": "yes",  # the relay exists when dpkg returns
    "uinput_loaded": "1",
    "uinput_group": "shaked-uinput",
    "iio_type": "none",  # handed over
    "shaked": "active",
    "state": "capturing",  # not busy: iio-sensor-proxy let go of the device
    "installed_accel": "yes",  # iio-sensor-proxy answers, through the relay
    "user_unit": "yes",
    "examples": "4",
    "modules_load": "uinput",
    "hotplug_driver": "buffered",  # a sensor plugged in after the installation is read through its buffer
    "hotplug_polled": "no",
    "priority_lines": "0",  # no "Failed to set thread priority" in the daemon's journal
    "purge_status": "0",
    "purge_warning": "no",  # the socket stopped with the service
    "after_uinput": "root:root:600",  # /dev/uinput root's alone again
    "after_node_group": "root",
    "after_attr_group": "root",
    "after_relay": "0",
    "after_proxy": "active",  # iio-sensor-proxy took the IIO device back
    "after_accel": "yes",
    "bus_name_at_install": "yes",  # the daemon owns its D-Bus name when dpkg returns
    # The D-Bus example, run by an unprivileged user in a login session, under the installed bus policy.
    "dbus_example": "yes",
    "dbus_sessions": "1",  # its logind session (follow_session: a claim captures only for a user with one)
    "dbus_events": "6",  # three shakes, began and ended, as Shake signals
    "dbus_ended": "3",
    "forged_seen": "0",  # the Shake the user sent reached nobody, not even a listener that takes any sender
    "busctl_claim": "0",  # Claim and Release, called by the same user, answered
    "busctl_release": "0",
    # The upgrade while shakectl listen is subscribed.
    "upgrade_status": "0",
    "upgrade_restarted": "yes",  # a new main process...
    "upgrade_exe": "/usr/sbin/shaked",  # ... running the binary the upgrade installed (an old one is "(deleted)")
    "socket_kept": "yes",  # the same listening socket, never stopped
}
# The Wayland session (when the image has sway): the daemon's keyboard typed Ctrl+Z into the user's session for
# each shake, as a Wayland client there received it (wev: evdev codes + 8: 37 left Ctrl, 52 z; state 1 down, 0 up).
PACKAGE_KEYS_EXPECTED = {
    "seat0_user": "tester",  # the user's session is seat0's active one
    "key_pressed": "3",
    "wev_ctrl_down": "3",
    "wev_z_down": "3",
    "wev_z_up": "3",
    "wev_ctrl_up": "3",
}
TURNS = ["bottom-up", "left-up", "normal", "right-up", "normal"]  # scripts/vm/orientation-trace.py
# A change, or the orientation monitor-sensor finds the sensor in ("=== Has accelerometer (orientation: normal)").
ORIENTATION = re.compile(r"orientation changed: ([a-z-]+)|\(orientation: ([a-z-]+)\)")
# The systemd image: what its report must say (info key: expected value).
SYSTEMD_EXPECTED = {
    "socket": "active",  # shaked.socket listens from boot
    "service_after_sensor": "active",  # udev started the service when the accelerometer appeared
    "node_group": "shaked",  # the udev rule gave the daemon's group the device node
    "clock_group": "shaked",  # ... and the timestamp clock attribute
    "user": "shaked",
    "capeff": "0000000000000000",  # no capability
    "nonewprivs": "1",
    "sandbox_write": "refused",  # the file system is read-only to it
    "clock": "monotonic",
    "watermark": "20",
    "reload_status": "0",
    "after_reload": "active",
    "same_pid": "yes",  # a reload is not a restart
    "listener_after_reload": "connected",
}
# libiio's own lines, as it prints them on stderr (the daemon's logger starts its lines with a date).
RAW_LIBIIO = re.compile(r"^(WARNING|ERROR|DEBUG|INFO): ")
# Delivery later than this (the feeder stalled under emulation) makes the trace as recorded a different input:
# a difference from it is then reported, not failed.
LATE_LIMIT = 0.015


def read_trace(path):
    rows = []
    with open(path) as f:
        for line in f:
            line = line.strip()
            if not line or line.startswith("#") or line.startswith("time"):
                continue
            rows.append([float(v) for v in line.split(",")])
    return rows


def quantized(rows, quantum, limit=None):
    out = []
    for t, x, y, z in rows:
        vals = []
        for v in (x, y, z):
            c = round(v / quantum) if quantum != HID_QUANTUM else round(v / 9.80665 * 1000)
            if limit is not None:
                c = max(-limit - 1, min(limit, c))
            vals.append(c * quantum)
        out.append([t] + vals)
    return out


def detect(shakectl, rows, directory, name):
    path = os.path.join(directory, name)
    with open(path, "w") as f:
        f.write("time,x,y,z\n")
        for r in rows:
            f.write("%.6f,%.9f,%.9f,%.9f\n" % tuple(r))
    out = subprocess.run([shakectl, "detect", path], capture_output=True, text=True, check=True).stdout
    return [json.loads(line) for line in out.splitlines() if line.strip()]


def label(event):
    if event.get("phase") == "cancelled":
        return "cancelled(%s)" % event.get("reason")
    return event.get("phase", "?")


def parse(log_path):
    scenarios = {}
    other = []
    with open(log_path, errors="replace") as f:
        for raw in f:
            line = raw.replace("\r", "").rstrip("\n")
            # (the first line after the firmware may carry its terminal escapes in front)
            at = line.find("@@ ")
            if at < 0:
                if line.strip():
                    other.append(line)
                continue
            line = line[at:]
            parts = line[3:].split(" ", 2)
            if len(parts) < 2:
                continue
            name, kind = parts[0], parts[1]
            rest = parts[2] if len(parts) > 2 else ""
            s = scenarios.setdefault(name, dict(events=[], feeder=[], log=[], info={}, threads=[], lines=[]))
            s["lines"].append(line)
            if kind == "event":
                try:
                    event = json.loads(rest)
                except ValueError:
                    s.setdefault("bad", []).append(rest)
                else:
                    if event.get("event") == "shake":  # a subscriber also gets hello and status lines
                        s["events"].append(event)
            elif kind == "feeder":
                s["feeder"].append(rest)
            elif kind == "sent":
                t, _, i = rest.partition(" ")
                s.setdefault("sent", []).append((float(t), int(i)))
            elif kind == "log":
                s["log"].append(rest)
            elif kind == "stamp":
                t, _, text = rest.partition(" ")
                try:
                    event = json.loads(text)
                    if event.get("event") == "shake":
                        s.setdefault("stamps", []).append((float(t), event))
                except ValueError:
                    pass
            elif kind == "keys":
                s.setdefault("keys", []).append(rest)
            elif kind == "listen":
                try:
                    event = json.loads(rest)
                except ValueError:
                    continue
                if event.get("event") == "shake":
                    s.setdefault("listen", []).append(event)
            elif kind == "shakectl":
                s.setdefault("shakectl", []).append(rest)
            elif kind == "threads":
                s.setdefault("relay_threads", []).append(rest)
            elif kind.startswith("monitor-") or kind in ("dbus", "observer", "wev", "upgrade", "listen-times"):
                s.setdefault(kind, []).append(rest)
            elif kind == "info":
                if rest.startswith("thread "):
                    s["threads"].append(rest[7:])
                else:
                    for item in rest.split():
                        key, _, value = item.partition("=")
                        s["info"][key] = value
            elif kind in ("begin", "end"):
                s[kind] = float(rest.split()[0]) if rest else None
    return scenarios, other


def feeder_times(s, word):
    times = []
    for line in s["feeder"]:
        m = re.match(r"(?:uhid|i2c)-accel: %s ([0-9.]+)" % word, line)
        if m:
            times.append(float(m.group(1)))
    return times


def compare(vm, expected, time_tol, peak_tol, problems, axis=True):
    """vm: events already on the trace's clock. Returns (max dt, max dpeak)."""
    got, want = [label(e) for e in vm], [label(e) for e in expected]
    if got != want:
        problems.append("events %s, expected %s" % (got, want))
        return None, None
    max_dt = max_dp = 0.0
    for v, e in zip(vm, expected):
        tol = time_tol if e.get("reason") != "interrupted" else max(time_tol, 0.25)
        dt = abs(v["time"] - e["time"])
        max_dt = max(max_dt, dt)
        if dt > tol:
            problems.append("%s at %.3f s, expected %.3f s (more than %.0f ms apart)" % (label(e), v["time"], e["time"], tol * 1000))
        if e.get("phase") == "ended":
            dp = abs(v["peak"] - e["peak"])
            max_dp = max(max_dp, dp)
            if dp > peak_tol(e["peak"]):
                problems.append("peak %.2f, expected %.2f" % (v["peak"], e["peak"]))
            if axis and v.get("axis") != e.get("axis"):
                problems.append("axis %s, expected %s" % (v.get("axis"), e.get("axis")))
    return max_dt, max_dp


def orientations(lines):
    """The orientations monitor-sensor printed, in order, repeats folded."""
    found = []
    for line in lines:
        m = ORIENTATION.search(line)
        if m:
            value = m.group(1) or m.group(2)
            if value != "undefined" and (not found or found[-1] != value):
                found.append(value)
    return found


def differences(info, expected):
    """What a scenario's report (`info`) says otherwise than `expected` (info key: value), one problem a key."""
    return ["%s is %s, expected %s" % (key, info.get(key), value)
            for key, value in expected.items() if info.get(key) != value]


def expect_info(s, expected):
    """The problems every scenario with a table of expected report values starts from: it did not finish, or
    its report says otherwise than `expected`."""
    problems = [] if "end" in s else ["the scenario did not finish"]
    return problems + differences(s["info"], expected)


def check_relay(s, spec, args):
    problems, notes = expect_info(s, RELAY_EXPECTED), []
    info = s["info"]
    if info.get("relay_input", "none") == "none":
        problems.append("no relay input device appeared")
    # The IIO device has no type left: an accelerometer iio-sensor-proxy has is the relay's input device.
    if not any("Has accelerometer" in line for line in s.get("monitor-relay", [])):
        problems.append("iio-sensor-proxy did not take the relay's input device")
    for key in ("feeder_timeout_relay", "feeder_timeout_direct", "modprobe_failed"):
        if key in info:
            problems.append(key.replace("_", " "))
    # The turns of the trace; during the shakes that follow, the orientation flickers with the polling's timing.
    relay = orientations(s.get("monitor-relay", []))[:len(TURNS)]
    direct = orientations(s.get("monitor-direct", []))[:len(TURNS)]
    if direct != TURNS:
        problems.append("monitor-sensor reading the IIO device saw %s, expected %s" % (direct, TURNS))
    if relay != TURNS:
        problems.append("monitor-sensor saw %s with the relay, %s without" % (relay, direct))
    ended = sum(1 for e in s["events"] if e.get("phase") == "ended")
    # The subscriber's events must be the detector's on the rows as the feeder sent them (from the hold before the
    # shakes on): the three shakes, unless the loaded guest stalled the feeder within one (the rows it missed then
    # come in a burst: another input, printed as a warning), in which case the detector's events on that input.
    if s.get("sent"):
        q = quantized(read_trace(os.path.join(args.traces, spec["trace"])), HID_QUANTUM)
        delivered = [[t] + q[i][1:] for t, i in s["sent"]]
        interval = (q[-1][0] - q[0][0]) / (len(q) - 1)
        as_delivered = detect(args.shakectl, delivered, args.delivered, "relay.csv")
        before = len(problems)
        # Phases and times as the busybox scenarios hold them; peaks within 5 %: the capture's account to the
        # quantum is theirs (`shakes3`, `irregular`), and here the loaded guest's kernel merged or dropped a report
        # within a shake now and then (a peak of 30.08 where the rows as sent give 30.26, at load 30-52).
        max_dt, _ = compare(s["events"], as_delivered, 2 * interval + 0.0005, lambda p: HID_QUANTUM + 0.05 * p,
                            problems)
        if len(problems) > before:
            problems.insert(before, "the subscriber's events against the samples as delivered (%s):"
                            % os.path.join(args.delivered, "relay.csv"))
        elif max_dt is not None:
            notes.append("the subscriber's events as delivered: %d, max dt %.1f ms" % (len(s["events"]), max_dt * 1000))
        delivered_ended = sum(1 for e in as_delivered if e.get("phase") == "ended")
        if delivered_ended != spec["ended"]:
            notes.append("WARNING: the rows as delivered hold %d shakes, not %d (the feeder stalled within one: its "
                         "rows more than 0.2 s apart below): %s" % (delivered_ended, spec["ended"],
                                                                      [label(e) for e in as_delivered]))
    elif ended != spec["ended"]:
        problems.append("%d shakes to shakectl listen with the relay, expected %d" % (ended, spec["ended"]))
    if not any("ADVICE=" in line and "iio-sensor-proxy" in line for line in s["log"]):
        problems.append("shaked's log does not name iio-sensor-proxy as holding the busy sensor")
    costs = {}
    for phase in ("cost", "unclaimed"):
        try:
            seconds = float(info[phase + "_seconds"])
            costs[phase] = (int(info[phase + "_wakeups"]) / seconds,
                            100.0 * int(info[phase + "_ticks"]) / int(info["hz"]) / seconds,
                            int(info[phase + "_switches"]) / seconds)
        except (KeyError, ValueError, ZeroDivisionError):
            problems.append("no %s measurement" % phase)
    if "cost" in costs:
        notes.append("relay alone, claimed: %.2f wake-ups/s (limit %.1f), CPU %.2f %%, %.2f context switches/s "
                     "(sensor at %s Hz; %s Hz with a subscriber)"
                     % ((costs["cost"][0], RELAY_CLAIMED_LIMIT) + costs["cost"][1:]
                        + (info.get("relay_rate"), info.get("subscribed_rate"))))
        if costs["cost"][0] > RELAY_CLAIMED_LIMIT:
            problems.append("relay alone, claimed: %.2f wake-ups a second, more than %.1f"
                            % (costs["cost"][0], RELAY_CLAIMED_LIMIT))
    # Each thread's wake-ups and context switches over the two measurements, and what it was blocked in halfway.
    for line in s.get("relay_threads", []):
        fields = line.split()
        if len(fields) >= 5 and fields[0] in costs:
            phase, _, thread, switched, woke = fields[:5]
            seconds = float(info[phase + "_seconds"])
            notes.append("  %s %-16s %5.2f wake-ups/s, %5.2f switches/s, in %s" % (
                "claimed" if phase == "cost" else phase, thread, int(woke) / seconds, int(switched) / seconds,
                blocked_in(fields[5:])))
    # Nobody claims the accelerometer from iio-sensor-proxy: shaked turns the sensor off, and claimed again on.
    demand = " ".join(s.get("log demand", [])) + " ".join(line for line in s["log"] if line.startswith("demand "))
    if "nothing has read the relay" not in demand:
        problems.append("shaked did not see that nothing reads the relay once monitor-sensor left")
    if "the relay is read again" not in demand:
        problems.append("shaked did not see the relay read again once monitor-sensor claimed it")
    if "unclaimed" in costs:
        notes.append("relay alone, unclaimed (sensor off): %.2f wake-ups/s (limit %.2f), CPU %.2f %%, %.2f context "
                     "switches/s" % ((costs["unclaimed"][0], RELAY_UNCLAIMED_LIMIT) + costs["unclaimed"][1:]))
        if costs["unclaimed"][0] > RELAY_UNCLAIMED_LIMIT:
            problems.append("relay alone, unclaimed: %.2f wake-ups a second, more than %.2f"
                            % (costs["unclaimed"][0], RELAY_UNCLAIMED_LIMIT))
    if not any("Has accelerometer" in line for line in s.get("monitor-reclaim", [])):
        problems.append("monitor-sensor claiming again found no accelerometer")
    # How long after the feeder sent the end of each turn monitor-sensor printed the new orientation.
    delays = orientation_delays(s.get("monitor-times", []), info.get("turn_ends", ""))
    if delays:
        notes.append("orientation to monitor-sensor after each turn's end: %s s (the worst %.2f: goal %.1f, limit "
                     "%.1f)" % (", ".join("%.2f" % d for d in delays), max(delays), RELAY_TURN_GOAL,
                                RELAY_TURN_LIMIT))
        if len(delays) < len(TURNS) - 1:
            problems.append("monitor-sensor named %d of the %d turns" % (len(delays), len(TURNS) - 1))
        if max(delays) > RELAY_TURN_LIMIT:
            problems.append("a turn reached monitor-sensor %.2f s after its end, more than %.1f"
                            % (max(delays), RELAY_TURN_LIMIT))
    else:
        problems.append("no orientation delay measured")
    notes.append("orientations %s with and without the relay, %d shakes" % (" > ".join(relay), ended))
    # When the subscriber connected and heard each event, seconds into the trace (the shakes begin 28.5 s in; the
    # time the feeder held them at 26 s taken out).
    start = next((float(line.split()[-1]) for line in s["feeder"] if line.startswith("uhid-accel: start ")), None)
    held_at, held_for = next(((float(line.split()[2]), float(line.split()[3])) for line in s["feeder"]
                              if line.startswith("uhid-accel: held ")), (float("inf"), 0.0))
    heard = []
    for line in s.get("listen-times", []):
        stamp, _, rest = line.partition(" ")
        what = "connected" if "connected" in rest else None
        if rest.startswith("{"):
            try:
                event = json.loads(rest)
                what = event.get("phase", "?") + ("(%s)" % event["reason"] if "reason" in event else "")
            except ValueError:
                pass
        if what and start is not None:
            at = float(stamp) - start
            if float(stamp) >= held_at:
                at -= held_for
            elif at > 26 and held_for > 0:
                at = 26  # during the hold
            heard.append("%s %.2f" % (what, at))
    if heard:
        notes.append("the subscriber, seconds into the trace: %s (the shakes held %.2f s)" % (", ".join(heard),
                                                                                        held_for))
    # While the subscriber listened: how long the shakes waited for it, and where the feeder stalled.
    notes.append("the subscriber ready %s s after it started (%s); the feeder's rows more than 0.2 s apart while "
                 "it listened: %s (row:seconds; the widest %s s)" % (
                     info.get("subscriber_wait", "?"), info.get("subscriber_ready", "?"),
                     info.get("subscribed_feeder_stalls", "?"), info.get("subscribed_feeder_widest", "?")))
    if info.get("subscriber_ready") == "no":
        problems.append("the subscriber was not connected and captured for within 30 s")
    return problems, notes


# The relay scenario's limits. The goals: at most 2 wake-ups a second (voluntary context switches, all threads)
# while a client claims the accelerometer, 0.2 while nobody does (the sensor off), orientation to monitor-sensor
# within 1 s of a turn. Under emulation (TCG, on a loaded host) the guest runs several times slower than real
# time and its timers come late, so each limit has a margin: 25 % on the claimed rate (a read that slips past
# the next one's time merges or splits a wake-up; a second of work seen as more), one wake-up in the 20 s on
# the unclaimed one (the watchdog's ping every 10 s gives 2, a third falls in the window when its timer and the
# window's ends shift), and 0.5 s on the delay: iio-sensor-proxy's 700 ms poll came 0.5 to 1.27 s apart in the
# VM, and the feeder, monitor-sensor (its D-Bus signal took up to 0.5 s under load) and its stamping reader each
# add tens of milliseconds. The delay's limit is not the goal's but the design's, for every turn: the relay
# reads 80 ms before each of iio-sensor-proxy's polls (PollPhase), so a turn's deciding sample (0.2 to 0.4 s
# before its end, the relay sampling at 5 Hz) reaches it at the next poll; when a poll came before its read (seen
# from the opens counted), the read after is made at the next open, and the sample reaches it at the poll after:
# within two polls, 80 ms and the read's own time of the deciding sample, 1.3 s after the turn's end. Three runs
# of the code before it on a host at load 9-33 gave 0.98, 1.16 and 1.33 s at worst (2.09 s once, with the
# subscriber's capture starting during a turn); see docs/vm-tests.md. The goal of 1 s is printed beside it.
RELAY_CLAIMED_LIMIT = 2.5
RELAY_UNCLAIMED_LIMIT = 0.2 + 1 / 20
RELAY_TURN_GOAL = 1.0
RELAY_TURN_LIMIT = 1.3 + 0.5


def blocked_in(syscall):
    """What /proc/PID/task/TID/syscall's fields (number, then arguments in hex) say a thread waits in, with the
    timeout of poll(2) and epoll_wait(2)."""
    names = {"7": "poll", "202": "futex", "232": "epoll_wait", "281": "epoll_pwait", "130": "rt_sigsuspend"}
    if not syscall:
        return "?"
    name = names.get(syscall[0], "syscall " + syscall[0])
    argument = {"7": 3, "232": 4, "281": 4}.get(syscall[0])
    if argument is not None and len(syscall) > argument:
        try:
            milliseconds = int(syscall[argument], 16) & 0xffffffff
        except ValueError:
            return name
        return name + (" without a timeout" if milliseconds >= 0x80000000 else " for %d ms" % milliseconds)
    return name


def orientation_delays(lines, turn_ends):
    """Seconds from the end of each turn (the feeder's send times, CLOCK_MONOTONIC) to the first line of
    monitor-sensor (stamped with the same clock) that names the turn's new orientation."""
    try:
        ends = [float(t) for t in turn_ends.split(",") if t]
    except ValueError:
        return []
    stamped = []
    for line in lines:
        t, _, rest = line.partition(" ")
        m = ORIENTATION.search(rest)
        if m:
            try:
                stamped.append((float(t), m.group(1) or m.group(2)))
            except ValueError:
                pass
    delays = []
    for end, target in zip(ends, TURNS[1:]):
        # The first report of the new orientation after the turn began (a second before its end).
        hits = [t for t, value in stamped if value == target and t > end - 1.0]
        if hits:
            delays.append(hits[0] - end)
    return delays


def check_package(s, spec):
    problems, notes = expect_info(s, PACKAGE_EXPECTED), []
    info = s["info"]
    if info.get("after_iio_type", "none") == "none":
        problems.append("the IIO device has no iio-sensor-proxy type after the purge")
    if "feeder_timeout" in info:
        problems.append("the hot-plugged sensor's trace was not played")
    relay = orientations(s.get("monitor-relay", []))
    # The first sensor lay display up: its orientation may be the first monitor-sensor prints.
    if relay[:1] == ["normal"] and relay[1:2] == TURNS[:1]:
        relay = relay[1:]
    relay = relay[:len(TURNS)]
    if relay != TURNS:
        problems.append("monitor-sensor saw %s through the relay, expected %s" % (relay, TURNS))
    ended = sum(1 for e in s["events"] if e.get("phase") == "ended")
    if ended != spec["ended"]:
        problems.append("%d shakes to shakectl listen, expected %d" % (ended, spec["ended"]))
    notes.append("dpkg -i took %s s; orientations %s through the relay, %d shakes" % (
        info.get("install_seconds"), " > ".join(relay), ended))
    for key in ("relay_gone_timeout", "dbus_feeder_timeout", "key_feeder_timeout", "upgrade_feeder_timeout",
                "wev_timeout"):
        if key in info:
            problems.append(key.replace("_", " "))
    # Every Shake the root observer saw came from the name's owner.
    foreign = [line for line in s.get("observer", []) if line.startswith("sender=")
               and line.split()[0][7:] != line.split()[1][6:]]
    if foreign:
        problems.append("Shake signals from another sender than the daemon: %s" % foreign[:3])
    if info.get("observed_ended", "0") == "0":
        problems.append("the observer heard no Shake at all (it could not have heard a forged one either)")
    notes.append("D-Bus example: %s events in %s s; the bus logged %s rejected Shake(s) from the user" % (
        info.get("dbus_events"), info.get("dbus_seconds"), info.get("dbus_rejected")))
    if info.get("sway") != "missing":
        problems += differences(info, PACKAGE_KEYS_EXPECTED)
        notes.append("Wayland: %s chords typed, %s Ctrl+Z received in %s s" % (
            info.get("key_pressed"), info.get("wev_z_down"), info.get("key_seconds")))
    if not info.get("upgrade_version", "").endswith("+vmupgrade1") or info.get("upgrade_version") != info.get("new_version"):
        problems.append("the upgrade installed %s, expected %s" % (info.get("upgrade_version"), info.get("new_version")))
    problems += check_upgrade_events(s.get("upgrade", []), info)
    notes.append("upgrade: dpkg -i %s s" % info.get("upgrade_seconds"))
    return problems, notes


def check_upgrade_events(lines, info):
    """The listener's events across the upgrade: three shakes of the old daemon's run, then three of the new
    one's, each run's seq numbers consecutive (nothing lost or repeated), the new run's from 1."""
    events = []
    for line in lines:
        try:
            event = json.loads(line)
        except ValueError:
            return ["unreadable event line from the upgrade's listener: %s" % line]
        if event.get("event") == "shake":
            events.append(event)
    runs = []
    for event in events:
        if not runs or event["seq"] <= runs[-1][-1]["seq"]:
            runs.append([])
        runs[-1].append(event)
    problems = []
    if len(runs) != 2:
        problems.append("the upgrade's listener got %d runs of events (%s), expected the old daemon's and the new one's"
                        % (len(runs), [[e["seq"] for e in run] for run in runs]))
    for run in runs:
        seqs = [e["seq"] for e in run]
        if seqs != list(range(seqs[0], seqs[0] + len(seqs))):
            problems.append("seq numbers not consecutive in a run: %s (events lost)" % seqs)
    if len(runs) == 2 and runs[1][0]["seq"] != 1:
        problems.append("the new daemon's events from seq %d: its first were lost" % runs[1][0]["seq"])
    for i, name in enumerate(("before", "after")):
        ended = sum(1 for e in runs[i] if e.get("phase") == "ended") if i < len(runs) else 0
        if ended != 3:
            problems.append("%d shakes to the listener %s the upgrade, expected 3" % (ended, name))
    return problems


def check(name, s, spec, args, tmp):
    if spec.get("relay"):
        return check_relay(s, spec, args)
    if spec.get("package"):
        return check_package(s, spec)
    problems, notes = [], []
    if "end" not in s:
        problems.append("the scenario did not finish")
    if s.get("bad"):
        problems.append("unreadable event lines: %s" % s["bad"][:3])
    if s["info"].get("daemon_exit") not in ("0", None):
        problems.append("the daemon exited with status %s" % s["info"].get("daemon_exit"))
    for key in ("no_device", "feeder_timeout", "capture_timeout", "listen_timeout", "modprobe_failed", "scale_failed"):
        if key in s["info"]:
            problems.append(key.replace("_", " "))
    raw = [line for line in s["log"] if RAW_LIBIIO.search(line)]
    if raw:
        problems.append("libiio wrote to stderr behind the logger: %s" % raw[:3])

    if spec.get("keys"):
        return check_keys(s, spec, problems, notes)
    if spec.get("link"):
        check_remote(s, spec, problems, notes)
        check_link(s, spec, args, tmp, problems, notes)
        return problems, notes
    if spec.get("polled_suspend"):
        check_polled_suspend(s, problems, notes)
        return problems, notes
    if spec.get("systemd_suspend"):
        check_systemd_suspend(s, problems, notes)
        return problems, notes

    rows = read_trace(os.path.join(args.traces, spec["trace"]))
    t0 = rows[0][0]
    kxcjk = spec.get("device") == "kxcjk"
    quantum = HID_QUANTUM
    if kxcjk:
        # The range the daemon set while capturing, and the boot range put back after it.
        info = s["info"]
        quantum = float(info.get("scale_capture") or KXCJK_QUANTUM)
        if info.get("scale_capture") != "0.019163":
            problems.append("captured at scale %s, expected 0.019163 (±4 g)" % info.get("scale_capture"))
        if info.get("scale_boot") != "0.009582":
            problems.append("the guest left the chip at scale %s, not ±2 g" % info.get("scale_boot"))
        if info.get("scale_after") != info.get("scale_boot"):
            problems.append("the scale after capture is %s, not the boot scale %s" % (
                info.get("scale_after"), info.get("scale_boot")))
        notes.append("scale %s at boot, %s while capturing, %s after" % (
            info.get("scale_boot"), info.get("scale_capture"), info.get("scale_after")))
    q = quantized(rows, quantum, 2047 if kxcjk else None)
    interval = (rows[-1][0] - rows[0][0]) / (len(rows) - 1)
    starts = feeder_times(s, "start")
    if not starts:
        problems.append("the feeder never started playing")
        return problems, notes

    if "vanish_at" in spec:
        cut = [r for r in q if r[0] - t0 < spec["vanish_at"]]
        expected = detect(args.shakectl, cut, tmp, name + "-1.csv") + detect(args.shakectl, q, tmp, name + "-2.csv")
        vanished = feeder_times(s, "vanished")
        if len(starts) < 2 or not vanished:
            problems.append("the sensor did not vanish and return (starts %s, vanished %s)" % (starts, vanished))
            return problems, notes

        def on_trace_clock(events):
            return [dict(e, time=e["time"] - (starts[0] if e["time"] < starts[1] else starts[1]) + t0) for e in events]
    else:
        expected = detect(args.shakectl, q, tmp, name + ".csv")

        def on_trace_clock(events):
            return [dict(e, time=e["time"] - starts[0] + t0) for e in events]
    vm = on_trace_clock(s["events"])

    lateness = 0.0
    # Whether the samples as delivered, given to `shakectl detect`, already give other events than the trace as
    # recorded: the guest's timing (rows sent a few milliseconds early or late) made the input another one.
    input_differs = None
    path = os.path.join(args.delivered, name + ".csv")
    if s.get("sent"):
        delivered = [[t] + q[i][1:] for t, i in s["sent"]]
        as_delivered = detect(args.shakectl, delivered, args.delivered, name + ".csv")
        before = len(problems)
        # Peaks within the quantum and the JSON's rounding, plus 0.5%: one report the kernel merges or drops under
        # the guest's load moves a peak while phases and times still agree (the delivered rows of a systemd run,
        # one row during a shake left out at a time: peaks from 28.46 to 28.60 where all rows give 28.52; the
        # daemon's was 28.58, its times equal to the millisecond).
        # Times within two rows: the same report merged or dropped moves the sample that ends a shake's quiet
        # time by a row, and rows leave the feeder with the guest's jitter (a systemd run: `ended` 13 ms after the
        # rows as sent, at 100 Hz; a wrong clock is off by seconds).
        max_dt, max_dp = compare(
            s["events"], as_delivered, 2 * interval + 0.0005, lambda p: quantum + 0.011 + 0.005 * p, problems)
        if len(problems) > before:
            problems.insert(before, "against the samples as delivered (%s):" % path)
        elif max_dt is not None:
            notes.append("as delivered: %d events, max dt %.1f ms, max dpeak %.3f" % (len(vm), max_dt * 1000, max_dp))
        # How late the first play was delivered against the trace's own times.
        # (each row's first sending, in the first play: not the repeats, nor the last row held after the trace)
        first, seen = [], set()
        for t, i in s["sent"]:
            if (len(starts) > 1 and t >= starts[1]) or i in seen:
                continue
            seen.add(i)
            first.append((t, i))
        lateness = max((t - (starts[0] + rows[i][0] - t0) for t, i in first), default=0.0)
        if "vanish_at" not in spec and not spec.get("irregular") and not spec.get("suspend"):
            input_differs = []
            compare(on_trace_clock(as_delivered), expected, 0.1, lambda p: 0.1 * p, input_differs, axis=False)
    if spec.get("suspend"):
        # The trace as recorded is not the input: the feeder held it while the guest slept.
        check_suspend(s, problems, notes)
    elif spec.get("irregular"):
        got = [label(e) for e in s["events"]]
        notes.append("%d shakes" % got.count("ended"))
        if got.count("ended") != spec["ended"] or any(g.startswith("cancelled") for g in got):
            # The as-delivered comparison above holds the capture to account; what remains is the detector's
            # tolerance of these times (jitter, repeats, skips and the guest's own bursts), which must lose nothing.
            problems.append("the detector gave %s for irregular sampling (the samples: %s)" % (got, path))
    else:
        peak_tol = (lambda p: 0.05 * p + quantum) if kxcjk else (lambda p: 0.1 * p)
        mismatches = []
        max_dt, max_dp = compare(vm, expected, 0.1, peak_tol, mismatches, axis=kxcjk)
        if mismatches and lateness > LATE_LIMIT:
            # The guest delivered the trace late (emulation): the input differed from the file, and the check as
            # delivered above already holds the daemon to account for what it got.
            notes.append("WARNING: differs from the trace as recorded, delivered up to %.0f ms late: %s"
                         % (lateness * 1000, "; ".join(mismatches)))
        elif mismatches and input_differs:
            # The rows as sent were on time within the limit, yet the detector alone, given them, already
            # differs from the trace as recorded, as the daemon did: the check as delivered above holds the daemon
            # to account; what remains is the detector's sensitivity to a few milliseconds of delivery jitter.
            notes.append("WARNING: differs from the trace as recorded (%s), as `shakectl detect` does on the rows as "
                         "delivered (%s): the detector is sensitive to the guest's delivery jitter"
                         % ("; ".join(mismatches), "; ".join(input_differs)))
        elif mismatches:
            problems.append("against the trace as recorded: " + "; ".join(mismatches))
        elif max_dt is not None:
            notes.append("as recorded: max dt %.0f ms, max dpeak %.2f" % (max_dt * 1000, max_dp))
    if "ended" in spec and not spec.get("irregular"):
        n = sum(1 for e in s["events"] if e.get("phase") == "ended")
        if n != spec["ended"]:
            problems.append("%d shakes, expected %d" % (n, spec["ended"]))
    if spec.get("waited") and not any(re.search("waiting for (a sensor|one) to appear", line) for line in s["log"]):
        problems.append("the daemon did not report waiting for a sensor")
    if spec.get("mapped"):
        if s["info"].get("clock_writable") != "no":
            problems.append("the unprivileged daemon could write current_timestamp_clock (%s)" % s["info"].get("clock_writable"))
        if not any("moved onto the monotonic clock" in line for line in s["log"]):
            problems.append("the daemon did not say it maps the device's realtime timestamps")
        notes.append("realtime stamps mapped onto the monotonic clock")
    if spec.get("systemd"):
        info = s["info"]
        if info.get("service_before_sensor") == "active":
            problems.append("shaked.service ran before any sensor appeared or anyone connected")
        problems += differences(info, SYSTEMD_EXPECTED)
        ended = sum(1 for e in s["events"] if e.get("phase") == "ended")
        if info.get("journal_ended") != str(ended):
            problems.append("journalctl -u shaked PHASE=ended found %s events, the subscriber got %d"
                            % (info.get("journal_ended"), ended))
        notes.append("udev started the service, %d shakes to shakectl listen and in the journal, reload kept the "
                     "subscriber" % ended)
    if spec.get("remote"):
        check_remote(s, spec, problems, notes)
    if spec.get("wakeups"):
        info = s["info"]
        try:
            per_second = int(info["ctxsw"]) / float(info["seconds"])
        except (KeyError, ValueError):
            problems.append("no wake-up measurement")
        else:
            notes.append("wake-ups %.1f/s, watermark %s, length %s, clock %s" % (per_second, info.get("watermark"), info.get("length"), info.get("clock")))
            if info.get("watermark") != "20":
                problems.append("buffer watermark %s, expected 20 (100 Hz / 5 wake-ups per second)" % info.get("watermark"))
            if per_second > 2 * 5 or per_second < 2:
                problems.append("%.1f wake-ups per second, expected about 5 (rate / watermark): 2 to 10" % per_second)
            if info.get("clock") != "monotonic":
                problems.append("current_timestamp_clock is %s, expected monotonic" % info.get("clock"))
    try:
        info = s["info"]
        life = float(info["daemon_seconds"])
        notes.append("the daemon over its %.1f s: %.1f wake-ups/s, CPU %.1f %%" % (
            life, int(info["daemon_wakeups"]) / life, int(info["daemon_ticks"]) / life))
    except (KeyError, ValueError, ZeroDivisionError):
        pass
    delays = event_delays(s)
    if delays:
        notes.append(delay_summary(delays))
    return problems, notes


# The suspend scenario: a sleep before the first of three shakes, and one 0.3 s before the end of the second.
SUSPEND_EXPECTED = ["began", "ended", "began", "cancelled(interrupted)", "began", "ended"]


def check_sleeps(info, problems, notes, minimum=1.0):
    """The two suspends' figures (guest-init.sh's suspend_guest): each must have slept `minimum` seconds or more."""
    check_sleeps_named(info, ("idle", "shaking"), problems, notes, minimum)


def check_sleeps_named(info, sleeps, problems, notes, minimum=1.0):
    for sleep in sleeps:
        if "suspend_failed_" + sleep in info:
            problems.append("the %s suspend failed" % sleep)
        try:
            boottime, monotonic = (float(v) for v in info["slept_" + sleep].split(":"))
        except (KeyError, ValueError):
            problems.append("no figures for the %s suspend" % sleep)
            continue
        # (the host wakes the guest 2 s after QEMU says it is suspended; the kernel's clocks see 1.5 s or more
        # after the HID sensor's 15 s way down, 0.9 s or more after a short one)
        if boottime - monotonic < minimum:
            problems.append("the %s suspend did not sleep (%.1f s on the boot-time clock, %.1f s monotonic)"
                            % (sleep, boottime, monotonic))
        notes.append("%s sleep %.1f s (%.1f s of it on the monotonic clock)" % (sleep, boottime, monotonic))


def check_suspend(s, problems, notes):
    """Two suspends to RAM under the daemon (guest-init.sh's suspend_scenario): the shake the second one cut is
    cancelled `interrupted` rather than ended across the sleep, no `began` comes from the sleep, capture goes on
    buffered without starting again, and the subscriber gets every event the daemon printed."""
    info = s["info"]
    got = [label(e) for e in s["events"]]
    if got != SUSPEND_EXPECTED:
        problems.append("events %s, expected %s" % (got, SUSPEND_EXPECTED))
    check_sleeps(info, problems, notes)
    # The cut shake ends at the last scan before the second sleep, not after it: the feeder's stall (the row due
    # when the guest froze) began at MONO - GAP of its "resumed" line.
    stalls = []
    for line in s["feeder"]:
        m = re.match(r"uhid-accel: resumed ([0-9.]+) ([0-9.]+)", line)
        if m and float(m.group(2)) > 1:
            stalls.append(float(m.group(1)) - float(m.group(2)))
    cut = [e for e in s["events"] if label(e) == "cancelled(interrupted)"]
    if len(stalls) == 2 and cut and cut[0]["time"] > stalls[1] + 0.05:
        problems.append("the cut shake was cancelled at %.3f s, after the guest froze at %.3f s"
                        % (cut[0]["time"], stalls[1]))
    capturing = [line for line in s["log"] if "capturing from the sensor" in line]
    if len(capturing) != 1 or "buffered" not in capturing[0]:
        problems.append("capture started %d times (expected once, buffered): %s" % (len(capturing), capturing))
    heard = [(label(e), round(e.get("time", 0), 3)) for e in s.get("listen", [])]
    printed = [(label(e), round(e.get("time", 0), 3)) for e in s["events"]]
    if heard != printed:
        problems.append("the subscriber got %s, the daemon printed %s" % (heard, printed))
    jumps = sum(1 for line in s["log"] if "[IIOSensor] the timestamps jumped ahead" in line)
    notes.append("%d events to the subscriber, %d timestamp jumps logged" % (len(heard), jumps))


def bus_shakes(lines):
    """The Shake signals among `busctl monitor --json=short` lines, as events like the socket's."""
    events = []
    for line in lines:
        try:
            message = json.loads(line)
        except ValueError:
            continue
        if message.get("type") != "signal" or message.get("member") != "Shake":
            continue
        data = message.get("payload", {}).get("data", [])
        if len(data) < 8:
            continue
        event = dict(phase=data[0], seq=data[1], time=data[2])
        if data[0] == "cancelled":
            event["reason"] = data[7]
        events.append(event)
    return events


def check_systemd_suspend(s, problems, notes):
    """The systemd-suspend scenario (systemd-suspend-test.sh): a suspend to RAM mid second
    of three shakes under shaked.service (Type=notify, WatchdogSec=): the service is neither restarted nor
    re-entered (same main process, NRestarts and ActiveEnterTimestampMonotonic unchanged, no watchdog timeout in
    the journal) half a WatchdogSec after the wake-up, the cut shake is cancelled `interrupted` and the later one
    found, for the socket's subscriber and the D-Bus one alike, and the bus never says the sensor is gone."""
    info = s["info"]
    check_sleeps_named(info, ("shaking",), problems, notes)
    if info.get("service_after") != "active":
        problems.append("shaked.service is %s after the sleep" % info.get("service_after"))
    for key in ("pid", "restarts", "entered"):
        if info.get(key + "_before") != info.get(key + "_after"):
            problems.append("%s changed across the sleep: %s -> %s"
                            % (key, info.get(key + "_before"), info.get(key + "_after")))
    if info.get("journal_watchdog") != "0":
        problems.append("the journal has %s watchdog timeouts" % info.get("journal_watchdog"))
    heard = [label(e) for e in s.get("listen", [])]
    if heard != SUSPEND_EXPECTED:
        problems.append("the socket's subscriber got %s, expected %s" % (heard, SUSPEND_EXPECTED))
    bus = bus_shakes(s.get("dbus", []))
    if [label(e) for e in bus] != heard:
        problems.append("the D-Bus subscriber got %s, the socket's %s" % ([label(e) for e in bus], heard))
    elif [e.get("seq") for e in bus] != [e.get("seq") for e in s.get("listen", [])]:
        problems.append("the D-Bus Shake signals' seq numbers differ from the socket's")
    # The sensor stays the one in use across the sleep: the bus never says there is none.
    for line in s.get("dbus", []):
        try:
            message = json.loads(line)
        except ValueError:
            continue
        if message.get("member") == "PropertiesChanged":
            changed = (message.get("payload", {}).get("data") or [None, {}])[1] or {}
            if changed.get("HasAccelerometer", {}).get("data") is False:
                problems.append("the bus said HasAccelerometer false (Sensor %r) while capture went on"
                                % changed.get("Sensor", {}).get("data"))
                break
    notes.append("service kept (pid %s, NRestarts %s, WatchdogUSec %s; last ping %s s before the sleep, %s s of "
                 "the watchdog left at the thaw), %d events to the socket and to D-Bus"
                 % (info.get("pid_after"), info.get("restarts_after"), info.get("watchdog_usec"),
                    info.get("ping_before_sleep"), info.get("watchdog_left"), len(bus)))


def check_polled_suspend(s, problems, notes):
    """The suspend-polled scenario: a kxcjk-1013 on i2c-stub, polled, across the two sleeps of the suspend
    scenario. What the sleeps decide must hold: no shake spans a sleep (its `began` before the feeder froze, its
    end after it), a shake cancelled `interrupted` is the one the second sleep cut, the daemon breaks the stream
    at each sleep itself (its log says the system slept: the monotonic clock alone, in which a short sleep can
    take less than the detector's largest gap, would not always tell), capture starts once, polled, and the
    subscriber gets every event. Whether each shake away from the sleeps is found is the polled path's, which
    the kxcjk scenario checks; a difference is noted."""
    info = s["info"]
    check_sleeps(info, problems, notes, minimum=0.5)
    events = s["events"]
    got = [label(e) for e in events]
    # (each sleep on the monotonic clock: from just before the guest wrote "mem" to just after it woke)
    sleeps = []
    for sleep in ("idle", "shaking"):
        try:
            sleeps.append(tuple(float(v) for v in info["asleep_" + sleep].split(":")))
        except (KeyError, ValueError):
            problems.append("no times for the %s sleep" % sleep)
    for event in events:
        began = event.get("began")
        if began is None:
            continue
        for frozen, resumed in sleeps:
            if began < frozen and event["time"] > resumed:
                problems.append("a shake spans a sleep: %s" % event)
        if label(event) == "cancelled(interrupted)" and len(sleeps) == 2 and not (
                sleeps[1][0] - 1.5 < began < sleeps[1][1] and sleeps[1][0] - 0.2 < event["time"] <= sleeps[1][1]):
            problems.append("the shake cancelled `interrupted` (%s) is not the one the second sleep (%.3f to %.3f s) "
                            "cut" % (event, sleeps[1][0], sleeps[1][1]))
    if got.count("began") > 3:
        problems.append("events %s: a `began` from a sleep" % got)
    if got != SUSPEND_EXPECTED:
        notes.append("WARNING: events %s, expected %s" % (got, SUSPEND_EXPECTED))
    capturing = [line for line in s["log"] if "capturing from the sensor" in line]
    if len(capturing) != 1 or "polled" not in capturing[0]:
        problems.append("capture started %d times (expected once, polled): %s" % (len(capturing), capturing))
    # (at least two: the kernel may add to the boot-time clock's lead in two steps, seen by two polls)
    slept = sum(1 for line in s["log"] if "the system slept; the sensor's stream starts again" in line)
    if slept < 2:
        problems.append("the daemon noticed %d sleeps, expected 2" % slept)
    heard = [(label(e), round(e.get("time", 0), 3)) for e in s.get("listen", [])]
    printed = [(label(e), round(e.get("time", 0), 3)) for e in events]
    if heard != printed:
        problems.append("the subscriber got %s, the daemon printed %s" % (heard, printed))
    notes.append("%d events to the subscriber, %d sleeps noticed" % (len(heard), slept))


def check_remote(s, spec, problems, notes):
    """The daemon on the host reading the guest's sensor through iiod: buffered, and what it cost."""
    info = s["info"]
    if "host_daemon" not in info:
        problems.append("the host's agent never started the daemon")
        return
    capturing = [line for line in s["log"] if "capturing from the sensor" in line]
    if not capturing or not all("buffered" in line for line in capturing):
        problems.append("not captured through the buffer: %s" % capturing[:3])
    if any("polling" in line for line in capturing):
        problems.append("the daemon polled: %s" % capturing[:3])
    figures = []
    if "cost_seconds" in info:
        seconds = float(info["cost_seconds"])
        figures.append("%.1f wake-ups/s, CPU %.2f %%" % (
            int(info["cost_switches"]) / seconds, 100.0 * int(info["cost_ticks"]) / int(info["hz"]) / seconds))
    if "delay_p50_ms" in info:
        figures.append("delay from the deciding scan to the event on the host p50 %s ms, max %s ms (%s events)"
                       % (info["delay_p50_ms"], info["delay_max_ms"], info["delay_n"]))
    if "vanish_at" in spec:
        figures.append("capture started %d times" % len(capturing))
    notes.append("through iiod: " + ", ".join(figures or ["no figures"]))


# The iiod-link scenario: the link fails for 3 s 0.7 s into the first of three shakes, and for 6 s while the device
# lies still between the second and the third.
LINK_EXPECTED = ["began", "cancelled(interrupted)", "began", "ended", "began", "ended"]
# Seconds from the link failing to the cut shake's cancellation on the host: libiio 0.24's remote read waits at
# most the context's timeout (2 s, iio_context_set_timeout) for iiod's next bytes, then fails; under emulation the
# read may be late by a read's worth.
LINK_CANCEL_LIMIT = 3.0
# Seconds from the link's return to capture through the buffer again: the retry's wait (1 s, doubling while the
# link stays down) and a context set up over the link.
LINK_RESUME_LIMIT = 8.0


def check_link(s, spec, args, tmp, problems, notes):
    """The network link under the host daemon failing twice while iiod runs (guest-init.sh's iiod_scenario with
    $link): the shake under way is cancelled `interrupted` within the read's timeout, the daemon captures through
    the buffer again once the link is back, and no shake after it is lost; it stops promptly."""
    info = s["info"]
    got = [label(e) for e in s["events"]]
    if got != LINK_EXPECTED:
        problems.append("events %s, expected %s" % (got, LINK_EXPECTED))
    figures = []
    for number in (0, 1):
        failed, capturing = info.get("link_off_%d_failed" % number), info.get("link_on_%d_capturing" % number)
        if failed in (None, "none"):
            problems.append("no failed read after the link went down (%d)" % number)
        if capturing in (None, "none"):
            problems.append("no capture after the link came back (%d)" % number)
        elif float(capturing) > LINK_RESUME_LIMIT:
            problems.append("capture came back %s s after the link, more than %.0f s" % (capturing, LINK_RESUME_LIMIT))
        figures.append("%s: read failed after %s s, captured again %s s after the link's return"
                       % ("shaking" if number == 0 else "idle", failed, capturing))
    cancel = info.get("link_off_0_event")
    if cancel in (None, "none") or float(cancel) > LINK_CANCEL_LIMIT:
        problems.append("the cut shake was cancelled %s s after the link failed (at most %.0f s)"
                        % (cancel, LINK_CANCEL_LIMIT))
    figures.insert(0, "shake cancelled %s s after the link failed" % cancel)
    stop = info.get("stop_seconds")
    if stop is None or float(stop) > 3:
        problems.append("the daemon took %s s to stop" % stop)
    # The shakes after the link's return, against the trace as recorded (on the feeder's clock).
    rows = read_trace(os.path.join(args.traces, spec["trace"]))
    starts = feeder_times(s, "start")
    expected = detect(args.shakectl, quantized(rows, HID_QUANTUM), tmp, "link.csv")
    if starts and len(s["events"]) >= 4 and len(expected) >= 4:
        vm = [dict(e, time=e["time"] - starts[0] + rows[0][0]) for e in s["events"][-4:]]
        mismatches = []
        compare(vm, expected[-4:], 0.1, lambda p: 0.1 * p, mismatches, axis=False)
        if mismatches:
            notes.append("WARNING: the shakes after the link's returns differ from the trace as recorded: "
                         + "; ".join(mismatches))
    notes.append("; ".join(figures))


def event_delays(s):
    """Seconds from the sample that decided each event (its time: the kernel's stamp when the report arrived, or
    the poll) to a reader of the daemon's output having it (stamp-lines, on the same clock), by phase."""
    delays = {}
    for read, event in s.get("stamps", []):
        try:
            delays.setdefault(event["phase"], []).append(read - float(event["time"]))
        except (KeyError, TypeError, ValueError):
            pass
    return delays


def percentile(values, fraction):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(fraction * (len(ordered) - 1))))]


def delay_summary(delays):
    """"event delay: ended p50 31 ms, p95 48 ms, max 52 ms (3); ...", every phase, then all together."""
    everything = [d for values in delays.values() for d in values]
    parts = []
    for phase, values in sorted(delays.items()) + [("all", everything)]:
        parts.append("%s p50 %.0f ms, p95 %.0f ms, max %.0f ms (%d)" % (
            phase, 1000 * percentile(values, 0.5), 1000 * percentile(values, 0.95), 1000 * max(values), len(values)))
    return "event delay: " + "; ".join(parts)


# What the daemon types for `shakectl key ctrl+z`, once a shake: KEY_LEFTCTRL down, KEY_Z down, KEY_Z up,
# KEY_LEFTCTRL up.
CTRL_Z = [(29, 1), (44, 1), (44, 0), (29, 0)]


def check_keys(s, spec, problems, notes):
    """The key events read back from the daemon's virtual keyboard's evdev node: one ctrl+z per shake the daemon
    ended, each one that shakectl was told of, and the daemon's log naming the user whose chord it pressed."""
    ended = [line for line in s["log"] if "shake ended" in line]
    presses = []
    for line in s.get("keys", []):
        words = line.split()
        if words and words[0] == "key" and len(words) >= 3:
            presses.append((int(words[1]), int(words[2])))
    if not any(line.startswith("open ") for line in s.get("keys", [])):
        problems.append("the reader never opened the keyboard's evdev node: %s" % s.get("keys", [])[:3])
    chords = len(presses) // 4
    if presses != CTRL_Z * chords:
        problems.append("the key events are not whole ctrl+z chords: %s" % presses[:12])
    # How many of the trace's shakes end depends on how late the emulated guest delivered them (the other
    # scenarios hold the detector to account); here what counts is one chord for each shake that ended.
    if not ended:
        problems.append("the daemon ended no shake")
    elif len(ended) != spec["ended"]:
        notes.append("WARNING: %d of %d shakes ended (samples delivered late under emulation)"
                     % (len(ended), spec["ended"]))
    if chords != len(ended):
        problems.append("%d ctrl+z chords read back for %d shakes" % (chords, len(ended)))
    told = [line for line in s.get("shakectl", []) if "pressed ctrl+z for event #" in line]
    if len(told) != chords:
        problems.append("shakectl was told of %d presses, %d chords read back: %s"
                        % (len(told), chords, s.get("shakectl", [])[-4:]))
    logged = [line for line in s["log"] if "pressed a subscriber's key chord" in line]
    if len(logged) != chords or not all("client_uid=0" in line for line in logged):
        problems.append("the daemon logged %d presses (with the uid 0), %d chords read back" % (len(logged), chords))
    notes.append("%d shakes, %d ctrl+z chords read back from the evdev node (%d key events)"
                 % (len(ended), chords, len(presses)))
    return problems, notes


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--log", required=True)
    parser.add_argument("--traces", required=True)
    parser.add_argument("--shakectl", required=True)
    parser.add_argument("--scenarios", required=True)
    parser.add_argument("--wall", type=float, default=0)
    parser.add_argument("--delivered", required=True, help="where to write the traces as delivered")
    parser.add_argument(
        "--failed",
        help="write the failed scenarios' names there, comma-separated, to boot again (none if one has no such name)")
    args = parser.parse_args()
    os.makedirs(args.delivered, exist_ok=True)
    scenarios, other = parse(args.log)
    names = [n for n in args.scenarios.split(",") if n]
    passed = failed = 0
    summary, failed_names = [], []
    with tempfile.TemporaryDirectory() as tmp:
        for name in names:
            s = scenarios.get(name)
            if name not in SCENARIOS:
                summary.append("vm: FAIL %s: no such scenario" % name)
                print(summary[-1])
                failed += 1
                continue
            if s is None:
                problems, notes = ["the guest never ran it"], []
            else:
                problems, notes = check(name, s, SCENARIOS[name], args, tmp)
            guest = ""
            if s and s.get("begin") is not None and s.get("end") is not None:
                guest = " (guest %.1f s)" % (s["end"] - s["begin"])
            if problems:
                failed += 1
                summary.append("vm: FAIL %s%s: %s" % (name, guest, "; ".join(problems)))
                print(summary[-1])
                failed_names.append(name)
                for line in (s["lines"] if s else other):
                    print("    " + line)
            else:
                passed += 1
                print("vm: ok   %s%s: %s" % (name, guest, "; ".join(notes)))
    if failed:
        print("vm: the rest of the guests' serial log (the kernel's and systemd's lines, the last 80):")
        for line in other[-80:]:
            print("    " + line)
        # Again, last, so that a log cut to its tail (a CI page) still names what failed and why.
        for line in summary:
            print(line if len(line) <= 600 else line[:600] + " …")
    if args.failed:
        # The names to boot again; none when a failure is not one another boot can mend (no such scenario), so that
        # passing on the second boot cannot hide it.
        with open(args.failed, "w") as out:
            out.write(",".join(failed_names) if len(failed_names) == failed else "")
    total = " in %.0f s" % args.wall if args.wall else ""
    print("vm: %d passed, %d failed%s" % (passed, failed, total))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
