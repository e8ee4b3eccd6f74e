#!/usr/bin/env python3
"""A GNSS receiver on a pseudo-terminal, for geomon's demo and tests (no receiver runs here).

It plays a recorded NMEA 0183 log at the pace it was recorded, one epoch (the sentences between
changes of the RMC/GGA time) when its time comes, on a pty that gpsd reads like a serial port,
and it obeys the power commands a receiver of its kind obeys:

  --obey none   a receiver nothing switches (a USB dongle behind gpsd: what `power: watch` gets)
  --obey ubx    u-blox: UBX-CFG-RST 0x08 (controlled GNSS stop) stops the engine until
                CFG-RST 0x09 (GNSS start); UBX-RXM-PMREQ (backup) stops it until any byte arrives
  --obey mtk    MediaTek/Quectel: $PMTK161,0 (standby) stops it until any byte arrives
  --ignore      parse the commands, but keep tracking (hardware whose switch has no effect)

While stopped it sends nothing; the recording goes on in real time, so the epochs of that time
are never sent, as a receiver that was not tracking never measured them. After a start or a
wake it sends nothing for --ttff seconds (a hot start), then the epochs again.

Its own account of being on is the ground truth the tests compare geomon's with: --state-log
gets one JSON line per change, {"mono": CLOCK_MONOTONIC seconds, "state": "on"|"off", "why"},
and --commands-log one line per command understood, {"mono", "command"}.

  receiver-sim.py LOG --link PATH [--from HH:MM:SS] [--until HH:MM:SS] [--excerpt OUT]
                  [--obey none|ubx|mtk] [--ignore] [--ttff S] [--start-on-signal] [--linger S]

--link names the pty's slave (a symlink), for `gpsd -N -n PATH`. --excerpt writes the epochs
that are played, as an NMEA log (what a replay should read for the same input). With
--start-on-signal the recording starts on SIGUSR1 (once the client is watching), else at once.
It exits --linger seconds after the last epoch, or on SIGTERM.
"""
import argparse
import json
import os
import select
import signal
import sys
import termios
import time
import tty


def epoch_time(line):
    """Seconds since midnight of an RMC or GGA sentence, or None."""
    fields = line.split(",")
    if len(fields) < 2 or not (fields[0].endswith("RMC") or fields[0].endswith("GGA")):
        return None
    t = fields[1]
    try:
        return int(t[0:2]) * 3600 + int(t[2:4]) * 60 + float(t[4:])
    except ValueError:
        return None


def read_epochs(path):
    epochs, current, current_time = [], [], None
    with open(path, "rb") as f:
        text = f.read().decode("latin-1")
    for raw in text.splitlines():
        line = raw.strip("\x00\r\n ")
        if not line.startswith("$"):
            continue
        t = epoch_time(line)
        if t is not None and t != current_time:
            if current_time is not None and current:
                epochs.append((current_time, current))
                current = []
            current_time = t
        current.append(line)
    if current_time is not None and current:
        epochs.append((current_time, current))
    return epochs


def clock(text):
    h, m, s = text.split(":")
    return int(h) * 3600 + int(m) * 60 + float(s)


def ubx_frames(buffer):
    """Complete UBX frames with a good checksum from `buffer` (consumed), as (class, id, payload)."""
    frames = []
    while True:
        start = buffer.find(b"\xb5\x62")
        if start < 0:
            del buffer[: max(0, len(buffer) - 1)]
            return frames
        del buffer[:start]
        if len(buffer) < 6:
            return frames
        length = buffer[4] | buffer[5] << 8
        if len(buffer) < 8 + length:
            return frames
        body = bytes(buffer[2 : 6 + length])
        a = b = 0
        for byte in body:
            a = (a + byte) & 0xFF
            b = (b + a) & 0xFF
        if buffer[6 + length] == a and buffer[7 + length] == b:
            frames.append((body[0], body[1], body[4:]))
            del buffer[: 8 + length]
        else:
            del buffer[:2]


