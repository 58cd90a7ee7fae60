/// Runs `body` and keeps its value or its error, so that an end-to-end scenario run once can hand
/// each claim its own evidence: a step that timed out fails the claims that need it, with its own
/// message, and leaves the others to be judged.
public func captured<T>(_ body: () async throws -> T) async -> Result<T, any Error> {
    do { return .success(try await body()) } catch { return .failure(error) }
}
