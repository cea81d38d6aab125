/// Lesson 11, the corrected variant: the file in segments, each on its own connection and its own
/// file handle, each resumed on its own, and never two versions of the file in one.
/// Lessons/11-segmented.md explains each fix; `SegmentPlan` (Corrected+Plan.swift) keeps the plan.
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import LabKit

/// Makes the corrected variant for one run; the lesson's main.swift calls it.
func correctedVariant(_ run: LessonRun) -> any LessonDownload { CorrectedDownload(run) }

/// A first GET for the start of the file tells its size and version; then the rest goes in
/// `run.connections` ranges at once, each written at its own offset through its own handle.
final class CorrectedDownload: NSObject, LessonDownload, URLSessionDataDelegate, @unchecked Sendable {
    // @unchecked: URLSession wants a Sendable delegate. Every callback, and each attempt's start,
    // runs on the session's serial delegate queue, one at a time.
    private let run: LessonRun
    /// The first GET asks for this much; a segment is never smaller, so a small file is one stream.
    static let firstRange: Int64 = 1 << 20
    /// With up to four segments at once, a kill costs less than this again in all: the plan is
    /// written beside the file each time a segment has its share of it more on disk than the
    /// written plan says (`savedEvery`).
    static let lostAtAKill: Int64 = 1 << 20
    /// A segment's share of `lostAtAKill`, 256 KiB with four connections, and never less: each
    /// save costs a write and a rename, and at 64 KiB a gigabyte over 8 connections took 15 s,
    /// not 6.
    static let leastSavedEvery: Int64 = 256 << 10
    private var savedEvery: Int64 { max(Self.leastSavedEvery, Self.lostAtAKill / Int64(max(1, run.connections))) }

    private var plan: SegmentPlan?
    /// The plan as last written beside the file.
    private var savedPlan: SegmentPlan?
    /// The tasks that have been heard from, by task identifier.
    private var transfers: [Int: Transfer] = [:]
    /// Tasks started and not yet completed: the attempt ends when none is left.
    private var unfinished = 0
    /// Counts the plans: a task started for an earlier one (before the file turned out to have
    /// changed) is given up when it is first heard from.
    private var planNumber = 0
    /// Where tasks are made and resumed: not on the delegate queue, whose callback may be what
    /// the session's own queue is waiting for (a deadlock on Linux; see the page).
    private let starter = DispatchQueue(label: "segments.starter")
    /// How often the server has refused each segment for now (503 or 429: too many connections).
    private var refusals: [Int: Int] = [:]
    private var wholeDone: Int64 = 0
    /// What stops the whole attempt: another version of the file, a refusal, a write that failed.
    private var failure: (any Error)?
    /// Why a segment ended short (a connection lost): the others go on, and Resume continues it.
    private var brokenSegment: (any Error)?
    private var completion: (@Sendable (AttemptResult) -> Void)?
    private lazy var session: URLSession = {
        let configuration = URLSessionConfiguration.default
        // URLSession opens at most this many connections to one host and queues the rest.
        configuration.httpMaximumConnectionsPerHost = run.connections
        configuration.urlCache = nil
        return run.makeSession(configuration: configuration, delegate: self, delegateQueue: nil)
    }()

    init(_ run: LessonRun) { self.run = run }

    func downloadFile(completion: @escaping @Sendable (AttemptResult) -> Void) {
        session.delegateQueue.addOperation { [self] in
            (failure, brokenSegment, self.completion, refusals) = (nil, nil, completion, [:])
            if plan == nil { readKeptPlan() }
            guard let plan else { return start(.firstRange, range: "bytes=0-\(Self.firstRange - 1)") }
            guard !plan.isComplete else {
                run.log("every range of \(plan.total) bytes is on disk: asking whether the file is still the server's")
                return start(.check, range: "bytes=0-0", ifRange: plan.validator)
            }
            let missing = plan.segments.indices.filter { !plan.segments[$0].isComplete }
            run.log("\(plan.done) of \(plan.total) bytes on disk: asking for the rest of \(missing.count) segments"
                    + (plan.oneAtATime ? ", one at a time (no validator: the server cannot say whether the file changed)" : ""))
            for index in plan.oneAtATime ? Array(missing.prefix(1)) : missing { startSegment(index) }
        }
    }

    /// The plan a killed run left beside the file; one that does not fit it is another
    /// version's, or not a plan, and the download starts over.
    private func readKeptPlan() {
        switch SegmentPlan.kept(beside: run.file) {
        case .none: break
        case .plan(let kept): (plan, savedPlan) = (kept, kept)
        case .unusable(let reason):
            run.log(reason + ": starting over")
            SegmentPlan.forget(beside: run.file)
        }
    }

