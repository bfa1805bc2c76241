#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""How soon capture follows the listener's session (`sensor.follow_session`): the time from a stand-in logind's
lock (or unlock) to the daemon's log line saying capture is off (or on), over ROUNDS locks and unlocks. The aim
is a second (README, docs/install.md). The real daemon runs on a simulated buffered accelerometer (umockdev) with
a private dbus-daemon for its system bus and Tests/Fixtures/fake-logind.py as logind; the listener is not root
(root's listeners do not follow sessions): run as root, it is nobody. Nothing else runs beside it, unlike the
test suite's check of the same behaviour, whose timings share two cores with every other test.

    Benchmarks/session-follow.py [--rounds 10] [--gap 0.3] [--bin .build/release]
"""
import argparse
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

AWAY = "the listeners' sessions are locked or inactive: capture is off until one is back"
ON = "a client is listening: capture is on"
AIM = 1.0


def wait_for(condition, timeout, what):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return time.monotonic()
        time.sleep(0.002)
    sys.exit(f"session-follow: {what} did not happen within {timeout} s")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=10, help="locks and unlocks (default 10)")
    parser.add_argument("--gap", type=float, default=0.3,
                        help="seconds between a change followed and the next (0: lock as soon as capture is on)")
    parser.add_argument("--bin", default=".build/release", help="where shaked and shakectl are")
    args = parser.parse_args()
    for tool in ("dbus-daemon", "umockdev-run"):
        if not shutil.which(tool):
            sys.exit(f"session-follow: {tool} is not installed (make deps)")
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    shakectl, shaked = (os.path.join(args.bin, name) for name in ("shakectl", "shaked"))
    work = tempfile.mkdtemp(prefix="shaked-session-")
    os.chmod(work, 0o755)  # the listener may be nobody
    processes = []

    def start(command, log, **kwargs):
        process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, **kwargs)
        processes.append(process)
        return process

    try:
        socket = f"{work}/bus"
        with open(f"{work}/bus.conf", "w") as f:
            f.write(f"""<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig><type>session</type><listen>unix:path={socket}</listen><auth>EXTERNAL</auth>
<policy context="default"><allow send_destination="*" eavesdrop="true"/><allow eavesdrop="true"/><allow own="*"/>
<allow user="*"/></policy></busconfig>
""")
        bus = subprocess.Popen(
            ["dbus-daemon", f"--config-file={work}/bus.conf", "--nofork", "--nopidfile", "--print-address"],
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        processes.append(bus)
        address = f"unix:path={socket}"
        bus.stdout.readline()  # printed once it accepts connections

        user = 65534 if os.getuid() == 0 else os.getuid()
        logind_log = open(f"{work}/logind.log", "w")
        logind = start(["/usr/bin/python3", f"{root}/Tests/Fixtures/fake-logind.py", address, str(user)], logind_log)
        wait_for(lambda: "ready" in open(f"{work}/logind.log").read(), 10, "the stand-in logind's start")

        trace = f"{work}/trace.csv"
        seconds = 30 + 3 * args.rounds
        subprocess.run([shakectl, "synth", "--before", str(seconds), "--after", "5", "--seed", "3", "--out", trace],
                       check=True, stdout=subprocess.DEVNULL)
        subprocess.run([shakectl, "simulate-device", trace, "--out", work, "--shape", "buffered"], check=True,
                       stdout=subprocess.DEVNULL)
        daemon_log = open(f"{work}/daemon.log", "w")
        start(["umockdev-run", "--device", f"{work}/device.umockdev", "--script",
               f"/dev/iio:device0={work}/iio:device0.script", "--", shaked, "--socket", f"{work}/shaked.sock"],
              daemon_log, env=dict(os.environ, DBUS_SYSTEM_BUS_ADDRESS=address))

        def count(line):
            return open(f"{work}/daemon.log").read().count(line)

        wait_for(lambda: os.path.exists(f"{work}/shaked.sock"), 20, "the daemon's socket")
        listen = [shakectl, "listen", "--socket", f"{work}/shaked.sock"]
        if os.getuid() == 0:
            listen = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"] + listen
        start(listen, subprocess.DEVNULL)
        wait_for(lambda: count(ON) == 1, 10, "capture on for the listener")
        time.sleep(0.5)

        # Each step: its name, the stand-in logind's signal, the daemon's line, and how many of that line there
        # were before the rounds (capture went on once for the listener).
        steps = (("lock → capture off", signal.SIGUSR1, AWAY, 0), ("unlock → capture on", signal.SIGUSR2, ON, 1))
        timings = {name: [] for name, *_ in steps}
        for round in range(1, args.rounds + 1):
            for name, sent, line, before in steps:
                began = time.monotonic()
                logind.send_signal(sent)
                followed = wait_for(lambda: count(line) == before + round, 10, f"round {round}: {name}")
                timings[name].append(followed - began)
                time.sleep(args.gap)
        print(f"capture following the session, {args.rounds} rounds (aim: within {AIM:.0f} s):")
        worst = 0.0
        for name, values in timings.items():
            worst = max(worst, max(values))
            print(f"  {name}: median {statistics.median(values) * 1000:.0f} ms, "
                  f"slowest {max(values) * 1000:.0f} ms")
        print(f"  slowest of all: {worst * 1000:.0f} ms ({'within' if worst < AIM else 'OVER'} the aim)")
    finally:
        # umockdev-run does not hand a signal to the daemon it runs: the daemon and the listener by their socket.
        subprocess.run(["pkill", "-TERM", "-f", "--", f"--socket {work}/shaked.sock"], check=False)
        for process in reversed(processes):
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)
                try:
                    process.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    process.kill()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
