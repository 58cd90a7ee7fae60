import Foundation
import Testing
import TestKit

@testable import Agent

/// deploy/keepalive.service, checked by systemd's own tool.
@Suite("systemd unit")
struct DeployUnitTests {
    static let unit = "\(Tools.packageRoot)/deploy/keepalive.service"

    func run(_ arguments: [String], executable: String = Tools.find("systemd-analyze")) async throws -> (Int32?, String) {
        let process = try ManagedProcess(name: (executable as NSString).lastPathComponent, executable: executable, arguments: arguments)
        let status = await process.waitForExit(timeout: 60)
        return (status, process.text)
    }

    static func unitLines(_ key: String) throws -> [String] {
        try String(contentsOfFile: unit, encoding: .utf8).split(separator: "\n").filter { $0.hasPrefix("\(key)=") }
            .map { String($0.dropFirst(key.count + 1)) }
    }

    @Test("systemd-analyze verify accepts it without a warning (with the built binary in place of /usr/bin/keepalive)")
    func verify() async throws {
        let directory = try TemporaryDirectory("unit")
        let text = try String(contentsOfFile: Self.unit, encoding: .utf8).replacingOccurrences(of: "/usr/bin/keepalive", with: Tools.agent)
        let path = try directory.write("keepalive.service", text)
        let (status, output) = try await run(["verify", path])
        #expect(status == 0, "\(output)")
        // verify exits 0 on lines it ignores ("Invalid syntax, ignoring"): they name file:line.
        #expect(!output.contains("keepalive.service:"), "\(output)")
    }

    @Test("its exposure score is at most 2.0")
    func exposure() async throws {
        let (status, output) = try await run(["security", "--offline=true", Self.unit])
        #expect(status == 0, "\(output)")
        let line = try #require(output.split(separator: "\n").first { $0.contains("Overall exposure level") })
        let score = try #require(line.split(separator: ":").last?.split(separator: " ").first.flatMap { Double($0) })
        print("systemd-analyze security --offline=true deploy/keepalive.service: \(score)")
        #expect(score <= 2.0, "\(line)")
    }

    @Test("it loads the credentials the agent reads, from the files deploy/README.md names, each with a blank default")
    func credentials() throws {
        let loaded = try Self.unitLines("LoadCredential")
        #expect(loaded.contains("\(SystemdCredentials.password):/etc/keepalive/mqtt.password"), "\(loaded)")
        #expect(loaded.contains("\(SystemdCredentials.clientKey):/etc/keepalive/mqtt.key"), "\(loaded)")
        // A missing file must not fail the start: SetCredential= of the same name is the fallback,
        // and the agent takes a blank credential as none.
        let defaults = try Self.unitLines("SetCredential")
        for name in [SystemdCredentials.password, SystemdCredentials.clientKey] { #expect(defaults.contains("\(name):\\n"), "\(defaults)") }
        #expect(try Self.unitLines("DynamicUser") == ["yes"])
        let readme = try String(contentsOfFile: "\(Tools.packageRoot)/deploy/README.md", encoding: .utf8)
        for path in ["/etc/keepalive/mqtt.password", "/etc/keepalive/mqtt.key", "LoadCredentialEncrypted="] { #expect(readme.contains(path)) }
    }

    /// Only where systemd runs the machine (not in this repository's containers: no systemd as PID 1).
    static var systemdRuns: Bool { FileManager.default.fileExists(atPath: "/run/systemd/system") && getuid() == 0 }

    @Test(
        "under systemd-run with DynamicUser and the unit's credential lines, the unit's ExecStartPre and ExecStart read a root-only password",
        .enabled(if: systemdRuns, "systemd is not PID 1 here; CredentialsTests runs the same lines as nobody with $CREDENTIALS_DIRECTORY"))
    func systemdRun() async throws {
        let directory = try TemporaryDirectory("systemd-run")
        chmod(directory.path, 0o755)
        let password = "pw-\(UInt64.random(in: 0...UInt64.max))"
        let passwords = try await TestCertificates.passwordFile(in: directory, user: "keepalive-pi", password: password)
        let broker = try MosquittoBroker(extraConfig: "password_file \(passwords)")
        let secret = try directory.write("mqtt.password", password + "\n")
        chmod(secret, 0o600)
        let name = "keepalive-test-\(UInt32.random(in: 0...UInt32.max))"
        // DynamicUser= implies PrivateTmp=: the configuration must be outside /tmp to be seen.
        let visible = "/run/\(name)"
        try FileManager.default.createDirectory(atPath: visible, withIntermediateDirectories: false)
        defer { try? FileManager.default.removeItem(atPath: visible) }
        let config = "\(visible)/config.toml"
        try """
            [device]
            id = "sdpi"
            timezone = "UTC"
            [mqtt]
            port = \(broker.port)
            username = "keepalive-pi"
            password_file = "\(secret)"
            [gps]
            enabled = false
            [hr]
            transport = "none"
            [store]
            path = "/var/lib/\(name)/keepalive.db"
            """.write(toFile: config, atomically: true, encoding: .utf8)
        chmod(visible, 0o755)
        chmod(config, 0o644)
        let (check, start) = try CredentialsTests.unitCommands(config: config)
        let credentialLines = try Self.unitLines("LoadCredential").map {
            "--property=LoadCredential=" + $0.replacingOccurrences(of: "/etc/keepalive/mqtt.password", with: secret)
                .replacingOccurrences(of: "/etc/keepalive/mqtt.key", with: directory.file("no-such.key"))
        } + (try Self.unitLines("SetCredential")).map { "--property=SetCredential=\($0)" }
        let properties = ["--property=DynamicUser=yes", "--property=StateDirectory=\(name)"] + credentialLines
        let systemdRun = Tools.find("systemd-run")

        let (checked, checkOutput) = try await run(["--wait", "--pipe", "--collect", "--quiet"] + properties + ["--"] + check, executable: systemdRun)
        #expect(checked == 0, "\(checkOutput)")
        #expect(checkOutput.contains("systemd credential mqtt.password stands in"), "\(checkOutput)")

        let watcher = try await MQTTSubscriber(port: broker.port, filter: "keepalive/#", extraArguments: ["-u", "keepalive-pi", "-P", password])
        let (started, startOutput) = try await run(
            ["--unit=\(name)", "--property=Type=notify", "--collect", "--quiet"] + properties + ["--"] + start, executable: systemdRun)
        defer {
            // Also when an expectation below throws: the transient unit must not outlive the test.
            let stop = Process()
            stop.executableURL = URL(fileURLWithPath: Tools.find("systemctl"))
            stop.arguments = ["stop", name]
            try? stop.run()
            stop.waitUntilExit()
            try? FileManager.default.removeItem(atPath: "/var/lib/private/\(name)")
        }
        #expect(started == 0, "\(startOutput)")
        try await watcher.waitFor(timeout: 20, "online under systemd") {
            $0.topic == "keepalive/sdpi/status" && $0.json?["state"] as? String == "online"
        }
    }
}
