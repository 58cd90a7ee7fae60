import Bus
import Foundation

/// Translates `[mqtt]` into connection options, reading the password file (never logged).
enum MQTTOptionsFactory {
    static func options(for config: AgentConfig, will: MQTTMessage) throws -> MQTTClientOptions {
        let mqtt = config.mqtt
        var password: String?
        if !mqtt.passwordFile.isEmpty {
            let text = try String(contentsOfFile: mqtt.passwordFile, encoding: .utf8)
            password = text.split(separator: "\n", omittingEmptySubsequences: false).first.map(String.init) ?? ""
        }
        return MQTTClientOptions(
            host: mqtt.host, port: mqtt.port, clientID: mqtt.clientID, protocolVersion: mqtt.protocolVersion.rawValue,
            keepaliveS: mqtt.keepaliveS, sessionExpiryS: UInt32(clamping: mqtt.sessionExpiryS),
            username: mqtt.username.isEmpty ? nil : mqtt.username, password: password,
            tls: mqtt.tls
                ? MQTTClientOptions.TLS(
                    cafile: mqtt.cafile, certfile: mqtt.certfile.isEmpty ? nil : mqtt.certfile,
                    keyfile: mqtt.keyfile.isEmpty ? nil : mqtt.keyfile, insecure: mqtt.tlsInsecure)
                : nil,
            will: will, reconnectMinS: mqtt.reconnectMinS, reconnectMaxS: mqtt.reconnectMaxS)
    }
}
