/// A GPS fix as stored: validated, stamped by the clock rule.
public struct StoredFix: Sendable, Equatable {
    public var timeMs: Int64
    public var receivedMs: Int64
    public var lat: Double
    public var lon: Double
    public var altHAE: Double?
    public var altMSL: Double?
    public var speed: Double?
    public var track: Double?
    public var climb: Double?
    public var eph: Double?
    public var epv: Double?
    public var mode: Int
    public var satellites: Int?
    public var timeSource: String

    public init(
        timeMs: Int64, receivedMs: Int64, lat: Double, lon: Double, altHAE: Double? = nil, altMSL: Double? = nil,
        speed: Double? = nil, track: Double? = nil, climb: Double? = nil, eph: Double? = nil, epv: Double? = nil,
        mode: Int, satellites: Int? = nil, timeSource: String
    ) {
        self.timeMs = timeMs
        self.receivedMs = receivedMs
        self.lat = lat
        self.lon = lon
        self.altHAE = altHAE
        self.altMSL = altMSL
        self.speed = speed
        self.track = track
        self.climb = climb
        self.eph = eph
        self.epv = epv
        self.mode = mode
        self.satellites = satellites
        self.timeSource = timeSource
    }
}

/// One Heart Rate Measurement notification as stored, with its RR intervals.
public struct StoredHeartRate: Sendable, Equatable {
    public var sensor: String
    public var timeMs: Int64
    public var receivedMs: Int64
    public var bpm: Int
    /// 0 unsupported, 1 supported but not detected, 2 detected.
    public var contact: Int
    public var energyKJ: Int?
    public var valid: Bool
    public var raw: [UInt8]
    /// In 1/1024 s, oldest first.
    public var rrIntervals: [Int]

    public init(
        sensor: String, timeMs: Int64, receivedMs: Int64, bpm: Int, contact: Int, energyKJ: Int? = nil, valid: Bool,
        raw: [UInt8], rrIntervals: [Int] = []
    ) {
        self.sensor = sensor
        self.timeMs = timeMs
        self.receivedMs = receivedMs
        self.bpm = bpm
        self.contact = contact
        self.energyKJ = energyKJ
        self.valid = valid
        self.raw = raw
        self.rrIntervals = rrIntervals
    }
}

/// What a step sensor delivered, as stored: a foot pod's RSC notification (0x2A53, decoded when
/// read), or the steps a chest strap's accelerometer showed in one short window.
public struct StoredStepRecord: Sendable, Equatable {
    public enum Kind: String, Sendable {
        /// Running Speed and Cadence Measurement: `raw` holds the value as received.
        case rsc
        /// Steps estimated from acceleration in one window: `endMs`, `coveredMs`, `steps`.
        case accelerometer = "acc"
    }

    public var sensor: String
    public var kind: Kind
    /// rsc: the notification's time; acc: the first sample of the window (with the sensor, it
    /// names the window: a replay of the same stream stores nothing new).
    public var timeMs: Int64
    public var receivedMs: Int64
    public var raw: [UInt8]
    public var endMs: Int64?
    public var coveredMs: Int64?
    public var steps: Int?

    public init(sensor: String, timeMs: Int64, receivedMs: Int64, rsc raw: [UInt8]) {
        self.sensor = sensor
        kind = .rsc
        self.timeMs = timeMs
        self.receivedMs = receivedMs
        self.raw = raw
    }

    public init(sensor: String, firstSampleMs: Int64, lastSampleMs: Int64, receivedMs: Int64, coveredMs: Int64, steps: Int) {
        self.sensor = sensor
        kind = .accelerometer
        timeMs = firstSampleMs
        self.receivedMs = receivedMs
        raw = []
        endMs = lastSampleMs
        self.coveredMs = coveredMs
        self.steps = steps
    }
}

/// A message to queue. Its payload is made inside the transaction, once its `seq` is known.
public struct OutboxDraft: Sendable {
    public var topic: String
    public var qos: Int
    public var retain: Bool
    public var contentType: String?
    public var expiryS: Int?
    /// A newer draft on the same topic may replace this one while it is still undelivered
    /// (`health/today`, `status`); never for `location` or `health/daily`.
    public var supersedable: Bool
    /// When the store cannot take it (disk full), keep it in memory with its seq, send it live,
    /// and queue it once the store works again (`Store.hold`): for messages that are never
    /// dropped (`location`, `event/…`). Others fail with the write.
    public var holdWhenUnstorable: Bool
    public var makePayload: @Sendable (_ seq: Int64) -> [UInt8]

