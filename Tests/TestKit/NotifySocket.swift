import Foundation
import Synchronization

/// A stand-in for systemd's notification socket: a unix datagram socket whose messages
/// (`READY=1`, `WATCHDOG=1`, `STATUS=…`) are collected with their arrival time.
public final class NotifySocket: Sendable {
    public let path: String
    private let fd: Int32
    private let received = Mutex<[(Date, String)]>([])
    private let closed = Mutex(false)

    public init(directory: TemporaryDirectory) throws {
        path = directory.file("notify.sock")
        fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { bytes in
            for (index, byte) in path.utf8.enumerated() { bytes[index] = byte }
        }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard bound == 0 else { throw WaitTimeout(description: "cannot bind \(path)") }
        var timeout = timeval(tv_sec: 0, tv_usec: 200_000)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        let reader = Thread { [self] in
            var buffer = [UInt8](repeating: 0, count: 4096)
            while !closed.withLock({ $0 }) {
                let count = recv(fd, &buffer, buffer.count, 0)
                if count > 0 {
                    let text = String(decoding: buffer[0..<count], as: UTF8.self)
                    received.withLock { $0.append((Date(), text)) }
                }
            }
            close(fd)
        }
        reader.start()
    }

    /// Every message so far, split into its `KEY=value` lines.
    public var messages: [(at: Date, lines: [String])] {
        received.withLock { $0.map { ($0.0, $0.1.split(separator: "\n").map(String.init)) } }
    }

    public func count(_ line: String) -> Int { messages.filter { $0.lines.contains(line) }.count }

    deinit { closed.withLock { $0 = true } }
}
