#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""A stand-in for logind on a private bus, for the tests of capture that follows the session.

One session of the user UID, active and unlocked, at /org/freedesktop/login1/session/_31, on SEAT (seat0 when
not given; "" for a session without a seat, as an ssh login has, which logind also calls active): ListSessions on
the manager, Get and GetAll of Active and LockedHint on the session, and PropertiesChanged when they change.
SIGUSR1 locks the session (LockedHint true), SIGUSR2 unlocks it; each prints a line with the monotonic time it was
sent.

    fake-logind.py BUS_ADDRESS UID [SEAT]
"""
import signal
import sys
import time

import dbus
import dbus.mainloop.glib
import dbus.service
from gi.repository import GLib

MANAGER = "org.freedesktop.login1.Manager"
SESSION = "org.freedesktop.login1.Session"
PROPERTIES = "org.freedesktop.DBus.Properties"
SESSION_PATH = "/org/freedesktop/login1/session/_31"

address, uid = sys.argv[1], int(sys.argv[2])
seat = sys.argv[3] if len(sys.argv) > 3 else "seat0"
dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)
bus = dbus.bus.BusConnection(address)


class Session(dbus.service.Object):
    def __init__(self):
        super().__init__(bus, SESSION_PATH)
        self.properties = {"Active": dbus.Boolean(True), "LockedHint": dbus.Boolean(False)}

    @dbus.service.method(PROPERTIES, in_signature="ss", out_signature="v")
    def Get(self, interface, name):
        return self.properties[name]

    @dbus.service.method(PROPERTIES, in_signature="s", out_signature="a{sv}")
    def GetAll(self, interface):
        return self.properties

    @dbus.service.signal(PROPERTIES, signature="sa{sv}as")
    def PropertiesChanged(self, interface, changed, invalidated):
        pass

    def set(self, name, value):
        self.properties[name] = dbus.Boolean(value)
        self.PropertiesChanged(SESSION, {name: self.properties[name]}, dbus.Array([], signature="s"))


class Manager(dbus.service.Object):
    @dbus.service.method(MANAGER, in_signature="", out_signature="a(susso)")
    def ListSessions(self):
        return [("1", dbus.UInt32(uid), "user", seat, dbus.ObjectPath(SESSION_PATH))]


session = Session()
manager = Manager(bus, "/org/freedesktop/login1")
bus.request_name("org.freedesktop.login1")


def lock(locked):
    session.set("LockedHint", locked)
    print("%s %.6f" % ("locked" if locked else "unlocked", time.monotonic()), flush=True)
    return True


# A test runner may hand its blocked signals down.
signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGUSR1, signal.SIGUSR2})
GLib.unix_signal_add(GLib.PRIORITY_DEFAULT, signal.SIGUSR1, lambda: lock(True))
GLib.unix_signal_add(GLib.PRIORITY_DEFAULT, signal.SIGUSR2, lambda: lock(False))
print("ready", flush=True)
GLib.MainLoop().run()
