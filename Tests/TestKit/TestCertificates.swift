import Foundation

/// A throw-away CA and a server certificate for 127.0.0.1/localhost, made with openssl.
public struct TestCertificates: Sendable {
    public let caFile: String
    public let certFile: String
    public let keyFile: String

    public static func make(in directory: TemporaryDirectory) async throws -> TestCertificates {
        let ca = directory.file("ca.pem"), caKey = directory.file("ca.key")
        let cert = directory.file("server.pem"), key = directory.file("server.key"), csr = directory.file("server.csr")
        let extensions = try directory.write("san.cnf", "subjectAltName=IP:127.0.0.1,DNS:localhost\n")
        try await run(["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=KeepAlive test CA",
                       "-keyout", caKey, "-out", ca])
        try await run(["req", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=localhost", "-keyout", key, "-out", csr])
        try await run(["x509", "-req", "-in", csr, "-CA", ca, "-CAkey", caKey, "-CAcreateserial", "-days", "2",
                       "-extfile", extensions, "-out", cert])
        return TestCertificates(caFile: ca, certFile: cert, keyFile: key)
    }

    /// A client certificate and key signed by this CA (for a broker with `require_certificate true`).
    public func client(named name: String, in directory: TemporaryDirectory) async throws -> (certFile: String, keyFile: String) {
        let caKey = (caFile as NSString).deletingLastPathComponent + "/ca.key"
        let cert = directory.file("\(name).pem"), key = directory.file("\(name).key"), csr = directory.file("\(name).csr")
        try await Self.run(["req", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=\(name)", "-keyout", key, "-out", csr])
        try await Self.run(["x509", "-req", "-in", csr, "-CA", caFile, "-CAkey", caKey, "-CAcreateserial", "-days", "2", "-out", cert])
        return (cert, key)
    }

    private static func run(_ arguments: [String]) async throws {
        let process = try ManagedProcess(name: "openssl", executable: Tools.find("openssl"), arguments: arguments)
        guard await process.waitForExit(timeout: 60) == 0 else {
            throw WaitTimeout(description: "openssl \(arguments.first ?? "") failed: \(process.text)")
        }
    }

    /// A mosquitto password file with one user, made with mosquitto_passwd.
    public static func passwordFile(in directory: TemporaryDirectory, user: String, password: String) async throws -> String {
        try await passwordFile(in: directory, users: [(user, password)])
    }

    /// A mosquitto password file with several users.
    public static func passwordFile(in directory: TemporaryDirectory, users: [(name: String, password: String)]) async throws -> String {
        let path = directory.file("mosquitto.passwd")
        for (index, user) in users.enumerated() {
            let process = try ManagedProcess(
                name: "mosquitto_passwd", executable: Tools.find("mosquitto_passwd"),
                arguments: ["-b"] + (index == 0 ? ["-c"] : []) + [path, user.name, user.password])
            guard await process.waitForExit(timeout: 20) == 0 else {
                throw WaitTimeout(description: "mosquitto_passwd failed: \(process.text)")
            }
        }
        return path
    }
}
