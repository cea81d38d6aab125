import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
import LabVocabulary
#endif

// MARK: - Reading the dictionary

extension ResumeData {
    /// Validates the resume dictionary; `context` names what held it ("a property list").
    init(fields: [String: Any], context: String) throws {
        func string(_ key: String) throws -> String? {
            guard let value = fields[key] else { return nil }
            guard let text = value as? String else { throw ResumeDataError("\(key) is not a string") }
            return text
        }
        func wholeNumber(_ key: String) throws -> Int64? {
            guard let value = fields[key] else { return nil }
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

        guard let url = try string(Key.downloadURL) else {
            throw ResumeDataError("\(context), but not resume data: no \(Key.downloadURL)")
        }
        guard !url.isEmpty else { throw ResumeDataError("\(Key.downloadURL) is empty") }
        guard let received = try wholeNumber(Key.bytesReceived) else {
            throw ResumeDataError("\(context), but not resume data: no \(Key.bytesReceived)")
        }
        guard received >= 0 else { throw ResumeDataError("\(Key.bytesReceived) is negative (\(received))") }

        let localPath = try string(Key.localPath)
        // The name is taken as a file inside a folder the resuming code picks, whichever key gave
        // it: no way out of that folder (`/x/..` would name the folder's parent).
        let tempFileName: String?
        if let name = try string(Key.tempFileName) {
            guard Self.isPlainFileName(name) else {
                throw ResumeDataError("\(Key.tempFileName) is not a plain file name (\(name.debugDescription))")
            }
            tempFileName = name
        } else if let localPath {
            let name = (localPath as NSString).lastPathComponent
            guard Self.isPlainFileName(name) else {
                throw ResumeDataError("\(Key.localPath) does not end in a plain file name (\(localPath.debugDescription))")
            }
            tempFileName = name
        } else {
            tempFileName = nil
        }
        let version = try wholeNumber(Key.infoVersion) ?? (fields[Key.tempFileName] != nil ? 2 : 1)
        guard version >= 1, version <= Int64(Int32.max) else {
            throw ResumeDataError("\(Key.infoVersion) is \(version), not a version number")
        }

        var serverDate: String?
        switch fields[Key.serverDownloadDate] {
        case nil: serverDate = nil
        case let text as String: serverDate = text
        case let date as Date: serverDate = Self.httpDate(date)
        default: throw ResumeDataError("\(Key.serverDownloadDate) is not a string")
        }

        self.init(downloadURL: url, bytesReceived: received, entityTag: try string(Key.entityTag),
                  serverDownloadDate: serverDate, tempFileName: tempFileName, infoVersion: Int(version))
        self.localPath = localPath
        // Best effort: an unreadable request archive leaves the field nil, it never fails decoding.
        originalRequestURL = (fields[Key.originalRequest] as? Data).flatMap { KeyedArchive.request(in: $0)?.url }
        currentRequestRange = (fields[Key.currentRequest] as? Data).flatMap { KeyedArchive.request(in: $0)?.range }
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
    static func archivedRequest(url: String, range: String?) -> Data? {
        guard let url = URL(string: url) else { return nil }
        var request = URLRequest(url: url)
        if let range { request.setValue(range, forHTTPHeaderField: "Range") }
        let archiver = NSKeyedArchiver(requiringSecureCoding: true)
        archiver.encode(request as NSURLRequest, forKey: KeyedArchive.cfNetworkRootKey)
        archiver.finishEncoding()
        return archiver.encodedData
    }
}
