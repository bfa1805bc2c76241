#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Hostile local clients against a real shaked, with the figures the limits are judged by.

    Benchmarks/hostile-clients.py [--shaked PATH] ATTACK [ATTACK...]

Attacks:
  pipeline:N    N connections (SO_RCVBUF 4096) each send 1,000 status requests and never read
  empty:N       N connections flood empty lines while 20 fresh clients ask for status (a connection the daemon
                ends is replaced)
  simulate:N    one connection as uid 65534 sends N refused simulate requests (needs root)
  hold:N        one account (uid 65534) opens N connections and holds them (needs root)

For each: the daemon's RSS growth (peak), the time a fresh client waits for its status answer (median and
worst), the longest gap between watchdog pings (WATCHDOG_USEC=2 s, pinged every 1 s) and the number of lines the
daemon logged. The daemon replays a bundled trace in a loop, so events flow meanwhile.
"""

import argparse
import os
import resource
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TRACE = os.path.join(HERE, "..", "Tests", "Fixtures", "shake-horizontal-100hz.csv")
WATCHDOG_USEC = 2_000_000


def rss_kb(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return -1


class Daemon:
    def __init__(self, shaked, directory, config=None):
        self.directory = directory
        self.socket = os.path.join(directory, "shaked.sock")
        self.notify = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.notify.bind(os.path.join(directory, "notify.sock"))
        self.pings = []
        self.log = open(os.path.join(directory, "stderr.log"), "w+")
        env = dict(os.environ, NOTIFY_SOCKET=os.path.join(directory, "notify.sock"), WATCHDOG_USEC=str(WATCHDOG_USEC))
        arguments = [shaked, "--source", f"replay:{TRACE}", "--loop", "--speed", "4", "--socket", self.socket]
        if config:
            arguments += ["--config", config]
        self.process = subprocess.Popen(arguments, env=env, stdout=subprocess.DEVNULL, stderr=self.log)
        threading.Thread(target=self._collect, daemon=True).start()
        deadline = time.monotonic() + 10
        while not os.path.exists(self.socket):
            if time.monotonic() > deadline:
                raise SystemExit("the daemon did not create its socket")
            time.sleep(0.05)
        os.chmod(directory, 0o755)
        os.chmod(self.socket, 0o666)

    def _collect(self):
        while True:
            try:
                data = self.notify.recv(4096)
            except OSError:
                return
            if b"WATCHDOG=1" in data:
                self.pings.append(time.monotonic())

    def max_gap(self, start, end):
        pings = [t for t in self.pings if start - 1.5 <= t <= end] + [end]
        return max((b - a for a, b in zip(pings, pings[1:])), default=0.0)

    def log_lines(self):
        self.log.flush()
        with open(self.log.name) as f:
            return sum(1 for _ in f)

    def stop(self):
        self.process.terminate()
        try:
            self.process.wait(15)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self.notify.close()


def fresh_status(path, timeout=60.0):
    """Seconds from connecting to the end of the status answer; None if none came within timeout."""
    start = time.monotonic()
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(timeout)
    try:
        s.connect(path)
        s.sendall(b'{"request":"status"}\n')
        data = b""
        while b'"event":"status"' not in data or not data.endswith(b"\n"):
            chunk = s.recv(65536)
            if not chunk:
                return None
            data += chunk
        return time.monotonic() - start
    except OSError:
        return None
    finally:
        s.close()


def connect_many(path, count, rcvbuf=None):
    clients = []
    for _ in range(count):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        if rcvbuf:
            s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
        s.connect(path)
        s.setblocking(False)
        clients.append(s)
    return clients


def send_some(s, data):
    try:
        return s.send(data)
    except (BlockingIOError, OSError):
        return 0


def report(name, daemon, base, peak, waits, start, end, extra=""):
    answered = [w for w in waits if w is not None]
    median = f"{statistics.median(answered) * 1000:.1f} ms" if answered else "none"
    worst = f"{max(answered) * 1000:.1f} ms" if answered else "none"
    print(
        f"{name}: RSS +{(peak - base) / 1024:.1f} MB (peak {peak / 1024:.1f} MB), fresh status median {median}, "
        f"worst {worst}, unanswered {len(waits) - len(answered)}/{len(waits)}, "
        f"longest watchdog gap {daemon.max_gap(start, end):.2f} s (pinged every {WATCHDOG_USEC / 2e6:.1f} s), "
        f"log lines {daemon.log_lines()}{extra}",
        flush=True,
    )


def pipeline(daemon, count):
    pid = daemon.process.pid
    base = rss_kb(pid)
    start = time.monotonic()
    clients = connect_many(daemon.socket, count, rcvbuf=4096)
    pending = [b'{"request":"status"}\n' * 1000 for _ in clients]
    waits, peak = [], base
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        for index, s in enumerate(clients):
            if pending[index]:
                sent = send_some(s, pending[index])
                pending[index] = pending[index][sent:]
        peak = max(peak, rss_kb(pid))
        waits.append(fresh_status(daemon.socket))
        if os.environ.get("VERBOSE"):
            print(f"  {time.monotonic() - start:6.2f} s: status in {waits[-1]}, RSS {rss_kb(pid) / 1024:.1f} MB", flush=True)
        peak = max(peak, rss_kb(pid))
        time.sleep(0.2)
    end = time.monotonic()
    report(f"pipeline:{count}", daemon, base, peak, waits, start, end,
           f", requests still unsent {sum(len(p) for p in pending) // 21}")
    for s in clients:
        s.close()


def empty_lines(daemon, count):
    pid = daemon.process.pid
    base = rss_kb(pid)
    clients = connect_many(daemon.socket, count)
    flood = b"\n" * 65536
    stop = threading.Event()
    sent = [0]

    reconnects = [0]

    def flooding():
        # A connection the daemon ends is replaced at once: the flood goes on whatever the daemon does.
        while not stop.is_set():
            for index, s in enumerate(clients):
                try:
                    sent[0] += s.send(flood)
                except BlockingIOError:
                    pass
                except OSError:
                    s.close()
                    clients[index] = connect_many(daemon.socket, 1)[0]
                    reconnects[0] += 1

    thread = threading.Thread(target=flooding, daemon=True)
    start = time.monotonic()
    thread.start()
    time.sleep(0.5)
    waits, peak = [], base
    for _ in range(20):
        waits.append(fresh_status(daemon.socket, timeout=30))
        peak = max(peak, rss_kb(pid))
        time.sleep(0.2)
    stop.set()
    thread.join()
    end = time.monotonic()
    report(f"empty:{count}", daemon, base, peak, waits, start, end,
           f", empty lines sent {sent[0]}, connections the daemon ended {reconnects[0]}")
    for s in clients:
        s.close()


def as_nobody(function):
    """Runs function in a child process as uid/gid 65534; returns its exit status."""
    child = os.fork()
    if child == 0:
        try:
            os.setgroups([])
            os.setgid(65534)
            os.setuid(65534)
            function()
            os._exit(0)
        except BaseException as error:
            print(error, file=sys.stderr)
            os._exit(1)
    return os.waitpid(child, 0)[1]


def simulate(daemon, count):
    pid = daemon.process.pid
    base = rss_kb(pid)
    lines_before = daemon.log_lines()
    start = time.monotonic()

    def attack():
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.connect(daemon.socket)
        s.settimeout(30)
        data = b'{"request":"simulate"}\n' * count
        reader = threading.Thread(target=lambda: drain(s), daemon=True)
        reader.start()
        try:
            s.sendall(data)
        except OSError:
            pass
        reader.join(30)

    def drain(s):
        answers = 0
        try:
            while True:
                chunk = s.recv(65536)
                if not chunk:
                    break
                answers += chunk.count(b"\n")
        except OSError:
            pass
        print(f"simulate:{count}: the connection got {answers} lines before it ended", flush=True)

    as_nobody(attack)
    end = time.monotonic()
    time.sleep(0.5)
    waits = [fresh_status(daemon.socket)]
    report(f"simulate:{count}", daemon, base, rss_kb(pid), waits, start, end,
           f" ({daemon.log_lines() - lines_before} during the attack)")


def hold(daemon, count):
    pid = daemon.process.pid
    base = rss_kb(pid)
    start = time.monotonic()
    ready_read, ready_write = os.pipe()
    done_read, done_write = os.pipe()
    child = os.fork()
    if child == 0:
        os.setgroups([])
        os.setgid(65534)
        os.setuid(65534)
        held = []
        for _ in range(count):
            try:
                s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                s.connect(daemon.socket)
                held.append(s)
            except OSError:
                break
        os.write(ready_write, str(len(held)).encode())
        os.read(done_read, 1)
        os._exit(0)
    opened = os.read(ready_read, 16).decode()
    time.sleep(1)
    waits = [fresh_status(daemon.socket, timeout=5) for _ in range(5)]
    os.write(done_write, b"x")
    os.waitpid(child, 0)
    end = time.monotonic()
    report(f"hold:{count}", daemon, base, rss_kb(pid), waits, start, end,
           f", connections the account opened {opened}")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--shaked", default=os.path.join(HERE, "..", ".build", "debug", "shaked"))
    parser.add_argument("--config")
    parser.add_argument("attacks", nargs="+")
    options = parser.parse_args()
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    attacks = {"pipeline": pipeline, "empty": empty_lines, "simulate": simulate, "hold": hold}
    for attack in options.attacks:
        name, _, count = attack.partition(":")
        with tempfile.TemporaryDirectory(prefix="shaked-hostile-") as directory:
            daemon = Daemon(options.shaked, directory, options.config)
            try:
                time.sleep(1)
                fresh_status(daemon.socket)  # Warm up: first-use allocations are not growth.
                time.sleep(0.5)
                attacks[name](daemon, int(count))
            finally:
                daemon.stop()


if __name__ == "__main__":
    main()
