/// What `status.gps.state` says (docs/contract.md, "Status"): the GPS reader's own state.
enum GPSState: String, Sendable {
    case fixed, acquiring, reacquiring, disconnected
}

/// What `status.hr.state` says: `streaming` while valid notifications arrive, `no_contact` while
/// the strap reports no skin contact, `stalled` when it went quiet and is being reconnected,
/// `disconnected` before the first notification and when the transport failed.
enum HeartRateState: String, Sendable {
    case disconnected, stalled, streaming
    case noContact = "no_contact"
}
