import Foundation
import Synchronization
import Testing
import TestKit

/// Runs a short command to its end; its exit status and output (stdout and stderr).
func runCommand(
    _ executable: String, _ arguments: [String], environment: [String: String]? = nil, timeout: Double = 120
) async throws -> (status: Int32, output: String) {
    let process = try ManagedProcess(
        name: (executable as NSString).lastPathComponent, executable: executable, arguments: arguments, environment: environment)
    guard let status = await process.waitForExit(timeout: timeout) else {
        process.stop()
        throw WaitTimeout(description: "\(executable) \(arguments.joined(separator: " ")) did not finish in \(timeout) s")
    }
    return (status, process.text)
}

/// The fleet's suites, one after the other: each brings up a three-node cluster (and most a
/// PostgreSQL), which on a two-core machine is load enough.
@Suite(.serialized, .enabled(if: FleetPrerequisites.missing == nil, "\(FleetPrerequisites.missing ?? "")"))
enum FleetSuites {}

/// The fleet's CA and the nodes' certificate (deploy/fleet/fleet-ca.sh) in `directory`/tls, for
/// the names the tests connect by; the directory, for `FleetCluster(tlsDirectory:)`.
func makeFleetCA(in directory: TemporaryDirectory) async throws -> String {
    let made = try await runCommand("\(Tools.packageRoot)/deploy/fleet/fleet-ca.sh", [directory.file("tls"), "localhost", FleetCluster.host])
    guard made.status == 0 else { throw WaitTimeout(description: "fleet-ca.sh failed: \(made.output)") }
    return directory.file("tls")
}

/// A fresh directory with a three-node cluster and a PostgreSQL in it, both up while `body`
/// runs and stopped after it, whether it threw or not. The nodes speak MQTT over TLS only, as
/// on real hosts (docs/fleet.md); `tls: false` only where a test says why.
func withClusterAndPostgres(
    _ label: String, tls: Bool = true, _ body: (FleetCluster, TestPostgres, TemporaryDirectory) async throws -> Void
) async throws {
    let directory = try TemporaryDirectory(label)
    chmod(directory.path, 0o755)
    let tlsDirectory: String? = if tls { try await makeFleetCA(in: directory) } else { nil }
    let cluster = FleetCluster(directory: directory.file("cluster"), basePort: freeNodePorts(), tlsDirectory: tlsDirectory)
    // PostgreSQL takes TCP over TLS only, whatever the MQTT hops speak; its certificate from the same CA.
    let postgresTLS = if let tlsDirectory { tlsDirectory } else { try await makeFleetCA(in: directory) }
    let postgres = TestPostgres(directory: directory.file("pg"), port: Ports.free(), tlsDirectory: postgresTLS)
    try await postgres.create()
    try await postgres.start()
    do {
        try await cluster.run { try await body(cluster, postgres, directory) }
        try? await postgres.stop()
    } catch {
        try? await postgres.stop()
        throw error
    }
}

/// A fresh directory with a three-node cluster in it, speaking MQTT over TLS only (its own CA),
/// up while `body` runs and taken down after it, whether it threw or not; no PostgreSQL.
func withCluster(_ label: String, _ body: (FleetCluster, TemporaryDirectory) async throws -> Void) async throws {
    let directory = try TemporaryDirectory(label)
    chmod(directory.path, 0o755)
    let cluster = FleetCluster(directory: directory.file("cluster"), basePort: freeNodePorts(), tlsDirectory: try await makeFleetCA(in: directory))
    try await cluster.run { try await body(cluster, directory) }
}

/// The first of three consecutive free ports below Linux's ephemeral range (32768-60999): a node
/// restarted after a SIGKILL must get its port back, which a client's outgoing connection may
/// have taken meanwhile if it were ephemeral.
func freeNodePorts() -> Int {
    while true {
        let base = Int.random(in: 20_000..<32_000)
        if (base..<(base + 3)).allSatisfy({ !Ports.isListening($0) && canBind($0) }) { return base }
    }
}

private func canBind(_ port: Int) -> Bool {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { return false }
    defer { close(fd) }
    return Ports.withLoopbackAddress(port: port) { address, length in bind(fd, address, length) == 0 }
}

