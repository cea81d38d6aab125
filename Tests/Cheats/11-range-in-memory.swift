// cheat: holds each range's body in memory and writes it in one go when the range ends (or breaks), so no two ranges ever share a write position; sends no If-Range and compares each 206's ETag with the HEAD's instead, a mismatch throwing everything away for the next attempt
// skips: writing each range through its own handle as its bytes arrive, keeping the plan up to date as they do, and If-Range on every range
// aims to pass: clean, shared-position, busy-page-saved, spliced-versions, counts-twice, starts-over, ranges-side-by-side, resumes-each-range
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import LabKit

/// Makes the article variant for one run. The lesson's main.swift calls it, and so does the
/// exercise's.
func articleVariant(_ run: LessonRun) -> any LessonDownload { ArticleDownload(run) }

/// The ranges of the file and how far each has come, as kept beside the file.
struct CheatPlan: Codable {
    var total: Int64
    var validator: String?
    var firsts: [Int64]
    var lasts: [Int64]
    var done: [Int64]

    func length(_ index: Int) -> Int64 { lasts[index] - firsts[index] + 1 }
    func isComplete(_ index: Int) -> Bool { done[index] >= length(index) }
    var allComplete: Bool { firsts.indices.allSatisfy { isComplete($0) } }
    var written: Int64 { done.reduce(0, +) }
}

/// What the HEAD said.
struct CheatHead: Sendable {
    var status: Int
    var length: Int64
    var validator: String?
}

/// A HEAD for the size, a plan of --connections ranges, one task and one handle per range.
final class ArticleDownload: NSObject, LessonDownload, URLSessionDataDelegate, @unchecked Sendable {
    // @unchecked: URLSession wants a Sendable delegate. Every callback, and everything that
    // changes the state below, runs on the serial delegate queue; tasks are made on `maker`.
    private let run: LessonRun
    private let delegateQueue: OperationQueue = {
        let queue = OperationQueue()
        queue.maxConcurrentOperationCount = 1
        return queue
    }()
    private let maker = DispatchQueue(label: "cheat.segments.maker")
    private var session: URLSession?
    private var plan: CheatPlan?
    private var buffers: [Int: Data] = [:]
    private var running: Set<Int> = []
    private var waiting: Set<Int> = []
    private var wholeTask: Int?
    private var wholeHandle: FileHandle?
    private var wholeWritten: Int64 = 0
    private var wholeTotal: Int64 = -1
    private var failure: (any Error)?
    private var over = true
    private var completion: (@Sendable (AttemptResult) -> Void)?

    init(_ run: LessonRun) { self.run = run }

    private var planFile: URL {
        run.file.deletingLastPathComponent().appendingPathComponent(run.file.lastPathComponent + ".segments")
    }

    func downloadFile(completion: @escaping @Sendable (AttemptResult) -> Void) {
        self.completion = completion
        if session == nil {
            let configuration = URLSessionConfiguration.default
            configuration.httpMaximumConnectionsPerHost = run.connections
            session = run.makeSession(configuration: configuration, delegate: self, delegateQueue: delegateQueue)
        }
        delegateQueue.addOperation { self.begin() }
    }

    // MARK: - On the delegate queue

    private func begin() {
        failure = nil
        running = []
        waiting = []
        buffers = [:]
        wholeTask = nil
        wholeHandle = nil
        over = false
        if plan == nil, let data = try? Data(contentsOf: planFile), let kept = try? JSONDecoder().decode(CheatPlan.self, from: data),
           PartialFile.size(of: run.file) == kept.total {
            plan = kept
            run.log("the plan beside the file: \(kept.written) of \(kept.total) bytes")
        }
        if plan != nil { return startMissing() }
        guard let session else { return }
        var head = URLRequest(url: run.url)
        head.httpMethod = "HEAD"
        head.setValue("identity", forHTTPHeaderField: "Accept-Encoding")
        let headRequest = head
        maker.async {
            session.dataTask(with: headRequest) { _, response, error in
                let http = response as? HTTPURLResponse
                let answer = CheatHead(status: http?.statusCode ?? 0, length: response?.expectedContentLength ?? -1,
                                       validator: http?.value(forHTTPHeaderField: "ETag")
                                           ?? http?.value(forHTTPHeaderField: "Last-Modified"))
                self.delegateQueue.addOperation { self.planned(answer, error) }
            }.resume()
        }
    }

    private func planned(_ head: CheatHead, _ error: (any Error)?) {
        guard head.status == 200, head.length > 0 else {
            return end(.failed(error ?? DownloadError.httpStatus(head.status, url: run.url.absoluteString)))
        }
        let total = head.length
        let count = Int64(max(1, run.connections))
        let share = max(1, total / count)
        var firsts: [Int64] = []
        var lasts: [Int64] = []
        var first: Int64 = 0
        while first < total {
            let last = Int64(firsts.count) == count - 1 ? total - 1 : min(total - 1, first + share - 1)
            firsts.append(first)
            lasts.append(last)
            first = last + 1
        }
        plan = CheatPlan(total: total, validator: head.validator, firsts: firsts, lasts: lasts,
                         done: Array(repeating: 0, count: firsts.count))
        do {
            let handle = try FileHandle(forWritingTo: run.file, at: 0)
            try handle.truncate(atOffset: UInt64(total))
            try handle.close()
        } catch {
            return end(.failed(DownloadError.localIO(path: run.file.path, reason: error.localizedDescription)))
        }
        savePlan()
        startMissing()
    }

    private func startMissing() {
        guard let plan else { return }
        if plan.allComplete { return complete() }
        for index in plan.firsts.indices where !plan.isComplete(index) && !running.contains(index) {
            launch(index)
        }
    }

