import Foundation
import Supervision

extension Store {
    /// How a store is opened: its file, how durably it commits, how its days are cut, whether
    /// windows wait in the ingest journal, and its clock. One value rather than a long list of
    /// initialiser arguments; every field but the path has the agent's default.
    public struct Configuration: Sendable {
        public var path: String
        public var synchronous: Synchronous
        /// Files up to this size get a full `quick_check` at start (`Store.defaultFullCheckMaxBytes`).
        public var fullCheckMaxBytes: Int64
        /// The zone that cuts rows into the local days of `day_aggregate` (`[device] timezone`).
        public var dayTimeZone: TimeZone
        /// How long a commit window may wait in the ingest journal (`[store] fold_s`); nil: the
        /// journal is off and windows go to the tables.
        public var journalFoldAfter: Duration?
        /// The owner's clock: the outbox's stamps, the name a damaged file is kept under, what a
        /// reopen carries over.
        public var clock: any WallClock
        /// Whether acknowledged outbox rows are kept (marked delivered) for resend requests, and
        /// pruned later (`prunePublished`), rather than deleted (`[store] keep_published_h` > 0).
        public var keepPublished: Bool

        public init(
            path: String, synchronous: Synchronous = .full, fullCheckMaxBytes: Int64 = Store.defaultFullCheckMaxBytes,
            dayTimeZone: TimeZone = .current, journalFoldAfter: Duration? = nil, clock: any WallClock = SystemClock(),
            keepPublished: Bool = false
        ) {
            self.path = path
            self.synchronous = synchronous
            self.fullCheckMaxBytes = fullCheckMaxBytes
            self.dayTimeZone = dayTimeZone
            self.journalFoldAfter = journalFoldAfter
            self.clock = clock
            self.keepPublished = keepPublished
        }
    }
}
