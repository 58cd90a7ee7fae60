/// Appends that grow an array by an eighth (at least 4 096 elements) when it is full, where
/// `append` doubles it: a series a night's notifications are appended to for hours holds up to
/// twice what it keeps by doubling, and the agent holds a few such nights while a backlog lands
/// (issue 32). Growing by an eighth copies each element about eight times over a night, a few
/// milliseconds in all.
extension Array {
    mutating func appendGrowingGently(_ element: Element) {
        if count == capacity { reserveCapacity(count + Swift.max(4_096, count / 8)) }
        append(element)
    }
}
