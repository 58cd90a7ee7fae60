import Foundation

/// Secrets that other users of the machine can read: `check-config` prints a warning for each and
/// `run` logs each once at start. Not an error — the agent still works — but a broker password in
/// a mode 0644 file is everybody's password.
enum SecretAudit {
    static func warnings(for config: AgentConfig, credentials: SystemdCredentials = .current) -> [String] {
        var files: [(what: String, file: SecretFile)] = []
        if let password = config.mqtt.password { files.append(("the broker password", password)) }
        if let key = config.mqtt.clientKey { files.append(("the TLS client key", key)) }
        // The configured files too when a credential stood in for them: they still lie on the disk.
        if !config.mqtt.passwordFile.isEmpty, config.mqtt.password?.path != config.mqtt.passwordFile {
            files.append(("the broker password", SecretFile(path: config.mqtt.passwordFile, origin: .configured(key: "password_file"))))
        }
        if !config.mqtt.keyfile.isEmpty, config.mqtt.clientKey?.path != config.mqtt.keyfile {
            files.append(("the TLS client key", SecretFile(path: config.mqtt.keyfile, origin: .configured(key: "keyfile"))))
        }
        var warnings = files.compactMap { what, file in exposure(of: file, holding: what) }
        if config.mqtt.clientKey == nil, case .present(let path) = credentials.lookup(SystemdCredentials.clientKey) {
            warnings.append("systemd credential \(SystemdCredentials.clientKey) (\(path)) is not used: it needs tls = true and a certfile")
        }
        return warnings
    }

    /// A warning when `file` is readable by its group or by others.
    private static func exposure(of file: SecretFile, holding what: String) -> String? {
        var info = stat()
        guard stat(file.path, &info) == 0 else { return nil }
        let mode = info.st_mode & 0o777
        let readers = [(mode & 0o040 != 0, "its group"), (mode & 0o004 != 0, "all users")].filter(\.0).map(\.1)
        guard !readers.isEmpty else { return nil }
        return "\(file.description) holds \(what) and is readable by \(readers.joined(separator: " and ")) (mode "
            + String(format: "%04o", mode) + "): chmod 600 it; the systemd unit reads it as root (LoadCredential=), "
            + "so the agent needs no access of its own"
    }
}
