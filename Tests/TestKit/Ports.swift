import Foundation
import Synchronization

public enum Ports {
    /// A TCP port on 127.0.0.1 that is free now, chosen below the kernel's ephemeral range:
    /// a server a test stops and starts again must get its port back, and a port from the
    /// ephemeral range can meanwhile become the source port of any outgoing connection.
    ///
    /// Never the same port twice in one process: tests run in parallel, and many take a port for a
    /// server they start seconds later (gpsfake after the agent is up), so a port free now could
    /// otherwise be handed to another test in between, and its client would talk to the wrong
    /// server.
    public static func free() -> Int {
        let (low, _) = ephemeralRange()
        let upper = max(2000, low) - 1
        for _ in 0..<1000 {
            let port = Int.random(in: 1025...upper)
            if canBind(port) && handedOut.withLock({ $0.insert(port).inserted }) { return port }
        }
        return Int.random(in: 1025...upper)
    }

    private static let handedOut = Mutex(Set<Int>())

    static func ephemeralRange() -> (Int, Int) {
        let text = (try? String(contentsOfFile: "/proc/sys/net/ipv4/ip_local_port_range", encoding: .utf8)) ?? "32768 60999"
        let parts = text.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\n" }).compactMap { Int($0) }
        return parts.count == 2 ? (parts[0], parts[1]) : (32768, 60999)
    }

    static func canBind(_ port: Int) -> Bool {
        withLoopbackSocket(port: port) { fd, address, length in bind(fd, address, length) } == 0
    }

    /// Whether something accepts TCP connections on 127.0.0.1:`port`.
    public static func isListening(_ port: Int) -> Bool {
        withLoopbackSocket(port: port) { fd, address, length in connect(fd, address, length) } == 0
    }

    /// Runs `body` with a fresh TCP socket and the address 127.0.0.1:`port`; closes the socket after.
    private static func withLoopbackSocket(
        port: Int, _ body: (Int32, UnsafePointer<sockaddr>, socklen_t) -> Int32
    ) -> Int32 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        return withLoopbackAddress(port: port) { body(fd, $0, $1) }
    }

    /// Runs `body` with the socket address 127.0.0.1:`port`.
    public static func withLoopbackAddress<Result>(port: Int, _ body: (UnsafePointer<sockaddr>, socklen_t) -> Result) -> Result {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = UInt16(port).bigEndian
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
    }
}
