/// A bounded set of recent origins: the oldest goes when a new one comes past `capacity`.
struct RecentOrigins {
    private var order: [Int64] = []
    private var members: Set<Int64> = []
    private var next = 0
    let capacity: Int

    init(capacity: Int) { self.capacity = capacity }

    func contains(_ origin: Int64) -> Bool { members.contains(origin) }

    mutating func insert(_ origin: Int64) {
        guard members.insert(origin).inserted else { return }
        if order.count < capacity {
            order.append(origin)
        } else {
            members.remove(order[next])
            order[next] = origin
            next = (next + 1) % capacity
        }
    }
}
