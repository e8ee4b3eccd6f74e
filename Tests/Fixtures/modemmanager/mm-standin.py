#!/usr/bin/python3
"""A stand-in for ModemManager on a private system bus (no modem can run in the tests): one
modem at /org/freedesktop/ModemManager1/Modem/0 with the Location interface. Setup(u, b)
records its arguments as a JSON line in LOG and sets Enabled/SignalsLocation as ModemManager
does; the initial Enabled is ENABLED (default 17: 3GPP cell ids + GNSS unmanaged). With DELAY,
Setup answers DELAY seconds after it was called (a modem that hangs), recording the call when
it comes.

usage: mm-standin.py LOG [ENABLED [DELAY]]   (DBUS_SYSTEM_BUS_ADDRESS names the bus)
"""
import json, sys
import dbus, dbus.service, dbus.mainloop.glib
from gi.repository import GLib

LOCATION = "org.freedesktop.ModemManager1.Modem.Location"
PROPS = "org.freedesktop.DBus.Properties"


class Modem(dbus.service.Object):
    def __init__(self, bus, path, log, enabled, delay):
        super().__init__(bus, path)
        self.log, self.enabled, self.signals, self.delay = log, enabled, False, delay

    @dbus.service.method(LOCATION, in_signature="ub", out_signature="", async_callbacks=("ok", "err"))
    def Setup(self, sources, signal_location, ok, err):
        with open(self.log, "a") as f:
            f.write(json.dumps({"sources": int(sources), "signal_location": bool(signal_location)}) + "\n")
        self.enabled, self.signals = int(sources), bool(signal_location)
        if self.delay > 0:
            GLib.timeout_add(int(self.delay * 1000), lambda: ok() and False)
        else:
            ok()

    @dbus.service.method(PROPS, in_signature="ss", out_signature="v")
    def Get(self, interface, name):
        if interface != LOCATION:
            raise dbus.exceptions.DBusException("no such interface", name_suffix="UnknownInterface")
        if name == "Enabled":
            return dbus.UInt32(self.enabled)
        if name == "SignalsLocation":
            return dbus.Boolean(self.signals)
        if name == "Capabilities":
            return dbus.UInt32(1 | 2 | 4 | 16)
        raise dbus.exceptions.DBusException("no such property " + name)

    @dbus.service.method(PROPS, in_signature="s", out_signature="a{sv}")
    def GetAll(self, interface):
        return {"Enabled": dbus.UInt32(self.enabled), "SignalsLocation": dbus.Boolean(self.signals)}


def main():
    dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)
    bus = dbus.SystemBus()
    name = dbus.service.BusName("org.freedesktop.ModemManager1", bus)
    Modem(bus, "/org/freedesktop/ModemManager1/Modem/0", sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 17,
          float(sys.argv[3]) if len(sys.argv) > 3 else 0)
    print("ready", flush=True)
    GLib.MainLoop().run()


if __name__ == "__main__":
    main()
