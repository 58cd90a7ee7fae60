import Bus
import Foundation

/// Translates `[mqtt]` into connection options, reading the password (from the systemd credential
/// or `password_file`, as the loader resolved it; never logged).
package enum MQTTOptionsFactory {
    package static func options(for config: AgentConfig, will: MQTTMessage) throws -> MQTTClientOptions {
        let mqtt = config.mqtt
        var password: String?
        if let source = mqtt.password {
            // The first line, without a CR (a file written on Windows for the first-boot kit).
            var line = try Data(contentsOf: URL(fileURLWithPath: source.path)).prefix { $0 != 0x0A }
            if line.last == 0x0D { line = line.dropLast() }
            guard let text = String(validating: line, as: UTF8.self) else { throw PasswordNotText(file: source.description) }
            password = text
        }
        return MQTTClientOptions(
            host: mqtt.host, port: mqtt.port, clientID: mqtt.clientID, protocolVersion: mqtt.protocolVersion.rawValue,
            keepaliveS: mqtt.keepaliveS, sessionExpiryS: UInt32(clamping: mqtt.sessionExpiryS),
            username: mqtt.username.isEmpty ? nil : mqtt.username, password: password,
            tls: mqtt.tls
                ? MQTTClientOptions.TLS(
                    cafile: mqtt.cafile, certfile: mqtt.certfile.isEmpty ? nil : mqtt.certfile,
                    keyfile: mqtt.clientKey?.path, insecure: mqtt.tlsInsecure)
                : nil,
            will: will, reconnectMinS: mqtt.reconnectMinS, reconnectMaxS: mqtt.reconnectMaxS)
    }
}

struct PasswordNotText: Error, CustomStringConvertible {
    let file: String
    var description: String { "the first line of \(file) is not UTF-8 text" }
}