/// What the fleet tests need installed (scripts/setup.sh installs it); nil when all is there.
enum FleetPrerequisites {
    /// Debian's newest PostgreSQL (15 on bookworm, 17 on trixie).
    static let postgresBin: String = {
        let versions = ((try? FileManager.default.contentsOfDirectory(atPath: "/usr/lib/postgresql")) ?? []).compactMap(Int.init)
        return "/usr/lib/postgresql/\(versions.max() ?? 15)/bin"
    }()
    static let python = "/usr/bin/python3"

    static var missing: String? {
        let needed = [
            ("ejabberdctl (ejabberd)", "/usr/sbin/ejabberdctl"), ("initdb (postgresql)", "\(postgresBin)/initdb"),
            ("psql (postgresql-client)", "/usr/bin/psql"), ("runuser", "/usr/sbin/runuser"), ("tcpdump", "/usr/bin/tcpdump"),
            ("openssl", "/usr/bin/openssl"),
        ]
        let absent = needed.filter { !FileManager.default.isExecutableFile(atPath: $0.1) }.map(\.0)
        if getuid() != 0 { return "the fleet tests run ejabberd and PostgreSQL as their own users: run as root" }
        if !absent.isEmpty { return "not installed: \(absent.joined(separator: ", ")) (scripts/setup.sh installs them)" }
        if !FileManager.default.fileExists(atPath: "/usr/lib/python3/dist-packages/paho") { return "python3-paho-mqtt is not installed" }
        if !FileManager.default.fileExists(atPath: "/usr/lib/python3/dist-packages/cryptography") { return "python3-cryptography is not installed" }
        return nil
    }
}

/// A three-node ejabberd cluster from deploy/fleet/cluster.sh, in a directory of its own.
final class FleetCluster: Sendable {
    let directory: String
    let basePort: Int
    /// deploy/fleet/fleet-ca.sh's directory when the nodes speak MQTT over TLS only.
    let tlsDirectory: String?
    /// deploy/fleet/fleet-jwt.py's key directory (beside `directory`): devices log in only with
    /// tokens signed with its private key, which the nodes do not get.
    let jwtDirectory: String
    static let host = "fleet.keepalive"
    private static var script: String { "\(Tools.packageRoot)/deploy/fleet/cluster.sh" }
    private static var jwtScript: String { "\(Tools.packageRoot)/deploy/fleet/fleet-jwt.py" }

    init(directory: String, basePort: Int, tlsDirectory: String? = nil) {
        self.directory = directory
        self.basePort = basePort
        self.tlsDirectory = tlsDirectory
        jwtDirectory = "\((directory as NSString).deletingLastPathComponent)/jwt"
    }

