/// What became of the store's file while the agent ran.
public enum StoreFileProblem: String, Sendable {
    /// The path names no file (removed, or its file system gone).
    case deleted
    /// The path names another file.
    case replaced
}
