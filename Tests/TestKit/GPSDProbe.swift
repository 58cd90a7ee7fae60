import Foundation

/// What a gpsd on a port says about its devices, asked as any client would (`?DEVICES;`): for a
/// fixture to know that gpsfake's device was really added before an agent is started against it.
enum GPSDProbe {
    /// The device paths gpsd lists, or nil if it could not be asked (not listening, no answer
    /// within `timeout` seconds).
    static func devicePaths(port: Int, timeout: Double = 2) -> [String]? {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var wait = timeval(tv_sec: 0, tv_usec: 200_000)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &wait, socklen_t(MemoryLayout<timeval>.size))
        guard Ports.withLoopbackAddress(port: port, { connect(fd, $0, $1) }) == 0 else { return nil }
        let request = Array("?DEVICES;\n".utf8)
        guard send(fd, request, request.count, Int32(MSG_NOSIGNAL)) == request.count else { return nil }
        var received = Data()
        var buffer = [UInt8](repeating: 0, count: 4096)
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            let count = recv(fd, &buffer, buffer.count, 0)
            if count == 0 { return nil }
            if count > 0 { received.append(contentsOf: buffer[0..<count]) }
            for line in received.split(separator: UInt8(ascii: "\n")) {
                guard let object = try? JSONSerialization.jsonObject(with: Data(line)) as? [String: Any],
                      object["class"] as? String == "DEVICES" else { continue }
                let devices = object["devices"] as? [[String: Any]] ?? []
                return devices.compactMap { $0["path"] as? String }
            }
        }
        return nil
    }

    /// The pseudo-terminal gpsfake feeds (the slave side it holds open), from /proc/`pid`/fd.
    static func fakePTY(ofGPSFake pid: pid_t) -> String? {
        guard let fds = try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd") else { return nil }
        return fds.lazy.compactMap { try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(pid)/fd/\($0)") }
            .first { $0.hasPrefix("/dev/pts/") }
    }

    /// Adds `device` to a gpsd through its control socket, as gpsfake and udev's hotplug do.
    static func add(device: String, controlSocket: String) -> Bool {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let path = Array(controlSocket.utf8)
        guard path.count < MemoryLayout.size(ofValue: address.sun_path) else { return false }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (index, byte) in path.enumerated() { raw[index] = byte }
        }
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard connected == 0 else { return false }
        let command = Array("+\(device)\r\n\u{0}".utf8)
        guard send(fd, command, command.count, Int32(MSG_NOSIGNAL)) == command.count else { return false }
        var reply = [UInt8](repeating: 0, count: 12)
        var wait = timeval(tv_sec: 2, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &wait, socklen_t(MemoryLayout<timeval>.size))
        return recv(fd, &reply, reply.count, 0) > 0 && reply.starts(with: Array("OK".utf8))
    }
}