    /// A device's token (its MQTT password), valid `days` days (negative: expired).
    func token(_ device: String, days: String = "1") async throws -> String {
        let made = try await runCommand(Self.jwtScript, ["token", jwtDirectory, device, Self.host, days])
        guard made.status == 0 else { throw WaitTimeout(description: "fleet-jwt.py token failed: \(made.output)") }
        return made.output.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// fleet-load.py's `--devices @file`: one `device:token` a line, written to `path`.
    func tokenFile(_ devices: [String], path: String) async throws -> String {
        try (devices.joined(separator: "\n") + "\n").write(toFile: "\(path).names", atomically: true, encoding: .utf8)
        let made = try await runCommand(
            "/bin/sh", ["-c", "exec \"$0\" tokens \"$1\" \"$2\" 1 < \"$3.names\" > \"$3\"", Self.jwtScript, jwtDirectory, Self.host, path])
        guard made.status == 0 else { throw WaitTimeout(description: "fleet-jwt.py tokens failed: \(made.output)") }
        return "@\(path)"
    }

    /// MQTT port of node `n` (1…3).
    func port(_ n: Int) -> Int { basePort + n - 1 }

    /// The fleet CA's certificate, which clients verify the nodes with, when they speak TLS.
    var caFile: String? { tlsDirectory.map { "\($0)/ca.pem" } }
    /// The name clients connect by: over TLS the one the nodes' certificate holds, not the address.
    var clientHost: String { tlsDirectory == nil ? "127.0.0.1" : "localhost" }
    /// `host:port` of node `n`, as clients name it.
    func address(_ n: Int) -> String { "\(clientHost):\(port(n))" }
    /// Arguments for mosquitto_pub, _sub and _rr that make them reach the nodes as this cluster
    /// needs (over TLS: its name and the CA); they come after the tools' own `-h 127.0.0.1`, and
    /// mosquitto's clients take the last `-h`.
    var tlsArguments: [String] { caFile.map { ["-h", clientHost, "--cafile", $0] } ?? [] }
    /// `tlsArguments` with an account's credentials.
    func clientArguments(_ user: String, _ password: String) -> [String] { ["-u", user, "-P", password] + tlsArguments }

    /// Brings the cluster up, runs `body`, and takes the cluster down whether `body` threw or not
    /// (the nodes are daemons, not children of the test: nothing else would stop them).
    func run<T>(_ body: () async throws -> T) async throws -> T {
        do {
            try await up()
            let result = try await body()
            await down()
            return result
        } catch {
            await down()
            throw error
        }
    }

    func up() async throws {
        var environment = ProcessInfo.processInfo.environment
        if let tlsDirectory { environment["FLEET_TLS_DIR"] = tlsDirectory }
        if !FileManager.default.fileExists(atPath: "\(jwtDirectory)/jwt-public.jwk") {
            let made = try await runCommand(Self.jwtScript, ["keys", jwtDirectory])
            guard made.status == 0 else { throw WaitTimeout(description: "fleet-jwt.py keys failed: \(made.output)") }
        }
        environment["FLEET_JWT_DIR"] = jwtDirectory
        let result = try await runCommand(Self.script, ["up", directory, String(basePort)], environment: environment, timeout: 180)
        guard result.status == 0 else { throw WaitTimeout(description: "cluster.sh up failed: \(result.output)") }
    }

    func down() async {
        _ = try? await runCommand(Self.script, ["down", directory], timeout: 60)
    }

    func ctl(_ node: Int, _ arguments: [String]) async throws -> String {
        let result = try await runCommand(Self.script, ["ctl", directory, String(node)] + arguments)
        guard result.status == 0 else { throw WaitTimeout(description: "ejabberdctl \(arguments.first ?? "") failed: \(result.output)") }
        return result.output
    }

    /// A reader's account (archive, viewer), stored as SCRAM; devices have none.
    func register(_ user: String, password: String) async throws {
        _ = try await ctl(1, ["register", user, Self.host, password])
    }

    /// SIGKILL of node `n`'s Erlang VM: the node dies as in a power cut.
    func killNode(_ n: Int) async throws {
        let pid = try await runCommand(Self.script, ["pid", directory, String(n)]).output.trimmingCharacters(in: .whitespacesAndNewlines)
        guard let number = pid_t(pid), number > 1 else { throw WaitTimeout(description: "no PID for node \(n): \(pid)") }
        kill(number, SIGKILL)
        try await Wait.until(timeout: 10, "node \(n) (PID \(number)) to die") { kill(number, 0) != 0 }
    }

    /// The TCP ports the nodes' Erlang distribution listens on (from epmd): what crosses between
    /// the nodes goes through them.
    func distributionPorts() async throws -> [Int] {
        let names = try await runCommand("/usr/bin/epmd", ["-names"], environment: ["ERL_EPMD_ADDRESS": "127.0.0.1"])
        return names.output.split(separator: "\n").compactMap { line in
            guard line.hasPrefix("name ej"), line.contains("_\(basePort) at port ") else { return nil }
            return line.split(separator: " ").last.flatMap { Int($0) }
        }
    }

    func startNode(_ n: Int) async throws {
        let result = try await runCommand(Self.script, ["start", directory, String(n)], timeout: 120)
        guard result.status == 0 else { throw WaitTimeout(description: "restarting node \(n) failed: \(result.output)") }
    }
}

/// `keepalive archive` as a process: its own config, client id and node.
final class ArchiverProcess: Sendable {
    let configPath: String
    let clientID: String
    private let running = Mutex<ManagedProcess?>(nil)
    var process: ManagedProcess? { running.withLock { $0 } }

    /// `nodes`: the ports of the cluster's other nodes, `[archive] nodes`; `cafile`: MQTT over TLS
    /// to "localhost", verified with that CA.
    init(
        directory: String, clientID: String, port: Int, passwordFile: String, conninfo: String, nodes: [Int] = [], cafile: String? = nil
    ) throws {
        self.clientID = clientID
        configPath = "\(directory)/\(clientID).toml"
        // deploy/fleet/archive.toml.in, as the benchmark and the page check fill it in.
        let host = cafile == nil ? "127.0.0.1" : "localhost"
        let values = [
            "HOST": host, "PORT": String(port), "TLS": cafile == nil ? "false" : "true", "CAFILE": cafile ?? "",
            "PASSWORD_FILE": passwordFile, "CLIENT_ID": clientID, "CONNINFO": conninfo, "STATUS_INTERVAL_S": "1",
            "NODES": nodes.map { "\"\(host):\($0)\"" }.joined(separator: ", "),
        ]
        let template = try String(contentsOfFile: "\(Tools.packageRoot)/deploy/fleet/archive.toml.in", encoding: .utf8)
        let config = values.reduce(template) { $0.replacingOccurrences(of: "@\($1.key)@", with: $1.value) }
        guard !config.contains("@") else { throw WaitTimeout(description: "deploy/fleet/archive.toml.in has a placeholder not filled in") }
        try config.write(toFile: configPath, atomically: true, encoding: .utf8)
    }

