#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Listen to shake gestures from shaked over D-Bus (docs/dbus.md), with python3-dbus.

Claims the sensor (so that the daemon captures while this runs, and, when access.subscribe is not `everyone`, sends
its Shake signals here), prints every Shake signal, and releases the claim on exit; the daemon also releases it if
this process dies. When the daemon restarts, the claim is made again as soon as the name has an owner.
DBUS_SYSTEM_BUS_ADDRESS points it at another bus than the system's.

Only signals whose sender is the owner of io.github.shaked.Shake1 are acted on: any program on the bus can send a
signal with the same path, interface and member (the shipped bus policy refuses it on the system bus, but a
listener should not rely on the policy being installed), and the sender is the one thing it cannot forge.

    python3 shake_dbus.py [--count N]

Exit status: 0 after --count events or on SIGTERM/Ctrl-C; 1 when the daemon refuses the claim (access.subscribe).
Needs python3-dbus and python3-gi (Debian packages of those names).
"""

import argparse
import signal
import sys

import dbus
import dbus.mainloop.glib
from gi.repository import GLib

NAME = "io.github.shaked.Shake1"
PATH = "/io/github/shaked/Shake1"
INTERFACE = "io.github.shaked.Shake1"


def describe(phase, seq, time, duration, peak, axis, reversals, reason, detail):
    if phase == "began":
        return "#%d shake began (t=%.2f s)" % (seq, time)
    if phase == "ended":
        return "#%d shake ended after %.2f s: peak %.2f m/s², axis %s, %d reversals" % (
            seq, duration, peak, axis, reversals)
    why = reason + (" (%s)" % detail if detail else "")
    return "#%d shake cancelled after %.2f s: %s" % (seq, duration, why)


def main():
    parser = argparse.ArgumentParser(description="Print shakes from shaked's D-Bus interface.")
    parser.add_argument("--count", type=int, help="exit after this many events")
    options = parser.parse_args()

    dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)
    bus = dbus.SystemBus()
    loop = GLib.MainLoop()
    state = {"events": 0, "status": 0}

    def claim(owner=""):
        if not owner and not bus.name_has_owner(NAME):
            print("shake_dbus: waiting for %s" % NAME, file=sys.stderr, flush=True)
            return
        try:
            proxy = bus.get_object(NAME, PATH)
            dbus.Interface(proxy, INTERFACE).Claim()
            sensor = proxy.Get(INTERFACE, "Sensor", dbus_interface=dbus.PROPERTIES_IFACE)
            print("shake_dbus: claimed the sensor (%s)" % (sensor or "none yet"), file=sys.stderr, flush=True)
        except dbus.DBusException as error:
            print("shake_dbus: %s" % error.get_dbus_message(), file=sys.stderr, flush=True)
            if error.get_dbus_name() == "org.freedesktop.DBus.Error.AccessDenied":
                state["status"] = 1
                loop.quit()

    def on_shake(*arguments):
        print(describe(*arguments), flush=True)
        state["events"] += 1
        if options.count and state["events"] >= options.count:
            loop.quit()

    # bus_name: only signals from the name's owner (python3-dbus follows the owner as it changes); any other
    # sender's Shake is never delivered to on_shake.
    bus.add_signal_receiver(on_shake, signal_name="Shake", dbus_interface=INTERFACE, path=PATH, bus_name=NAME)
    # A daemon that (re)starts takes the name: claim again.
    bus.watch_name_owner(NAME, lambda owner: owner and claim(owner))
    claim()
    for number in (signal.SIGINT, signal.SIGTERM):
        GLib.unix_signal_add(GLib.PRIORITY_DEFAULT, number, lambda: loop.quit() or False)
    loop.run()
    if state["status"] == 0 and bus.name_has_owner(NAME):
        try:
            dbus.Interface(bus.get_object(NAME, PATH), INTERFACE).Release()
        except dbus.DBusException:
            pass
    return state["status"]


if __name__ == "__main__":
    sys.exit(main())
