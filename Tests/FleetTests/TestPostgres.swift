import Foundation
import TestKit

/// A PostgreSQL cluster of its own (initdb into the test's directory, run as the user postgres),
/// started and stopped by the test. The tests' own psql reaches it as the superuser over a Unix
/// socket; with `tlsDirectory` (fleet-ca.sh's) it also listens on 127.0.0.1 for TCP over TLS
/// only, with SCRAM passwords (pg_hba: `hostssl … scram-sha-256`, no `host` line, no trust for
/// TCP), as docs/fleet.md sets it up on a host, and the archivers connect that way
/// (`archiverConninfo`: the role `keepalive`, owner of the database `keepalive`).
final class TestPostgres: Sendable {
    let directory: String
    let port: Int
    let tlsDirectory: String?
    private var data: String { "\(directory)/data" }
    private var database: String { tlsDirectory == nil ? "postgres" : "keepalive" }
    var conninfo: String { "host=\(directory) port=\(port) user=postgres dbname=\(database)" }
    /// The archivers' connection: over TLS with the server verified (`verify-full`: the fleet's CA,
    /// the name "localhost"), the password in a passfile, not in the config.
    var archiverConninfo: String {
        guard let tlsDirectory else { return conninfo }
        return "host=localhost hostaddr=127.0.0.1 port=\(port) dbname=keepalive user=keepalive sslmode=verify-full "
            + "sslrootcert=\(tlsDirectory)/ca.pem passfile=\(directory)/archiver.pgpass"
    }
    static let archiverPassword = "pw-postgres-keepalive"

    init(directory: String, port: Int, tlsDirectory: String? = nil) {
        self.directory = directory
        self.port = port
        self.tlsDirectory = tlsDirectory
    }

    private func asPostgres(_ tool: String, _ arguments: [String]) async throws -> String {
        let result = try await runCommand("/usr/sbin/runuser", ["-u", "postgres", "--", "\(FleetPrerequisites.postgresBin)/\(tool)"] + arguments)
        guard result.status == 0 else { throw WaitTimeout(description: "\(tool) failed: \(result.output)") }
        return result.output
    }

    func create() async throws {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        _ = try await runCommand("/bin/chown", ["postgres", directory])
        _ = try await asPostgres("initdb", ["-D", data, "-A", "trust", "-U", "postgres", "--no-sync"])
        guard let tlsDirectory else { return }
        // The server's certificate from the fleet's CA, for the name the archivers connect by.
        let made = try await runCommand(
            "\(Tools.packageRoot)/deploy/fleet/fleet-ca.sh", [tlsDirectory, "localhost"], environment: ["FLEET_CERT": "postgres"])
        guard made.status == 0 else { throw WaitTimeout(description: "fleet-ca.sh (postgres) failed: \(made.output)") }
        for file in ["postgres.crt", "postgres.key"] {
            try FileManager.default.copyItem(atPath: "\(tlsDirectory)/\(file)", toPath: "\(directory)/\(file)")
            _ = try await runCommand("/bin/chown", ["postgres", "\(directory)/\(file)"])
            chmod("\(directory)/\(file)", 0o600)
        }
        try """
            # The tests' own psql (superuser) over the Unix socket; TCP only over TLS, with a SCRAM password.
            local all all trust
            hostssl all all 127.0.0.1/32 scram-sha-256

            """.write(toFile: "\(data)/pg_hba.conf", atomically: true, encoding: .utf8)
        let settings = """

            listen_addresses = '127.0.0.1'
            ssl = on
            ssl_cert_file = '\(directory)/postgres.crt'
            ssl_key_file = '\(directory)/postgres.key'
            password_encryption = 'scram-sha-256'

            """
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: "\(data)/postgresql.conf"))
        try handle.seekToEnd()
        try handle.write(contentsOf: Data(settings.utf8))
        try handle.close()
        try "localhost:\(port):keepalive:keepalive:\(Self.archiverPassword)\n"
            .write(toFile: "\(directory)/archiver.pgpass", atomically: true, encoding: .utf8)
        chmod("\(directory)/archiver.pgpass", 0o600)
    }

    func start() async throws {
        let listen = tlsDirectory == nil ? " -c listen_addresses=''" : ""
        _ = try await asPostgres("pg_ctl", ["-D", data, "-o", "-p \(port) -k \(directory)\(listen)", "-l", "\(directory)/log", "-w", "start"])
        guard tlsDirectory != nil else { return }
        // Once: the archivers' role and database (the role owns it, so it may make the tables).
        let exists = try await runCommand(
            "/usr/bin/psql", ["host=\(directory) port=\(port) user=postgres dbname=postgres", "-At", "-c", "SELECT 1 FROM pg_roles WHERE rolname = 'keepalive'"])
        guard !exists.output.contains("1") else { return }
        for sql in ["CREATE ROLE keepalive LOGIN PASSWORD '\(Self.archiverPassword)'", "CREATE DATABASE keepalive OWNER keepalive"] {
            let result = try await runCommand("/usr/bin/psql", ["host=\(directory) port=\(port) user=postgres dbname=postgres", "-c", sql])
            guard result.status == 0 else { throw WaitTimeout(description: "psql \(sql) failed: \(result.output)") }
        }
    }

    /// A fast shutdown (pg_ctl signals the postmaster by the PID in its pid file).
    func stop() async throws {
        _ = try await asPostgres("pg_ctl", ["-D", data, "-m", "fast", "-w", "stop"])
    }

    /// Rows of `sql`, fields split on tabs.
    func query(_ sql: String) async throws -> [[String]] {
        let result = try await runCommand("/usr/bin/psql", [conninfo, "-At", "-F", "\t", "-c", sql])
        guard result.status == 0 else { throw WaitTimeout(description: "psql failed: \(result.output)") }
        return result.output.split(separator: "\n").map { $0.split(separator: "\t", omittingEmptySubsequences: false).map(String.init) }
    }
}
