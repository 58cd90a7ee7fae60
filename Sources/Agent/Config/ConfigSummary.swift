/// The effective configuration as `check-config` prints it: every key of `ConfigKeys` with its
/// value after defaults, in TOML form. The MQTT password is never read here, only the path of
/// its file (and whether a systemd credential stands in for it).
struct ConfigSummary {
    let text: String

    init(_ config: AgentConfig) {
        var lines: [String] = []
        var section = ""
        for key in ConfigKeys.all {
            if key.section != section {
                section = key.section
                lines.append("[\(section)]")
            }
            lines.append("\(key.name) = \(key.render(config))")
        }
        text = lines.joined(separator: "\n")
    }
}
