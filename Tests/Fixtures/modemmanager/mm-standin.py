#!/usr/bin/python3
"""A stand-in for ModemManager on a private system bus (no modem can run in the tests): one
modem at /org/freedesktop/ModemManager1/Modem/0 with the Location interface. Setup(u, b)
records its arguments as a JSON line in LOG and sets Enabled/SignalsLocation as ModemManager
does; the initial Enabled is ENABLED (default 17: 3GPP cell ids + GNSS unmanaged).

usage: mm-standin.py LOG [ENABLED]   (DBUS_SYSTEM_BUS_ADDRESS names the bus)
"""
import json, sys
import dbus, dbus.service, dbus.mainloop.glib
from gi.repository import GLib

LOCATION = "org.freedesktop.ModemManager1.Modem.Location"
PROPS = "org.freedesktop.DBus.Properties"


class Modem(dbus.service.Object):
    def __init__(self, bus, path, log, enabled):
        super().__init__(bus, path)
        self.log, self.enabled, self.signals = log, enabled, False

    @dbus.service.method(LOCATION, in_signature="ub", out_signature="")
    def Setup(self, sources, signal_location):
        with open(self.log, "a") as f:
            f.write(json.dumps({"sources": int(sources), "signal_location": bool(signal_location)}) + "\n")
        self.enabled, self.signals = int(sources), bool(signal_location)

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
    Modem(bus, "/org/freedesktop/ModemManager1/Modem/0", sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 17)
    print("ready", flush=True)
    GLib.MainLoop().run()


if __name__ == "__main__":
    main()
