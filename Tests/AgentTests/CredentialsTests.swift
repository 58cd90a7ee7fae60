import Foundation
import Testing
import TestKit

@testable import Agent

/// The broker password and the TLS client key the systemd way: `$CREDENTIALS_DIRECTORY` first,
/// the configured files otherwise.
@Suite("systemd credentials")
struct CredentialsTests {
    static let system = SystemDefaults(deviceID: "pi", timezone: "UTC")

    /// A configuration whose password and key files do not exist, and an empty credentials directory.
    struct Loader {
        let directory: TemporaryDirectory
        let credentials: String
        let text: String
        func parse() throws -> AgentConfig {
            try ConfigLoader.parse(text: text, system: CredentialsTests.system, credentials: SystemdCredentials(directory: credentials))
        }
    }

    static func loader() throws -> Loader {
        let directory = try TemporaryDirectory("creds")
        let certificate = try directory.write("client.pem", "certificate\n")
        let ca = try directory.write("ca.pem", "ca\n")
        let credentials = directory.file("credentials")
        try FileManager.default.createDirectory(atPath: credentials, withIntermediateDirectories: false)
        let text = """
            [mqtt]
            tls = true
            cafile = "\(ca)"
            certfile = "\(certificate)"
            keyfile = "/nonexistent/mqtt.key"
            username = "pi"
            password_file = "/nonexistent/mqtt.password"
            """
        return Loader(directory: directory, credentials: credentials, text: text)
    }

    @Test("a blank credential (the unit's default) does not stand in for password_file and keyfile")
    func blankCredentialIgnored() throws {
        let loader = try Self.loader()
        let directory = loader.directory
        let parse = { try loader.parse() }
        // Neither credential: the configured files, which do not exist.
        #expect(throws: ConfigError.self) { try parse() }
        _ = try directory.write("credentials/mqtt.key", "\n")
        _ = try directory.write("credentials/mqtt.password", "\n")
        do {
            _ = try parse()
            Issue.record("blank credentials were taken")
        } catch let error as ConfigError {
            #expect(error.key == "mqtt.keyfile", "\(error)")
        }
    }

    @Test("a credential stands in for password_file and keyfile")
    func loaderPrefersCredentials() throws {
        let loader = try Self.loader()
        let (directory, credentials, text) = (loader.directory, loader.credentials, loader.text)
        let parse = { try loader.parse() }
        _ = try directory.write("credentials/mqtt.key", "-----BEGIN PRIVATE KEY-----\n")
        _ = try directory.write("credentials/mqtt.password", "from systemd\n")
        let config = try parse()
        #expect(config.mqtt.password == SecretFile(path: "\(credentials)/mqtt.password", origin: .credential(name: "mqtt.password")))
        #expect(config.mqtt.clientKey == SecretFile(path: "\(credentials)/mqtt.key", origin: .credential(name: "mqtt.key")))
        // The configured paths stay what the file says; check-config shows the credential stands in.
        #expect(config.mqtt.passwordFile == "/nonexistent/mqtt.password")
        let summary = ConfigSummary(config).text
        #expect(summary.contains("password_file = \"/nonexistent/mqtt.password\"  # unused: systemd credential mqtt.password stands in"))
        #expect(summary.contains("keyfile = \"/nonexistent/mqtt.key\"  # unused: systemd credential mqtt.key stands in"))
        #expect(!summary.contains("from systemd"))

        // No username: a password from a credential is no use.
        do {
            _ = try ConfigLoader.parse(
                text: text.replacingOccurrences(of: "username = \"pi\"", with: ""), system: Self.system,
                credentials: SystemdCredentials(directory: credentials))
            Issue.record("a password without a username was accepted")
        } catch let error as ConfigError {
            #expect(error.key == "mqtt.username")
        }
        // Without $CREDENTIALS_DIRECTORY: the configured files again.
        #expect(throws: ConfigError.self) { try ConfigLoader.parse(text: text, system: Self.system, credentials: SystemdCredentials(directory: nil)) }
        #expect(SystemdCredentials(directory: "").directory == nil)
    }

