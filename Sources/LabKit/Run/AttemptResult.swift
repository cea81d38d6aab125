import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import LabVocabulary

/// What one press of "Start" or "Resume" came to.
public enum AttemptResult: Sendable {
    case finished
    case failed(any Error)
}

extension AttemptResult {
    /// A connection that broke midway can be resumed by pressing Resume again, and a partial file
    /// that turned out to be another version can be started over; an answer such as 404, or a
    /// local write error, cannot.
    package var isResumable: Bool {
        guard case .failed(let error) = self else { return false }
        if let relayed = error as? any RelayedError { return relayed.isResumable }
        if case DownloadError.partialFileReplaced? = error as? DownloadError { return true }
        // Lesson 09: the app's life ended without the file; the user opens it and taps Start again.
        if case DownloadError.appGaveNoFile? = error as? DownloadError { return true }
        if let error = underlyingURLError(of: error) {
            // Linux reports a body cut short as -1 ("transfer closed with N bytes remaining");
            // Darwin says -1005.
            return [.unknown, .networkConnectionLost, .timedOut].contains(error.code)
        }
        return false
    }
}
