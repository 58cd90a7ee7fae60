/// The JSON reply: `{"ok":true,"date","tz","has_data","health","location","track","hr","timeline","workouts"}` with
/// the parts that were asked for.
enum ReplyDocument {
    static func json(_ report: DayReport, include: Set<QueryRequest.Part>) -> JSONValue {
        var members: [(String, JSONValue)] = [
            ("ok", true), ("date", .string(report.day.description)), ("tz", .string(report.zoneName)), ("has_data", .bool(report.hasData)),
        ]
        if include.contains(.health) { members.append(("health", report.health)) }
        if include.contains(.location) { members.append(("location", report.location)) }
        if include.contains(.track) { members.append(("track", .array((report.track ?? []).map(\.json)))) }
        if include.contains(.hr) {
            members.append(("hr", .array((report.heartRateMinutes ?? []).map { .object([("ts", .int($0.0 / 1000)), ("bpm", .number($0.1, digits: 1))]) })))
        }
        if include.contains(.timeline) { members.append(("timeline", report.timeline ?? .array([]))) }
        if include.contains(.workouts) {
            members.append(("workouts", .array((report.workouts ?? []).map { .raw($0.publishedJSON()) })))
        }
        return .object(members)
    }
}
