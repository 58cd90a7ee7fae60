import Foundation

enum Geodesy {
    static let earthRadiusM = 6_371_008.8

    /// Great-circle distance (haversine on the mean Earth radius): within 0.5 % of the
    /// ellipsoid, far below GPS error at the distances between fixes.
    static func distanceM(lat1: Double, lon1: Double, lat2: Double, lon2: Double) -> Double {
        let phi1 = lat1 * .pi / 180
        let phi2 = lat2 * .pi / 180
        let dPhi = (lat2 - lat1) * .pi / 180
        let dLambda = (lon2 - lon1) * .pi / 180
        let a = sin(dPhi / 2) * sin(dPhi / 2) + cos(phi1) * cos(phi2) * sin(dLambda / 2) * sin(dLambda / 2)
        return 2 * earthRadiusM * asin(min(1, a.squareRoot()))
    }
}
