import Foundation
import Testing
import TestKit

@testable import Store

/// The `command` heart-rate transport: a real child process, restarted on a stall, dying with the agent.
@Suite("Heart rate from a bridge command")
struct HeartRateCommandTests {
    /// Alive and not a zombie (a reparented child may never be reaped in a container).
    static func isRunning(_ pid: pid_t) -> Bool {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8) else { return false }
        let state = stat.split(separator: ")").last?.split(separator: " ").first
        return state != "Z" && state != "X"
    }

    @Test("lines from the child are stored once; a silent child is restarted and inherits no descriptor; SIGKILL of the agent takes the child with it")
    func commandBridge() async throws {
        let broker = try MosquittoBroker()
        let events = try await MQTTSubscriber(port: broker.port, filter: "keepalive/testpi/event/#")
        let directory = try TemporaryDirectory("hr-command")
        let head = try directory.write(
            "head.ndjson",
            try String(contentsOfFile: Tools.fixture("hr/nsr-60min.ndjson"), encoding: .utf8).split(separator: "\n").prefix(50)
                .joined(separator: "\n") + "\n")
        let pids = directory.file("pids")
        // The bridge: records its pid, prints 50 real messages, then stalls silently (as straps do).
        let script = "echo $$ >> \(pids); cat \(head); exec sleep 1000"
        let agent = try AgentProcess(
            brokerPort: broker.port,
            extraConfig: "[hr]\ntransport = \"command\"\ncommand = [\"/bin/sh\", \"-c\", \"\(script)\"]\nstall_timeout_s = 1\nreacquire_max_s = 1\n",
            directory: directory)
        let starts = { (try? String(contentsOfFile: pids, encoding: .utf8))?.split(separator: "\n").compactMap { pid_t($0) } ?? [] }
        try await Wait.until(timeout: 20, "the bridge started three times (two restarts); log:\n\(agent.log.suffix(1500))") { starts().count >= 3 }
        let event = try await events.waitFor("an hr_reacquire event") { $0.topic.hasSuffix("/event/hr_reacquire") }
        #expect(event.json?["transport"] as? String == "command")
        let count = try SQLiteConnection(path: agent.storePath, readOnly: true).scalarInt("SELECT count(*) FROM hr_sample")
        #expect(count == 50, "the same 50 messages from every restart are stored once")
        // Restarted children do not linger: only the newest may still run.
        let earlier = starts().dropLast()
        try await Wait.until(timeout: 5, "earlier bridge processes to be gone") { earlier.allSatisfy { !Self.isRunning($0) } }
        // A restarted bridge inherits nothing of the agent's (by now connected, its store open).
        try await BridgeIsolationTests.expectInheritsNothing(latest: { starts().last })

        let current = try #require(starts().last)
        try await Wait.until(timeout: 5, "the current bridge to run") { Self.isRunning(current) || starts().last != current }
        let newest = try #require(starts().last)
        agent.kill9()
        try await Wait.until(timeout: 5, "the bridge \(newest) to die with the agent") { !Self.isRunning(newest) }
    }
}