class Receiver:
    def __init__(self, args):
        self.args = args
        self.tracking = True
        self.stopped_by = None          # "gnss-stop" (only a start wakes it) or "sleep" (any byte does)
        self.resume_at = 0.0            # no epoch before this (monotonic): acquiring after a start
        self.rx = bytearray()
        self.state_log = open(args.state_log, "a") if args.state_log else None
        self.commands_log = open(args.commands_log, "a") if args.commands_log else None
        self.log_state("on", "start")

    def log_state(self, state, why):
        if self.state_log:
            self.state_log.write(json.dumps({"mono": time.monotonic(), "state": state, "why": why}) + "\n")
            self.state_log.flush()

    def log_command(self, command):
        if self.commands_log:
            self.commands_log.write(json.dumps({"mono": time.monotonic(), "command": command}) + "\n")
            self.commands_log.flush()

    def stop(self, by, why):
        self.log_command(why)
        if self.args.ignore or not self.tracking:
            return
        self.tracking = False
        self.stopped_by = by
        self.log_state("off", why)

    def start(self, why):
        if self.args.ignore or self.tracking:
            return
        self.tracking = True
        self.stopped_by = None
        self.resume_at = time.monotonic() + self.args.ttff
        self.log_state("on", why)

    def received(self, data):
        """Bytes gpsd wrote to the receiver (its probes, geomon's commands)."""
        if self.args.obey == "none":
            return
        if not self.tracking and self.stopped_by == "sleep":
            # Backup or standby: activity on the UART wakes it (the bytes themselves are lost).
            self.log_command("wake by uart activity")
            self.start("uart wake")
            return
        self.rx += data
        if self.args.obey == "ubx":
            for cls, mid, payload in ubx_frames(self.rx):
                if (cls, mid) == (0x06, 0x04) and len(payload) >= 3:
                    mode = payload[2]
                    if mode == 0x08:
                        self.stop("gnss-stop", "ubx cfg-rst gnss stop")
                    elif mode == 0x09:
                        self.log_command("ubx cfg-rst gnss start")
                        self.start("ubx gnss start")
                elif (cls, mid) == (0x02, 0x41):
                    self.stop("sleep", "ubx rxm-pmreq backup")
        elif self.args.obey == "mtk":
            text = self.rx.decode("latin-1")
            while "\n" in text:
                line, text = text.split("\n", 1)
                if line.strip().startswith("$PMTK161"):
                    self.stop("sleep", "mtk standby")
            self.rx = bytearray(text.encode("latin-1"))
            if len(self.rx) > 4096:
                del self.rx[:-256]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("log")
    parser.add_argument("--link", required=True)
    parser.add_argument("--from", dest="start")
    parser.add_argument("--until")
    parser.add_argument("--excerpt")
    parser.add_argument("--obey", choices=["none", "ubx", "mtk"], default="none")
    parser.add_argument("--ignore", action="store_true")
    parser.add_argument("--ttff", type=float, default=1.0)
    parser.add_argument("--state-log")
    parser.add_argument("--commands-log")
    parser.add_argument("--start-on-signal", action="store_true")
    parser.add_argument("--linger", type=float, default=3.0)
    args = parser.parse_args()

    epochs = read_epochs(args.log)
    if args.start:
        epochs = [e for e in epochs if e[0] >= clock(args.start)]
    if args.until:
        epochs = [e for e in epochs if e[0] <= clock(args.until)]
    if not epochs:
        sys.exit("receiver-sim: no epoch in the log (or in --from/--until)")
    if args.excerpt:
        with open(args.excerpt, "w", encoding="latin-1") as f:
            for _, lines in epochs:
                for line in lines:
                    f.write(line + "\r\n")

    master, slave = os.openpty()
    tty.setraw(slave)
    attrs = termios.tcgetattr(slave)
    attrs[3] &= ~termios.ECHO
    termios.tcsetattr(slave, termios.TCSANOW, attrs)
    name = os.ttyname(slave)
    if os.path.lexists(args.link):
        os.unlink(args.link)
    os.symlink(name, args.link)

    started = {"at": None}
    stop = {"now": False}
    signal.signal(signal.SIGUSR1, lambda *_: started.__setitem__("at", started["at"] or time.monotonic()))
    signal.signal(signal.SIGTERM, lambda *_: stop.__setitem__("now", True))
    signal.signal(signal.SIGINT, lambda *_: stop.__setitem__("now", True))
    if not args.start_on_signal:
        started["at"] = time.monotonic()

    receiver = Receiver(args)
    first = epochs[0][0]
    index = 0
    end = None
    try:
        while not stop["now"]:
            now = time.monotonic()
            if started["at"] is not None and index < len(epochs):
                due = started["at"] + (epochs[index][0] - first)
                if now >= due:
                    if receiver.tracking and now >= receiver.resume_at:
                        os.write(master, "".join(line + "\r\n" for line in epochs[index][1]).encode("latin-1"))
                    index += 1
                    if index == len(epochs):
                        end = now + args.linger
                    continue
                timeout = min(0.05, due - now)
            else:
                timeout = 0.05
            if end is not None and now >= end:
                break
            ready, _, _ = select.select([master], [], [], max(0.0, timeout))
            if ready:
                try:
                    data = os.read(master, 4096)
                except OSError:
                    data = b""
                if data:
                    receiver.received(data)
    finally:
        receiver.log_state("off", "end")
        try:
            os.unlink(args.link)
        except OSError:
            pass


if __name__ == "__main__":
    main()
