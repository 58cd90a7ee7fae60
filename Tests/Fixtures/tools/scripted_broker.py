#!/usr/bin/env python3
"""A stand-in MQTT v5 broker that answers PUBLISH with the PUBACK reason codes it is told to:
what a real mosquitto cannot be made to do on demand (0x80 unspecified, 0x89 server busy,
0x97 quota exceeded are an overloaded or misbehaving broker's answers).

Usage: scripted_broker.py PORT RULE...
  RULE is TOPIC_SUFFIX=CODE[xCOUNT]: PUBLISHes whose topic ends with TOPIC_SUFFIX get CODE (hex),
  the first COUNT of them only if xCOUNT is given; everything else gets 0x00.

Serves one client at a time: CONNECT/CONNACK, SUBSCRIBE/SUBACK (QoS 1 granted), PUBLISH/PUBACK,
PINGREQ/PINGRESP, DISCONNECT. Prints "listening" once ready, then one JSON line per PUBLISH
received: {"topic", "payload", "code"}.
"""
import json
import socket
import sys


def parse_rules(args):
    rules = []
    for arg in args:
        suffix, _, spec = arg.partition("=")
        code, _, count = spec.partition("x")
        rules.append({"suffix": suffix, "code": int(code, 16), "left": int(count) if count else None})
    return rules


def read_exactly(sock, n):
    data = b""
    while len(data) < n:
        chunk = sock.recv(n - len(data))
        if not chunk:
            raise ConnectionError("closed")
        data += chunk
    return data


def read_packet(sock):
    first = read_exactly(sock, 1)[0]
    multiplier, length = 1, 0
    while True:
        byte = read_exactly(sock, 1)[0]
        length += (byte & 0x7F) * multiplier
        multiplier *= 128
        if byte & 0x80 == 0:
            break
    return first, read_exactly(sock, length)


def varint(value):
    out = b""
    while True:
        byte = value % 128
        value //= 128
        out += bytes([byte | (0x80 if value else 0)])
        if not value:
            return out


def read_varint(body, index):
    multiplier, value = 1, 0
    while True:
        byte = body[index]
        index += 1
        value += (byte & 0x7F) * multiplier
        multiplier *= 128
        if byte & 0x80 == 0:
            return value, index


def packet(kind, body):
    return bytes([kind]) + varint(len(body)) + body


def serve(conn, rules):
    while True:
        first, body = read_packet(conn)
        kind = first >> 4
        if kind == 1:  # CONNECT: accept; no properties
            conn.sendall(packet(0x20, b"\x00\x00\x00"))
        elif kind == 8:  # SUBSCRIBE: packet id, properties, then filters with options
            packet_id = body[:2]
            props, index = read_varint(body, 2)
            index += props
            granted = b""
            while index < len(body):
                length = int.from_bytes(body[index:index + 2], "big")
                index += 2 + length + 1
                granted += b"\x01"
            conn.sendall(packet(0x90, packet_id + b"\x00" + granted))
        elif kind == 3:  # PUBLISH
            qos = (first >> 1) & 3
            length = int.from_bytes(body[:2], "big")
            topic = body[2:2 + length].decode()
            index = 2 + length
            packet_id = b""
            if qos:
                packet_id = body[index:index + 2]
                index += 2
            props, index = read_varint(body, index)
            payload = body[index + props:]
            code = 0
            for rule in rules:
                if topic.endswith(rule["suffix"]) and (rule["left"] is None or rule["left"] > 0):
                    code = rule["code"]
                    if rule["left"] is not None:
                        rule["left"] -= 1
                    break
            print(json.dumps({"topic": topic, "payload": payload.decode(errors="replace"), "code": code}), flush=True)
            if qos == 1:
                conn.sendall(packet(0x40, packet_id + bytes([code]) + b"\x00"))
        elif kind == 12:  # PINGREQ
            conn.sendall(packet(0xD0, b""))
        elif kind == 14:  # DISCONNECT
            return


def main():
    port = int(sys.argv[1])
    rules = parse_rules(sys.argv[2:])
    server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    server.bind(("127.0.0.1", port))
    server.listen(1)
    print("listening", flush=True)
    while True:
        conn, _ = server.accept()
        try:
            serve(conn, rules)
        except (ConnectionError, OSError):
            pass
        finally:
            conn.close()


if __name__ == "__main__":
    main()
