#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The forwarder under load: N shaked-mqtt forwarders against one local mosquitto broker, each fed by a stand-in
daemon at RATE events a second for SECONDS; one mosquitto_sub reads everything back. Prints whether any event was
lost or repeated, and the latency from the daemon's event (its timestamp, written just before it is sent) to the
subscriber's receipt (mosquitto_sub's %U), p50/p99/max, with the forwarders' CPU and memory.

The stand-in daemon speaks the daemon's protocol (hello, subscribe, replay) on N Unix sockets from one asyncio
process: N real daemons replaying traces would measure the detector and not the path to the broker, and a real
hand does not shake ten times a second.

    Benchmarks/mqtt-load.py --forwarders 100 --rate 10 --seconds 60 [--shaked-mqtt .build/release/shaked-mqtt]
"""
import argparse
import asyncio
import datetime
import json
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def timestamp(now):
    moment = datetime.datetime.fromtimestamp(now, datetime.timezone.utc)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


class StandInDaemon:
    """One socket of the stand-in daemon: events at `rate` a second while `running`."""

    def __init__(self, path, rate, run):
        self.path, self.rate, self.run = path, rate, run
        self.seq = 0
        self.sent = 0
        self.writers = []
        self.running = False

    async def serve(self):
        self.server = await asyncio.start_unix_server(self.client, path=self.path)

    async def client(self, reader, writer):
        hello = {"event": "hello", "protocol": 1, "sensor": {"source": "replay", "name": "bench"}, "shaking": False,
                 "seq": self.seq, "run": self.run}
        writer.write((json.dumps(hello, separators=(",", ":")) + "\n").encode())
        self.writers.append(writer)
        try:
            while line := await reader.readline():
                request = json.loads(line)
                if request.get("request") == "subscribe":
                    writer.write(b'{"event":"ok","request":"subscribe"}\n')
                elif request.get("request") == "replay":
                    since = request["since"]
                    writer.write(f'{{"event":"replayed","since":{since},"count":0,"complete":true}}\n'.encode())
        except (ConnectionError, ValueError, asyncio.CancelledError):
            pass
        finally:
            if writer in self.writers:
                self.writers.remove(writer)

    async def emit(self, seconds, start):
        period = 1 / self.rate
        count = int(seconds * self.rate)
        for index in range(count):
            # Evenly spaced, each socket at its own phase: no burst of N events at once.
            await asyncio.sleep(max(0, start + index * period - time.time()))
            self.seq += 1
            now = time.time()
            line = (f'{{"event":"shake","phase":"began","time":{now:.3f},"seq":{self.seq},'
                    f'"timestamp":"{timestamp(now)}"}}\n').encode()
            for writer in self.writers:
                writer.write(line)
            self.sent += 1


def process_stats(pids):
    """CPU seconds and resident kB, summed over `pids`."""
    ticks = os.sysconf("SC_CLK_TCK")
    cpu, rss = 0.0, 0
    for pid in pids:
        try:
            fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
            cpu += (int(fields[11]) + int(fields[12])) / ticks
            for line in open(f"/proc/{pid}/status"):
                if line.startswith("VmRSS:"):
                    rss += int(line.split()[1])
        except OSError:
            pass
    return cpu, rss


async def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--forwarders", type=int, default=100)
    parser.add_argument("--rate", type=float, default=10, help="events a second per device")
    parser.add_argument("--seconds", type=float, default=60)
    parser.add_argument("--shaked-mqtt", default=".build/release/shaked-mqtt")
    parser.add_argument("--qos", type=int, default=1)
    arguments = parser.parse_args()
    for tool in ("mosquitto", "mosquitto_sub"):
        if not shutil.which(tool) and not os.path.exists(f"/usr/sbin/{tool}"):
            sys.exit(f"mqtt-load: {tool} is missing (apt-get install mosquitto mosquitto-clients)")
    directory = tempfile.mkdtemp(prefix="shaked-mqtt-load.")
    port = free_port()
    with open(f"{directory}/broker.conf", "w") as conf:
        conf.write(f"user root\nlistener {port} 127.0.0.1\nallow_anonymous true\nmax_queued_messages 100000\n"
                   "max_inflight_messages 0\nlog_dest none\n")
    broker = subprocess.Popen(["mosquitto", "-c", f"{directory}/broker.conf"], stderr=subprocess.DEVNULL)
    processes = [broker]
    try:
        for _ in range(100):
            try:
                socket.create_connection(("127.0.0.1", port)).close()
                break
            except OSError:
                await asyncio.sleep(0.05)
        received = open(f"{directory}/received", "w")
        subscriber = subprocess.Popen(
            ["mosquitto_sub", "-h", "127.0.0.1", "-p", str(port), "-q", "1", "-t", "bench/+/event", "-F", "%U %t %p"],
            stdout=received)
        processes.append(subscriber)
        daemons = []
        for index in range(arguments.forwarders):
            daemon = StandInDaemon(f"{directory}/d{index}.sock", arguments.rate, f"run{index}")
            await daemon.serve()
            daemons.append(daemon)
        forwarders = []
        for index in range(arguments.forwarders):
            with open(f"{directory}/f{index}.yaml", "w") as conf:
                conf.write(f"broker:\n  uri: mqtt://127.0.0.1:{port}\ntopics:\n  prefix: bench\n  device: d{index}\n"
                           f"  qos: {arguments.qos}\nhome_assistant:\n  discovery: false\nlogging:\n  level: warning\n")
            forwarders.append(subprocess.Popen(
                [arguments.shaked_mqtt, "--config", f"{directory}/f{index}.yaml", "--socket", f"{directory}/d{index}.sock",
                 "--status-file", f"{directory}/f{index}.status"], stderr=open(f"{directory}/f{index}.log", "w")))
        processes += forwarders
        # Every forwarder subscribed to its daemon and connected to the broker.
        deadline = time.time() + 60
        while time.time() < deadline:
            ready = sum(1 for d in daemons if d.writers)
            connected = sum(1 for i in range(arguments.forwarders)
                            if "broker_connected=yes" in open(f"{directory}/f{i}.status").read()
                            ) if all(os.path.exists(f"{directory}/f{i}.status") for i in range(arguments.forwarders)) else 0
            if ready == arguments.forwarders and connected == arguments.forwarders:
                break
            await asyncio.sleep(0.2)
        else:
            sys.exit("mqtt-load: the forwarders did not all connect")
        pids = [p.pid for p in forwarders]
        cpu_before, _ = process_stats(pids)
        start = time.time() + 0.5
        await asyncio.gather(*(d.emit(arguments.seconds, start) for d in daemons))
        cpu_after, rss = process_stats(pids)
        sent = sum(d.sent for d in daemons)
        # Wait for the last ones to arrive.
        deadline = time.time() + 30
        while time.time() < deadline:
            received.flush()
            if sum(1 for _ in open(f"{directory}/received")) >= sent:
                break
            await asyncio.sleep(0.2)
        await asyncio.sleep(0.5)
        latencies, seen, repeated = [], {}, 0
        for line in open(f"{directory}/received"):
            arrival, topic, payload = line.rstrip("\n").split(" ", 2)
            event = json.loads(payload)
            sent_at = datetime.datetime.strptime(event["timestamp"], "%Y-%m-%dT%H:%M:%S.%fZ").replace(
                tzinfo=datetime.timezone.utc).timestamp()
            # The timestamp keeps milliseconds: the event was written at most 1 ms after it.
            latencies.append((float(arrival) - sent_at) * 1000 - 0.5)
            key = (topic, event["seq"])
            repeated += key in seen
            seen[key] = True
        lost = sent - len(seen)
        latencies.sort()
        def percentile(p):
            return latencies[min(len(latencies) - 1, int(len(latencies) * p))] if latencies else float("nan")
        duration = arguments.seconds
        print(f"forwarders {arguments.forwarders}, {arguments.rate:g} events/s each for {duration:g} s, QoS {arguments.qos}")
        print(f"events sent {sent}, received {len(seen)} distinct, lost {lost}, repeated {repeated}")
        print(f"latency ms: p50 {percentile(0.5):.1f}, p99 {percentile(0.99):.1f}, max {latencies[-1] if latencies else float('nan'):.1f}")
        print(f"forwarders: CPU {100 * (cpu_after - cpu_before) / duration / arguments.forwarders:.2f} % of a core each, "
              f"RSS {rss / arguments.forwarders / 1024:.1f} MB each")
        bcpu, brss = process_stats([broker.pid])
        scpu, _ = process_stats([subscriber.pid])
        own = os.times()
        print(f"broker: CPU {bcpu:.1f} s in all, RSS {brss / 1024:.1f} MB; subscriber CPU {scpu:.1f} s; "
              f"stand-in daemon CPU {own.user + own.system:.1f} s; load average {os.getloadavg()[0]:.1f}")
        for process in reversed(processes):
            process.send_signal(signal.SIGTERM)
        for daemon in daemons:
            for writer in list(daemon.writers):
                writer.close()
            daemon.server.close()
        return 1 if lost else 0
    finally:
        for process in reversed(processes):
            process.send_signal(signal.SIGTERM)
        for process in processes:
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
        shutil.rmtree(directory, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
