#!/usr/bin/python3
"""A geolocation web service (the Ichnaea/beaconDB API GeoClue's Wi-Fi source speaks), on
127.0.0.1 only: every POST is answered with the position in ANSWER (a file the test rewrites:
{"lat": .., "lng": .., "accuracy": ..}); each request is logged to stdout.

Usage: geolocate-stub.py PORTFILE ANSWER
Binds an ephemeral port and writes it to PORTFILE.
"""
import http.server, json, os, sys

portfile, answer = sys.argv[1], sys.argv[2]

class Handler(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        a = json.load(open(answer))
        out = json.dumps({"location": {"lat": a["lat"], "lng": a["lng"]}, "accuracy": a["accuracy"]}).encode()
        print("stub: answered %s" % out.decode(), flush=True)
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(out)))
        self.end_headers()
        self.wfile.write(out)

    def log_message(self, *args):
        pass

srv = http.server.HTTPServer(("127.0.0.1", 0), Handler)
with open(portfile + ".tmp", "w") as f:
    f.write("%d\n" % srv.server_address[1])
os.rename(portfile + ".tmp", portfile)
srv.serve_forever()
