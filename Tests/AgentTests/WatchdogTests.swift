import Foundation
import Testing
import TestKit

/// The agent under a systemd-style notification socket.
@Suite("systemd notify and watchdog")
struct WatchdogTests {
    @Test("READY=1 once running, WATCHDOG=1 regularly while the loops go round, none once a loop is stuck")
    func readyAndWatchdog() async throws {
        let broker = try MosquittoBroker()
        let directory = try TemporaryDirectory("notify")
        let notify = try NotifySocket(directory: directory)
        let agent = try AgentProcess(
            brokerPort: broker.port, directory: directory,
            environment: ["NOTIFY_SOCKET": notify.path, "WATCHDOG_USEC": "2000000", "KEEPALIVE_FAULT_WEDGE_WRITER_AFTER_S": "6"])
        try await Wait.until(timeout: 10, "READY=1") { notify.count("READY=1") == 1 }
        try await Wait.until(timeout: 10, "three WATCHDOG=1") { notify.count("WATCHDOG=1") >= 3 }
        let ready = try #require(notify.messages.first { $0.lines.contains("READY=1") })
        #expect(ready.lines.contains { $0.hasPrefix("STATUS=") })

        // The writer loop stops after 6 s: pings stop within a watchdog interval (2 s) after that.
        try await agent.process!.waitForLine(containing: "a loop is stuck", timeout: 15)
        #expect(agent.log.contains("loops=writer"))
        let pingsAtStuck = notify.count("WATCHDOG=1")
        // Observe three ping periods (1 s each): none may come while the writer is stuck.
        let observeUntil = Date().addingTimeInterval(3)
        try await Wait.until(timeout: 10, "the observation window to pass") { Date() >= observeUntil }
        #expect(notify.count("WATCHDOG=1") == pingsAtStuck, "WATCHDOG=1 was sent while a loop was stuck")
        #expect(notify.messages.last?.lines.contains { $0.hasPrefix("STATUS=stuck: writer") } == true)
        agent.kill9()
    }
}