    /// Starts a GET for `part`, named in the task's description, which its callbacks read back.
    private func start(_ part: Part, range: String?, ifRange: String? = nil) {
        var request = URLRequest(url: run.url)
        // Ranges count the file's own bytes, not a compressed body's.
        request.setValue("identity", forHTTPHeaderField: "Accept-Encoding")
        request.setValue(range, forHTTPHeaderField: "Range")
        // A 206 only for the version the plan is of; a changed file comes whole, as a 200.
        request.setValue(ifRange, forHTTPHeaderField: "If-Range")
        unfinished += 1
        let name = switch part {
        case .firstRange: "first"
        case .whole: "whole"
        case .check: "check"
        case .segment(let index): "\(index)"
        case .abandoned: "none"
        }
        let description = "\(planNumber) \(name)"
        starter.async { [session, request] in
            let task = session.dataTask(with: request)
            task.taskDescription = description
            task.resume()
        }
    }

    /// A segment refused for now goes again once the answer's Retry-After has passed, never
    /// sooner: asked again at once, it meets the same limit, and the server counts it against
    /// the client. The wait holds the attempt open.
    private func retryLater(_ index: Int, refusedBy response: HTTPURLResponse) throws {
        refusals[index, default: 0] += 1
        guard refusals[index, default: 0] <= Refusal.mostPerSegment else {
            throw DownloadError.httpStatus(response.statusCode, url: run.url.absoluteString)
        }
        let wait = Refusal.retryAfter(response)
        run.log("segment \(index) refused (\(response.statusCode)): asking again in \(wait) s, as Retry-After says")
        unfinished += 1
        let planAsked = planNumber
        DispatchQueue.global().asyncAfter(deadline: .now() + wait) { [self] in
            session.delegateQueue.addOperation { [self] in
                unfinished -= 1
                if failure == nil, planAsked == planNumber { startSegment(index) }
                if unfinished == 0 { endAttempt() }
            }
        }
    }

    private func startSegment(_ index: Int) {
        guard let plan else { return }
        let segment = plan.segments[index]
        start(.segment(index), range: "bytes=\(segment.next)-\(segment.last)", ifRange: plan.validator)
    }

    /// The part `task` fills: as recorded, or else as its description says; a task of an
    /// earlier plan is abandoned.
    private func part(of task: URLSessionTask) -> Part {
        if let transfer = transfers[task.taskIdentifier] { return transfer.part }
        let words = (task.taskDescription ?? "").split(separator: " ")
        guard words.count == 2, words[0] == "\(planNumber)" else { return .abandoned }
        switch words[1] {
        case "first": return .firstRange
        case "check": return .check
        default: return Int(words[1]).map(Part.segment) ?? .abandoned
        }
    }

