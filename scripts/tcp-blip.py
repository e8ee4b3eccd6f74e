#!/usr/bin/env python3
"""A TCP relay for tests: forwards 127.0.0.1:LISTEN to 127.0.0.1:TARGET, and on SIGUSR1
cuts every connection and stops listening (the network gone), on SIGUSR2 listens again.
What a link to a remote gpsd does when it drops while gpsd itself runs on."""
import selectors, signal, socket, sys

listen_port, target_port = int(sys.argv[1]), int(sys.argv[2])
sel = selectors.DefaultSelector()
pairs = {}          # socket -> its peer
listener = None
flags = {"down": False, "up": False}


def open_listener():
    global listener
    listener = socket.socket()
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", listen_port))
    listener.listen(8)
    sel.register(listener, selectors.EVENT_READ)


def close_all():
    global listener
    for s in list(pairs):
        close_pair(s)
    if listener is not None:
        sel.unregister(listener)
        listener.close()
        listener = None


def close_pair(s):
    peer = pairs.pop(s, None)
    for x in (s, peer):
        if x is None:
            continue
        pairs.pop(x, None)
        try:
            sel.unregister(x)
        except (KeyError, ValueError):
            pass
        x.close()


signal.signal(signal.SIGUSR1, lambda *_: flags.__setitem__("down", True))
signal.signal(signal.SIGUSR2, lambda *_: flags.__setitem__("up", True))
open_listener()
print("listening", flush=True)
while True:
    if flags["down"]:
        flags["down"] = False
        close_all()
    if flags["up"]:
        flags["up"] = False
        if listener is None:
            open_listener()
    for key, _ in sel.select(timeout=0.1):
        s = key.fileobj
        if s is listener:
            client, _ = listener.accept()
            try:
                upstream = socket.create_connection(("127.0.0.1", target_port))
            except OSError:
                client.close()
                continue
            pairs[client], pairs[upstream] = upstream, client
            sel.register(client, selectors.EVENT_READ)
            sel.register(upstream, selectors.EVENT_READ)
        elif s in pairs:
            try:
                data = s.recv(65536)
            except OSError:
                data = b""
            if not data:
                close_pair(s)
            else:
                pairs[s].sendall(data)