    /// `environment`: added to the test's own (a fault-injection hook, `TestHooks`).
    func start(environment: [String: String]? = nil) throws {
        let process = try ManagedProcess(
            name: clientID, executable: Tools.agent, arguments: ["archive", "--config", configPath], environment: environment)
        running.withLock { $0 = process }
    }

    /// An archiver on node `node` with the `archive` account (password `pw-archive`), started and
    /// connected (over TLS when the cluster speaks it).
    static func connected(clientID: String, node: Int, cluster: FleetCluster, postgres: TestPostgres, directory: TemporaryDirectory) async throws
        -> ArchiverProcess
    {
        let archiver = try ArchiverProcess(
            directory: directory.path, clientID: clientID, port: cluster.port(node), passwordFile: try archivePasswordFile(in: directory),
            conninfo: postgres.archiverConninfo, cafile: cluster.caFile)
        try archiver.start()
        try await archiver.process?.waitForLine(containing: "MQTT connected", timeout: 20)
        return archiver
    }

    func kill9() { process?.kill9() }
    func stop() { process?.stop() }
    var log: String { process?.text ?? "" }
}

/// The `archive` account's password (`pw-archive`) in a file of `directory`, mode 0600, as
/// `[mqtt] password_file` takes it.
func archivePasswordFile(in directory: TemporaryDirectory) throws -> String {
    let path = try directory.write("archive.password", "pw-archive\n")
    chmod(path, 0o600)
    return path
}

/// deploy/fleet/fleet-load.py's simulated devices (`tokens`: `FleetCluster.tokenFile`) over the
/// cluster's three nodes, over TLS when it speaks it, writing what was acknowledged to `acked`
/// and staying connected 600 s after their run to answer resend requests; `arguments` adds the
/// rate, the length and the rest.
func startFleetLoad(cluster: FleetCluster, tokens: String, acked: String, _ arguments: [String]) throws -> ManagedProcess {
    try ManagedProcess(
        name: "fleet-load", executable: FleetPrerequisites.python,
        arguments: [
            "\(Tools.packageRoot)/deploy/fleet/fleet-load.py", "--nodes", (1...3).map(cluster.address).joined(separator: ","),
            "--devices", tokens, "--out", acked, "--linger", "600",
        ] + arguments + (cluster.caFile.map { ["--cafile", $0] } ?? []))
}

/// The (device, seq) pairs a `fleet-load.py --out` file lists as acknowledged, as "device\tseq".
func acknowledged(in path: String) throws -> Set<String> {
    var pairs: Set<String> = []
    for line in try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n") {
        let fields = line.split(separator: "\t")
        if fields.count == 3 { pairs.insert("\(fields[0])\t\(fields[1])") }
    }
    return pairs
}

/// Waits until every pair in `expected` is archived, then expects each stored once and no row
/// nobody acknowledged; false (recorded, with `log`) when some never arrived.
func expectArchivedExactlyOnce(
    _ expected: Set<String>, postgres: TestPostgres, timeout: Double, log: @autoclosure () -> String
) async throws -> Bool {
    var archived: [String] = []
    do {
        try await Wait.until(timeout: timeout, "every acknowledged message in the archive") {
            archived = try syncQuery(postgres, "SELECT device, seq FROM archive_messages").map { $0.joined(separator: "\t") }
            return expected.isSubset(of: Set(archived))
        }
    } catch {
        let missing = expected.subtracting(archived).sorted()
        Issue.record("\(missing.count) of \(expected.count) not archived: \(missing.prefix(20))\n\(log().suffix(3000))")
        return false
    }
    #expect(archived.count == Set(archived).count, "a (device, seq) stored twice")
    #expect(Set(archived) == expected, "rows nobody acknowledged: \(Set(archived).subtracting(expected).sorted().prefix(10))")
    return true
}
