import Agent
import Bus
import Foundation
import Logging
import Store
import TestKit

/// Per-date query round trip through the broker (request published → reply received) against
/// the broker's own round trip (publish → receive on the same client), interleaved in the same
/// run, with the release agent answering from the 90-day bench store.
enum QueryBench {
    static func run(into table: inout BenchTable) async throws {
        let rounds = Int(ProcessInfo.processInfo.environment["KEEPALIVE_BENCH_ROUNDS"] ?? "1000") ?? 1000
        let (path, base, storedDays) = try await BenchStore.ensure()
        // Only finished days get a daily aggregate; the store's days from today on are future ones.
        let utc = TimeZone(identifier: "UTC")!
        let yesterday = LocalDay(containing: Date(), timeZone: utc).previous
        let pastDays = Int((yesterday.boundsMs.end - base) / 86_400_000)
        let days = max(1, min(storedDays, pastDays))
        // Aggregates stored before schema 3 lack the day's first and last fix, which a query
        // then looks up in the raw rows: drop them once so the agent stores them anew.
        do {
            let db = try SQLiteConnection(path: path)
            let hasEnds = try db.scalarInt("SELECT count(*) FROM pragma_table_info('day_aggregate') WHERE name = 'last_fix'") == 1
            let lacking = hasEnds ? try db.scalarInt("SELECT count(*) FROM day_aggregate WHERE last_fix IS NULL") ?? 0 : 1
            if lacking > 0 { try db.execute("DELETE FROM day_aggregate") }
        }
        // Without TCP_NODELAY on the broker, Nagle and delayed ACKs put ~40 ms into every round trip.
        let broker = try MosquittoBroker(extraConfig: "set_tcp_nodelay true\n")
        let directory = try TemporaryDirectory("bench-query")
        let config = try directory.write("config.toml", """
            [device]
            id = "bench"
            timezone = "UTC"
            [mqtt]
            port = \(broker.port)
            [store]
            path = "\(path)"
            # The bench store must stay as generated: no pruning behind the measurement.
            retention_days = 36500
            [gps]
            enabled = false
            [hr]
            transport = "none"
            [query]
            rate_per_s = 10000
            burst = 10000
            """)
        let binary = BenchAgent.binary
        let agent = try ManagedProcess(name: "keepalive", executable: binary, arguments: ["run", "--config", config],
                                       environment: ["KEEPALIVE_CLOCK_SYNCHRONISED": "1"])
        defer { agent.stop() }
        // The agent publishes the finished days on its first start on this store; wait for them.
        let catchUp = try await seconds {
            try await Wait.until(timeout: 1800, "the agent's daily aggregates of \(days) days") {
                guard agent.isRunning else { throw WaitTimeout(description: "the agent exited: \(agent.text.suffix(2000))") }
                let db = try? SQLiteConnection(path: path, readOnly: true)
                return ((try? db?.scalarInt("SELECT count(*) FROM day_aggregate WHERE final = 1")) ?? nil ?? 0) >= Int64(days)
            }
        }
        if catchUp > 2 { Swift.print("the agent published \(days) daily aggregates in \(String(format: "%.0f", catchUp)) s (once per store)") }

        // A bare responder on its own connection, replying from the network thread the moment a
        // request arrives, as the agent does: request/response through the broker with no work
        // in between, the floor for any answer the agent gives.
        let responder = MQTTClient(options: MQTTClientOptions(host: "127.0.0.1", port: broker.port, clientID: "bench-responder"), logger: Logger(label: "bench"))
        responder.handleOnNetworkThread("bench/bare/request") { [responder] request in
            guard let topic = request.properties.responseTopic else { return }
            _ = try? responder.publish(MQTTMessage(
                topic: topic, payload: request.payload, properties: MQTTProperties(correlationData: request.properties.correlationData)))
        }
        responder.start()
        defer { responder.stop() }

        let client = MQTTClient(options: MQTTClientOptions(host: "127.0.0.1", port: broker.port, clientID: "bench-requester"), logger: Logger(label: "bench"))
        client.subscribe("bench/echo")
        client.subscribe("bench/reply")
        client.subscribe("bench/bare/reply")
        var events = client.events.makeAsyncIterator()
        client.start()
        while let event = await events.next() { if case .connected = event { break } }
        // Ready once an echo comes back (our subscriptions) and a query is answered (the agent's).
        let probe = Task {
            while !Task.isCancelled {
                _ = try? client.publish(MQTTMessage(topic: "bench/echo", payload: Array("probe".utf8)))
                _ = try? client.publish(MQTTMessage(
                    topic: "bench/bare/request", payload: Array("probe".utf8),
                    properties: MQTTProperties(responseTopic: "bench/bare/reply", correlationData: Array("probe".utf8))))
                _ = try? client.publish(MQTTMessage(
                    topic: "keepalive/bench/selection/date", payload: Array("2026-01-02".utf8),
                    properties: MQTTProperties(responseTopic: "bench/reply", correlationData: Array("probe".utf8))))
                try? await Task.sleep(for: .milliseconds(200))
            }
        }
        var ready: Set<String> = []
        while ready.count < 3, let event = await events.next() {
            if case .message(let message) = event { ready.insert(message.topic) }
        }
        probe.cancel()

        /// Publishes and waits for the message on `replyTopic` that `matches` (stray probes are skipped).
        func roundTrip(_ message: MQTTMessage, replyTopic: String, matches: (MQTTIncomingMessage) -> Bool) async throws -> Double {
            let start = DispatchTime.now().uptimeNanoseconds
            _ = try client.publish(message)
            while let event = await events.next() {
                if case .message(let received) = event, received.topic == replyTopic, matches(received) {
                    return Double(DispatchTime.now().uptimeNanoseconds - start) / 1e6
                }
            }
            return .nan
        }
        var brokerTimes: [Double] = []
        var queryTimes: [Double] = []
        var bareTimes: [Double] = []
        var generator = SystemRandomNumberGenerator()
        for round in 0..<(rounds + 50) {
            let marker = Array("echo \(round)".utf8)
            let echo = try await roundTrip(MQTTMessage(topic: "bench/echo", payload: marker), replyTopic: "bench/echo") { $0.payload == marker }
            let day = LocalDay(containing: Date(timeIntervalSince1970: Double(base) / 1000 + Double(Int.random(in: 0..<days, using: &generator)) * 86_400 + 43_200), timeZone: utc)
            let request = MQTTMessage(
                topic: "keepalive/bench/selection/date", payload: Array("\(day)".utf8),
                properties: MQTTProperties(responseTopic: "bench/reply", correlationData: Array("\(round)".utf8)))
            let query = try await roundTrip(request, replyTopic: "bench/reply") { $0.properties.correlationData == request.properties.correlationData }
            let bareRequest = MQTTMessage(
                topic: "bench/bare/request", payload: Array("\(day)".utf8),
                properties: MQTTProperties(responseTopic: "bench/bare/reply", correlationData: Array("\(round)".utf8)))
            let bare = try await roundTrip(bareRequest, replyTopic: "bench/bare/reply") { $0.properties.correlationData == bareRequest.properties.correlationData }
            if round >= 50 {  // warm-up
                brokerTimes.append(echo)
                queryTimes.append(query)
                bareTimes.append(bare)
            }
        }
        client.stop()
        table.add("query round trip p50 (a day's health + location, \(storedDays)-day store)", percentile(queryTimes, 0.5), "ms",
                  baseline: "broker publish→receive p50 (one hop)", percentile(brokerTimes, 0.5), higherIsBetter: false)
        table.add("query round trip p99", percentile(queryTimes, 0.99), "ms",
                  baseline: "broker publish→receive p99 (one hop)", percentile(brokerTimes, 0.99), higherIsBetter: false)
        table.add("query round trip p50", percentile(queryTimes, 0.5), "ms",
                  baseline: "bare responder request→reply p50 (two hops)", percentile(bareTimes, 0.5), higherIsBetter: false)
        table.add("query round trip p99", percentile(queryTimes, 0.99), "ms",
                  baseline: "bare responder request→reply p99 (two hops)", percentile(bareTimes, 0.99), higherIsBetter: false,
                  target: "ratio ≤ 1.5×")
    }
}
