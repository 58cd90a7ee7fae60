import Agent
import Bus
import Foundation
import Logging
import Store
import TestKit

/// Per-date query round trip through the broker (request published → reply received), each next
/// to a baseline measured by the same client through the same broker in the same run, with the
/// release agent answering from the bench store:
///
/// - a stock mosquitto (Nagle on, as users run it) and one with `set_tcp_nodelay true`;
/// - QoS 0 and QoS 1 requests from a client with the kernel's TCP defaults (as mosquitto_rr) and
///   from a low-latency one (TCP_NODELAY, quick ACKs: our own), each against that client's own
///   publish→receive at the same QoS;
/// - and against a bare responder doing request/response with no work in between, through the
///   same broker at the same QoS: the two-hop floor for any answer.
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
        let randomDay = { () -> String in
            let offset = Double(Int.random(in: 0..<days)) * 86_400 + 43_200
            return LocalDay(containing: Date(timeIntervalSince1970: Double(base) / 1000 + offset), timeZone: utc).description
        }

        for tuned in [true, false] {
            let broker = try MosquittoBroker(extraConfig: tuned ? "set_tcp_nodelay true\n" : "")
            let brokerName = tuned ? "mosquitto with set_tcp_nodelay true" : "stock mosquitto"
            let directory = try TemporaryDirectory("bench-query")
            let agent = try await startAgent(path: path, brokerPort: broker.port, days: days, in: directory)
            defer { agent.stop() }
            for lowLatency in [true, false] {
                // Low-latency: TCP_NODELAY and quick ACKs, as our own client; TCP defaults: as mosquitto_rr.
                let clientName = lowLatency ? "low-latency client" : "client with TCP defaults"
                var client = try await Requester.connect(port: broker.port, lowLatency: lowLatency)
                defer { client.stop() }
                for qos in [MQTTQoS.atMostOnce, .atLeastOnce] {
                    var echoTimes: [Double] = [], queryTimes: [Double] = [], bareTimes: [Double] = []
                    for round in 0..<(rounds + 20) {
                        let echo = try await client.echo(round: round, qos: qos)
                        let query = try await client.query(randomDay(), round: round, qos: qos)
                        let bare = try await client.bare(randomDay(), round: round, qos: qos)
                        guard round >= 20 else { continue }  // warm-up
                        echoTimes.append(echo)
                        queryTimes.append(query)
                        bareTimes.append(bare)
                    }
                    let what = "query round trip (a day's health + location, \(storedDays)-day store; \(brokerName), \(clientName), QoS \(qos.rawValue) request)"
                    table.add("\(what) p50", percentile(queryTimes, 0.5), "ms",
                              baseline: "the same client's publish→receive p50, QoS \(qos.rawValue)", percentile(echoTimes, 0.5),
                              higherIsBetter: false, target: !tuned && qos == .atMostOnce ? "ratio ≤ 3×" : "")
                    table.add("\(what) p99", percentile(queryTimes, 0.99), "ms",
                              baseline: "the same client's publish→receive p99, QoS \(qos.rawValue)", percentile(echoTimes, 0.99),
                              higherIsBetter: false)
                    table.add("\(what) p50", percentile(queryTimes, 0.5), "ms",
                              baseline: "bare responder request→reply p50 (two hops, same QoS)", percentile(bareTimes, 0.5), higherIsBetter: false)
                    table.add("\(what) p99", percentile(queryTimes, 0.99), "ms",
                              baseline: "bare responder request→reply p99 (two hops, same QoS)", percentile(bareTimes, 0.99), higherIsBetter: false,
                              target: tuned && lowLatency && qos == .atLeastOnce ? "ratio ≤ 1.5×" : "")
                }
            }
        }
    }

    /// The release agent on the bench store; on its first start on a store it publishes the
    /// finished days (once per store): waits for them.
    private static func startAgent(path: String, brokerPort: Int, days: Int, in directory: TemporaryDirectory) async throws
        -> ManagedProcess
    {
        let config = try directory.write("config.toml", """
            [device]
            id = "bench"
            timezone = "UTC"
            [mqtt]
            port = \(brokerPort)
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
        let agent = try ManagedProcess(name: "keepalive", executable: BenchAgent.binary, arguments: ["run", "--config", config],
                                       environment: ["KEEPALIVE_CLOCK_SYNCHRONISED": "1"])
        let catchUp = try await seconds {
            try await Wait.until(timeout: 1800, "the agent's daily aggregates of \(days) days") {
                guard agent.isRunning else { throw WaitTimeout(description: "the agent exited: \(agent.text.suffix(2000))") }
                let db = try? SQLiteConnection(path: path, readOnly: true)
                return ((try? db?.scalarInt("SELECT count(*) FROM day_aggregate WHERE final = 1")) ?? nil ?? 0) >= Int64(days)
            }
        }
        if catchUp > 2 { Swift.print("the agent published \(days) daily aggregates in \(String(format: "%.0f", catchUp)) s (once per store)") }
        return agent
    }
}

/// One requester connection, timing its own publish→receive, queries to the agent and (with a
/// bare responder on a second connection) request/response with no work in between.
struct Requester {
    let client: MQTTClient
    let responder: MQTTClient
    var events: AsyncStream<MQTTEvent>.Iterator

    static func connect(port: Int, lowLatency: Bool) async throws -> Requester {
        // The bare responder replies from its network thread the moment a request arrives, with
        // the request's QoS, as the agent does.
        let responder = MQTTClient(
            options: MQTTClientOptions(host: "127.0.0.1", port: port, clientID: "bench-responder"), logger: Logger(label: "bench"))
        responder.handleOnNetworkThread("bench/bare/request") { [responder] request in
            guard let topic = request.properties.responseTopic else { return }
            _ = try? responder.publish(MQTTMessage(
                topic: topic, payload: request.payload, qos: request.qos == 0 ? .atMostOnce : .atLeastOnce,
                properties: MQTTProperties(correlationData: request.properties.correlationData)))
        }
        responder.start()
        let client = MQTTClient(
            options: MQTTClientOptions(host: "127.0.0.1", port: port, clientID: "bench-requester-\(lowLatency)", lowLatencyTCP: lowLatency),
            logger: Logger(label: "bench"))
        for topic in ["bench/echo", "bench/reply", "bench/bare/reply"] { client.subscribe(topic) }
        var requester = Requester(client: client, responder: responder, events: client.events.makeAsyncIterator())
        client.start()
        while let event = await requester.events.next() { if case .connected = event { break } }
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
        while ready.count < 3, let event = await requester.events.next() {
            if case .message(let message) = event { ready.insert(message.topic) }
        }
        probe.cancel()
        return requester
    }

    mutating func echo(round: Int, qos: MQTTQoS) async throws -> Double {
        let marker = Array("echo \(round)".utf8)
        return try await roundTrip(MQTTMessage(topic: "bench/echo", payload: marker, qos: qos), replyTopic: "bench/echo") {
            $0.payload == marker
        }
    }

    mutating func query(_ date: String, round: Int, qos: MQTTQoS) async throws -> Double {
        try await request(topic: "keepalive/bench/selection/date", replyTopic: "bench/reply", payload: date, round: round, qos: qos)
    }

    mutating func bare(_ date: String, round: Int, qos: MQTTQoS) async throws -> Double {
        try await request(topic: "bench/bare/request", replyTopic: "bench/bare/reply", payload: date, round: round, qos: qos)
    }

    private mutating func request(topic: String, replyTopic: String, payload: String, round: Int, qos: MQTTQoS) async throws -> Double {
        let correlation = Array("\(round)".utf8)
        let message = MQTTMessage(
            topic: topic, payload: Array(payload.utf8), qos: qos,
            properties: MQTTProperties(responseTopic: replyTopic, correlationData: correlation))
        return try await roundTrip(message, replyTopic: replyTopic) { $0.properties.correlationData == correlation }
    }

    /// Publishes and waits for the message on `replyTopic` that `matches` (stray probes are skipped).
    private mutating func roundTrip(_ message: MQTTMessage, replyTopic: String, matches: (MQTTIncomingMessage) -> Bool) async throws -> Double {
        let start = DispatchTime.now().uptimeNanoseconds
        _ = try client.publish(message)
        while let event = await events.next() {
            if case .message(let received) = event, received.topic == replyTopic, matches(received) {
                return Double(DispatchTime.now().uptimeNanoseconds - start) / 1e6
            }
        }
        return .nan
    }

    func stop() {
        client.stop()
        responder.stop()
    }
}
