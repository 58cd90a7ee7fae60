/// Options printed or dumped (a log line, a debugger, `dump`) show whether there is a password,
/// never the password.
extension MQTTClientOptions: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    public var description: String {
        var parts = ["\(host):\(port)", "client_id=\(clientID)", "protocol=\(protocolVersion)"]
        if let username { parts.append("username=\(username)") }
        if password != nil { parts.append("password=<redacted>") }
        if let tls {
            parts.append("tls(cafile=\(tls.cafile)\(tls.certfile.map { " certfile=\($0)" } ?? "")\(tls.keyfile.map { " keyfile=\($0)" } ?? ""))")
        }
        return "MQTTClientOptions(" + parts.joined(separator: " ") + ")"
    }

    public var debugDescription: String { description }

    public var customMirror: Mirror {
        Mirror(self, children: ["description": description], displayStyle: .struct)
    }
}
