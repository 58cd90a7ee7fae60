import Foundation
import Testing
import TestKit

/// A real agent on a "Pi": its local mosquitto bridged into the cluster with the config
/// deploy/fleet/device-credentials.sh issues. Everything the agent publishes reaches the archive
/// once; a past day's `health/daily` makes the archive fetch that day's reply from the device;
/// the archive's answer for the day equals the device's own, also once the Pi is switched off.
extension FleetSuites {
    @Suite struct FleetDayTests {
        @Test("the archive answers a day as the device does, also for a switched-off Pi") func theArchiveAnswersForASwitchedOffPi() async throws {
            try await withClusterAndPostgres("fleet-day") { cluster, postgres, directory in
                try await answerForADay(cluster: cluster, postgres: postgres, directory: directory)
            }
        }

        private func answerForADay(cluster: FleetCluster, postgres: TestPostgres, directory: TemporaryDirectory) async throws {
            let device = "pi-real"
            try await cluster.register("archive", password: "pw-archive")
            try await cluster.register("viewer", password: "pw-viewer")
            let viewer = cluster.clientArguments("viewer", "pw-viewer")

            // The Pi's mosquitto: the issued bridge config.
            let pi = try await FleetPi(device: device, cluster: cluster, directory: directory)
            defer { pi.stop() }
            let localPort = pi.localPort

            let archiver = try await ArchiverProcess.connected(
                clientID: "archive-a", node: 2, cluster: cluster, postgres: postgres, directory: directory)
            defer { archiver.stop() }
            let seen = try await MQTTSubscriber(port: cluster.port(3), filter: "keepalive/\(device)/#", extraArguments: viewer)

            let udpPort = Ports.free()
            let agent = try AgentProcess(
                brokerPort: localPort, deviceID: device, extraConfig: """
                    [hr]
                    transport = "udp"
                    udp_port = \(udpPort)
                    [query]
                    reply_topics = ["reply/\(device)/#"]
                    [schedule]
                    today_interval_s = 1
                    status_interval_s = 1
                    daily_grace_s = 0
                    [homeassistant]
                    enabled = false
                    """, directory: try TemporaryDirectory("fleet-agent"),
                // This machine's clock may not report itself synchronised; days are cut on it anyway.
                environment: ["KEEPALIVE_CLOCK_SYNCHRONISED": "1"])
            defer { agent.stop() }
            try await seen.waitFor(timeout: 30, "the agent's status through the bridge and the cluster") { $0.topic.hasSuffix("/status") }

            // Heart rate stamped yesterday noon (UTC): a late day, published as health/daily/<yesterday>.
            let yesterday = Date().addingTimeInterval(-86_400)
            var utc = Calendar(identifier: .gregorian)
            utc.timeZone = try #require(TimeZone(identifier: "UTC"))
            let noon = try #require(utc.date(bySettingHour: 12, minute: 0, second: 0, of: yesterday))
            let day = String(ISO8601DateFormatter().string(from: noon).prefix(10))
            let formatter = ISO8601DateFormatter()
            formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
            UDPSender.send(port: udpPort, lines: (0..<300).map { index in
                #"{"ts":"\#(formatter.string(from: noon.addingTimeInterval(Double(index))))","sensor":"strap","raw":"\#(String(format: "06%02x", 60 + index % 40))"}"#
            })
            try await seen.waitFor(timeout: 60, "health/daily/\(day)") { $0.topic.hasSuffix("/health/daily/\(day)") }

            // The archive asks the device for the day and keeps its reply (for the newest aggregate).
            try await Wait.until(timeout: 60, "the archive to hold the device's reply for \(day)") {
                let rows = try syncQuery(postgres, """
                    SELECT count(*) FROM archive_days d WHERE d.device = '\(device)' AND d.day = '\(day)'
                    AND d.source_seq = (SELECT max(seq) FROM archive_messages m WHERE m.device = d.device AND m.kind = 'daily' AND m.day = d.day)
                    """)
                return rows.first?.first == "1"
            }
            let fromDevice = try await MQTTTools.request(
                port: cluster.port(3), topic: "keepalive/\(device)/selection/date", message: day, responseTopic: "reply/\(device)/viewer/1",
                extraArguments: viewer)
            let fromArchive = try await MQTTTools.request(
                port: cluster.port(1), topic: "keepalive/archive/\(device)/selection/date", message: day,
                responseTopic: "reply/archive/viewer/2", extraArguments: viewer)
            #expect(fromDevice.contains(#""ok":true"#) && fromDevice.contains(#""has_data":true"#), "\(fromDevice)")
            #expect(fromArchive == fromDevice)

            // Switched off: the archive still answers, the same; every seq seen in the cluster is archived.
            agent.stop()
            let afterwards = try await MQTTTools.request(
                port: cluster.port(2), topic: "keepalive/archive/\(device)/selection/date", message: day,
                responseTopic: "reply/archive/viewer/3", extraArguments: viewer)
            #expect(afterwards == fromDevice)
            let published = Set(seen.messages.compactMap { message -> String? in
                guard message.topic.hasPrefix("keepalive/\(device)/"), let seq = message.json?["seq"] as? Int else { return nil }
                return String(seq)
            })
            try await Wait.until(timeout: 30, "every seq the cluster carried (\(published.count)) in the archive") {
                let archived = Set(try syncQuery(postgres, "SELECT seq FROM archive_messages WHERE device = '\(device)'").compactMap(\.first))
                return archived.isSuperset(of: published)
            }
            let unknown = try await MQTTTools.request(
                port: cluster.port(2), topic: "keepalive/archive/nobody/selection/date", message: day,
                responseTopic: "reply/archive/viewer/4", extraArguments: viewer)
            #expect(unknown.contains("not_found"), "\(unknown)")
        }
    }
}

/// psql from a synchronous wait condition (a child process, no async work in between).
func syncQuery(_ postgres: TestPostgres, _ sql: String) throws -> [[String]] {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/psql")
    process.arguments = [postgres.conninfo, "-At", "-F", "\t", "-c", sql]
    let pipe = Pipe()
    process.standardOutput = pipe
    try process.run()
    let data = pipe.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    guard process.terminationStatus == 0 else { throw WaitTimeout(description: "psql failed on \(sql)") }
    return String(decoding: data, as: UTF8.self).split(separator: "\n").map {
        $0.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
    }
}
