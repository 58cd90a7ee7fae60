import Foundation
import Testing
import TestKit

/// The broker password and the TLS client key: never in config.toml, never in a log line, and
/// a warning when others can read their files.
@Suite("Secret hygiene")
struct SecretHygieneTests {
    func checkConfig(_ path: String) async throws -> (status: Int32?, output: String) {
        let process = try ManagedProcess(name: "check-config", executable: Tools.agent, arguments: ["check-config", path])
        return (await process.waitForExit(timeout: 30), process.text)
    }

    /// A TLS configuration with a client key and a password file, both at 0600.
    struct SecretFiles {
        let directory: TemporaryDirectory
        let config: String
        let password: String
        let keyFile: String
    }

    static func secretFiles() async throws -> SecretFiles {
        let directory = try TemporaryDirectory("modes")
        let certificates = try await TestCertificates.make(in: directory)
        let client = try await certificates.client(named: "pi", in: directory)
        let password = try directory.write("mqtt.password", "open-sesame\n")
        let config = try directory.write("config.toml", """
            [mqtt]
            tls = true
            cafile = "\(certificates.caFile)"
            certfile = "\(client.certFile)"
            keyfile = "\(client.keyFile)"
            username = "pi"
            password_file = "\(password)"
            """)
        chmod(password, 0o600)
        chmod(client.keyFile, 0o600)
        return SecretFiles(directory: directory, config: config, password: password, keyFile: client.keyFile)
    }

    @Test("check-config is quiet about a password file and key at 0600")
    func privateModeQuiet() async throws {
        let files = try await Self.secretFiles()
        let quiet = try await checkConfig(files.config)
        #expect(quiet.status == 0, "\(quiet.output)")
        #expect(!quiet.output.contains("warning"), "\(quiet.output)")
    }

    @Test("check-config warns about a password file or key that its group or others can read, naming file and mode")
    func modeWarnings() async throws {
        let files = try await Self.secretFiles()
        let (config, password) = (files.config, files.password)
        chmod(password, 0o644)
        chmod(files.keyFile, 0o640)
        let loud = try await checkConfig(config)
        #expect(loud.status == 0, "a warning, not an error: \(loud.output)")
        let warnings = loud.output.split(separator: "\n").filter { $0.hasPrefix("keepalive: warning:") }
        #expect(warnings.count == 2, "\(loud.output)")
        #expect(warnings.contains { $0.contains("mqtt.password_file \(password)") && $0.contains("its group and all users") && $0.contains("0644") })
        #expect(warnings.contains { $0.contains("mqtt.keyfile \(files.keyFile)") && $0.contains("its group (mode 0640)") })
        #expect(warnings.allSatisfy { $0.contains("chmod 600") })
        #expect(!loud.output.contains("open-sesame"))
    }

    @Test("run logs the warning once, not again on a reconnect")
    func runWarnsOnce() async throws {
        let directory = try TemporaryDirectory("modes-run")
        let passwords = try await TestCertificates.passwordFile(in: directory, user: "pi", password: "open-sesame")
        let broker = try MosquittoBroker(extraConfig: "password_file \(passwords)")
        let password = try directory.write("mqtt.password", "open-sesame\n")
        chmod(password, 0o604)
        let agent = try AgentProcess(brokerPort: broker.port, directory: directory, start: false)
        try agent.addToConfig(section: "mqtt", lines: ["username = \"pi\"", "password_file = \"\(password)\""])
        try agent.start()
        let process = try #require(agent.process)
        try await process.waitForLine(containing: "MQTT connected", timeout: 15)
        broker.stop()
        try broker.start()
        try await process.waitForLines(containingAny: ["MQTT connected"], count: 2, timeout: 20)
        let warnings = process.lines.filter { $0.contains("a secret is readable by others") }
        #expect(warnings.count == 1, "\(warnings)")
        #expect(warnings.first?.contains("all users (mode 0604)") == true, "\(warnings)")
        #expect(!agent.log.contains("open-sesame"))
        #expect(agent.stop() == 0)
    }

    @Test("a password in config.toml is refused with 78, naming the key and its line and where a password belongs, without echoing it")
    func passwordInConfig() async throws {
        let directory = try TemporaryDirectory("pw-in-config")
        for (index, value) in ["\"hunter2-secret\"", "12345678", "[\"hunter2-secret\"]"].enumerated() {
            let config = try directory.write("config-\(index).toml", "[device]\nid = \"pi\"\n[mqtt]\nusername = \"pi\"\npassword = \(value)\n")
            let result = try await checkConfig(config)
            #expect(result.status == 78, "\(result.output)")
            #expect(result.output.contains("\(config):5: mqtt.password:"), "\(result.output)")
            #expect(result.output.contains("/etc/keepalive/mqtt.password") && result.output.contains("password_file"), "\(result.output)")
            #expect(!result.output.contains("hunter2") && !result.output.contains("12345678"), "\(result.output)")
            // run refuses it the same way, before anything starts.
            let run = try ManagedProcess(name: "run", executable: Tools.agent, arguments: ["run", "--config", config])
            #expect(await run.waitForExit(timeout: 30) == 78)
            #expect(!run.text.contains("hunter2") && !run.text.contains("12345678"))
        }
    }

