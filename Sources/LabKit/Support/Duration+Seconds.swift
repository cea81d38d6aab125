import Foundation

extension Duration {
    /// The duration in seconds, as the records and reports give times.
    public var seconds: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) + Double(attoseconds) / 1e18
    }
}