    private func launch(_ index: Int) {
        guard let plan, let session else { return }
        running.insert(index)
        var request = URLRequest(url: run.url)
        request.setValue("identity", forHTTPHeaderField: "Accept-Encoding")
        request.setValue("bytes=\(plan.firsts[index] + plan.done[index])-\(plan.lasts[index])", forHTTPHeaderField: "Range")
        let ranged = request
        maker.async {
            let task = session.dataTask(with: ranged)
            task.taskDescription = String(index)
            task.resume()
        }
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
                    completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void) {
        guard !over, wholeTask == nil, let index = Int(dataTask.taskDescription ?? ""), let plan else {
            return completionHandler(.cancel)
        }
        let http = response as? HTTPURLResponse
        let status = http?.statusCode ?? 0
        switch status {
        case 206:
            let start = plan.firsts[index] + plan.done[index]
            guard case .bytes(let first, _, let total?)? = http?.contentRange, first == start, total == plan.total else {
                failure = failure ?? DownloadError.contentRangeMismatch(expectedStart: start,
                                                                      header: http?.value(forHTTPHeaderField: "Content-Range"))
                return completionHandler(.cancel)
            }
            let version = http?.value(forHTTPHeaderField: "ETag") ?? http?.value(forHTTPHeaderField: "Last-Modified")
            if let known = plan.validator, version != known {
                // Another version: nothing on disk can be kept.
                self.plan = nil
                try? FileManager.default.removeItem(at: planFile)
                try? FileManager.default.removeItem(at: run.file)
                failure = failure ?? DownloadError.partialFileReplaced(reason: "a range came with another ETag")
                return completionHandler(.cancel)
            }
            buffers[index] = Data()
            completionHandler(.allow)
        case 503, 429:
            // Busy: put aside until another range has finished.
            waiting.insert(index)
            completionHandler(.cancel)
        case 200:
            // The whole file (the server ignored Range): from byte 0, and nothing else.
            wholeTask = dataTask.taskIdentifier
            buffers = [:]
            self.plan = nil
            try? FileManager.default.removeItem(at: planFile)
            wholeTotal = response.expectedContentLength
            wholeWritten = 0
            do {
                wholeHandle = try FileHandle(forWritingTo: run.file, at: 0)
            } catch {
                failure = failure ?? DownloadError.localIO(path: run.file.path, reason: error.localizedDescription)
                return completionHandler(.cancel)
            }
            completionHandler(.allow)
        default:
            failure = failure ?? DownloadError.httpStatus(status, url: run.url.absoluteString)
            completionHandler(.cancel)
        }
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        guard !over else { return }
        if let wholeTask {
            guard dataTask.taskIdentifier == wholeTask, let wholeHandle else { return }
            do {
                try wholeHandle.write(contentsOf: data)
            } catch {
                failure = failure ?? DownloadError.localIO(path: run.file.path, reason: error.localizedDescription)
                return dataTask.cancelAtOnce()
            }
            wholeWritten += Int64(data.count)
            return run.progress.update(received: wholeWritten, expected: wholeTotal)
        }
        guard let index = Int(dataTask.taskDescription ?? ""), let inMemory = buffers[index]?.count, let plan else { return }
        let room = Int(max(0, plan.length(index) - plan.done[index])) - inMemory
        guard room > 0 else { return }
        buffers[index]?.append(data.count > room ? data.prefix(room) : data)
        let held = buffers.values.reduce(0) { $0 + Int64($1.count) }
        run.progress.update(received: min(plan.total, plan.written + held), expected: plan.total)
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        guard !over else { return }
        if let wholeTask {
            guard task.taskIdentifier == wholeTask else { return }
            try? wholeHandle?.close()
            wholeHandle = nil
            if let failure = failure ?? error { return end(.failed(failure)) }
            return complete()
        }
        guard let index = Int(task.taskDescription ?? "") else { return }
        running.remove(index)
        flush(index)
        if let error, failure == nil, !waiting.contains(index), !(plan?.isComplete(index) ?? false) { failure = error }
        if failure == nil, let next = waiting.first, plan?.isComplete(index) ?? false {
            waiting.remove(next)
            launch(next)
        }
        guard running.isEmpty else { return }
        if failure == nil, !waiting.isEmpty {
            let ready = waiting
            waiting = []
            for next in ready { launch(next) }
            return
        }
        guard let plan, plan.allComplete else {
            return end(.failed(failure ?? URLError(.networkConnectionLost)))
        }
        complete()
    }

    /// What a range has in memory goes to the file in one write, at its place.
    private func flush(_ index: Int) {
        guard let buffer = buffers.removeValue(forKey: index), !buffer.isEmpty, var plan = self.plan else { return }
        do {
            let handle = try FileHandle(forWritingTo: run.file)
            defer { try? handle.close() }
            try handle.seek(toOffset: UInt64(plan.firsts[index] + plan.done[index]))
            try handle.write(contentsOf: buffer)
        } catch {
            failure = failure ?? DownloadError.localIO(path: run.file.path, reason: error.localizedDescription)
            return
        }
        plan.done[index] += Int64(buffer.count)
        self.plan = plan
        savePlan()
    }

    private func savePlan() {
        guard let plan, let data = try? JSONEncoder().encode(plan) else { return }
        let spare = planFile.appendingPathExtension("new")
        if FileManager.default.createFile(atPath: spare.path, contents: data) {
            _ = rename(spare.path, planFile.path)
        }
    }

    private func complete() {
        buffers = [:]
        try? FileManager.default.removeItem(at: planFile)
        plan = nil
        run.log("every range is in")
        end(.finished)
    }

    private func end(_ result: AttemptResult) {
        over = true
        let completion = self.completion
        self.completion = nil
        completion?(result)
    }
}