    /// The unit's `ExecStartPre=` and `ExecStart=` command lines, with the test's binary and config.
    static func unitCommands(config: String) throws -> (check: [String], run: [String]) {
        let unit = try String(contentsOfFile: "\(Tools.packageRoot)/deploy/keepalive.service", encoding: .utf8)
        func command(_ key: String) throws -> [String] {
            let line = try #require(unit.split(separator: "\n").first { $0.hasPrefix("\(key)=") }, "no \(key)= in the unit")
            return line.dropFirst(key.count + 1)
                .replacingOccurrences(of: "/usr/bin/keepalive", with: Tools.agent)
                .replacingOccurrences(of: "/etc/keepalive/config.toml", with: config)
                .split(separator: " ").map(String.init)
        }
        return (try command("ExecStartPre"), try command("ExecStart"))
    }

    /// `setpriv` to nobody:nogroup with no supplementary groups, killed with the test run.
    static func asNobody(_ command: [String]) -> [String] {
        ["--reuid=65534", "--regid=65534", "--clear-groups", "--pdeathsig=KILL", "--"] + command
    }

    /// Owner (and group of the same number) and mode, as `install -o -g -m` would set them.
    static func own(_ path: String, _ uid: uid_t, _ mode: mode_t) throws {
        guard chown(path, uid, gid_t(uid)) == 0, chmod(path, mode) == 0 else { throw POSIXError(.EPERM) }
    }

    /// The unit's `ExecStartPre=` and `ExecStart=` as nobody (no systemd here), once without and
    /// once with $CREDENTIALS_DIRECTORY, against a TLS broker asking for a client key and a
    /// password; run once for the three claims below. The agent and the broker are stopped before
    /// the outcome is handed out.
    struct Unprivileged: Sendable {
        let password: String
        let denied: (status: Int32?, text: String)
        let checked: (status: Int32?, text: String)
        let online: Result<MQTTSubscriber.Message, any Error>
        let procStatus: Result<String, any Error>
        let exitStatus: Int32?
        let agentText: String
    }

