import LabVocabulary

/// What tells a run that fails by its defect from one that only looks alike: a file kept in
/// Application Support that is fetched again has another fault than a file kept in Caches. Where
/// it is not seen, the check says "fails" and why, not "still there".
public enum Cause: Sendable, Equatable {
    /// The file the run reported is in one of these folders of the app's container.
    case fileKeptIn([String])
    /// The file holds the text of the server's 503 page, written as a range.
    case busyPageInTheFile

    public func isEvident(in observation: Observation) -> Bool {
        switch self {
        case .fileKeptIn(let folders):
            guard let folder = observation.keptIn else { return true }
            return folders.contains { folder == $0 || folder.hasPrefix($0 + "/") }
        case .busyPageInTheFile:
            return observation.busyPageInTheFile ?? true
        }
    }

    /// Why the run is not this defect's, for the ✗ line.
    public func absentBecause(in observation: Observation) -> String {
        switch self {
        case .fileKeptIn(let folders):
            "not this defect: the file was kept in \(observation.keptIn.map { $0.isEmpty ? "the container's top folder" : $0 } ?? "?"), "
                + "not in \(folders.joined(separator: " or ")); something else made the run fail"
        case .busyPageInTheFile:
            "not this defect: no 503 page is in the file; its ranges are wrong another way"
        }
    }
}
