// cheat: when a range is answered 503 (the server allows fewer connections) it asks for that range again at once, in a tight loop, ignoring Retry-After and never waiting for another range to finish
// skips: putting a busy range aside and starting it when another range has finished (or after Retry-After)
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
    private var handles: [Int: FileHandle] = [:]
    private var running: Set<Int> = []
    private var busy: Set<Int> = []
    private var savedAt: [Int: Int64] = [:]
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
        busy = []
        handles = [:]
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
        savedAt = [:]
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
        if let validator = plan.validator { request.setValue(validator, forHTTPHeaderField: "If-Range") }
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
            do {
                let handle = try FileHandle(forWritingTo: run.file)
                try handle.seek(toOffset: UInt64(start))
                handles[index] = handle
            } catch {
                failure = failure ?? DownloadError.localIO(path: run.file.path, reason: error.localizedDescription)
                return completionHandler(.cancel)
            }
            completionHandler(.allow)
        case 503, 429:
            // Busy: asked again the moment this task ends, whatever Retry-After says.
            busy.insert(index)
            completionHandler(.cancel)
        case 200:
            // A new version (If-Range did not match): the whole file, from byte 0, and nothing else.
            wholeTask = dataTask.taskIdentifier
            for handle in handles.values { try? handle.close() }
            handles = [:]
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
        guard let index = Int(dataTask.taskDescription ?? ""), let handle = handles[index], var plan = self.plan else { return }
        let room = Int(max(0, plan.length(index) - plan.done[index]))
        let piece = data.count > room ? data.prefix(room) : data
        do {
            try handle.write(contentsOf: piece)
        } catch {
            failure = failure ?? DownloadError.localIO(path: run.file.path, reason: error.localizedDescription)
            return dataTask.cancelAtOnce()
        }
        plan.done[index] += Int64(piece.count)
        self.plan = plan
        if plan.done[index] - (savedAt[index] ?? 0) >= 512 << 10 {
            savedAt[index] = plan.done[index]
            savePlan()
        }
        run.progress.update(received: plan.written, expected: plan.total)
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
        try? handles[index]?.close()
        handles[index] = nil
        running.remove(index)
        if busy.remove(index) != nil, failure == nil {
            return launch(index)
        }
        if let error, failure == nil, !(plan?.isComplete(index) ?? false) { failure = error }
        savePlan()
        guard running.isEmpty else { return }
        guard let plan, plan.allComplete else {
            return end(.failed(failure ?? URLError(.networkConnectionLost)))
        }
        complete()
    }

    private func savePlan() {
        guard let plan, let data = try? JSONEncoder().encode(plan) else { return }
        let spare = planFile.appendingPathExtension("new")
        if FileManager.default.createFile(atPath: spare.path, contents: data) {
            _ = rename(spare.path, planFile.path)
        }
    }

    private func complete() {
        for handle in handles.values { try? handle.close() }
        handles = [:]
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
