import Foundation
import Testing
import TestKit

@testable import Store

/// The `serial` heart-rate transport on a pseudo-terminal pair.
@Suite("Heart rate from a serial bridge")
struct HeartRateSerialTests {
    @Test("NDJSON lines from a tty are stored, garbage dropped, a silent device reopened")
    func serialBridge() async throws {
        let broker = try MosquittoBroker()
        let events = try await MQTTSubscriber(port: broker.port, filter: "keepalive/testpi/event/#")
        let directory = try TemporaryDirectory("hr-serial")
        let bridge = try ManagedProcess(
            name: "pty_bridge", executable: Tools.find("python3"),
            arguments: [Tools.fixture("tools/pty_bridge.py"), try HeartRateFixture.file(on: HeartRateFixture.yesterday, in: directory), "40"])
        let tty = try await bridge.waitForLine(containing: "/dev/pts/")
        let agent = try AgentProcess(
            brokerPort: broker.port,
            extraConfig: "[hr]\ntransport = \"serial\"\nserial_device = \"\(tty)\"\nbaud = 115200\nstall_timeout_s = 1\nreacquire_max_s = 1\n")
        try await agent.process!.waitForLine(containing: "serial bridge open")
        kill(bridge.pid, SIGUSR1)
        let count = { (try? SQLiteConnection(path: agent.storePath, readOnly: true).scalarInt("SELECT count(*) FROM hr_sample")) ?? nil }
        try await Wait.until(timeout: 10, "40 notifications stored from the tty; log:\n\(agent.log.suffix(1000))") { count() == 40 }
        #expect(agent.log.contains("reason=malformed"))
        let reacquire = try await events.waitFor(count: 2, timeout: 15, "two hr_reacquire events") { $0.topic.hasSuffix("/event/hr_reacquire") }
        #expect(reacquire.first?.json?["transport"] as? String == "serial")
        try await agent.process!.waitForLines(containingAny: ["serial bridge open"], count: 2)
        // After reopening, data flows again: the next 40 messages are stored too.
        kill(bridge.pid, SIGUSR1)
        try await Wait.until(timeout: 10, "the next 40 notifications after the reopen (count \(String(describing: count()))); bridge: \(bridge.text.suffix(300)); agent:\n\(agent.log.suffix(2500))") { count() == 80 }
        #expect(agent.stop() == 0)
        bridge.stop()
    }

    @Test("a baud rate termios does not offer is a configuration error")
    func badBaud() async throws {
        let directory = try TemporaryDirectory()
        let path = try directory.write("c.toml", "[hr]\ntransport = \"serial\"\nserial_device = \"/dev/ttyUSB0\"\nbaud = 12345\n")
        let process = try ManagedProcess(name: "keepalive", executable: Tools.agent, arguments: ["check-config", path])
        #expect(await process.waitForExit(timeout: 20) == 78)
        #expect(process.text.contains("hr.baud"))
    }
}
