import ServiceLifecycle

/// Sleeps for `duration`; false when the agent began shutting down meanwhile (the sleep is cut
/// short), so a service loop can end without waiting out its interval.
func sleepUnlessShuttingDown(for duration: Duration) async -> Bool {
    (try? await cancelWhenGracefulShutdown { try await Task.sleep(for: duration) }) != nil
}
