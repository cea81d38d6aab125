import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import LabVocabulary

// MARK: - Reading the dictionary

extension ResumeData {
    /// Validates the resume dictionary; `context` names what held it ("a property list").
    init(fields values: [String: Any], context: String) throws {
        let fields = Fields(values: values)
        guard let url = try fields.string(Key.downloadURL) else {
            throw ResumeDataError("\(context), but not resume data: no \(Key.downloadURL)")
        }
        guard !url.isEmpty else { throw ResumeDataError("\(Key.downloadURL) is empty") }
        guard let received = try fields.wholeNumber(Key.bytesReceived) else {
            throw ResumeDataError("\(context), but not resume data: no \(Key.bytesReceived)")
        }
        guard received >= 0 else { throw ResumeDataError("\(Key.bytesReceived) is negative (\(received))") }
        let localPath = try fields.string(Key.localPath)
        let version = try fields.wholeNumber(Key.infoVersion) ?? (values[Key.tempFileName] != nil ? 2 : 1)
        guard version >= 1, version <= Int64(Int32.max) else {
            throw ResumeDataError("\(Key.infoVersion) is \(version), not a version number")
        }

        self.init(downloadURL: url, bytesReceived: received, entityTag: try fields.string(Key.entityTag),
                  serverDownloadDate: try fields.serverDownloadDate(),
                  tempFileName: try fields.tempFileName(localPath: localPath), infoVersion: Int(version))
        self.localPath = localPath
        // Best effort: an unreadable request archive leaves the field nil, it never fails decoding.
        let originalRequest = (values[Key.originalRequest] as? Data).flatMap { KeyedArchive.request(in: $0) }
        originalRequestURL = originalRequest?.url
        originalRequestHeaders = originalRequest?.headers ?? [:]
        currentRequestRange = (values[Key.currentRequest] as? Data).flatMap { KeyedArchive.request(in: $0)?.range }
    }

    /// The dictionary's values, each read as the type its key must have.
    private struct Fields {
        let values: [String: Any]

        func string(_ key: String) throws -> String? {
            guard let value = values[key] else { return nil }
            guard let text = value as? String else { throw ResumeDataError("\(key) is not a string") }
            return text
        }

        func wholeNumber(_ key: String) throws -> Int64? {
            guard let value = values[key] else { return nil }
            // A plist <true/> must not pass for the number 1.
            guard !PropertyList.isBoolean(value), let number = value as? NSNumber else {
                throw ResumeDataError("\(key) is not a number")
            }
            guard let whole = value as? Int64 else {
                let double = number.doubleValue
                throw ResumeDataError(double.rounded() == double ? "\(key) is out of range (\(number))"
                                                                  : "\(key) is not a whole number (\(number))")
            }
            return whole
        }

        /// The name is taken as a file inside a folder the resuming code picks, whichever key gave
        /// it: no way out of that folder (`/x/..` would name the folder's parent).
        func tempFileName(localPath: String?) throws -> String? {
            if let name = try string(Key.tempFileName) {
                guard ResumeData.isPlainFileName(name) else {
                    throw ResumeDataError("\(Key.tempFileName) is not a plain file name (\(name.debugDescription))")
                }
                return name
            }
            guard let localPath else { return nil }
            let name = (localPath as NSString).lastPathComponent
            guard ResumeData.isPlainFileName(name) else {
                throw ResumeDataError("\(Key.localPath) does not end in a plain file name (\(localPath.debugDescription))")
            }
            return name
        }

        /// A string as the server sent it, or a date (as some writers store it) put back in HTTP form.
        func serverDownloadDate() throws -> String? {
            switch values[Key.serverDownloadDate] {
            case nil: nil
            case let text as String: text
            case let date as Date: ResumeData.httpDate(date)
            default: throw ResumeDataError("\(Key.serverDownloadDate) is not a string")
            }
        }
    }

    /// Not empty, `.` or `..`; no `/` or NUL.
    static func isPlainFileName(_ name: String) -> Bool {
        !name.isEmpty && name != "." && name != ".." && !name.contains("/") && !name.contains("\0")
    }

    /// IMF-fixdate, e.g. `Mon, 01 Jan 2024 00:00:00 GMT`.
    static func httpDate(_ date: Date) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        return formatter.string(from: date)
    }

    /// A keyed archive of a GET request for `url`, or nil when `url` does not parse.
    static func archivedRequest(url: String, range: String?, headers: [String: String] = [:]) -> Data? {
        guard let url = URL(string: url) else { return nil }
        var request = URLRequest(url: url)
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        if let range { request.setValue(range, forHTTPHeaderField: "Range") }
        let archiver = NSKeyedArchiver(requiringSecureCoding: true)
        archiver.encode(request as NSURLRequest, forKey: KeyedArchive.cfNetworkRootKey)
        archiver.finishEncoding()
        return archiver.encodedData
    }
}
