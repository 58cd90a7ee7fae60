import Foundation

/// NDJSON bridge messages as UDP datagrams on 127.0.0.1:`port` (`[hr] transport = "udp"`).
/// Reads on a thread of its own; `reacquire()` closes and binds the socket again.
///
/// UDP cannot push back: a datagram finds room or is dropped, and every drop is counted
/// (`udp_overflow`) — those the kernel drops when the socket's buffer is full (reported by
/// `SO_RXQ_OVFL`) and those the agent drops when its own queue is full.
final class UDPLineSource: BridgeTransport, Sendable {
    let name = "udp"
    private let port: Int
    private let thread: TransportThread
    private let dropped: ReasonCounter
    var events: HeartRateTransportEvents { thread.events }
    private var shouldStop: Bool { thread.shouldStop }

    init(port: Int, maxLineBytes: Int, dropped: ReasonCounter, capacity: Int = TransportThread.defaultCapacity) {
        self.port = port
        self.dropped = dropped
        thread = TransportThread(maxLineBytes: maxLineBytes, capacity: capacity)
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
            var on: Int32 = 1
            setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, socklen_t(MemoryLayout<Int32>.size))
            // The kernel reports how many datagrams it dropped for want of buffer space.
            setsockopt(fd, SOL_SOCKET, SO_RXQ_OVFL, &on, socklen_t(MemoryLayout<Int32>.size))
            let bound = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            guard fd >= 0, bound == 0 else {
                thread.deliver(.failed("cannot bind 127.0.0.1:\(port): \(String(cString: strerror(errno)))"))
                close(fd)
                thread.pause(seconds: 1)
                continue
            }
            var timeout = timeval(tv_sec: 0, tv_usec: 250_000)
            setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
            thread.deliver(.ready)
            receive(on: fd)
            close(fd)
        }
    }

    /// Receives datagrams until a rebind is asked for, the transport stops, or the socket fails.
    private func receive(on fd: Int32) {
        var datagram = Datagram()
        var kernelDrops: UInt32 = 0
        while !shouldStop {
            if thread.takeReacquireRequest() { return }
            guard let count = datagram.receive(fd) else {
                if errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR {
                    thread.idle()
                    continue
                }
                thread.deliver(.failed("receive failed: \(String(cString: strerror(errno)))"))
                return
            }
            if let total = datagram.kernelDropCount, total > kernelDrops {
                dropped.count(IngestCounters.HeartRateDrop.udpOverflow, Int(total - kernelDrops), detail: "the socket's receive buffer was full")
                kernelDrops = total
            }
            // One datagram may carry several lines; each is bounded by the parser. All or none.
            let lines = datagram.bytes(count).split(separator: UInt8(ascii: "\n")).map(Array.init)
            if !thread.offer(lines: lines) {
                dropped.count(IngestCounters.HeartRateDrop.udpOverflow, detail: "the agent's queue (\(thread.capacity)) was full")
            }
        }
    }
}

/// One `recvmsg` buffer with room for the `SO_RXQ_OVFL` control message.
private struct Datagram {
    private var buffer = [UInt8](repeating: 0, count: 65_536)
    private var control = [UInt8](repeating: 0, count: 64)
    private var controlLength = 0

    /// Receives one datagram; its length, or nil with `errno` set.
    mutating func receive(_ fd: Int32) -> Int? {
        let capacity = buffer.count
        let controlCapacity = control.count
        var controlUsed = 0
        let count = buffer.withUnsafeMutableBytes { data in
            control.withUnsafeMutableBytes { controlBytes in
                var vector = iovec(iov_base: data.baseAddress, iov_len: capacity)
                return withUnsafeMutablePointer(to: &vector) { vectorPointer in
                    var header = msghdr()
                    header.msg_iov = vectorPointer
                    header.msg_iovlen = 1
                    header.msg_control = controlBytes.baseAddress
                    header.msg_controllen = controlCapacity
                    let received = recvmsg(fd, &header, 0)
                    controlUsed = Int(header.msg_controllen)
                    return received
                }
            }
        }
        controlLength = count >= 0 ? controlUsed : 0
        return count >= 0 ? count : nil
    }

    func bytes(_ count: Int) -> ArraySlice<UInt8> { buffer[0..<count] }

    /// The socket's count of datagrams dropped so far, when the kernel attached it.
    var kernelDropCount: UInt32? {
        // struct cmsghdr { size_t len; int level; int type; } then the data, 8-byte aligned.
        let headerSize = MemoryLayout<cmsghdr>.size
        var offset = 0
        return control.withUnsafeBytes { bytes -> UInt32? in
            while offset + headerSize <= controlLength {
                let length = bytes.loadUnaligned(fromByteOffset: offset, as: Int.self)
                let level = bytes.loadUnaligned(fromByteOffset: offset + MemoryLayout<Int>.size, as: Int32.self)
                let type = bytes.loadUnaligned(fromByteOffset: offset + MemoryLayout<Int>.size + 4, as: Int32.self)
                guard length >= headerSize else { return nil }
                if level == SOL_SOCKET && type == SO_RXQ_OVFL && offset + headerSize + 4 <= controlLength {
                    return bytes.loadUnaligned(fromByteOffset: offset + headerSize, as: UInt32.self)
                }
                offset += (length + 7) & ~7
            }
            return nil
        }
    }
}