    /// The lines of a PEM file's body (base64), each of which must never be logged.
    static func pemBody(_ path: String) throws -> [String] {
        try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n").map(String.init).filter { !$0.hasPrefix("-----") && $0.count >= 16 }
    }

    @Test("at log level trace, over TLS with a client key and a password, connecting, answering queries and failing to log in: no secret in any line")
    func nothingAtTrace() async throws {
        let directory = try TemporaryDirectory("trace")
        let certificates = try await TestCertificates.make(in: directory)
        let client = try await certificates.client(named: "pi", in: directory)
        let secret = "tr4ce-\(UInt64.random(in: 0...UInt64.max))"
        let passwords = try await TestCertificates.passwordFile(in: directory, user: "pi", password: secret)
        let broker = try MosquittoBroker.tls(certificates, requireClientCertificate: true, passwordFile: passwords)
        let tls = ["--cafile", certificates.caFile, "--cert", client.certFile, "--key", client.keyFile, "-u", "pi", "-P", secret]
        let watcher = try await MQTTSubscriber(port: broker.port, filter: "keepalive/#", extraArguments: tls)

        func agent(device: String, password: String) throws -> (ManagedProcess, String) {
            let passwordFile = try directory.write("\(device).password", password + "\n")
            chmod(passwordFile, 0o600)
            let agent = try AgentProcess(
                brokerPort: broker.port, deviceID: device, store: directory.file("\(device).db"), directory: directory, start: false)
            try agent.addToConfig(section: "mqtt", lines: [
                "tls = true", "cafile = \"\(certificates.caFile)\"", "certfile = \"\(client.certFile)\"", "keyfile = \"\(client.keyFile)\"",
                "username = \"pi\"", "password_file = \"\(passwordFile)\"",
            ])
            let config = agent.configPath.replacingOccurrences(of: "config.toml", with: "\(device).toml")
            try FileManager.default.moveItem(atPath: agent.configPath, toPath: config)
            let process = try ManagedProcess(
                name: "keepalive \(device)", executable: Tools.agent, arguments: ["run", "--config", config, "--log-level", "trace"],
                environment: ["KEEPALIVE_CLOCK_SYNCHRONISED": "1"])
            return (process, config)
        }

        let (good, goodConfig) = try agent(device: "good", password: secret)
        defer { good.stop() }
        try await watcher.waitFor(timeout: 20, "online at trace") { $0.topic == "keepalive/good/status" && $0.json?["state"] as? String == "online" }
        // A query answered, one refused: the request path logs at trace too.
        for (index, responseTopic) in ["reply/trace", "keepalive/good/x"].enumerated() {
            try await MQTTTools.publish(
                port: broker.port, topic: "keepalive/good/selection/date", message: "2026-01-05",
                extraArguments: tls + ["-D", "publish", "response-topic", responseTopic, "-D", "publish", "correlation-data", "c\(index)"])
        }
        try await watcher.waitFor("the refusal on the fallback topic") { $0.topic == "keepalive/good/selection/result" }

        let wrong = "wr0ng-\(UInt64.random(in: 0...UInt64.max))"
        let (bad, _) = try agent(device: "bad", password: wrong)
        defer { bad.stop() }
        try await bad.waitForLines(containingAny: ["not authorised", "Not authorized"], count: 2)

        let check = try ManagedProcess(name: "check-config", executable: Tools.agent, arguments: ["check-config", goodConfig])
        #expect(await check.waitForExit(timeout: 30) == 0)
        #expect(good.stop() == 0)
        bad.stop()

        let logs = [("good", good.text), ("bad", bad.text), ("check-config", check.text)]
        #expect(good.text.contains("libmosquitto:"), "trace lines from libmosquitto were logged")
        let keyLines = try Self.pemBody(client.keyFile)
        #expect(keyLines.count > 10)
        for (name, log) in logs {
            #expect(!log.contains(secret), "\(name) logged the password")
            #expect(!log.contains(wrong), "\(name) logged the wrong password")
            #expect(!keyLines.contains { log.contains($0) }, "\(name) logged the client key")
            #expect(!log.contains("PRIVATE KEY"), "\(name)")
        }
    }
}