    // MARK: Answers

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
                    completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void) {
        let part = part(of: dataTask)
        transfers[dataTask.taskIdentifier] = transfers[dataTask.taskIdentifier] ?? Transfer(part: part)
        guard let http = response as? HTTPURLResponse else { return completionHandler(.cancel) }
        let keepsBody: Bool
        do {
            switch (part, http.statusCode) {
            case (.segment(let index), 503), (.segment(let index), 429):
                // The server allows fewer connections: this range goes again later (this task fills nothing).
                try retryLater(index, refusedBy: http)
                (keepsBody, transfers[dataTask.taskIdentifier]) = (false, Transfer(part: .abandoned))
            case (.firstRange, 206): keepsBody = try planFromFirstAnswer(http, task: dataTask)
            case (.segment(let index), 206): keepsBody = try continueSegment(index, with: http, task: dataTask)
            case (.check, 206): keepsBody = try checkCompletePlan(http)
            case (.firstRange, 200), (.segment, 200), (.check, 200): keepsBody = try takeWholeFile(http, task: dataTask)
            case (.segment, 416), (.check, 416):
                // The server's file is shorter than the plan says: the plan is of another file.
                forgetPlan()
                throw DownloadError.partialFileReplaced(reason: "the server cannot send the range asked for (416): the plan is of another version")
            case (.abandoned, _): keepsBody = false
            default: throw DownloadError.httpStatus(http.statusCode, url: run.url.absoluteString)
            }
        } catch {
            failure = error
            keepsBody = false
            abandon(allBut: dataTask.taskIdentifier)
        }
        completionHandler(keepsBody ? .allow : .cancel)
    }

    /// The first answer: the file's size and version. Too small to split, or with no validator
    /// to keep the segments to one version, it is fetched in one stream.
    private func planFromFirstAnswer(_ response: HTTPURLResponse, task: URLSessionDataTask) throws -> Bool {
        guard let range = SegmentPlan.rangeAnswered(by: response), range.first == 0 else {
            throw DownloadError.contentRangeMismatch(expectedStart: 0, header: response.value(forHTTPHeaderField: "Content-Range"))
        }
        // The first range was the whole file.
        if range.total == range.last + 1 { return try openWhole(task) }
        let validator = SegmentPlan.validator(of: response)
        let first = SegmentPlan.Segment(first: 0, last: range.last)
        // With no validator, the rest is one range, asked for once the first has come.
        let plan = SegmentPlan.split(total: range.total, validator: validator, firstRange: first,
                                     into: validator == nil ? 1 : run.connections, smallest: Self.firstRange)
        self.plan = plan
        try preallocate(plan.total)
        try savePlan()
        if let validator {
            run.log("\(range.total) bytes, version \(validator): \(plan.segments.count) segments, \(run.connections) at once")
        } else {
            run.log("\(range.total) bytes, and no ETag or Last-Modified to keep segments to one version: one stream, "
                    + "resumed with Range alone; only the digest can tell a file that changed meanwhile")
        }
        transfers[task.taskIdentifier] = Transfer(part: .segment(0), handle: try handle(at: 0))
        if !plan.oneAtATime { for index in plan.segments.indices.dropFirst() { startSegment(index) } }
        return true
    }

    /// The answer for one byte of a complete plan: a 206 of the same size and version means
    /// the file on disk is the server's (its digest is checked after, as every download's).
    private func checkCompletePlan(_ response: HTTPURLResponse) throws -> Bool {
        guard let plan, let range = SegmentPlan.rangeAnswered(by: response), range.total == plan.total,
              SegmentPlan.validator(of: response) == plan.validator else {
            forgetPlan()
            throw DownloadError.partialFileReplaced(reason: "the file on the server is not the one the plan describes (\(response.value(forHTTPHeaderField: "Content-Range") ?? "no Content-Range"))")
        }
        // The byte itself is let through and dropped: a refused body is not a cancel on Linux.
        return true
    }

    /// A 206 for a segment continues it only if it starts where the segment stopped and is of the
    /// same file: the same size and the same version as the plan's.
    private func continueSegment(_ index: Int, with response: HTTPURLResponse, task: URLSessionDataTask) throws -> Bool {
        guard let plan else { return false }
        let segment = plan.segments[index]
        let range = SegmentPlan.rangeAnswered(by: response)
        guard let range, range.first == segment.next, range.last <= segment.last, range.total == plan.total,
              SegmentPlan.validator(of: response) == plan.validator else {
            // Another size or version: what is on disk belongs to a file that is gone.
            forgetPlan()
            throw DownloadError.partialFileReplaced(reason: "a segment's answer (\(response.value(forHTTPHeaderField: "Content-Range") ?? "no Content-Range")) is not of the file the others are from")
        }
        transfers[task.taskIdentifier]?.handle = try handle(at: segment.next)
        return true
    }

    /// A 200: the server ignored Range, or If-Range told it the file changed. Either way this is
    /// the whole current file: it is taken from byte 0, and every segment is given up.
    private func takeWholeFile(_ response: HTTPURLResponse, task: URLSessionDataTask) throws -> Bool {
        run.log("a 200 with the whole file (the file changed, or the server ignores Range): one stream from byte 0, nothing spliced")
        forgetPlan()
        abandon(allBut: task.taskIdentifier)
        return try openWhole(task)
    }

    /// The whole file in one stream from byte 0. Of a known length it is a plan of one range,
    /// which a drop or a kill resumes (with If-Range when there is a validator).
    private func openWhole(_ task: URLSessionDataTask) throws -> Bool {
        guard let response = task.response as? HTTPURLResponse, response.expectedContentLength > 0,
              response.value(forHTTPHeaderField: "Content-Encoding") == nil else {
            try preallocate(0)
            wholeDone = 0
            transfers[task.taskIdentifier] = Transfer(part: .whole, handle: try handle(at: 0))
            return true
        }
        let total = response.expectedContentLength
        plan = SegmentPlan(total: total, validator: SegmentPlan.validator(of: response), segments: [.init(first: 0, last: total - 1)])
        try preallocate(total)
        try savePlan()
        transfers[task.taskIdentifier] = Transfer(part: .segment(0), handle: try handle(at: 0))
        return true
    }

    // MARK: Bytes

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        guard failure == nil, let transfer = transfers[dataTask.taskIdentifier], let handle = transfer.handle else { return }
        do {
            switch transfer.part {
            case .segment(let index):
                guard let segment = plan?.segments[index] else { return }
                // A server that sends past the range asked for: the rest is not this segment's.
                let bytes = data.prefix(Int(segment.length - segment.done))
                try handle.write(contentsOf: bytes)
                plan?.segments[index].done += Int64(bytes.count)
                try saveWhenDue(segment: index)
            case .whole:
                try handle.write(contentsOf: data)
                wholeDone += Int64(data.count)
            case .firstRange, .check, .abandoned:
                return
            }
        } catch {
            failure = DownloadError.localIO(path: run.file.path, reason: error.localizedDescription)
            abandon(allBut: nil)
        }
        run.progress.update(received: plan?.done ?? wholeDone, expected: plan?.total ?? dataTask.response?.expectedContentLength ?? -1)
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        let transfer = transfers.removeValue(forKey: task.taskIdentifier) ?? Transfer(part: part(of: task))
        unfinished -= 1
        try? transfer.handle?.close()
        switch transfer.part {
        case .segment(let index):
            guard let segment = plan?.segments[index] else { break }
            if !segment.isComplete {
                brokenSegment = brokenSegment ?? error ?? DownloadError.lengthMismatch(expected: segment.length, received: segment.done)
            } else if failure == nil, let plan, plan.oneAtATime, let next = plan.segments.firstIndex(where: { !$0.isComplete }) {
                startSegment(next)
            }
        case .firstRange, .whole, .check:
            if failure == nil { failure = error }
        case .abandoned:
            break
        }
        try? savePlan()
        if unfinished == 0 { endAttempt() }
    }

    // MARK: The end of an attempt

    private func endAttempt() {
        if failure == nil, brokenSegment == nil, let plan, !plan.isComplete {
            failure = DownloadError.lengthMismatch(expected: plan.total, received: plan.done)
        }
        if let failure = failure ?? brokenSegment {
            // The plan and the bytes it counts stay on disk: Resume, or a relaunch, asks only for the rest.
            return finish(.failed(failure))
        }
        SegmentPlan.forget(beside: run.file)
        (plan, savedPlan) = (nil, nil)
        // A session keeps its delegate alive until it is invalidated.
        session.finishTasksAndInvalidate()
        finish(.finished)
    }

    private func finish(_ result: AttemptResult) {
        let completion = self.completion
        self.completion = nil
        completion?(result)
    }

    // MARK: The file

    /// The file at its full size from the start: each segment writes into its own place.
    private func preallocate(_ size: Int64) throws {
        if !FileManager.default.fileExists(atPath: run.file.path), !FileManager.default.createFile(atPath: run.file.path, contents: nil) {
            throw DownloadError.localIO(path: run.file.path, reason: "cannot create the file")
        }
        let handle = try onDisk { try FileHandle(forWritingTo: run.file) }
        defer { try? handle.close() }
        // ftruncate(2), as FileHandle's truncate(atOffset:) does, for the error's own words ("File too large").
        guard ftruncate(handle.fileDescriptor, off_t(size)) == 0 else {
            throw DownloadError.localIO(path: run.file.path, reason: String(cString: strerror(errno)))
        }
    }

    private func handle(at offset: Int64) throws -> FileHandle {
        try onDisk {
            let handle = try FileHandle(forWritingTo: run.file)
            try handle.seek(toOffset: UInt64(offset))
            return handle
        }
    }

    /// A file operation whose error is the disk's (a full disk, a file too large), not the network's.
    private func onDisk<T>(_ operation: () throws -> T) throws -> T {
        do { return try operation() } catch let error as DownloadError { throw error } catch {
            throw DownloadError.localIO(path: run.file.path, reason: error.localizedDescription)
        }
    }

    private func saveWhenDue(segment index: Int) throws {
        guard let plan, plan.segments[index].done - (savedPlan?.segments[index].done ?? 0) >= savedEvery else { return }
        try savePlan()
    }

    private func savePlan() throws {
        guard let plan else { return }
        try onDisk { try plan.keep(beside: run.file) }
        savedPlan = plan
    }

    private func forgetPlan() {
        (plan, savedPlan) = (nil, nil)
        planNumber += 1
        SegmentPlan.forget(beside: run.file)
    }

    /// Gives up a transfer whose bytes are no longer wanted: they go nowhere. It is left to end
    /// on its own: on Linux a `cancel()` lands only when the body has ended, and one that lands
    /// as a task completes stops the program (docs/lesson-runtime.md, "A cancel stops the bytes").
    private func abandon(allBut kept: Int?) {
        for (id, transfer) in transfers where id != kept {
            try? transfer.handle?.close()
            transfers[id] = Transfer(part: .abandoned)
        }
    }
}
