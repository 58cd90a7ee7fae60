import Foundation
import Testing
import TestKit

@testable import Store

/// The unauthenticated bridge inputs stay local, and a bridge child gets nothing of the agent's.
@Suite("Bridge isolation")
struct BridgeIsolationTests {
    /// The open descriptors of `pid`, as numbers.
    static func descriptors(of pid: pid_t) -> [Int] {
        ((try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd")) ?? []).compactMap { Int($0) }.sorted()
    }

    /// A hexadecimal mask line (`SigIgn:`, `SigBlk:`) of /proc/<pid>/status.
    static func signalMask(_ name: String, of pid: pid_t) -> UInt64? {
        let status = (try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)) ?? ""
        let line = status.split(separator: "\n").first { $0.hasPrefix("\(name):") }
        return line.flatMap { UInt64($0.dropFirst(name.count + 1).trimmingCharacters(in: .whitespaces), radix: 16) }
    }

    /// Checks that the newest bridge child (`latest()`, restarted by the agent) has only stdin
    /// (/dev/null), stdout (the agent's pipe) and stderr open, and no signal ignored or blocked:
    /// not the agent's broker connection, store or other children's pipes. Used by
    /// HeartRateCommandTests, whose bridge rig this needs.
    static func expectInheritsNothing(latest: () -> pid_t?) async throws {
        expectNothingInherited(try await inheritance(latest: latest))
    }

    /// What a bridge child holds from its parent: descriptors, where stdin and stdout lead, signal masks.
    struct Inheritance: Sendable {
        let descriptors: [Int]
        let stdin: String?
        let stdout: String?
        let ignoredSignals: UInt64?
        let blockedSignals: UInt64?
    }

    /// The newest bridge child's inheritance, read once it runs `sleep` (after the shell's exec).
    static func inheritance(latest: () -> pid_t?) async throws -> Inheritance {
        var child: pid_t = 0
        var listed: [Int] = []
        // Listed once it runs `sleep` (after the shell's exec), while the agent has it running.
        try await Wait.until(timeout: 10, "a bridge child running sleep") {
            guard let newest = latest() else { return false }
            child = newest
            let command = (try? String(contentsOfFile: "/proc/\(newest)/comm", encoding: .utf8)) ?? ""
            listed = descriptors(of: newest)
            return command.hasPrefix("sleep") && !listed.isEmpty
        }
        return Inheritance(
            descriptors: listed,
            stdin: try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(child)/fd/0"),
            stdout: try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(child)/fd/1"),
            ignoredSignals: signalMask("SigIgn", of: child), blockedSignals: signalMask("SigBlk", of: child))
    }

    static func expectNothingInherited(_ inheritance: Inheritance) {
        #expect(inheritance.descriptors == [0, 1, 2], "the bridge inherited descriptors: \(inheritance.descriptors)")
        #expect(inheritance.stdin == "/dev/null")
        #expect(inheritance.stdout?.hasPrefix("pipe:") == true)
        #expect(inheritance.ignoredSignals == 0, "ignored signals are inherited across exec")
        #expect(inheritance.blockedSignals == 0)
    }

    /// The inodes of the sockets `pid` has open.
    static func socketInodes(of pid: pid_t) -> Set<String> {
        Set(descriptors(of: pid).compactMap { fd in
            guard let target = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(pid)/fd/\(fd)"),
                target.hasPrefix("socket:[")
            else { return nil }
            return String(target.dropFirst("socket:[".count).dropLast())
        })
    }

    /// Local addresses (`0100007F:15B5`) of the rows of /proc/net/udp or udp6 whose inode is in `inodes`.
    static func boundAddresses(table: String, inodes: Set<String>) -> [String] {
        let text = (try? String(contentsOfFile: "/proc/net/\(table)", encoding: .utf8)) ?? ""
        return text.split(separator: "\n").dropFirst().compactMap { row in
            let columns = row.split(separator: " ")
            guard columns.count > 9, inodes.contains(String(columns[9])) else { return nil }
            return String(columns[1])
        }
    }

    /// The first IPv4 address of this machine that is not loopback, if there is one.
    static func nonLoopbackIPv4() -> String? {
        var list: UnsafeMutablePointer<ifaddrs>?
        guard getifaddrs(&list) == 0 else { return nil }
        defer { freeifaddrs(list) }
        var cursor = list
        while let entry = cursor {
            defer { cursor = entry.pointee.ifa_next }
            guard let address = entry.pointee.ifa_addr, address.pointee.sa_family == sa_family_t(AF_INET) else { continue }
            var text = [CChar](repeating: 0, count: Int(INET_ADDRSTRLEN))
            let ipv4 = UnsafeRawPointer(address).assumingMemoryBound(to: sockaddr_in.self).pointee
            var raw = ipv4.sin_addr
            inet_ntop(AF_INET, &raw, &text, socklen_t(text.count))
            let string = String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            if !string.hasPrefix("127.") { return string }
        }
        return nil
    }

    @Test("the UDP bridge socket is bound to 127.0.0.1 only: a datagram to another address of this machine is not read")
    func udpLoopbackOnly() async throws {
        let broker = try MosquittoBroker()
        let port = Ports.free()
        let agent = try AgentProcess(
            brokerPort: broker.port, extraConfig: "[hr]\ntransport = \"udp\"\nudp_port = \(port)\nstall_timeout_s = 30\n")
        let pid = agent.process!.pid
        let hexPort = String(format: "%04X", port)
        var bound: [String] = []
        try await Wait.until(timeout: 15, "the agent to bind UDP port \(port)") {
            bound = Self.boundAddresses(table: "udp", inodes: Self.socketInodes(of: pid)).filter { $0.hasSuffix(":\(hexPort)") }
            return !bound.isEmpty
        }
        #expect(bound == ["0100007F:\(hexPort)"], "bound as \(bound), not to 127.0.0.1 alone")
        let inodes = Self.socketInodes(of: pid)
        #expect(Self.boundAddresses(table: "udp6", inodes: inodes).filter { $0.hasSuffix(":\(hexPort)") }.isEmpty)

        let day = HeartRateFixture.yesterday
        let lines = try HeartRateFixture.lines(on: day)
        let count = { (try? SQLiteConnection(path: agent.storePath, readOnly: true).scalarInt("SELECT count(*) FROM hr_sample")) ?? nil }
        guard let other = Self.nonLoopbackIPv4() else {
            Issue.record("this machine has no non-loopback IPv4 address; only the socket table was checked")
            return
        }
        // First to the other address, then a marker over loopback: datagrams to one socket are read in
        // order, so once the marker is stored the first would have been too, had the socket heard it.
        let fd = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr(other)
        address.sin_port = UInt16(port).bigEndian
        let datagram = Array(lines[0].utf8)
        let sent = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { sendto(fd, datagram, datagram.count, 0, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        #expect(sent == datagram.count)
        try await Wait.until(timeout: 10, "the loopback marker to be stored") {
            if (count() ?? 0) == 0 { UDPSender.send(port: port, lines: [lines[1]]) }
            return (count() ?? 0) > 0
        }
        let db = try SQLiteConnection(path: agent.storePath, readOnly: true)
        #expect(try db.scalarInt("SELECT count(*) FROM hr_sample") == 1, "the datagram sent to \(other) was read")
        // 08:00:01Z is the first fixture line's time, the one sent to the other address.
        let firstMs = 1_795_248_001_000 + HeartRateFixture.shiftMs(to: day)
        let atFirst = try db.statement(sql: "SELECT count(*) FROM hr_sample WHERE ts_ms = ?").bind(.integer(firstMs))
        #expect(try atFirst.step() && atFirst.int64(0) == 0, "the datagram sent to \(other) was read")
        atFirst.reset()
        #expect(agent.stop() == 0)
    }
}
