import Foundation

/// The running aggregate of today as the health publisher last computed it (every couple of
/// seconds), for queries about today: read from the query thread without waiting on the
/// publisher.
final class TodayHealth: @unchecked Sendable {
    private let lock = NSLock()
    private var current: (date: String, document: HealthDocument)?

    func set(date: String, document: HealthDocument) {
        lock.withLock { current = (date, document) }
    }

    func document(for date: String) -> HealthDocument? {
        lock.withLock { current?.date == date ? current?.document : nil }
    }
}
