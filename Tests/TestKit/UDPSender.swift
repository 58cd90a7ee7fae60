import Foundation

/// Sends NDJSON lines as UDP datagrams to 127.0.0.1, as a heart-rate bridge would.
public enum UDPSender {
    public static func send(port: Int, lines: [String], linesPerDatagram: Int = 1) {
        let fd = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = UInt16(port).bigEndian
        for start in stride(from: 0, to: lines.count, by: linesPerDatagram) {
            let datagram = Array(lines[start..<min(start + linesPerDatagram, lines.count)].joined(separator: "\n").utf8)
            _ = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    sendto(fd, datagram, datagram.count, 0, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
        }
    }
}
