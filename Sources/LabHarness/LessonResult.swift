import Foundation
import LabKit
import LabVocabulary
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension LessonResult.ErrorRecord {
    init(_ error: any Error) {
        if let relayed = error as? RelayedFailure {
            self = relayed.record
        } else if let error = error as? URLError {
            self.init(domain: NSURLErrorDomain, code: error.errorCode, message: describe(error))
        } else if let error = error as? DownloadError {
            self.init(domain: "DownloadLab", code: Int(error.exitStatus.rawValue), message: error.description)
        } else {
            let nsError = error as NSError
            self.init(domain: nsError.domain, code: nsError.code, message: describe(error))
        }
    }
}
