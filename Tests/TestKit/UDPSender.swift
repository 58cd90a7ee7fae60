import Foundation

/// Sends NDJSON lines as UDP datagrams to 127.0.0.1, as a heart-rate bridge would.
public enum UDPSender {
    public static func send(port: Int, lines: [String], linesPerDatagram: Int = 1) {
        let fd = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
        defer { close(fd) }
        for start in stride(from: 0, to: lines.count, by: linesPerDatagram) {
            let datagram = Array(lines[start..<min(start + linesPerDatagram, lines.count)].joined(separator: "\n").utf8)
            _ = Ports.withLoopbackAddress(port: port) { address, length in sendto(fd, datagram, datagram.count, 0, address, length) }
        }
    }
}