    static let unprivileged = Task { () async throws -> Unprivileged in
        let directory = try TemporaryDirectory("creds-e2e")
        try Self.own(directory.path, 0, 0o755)
        let certificates = try await TestCertificates.make(in: directory)
        let client = try await certificates.client(named: "pi", in: directory)
        let password = "pw-\(UInt64.random(in: 0...UInt64.max))"
        let passwords = try await TestCertificates.passwordFile(in: directory, user: "keepalive-pi", password: password)
        let broker = try MosquittoBroker.tls(certificates, requireClientCertificate: true, passwordFile: passwords)
        defer { broker.stop() }

        // As /etc/keepalive holds them: root-only secrets, a world-readable configuration.
        let secretPassword = try directory.write("mqtt.password", password + "\n")
        let secretKey = directory.file("mqtt.key")
        try FileManager.default.copyItem(atPath: client.keyFile, toPath: secretKey)
        for secret in [secretPassword, secretKey] { try Self.own(secret, 0, 0o600) }
        for file in [certificates.caFile, client.certFile] { try Self.own(file, 0, 0o644) }
        // As systemd would lay out $CREDENTIALS_DIRECTORY: the service's user alone may read it.
        let credentials = directory.file("credentials")
        try FileManager.default.createDirectory(atPath: credentials, withIntermediateDirectories: false)
        try FileManager.default.copyItem(atPath: secretPassword, toPath: "\(credentials)/mqtt.password")
        try FileManager.default.copyItem(atPath: secretKey, toPath: "\(credentials)/mqtt.key")
        for file in ["mqtt.password", "mqtt.key"] { try Self.own("\(credentials)/\(file)", 65534, 0o400) }
        try Self.own(credentials, 65534, 0o500)
        let state = directory.file("state")
        try FileManager.default.createDirectory(atPath: state, withIntermediateDirectories: false)
        try Self.own(state, 65534, 0o700)
        let config = try directory.write("config.toml", """
            [device]
            id = "credpi"
            timezone = "UTC"
            [mqtt]
            port = \(broker.port)
            tls = true
            cafile = "\(certificates.caFile)"
            certfile = "\(client.certFile)"
            keyfile = "\(secretKey)"
            username = "keepalive-pi"
            password_file = "\(secretPassword)"
            reconnect_min_s = 0.2
            reconnect_max_s = 1
            [gps]
            enabled = false
            [hr]
            transport = "none"
            [store]
            path = "\(state)/keepalive.db"
            """)
        try Self.own(config, 0, 0o644)
        let (check, run) = try Self.unitCommands(config: config)
        let setpriv = Tools.find("setpriv")

        // Without credentials the unprivileged user cannot read the secrets: 78, naming the key.
        let denied = try ManagedProcess(name: "check-config as nobody", executable: setpriv, arguments: Self.asNobody(check))
        let deniedStatus = await denied.waitForExit(timeout: 30)

        let environment = ["CREDENTIALS_DIRECTORY": credentials]
        let checked = try ManagedProcess(
            name: "check-config as nobody", executable: setpriv, arguments: Self.asNobody(check), environment: environment)
        let checkedStatus = await checked.waitForExit(timeout: 30)

        let watcher = try await MQTTSubscriber(
            port: broker.port, filter: "keepalive/#",
            extraArguments: ["--cafile", certificates.caFile, "--cert", client.certFile, "--key", client.keyFile, "-u", "keepalive-pi", "-P", password])
        let agent = try ManagedProcess(name: "keepalive as nobody", executable: setpriv, arguments: Self.asNobody(run), environment: environment)
        defer { agent.stop() }
        let online = await captured {
            try await watcher.waitFor(timeout: 20, "online over TLS with a client key and a password from credentials; log:\n\(agent.text.suffix(1500))") {
                $0.topic == "keepalive/credpi/status" && $0.json?["state"] as? String == "online"
            }
        }
        let status = await captured { try String(contentsOfFile: "/proc/\(agent.pid)/status", encoding: .utf8) }
        let exitStatus = agent.stop()
        return Unprivileged(
            password: password, denied: (deniedStatus, denied.text), checked: (checkedStatus, checked.text), online: online,
            procStatus: status, exitStatus: exitStatus, agentText: agent.text)
    }

    @Test("the unit's ExecStartPre as an unprivileged user without $CREDENTIALS_DIRECTORY cannot read the root-only secrets: 78, naming the key")
    func deniedWithoutCredentials() async throws {
        let denied = try await Self.unprivileged.value.denied
        #expect(denied.status == 78, "\(denied.text)")
        #expect(denied.text.contains("mqtt.keyfile") && denied.text.contains("not readable by this user"), "\(denied.text)")
    }

    @Test("the unit's ExecStartPre as an unprivileged user reads the root-only password and key through $CREDENTIALS_DIRECTORY")
    func checkedWithCredentials() async throws {
        let outcome = try await Self.unprivileged.value
        let checked = outcome.checked
        #expect(checked.status == 0, "\(checked.text)")
        #expect(checked.text.contains("systemd credential mqtt.password stands in"))
        #expect(!checked.text.contains(outcome.password))
        #expect(!checked.text.contains("warning"), "credentials at 0400 and secrets at 0600 are no warning: \(checked.text)")
    }

    @Test("the unit's ExecStart as an unprivileged user connects over TLS with the credentials' password and key")
    func unprivilegedWithCredentials() async throws {
        let outcome = try await Self.unprivileged.value
        _ = try outcome.online.get()
        #expect(try outcome.procStatus.get().contains("Uid:\t65534\t65534\t65534\t65534"), "the agent ran as nobody")
        #expect(outcome.exitStatus == 0)
        #expect(!outcome.agentText.contains(outcome.password))
    }
}
