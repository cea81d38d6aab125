import Foundation

/// What each of the corrected variant's tasks fills, and the handle it writes through.
extension CorrectedDownload {
    /// What one task fills.
    enum Part: Equatable {
        /// The first range: its answer sets up the plan.
        case firstRange
        case segment(Int)
        /// The whole file from byte 0 in one stream, of a length not known beforehand.
        case whole
        /// A plan whose every range is on disk (a kill came before it was removed): one byte
        /// asked with If-Range says whether the file is still the server's.
        case check
        /// Given up (another answer replaced the plan); its bytes go nowhere.
        case abandoned
    }

    struct Transfer {
        var part: Part
        /// Its own handle, so its write position is its own: no other segment moves it.
        var handle: FileHandle?
    }
}
