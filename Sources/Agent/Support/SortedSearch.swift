extension RandomAccessCollection where Element: Comparable, Index == Int {
    /// In a collection sorted ascending, the first index whose element is at least `value`
    /// (`endIndex` when none is): a binary search.
    func lowerBound(of value: Element) -> Int {
        var low = startIndex
        var high = endIndex
        while low < high {
            let middle = (low + high) / 2
            if self[middle] < value { low = middle + 1 } else { high = middle }
        }
        return low
    }
}