    public init(
        topic: String, qos: Int = 1, retain: Bool, contentType: String? = "application/json", expiryS: Int? = nil,
        supersedable: Bool = false, holdWhenUnstorable: Bool = false, makePayload: @escaping @Sendable (_ seq: Int64) -> [UInt8]
    ) {
        self.topic = topic
        self.qos = qos
        self.retain = retain
        self.contentType = contentType
        self.expiryS = expiryS
        self.supersedable = supersedable
        self.holdWhenUnstorable = holdWhenUnstorable
        self.makePayload = makePayload
    }
}

/// A queued message, in delivery order (`id`; 0 for a message held in memory, not yet queued).
public struct OutboxEntry: Sendable, Equatable {
    public var id: Int64
    public var seq: Int64
    public var topic: String
    public var payload: [UInt8]
    public var qos: Int
    public var retain: Bool
    public var contentType: String?
    public var expiryS: Int?
    public var createdMs: Int64
}

/// What one write stored: replays of the same data store nothing new.
/// A write whose rows were stored (in the ingest journal) but whose messages could not be queued
/// (the disk is full, the file read-only): the caller counts the rows as stored and deals with
/// the messages as with any failed write.
public struct MessagesNotQueued: Error, CustomStringConvertible {
    public var stored: StoreWriteResult
    public var underlying: any Error

    public var description: String { "\(underlying)" }
}

public struct StoreWriteResult: Sendable, Equatable {
    public var fixesInserted = 0
    public var heartRatesInserted = 0
    public var stepRecordsInserted = 0
    public var seqs: [Int64] = []
}

/// A day's aggregate row.
public struct StoredDayAggregate: Sendable, Equatable {
    public var date: String
    public var tz: String
    public var payload: String
    public var final: Bool
    public var updatedMs: Int64
    public var publishedPayload: String?
    /// The day's first and last fix as the JSON a query reply shows (`null` without fixes);
    /// nil where not recorded (aggregates stored before schema 3).
    public var firstFix: String?
    public var lastFix: String?
    /// Rows of the day were stored after the aggregate was computed (a bridge backlog, a
    /// replay): it no longer tells the whole day. Read from the store; ignored when saving.
    public var isStale: Bool

    public init(
        date: String, tz: String, payload: String, final: Bool, updatedMs: Int64, publishedPayload: String? = nil,
        firstFix: String? = nil, lastFix: String? = nil, isStale: Bool = false
    ) {
        self.date = date
        self.tz = tz
        self.payload = payload
        self.final = final
        self.updatedMs = updatedMs
        self.publishedPayload = publishedPayload
        self.firstFix = firstFix
        self.lastFix = lastFix
        self.isStale = isStale
    }
}

/// The newest fix, heart-rate and step row ids seen: where reading new rows continues.
public struct RowCursor: Sendable, Equatable {
    public var fixID: Int64
    public var heartRateID: Int64
    public var stepID: Int64

    public init(fixID: Int64 = 0, heartRateID: Int64 = 0, stepID: Int64 = 0) {
        self.fixID = fixID
        self.heartRateID = heartRateID
        self.stepID = stepID
    }
}

/// Rows stored after a cursor, in storing order, and the cursor after them.
public struct NewRows: Sendable {
    public var fixes: [StoredFix]
    public var heartRates: [StoredHeartRate]
    public var steps: [StoredStepRecord]
    public var cursor: RowCursor

    public init(fixes: [StoredFix], heartRates: [StoredHeartRate], steps: [StoredStepRecord] = [], cursor: RowCursor) {
        self.fixes = fixes
        self.heartRates = heartRates
        self.steps = steps
        self.cursor = cursor
    }

    /// Fewer than `limit` of each kind: nothing more to read after these.
    public func isLast(limit: Int) -> Bool { fixes.count < limit && heartRates.count < limit && steps.count < limit }
}
