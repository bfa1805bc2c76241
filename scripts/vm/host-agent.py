#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The host's side of the VM scenarios that need it (scripts/vm/guest-init.sh's suspend and iiod scenarios).

Follows the guest's serial console (a file QEMU writes) and acts on the guest's requests, lines of the form
"@@ NAME host ACTION [ARGUMENT]":
- wake-after S: waits until QEMU's monitor says the guest is suspended, then S seconds, then system_wakeup (again,
  5 s later, while the monitor still says suspended: up to five times);
- start-daemon: starts shaked on the host against the guest's iiod (--source iio:ip:127.0.0.1:PORT);
- measure S: the host daemon's context switches (all threads) and CPU time over S seconds;
- stop-daemon: stops it (SIGTERM);
- link off|on: takes the guest's network link down or up (the monitor's set_link on the user netdev: both its
  ends, the guest's NIC losing its carrier), the way a Wi-Fi link fails under a connected client while iiod keeps
  running; when the daemon stops, the times from each link change to its next event and capture line follow.
What it saw and did goes to --out as report lines ("@@ NAME event ...", "@@ NAME log ...", "@@ NAME info ..."),
which vm-test.sh adds to the serial log for scripts/vm/check.py. The guest's "@@ NAME clock MONO" lines (its
CLOCK_MONOTONIC) place the daemon's events, stamped on the guest's clock, on the host's: the smallest difference
between when a clock line was read here and what it says bounds the offset, and each event's delay is when the
daemon printed it here less its time moved onto this clock.
"""
import argparse
import json
import os
import signal
import socket
import statistics
import subprocess
import sys
import threading
import time

REQUEST = "@@ "


def is_shake(line):
    try:
        return json.loads(line).get("event") == "shake"
    except (ValueError, AttributeError):
        return False


class Agent:
    def __init__(self, args):
        self.args = args
        self.out = open(args.out, "a", buffering=1)
        self.lock = threading.Lock()
        self.daemons = {}  # scenario -> (process, [(host time, line)], stderr path)
        self.offsets = {}  # scenario -> smallest (host time - guest time)
        self.links = {}  # scenario -> [(host time, "off" or "on")]

    def report(self, name, kind, text):
        with self.lock:
            self.out.write("@@ %s %s %s\n" % (name, kind, text))

    def monitor(self, command):
        """Sends one command to QEMU's human monitor and returns what it printed."""
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
            s.settimeout(5)
            s.connect(self.args.monitor)
            s.sendall((command + "\n").encode())
            data = b""
            end = time.monotonic() + 2
            while time.monotonic() < end:
                try:
                    chunk = s.recv(4096)
                except socket.timeout:
                    break
                if not chunk:
                    break
                data += chunk
                if data.count(b"(qemu)") >= 2:
                    break
            return data.decode(errors="replace")

    def wake_after(self, name, seconds):
        started = time.monotonic()
        while time.monotonic() - started < 120:
            try:
                if "suspended" in self.monitor("info status"):
                    break
            except OSError:
                pass
            time.sleep(0.1)
        else:
            self.report(name, "info", "host_never_suspended=1")
            return
        self.report(name, "info", "host_saw_suspended=%.1f" % (time.monotonic() - started))
        time.sleep(seconds)
        # A wake-up the guest did not take (it stayed suspended, and a CI run waited out the 900 s power-off limit)
        # is sent again, up to five times, 5 s apart; the report says how many it took, or that none did.
        for attempt in range(1, 6):
            self.monitor("system_wakeup")
            waited = time.monotonic()
            while time.monotonic() - waited < 5:
                try:
                    if "suspended" not in self.monitor("info status"):
                        if attempt > 1:
                            self.report(name, "info", "host_wakeups=%d" % attempt)
                        return
                except OSError:
                    pass
                time.sleep(0.1)
        self.report(name, "info", "host_never_woke=1")

    def start_daemon(self, name):
        command = [self.args.shaked, "--source", "iio:ip:127.0.0.1:%d" % self.args.port, "--print-events",
                   "--no-socket", "--log-level", "debug", "--config", self.args.config]
        process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, bufsize=1)
        lines, logged = [], []

        def follow(stream, into):
            for line in stream:
                into.append((time.monotonic(), line.rstrip("\n")))

        readers = [threading.Thread(target=follow, args=(process.stdout, lines), daemon=True),
                   threading.Thread(target=follow, args=(process.stderr, logged), daemon=True)]
        for reader in readers:
            reader.start()
        self.daemons[name] = (process, lines, logged, readers)
        self.report(name, "info", "host_daemon=%d" % process.pid)

    def measure(self, name, seconds):
        process = self.daemons.get(name, (None,))[0]
        if process is None:
            return

        def switches():
            total = 0
            for task in os.listdir("/proc/%d/task" % process.pid):
                try:
                    with open("/proc/%d/task/%s/status" % (process.pid, task)) as f:
                        for line in f:
                            if "ctxt_switches" in line:
                                total += int(line.split()[1])
                except OSError:
                    pass
            return total

        def ticks():
            with open("/proc/%d/stat" % process.pid) as f:
                fields = f.read().rsplit(")", 1)[1].split()
            return int(fields[11]) + int(fields[12])  # utime, stime

        try:
            s0, t0 = switches(), ticks()
            time.sleep(seconds)
            s1, t1 = switches(), ticks()
        except OSError:
            self.report(name, "info", "host_measure_failed=1")
            return
        self.report(name, "info", "cost_switches=%d cost_ticks=%d cost_seconds=%s hz=%d"
                    % (s1 - s0, t1 - t0, seconds, os.sysconf("SC_CLK_TCK")))

    def stop_daemon(self, name):
        entry = self.daemons.pop(name, None)
        if entry is None:
            return
        process, lines, logged, readers = entry
        process.send_signal(signal.SIGTERM)
        stopping = time.monotonic()
        try:
            status = process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            status = process.wait()
        self.report(name, "info", "stop_seconds=%.2f" % (time.monotonic() - stopping))
        for reader in readers:
            reader.join(timeout=5)
        offset = self.offsets.get(name)
        delays = []
        for at, line in lines:
            self.report(name, "event", line)
            try:
                event = json.loads(line)
            except ValueError:
                continue
            if offset is not None and event.get("event") == "shake" and "time" in event:
                delays.append(at - offset - event["time"])
        with open("%s/%s.log" % (self.args.work, name), "w") as f:
            for _, line in logged:
                f.write(line + "\n")
                self.report(name, "log", line)
        self.report(name, "info", "daemon_exit=%d" % status)
        self.link_report(name, lines, logged)
        if delays:
            delays.sort()
            self.report(name, "info", "delay_n=%d delay_p50_ms=%.0f delay_max_ms=%.0f delay_min_ms=%.0f" % (
                len(delays), statistics.median(delays) * 1000, delays[-1] * 1000, delays[0] * 1000))

    def link(self, name, state):
        self.monitor("set_link net0 %s" % state)
        self.links.setdefault(name, []).append((time.monotonic(), state))

    def link_report(self, name, lines, logged):
        """For each link change: seconds to the daemon's next event (after "off": the shake it cut), to its next
        failed read (after "off") and to its next capture (after "on")."""
        counts = {"off": 0, "on": 0}
        for at, state in self.links.pop(name, []):
            number = counts[state]
            counts[state] += 1
            def first(items, test):
                return next(("%.2f" % (t - at) for t, line in items if t >= at and test(line)), "none")
            if state == "off":
                self.report(name, "info", "link_off_%d_event=%s link_off_%d_failed=%s" % (
                    number, first(lines, is_shake), number,
                    first(logged, lambda line: "the sensor failed or vanished" in line)))
            else:
                self.report(name, "info", "link_on_%d_capturing=%s" % (
                    number, first(logged, lambda line: "capturing from the sensor" in line)))

    def handle(self, line, read_at):
        words = line[len(REQUEST):].split()
        if len(words) < 2:
            return
        name, kind = words[0], words[1]
        if kind == "clock" and len(words) >= 3:
            try:
                offset = read_at - float(words[2])
            except ValueError:
                return
            self.offsets[name] = min(self.offsets.get(name, offset), offset)
            return
        if kind != "host" or len(words) < 3:
            return
        action, argument = words[2], (words[3] if len(words) > 3 else None)
        if action == "wake-after":
            threading.Thread(target=self.wake_after, args=(name, float(argument or 2)), daemon=True).start()
        elif action == "start-daemon":
            self.start_daemon(name)
        elif action == "measure":
            threading.Thread(target=self.measure, args=(name, float(argument or 5)), daemon=True).start()
        elif action == "link" and argument in ("on", "off"):
            self.link(name, argument)
        elif action == "stop-daemon":
            threading.Thread(target=self.stop_daemon, args=(name,), daemon=True).start()

    def follow(self):
        """Reads the serial log as QEMU writes it, until the stop file appears."""
        position = 0
        pending = ""
        while True:
            stopping = os.path.exists(self.args.stop)
            try:
                with open(self.args.serial, errors="replace") as f:
                    f.seek(position)
                    data = f.read()
                    position = f.tell()
            except FileNotFoundError:
                data = ""
            read_at = time.monotonic()
            pending += data
            *complete, pending = pending.split("\n")
            for raw in complete:
                line = raw.replace("\r", "")
                at = line.find(REQUEST)
                if at >= 0:
                    self.handle(line[at:], read_at)
            if stopping:
                break
            time.sleep(0.005)
        for name in list(self.daemons):
            self.stop_daemon(name)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--serial", required=True, help="the serial log QEMU writes")
    parser.add_argument("--monitor", required=True, help="QEMU's monitor socket")
    parser.add_argument("--out", required=True, help="where to append the report lines")
    parser.add_argument("--stop", required=True, help="a file whose appearance ends the agent")
    parser.add_argument("--work", required=True, help="a folder for the daemon's output")
    parser.add_argument("--shaked", required=True)
    parser.add_argument("--config", required=True, help="the host daemon's configuration file")
    parser.add_argument("--port", type=int, required=True, help="the host's port forwarded to the guest's iiod")
    Agent(parser.parse_args()).follow()
    return 0


if __name__ == "__main__":
    sys.exit(main())
