#!/usr/bin/env python3
"""A gpsd stand-in that sends bad input: what a real gpsd can't be made to send.

Usage: hostile_gpsd.py PORT
Speaks just enough of gpsd's protocol (VERSION, then reports after ?WATCH) and, per client:
garbage lines, TPVs with NaN-like and absurd values, a flood of 20 000 junk reports, then a
few valid fixes at lat 10.5, lon 20.25 (+ i * 1e-4) so the test can see ingest still works.
Prints "listening" once ready, "done <n>" after each client got everything.
"""
import socket
import sys
import threading

VERSION = '{"class":"VERSION","release":"3.22","rev":"3.22","proto_major":3,"proto_minor":14}\n'


def tpv(i, lat, lon, mode=3, extra=""):
    return ('{"class":"TPV","device":"/dev/fake","mode":%d,"time":"2026-11-21T10:00:%02d.000Z",'
            '"lat":%s,"lon":%s,"altHAE":50.0,"altMSL":40.0,"eph":5.0,"epv":8.0,"speed":1.0,"track":90.0%s}\n'
            % (mode, i % 60, lat, lon, extra))


def serve(conn, number):
    try:
        conn.sendall(VERSION.encode())
        conn.recv(4096)  # ?WATCH
        bad = [
            "garbage that is not json\n",
            "{\"class\":\"TPV\",\"mode\":3,\"lat\":\n",
            "{\"class\":\"TPV\"" + "x" * 9000 + "\n",
            tpv(1, "200.0", "20.0"),
            tpv(2, "10.0", "-999.0"),
            tpv(3, "1e999", "20.0"),
            tpv(4, "10.0", "20.0", mode=1),
            "\x00\xff\xfe binary\n",
        ]
        for line in bad:
            conn.sendall(line.encode("latin-1"))
        flood = "".join(tpv(i, "95.0", "20.0") for i in range(20000))
        conn.sendall(flood.encode())
        good = "".join(tpv(10 + i, "%.4f" % (10.5 + i * 1e-4), "%.4f" % (20.25 + i * 1e-4)) for i in range(5))
        conn.sendall(good.encode())
        print("done %d" % number, flush=True)
        # Keep the session open, sending nothing more, until the client goes.
        while conn.recv(4096):
            pass
    except OSError:
        pass
    finally:
        conn.close()


def main():
    server = socket.socket()
    server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    server.bind(("127.0.0.1", int(sys.argv[1])))
    server.listen(5)
    print("listening", flush=True)
    number = 0
    while True:
        conn, _ = server.accept()
        number += 1
        threading.Thread(target=serve, args=(conn, number), daemon=True).start()


if __name__ == "__main__":
    main()
