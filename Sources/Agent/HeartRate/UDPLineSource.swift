import Foundation

/// NDJSON bridge messages as UDP datagrams on 127.0.0.1:`port` (`[hr] transport = "udp"`).
/// Reads on a thread of its own; `reacquire()` closes and binds the socket again.
final class UDPLineSource: HeartRateTransport, @unchecked Sendable {
    let name = "udp"
    private let port: Int
    private let thread = TransportThread()
    var events: AsyncStream<HeartRateTransportEvent> { thread.events }
    private var sink: AsyncStream<HeartRateTransportEvent>.Continuation { thread.sink }
    private var shouldStop: Bool { thread.shouldStop }

    init(port: Int) {
        self.port = port
    }

    func start() { thread.start(name: "hr-udp") { [self] in readLoop() } }

    func stop() {
        thread.requestStop()
        thread.waitUntilFinished(seconds: 2)
    }

    func reacquire() { thread.requestReacquire() }

    private func readLoop() {
        while !shouldStop {
            let fd = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            address.sin_port = UInt16(port).bigEndian
            var reuse: Int32 = 1
            setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &reuse, socklen_t(MemoryLayout<Int32>.size))
            let bound = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            guard fd >= 0, bound == 0 else {
                sink.yield(.failed("cannot bind 127.0.0.1:\(port): \(String(cString: strerror(errno)))"))
                close(fd)
                thread.pause(seconds: 1)
                continue
            }
            var timeout = timeval(tv_sec: 0, tv_usec: 250_000)
            setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
            sink.yield(.ready)
            var buffer = [UInt8](repeating: 0, count: 65_536)
            while !shouldStop {
                if thread.takeReacquireRequest() { break }
                let count = recv(fd, &buffer, buffer.count, 0)
                if count < 0 {
                    if errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR {
                        sink.yield(.idle)
                        continue
                    }
                    sink.yield(.failed("receive failed: \(String(cString: strerror(errno)))"))
                    break
                }
                // One datagram may carry several lines; each is bounded by the parser.
                for line in buffer[0..<count].split(separator: UInt8(ascii: "\n")) where !line.isEmpty {
                    sink.yield(.line(Array(line)))
                }
            }
            close(fd)
        }
    }
}
