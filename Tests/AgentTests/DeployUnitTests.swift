import Foundation
import Testing
import TestKit

/// deploy/keepalive.service, checked by systemd's own tool.
@Suite("systemd unit")
struct DeployUnitTests {
    static let unit = "\(Tools.packageRoot)/deploy/keepalive.service"

    func run(_ arguments: [String]) async throws -> (Int32?, String) {
        let process = try ManagedProcess(name: "systemd-analyze", executable: Tools.find("systemd-analyze"), arguments: arguments)
        let status = await process.waitForExit(timeout: 60)
        return (status, process.text)
    }

    @Test("systemd-analyze verify accepts it (with the built binary in place of /usr/bin/keepalive)")
    func verify() async throws {
        let directory = try TemporaryDirectory("unit")
        let text = try String(contentsOfFile: Self.unit, encoding: .utf8).replacingOccurrences(of: "/usr/bin/keepalive", with: Tools.agent)
        let path = try directory.write("keepalive.service", text)
        let (status, output) = try await run(["verify", path])
        #expect(status == 0, "\(output)")
    }

    @Test("its exposure score is at most 2.5")
    func exposure() async throws {
        let (status, output) = try await run(["security", "--offline=true", Self.unit])
        #expect(status == 0, "\(output)")
        let line = try #require(output.split(separator: "\n").first { $0.contains("Overall exposure level") })
        let score = try #require(line.split(separator: ":").last?.split(separator: " ").first.flatMap { Double($0) })
        #expect(score <= 2.5, "\(line)")
    }
}
