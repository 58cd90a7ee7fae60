/// The agent's version: `--version`, `status.version`, Home Assistant's `sw_version`.
public enum KeepAliveVersion {
    public static let string = "0.1.0"
}
