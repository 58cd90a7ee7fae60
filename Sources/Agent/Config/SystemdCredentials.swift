import Foundation

/// The credentials systemd hands the service: `LoadCredential=` in deploy/keepalive.service copies
/// root-only files into `$CREDENTIALS_DIRECTORY`, readable by the service's dynamic user alone.
public struct SystemdCredentials: Sendable, Equatable {
    /// The broker password (first line), from /etc/keepalive/mqtt.password.
    public static let password = "mqtt.password"
    /// The TLS client key (PEM), from /etc/keepalive/mqtt.key.
    public static let clientKey = "mqtt.key"

    /// `$CREDENTIALS_DIRECTORY`; nil when the agent was not started with credentials.
    public let directory: String?

    public init(directory: String?) {
        self.directory = directory.flatMap { $0.isEmpty ? nil : $0 }
    }

    public static var current: SystemdCredentials {
        SystemdCredentials(directory: ProcessInfo.processInfo.environment["CREDENTIALS_DIRECTORY"])
    }

    enum Lookup: Equatable {
        /// Not in the directory, or blank: the unit's `SetCredential=` default (a lone newline)
        /// stands in when the file it loads does not exist.
        case absent
        case unreadable(path: String)
        case present(path: String)
    }

    func lookup(_ name: String) -> Lookup {
        guard let directory else { return .absent }
        let path = "\(directory)/\(name)"
        guard FileManager.default.fileExists(atPath: path) else { return .absent }
        guard let data = FileManager.default.contents(atPath: path) else { return .unreadable(path: path) }
        let blank = data.allSatisfy { $0 == 0x20 || $0 == 0x09 || $0 == 0x0A || $0 == 0x0D }
        return blank ? .absent : .present(path: path)
    }
}

/// A file holding a secret, and whether it came as a systemd credential or from config.toml.
public struct SecretFile: Sendable, Equatable {
    public enum Origin: Sendable, Equatable {
        case credential(name: String)
        /// The config key that names the file (`password_file`, `keyfile`).
        case configured(key: String)
    }

    public var path: String
    public var origin: Origin

    /// For check-config and warnings: `systemd credential mqtt.password (/run/…)` or `mqtt.password_file /etc/…`.
    var description: String {
        switch origin {
        case .credential(let name): "systemd credential \(name) (\(path))"
        case .configured(let key): "mqtt.\(key) \(path)"
        }
    }
}
