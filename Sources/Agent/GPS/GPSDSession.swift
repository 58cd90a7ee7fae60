import CGPS
import Foundation

/// One libgps session with gpsd: open, WATCH for JSON, read reports. Blocking calls: used only
/// from the GPS reader's own thread. `gps_data_t` is ~24 KB, so it lives on the heap.
final class GPSDSession {
    private let data: UnsafeMutablePointer<gps_data_t>
    private var isOpen = false

    /// What one read produced.
    enum Report {
        /// A TPV: the position fields as gpsd gave them (NaN where it gave none).
        case position(RawFix)
        /// Something else (SKY, VERSION, DEVICES …); satellites used is tracked from SKY.
        case other
    }

    private(set) var satellitesUsed: Int?

    init(host: String, port: Int) throws {
        data = .allocate(capacity: 1)
        data.initialize(to: gps_data_t())
        // A throwing class initializer still runs deinit, which frees `data`: no cleanup here.
        let rc = gps_open(host, String(port), data)
        guard rc == 0 else {
            throw GPSDError.cannotOpen(String(cString: gps_errstr(errno)))
        }
        isOpen = true
        guard gps_stream(data, UInt32(WATCH_ENABLE | WATCH_JSON), nil) == 0 else {
            throw GPSDError.cannotOpen("WATCH refused")
        }
    }

    /// Closes the connection to gpsd (also done on deinit).
    func close() {
        if isOpen { gps_close(data) }
        isOpen = false
    }

    deinit {
        close()
        data.deallocate()
    }

    /// Waits up to `timeoutMs` for data; false on timeout.
    func waitForData(timeoutMs: Int) -> Bool {
        gps_waiting(data, Int32(clamping: timeoutMs * 1000))
    }

    /// Reads one report. Throws when gpsd went away (read returns -1).
    func read() throws -> Report {
        // Clear the flags: they then say what this one report set.
        data.pointee.set = 0
        let count = gps_read(data, nil, 0)
        guard count >= 0 else { throw GPSDError.connectionLost }
        let set = data.pointee.set
        if set & SATELLITE_SET != 0 {
            satellitesUsed = Int(data.pointee.satellites_used)
        }
        guard set & MODE_SET != 0 || set & LATLON_SET != 0 else { return .other }
        let fix = data.pointee.fix
        let time: Date? =
            set & TIME_SET != 0 && fix.time.tv_sec > 0
            ? Date(timeIntervalSince1970: Double(fix.time.tv_sec) + Double(fix.time.tv_nsec) / 1e9) : nil
        return .position(
            RawFix(
                time: time, mode: Int(fix.mode), lat: fix.latitude, lon: fix.longitude, altHAE: fix.altHAE,
                altMSL: fix.altMSL, speed: fix.speed, track: fix.track, climb: fix.climb,
                eph: fix.eph.isFinite ? fix.eph : (fix.epx.isFinite && fix.epy.isFinite ? max(fix.epx, fix.epy) : .nan),
                epv: fix.epv, satellites: satellitesUsed))
    }
}

enum GPSDError: Error, CustomStringConvertible {
    case cannotOpen(String)
    case connectionLost

    var description: String {
        switch self {
        case .cannotOpen(let reason): "cannot reach gpsd: \(reason)"
        case .connectionLost: "gpsd closed the connection"
        }
    }
}
