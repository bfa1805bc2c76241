#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Listen to shake gestures from shaked, the shake-gesture daemon.

A subscriber of protocol v1 (docs/protocol.md) using only the Python standard library. It connects to the
daemon's Unix socket, reads the "hello" greeting, optionally narrows the phases it wants, and prints every shake
event. When the daemon restarts (or the connection is lost) it reconnects with back-off and asks for a "replay"
of what it missed, so that no event the daemon still remembers is lost and none is printed twice:

  * same daemon run ("run" unchanged): replay since the last seq it printed;
  * new daemon run ("run" changed, seq numbers start again at 1): replay since 0.

Events are printed readably, or with --json exactly as the daemon sent them (one JSON object per line).
Progress notes (connected, reconnecting, dropped events) go to standard error.

Exit status: 0 after --count events or on SIGTERM; 130 on Ctrl-C; 1 when the daemon refuses this client or
speaks another protocol version; 2 for bad options.
"""

import argparse
import json
import os
import signal
import socket
import sys
import time

DEFAULT_SOCKET = "/run/shaked/shaked.sock"
PROTOCOL = 1
PHASES = ("began", "ended", "cancelled")
MAX_LINE = 1 << 20  # The daemon's lines are small; this only bounds memory if something goes wrong.


class Fatal(Exception):
    """The daemon will never accept this client: stop instead of reconnecting."""


class Lost(Exception):
    """The connection ended or was refused for now: reconnect."""


def note(message):
    print("shake_listener: " + message, file=sys.stderr, flush=True)


def describe(event):
    """One readable line for a shake event."""
    phase = event.get("phase", "?")
    head = "#{} {} shake {}".format(event.get("seq", "?"), event.get("timestamp", "?"), phase)
    if phase == "began":
        text = "{} (t={} s)".format(head, event.get("time"))
    elif phase == "ended":
        text = "{} after {} s: peak {} m/s², axis {}, {} reversals".format(
            head, event.get("duration"), event.get("peak"), event.get("axis"), event.get("reversals"))
    elif phase == "cancelled":
        text = "{} ({})".format(head, event.get("reason"))
    else:
        text = head
    if event.get("simulated"):
        text += " [simulated]"
    return text


class Listener:
    def __init__(self, options):
        self.path = options.socket
        self.phases = options.phases
        self.json = options.json
        self.count = options.count
        self.printed = 0
        # Where we are in the daemon's numbering: the last seq printed (None until the first hello, unless
        # --since says where to start), and which daemon run that seq belongs to.
        self.last_seq = options.since
        self.run = None
        # Seqs printed lately, to drop duplicates (replayed events may repeat live ones).
        self.seen = set()
        # While a replay is under way: the events received meanwhile (live and replayed), else None.
        self.holding = None
        self.replay_since = None
        self.sock = None

    # -- Connection loop ------------------------------------------------------------------------------------

    def listen(self):
        """Runs until --count events were printed (returns) or a fatal error (raises Fatal)."""
        delay = 0.1
        while True:
            try:
                self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                self.sock.connect(self.path)
            except OSError as error:
                self.close()
                note("cannot connect to {}: {}; retrying in {:.1f} s".format(
                    self.path, error.strerror or error, delay))
                time.sleep(delay)
                delay = min(2.0, delay * 2)
                continue
            try:
                if self.session():
                    return
                note("the daemon closed the connection; reconnecting")
                delay = 0.1
            except Lost as reason:
                note("{}; reconnecting in {:.1f} s".format(reason, delay))
                time.sleep(delay)
                delay = min(2.0, delay * 2)
            except OSError as error:
                note("connection lost ({}); reconnecting".format(error.strerror or error))
                delay = 0.1
            finally:
                self.close()

    def close(self):
        if self.sock is not None:
            try:
                self.sock.close()
            except OSError:
                pass
            self.sock = None

    def send(self, request):
        line = json.dumps(request, separators=(",", ":")) + "\n"
        self.sock.sendall(line.encode("utf-8"))

    # -- One connection -------------------------------------------------------------------------------------

    def session(self):
        """Talks to the daemon until the connection ends. Returns True when --count was reached."""
        reader = self.sock.makefile("rb")
        hello = self.read(reader)
        if hello is None:
            raise Lost("the daemon closed the connection before saying hello")
        if hello.get("event") == "error":
            message = "the daemon refused this client ({}): {}".format(hello.get("error"), hello.get("message"))
            if hello.get("error") == "forbidden":
                raise Fatal(message)
            raise Lost(message)  # too_many_clients: try again later.
        if hello.get("event") != "hello":
            raise Fatal("the daemon did not start with hello")
        if hello.get("protocol") != PROTOCOL:
            raise Fatal("the daemon speaks protocol {}, this listener {}".format(hello.get("protocol"), PROTOCOL))

        run = hello.get("run")
        sensor = hello.get("sensor") or {}
        note("connected to {} (run {}, sensor {}, seq {}{})".format(
            self.path, run, " ".join(str(sensor[key]) for key in ("source", "name") if sensor.get(key)),
            hello.get("seq"), ", shaking" if hello.get("shaking") else ""))
        replay = True
        if self.run is not None and run != self.run:
            note("new daemon run {} (was {}): replaying its events from seq 1".format(run, self.run))
            self.last_seq = 0
            self.seen.clear()
        elif self.last_seq is None:
            # First connection without --since: only what happens from now on.
            self.last_seq = hello.get("seq", 0)
            replay = False
        self.run = run

        # Subscribe first: a replay only sends the phases this connection is subscribed to.
        if self.phases:
            self.send({"request": "subscribe", "phases": self.phases})
        self.holding = None
        if replay:
            self.start_replay()

        for message in iter(lambda: self.read(reader), None):
            kind = message.get("event")
            if kind == "shake":
                if self.holding is not None:
                    self.holding.append(message)
                elif self.deliver(message):
                    return True
            elif kind == "replayed":
                if self.holding is not None and message.get("since") == self.replay_since:
                    if not message.get("complete", False):
                        note("the daemon no longer holds every event after seq {}: some were missed".format(
                            self.replay_since))
                    held, self.holding = self.holding, None
                    for event in sorted(held, key=lambda event: event.get("seq", 0)):
                        if self.deliver(event):
                            return True
            elif kind == "dropped":
                note("the daemon dropped {} message(s) because this listener read too slowly; "
                     "asking for a replay".format(message.get("count")))
                # The lost events are still in the daemon's ring: fetch them again (duplicates are skipped).
                self.start_replay()
            elif kind == "error":
                note("the daemon reports an error ({}): {}".format(message.get("error"), message.get("message")))
                if message.get("error") in ("too_many_errors", "forbidden"):
                    raise Fatal("giving up")
            # "ok" acknowledges our subscribe; anything else is from a newer daemon: ignore it.
        return False

    def start_replay(self):
        """Asks for the events after the last one printed, holding live events until the replay ends."""
        self.replay_since = self.last_seq
        if self.holding is None:
            self.holding = []
        self.send({"request": "replay", "since": self.replay_since})

    def read(self, reader):
        """The next message, or None at the end of the connection."""
        while True:
            line = reader.readline(MAX_LINE)
            if not line:
                return None
            try:
                message = json.loads(line.decode("utf-8"))
            except ValueError:
                note("skipping a line that is not JSON")
                continue
            if isinstance(message, dict):
                message["_line"] = line.decode("utf-8").rstrip("\r\n")
                return message

    def deliver(self, event):
        """Prints an event unless it was printed already. Returns True when --count is reached."""
        seq = event.get("seq")
        if not isinstance(seq, int) or seq in self.seen:
            return False
        self.seen.add(seq)
        if len(self.seen) > 4096:
            self.seen = {value for value in self.seen if value > seq - 2048}
        self.last_seq = max(self.last_seq or 0, seq)
        # Every phase comes until the daemon has read our subscribe: one sent in that moment is not printed.
        if self.phases and event.get("phase") not in self.phases:
            return False
        if self.json:
            print(event["_line"], flush=True)
        else:
            print(describe(event), flush=True)
        self.printed += 1
        return self.count is not None and self.printed >= self.count


def main(argv=None):
    parser = argparse.ArgumentParser(
        description="Print shake events from shaked, reconnecting (with replay) when the daemon restarts.")
    parser.add_argument(
        "--socket", default=os.environ.get("SHAKED_SOCKET") or DEFAULT_SOCKET,
        help="the daemon's socket (default: $SHAKED_SOCKET, else %s)" % DEFAULT_SOCKET)
    parser.add_argument(
        "--phases", type=lambda text: [phase for phase in text.split(",") if phase],
        help="comma-separated phases to receive: began,ended,cancelled (default: all)")
    parser.add_argument("--json", action="store_true", help="print each event as the daemon's JSON line")
    parser.add_argument("--count", type=int, metavar="N", help="exit after N events")
    parser.add_argument(
        "--since", type=int, metavar="SEQ",
        help="on the first connection, also print the daemon's remembered events after SEQ (0: all it holds)")
    options = parser.parse_args(argv)
    if options.phases is not None:
        unknown = [phase for phase in options.phases if phase not in PHASES]
        if unknown or not options.phases:
            parser.error("--phases takes began, ended and cancelled, not %r" % ",".join(unknown))
    if options.count is not None and options.count < 1:
        parser.error("--count must be 1 or more")
    if options.since is not None and options.since < 0:
        parser.error("--since must be 0 or more")

    # SIGTERM ends the listener as cleanly as Ctrl-C does. Some process launchers leave signals blocked in
    # their children: unblock these two, or the listener could not be stopped.
    signal.signal(signal.SIGTERM, lambda number, frame: sys.exit(0))
    if hasattr(signal, "pthread_sigmask"):
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT, signal.SIGTERM})
    listener = Listener(options)
    try:
        listener.listen()
        return 0
    except Fatal as error:
        note(str(error))
        return 1
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        # Standard output was closed (piped into `head`, say): nothing more to do.
        sys.stderr.close()
        return 0
    finally:
        listener.close()


if __name__ == "__main__":
    sys.exit(main())
