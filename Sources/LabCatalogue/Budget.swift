import LabVocabulary

/// What a run that wastes nothing is sent, by lesson: the bound that keeps "download it again
/// until the digest matches" from passing a check that asks for the answer to be judged before
/// it is written. A check that verifies holds only within its trial's budget, plus the bytes in
/// flight when a transfer breaks (`Symptom.wasteAllowed`).
public enum Budget: Sendable, Equatable {
    /// A break costs nothing but the bytes in flight: the next request continues the file.
    case resumes
    /// As `resumes`, after a Pause the lesson presses itself (lesson 05, at 40%): what was in
    /// flight when the task was cancelled comes again, as much as the socket's buffers held.
    case resumesAfterItsOwnPause
    /// As `resumes`, in ranges side by side: when the file changes, the ranges under way are
    /// given up with their bytes in flight, which no budget can say.
    case resumesInRanges
    /// Every break costs what had come: the lesson holds its body in memory and starts over.
    case startsOver
    /// The app is launched twice: the file once per version the server has.
    case oncePerVersion
    /// Not bounded by bytes: an upload, or an app's life whose own rules count the bytes.
    case none
}

extension LessonID {
    /// How the lesson's checks bound the bytes a run is sent.
    public var budget: Budget {
        switch self {
        case .smallFile, .inMemory: .startsOver
        case .fileHandle, .outputStream, .sessionDataTask, .runLoopThread, .asyncAwait: .resumes
        case .downloadTaskResume: .resumesAfterItsOwnPause
        case .segmented: .resumesInRanges
        case .conditionalGet: .oncePerVersion
        case .multipartUpload, .backgroundSession: .none
        }
    }
}

extension Trial {
    /// What may come again on top of `bytesNeeded`: the bytes in flight at each break of the
    /// script (half of a small file at most), and at a Pause the lesson presses itself.
    public func bytesInFlightAllowed(_ budget: Budget) -> Int64 {
        let breaks = faults.attempts.filter { attempt in
            attempt.contains { fault in
                switch fault {
                case .drop, .stall: true
                default: false
                }
            }
        }.count
        let perBreak = min(Symptom.wasteAllowed, size / 2)
        return perBreak * Int64(max(1, breaks)) + (budget == .resumesAfterItsOwnPause ? 4 * Symptom.wasteAllowed : 0)
    }

    /// The most bytes a run that wastes nothing is sent under this trial, on top of which only
    /// the bytes in flight at each break may come: the file once; where an attempt breaks and
    /// the next cannot continue it (a new version, a server that ignores `Range`, a lesson that
    /// starts over, a 206 that starts elsewhere), what had come before the break; and the whole file again for a version
    /// that comes after the file was whole; twice the file for two installs. Nil where bytes are not the file's (a compressed
    /// body), not bounded (`Budget.none`), or spent by the first of two runs stopping on its own
    /// (a full disk: what was in flight then is the server's, not the program's).
    public func bytesNeeded(_ budget: Budget) -> Int64? {
        let attempts = faults.attempts
        let compressed = attempts.joined().contains { if case .gzip = $0 { true } else { false } }
        guard budget != .none, !compressed, sequel != .rerun || arguments.isEmpty else { return nil }
        if budget == .resumesInRanges, attempts.joined().contains(.change) { return nil }
        if budget == .oncePerVersion { return size * Int64(1 + faults.generation(forAttempt: attempts.count)) }
        // Each install fetches the file once: the new one has nothing to resume from.
        if sequel == .killAndRerunAsANewInstall { return 2 * size }
        var needed = size
        for (index, attempt) in attempts.enumerated() {
            let next = faults.faults(forAttempt: index + 2)
            guard let broke = attempt.lazy.compactMap({ fault -> Int64? in
                switch fault {
                case .drop(let offset), .stall(let offset, _): offset.resolved(bodyLength: size)
                default: nil
                }
            }).first else {
                // A whole answer, then a new version: the file once more.
                if next.contains(.change), index + 2 <= attempts.count { needed += size }
                continue
            }
            // A 206 that starts elsewhere may be answered by starting over, too.
            let restarts = next.contains(.change) || next.contains(.ignoreRange) || next.contains { if case .shiftRange = $0 { true } else { false } }
            if budget == .startsOver || restarts { needed += broke }
        }
        return needed
    }
}

extension Trial {
    /// The most requests a run that cancels its task only where the user presses Pause is sent
    /// under this trial: one per answer the script plays, and per run the resume after the Pause,
    /// the answer past the script and one to spare. Counted from the server's log, never the
    /// clock: a download task that cancels itself every few hundred KiB to keep a blob on disk
    /// wastes only what was in flight each time, a little under load and more unloaded, so bytes
    /// alone would judge it by the machine's speed. Nil but for lesson 05, the one lesson whose
    /// resume data comes from a cancel.
    public func requestsNeeded(_ budget: Budget) -> Int? {
        guard budget == .resumesAfterItsOwnPause else { return nil }
        return faults.attempts.count + 3 * (sequel.runsTwice ? 2 : 1)
    }
}

extension LessonID {
    /// Whether the lesson's checks hold it to naming the file only once it is whole. Lesson 05
    /// teaches it: a download task writes into a temporary file of its own and hands it over at
    /// the end, so a kill leaves nothing under the name. Lessons 02 to 04, 06, 08, 10 and 11 write
    /// in place as the bytes come, to resume from; 00 and 01 write once at the end, and their
    /// lessons are about memory; 09's app is killed by its phone, not at a check's stall.
    public var namesOnlyWholeFiles: Bool {
        switch self {
        case .downloadTaskResume: true
        case .smallFile, .inMemory, .fileHandle, .outputStream, .sessionDataTask, .runLoopThread, .multipartUpload, .asyncAwait,
             .backgroundSession, .conditionalGet, .segmented: false
        }
    }
}
