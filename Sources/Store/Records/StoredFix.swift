/// A GPS fix as stored: validated, stamped by the clock rule.
public struct StoredFix: Sendable, Equatable, Codable {
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
