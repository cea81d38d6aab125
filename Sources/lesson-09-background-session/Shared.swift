/// Lesson 09: what both variants use.
import LabKit

// The app runs on the lab's phone, whose URLSession has Apple's names and contract: in this
// module, these names are the phone's (LabKit's Run/LabURLSession.swift). In an iOS app
// these lines go, and the same code uses Foundation's.
typealias URLSession = any LabURLSession
typealias URLSessionTask = any LabURLSessionTask
typealias URLSessionDataTask = any LabURLSessionDataTask
typealias URLSessionUploadTask = any LabURLSessionUploadTask
typealias URLSessionDownloadTask = any LabURLSessionDownloadTask
typealias URLSessionDelegate = LabURLSessionDelegate
typealias URLSessionTaskDelegate = LabURLSessionTaskDelegate
typealias URLSessionDataDelegate = LabURLSessionDataDelegate
typealias URLSessionDownloadDelegate = LabURLSessionDownloadDelegate

/// The app's constants.
enum App {
    /// The background session's identifier: the same at every launch, so the session made at
    /// launch is the one the system's events are for.
    static let sessionIdentifier = "com.example.download-lab.lesson-09"
}
