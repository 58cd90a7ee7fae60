import Foundation
import Testing
import TestKit

/// The kit every other test stands on: real servers start, talk, and are gone afterwards.
@Suite("Test kit")
struct TestKitTests {
    func isAlive(_ pid: pid_t) -> Bool { kill(pid, 0) == 0 || errno != ESRCH }

    @Test("a mosquitto broker starts on a free port, a message round-trips, the broker is gone after stop")
    func brokerRoundTrip() async throws {
        let broker = try MosquittoBroker()
        let pid = try #require(broker.process?.pid)
        #expect(Ports.isListening(broker.port))
        let subscriber = try await MQTTSubscriber(port: broker.port, filter: "kit/#")
        try await MQTTTools.publish(port: broker.port, topic: "kit/hello", message: "{\"n\":1}")
        let message = try await subscriber.waitFor("kit/hello") { $0.topic == "kit/hello" }
        #expect(message.payload == "{\"n\":1}")
        subscriber.stop()
        broker.stop()
        #expect(!isAlive(pid))
        #expect(!Ports.isListening(broker.port))
    }

    @Test("a broker can be stopped and started again on the same port")
    func brokerRestart() async throws {
        let broker = try MosquittoBroker()
        broker.stop()
        #expect(!Ports.isListening(broker.port))
        try broker.start()
        #expect(Ports.isListening(broker.port))
    }

    /// gpsfake replaying a real capture, read by gpspipe, then stopped: run once for the two claims.
    struct GPSFakeOutcome: Sendable {
        let tpv: Result<String, any Error>
        let gpsdGone: Result<Void, any Error>
        let gpsfakeAlive: Bool
        let portListening: Bool
    }

    static let gpsfakeOutcome = Task { () async throws -> GPSFakeOutcome in
        let kit = TestKitTests()
        let gps = try await GPSFake(capture: Tools.fixture("gpsd/bu353s4.log"), cycle: 0.05)
        let gpsfakePID = gps.process.pid
        // gpsfake's gpsd, found first: on a loaded machine the replay can be over (and that gpsd
        // gone) by the time the client below has read its first position.
        var gpsdPIDs: [pid_t] = []
        try await Wait.until(timeout: 10, "gpsd's listening socket found in /proc") {
            gpsdPIDs = gps.processPIDsListening()
            return !gpsdPIDs.isEmpty
        }
        // Read gpsd's JSON with its own client: a TPV with a position shows the capture is being served.
        let pipe = try ManagedProcess(name: "gpspipe", executable: Tools.find("gpspipe"), arguments: ["-w", "127.0.0.1:\(gps.port)"])
        // 60 s, as the other waits on gpsfake: in a fresh-clone run of the whole suite (2026-11-26)
        // gpsd still listed no device 20 s after gpspipe's WATCH (gpsfake, in Python, attaches
        // it once a client is there); the claim is that it is served, not how fast.
        let tpv = await captured { try await pipe.waitForLine(containing: "\"lat\":-37.78", timeout: 60) }
        pipe.stop()
        gps.stop()
        let gpsdGone = await captured { try await Wait.until(timeout: 10, "gpsfake's gpsd to exit") { gpsdPIDs.allSatisfy { !kit.isAlive($0) } } }
        return GPSFakeOutcome(tpv: tpv, gpsdGone: gpsdGone, gpsfakeAlive: kit.isAlive(gpsfakePID), portListening: Ports.isListening(gps.port))
    }

    @Test("gpsd via gpsfake serves a real capture")
    func gpsfakeServesFixes() async throws {
        #expect(try await Self.gpsfakeOutcome.value.tpv.get().contains("\"class\":\"TPV\""))
    }

    @Test("gpsfake and its gpsd are gone after stop")
    func gpsfakeGoneAfterStop() async throws {
        let outcome = try await Self.gpsfakeOutcome.value
        try outcome.gpsdGone.get()
        #expect(!outcome.gpsfakeAlive)
        #expect(!outcome.portListening)
    }

    @Test("a bounded wait fails with the reason")
    func waitTimesOut() async throws {
        await #expect(throws: WaitTimeout.self) {
            try await Wait.until(timeout: 0.1, "something that never happens") { false }
        }
    }
}
