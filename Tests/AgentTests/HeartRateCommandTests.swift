import Foundation
import Testing
import TestKit

@testable import Store

/// The `command` heart-rate transport: a real child process, restarted on a stall, dying with the
/// agent. One run of the agent with a bridge that prints 50 real messages and stalls; each test
/// states one claim on what that run showed. The scenario stops the agent (SIGKILL, the claim
/// itself), its children and the broker before its outcome is handed out.
@Suite("Heart rate from a bridge command", .serialized)
struct HeartRateCommandTests {
    /// Alive and not a zombie (a reparented child may never be reaped in a container).
    static func isRunning(_ pid: pid_t) -> Bool {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8) else { return false }
        let state = stat.split(separator: ")").last?.split(separator: " ").first
        return state != "Z" && state != "X"
    }

    struct Outcome: Sendable {
        let restartedTwice: Result<Void, any Error>
        let reacquireEvent: Result<MQTTSubscriber.Message, any Error>
        let storedNotifications: Int64?
        let earlierChildrenGone: Result<Void, any Error>
        let inheritance: Result<BridgeIsolationTests.Inheritance, any Error>
        let childDiedWithAgent: Result<Void, any Error>
    }

    static let outcome = Task { try await scenario() }

    static func scenario() async throws -> Outcome {
        let broker = try MosquittoBroker()
        defer { broker.stop() }
        let events = try await MQTTSubscriber(port: broker.port, filter: "keepalive/testpi/event/#")
        defer { events.stop() }
        let directory = try TemporaryDirectory("hr-command")
        let head = try directory.write(
            "head.ndjson",
            try HeartRateFixture.lines(on: HeartRateFixture.yesterday).prefix(50).joined(separator: "\n") + "\n")
        let pids = directory.file("pids")
        // The bridge: records its pid, prints 50 real messages, then stalls silently (as straps do).
        let script = "echo $$ >> \(pids); cat \(head); exec sleep 1000"
        let agent = try AgentProcess(
            brokerPort: broker.port,
            extraConfig: "[hr]\ntransport = \"command\"\ncommand = [\"/bin/sh\", \"-c\", \"\(script)\"]\nstall_timeout_s = 1\nreacquire_max_s = 1\n",
            directory: directory)
        let starts = { (try? String(contentsOfFile: pids, encoding: .utf8))?.split(separator: "\n").compactMap { pid_t($0) } ?? [] }
        let restartedTwice = await captured {
            try await Wait.until(timeout: 20, "the bridge started three times (two restarts); log:\n\(agent.log.suffix(1500))") { starts().count >= 3 }
        }
        let event = await captured { try await events.waitFor("an hr_reacquire event") { $0.topic.hasSuffix("/event/hr_reacquire") } }
        let count = try SQLiteConnection(path: agent.storePath, readOnly: true).scalarInt("SELECT count(*) FROM hr_sample")
        // Restarted children do not linger: only the newest may still run.
        let earlier = starts().dropLast()
        let earlierGone = await captured {
            try await Wait.until(timeout: 5, "earlier bridge processes to be gone") { earlier.allSatisfy { !Self.isRunning($0) } }
        }
        // A restarted bridge inherits nothing of the agent's (by now connected, its store open).
        let inheritance = await captured { try await BridgeIsolationTests.inheritance(latest: { starts().last }) }

        let diedWithAgent = await captured {
            let current = try #require(starts().last)
            try await Wait.until(timeout: 5, "the current bridge to run") { Self.isRunning(current) || starts().last != current }
            let newest = try #require(starts().last)
            agent.kill9()
            try await Wait.until(timeout: 5, "the bridge \(newest) to die with the agent") { !Self.isRunning(newest) }
        }
        agent.kill9()
        return Outcome(
            restartedTwice: restartedTwice, reacquireEvent: event, storedNotifications: count,
            earlierChildrenGone: earlierGone, inheritance: inheritance, childDiedWithAgent: diedWithAgent)
    }

    @Test("a silent bridge child is restarted, and event/hr_reacquire says so")
    func silentChildRestarted() async throws {
        let outcome = try await Self.outcome.value
        try outcome.restartedTwice.get()
        #expect(try outcome.reacquireEvent.get().json?["transport"] as? String == "command")
    }

    @Test("lines from the child are stored once, however often it is restarted")
    func linesStoredOnce() async throws {
        let outcome = try await Self.outcome.value
        #expect(outcome.storedNotifications == 50, "the same 50 messages from every restart are stored once")
    }

    @Test("a restarted bridge child does not linger")
    func earlierChildrenGone() async throws {
        try await Self.outcome.value.earlierChildrenGone.get()
    }

    @Test("a restarted bridge child inherits no descriptor and no signal mask of the agent's")
    func childInheritsNothing() async throws {
        BridgeIsolationTests.expectNothingInherited(try await Self.outcome.value.inheritance.get())
    }

    @Test("SIGKILL of the agent takes the bridge child with it")
    func childDiesWithAgent() async throws {
        try await Self.outcome.value.childDiedWithAgent.get()
    }
}
